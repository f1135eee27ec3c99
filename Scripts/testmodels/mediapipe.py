"""MediaPipe's custom operators: small models that contain them, checked against LiteRT.

MediaPipe's published models use custom operators that only MediaPipe's op resolver registers,
so LiteRT cannot run the files as they are. Each case here writes a model with the custom op
(schema object API) and lets LiteRT compute the expected outputs on a rewrite of the same model
in which every custom op is replaced by an equivalent graph of builtin ops
(`builtin_equivalent`). The runtime under test runs the original file.

Convolution2DTransposeBias (selfie segmentation): inputs `input [N,H,W,I]`, `weights [O,KH,KW,I]`,
`bias [O]`; custom options are 12 raw bytes, three little-endian int32 (padding: 1 SAME, 2 VALID;
stride width; stride height). The output is `stride * (in - 1) + kernel - pad` per axis, where
`pad = max(0, kernel - (in - 1) % stride - 1)` for SAME and 0 for VALID, with `pad / 2` cropped
before. Equivalent: a VALID TRANSPOSE_CONV to the uncropped size, a SLICE of the window, an ADD
of the bias.
"""

import os
import struct

import numpy as np
from ai_edge_litert import schema_py_generated as schema
from flatbuffers import flexbuffers

from . import flatbuf, surgery
from .core import FLOAT32, Case, Input, NotGenerated

CASES = []

TRANSPOSE_CONV_BIAS = "Convolution2DTransposeBias"
SAME, VALID = 1, 2


def transpose_conv_bias_options(padding, stride_width, stride_height):
  """The custom options of a Convolution2DTransposeBias: three int32 (padding, stride w, stride h)."""
  return struct.pack("<iii", padding, stride_width, stride_height)


def transpose_conv_bias_axis(size, kernel, stride, same):
  """(uncropped extent, cropped before, output extent) of one axis."""
  pad = max(0, kernel - (size - 1) % stride - 1) if same else 0
  full = stride * (size - 1) + kernel
  return full, pad // 2, full - pad


class _GraphWriter:
  """Appends tensors and builtin operators to one subgraph of an object-API model."""

  def __init__(self, model, subgraph, prefix):
    self.model, self.subgraph, self.prefix = model, subgraph, prefix
    self.operators = []

  def tensor(self, shape, dtype="float32", data=None):
    """A new tensor (a constant when `data` is given); returns its index."""
    buffer = 0
    if data is not None:
      self.model.buffers.append(surgery._buffer(np.ascontiguousarray(data).tobytes()))
      buffer = len(self.model.buffers) - 1
    name = f"{self.prefix}/{len(self.subgraph.tensors)}"
    self.subgraph.tensors.append(surgery._tensor(name, shape, buffer, dtype))
    return len(self.subgraph.tensors) - 1

  def const(self, values, dtype="float32"):
    values = np.asarray(values, dtype=dtype)
    return self.tensor(values.shape, dtype, values)

  def op(self, name, inputs, shape, dtype="float32", options=None, output=None):
    """Appends `name` over `inputs`, writing `output` or a new tensor of `shape`; returns the output."""
    output = self.tensor(shape, dtype) if output is None else output
    op = schema.OperatorT()
    op.opcodeIndex = surgery._opcode_index(self.model, name)
    op.inputs, op.outputs = list(inputs), [output]
    if options is not None:
      op.builtinOptionsType = getattr(schema.BuiltinOptions, type(options).__name__[:-1])
      op.builtinOptions = options
    self.operators.append(op)
    return output

  def slice(self, source, begin, size):
    return self.op("SLICE", [source, self.const(begin, "int32"), self.const(size, "int32")], size)

  def reshape(self, source, shape):
    return self.op("RESHAPE", [source, self.const(shape, "int32")], shape)

  def binary(self, name, a, b, shape, output=None):
    options = {"ADD": schema.AddOptionsT, "SUB": schema.SubOptionsT, "MUL": schema.MulOptionsT}.get(name)
    return self.op(name, [a, b], shape, options=options() if options else None, output=output)

  def concat(self, parts, axis, shape, output=None):
    options = schema.ConcatenationOptionsT()
    options.axis = axis
    return self.op("CONCATENATION", parts, shape, options=options, output=output)


def _tensor_name(subgraph, index):
  name = subgraph.tensors[index].name
  return name.decode() if isinstance(name, bytes) else name


def _replace_transpose_conv_bias(graph, op):
  """Convolution2DTransposeBias: VALID TRANSPOSE_CONV to the uncropped size, SLICE, ADD bias."""
  padding, stride_width, stride_height = struct.unpack("<iii", bytes(op.customOptions)[:12])
  source, weights, bias = op.inputs
  batch, height, width, _ = graph.subgraph.tensors[source].shape
  channels, kernel_height, kernel_width, _ = graph.subgraph.tensors[weights].shape
  full_h, top, out_h = transpose_conv_bias_axis(height, kernel_height, stride_height, padding == SAME)
  full_w, left, out_w = transpose_conv_bias_axis(width, kernel_width, stride_width, padding == SAME)
  full_shape = [batch, full_h, full_w, channels]
  options = schema.TransposeConvOptionsT()
  options.padding, options.strideW, options.strideH = schema.Padding.VALID, stride_width, stride_height
  result = graph.op("TRANSPOSE_CONV", [graph.const(full_shape, "int32"), weights, source], full_shape,
                    options=options)
  if (out_h, out_w) != (full_h, full_w):
    result = graph.slice(result, [0, top, left, 0], [batch, out_h, out_w, channels])
  graph.op("ADD", [result, bias], [batch, out_h, out_w, channels], options=schema.AddOptionsT(),
           output=op.outputs[0])


def _replace_transform_landmarks(graph, op):
  """TransformLandmarks v2: (x, y) -> rows 0 and 1 of the matrix applied to (x, y, 0, 1); z copied."""
  landmarks, matrix = op.inputs
  batch, count, dimensions = graph.subgraph.tensors[landmarks].shape
  rows = graph.slice(matrix, [0, 0, 0], [1, 2, 4])
  linear = graph.slice(rows, [0, 0, 0], [1, 2, 2])
  shift = graph.reshape(graph.slice(rows, [0, 0, 3], [1, 2, 1]), [1, 1, 2])
  xy = graph.slice(landmarks, [0, 0, 0], [batch, count, 2])
  moved = graph.op("BATCH_MATMUL", [xy, linear], [batch, count, 2], options=_adj_y())
  if dimensions == 2:
    graph.binary("ADD", moved, shift, [batch, count, 2], output=op.outputs[0])
    return
  moved = graph.binary("ADD", moved, shift, [batch, count, 2])
  depth = graph.slice(landmarks, [0, 0, 2], [batch, count, dimensions - 2])
  graph.concat([moved, depth], 2, [batch, count, dimensions], output=op.outputs[0])


def _replace_transform_tensor_bilinear(graph, op):
  """TransformTensorBilinear v2: each output pixel (x, y) samples the input at rows 0 and 1 of the
  matrix applied to (x + 0.5, y + 0.5, 0, 1), minus 0.5, bilinearly; zero outside
  [0, width-1] x [0, height-1] and for corners past the edge."""
  source, matrix = op.inputs
  _, height, width, channels = graph.subgraph.tensors[source].shape
  _, out_h, out_w, _ = graph.subgraph.tensors[op.outputs[0]].shape
  pixels = out_h * out_w
  ys, xs = np.meshgrid(np.arange(out_h, dtype=np.float32), np.arange(out_w, dtype=np.float32), indexing="ij")
  grid = np.stack([xs.ravel() + 0.5, ys.ravel() + 0.5, np.ones(pixels, np.float32)], axis=1)
  # Columns: the x row and the y row of the matrix, at entries 0, 1 and 3.
  rows = graph.reshape(graph.slice(matrix, [0, 0, 0], [1, 2, 4]), [2, 4])
  picked = graph.op("GATHER", [rows, graph.const([0, 1, 3], "int32")], [2, 3], options=_gather_options(1))
  coordinates = graph.op("BATCH_MATMUL", [graph.const(grid), picked], [pixels, 2], options=_adj_y())
  coordinates = graph.binary("SUB", coordinates, graph.const([0.5]), [pixels, 2])
  floor = graph.op("FLOOR", [coordinates], [pixels, 2])
  fraction = graph.binary("SUB", coordinates, floor, [pixels, 2])
  limits = graph.const([width - 1, height - 1])
  inside = graph.op("LOGICAL_AND", [
      graph.op("GREATER_EQUAL", [coordinates, graph.const([0.0])], [pixels, 2], "bool"),
      graph.op("LESS_EQUAL", [coordinates, limits], [pixels, 2], "bool")], [pixels, 2], "bool")
  inside = graph.op("CAST", [inside], [pixels, 2])
  mask = graph.binary("MUL", graph.slice(inside, [0, 0], [pixels, 1]), graph.slice(inside, [0, 1], [pixels, 1]),
                      [pixels, 1])
  # Corner indices (y, x) into the input padded by one zero row / column on each side.
  clamped = graph.op("MINIMUM", [graph.op("MAXIMUM", [floor, graph.const([-1.0])], [pixels, 2]), limits], [pixels, 2])
  corner = graph.op("CAST", [clamped], [pixels, 2], "int32")
  corner = graph.op("GATHER", [corner, graph.const([1, 0], "int32")], [pixels, 2], "int32", options=_gather_options(1))
  padded = graph.op("PAD", [source, graph.const([[0, 0], [1, 1], [1, 1], [0, 0]], "int32")],
                    [1, height + 2, width + 2, channels])
  padded = graph.reshape(padded, [height + 2, width + 2, channels])

  def read(dy, dx):
    index = graph.binary("ADD", corner, graph.const([1 + dy, 1 + dx], "int32"), [pixels, 2])
    return graph.op("GATHER_ND", [padded, index], [pixels, channels])
  right = graph.slice(fraction, [0, 0], [pixels, 1])
  lower = graph.slice(fraction, [0, 1], [pixels, 1])
  one = graph.const([1.0])
  left, upper = graph.binary("SUB", one, right, [pixels, 1]), graph.binary("SUB", one, lower, [pixels, 1])

  def mix(a, wa, b, wb):
    return graph.binary("ADD", graph.binary("MUL", wa, a, [pixels, channels]),
                        graph.binary("MUL", wb, b, [pixels, channels]), [pixels, channels])
  top = mix(read(0, 0), left, read(0, 1), right)
  bottom = mix(read(1, 0), left, read(1, 1), right)
  result = graph.binary("MUL", mix(bottom, lower, top, upper), mask, [pixels, channels])
  graph.op("RESHAPE", [result, graph.const([1, out_h, out_w, channels], "int32")], [1, out_h, out_w, channels],
           output=op.outputs[0])


def _gather_options(axis):
  options = schema.GatherOptionsT()
  options.axis = axis
  return options


def _adj_y():
  options = schema.BatchMatMulOptionsT()
  options.adjY = True
  return options


def _replace_landmarks_to_transform_matrix(graph, op):
  """Landmarks2TransformMatrix v2: the 4x4 matrix taking a crop of `output_width x output_height`
  to the box around the subset landmarks, rotated so that left -> right points along the target
  angle, scaled by scale_x / scale_y (see the module doc)."""
  options = flexbuffers.Loads(bytes(op.customOptions))
  landmarks = op.inputs[0]
  _, count, dimensions = graph.subgraph.tensors[landmarks].shape
  points = graph.reshape(landmarks, [count, dimensions])
  subset = list(options["subset_idxs"])
  scalar = [1, 1]

  def column(source, rows, index):
    return graph.slice(source, [0, index], [rows, 1])

  def landmark(index):
    return graph.op("GATHER", [points, graph.const([index], "int32")], [1, dimensions], options=_gather_options(0))
  left, right = landmark(options["left_rotation_idx"]), landmark(options["right_rotation_idx"])
  delta = graph.binary("SUB", right, left, [1, dimensions])
  angle = graph.op("ATAN2", [column(delta, 1, 1), column(delta, 1, 0)], scalar)
  rotation = graph.binary("SUB", graph.const([[options["target_rotation_radians"]]]), angle, scalar)
  cos, sin = graph.op("COS", [rotation], scalar), graph.op("SIN", [rotation], scalar)
  neg_sin = graph.op("NEG", [sin], scalar)
  chosen = graph.op("GATHER", [points, graph.const(subset, "int32")], [len(subset), dimensions],
                    options=_gather_options(0))
  xs, ys = column(chosen, len(subset), 0), column(chosen, len(subset), 1)

  def rotate(c, s_neg, s, x, y, rows):
    first = graph.binary("ADD", graph.binary("MUL", c, x, [rows, 1]), graph.binary("MUL", s_neg, y, [rows, 1]), [rows, 1])
    second = graph.binary("ADD", graph.binary("MUL", s, x, [rows, 1]), graph.binary("MUL", c, y, [rows, 1]), [rows, 1])
    return first, second
  rotated_x, rotated_y = rotate(cos, neg_sin, sin, xs, ys, len(subset))
  axis = graph.const([0], "int32")
  reducer = schema.ReducerOptionsT()
  reducer.keepDims = True

  def extremes(values):
    return (graph.op("REDUCE_MAX", [values, axis], scalar, options=reducer),
            graph.op("REDUCE_MIN", [values, axis], scalar, options=reducer))
  (max_x, min_x), (max_y, min_y) = extremes(rotated_x), extremes(rotated_y)
  crop_width, crop_height = graph.binary("SUB", max_x, min_x, scalar), graph.binary("SUB", max_y, min_y, scalar)
  half = graph.const([[2.0]])
  middle_x = graph.op("DIV", [graph.binary("ADD", min_x, max_x, scalar), half], scalar)
  middle_y = graph.op("DIV", [graph.binary("ADD", min_y, max_y, scalar), half], scalar)
  # Back by the inverse rotation: cos(-r) = cos r, sin(-r) = -sin r.
  center_x, center_y = rotate(cos, sin, neg_sin, middle_x, middle_y, 1)
  out_w, out_h = float(options["output_width"]), float(options["output_height"])
  scale_x = graph.op("DIV", [graph.binary("MUL", graph.const([[options["scale_x"]]]), crop_width, scalar),
                             graph.const([[out_w]])], scalar)
  scale_y = graph.op("DIV", [graph.binary("MUL", graph.const([[options["scale_y"]]]), crop_height, scalar),
                             graph.const([[out_h]])], scalar)
  # shift(center) . rotation(-r) . scale . shift(-out / 2)
  m00, m01 = graph.binary("MUL", cos, scale_x, scalar), graph.binary("MUL", sin, scale_y, scalar)
  m10, m11 = graph.binary("MUL", neg_sin, scale_x, scalar), graph.binary("MUL", cos, scale_y, scalar)
  shift_x, shift_y = graph.const([[-out_w / 2]]), graph.const([[-out_h / 2]])

  def translation(a, b, center):
    return graph.binary("ADD", graph.binary("ADD", graph.binary("MUL", a, shift_x, scalar),
                                            graph.binary("MUL", b, shift_y, scalar), scalar), center, scalar)
  m03, m13 = translation(m00, m01, center_x), translation(m10, m11, center_y)
  zero, one = graph.const([[0.0]]), graph.const([[1.0]])
  entries = [m00, m01, zero, m03, m10, m11, zero, m13, zero, zero, one, zero, zero, zero, zero, one]
  flat = graph.concat(entries, 1, [1, 16])
  graph.op("RESHAPE", [flat, graph.const([1, 4, 4], "int32")], [1, 4, 4], output=op.outputs[0])


def pool_options(padding, stride_width, stride_height, filter_width, filter_height, activation=0):
  """The custom options of MaxPoolingWithArgmax2D / MaxUnpooling2D: TFLite's pool parameter struct
  as raw bytes (six int32, then four int32 of computed padding that readers ignore)."""
  return struct.pack("<10i", padding, stride_width, stride_height, filter_width, filter_height, activation, 0, 0, 0, 0)


def _pool_parameters(op):
  return struct.unpack("<6i", bytes(op.customOptions)[:24])


def _same_padding(size, kernel, stride):
  """(before, after) of TFLite's SAME padding for one axis."""
  out = (size + stride - 1) // stride
  total = max((out - 1) * stride + kernel - size, 0)
  return total // 2, total - total // 2


def _replace_max_pool_argmax(graph, op):
  """MaxPoolingWithArgmax2D: MAX_POOL_2D for the values; for the indices, every window tap as a
  strided slice of the input (padded with -inf), stacked, ARG_MAX (first maximum), as float + 0.1."""
  padding, stride_w, stride_h, filter_w, filter_h, activation = _pool_parameters(op)
  source = op.inputs[0]
  values, indices = op.outputs
  batch, height, width, channels = graph.subgraph.tensors[source].shape
  options = schema.Pool2DOptionsT()
  options.padding = schema.Padding.SAME if padding == SAME else schema.Padding.VALID
  options.strideW, options.strideH, options.filterWidth, options.filterHeight = stride_w, stride_h, filter_w, filter_h
  options.fusedActivationFunction = activation
  out_shape = list(graph.subgraph.tensors[values].shape)
  graph.op("MAX_POOL_2D", [source], out_shape, options=options, output=values)
  _, out_h, out_w, _ = out_shape
  (top, bottom), (left, right) = ((_same_padding(height, filter_h, stride_h), _same_padding(width, filter_w, stride_w))
                                  if padding == SAME else ((0, 0), (0, 0)))
  padded = graph.op("PADV2", [source, graph.const([[0, 0], [top, bottom], [left, right], [0, 0]], "int32"),
                              graph.const(-np.inf)], [batch, height + top + bottom, width + left + right, channels])
  taps = []
  for ky in range(filter_h):
    for kx in range(filter_w):
      begin = [0, ky, kx, 0]
      end = [batch, ky + (out_h - 1) * stride_h + 1, kx + (out_w - 1) * stride_w + 1, channels]
      taps.append(graph.op("STRIDED_SLICE", [padded, graph.const(begin, "int32"), graph.const(end, "int32"),
                                             graph.const([1, stride_h, stride_w, 1], "int32")],
                           out_shape, options=schema.StridedSliceOptionsT()))
  pack = schema.PackOptionsT()
  pack.valuesCount, pack.axis = len(taps), 4
  stacked = graph.op("PACK", taps, out_shape + [len(taps)], options=pack)
  arg_max = schema.ArgMaxOptionsT()
  arg_max.outputType = schema.TensorType.INT32
  position = graph.op("ARG_MAX", [stacked, graph.const([4], "int32")], out_shape, "int32", options=arg_max)
  graph.binary("ADD", graph.op("CAST", [position], out_shape), graph.const([0.1]), out_shape, output=indices)


def _replace_max_unpooling(graph, op):
  """MaxUnpooling2D with the window equal to the stride (no overlap, no padding): tap k of each
  window gets the input where the index (truncated) is k, else 0; the taps are then laid out as
  the window's pixels."""
  padding, stride_w, stride_h, filter_w, filter_h, _ = _pool_parameters(op)
  if (stride_w, stride_h) != (filter_w, filter_h):
    raise NotGenerated("the MaxUnpooling2D rewrite covers only windows equal to the stride")
  source, indices = op.inputs
  batch, height, width, channels = graph.subgraph.tensors[source].shape
  shape = [batch, height, width, channels]
  index = graph.op("CAST", [indices], shape, "int32")
  taps = []
  for k in range(filter_h * filter_w):
    chosen = graph.op("CAST", [graph.op("EQUAL", [index, graph.const([k], "int32")], shape, "bool")], shape)
    taps.append(graph.binary("MUL", source, chosen, shape))
  pack = schema.PackOptionsT()
  pack.valuesCount, pack.axis = len(taps), 4
  stacked = graph.op("PACK", taps, shape + [len(taps)], options=pack)
  windows = graph.reshape(stacked, [batch, height, width, channels, filter_h, filter_w])
  laid = graph.op("TRANSPOSE", [windows, graph.const([0, 1, 4, 2, 5, 3], "int32")],
                  [batch, height, filter_h, width, filter_w, channels])
  graph.op("RESHAPE", [laid, graph.const([batch, height * filter_h, width * filter_w, channels], "int32")],
           [batch, height * filter_h, width * filter_w, channels], output=op.outputs[0])


REWRITES = {
    TRANSPOSE_CONV_BIAS: _replace_transpose_conv_bias,
    "TransformLandmarks": _replace_transform_landmarks,
    "TransformTensorBilinear": _replace_transform_tensor_bilinear,
    "Landmarks2TransformMatrix": _replace_landmarks_to_transform_matrix,
    "MaxPoolingWithArgmax2D": _replace_max_pool_argmax,
    "MaxUnpooling2D": _replace_max_unpooling,
}


def builtin_equivalent(model_bytes):
  """The model with every MediaPipe custom op this module knows replaced by builtin ops."""
  def change(model):
    for subgraph in model.subgraphs:
      rewritten = []
      for op in subgraph.operators:
        rewrite = REWRITES.get(flatbuf.operator_name(model.operatorCodes[op.opcodeIndex]))
        if rewrite is None:
          rewritten.append(op)
          continue
        graph = _GraphWriter(model, subgraph, _tensor_name(subgraph, op.outputs[0]))
        rewrite(graph, op)
        rewritten += graph.operators
      subgraph.operators = rewritten
    used = {op.opcodeIndex for subgraph in model.subgraphs for op in subgraph.operators}
    if len(used) != len(model.operatorCodes):
      surgery._drop_unused_opcodes(model, used)
  return surgery.edit(model_bytes, change)


def transpose_conv_bias_model(rng, input_shape, channels, kernel, strides, padding):
  """A model of one Convolution2DTransposeBias with seeded constant weights and bias."""
  batch, height, width, depth = input_shape
  weights = rng.uniform((channels, kernel[0], kernel[1], depth)).astype(np.float32)
  bias = rng.uniform((channels,)).astype(np.float32)
  _, _, out_h = transpose_conv_bias_axis(height, kernel[0], strides[1], padding == SAME)
  _, _, out_w = transpose_conv_bias_axis(width, kernel[1], strides[0], padding == SAME)
  model_bytes = surgery.direct_model(
      TRANSPOSE_CONV_BIAS, [("x", input_shape, "float32")], [0, weights, bias],
      [("y", (batch, out_h, out_w, channels), "float32")])

  def set_options(model):
    model.subgraphs[0].operators[0].customOptions = np.frombuffer(
        transpose_conv_bias_options(padding, *strides), dtype=np.uint8)
  return surgery.edit(model_bytes, set_options)


def transpose_conv_bias_case(variant, input_shape, channels, kernel, strides, padding):
  CASES.append(Case(
      name=f"mediapipe_transpose_conv_bias_{variant}", group="mediapipe", mode=FLOAT32,
      inputs=[Input(input_shape)], make=lambda r: None, expect=[TRANSPOSE_CONV_BIAS],
      build=lambda r: transpose_conv_bias_model(r, input_shape, channels, kernel, strides, padding),
      reference_model=builtin_equivalent,
      extra={"note": "MediaPipe custom op written with the schema object API; expected outputs from LiteRT on "
                     "the builtin rewrite TRANSPOSE_CONV (VALID) -> SLICE -> ADD bias"}))


# Selfie segmentation's decoder head: 2x2 kernel, stride 2, SAME on an even size (no cropping).
transpose_conv_bias_case("k2s2_same", (1, 8, 8, 16), 1, (2, 2), (2, 2), SAME)
# Overlapping taps, cropping on both axes (odd sizes), several output channels and images.
transpose_conv_bias_case("k3s2_same", (2, 5, 6, 4), 3, (3, 3), (2, 2), SAME)
transpose_conv_bias_case("k4x3_s2x1_same", (1, 4, 5, 6), 5, (4, 3), (1, 2), SAME)
transpose_conv_bias_case("k3s2_valid", (1, 5, 4, 3), 2, (3, 3), (2, 2), VALID)


# ---------------------------------------------------------------------------------------------
# Published MediaPipe models (Apache-2.0, Google MediaPipe; from the mediapipe 0.10.14 wheel)

PUBLISHED_MODELS = os.environ.get("MEDIAPIPE_MODELS", "/work/realmodels/mediapipe")
COMMITTED = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                         "TestModels", "mediapipe")


def published_model(file, case_name):
  """The published file from $MEDIAPIPE_MODELS, else the copy committed in TestModels."""
  for path in (os.path.join(PUBLISHED_MODELS, file), os.path.join(COMMITTED, f"{case_name}.tflite")):
    if os.path.exists(path):
      with open(path, "rb") as handle:
        return handle.read()
  raise NotGenerated(f"{file} not found: set MEDIAPIPE_MODELS to the directory of MediaPipe's models")


def with_outputs(model_bytes, tensor_names):
  """The model whose main subgraph outputs are the named tensors (unchanged when `tensor_names` is empty)."""
  if not tensor_names:
    return model_bytes

  def change(model):
    subgraph = model.subgraphs[0]
    names = [t.name.decode() if isinstance(t.name, bytes) else t.name for t in subgraph.tensors]
    subgraph.outputs = [names.index(name) for name in tensor_names]
  return surgery.edit(model_bytes, change)


def published_case(file, shape, lo, hi, expose=(), note=""):
  name = "mediapipe_" + file.removesuffix(".tflite")
  CASES.append(Case(
      name=name, group="mediapipe", mode=FLOAT32, kind="network", inputs=[Input(shape, lo, hi)],
      make=lambda r: None, expect=[],
      build=lambda r: with_outputs(published_model(file, name), expose),
      reference_model=builtin_equivalent,
      extra={"source": f"Google MediaPipe {file} (mediapipe 0.10.14 wheel), Apache-2.0", "note": note}))


published_case("face_detection_short_range.tflite", (1, 128, 128, 3), -1.0, 1.0,
               note="MediaPipe's BlazeFace short-range detector, unchanged; fp16 weights behind DEQUANTIZE")
published_case("selfie_segmentation.tflite", (1, 256, 256, 3), 0.0, 1.0, expose=["segment"],
               note="MediaPipe's selfie segmentation whose output is the Convolution2DTransposeBias result 'segment' "
                    "(the logits before the final sigmoid, which saturates on random inputs); expected outputs from LiteRT on "
                    "the builtin rewrite TRANSPOSE_CONV (VALID) -> ADD bias")


# ---------------------------------------------------------------------------------------------
# Face-mesh attention ops (face_landmark_with_attention), version 2


def _inputs_model(code, inputs, output, custom_options=None):
  """One version-2 MediaPipe op over model inputs `inputs` ((name, shape) pairs)."""
  return surgery.direct_model(code, [(name, shape, "float32") for name, shape in inputs],
                              list(range(len(inputs))), [(output[0], output[1], "float32")],
                              custom_options=custom_options, version=2)


def _rotation_matrix(angle, scale, shift):
  """A [1,4,4] matrix: rotation by `angle`, uniform `scale`, translation `shift` (rows 2, 3 identity)."""
  c, s = np.cos(angle) * scale, np.sin(angle) * scale
  return np.array([[[c, -s, 0, shift[0]], [s, c, 0, shift[1]], [0, 0, 1, 0], [0, 0, 0, 1]]], np.float32)


def attention_case(variant, code, inputs, output, custom_options=None):
  CASES.append(Case(
      name=f"mediapipe_{variant}", group="mediapipe", mode=FLOAT32, inputs=[spec for _, spec in inputs],
      make=lambda r: None, expect=[code],
      build=lambda r: _inputs_model(code, [(name, spec.shape) for name, spec in inputs], output, custom_options),
      reference_model=builtin_equivalent,
      extra={"note": f"MediaPipe custom op {code} (version 2) written with the schema object API; expected outputs "
                     "from LiteRT on its rewrite into builtin ops (Scripts/testmodels/mediapipe.py)"}))


attention_case("transform_landmarks_2d", "TransformLandmarks",
               [("x", Input((1, 40, 2), 0.0, 192.0)),
                ("x1", Input((1, 4, 4), values=_rotation_matrix(0.4, 0.08, (3.0, 5.0))))], ("y", (1, 40, 2)))
attention_case("transform_landmarks_3d", "TransformLandmarks",
               [("x", Input((1, 25, 3), -50.0, 150.0)),
                ("x1", Input((1, 4, 4), values=_rotation_matrix(-1.1, 1.7, (-20.0, 12.0))))], ("y", (1, 25, 3)))
# The crop covers part of the input and reaches past its edges (zeros there).
attention_case("transform_tensor_bilinear", "TransformTensorBilinear",
               [("x", Input((1, 12, 10, 5), -2.0, 2.0)),
                ("x1", Input((1, 4, 4), values=_rotation_matrix(0.35, 0.9, (-1.5, 2.2))))], ("y", (1, 9, 11, 5)),
               custom_options={"output_height": 9, "output_width": 11})
attention_case("landmarks_to_transform_matrix", "Landmarks2TransformMatrix",
               [("x", Input((1, 30, 3), 0.0, 192.0))], ("y", (1, 4, 4)),
               custom_options={"left_rotation_idx": 3, "right_rotation_idx": 17, "target_rotation_radians": 0.25,
                               "output_height": 16, "output_width": 12, "scale_x": 1.5, "scale_y": 1.25,
                               "subset_idxs": [3, 17, 5, 8, 21, 2, 29, 11, 14]})


# ---------------------------------------------------------------------------------------------
# Segmentation pooling pair: MaxPoolingWithArgmax2D and MaxUnpooling2D


def pooling_case(variant, code, inputs, outputs, options):
  def build(r):
    model_bytes = surgery.direct_model(code, [(name, spec.shape, "float32") for name, spec in inputs],
                                       list(range(len(inputs))), [(name, shape, "float32") for name, shape in outputs])

    def set_options(model):
      model.subgraphs[0].operators[0].customOptions = np.frombuffer(options, dtype=np.uint8)
    return surgery.edit(model_bytes, set_options)
  CASES.append(Case(
      name=f"mediapipe_{variant}", group="mediapipe", mode=FLOAT32, inputs=[spec for _, spec in inputs],
      make=lambda r: None, expect=[code], build=build, reference_model=builtin_equivalent,
      extra={"note": f"MediaPipe custom op {code} written with the schema object API; expected outputs from LiteRT "
                     "on its rewrite into builtin ops (Scripts/testmodels/mediapipe.py)"}))


def _window_indices(shape, taps):
  return lambda r: r.integers(shape, 0, taps - 1).astype(np.float32) + np.float32(0.1)


pooling_case("max_pooling_with_argmax_k2s2", "MaxPoolingWithArgmax2D", [("x", Input((2, 8, 6, 3)))],
             [("y", (2, 4, 3, 3)), ("y1", (2, 4, 3, 3))], pool_options(VALID, 2, 2, 2, 2))
pooling_case("max_pooling_with_argmax_k3s2_same_relu6", "MaxPoolingWithArgmax2D", [("x", Input((1, 7, 5, 4), -2.0, 8.0))],
             [("y", (1, 4, 3, 4)), ("y1", (1, 4, 3, 4))], pool_options(SAME, 2, 2, 3, 3, activation=3))
pooling_case("max_unpooling_k2s2", "MaxUnpooling2D",
             [("x", Input((1, 4, 3, 5))), ("x1", Input((1, 4, 3, 5), values=_window_indices((1, 4, 3, 5), 4)))],
             [("y", (1, 8, 6, 5))], pool_options(SAME, 2, 2, 2, 2))
