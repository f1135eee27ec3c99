"""More cases for the operators real models carry beyond the first kernel set: ADD_N, CUMSUM,
SPACE_TO_BATCH_ND, BATCH_TO_SPACE_ND, REVERSE_V2, ONE_HOT, RANGE, TOPK_V2,
LOCAL_RESPONSE_NORMALIZATION and SIGN, in the variants the first batch (single_ops.py) leaves
out: integer element types, other axes and ranks, ties, indices out of range, int8 models, and
RANGE fed by a SHAPE of a resizable input (how converted models compute positions). Then the
operators whose output size depends on values (WHERE, UNIQUE, NON_MAX_SUPPRESSION_V4/V5,
SEGMENT_SUM), EMBEDDING_LOOKUP (float and hybrid tables, made from GATHER by surgery) and
MATRIX_DIAG.

Names read `<op>_<mode>_<variant>` like single_ops; the files live in `extra/`.
"""

import numpy as np
import tensorflow as tf
from ai_edge_litert import schema_py_generated as schema

from . import flatbuf, surgery
from .core import FLOAT32, INT8, INT16X8, MODE_TAGS, Case, Input

CASES = []


def op(base, variant, inputs, make, expect, modes=(FLOAT32,), **options):
  """Registers one case per mode for a TF callable made by `make(rng)`."""
  for mode in modes:
    name = "_".join(part for part in (base, MODE_TAGS[mode], variant) if part)
    CASES.append(Case(name=name, group="extra", mode=mode, inputs=inputs, make=make, expect=expect, **options))


def ints(shape, lo, hi, dtype="int32"):
  return Input(shape, lo, hi, dtype)


# ADD_N
op("add_n", "int32_4_inputs", [ints((3, 5), -50, 50) for _ in range(4)], lambda r: (lambda *xs: tf.add_n(list(xs))),
   ["ADD_N"])
op("add_n", "2_inputs_4d", [Input((1, 4, 4, 6)), Input((1, 4, 4, 6))], lambda r: (lambda a, b: tf.add_n([a, b])),
   ["ADD_N"])

# CUMSUM
op("cumsum", "int32_axis_0", [ints((4, 3), -20, 20)], lambda r: (lambda x: tf.cumsum(x, axis=0)), ["CUMSUM"])
op("cumsum", "exclusive_4d_axis_2", [Input((2, 3, 7, 5))], lambda r: (lambda x: tf.cumsum(x, axis=2, exclusive=True)),
   ["CUMSUM"])
op("cumsum", "reverse_last_axis", [Input((2, 33))], lambda r: (lambda x: tf.cumsum(x, axis=-1, reverse=True)), ["CUMSUM"])

# SPACE_TO_BATCH_ND / BATCH_TO_SPACE_ND: rank 3 (one spatial axis), uneven blocks, int8 models.
op("space_to_batch_nd", "3d_block3_pad", [Input((2, 7, 3))],
   lambda r: (lambda x: tf.space_to_batch_nd(x, [3], [[1, 1]])), ["SPACE_TO_BATCH_ND"])
op("space_to_batch_nd", "block2x3", [Input((2, 4, 6, 3))],
   lambda r: (lambda x: tf.space_to_batch_nd(x, [2, 3], [[0, 0], [2, 1]])), ["SPACE_TO_BATCH_ND"], (FLOAT32, INT8))
op("batch_to_space_nd", "3d_block2_crop", [Input((4, 5, 2))],
   lambda r: (lambda x: tf.batch_to_space(x, [2], [[1, 2]])), ["BATCH_TO_SPACE_ND"])
op("batch_to_space_nd", "block3x2", [Input((6, 2, 3, 4))],
   lambda r: (lambda x: tf.batch_to_space(x, [3, 2], [[1, 1], [0, 1]])), ["BATCH_TO_SPACE_ND"], (FLOAT32, INT8))

# REVERSE_V2
op("reverse_v2", "int32_last_axis", [ints((3, 4, 5), -100, 100)], lambda r: (lambda x: tf.reverse(x, [-1])),
   ["REVERSE_V2"])
op("reverse_v2", "axis_0", [Input((3, 2, 4))], lambda r: (lambda x: tf.reverse(x, [0])), ["REVERSE_V2"],
   (FLOAT32, INT8, INT16X8))
op("reverse_v2", "axes_1_2", [Input((2, 3, 4, 5))], lambda r: (lambda x: tf.reverse(x, [1, 2])), ["REVERSE_V2"])

# ONE_HOT: indices outside [0, depth) give all-off rows.
op("one_hot", "axis0_out_of_range", [ints((2, 4), -2, 6)],
   lambda r: (lambda i: tf.one_hot(i, 5, 1.5, 0.25, axis=0)), ["ONE_HOT"])
op("one_hot", "int32_values_axis1", [ints((3, 2), 0, 3)],
   lambda r: (lambda i: tf.one_hot(i, 4, 7, -3, axis=1, dtype=tf.int32)), ["ONE_HOT"])
op("one_hot", "int64_indices", [ints((5,), 0, 3, "int64")], lambda r: (lambda i: tf.one_hot(i, 3)), ["ONE_HOT"])


# RANGE from the run-time shape of a resizable input: SHAPE, STRIDED_SLICE, RANGE, CAST, ADD.
def range_from_shape(r):
  def fn(x):
    positions = tf.cast(tf.range(tf.shape(x)[1]), tf.float32)
    return x + positions
  return fn


def float_range_from_shape(r):
  def fn(x):
    return x * tf.range(0.5, tf.cast(tf.shape(x)[0], tf.float32) + 0.5, 0.75)[: tf.shape(x)[0]][:, None]
  return fn


op("range", "int32_from_shape", [Input((2, 5), dynamic_dims=(1,))], range_from_shape, ["SHAPE", "RANGE"])
op("range", "float_from_shape", [Input((4, 3), dynamic_dims=(0,))], float_range_from_shape, ["SHAPE", "RANGE"])

# TOPK_V2
op("topk_v2", "int32_ties", [ints((3, 12), -3, 3)], lambda r: (lambda x: tf.math.top_k(x, 5)), ["TOPK_V2"])
op("topk_v2", "3d_full_sort", [Input((2, 3, 9))], lambda r: (lambda x: tf.math.top_k(x, 9)), ["TOPK_V2"])
op("topk_v2", "k1_long_row", [Input((1, 300))], lambda r: (lambda x: tf.math.top_k(x, 1)), ["TOPK_V2"])

# LOCAL_RESPONSE_NORMALIZATION: AlexNet / GoogLeNet v1 settings, and a radius wider than the depth.
op("local_response_normalization", "alexnet", [Input((1, 3, 3, 16), -4, 4)],
   lambda r: (lambda x: tf.nn.local_response_normalization(x, depth_radius=2, bias=2.0, alpha=1e-4, beta=0.75)),
   ["LOCAL_RESPONSE_NORMALIZATION"])
op("local_response_normalization", "wide_radius", [Input((2, 2, 2, 5))],
   lambda r: (lambda x: tf.nn.local_response_normalization(x, depth_radius=7, bias=0.5, alpha=0.3, beta=0.5)),
   ["LOCAL_RESPONSE_NORMALIZATION"])

# SIGN
op("sign", "int32", [ints((4, 6), -3, 3)], lambda r: tf.sign, ["SIGN"])
op("sign", "zeros_and_signed_zeros", [Input((2, 8), values=np.array([0.0, -0.0, 1e-30, -1e-30, 3.5, -2.0, 0.0, 7.0] * 2))],
   lambda r: tf.sign, ["SIGN"])


# Plain (unquantized) int8 / int16 arithmetic: NEG (written directly; the converter refuses integer
# negation), ABS, FLOOR_DIV and FLOOR_MOD with divisors of both signs.
def nonzero_divisors(shape, limit, dtype):
  return Input(shape, -limit, limit, dtype, values=lambda r: np.where(
      r.integers(shape, 0, 1) == 1, r.integers(shape, 1, limit), r.integers(shape, -limit, -1)).astype(dtype))


for dtype, limit in (("int8", 128), ("int16", 32768)):
  op("neg", f"{dtype}_direct", [ints((3, 5), -limit, limit - 1, dtype)], lambda r: tf.negative, ["NEG"],
     build=lambda r, d=dtype: surgery.direct_model("NEG", [("x", (3, 5), d)], [0], [("y", (3, 5), d)]),
     extra={"note": "written directly with the schema object API (the converter rejects integer NEG)"})
  op("floor_div", f"{dtype}_bcast", [ints((3, 2, 4), -limit, limit - 1, dtype), nonzero_divisors((3, 1, 4), 9, dtype)],
     lambda r: tf.math.floordiv, ["FLOOR_DIV"])
  op("floor_mod", f"{dtype}_bcast", [ints((3, 2, 4), -limit, limit - 1, dtype), nonzero_divisors((3, 1, 4), 9, dtype)],
     lambda r: tf.math.floormod, ["FLOOR_MOD"])
op("abs", "int16", [ints((3, 5), -32768, 32767, "int16")], lambda r: tf.abs, ["ABS"])


# ---------------------------------------------------------------------------------------------
# Value-sized outputs: WHERE, UNIQUE, NON_MAX_SUPPRESSION_V4/V5 (prepared while running)


def corner_boxes(count, flipped=False):
  """[count, 4] boxes (y1, x1, y2, x2) in clusters, so NMS has overlaps to suppress; `flipped`
  swaps the corners of every other box (the ops accept either order)."""
  def draw(rng):
    centers = rng.uniform((count // 3 + 1, 2), 0.2, 0.8)[rng.integers((count,), 0, count // 3)]
    centers = centers + rng.uniform((count, 2), -0.05, 0.05)
    sizes = rng.uniform((count, 2), 0.1, 0.3)
    boxes = np.concatenate([centers - sizes / 2, centers + sizes / 2], axis=1)
    if flipped:
      boxes[::2] = boxes[::2][:, [2, 3, 0, 1]]
    return boxes.astype(np.float32)
  return draw


op("where", "3d_greater", [Input((2, 3, 4))], lambda r: (lambda x: tf.where(x > 0.2)), ["WHERE"])
op("where", "float_condition", [Input((3, 5), -1, 1, step=0.5)], lambda r: (lambda x: tf.where(x)), ["WHERE"])
op("where", "int32_condition", [ints((4, 3), -1, 1)], lambda r: (lambda x: tf.where(x)), ["WHERE"])
op("where", "gather_nd_positive", [Input((3, 4))], lambda r: (lambda x: tf.gather_nd(x, tf.where(x > 0)) * 2.0),
   ["WHERE", "GATHER_ND"])

op("unique", "int32", [ints((12,), 0, 5)], lambda r: (lambda x: tf.unique(x)), ["UNIQUE"])
op("unique", "float_int64_indices", [Input((10,), -2, 2, step=1.0)],
   lambda r: (lambda x: tf.unique(x, out_idx=tf.int64)), ["UNIQUE"])

op("non_max_suppression_v4", "padded", [Input((20, 4), values=corner_boxes(20)), Input((20,), 0, 1)],
   lambda r: (lambda boxes, scores: tf.raw_ops.NonMaxSuppressionV4(
       boxes=boxes, scores=scores, max_output_size=15, iou_threshold=0.3, score_threshold=0.4,
       pad_to_max_output_size=True)), ["NON_MAX_SUPPRESSION_V4"])
op("non_max_suppression_v4", "flipped_corners", [Input((16, 4), values=corner_boxes(16, flipped=True)), Input((16,), 0, 1)],
   lambda r: (lambda boxes, scores: tf.raw_ops.NonMaxSuppressionV4(
       boxes=boxes, scores=scores, max_output_size=6, iou_threshold=0.5, score_threshold=0.0,
       pad_to_max_output_size=True)), ["NON_MAX_SUPPRESSION_V4"])
op("non_max_suppression_v5", "soft", [Input((20, 4), values=corner_boxes(20)), Input((20,), 0, 1)],
   lambda r: (lambda boxes, scores: tf.image.non_max_suppression_with_scores(
       boxes, scores, 10, iou_threshold=0.9, score_threshold=0.2, soft_nms_sigma=0.5)), ["NON_MAX_SUPPRESSION_V5"])
op("non_max_suppression_v5", "gather_boxes", [Input((24, 4), values=corner_boxes(24)), Input((24,), 0, 1)],
   lambda r: (lambda boxes, scores: tf.gather(boxes, tf.image.non_max_suppression_with_scores(
       boxes, scores, 8, iou_threshold=0.4, score_threshold=0.3)[0])), ["NON_MAX_SUPPRESSION_V5", "GATHER"])


# ---------------------------------------------------------------------------------------------
# EMBEDDING_LOOKUP (older converters' op for table lookups; today's emit GATHER), MATRIX_DIAG,
# SEGMENT_SUM


def gather_as_embedding_lookup(storage=None):
  """A surgery edit: every GATHER(table, ids) becomes EMBEDDING_LOOKUP(ids, table). With `storage`
  ("int8" or "uint8") the float table becomes symmetric per-row quantized bytes (a hybrid table,
  float output); uint8 tables hold the int8 bit patterns, as hybrid converters wrote them."""
  def change(model):
    subgraph = model.subgraphs[0]
    lookup = surgery._opcode_index(model, "EMBEDDING_LOOKUP")
    for op in subgraph.operators:
      if flatbuf.operator_name(model.operatorCodes[op.opcodeIndex]) != "GATHER":
        continue
      op.opcodeIndex = lookup
      op.inputs = [op.inputs[1], op.inputs[0]]
      op.builtinOptionsType, op.builtinOptions = 0, None
      if storage:
        table = subgraph.tensors[op.inputs[1]]
        buffer = model.buffers[table.buffer]
        values = np.frombuffer(np.asarray(buffer.data, dtype=np.uint8).tobytes(), np.float32).reshape(table.shape)
        scales = np.maximum(np.abs(values).reshape(values.shape[0], -1).max(axis=1), 1e-6) / 127
        quantized = np.round(values / scales.reshape((-1,) + (1,) * (values.ndim - 1))).astype(np.int8)
        buffer.data = np.frombuffer(quantized.tobytes(), dtype=np.uint8)
        table.type = schema.TensorType.INT8 if storage == "int8" else schema.TensorType.UINT8
        table.quantization = schema.QuantizationParametersT()
        table.quantization.scale = [float(s) for s in scales.astype(np.float32)]
        table.quantization.zeroPoint = [0] * len(scales)
        table.quantization.quantizedDimension = 0
    surgery._drop_unused_opcodes(model, {op.opcodeIndex for op in subgraph.operators})
  return lambda model_bytes: surgery.edit(model_bytes, change)


def table_lookup(rows, shape):
  def make(r):
    table = r.const((rows,) + shape)
    return lambda ids: tf.gather(table, ids)
  return make


op("embedding_lookup", "rows", [ints((5,), 0, 9)], table_lookup(10, (6,)), ["EMBEDDING_LOOKUP"],
   post=gather_as_embedding_lookup())
op("embedding_lookup", "3d_table", [ints((4,), 0, 6)], table_lookup(7, (3, 2)), ["EMBEDDING_LOOKUP"],
   post=gather_as_embedding_lookup())
op("embedding_lookup", "hybrid_int8", [ints((6,), 0, 11)], table_lookup(12, (8,)), ["EMBEDDING_LOOKUP"],
   post=gather_as_embedding_lookup("int8"))
op("embedding_lookup", "hybrid_uint8", [ints((6,), 0, 11)], table_lookup(12, (8,)), ["EMBEDDING_LOOKUP"],
   post=gather_as_embedding_lookup("uint8"))

op("matrix_diag", "", [Input((2, 4))], lambda r: tf.linalg.diag, ["MATRIX_DIAG"])
op("matrix_diag", "int32_3d", [ints((2, 2, 3), -9, 9)], lambda r: tf.linalg.diag, ["MATRIX_DIAG"])

op("segment_sum", "constant_ids", [Input((6, 3))],
   lambda r: (lambda x: tf.math.segment_sum(x, tf.constant([0, 0, 1, 2, 2, 2]))), ["SEGMENT_SUM"])
op("segment_sum", "run_time_ids", [Input((5, 2, 3)), Input((5,), dtype="int32", values=np.array([0, 1, 1, 2, 3]))],
   lambda r: (lambda x, ids: tf.math.segment_sum(x, ids)), ["SEGMENT_SUM"])
op("segment_sum", "int32", [ints((4, 3), -20, 20), Input((4,), dtype="int32", values=np.array([0, 0, 0, 1]))],
   lambda r: (lambda x, ids: tf.math.segment_sum(x, ids)), ["SEGMENT_SUM"])
