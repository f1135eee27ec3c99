#!/usr/bin/env python3
"""Writes a reference dump of a float model evaluated in float64 (exact arithmetic, for practical purposes).

    Scripts/float64_dump.py MODEL.tflite [--input FILE.npy] [--seed N] --output DIR
        [--float32-order-seed S]

`tflite compare MODEL --reference DIR` then measures any run against the float64 values instead of
against another float32 runtime, so it tells rounding that a network amplifies from a wrong
kernel: a kernel bug shows as one operator far from float64 with `--isolate`, amplified rounding as
every operator within a few float32 ulps isolated and a chained error that grows (README, MediaPipe
section, has the pose_landmark_full study this was written for).

Semantics. Subgraph 0 runs once in numpy on float64 values: the input (the one float input, from
`--input` or seeded uniform [-1, 1) as `litert_dump.py` makes it), float32 weights as stored and
float16 weights through DEQUANTIZE (exact). Operators: CONV_2D, DEPTHWISE_CONV_2D (SAME/VALID
padding as TFLite computes it, strides, dilations, depth multiplier, fused NONE/RELU/RELU_N1_TO_1/
RELU6), ADD, MUL (numpy broadcasting, fused activation), RELU, PRELU, LOGISTIC, PAD (zeros),
MAX_POOL_2D, RESIZE_BILINEAR (align_corners / half_pixel_centers with TFLite's clamped source
indices), RESHAPE, CONCATENATION, DEQUANTIZE (float16). Any other operator, or a quantized tensor,
stops the script with its name. Values are written as float32 (the manifest's type), so the
reference itself carries at most half an ulp.

`--float32-order-seed S` evaluates in float32 instead, as a GEMM or depthwise kernel does: each
convolution output is one sequential sum rounded once per multiply-add (an FMA), its K terms in an
order drawn from seed S, the bias added first or last; the other operators round their results to
float32. A legitimate float32 evaluation, one of many. Dumps of several seeds show how far correct float32 runtimes may land
from float64 on a given network (the spread rounding alone produces).
"""

import argparse
import hashlib
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from litert_dump import OPERATOR_NAMES, TYPE_NAMES, is_constant, quantization_of, schema  # noqa: E402

ACTIVATIONS = {0: lambda x: x, 1: lambda x: np.maximum(x, 0), 2: lambda x: np.clip(x, -1, 1),
               3: lambda x: np.clip(x, 0, 6)}


def parse_arguments():
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("model")
  parser.add_argument("--input", metavar="FILE.npy")
  parser.add_argument("--seed", type=int, default=0, help="seed of a random input (default 0)")
  parser.add_argument("--output", required=True, metavar="DIR")
  parser.add_argument("--float32-order-seed", type=int, metavar="S",
                      help="evaluate in float32 with convolution sums in a random order drawn from S")
  return parser.parse_args()


class Evaluator:
  """Evaluates operators on numpy arrays of one dtype (float64, or float32 with random sum orders)."""

  def __init__(self, order_seed):
    self.dtype = np.float64 if order_seed is None else np.float32
    self.orders = None if order_seed is None else np.random.default_rng(order_seed)

  def activation(self, values, code):
    if code not in ACTIVATIONS:
      sys.exit(f"float64_dump: fused activation {code} is not supported")
    return ACTIVATIONS[code](values).astype(self.dtype)

  @staticmethod
  def window(size, kernel, stride, dilation, padding):
    """Output size and leading padding of one spatial axis (schema Padding: 0 SAME, 1 VALID)."""
    extent = (kernel - 1) * dilation + 1
    if padding == 1:
      return (size - extent) // stride + 1, 0
    output = (size + stride - 1) // stride
    return output, max((output - 1) * stride + extent - size, 0) // 2

  def convolution(self, values, filter_values, bias, options, depthwise):
    """CONV_2D (filter [O, kh, kw, C]) or DEPTHWISE_CONV_2D (filter [1, kh, kw, C·multiplier])."""
    batches, height, width, channels = values.shape
    kernel_height, kernel_width = filter_values.shape[1:3]
    output_channels = filter_values.shape[3] if depthwise else filter_values.shape[0]
    dilation_y, dilation_x = options.dilationHFactor, options.dilationWFactor
    output_height, pad_top = self.window(height, kernel_height, options.strideH, dilation_y, options.padding)
    output_width, pad_left = self.window(width, kernel_width, options.strideW, dilation_x, options.padding)
    padded = np.zeros((batches, (output_height - 1) * options.strideH + (kernel_height - 1) * dilation_y + 1,
                       (output_width - 1) * options.strideW + (kernel_width - 1) * dilation_x + 1, channels),
                      self.dtype)
    rows, columns = min(height, padded.shape[1] - pad_top), min(width, padded.shape[2] - pad_left)
    padded[:, pad_top:pad_top + rows, pad_left:pad_left + columns] = values[:, :rows, :columns]
    def patch(y, x):
      return padded[:, y * dilation_y::options.strideH, x * dilation_x::options.strideW][:, :output_height, :output_width]
    taps = [(y, x) for y in range(kernel_height) for x in range(kernel_width)]
    total = np.zeros((batches, output_height, output_width, output_channels), np.float64)
    if self.orders is None:
      for y, x in taps:
        total += (np.repeat(patch(y, x), output_channels // channels, axis=3) * filter_values[0, y, x] if depthwise
                  else patch(y, x) @ filter_values[:, y, x].T)
      return self.activation(total + (0 if bias is None else bias), options.fusedActivationFunction)
    # float32: one rounding per multiply-add (as an FMA), the K terms in a random order, bias first or last.
    bias_first = bool(self.orders.random() < 0.5)
    if bias is not None and bias_first:
      total += bias
    if depthwise:
      for tap in self.orders.permutation(len(taps)):
        y, x = taps[tap]
        product = np.repeat(patch(y, x), output_channels // channels, axis=3).astype(np.float64) * filter_values[0, y, x]
        total = (total + product).astype(np.float32).astype(np.float64)
    else:
      for term in self.orders.permutation(len(taps) * channels):
        (y, x), channel = taps[term // channels], term % channels
        product = patch(y, x)[..., channel:channel + 1].astype(np.float64) * filter_values[:, y, x, channel]
        total = (total + product).astype(np.float32).astype(np.float64)
    if bias is not None and not bias_first:
      total = (total + bias).astype(np.float32)
    return self.activation(total.astype(np.float32), options.fusedActivationFunction)

  def resize_bilinear(self, values, size, options):
    def axis(output_size, input_size):
      scale = ((input_size - 1) / (output_size - 1) if options.alignCorners and output_size > 1
               else input_size / output_size)
      position = np.arange(output_size, dtype=np.float64)
      source = (position + 0.5) * scale - 0.5 if options.halfPixelCenters else position * scale
      lower = np.maximum(np.floor(source), 0).astype(int)
      upper = np.minimum(np.ceil(source), input_size - 1).astype(int)
      return lower, upper, (source - lower).astype(self.dtype)
    top, bottom, dy = axis(int(size[0]), values.shape[1])
    left, right, dx = axis(int(size[1]), values.shape[2])
    dy, dx = dy[None, :, None, None], dx[None, None, :, None]
    rows_top, rows_bottom = values[:, top], values[:, bottom]
    return (rows_top[:, :, left] * (1 - dy) * (1 - dx) + rows_top[:, :, right] * (1 - dy) * dx
            + rows_bottom[:, :, left] * dy * (1 - dx) + rows_bottom[:, :, right] * dy * dx).astype(self.dtype)

  def max_pool(self, values, options):
    batches, height, width, channels = values.shape
    output_height, pad_top = self.window(height, options.filterHeight, options.strideH, 1, options.padding)
    output_width, pad_left = self.window(width, options.filterWidth, options.strideW, 1, options.padding)
    padded = np.full((batches, height + options.filterHeight + options.strideH * output_height,
                      width + options.filterWidth + options.strideW * output_width, channels), -np.inf, self.dtype)
    padded[:, pad_top:pad_top + height, pad_left:pad_left + width] = values
    result = np.full((batches, output_height, output_width, channels), -np.inf, self.dtype)
    for y in range(options.filterHeight):
      for x in range(options.filterWidth):
        result = np.maximum(result, padded[:, y::options.strideH, x::options.strideW][:, :output_height, :output_width])
    return self.activation(result, options.fusedActivationFunction)

  def run(self, name, options, inputs, output_shape):
    """The output of one operator; `inputs` are arrays (None for an absent optional input)."""
    first = inputs[0]
    if name == "DEQUANTIZE":
      if first.dtype != np.float16:
        sys.exit("float64_dump: only float16 DEQUANTIZE is supported (quantized tensors are not)")
      return first.astype(self.dtype)
    if name in ("CONV_2D", "DEPTHWISE_CONV_2D"):
      bias = inputs[2] if len(inputs) > 2 else None
      return self.convolution(first, inputs[1], bias, options, name == "DEPTHWISE_CONV_2D")
    if name == "ADD":
      return self.activation(first + inputs[1], options.fusedActivationFunction)
    if name == "MUL":
      return self.activation(first * inputs[1], options.fusedActivationFunction)
    if name == "RELU":
      return np.maximum(first, 0)
    if name == "PRELU":
      return np.where(first >= 0, first, first * inputs[1]).astype(self.dtype)
    if name == "LOGISTIC":
      return (1 / (1 + np.exp(-first))).astype(self.dtype)
    if name == "PAD":
      return np.pad(first, [(int(before), int(after)) for before, after in inputs[1]])
    if name == "MAX_POOL_2D":
      return self.max_pool(first, options)
    if name == "RESIZE_BILINEAR":
      return self.resize_bilinear(first, inputs[1], options)
    if name == "RESHAPE":
      return first.reshape(output_shape)
    if name == "CONCATENATION":
      return self.activation(np.concatenate(inputs, axis=options.axis), options.fusedActivationFunction)
    sys.exit(f"float64_dump: operator {name} is not supported")


def constant(model, tensor):
  """The values a constant tensor holds in the model, or None."""
  if not is_constant(model, tensor):
    return None
  data = bytes(model.buffers[tensor.buffer].data)
  dtype = {"FLOAT32": np.float32, "FLOAT16": np.float16, "INT32": np.int32, "INT64": np.int64}.get(
      TYPE_NAMES.get(tensor.type))
  if dtype is None:
    sys.exit(f"float64_dump: constant of type {TYPE_NAMES.get(tensor.type)} is not supported")
  return np.frombuffer(data, dtype=dtype).reshape([int(d) for d in tensor.shape])


def main():
  arguments = parse_arguments()
  with open(arguments.model, "rb") as handle:
    model_bytes = handle.read()
  model = schema.ModelT.InitFromPackedBuf(bytearray(model_bytes), 0)
  graph = model.subgraphs[0]
  if len(graph.inputs) != 1 or TYPE_NAMES.get(graph.tensors[graph.inputs[0]].type) != "FLOAT32":
    sys.exit("float64_dump: the model must have one float32 input")
  input_tensor = graph.tensors[graph.inputs[0]]
  if arguments.input:
    source, value = os.path.basename(arguments.input), np.load(arguments.input)
  else:
    source = f"random (seed {arguments.seed})"
    value = np.random.default_rng(arguments.seed).uniform(-1, 1, list(input_tensor.shape)).astype(np.float32)
  evaluator = Evaluator(arguments.float32_order_seed)
  values = {int(graph.inputs[0]): value.astype(evaluator.dtype)}

  def operand(index):
    if index < 0:
      return None
    if index not in values:
      stored = constant(model, graph.tensors[index])
      values[index] = None if stored is None else stored.astype(evaluator.dtype) if stored.dtype == np.float32 else stored
    return values[index]

  operator_names = []
  for operator in graph.operators:
    code = model.operatorCodes[operator.opcodeIndex]
    name = OPERATOR_NAMES.get(max(code.builtinCode, code.deprecatedBuiltinCode), "CUSTOM")
    operator_names.append(name)
    output = int(operator.outputs[0])
    values[output] = evaluator.run(name, operator.builtinOptions, [operand(int(i)) for i in operator.inputs],
                                   [int(d) for d in graph.tensors[output].shape])

  os.makedirs(os.path.join(arguments.output, "0"), exist_ok=True)
  entries = []
  for index, tensor in enumerate(graph.tensors):
    entry = {"index": index, "name": (tensor.name or b"").decode("utf-8", "replace"),
             "type": TYPE_NAMES.get(tensor.type, str(tensor.type)),
             "shape": [int(d) for d in (tensor.shape if tensor.shape is not None else [])],
             "quantization": quantization_of(tensor), "file": None}
    if is_constant(model, tensor):
      entry["absent_reason"] = "constant: its values are in the model"
    elif index not in values:
      entry["absent_reason"] = "not computed"
    else:
      np.save(os.path.join(arguments.output, f"0/{index}.npy"), values[index].astype(np.float32))
      entry["file"] = f"0/{index}.npy"
    entries.append(entry)
  evaluation = ("float64" if arguments.float32_order_seed is None
                else f"float32, convolution sum orders of seed {arguments.float32_order_seed}")
  manifest = {
      "format": "tflite-reference-dump", "version": 1,
      "model": {"file": os.path.basename(arguments.model), "sha256": hashlib.sha256(model_bytes).hexdigest(),
                "byte_count": len(model_bytes)},
      "runtime": {"package": "numpy (Scripts/float64_dump.py)", "version": np.__version__},
      "resolver": evaluation,
      "inputs": [{"subgraph": 0, "tensor": int(graph.inputs[0]), "name": entries[graph.inputs[0]]["name"],
                  "source": source}],
      "corruption": None,
      "subgraphs": [{"index": 0, "name": (graph.name or b"").decode("utf-8", "replace"),
                     "operators": operator_names, "tensors": entries}],
  }
  with open(os.path.join(arguments.output, "manifest.json"), "w") as handle:
    json.dump(manifest, handle, indent=1)
    handle.write("\n")


if __name__ == "__main__":
  main()
