#!/usr/bin/env python3
"""Writes every tensor LiteRT computes for one run of a model: a reference dump.

    Scripts/litert_dump.py MODEL.tflite [--input NAME=FILE.npy]... [--seed N]
        [--resolver ref|builtin|xnnpack] --output DIR [--corrupt-operator K]

The model runs once in LiteRT (ai-edge-litert, pinned in Scripts/litert_dump_requirements.txt)
with `experimental_preserve_all_tensors=True`, so that no intermediate tensor is overwritten by a
later one, and on BUILTIN_REF (the plain reference kernels) unless `--resolver` picks the default
`builtin` kernels or `xnnpack`. Inputs come from `--input` files (by tensor name, or in input order
without a name) or are seeded random values: uniform in [-1, 1) for floats, the whole range for
quantized integers, 0..15 for other integers.

The dump, read by `tflite compare MODEL --reference DIR` and documented in README.md ("Per-layer
comparison with LiteRT"), is:

    DIR/manifest.json                    model SHA-256, resolver, inputs, every tensor's facts
    DIR/<subgraph>/<tensor index>.npy    the tensor's values after the run

Every subgraph is written, not only subgraph 0: with `experimental_preserve_all_tensors` LiteRT
keeps the tensors of the subgraphs control flow calls too (WHILE condition and body, IF branches,
CALL_ONCE initializers), each as the subgraph's last run left it: a loop body's node outputs hold
its last iteration, a WHILE condition's its last (false) evaluation. A body's input tensors may
already hold the next iteration's values (LiteRT copies the body's outputs back), and a subgraph that
did not run (the IF branch not taken) holds whatever its memory held: readers compare the outputs
of the nodes that ran, as `tflite compare` does.

A tensor LiteRT cannot read back (a resource or variant, a string, a tensor of a subgraph that did
not run, an unallocated one) is listed with `"file": null` and the reason, never an error. Only the
model's own tensors are written (LiteRT's internal temporaries are skipped), and constant tensors
only with `--constants` (their values are in the model); `--max-bytes N` leaves out tensors larger
than N bytes (never the inputs) to keep a committed dump small. `--resolver builtin` is LiteRT's optimized
builtin kernels without delegates, `xnnpack` the same with its default XNNPACK delegate (tensors
inside delegated partitions may then be unreadable, hence absent).

`--corrupt-operator K` makes a deliberately wrong reference for tests: output 0 of operator K of
subgraph 0 is shifted (one quantization step for integers, 1 % of the largest magnitude for floats)
and every tensor after it is recomputed by LiteRT from the shifted value, as if LiteRT's kernel for
operator K were wrong. The manifest records it under "corruption".
"""

import argparse
import hashlib
import json
import os
import re
import sys

import flatbuffers
import numpy as np
from ai_edge_litert import interpreter as litert
from ai_edge_litert import schema_py_generated as schema

RESOLVERS = {
    "ref": "BUILTIN_REF",
    "builtin": "BUILTIN_WITHOUT_DEFAULT_DELEGATES",
    "xnnpack": "BUILTIN",
}

TYPE_NAMES = {value: name for name, value in vars(schema.TensorType).items() if not name.startswith("_")}
OPERATOR_NAMES = {value: name for name, value in vars(schema.BuiltinOperator).items() if not name.startswith("_")}


def parse_arguments():
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("model")
  parser.add_argument("--input", action="append", default=[], metavar="[NAME=]FILE.npy")
  parser.add_argument("--seed", type=int, default=0, help="seed of random inputs (default 0)")
  parser.add_argument("--resolver", choices=sorted(RESOLVERS), default="ref")
  parser.add_argument("--output", required=True, metavar="DIR")
  parser.add_argument("--corrupt-operator", type=int, metavar="K")
  parser.add_argument("--constants", action="store_true", help="also write the model's constant tensors")
  parser.add_argument("--max-bytes", type=int, metavar="N",
                      help="leave out tensors of more than N bytes (never the inputs), to keep a dump small")
  return parser.parse_args()


def random_input(detail, generator):
  shape, dtype = tuple(detail["shape"]), np.dtype(detail["dtype"])
  if dtype.kind == "f":
    return generator.uniform(-1, 1, shape).astype(dtype)
  if dtype == np.bool_:
    return generator.integers(0, 2, shape).astype(dtype)
  if dtype.kind in "iu":
    quantized = len(detail["quantization_parameters"]["scales"]) > 0
    info = np.iinfo(dtype)
    low, high = (int(info.min), int(info.max)) if quantized else (0, 15)
    return generator.integers(low, high, shape, endpoint=True).astype(dtype)
  sys.exit(f"litert_dump: input '{detail['name']}' has type {dtype}; give it with --input")


def model_inputs(interpreter, values, seed):
  details = interpreter.get_input_details()
  files = [None] * len(details)
  unnamed = []
  for value in values:
    name, equals, path = value.partition("=")
    position = next((i for i, d in enumerate(details) if equals and d["name"] == name), None)
    if position is None:
      unnamed.append(value)
    else:
      files[position] = path
  open_positions = [i for i, file in enumerate(files) if file is None]
  if len(unnamed) > len(open_positions):
    sys.exit(f"litert_dump: {len(values)} input files for {len(details)} inputs")
  for position, path in zip(open_positions, unnamed):
    files[position] = path
  generator = np.random.default_rng(seed)
  arrays = [np.load(path) if path else random_input(detail, generator) for detail, path in zip(details, files)]
  return details, arrays, files


def run(model_bytes, resolver, inputs):
  """Runs the model once with every tensor preserved; returns the interpreter."""
  interpreter = litert.Interpreter(
      model_content=model_bytes, num_threads=1, experimental_preserve_all_tensors=True,
      experimental_op_resolver_type=getattr(litert.OpResolverType, resolver))
  details = interpreter.get_input_details()
  for detail, value in zip(details, inputs):
    if list(detail["shape"]) != list(value.shape):
      interpreter.resize_tensor_input(detail["index"], value.shape, strict=False)
  interpreter.allocate_tensors()
  for detail, value in zip(details, inputs):
    interpreter.set_tensor(detail["index"], value)
  interpreter.invoke()
  return interpreter


def shifted(values):
  """`values` moved by one quantization step (integers) or 1 % of the largest magnitude (floats)."""
  if values.dtype.kind in "iu":
    info = np.iinfo(values.dtype)
    return np.where(values < info.max, values + 1, values - 1).astype(values.dtype)
  return (values + np.float32(0.01) * max(float(np.max(np.abs(values))), 1.0)).astype(values.dtype)


def corrupted_run(model_bytes, resolver, inputs, operator_index):
  """Runs the model with output 0 of `operator_index` replaced by a shifted copy of LiteRT's value.

  The operator is removed from a copy of the model and its output becomes an extra graph input fed
  with the shifted values; tensor indices stay the same, so every later tensor is LiteRT's result
  from the shifted value. Returns the interpreter and a description for the manifest.
  """
  honest = run(model_bytes, resolver, inputs)
  model = schema.ModelT.InitFromPackedBuf(bytearray(model_bytes), 0)
  operators = model.subgraphs[0].operators
  if not 0 <= operator_index < len(operators):
    sys.exit(f"litert_dump: subgraph 0 has {len(operators)} operators, no operator {operator_index}")
  tensor_index = int(operators[operator_index].outputs[0])
  value = shifted(honest.get_tensor(tensor_index))
  del operators[operator_index]
  model.subgraphs[0].inputs = list(model.subgraphs[0].inputs) + [tensor_index]
  model.signatureDefs = None  # the signature no longer lists every input
  builder = flatbuffers.Builder(1024)
  builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
  interpreter = run(bytes(builder.Output()), resolver, list(inputs) + [value])
  return interpreter, {"operator_index": operator_index, "tensor": tensor_index,
                       "change": "one quantization step" if value.dtype.kind in "iu" else "+1% of max |value|"}


def quantization_of(tensor):
  q = tensor.quantization
  if q is None or q.scale is None or len(q.scale) == 0:
    return None
  return {"scales": [float(s) for s in q.scale],
          "zero_points": [int(z) for z in (q.zeroPoint if q.zeroPoint is not None else [0] * len(q.scale))],
          "quantized_dimension": int(q.quantizedDimension)}


def main():
  arguments = parse_arguments()
  with open(arguments.model, "rb") as handle:
    model_bytes = handle.read()
  model = schema.ModelT.InitFromPackedBuf(bytearray(model_bytes), 0)
  resolver = RESOLVERS[arguments.resolver]
  probe = litert.Interpreter(model_content=model_bytes, num_threads=1)
  details, inputs, files = model_inputs(probe, arguments.input, arguments.seed)
  corruption = None
  if arguments.corrupt_operator is None:
    interpreter = run(model_bytes, resolver, inputs)
  else:
    interpreter, corruption = corrupted_run(model_bytes, resolver, inputs, arguments.corrupt_operator)
  os.makedirs(arguments.output, exist_ok=True)
  input_indices = {int(detail["index"]) for detail in details}
  subgraphs = []
  for subgraph_index, subgraph in enumerate(model.subgraphs):
    directory = os.path.join(arguments.output, str(subgraph_index))
    os.makedirs(directory, exist_ok=True)
    entries = []
    for tensor_index, tensor in enumerate(subgraph.tensors or []):
      entry = {"index": tensor_index, "name": (tensor.name or b"").decode("utf-8", "replace"),
               "type": TYPE_NAMES.get(tensor.type, str(tensor.type)),
               "shape": [int(d) for d in (tensor.shape if tensor.shape is not None else [])],
               "quantization": quantization_of(tensor), "file": None}
      if is_constant(model, tensor) and not arguments.constants:
        entry["absent_reason"] = "constant: its values are in the model"
        entries.append(entry)
        continue
      try:
        value = np.asarray(interpreter.get_tensor(tensor_index, subgraph_index))
        if value.dtype == object:
          raise ValueError(f"values of type {value.dtype} have no .npy form")
      except (ValueError, RuntimeError) as error:
        entry["absent_reason"] = str(error).strip().splitlines()[0][:200] if str(error).strip() else "unreadable"
        entries.append(entry)
        continue
      is_input = subgraph_index == 0 and tensor_index in input_indices
      if arguments.max_bytes is not None and value.nbytes > arguments.max_bytes and not is_input:
        entry["absent_reason"] = f"left out: {value.nbytes} bytes, more than --max-bytes {arguments.max_bytes}"
        entries.append(entry)
        continue
      relative = f"{subgraph_index}/{tensor_index}.npy"
      np.save(os.path.join(arguments.output, relative), value)
      entry["shape"] = list(value.shape)
      entry["file"] = relative
      entries.append(entry)
    operators = [
        OPERATOR_NAMES.get(max(model.operatorCodes[op.opcodeIndex].builtinCode,
                               model.operatorCodes[op.opcodeIndex].deprecatedBuiltinCode), "CUSTOM")
        for op in (subgraph.operators or [])]
    subgraphs.append({"index": subgraph_index, "name": (subgraph.name or b"").decode("utf-8", "replace"),
                      "operators": operators, "tensors": entries})
  manifest = {
      "format": "tflite-reference-dump",
      "version": 1,
      "model": {"file": os.path.basename(arguments.model), "sha256": hashlib.sha256(model_bytes).hexdigest(),
                "byte_count": len(model_bytes)},
      "runtime": {"package": "ai-edge-litert", "version": getattr(litert, "__version__", None) or package_version()},
      "resolver": resolver,
      "inputs": [{"subgraph": 0, "tensor": int(detail["index"]), "name": detail["name"],
                  "source": os.path.basename(path) if path else f"random (seed {arguments.seed})"}
                 for detail, path in zip(details, files)],
      "corruption": corruption,
      "subgraphs": subgraphs,
  }
  text = json.dumps(manifest, indent=1)
  # Lists of numbers (shapes, scales) on one line each.
  text = re.sub(r"\[\s*([-+\w.,\s]*?)\s*\]", lambda m: "[" + ", ".join(part.strip() for part in m.group(1).split(",")) + "]",
                text)
  with open(os.path.join(arguments.output, "manifest.json"), "w") as handle:
    handle.write(text + "\n")


def is_constant(model, tensor):
  buffer = model.buffers[tensor.buffer] if tensor.buffer < len(model.buffers or []) else None
  return buffer is not None and ((buffer.data is not None and len(buffer.data) > 0) or (buffer.size or 0) > 0)


def package_version():
  from importlib import metadata
  try:
    return metadata.version("ai-edge-litert")
  except metadata.PackageNotFoundError:
    return None


if __name__ == "__main__":
  main()
