"""Cases, conversion, reference execution and file writing shared by every model group.

A `Case` says how to build one model (a TF callable or a Keras model made from a seeded
random source), which inputs it takes, how to convert it (the quantization mode) and which
operators the converted file must contain. `generate` converts it, runs LiteRT's reference
kernels on seeded inputs and writes the model, its inputs and outputs and a manifest entry.
"""

import dataclasses
import os
import zlib
from typing import Callable, Optional, Sequence

import numpy as np
import tensorflow as tf
from ai_edge_litert import interpreter as litert

from . import flatbuf, litert_run

SEED = 1234

# Quantization modes and the directory (group) their single-op models live in.
FLOAT32 = "float32"
INT8 = "int8"
UINT8 = "uint8"
INT16X8 = "int16x8"
HYBRID = "hybrid"
FLOAT16_WEIGHTS = "float16_weights"
# uint8 kernels (per-tensor asymmetric), as TF1 quantization-aware training produced them.
UINT8_LEGACY = "uint8_legacy"
INTEGER_MODES = (INT8, UINT8, INT16X8, UINT8_LEGACY)

# Short tags used inside model names.
MODE_TAGS = {FLOAT32: "f32", INT8: "int8", UINT8: "uint8", INT16X8: "int16x8", HYBRID: "hybrid",
             FLOAT16_WEIGHTS: "fp16w", UINT8_LEGACY: "uint8_legacy"}

# Default float tolerance: max abs error <= DEFAULT_FLOAT_FACTOR * max(1, output range).
DEFAULT_FLOAT_FACTOR = 1e-5


class Rng:
  """A seeded source of weights and inputs for one case (seeded from the global seed and the case name)."""

  def __init__(self, name, seed=SEED):
    self.generator = np.random.default_rng([seed, zlib.crc32(name.encode())])

  def normal(self, shape, scale=1.0):
    return (self.generator.standard_normal(shape) * scale).astype(np.float32)

  def uniform(self, shape, lo=-1.0, hi=1.0):
    return self.generator.uniform(lo, hi, size=shape).astype(np.float32)

  def integers(self, shape, lo, hi, dtype=np.int32):
    """Integers in [lo, hi] inclusive."""
    return self.generator.integers(lo, hi, size=shape, endpoint=True).astype(dtype)

  def const(self, shape, scale=1.0):
    """A float32 TF constant with normal values."""
    return tf.constant(self.normal(shape, scale))

  def const_uniform(self, shape, lo=-1.0, hi=1.0):
    return tf.constant(self.uniform(shape, lo, hi))


@dataclasses.dataclass
class Input:
  """One model input: its shape, element type and the value range the op should see."""

  shape: Sequence[int]
  lo: float = -1.0
  hi: float = 1.0
  dtype: str = "float32"
  # Make these dimensions unknown (None) in the converted model's shape signature.
  dynamic_dims: Sequence[int] = ()
  # Push float values at least this far away from zero (for divisors, RSQRT, ...).
  away_from_zero: float = 0.0
  # Snap float values to multiples of this step (exact ties for ROUND, FLOOR_DIV, ...).
  step: float = 0.0
  # Fixed values, or a function of the case's Rng returning them.
  values: Optional[object] = None
  # Quantized test inputs: raw values spread evenly over the input type instead of drawn ones,
  # "all" over the whole tensor, "rows" along the leading axes (each repeated along the last) or
  # "columns" along the last axis (tiled), so that a "rows" and a "columns" input of one shape
  # meet in every pair of values. The sweep starts at the zero point when `lo >= 0` and skips it
  # when `away_from_zero` is set.
  sweep: str = ""

  def spec(self, index):
    shape = [None if i in self.dynamic_dims else d for i, d in enumerate(self.shape)]
    return tf.TensorSpec(shape, tf.as_dtype(self.dtype), name=input_name(index))

  def sweep_values(self, dtype, zero_point):
    """The raw values of a swept quantized input of type `dtype` (see `sweep`)."""
    info = np.iinfo(dtype)
    lowest = max(info.min, zero_point) if self.lo >= 0 else info.min
    shape = tuple(self.shape)
    size, last = int(np.prod(shape)), shape[-1]
    count = {"all": size, "rows": size // last, "columns": last}[self.sweep]
    levels = np.unique(np.round(np.linspace(lowest, info.max, min(count, info.max - lowest + 1))).astype(np.int64))
    if self.away_from_zero:
      levels = np.where(levels == zero_point, zero_point + 1 if zero_point < info.max else zero_point - 1, levels)
    levels = np.resize(levels, count)
    values = {"all": levels, "rows": np.repeat(levels, last), "columns": np.tile(levels, size // last)}[self.sweep]
    return values.astype(dtype).reshape(shape)

  def draw(self, rng, widen=1.0):
    """Seeded values for this input; `widen` stretches the float range (to saturate quantized inputs)."""
    if self.values is not None:
      values = self.values(rng) if callable(self.values) else self.values
      return np.asarray(values, dtype=self.dtype).reshape(self.shape)
    shape = tuple(self.shape)
    if self.dtype == "bool":
      return rng.generator.integers(0, 2, size=shape).astype(bool)
    if np.issubdtype(np.dtype(self.dtype), np.integer):
      return rng.integers(shape, int(self.lo), int(self.hi), np.dtype(self.dtype))
    center, half = (self.hi + self.lo) / 2, (self.hi - self.lo) / 2 * widen
    values = rng.generator.uniform(center - half, center + half, size=shape)
    if self.away_from_zero:
      values = np.where(np.abs(values) < self.away_from_zero,
                        np.where(values < 0, -self.away_from_zero, self.away_from_zero), values)
    if self.step:
      values = np.round(values / self.step) * self.step
    return values.astype(self.dtype)


def input_name(index):
  return "x" if index == 0 else f"x{index}"


@dataclasses.dataclass
class Case:
  """How to build, convert and check one model."""

  name: str
  group: str
  mode: str
  inputs: Sequence[Input]
  # rng -> a callable over TF tensors (or a list of them applied in turn), a tf.keras.Model or a
  # configured tf.lite.TFLiteConverter.
  make: Callable
  # Operators the converted model must contain (checks that the converter emitted what we test).
  expect: Sequence[str] = ()
  kind: str = "op"
  # Float tolerance: atol = factor * max(1, output range); the note says why when looser than default.
  tolerance_factor: float = DEFAULT_FLOAT_FACTOR
  tolerance_note: str = ""
  # rng -> iterator of representative input lists (float); default draws from the input ranges.
  representative: Optional[Callable] = None
  # Extra converter settings: a function(converter) applied before convert().
  tweak: Optional[Callable] = None
  # How far quantized test inputs stretch beyond the calibrated range (values clip at the type's limits).
  widen: float = 1.25
  # Signature models: signature key -> its inputs (case.inputs is then unused).
  signatures: Optional[dict] = None
  # rng -> model bytes, for models written directly instead of converted (see surgery.py).
  build: Optional[Callable] = None
  # bytes -> bytes edit of the converted model (see surgery.py).
  post: Optional[Callable] = None
  # (entry, model_bytes) -> None: adds facts to the manifest entry after generation.
  annotate: Optional[Callable] = None
  # Run LiteRT in a child process (for models where a kernel may abort the process).
  isolated: bool = False
  # bytes -> bytes: the model LiteRT runs for the expected outputs when it cannot run the written
  # one (custom ops replaced by equivalent builtin ops, see mediapipe.py); default the model itself.
  reference_model: Optional[Callable] = None
  # Extra manifest fields (free-form facts about the case).
  extra: dict = dataclasses.field(default_factory=dict)


class NotGenerated(Exception):
  """A case the converter or the reference runtime cannot produce; the message says why."""


# ---------------------------------------------------------------------------------------------
# Conversion


def _default_representative(case, rng):
  def samples():
    for i in range(64):
      sample = []
      for spec in case.inputs:
        values = spec.draw(rng)
        if i == 0 and np.issubdtype(values.dtype, np.floating) and spec.values is None:
          # Make sure the calibrated range reaches both ends of the declared input range.
          flat = values.reshape(-1)
          flat[0], flat[-1] = spec.lo, spec.hi
        sample.append(values)
      yield sample
  return samples


def _is_converter(built):
  return hasattr(built, "convert") and hasattr(built, "target_spec")


def make_converter(case, rng):
  built = case.make(rng)
  if _is_converter(built):
    converter = built
  elif isinstance(built, tf.keras.Model):
    converter = tf.lite.TFLiteConverter.from_keras_model(built)
  else:
    function = tf.function(built, input_signature=[spec.spec(i) for i, spec in enumerate(case.inputs)],
                           autograph=False)
    concrete = function.get_concrete_function()
    converter = tf.lite.TFLiteConverter.from_concrete_functions([concrete], function)
  converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS]
  mode = case.mode
  if mode != FLOAT32:
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
  if mode == FLOAT16_WEIGHTS:
    converter.target_spec.supported_types = [tf.float16]
  if mode in INTEGER_MODES:
    representative = case.representative or (lambda r: _default_representative(case, r))
    converter.representative_dataset = representative(Rng(case.name + "/calibration"))
    if mode == INT16X8:
      converter.target_spec.supported_ops = [
          tf.lite.OpsSet.EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8]
      io_type = tf.int16
    else:
      converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
      io_type = tf.int8 if mode == INT8 else tf.uint8
    if any(spec.dtype == "float32" for spec in case.inputs):
      converter.inference_input_type = io_type
    converter.inference_output_type = io_type
  if case.tweak:
    case.tweak(converter)
  return converter


def convert(case, rng):
  if case.build:
    return case.build(rng)
  try:
    if case.mode == UINT8_LEGACY:
      from . import legacy
      return legacy.convert(case, case.representative or (lambda r: _default_representative(case, r)))
    return make_converter(case, rng).convert()
  except Exception as error:  # the converter raises many unrelated types
    message = str(error).strip().splitlines()
    summary = next((line for line in message if "error" in line.lower()), message[0] if message else repr(error))
    raise NotGenerated(f"converter failed: {summary.strip()[:300]}") from error


# ---------------------------------------------------------------------------------------------
# Running


def run(model_bytes, inputs, resolver=litert.OpResolverType.BUILTIN_REF, isolated=False):
  """Runs the model once with one thread (in a child process when `isolated`)."""
  return (litert_run.run_isolated if isolated else litert_run.run)(model_bytes, inputs, resolver.name)


def _quantize(values, quantization, dtype):
  scale, zero_point = quantization
  info = np.iinfo(dtype)
  return np.clip(np.round(values / scale) + zero_point, info.min, info.max).astype(dtype)


def model_inputs(case, model_bytes, rng):
  """Seeded input arrays in the model's input order (quantized for integer models), and for each
  model input the index of the declared input it feeds."""
  interpreter = litert.Interpreter(model_content=model_bytes)
  details = interpreter.get_input_details()
  if len(details) != len(case.inputs):
    raise NotGenerated(f"model has {len(details)} inputs, case declares {len(case.inputs)}")
  drawn = [spec.draw(rng) for spec in case.inputs]
  ordered, positions = [], []
  for position, detail in enumerate(details):
    index = _declared_index(detail["name"], len(case.inputs), position)
    positions.append(index)
    spec, values = case.inputs[index], drawn[index]
    if detail["dtype"] != values.dtype:
      if spec.dtype == "float32" and detail["quantization"][0] != 0 and spec.sweep:
        values = spec.sweep_values(detail["dtype"], detail["quantization"][1])
      elif spec.dtype == "float32" and detail["quantization"][0] != 0:
        values = _quantize(spec.draw(Rng(case.name + f"/wide{index}"), widen=case.widen),
                           detail["quantization"], detail["dtype"])
      else:
        raise NotGenerated(f"input {detail['name']} has type {detail['dtype']}, declared {spec.dtype}")
    ordered.append(values)
  return ordered, positions


def _declared_index(model_name, count, position):
  for index in range(count):
    name = input_name(index)
    if model_name in (name, f"{name}:0") or model_name.endswith(f"_{name}:0"):
      return index
  return position


# ---------------------------------------------------------------------------------------------
# Tolerances


def tolerance(case, outputs, xnnpack_diff):
  if case.mode in INTEGER_MODES or all(not np.issubdtype(o.dtype, np.floating) for o in outputs):
    return {"atol": 0.0, "rtol": 0.0, "note": "exact: integer outputs must match bit for bit"}
  value_range = max(float(np.max(o) - np.min(o)) if o.size else 0.0
                    for o in outputs if np.issubdtype(o.dtype, np.floating))
  atol = case.tolerance_factor * max(1.0, value_range)
  note = case.tolerance_note or f"{case.tolerance_factor:g} x max(1, output range {value_range:.6g})"
  if case.kind == "network" and xnnpack_diff is not None and xnnpack_diff > atol:
    atol = xnnpack_diff
    note = f"measured max |BUILTIN_REF - XNNPACK| (exceeds {case.tolerance_factor:g} x range)"
  return {"atol": float(np.float32(atol)), "rtol": 0.0, "note": note}


# ---------------------------------------------------------------------------------------------
# Writing


def _io_entries(facts, indices, arrays, files):
  tensors = facts.tensors()
  entries = []
  for index, array, file in zip(indices, arrays, files):
    tensor = tensors[index]
    entries.append({
        "name": tensor["name"], "index": index, "file": file, "type": tensor["type"],
        # The shape the reference run used (differs from the file's shape only for resized inputs).
        "shape": list(array.shape), "shape_signature": tensor["shape_signature"],
        "quantization": tensor["quantization"],
    })
  return entries


def _max_abs_diff(a_list, b_list):
  worst = 0.0
  for a, b in zip(a_list, b_list):
    if a.dtype == bool:
      worst = max(worst, float(np.sum(a != b)))
    else:
      worst = max(worst, float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64)), initial=0.0)))
  return worst


REFERENCE_RESOLVERS = (litert.OpResolverType.BUILTIN_REF, litert.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)


def run_reference(model_bytes, inputs, isolated=False):
  """(outputs, resolver name, note): from the reference kernels, or from the builtin kernels
  for ops BUILTIN_REF lacks (and, for isolated runs, when BUILTIN_REF aborts)."""
  notes = []
  for resolver in REFERENCE_RESOLVERS:
    try:
      return run(model_bytes, inputs, resolver, isolated), resolver.name, " ".join(notes)
    except Exception as error:
      message = str(error).strip().splitlines()[0][:300]
      missing = "Didn't find op" in message or "unresolved custom op" in message
      if not missing and not isinstance(error, litert_run.ProcessDied):
        raise NotGenerated(f"{resolver.name} cannot run it: {message}") from error
      notes.append(f"{resolver.name}: {message}.")
  raise NotGenerated(f"no LiteRT resolver can run it: {' '.join(notes)}")


def tensorflow_outputs(case, model_inputs, positions, input_entries):
  """TensorFlow's own results for the case's callable or Keras model on the (dequantized) model
  inputs, or None when there is nothing to compare (converters, edited models, TF lacks a kernel)."""
  if case.post or case.signatures:
    return None
  declared = [None] * len(model_inputs)
  for values, index, entry in zip(model_inputs, positions, input_entries):
    quantization = entry["quantization"]
    if quantization is not None and case.inputs[index].dtype == "float32":
      values = ((values.astype(np.float64) - quantization["zero_point"][0]) * quantization["scale"][0])
      values = values.astype(np.float32)
    declared[index] = values
  built = case.make(Rng(case.name))
  try:
    if built is None or _is_converter(built):
      return None
    if isinstance(built, tf.keras.Model):
      results = built(declared if len(declared) > 1 else declared[0])
    else:
      results = [tf.constant(v) for v in declared]
      for stage in (built if isinstance(built, list) else [built]):
        results = stage(*results)
        results = results if isinstance(results, (list, tuple)) else [results]
  except tf.errors.OpError:  # e.g. 6-D broadcasting, which TF's own CPU kernels lack
    return None
  return [np.asarray(r) for r in (results if isinstance(results, (list, tuple)) else [results])]


def disagreement(outputs, output_entries, expected):
  """Worst difference between model outputs and TensorFlow's: in real units for float outputs,
  in quantization steps for quantized outputs (TF's values clipped to the representable range).
  Outputs of other types (indices, booleans) are not compared. None if outputs cannot be paired."""
  worst = 0.0
  for output, entry in zip(outputs, output_entries):
    quantization = entry["quantization"]
    if np.issubdtype(output.dtype, np.floating):
      candidates = [_max_abs_diff([output], [r]) for r in expected if r.shape == output.shape]
    elif quantization is not None and np.issubdtype(output.dtype, np.integer):
      scale, zero_point = quantization["scale"][0], quantization["zero_point"][0]
      info = np.iinfo(output.dtype)
      real = (output.astype(np.float64) - zero_point) * scale
      lo, hi = (info.min - zero_point) * scale, (info.max - zero_point) * scale
      candidates = [float(np.max(np.abs(real - np.clip(r, lo, hi)), initial=0.0)) / scale
                    for r in expected if r.shape == output.shape]
    else:
      continue
    if not candidates:
      return None
    worst = max(worst, min(candidates))
  return worst


def _disagreement_limit(case, entry, output_arrays):
  """How far from TensorFlow an op's outputs may be before the kernels count as wrong."""
  if case.mode == FLOAT32:
    return entry["tolerance"]["atol"]
  if case.mode in INTEGER_MODES:
    steps = [np.iinfo(o.dtype).max - np.iinfo(o.dtype).min for o in output_arrays if np.issubdtype(o.dtype, np.integer)]
    return 0.02 * max(steps, default=255)
  return None


def check_against_tensorflow(case, entry, model_bytes, inputs, positions, outputs, root):
  """Records how far LiteRT is from TensorFlow. For single ops, when BUILTIN_REF is far off but
  the builtin optimized kernels are close, their outputs become the expected ones."""
  expected = tensorflow_outputs(case, inputs, positions, entry["inputs"])
  if expected is None:
    return
  difference = disagreement(outputs, entry["outputs"], expected)
  key = "tensorflow_max_abs_diff" if case.mode not in INTEGER_MODES else "tensorflow_max_diff_steps"
  entry[key] = difference
  limit = _disagreement_limit(case, entry, outputs)
  if difference is None or limit is None or difference <= limit or case.kind != "op":
    return
  resolver = litert.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES
  builtin_outputs = run(model_bytes, inputs, resolver)
  builtin_difference = disagreement(builtin_outputs, entry["outputs"], expected)
  if builtin_difference is None or builtin_difference > limit:
    entry["reference_note"] = "BUILTIN_REF and the builtin kernels both differ from TensorFlow"
    return
  entry["reference_note"] = (f"BUILTIN_REF differs from TensorFlow by {difference:.3g}; the builtin optimized "
                             f"kernels agree with TensorFlow ({builtin_difference:.3g}) and give the expected outputs")
  entry["reference"] = resolver.name
  entry[key] = builtin_difference
  entry["tolerance"] = tolerance(case, builtin_outputs, None)
  for output, array in zip(entry["outputs"], builtin_outputs):
    np.save(os.path.join(root, output["file"]), np.ascontiguousarray(array), allow_pickle=False)


def _run_signatures(case, model_bytes, facts, stem, root):
  """Runs every signature with its own seeded inputs and writes `<stem>.<key>.input_<i>.npy` etc."""
  entries = []
  for signature in facts.signatures():
    key = signature["key"]
    specs = case.signatures[key]
    rng = Rng(f"{case.name}/{key}")
    names = [input_name(i) for i in range(len(specs))]
    values = {name: spec.draw(rng) for name, spec in zip(names, specs)}
    interpreter = litert.Interpreter(model_content=model_bytes, num_threads=1,
                                     experimental_op_resolver_type=litert.OpResolverType.BUILTIN_REF)
    results = interpreter.get_signature_runner(key)(**values)
    entry = {"key": key, "subgraph_index": signature["subgraph_index"], "inputs": [], "outputs": []}
    for i, name in enumerate(names):
      file = f"{stem}.{key}.input_{i}.npy"
      np.save(os.path.join(root, file), values[name], allow_pickle=False)
      entry["inputs"].append({"name": name, "tensor": signature["inputs"][name], "file": file,
                              "shape": list(values[name].shape)})
    for i, name in enumerate(sorted(results)):
      file = f"{stem}.{key}.output_{i}.npy"
      np.save(os.path.join(root, file), np.ascontiguousarray(results[name]), allow_pickle=False)
      entry["outputs"].append({"name": name, "tensor": signature["outputs"][name], "file": file,
                               "shape": list(results[name].shape)})
    entries.append(entry)
  return entries


def _require_integer_kernels(case, facts, ops):
  """An integer-mode case must run its op on integers, not between DEQUANTIZE and QUANTIZE."""
  types = [tensor["type"] for tensor in facts.tensors()]
  for name in case.expect:
    if name in ("QUANTIZE", "DEQUANTIZE"):
      continue
    float_runs = [op for op in ops if op["op"] == name and op["inputs"] and types[op["inputs"][0]] == "FLOAT32"]
    if float_runs and len(float_runs) == sum(op["op"] == name for op in ops):
      raise NotGenerated(f"the converter keeps {name} in float32 (DEQUANTIZE -> {name} -> QUANTIZE) in {case.mode} mode")


def _op_entries(ops):
  return [{k: op[k] for k in ("op", "version", "options_type", "options") if k in op} for op in ops]


def generate(case, root):
  """Builds, converts, runs and writes one case. Returns its manifest entry or raises NotGenerated."""
  # Keras numbers layer names with process-wide counters; reset them so names do not depend on
  # which cases ran before.
  tf.keras.backend.clear_session()
  rng = Rng(case.name)
  model_bytes = convert(case, rng)
  if case.post:
    model_bytes = case.post(model_bytes)
  facts = flatbuf.ModelFacts(model_bytes)
  ops = facts.operators()
  op_names = [op["op"] for op in ops]
  missing = [name for name in case.expect if name not in op_names]
  if missing:
    raise NotGenerated(f"converter did not emit {missing}; emitted {op_names}")
  if case.mode in INTEGER_MODES and case.kind == "op":
    _require_integer_kernels(case, facts, ops)
  if case.signatures:
    first = next(s["key"] for s in facts.signatures() if s["subgraph_index"] == 0)
    case = dataclasses.replace(case, inputs=case.signatures[first])
  reference_bytes = case.reference_model(model_bytes) if case.reference_model else model_bytes
  inputs, positions = model_inputs(case, reference_bytes, Rng(case.name + "/inputs"))
  outputs, reference, reference_note = run_reference(reference_bytes, inputs, case.isolated)
  for output in outputs:
    if np.issubdtype(output.dtype, np.floating) and not np.all(np.isfinite(output)):
      raise NotGenerated("reference output has non-finite values")
  try:
    xnnpack_diff = _max_abs_diff(outputs, run(reference_bytes, inputs, litert.OpResolverType.AUTO, case.isolated))
  except Exception:
    xnnpack_diff = None

  os.makedirs(os.path.join(root, case.group), exist_ok=True)
  stem = f"{case.group}/{case.name}" if case.group else case.name
  model_file = f"{stem}.tflite"
  with open(os.path.join(root, model_file), "wb") as handle:
    handle.write(model_bytes)
  input_files = [f"{stem}.input_{i}.npy" for i in range(len(inputs))]
  output_files = [f"{stem}.output_{i}.npy" for i in range(len(outputs))]
  for file, array in zip(input_files + output_files, inputs + outputs):
    np.save(os.path.join(root, file), np.ascontiguousarray(array), allow_pickle=False)

  entry = {
      "name": case.name,
      "group": case.group,
      "file": model_file,
      "kind": case.kind,
      "quantization": UINT8 if case.mode == UINT8_LEGACY else case.mode,
      "ops": _op_entries(ops),
      "inputs": _io_entries(facts, facts.input_indices(), inputs, input_files),
      "outputs": _io_entries(facts, facts.output_indices(), outputs, output_files),
      "tensors": facts.tensors(),
      "tolerance": tolerance(case, outputs, xnnpack_diff),
      "reference": reference,
      "xnnpack_max_abs_diff": xnnpack_diff,
  }
  if reference_note:
    entry["reference_note"] = reference_note
  check_against_tensorflow(case, entry, reference_bytes, inputs, positions, outputs, root)
  if facts.subgraph_count() > 1:
    entry["subgraphs"] = [{"index": i, "name": facts.subgraph_name(i),
                           "ops": _op_entries(facts.operators(i))}
                          for i in range(1, facts.subgraph_count())]
  if case.signatures:
    entry["signatures"] = _run_signatures(case, model_bytes, facts, stem, root)
  if case.mode == UINT8_LEGACY:
    entry["uint8_kernels"] = True
    entry["converter"] = "TF1 converter, FakeQuant graph, inference_type=uint8"
  entry.update(case.extra)
  if case.annotate:
    case.annotate(entry, model_bytes)
  return entry
