"""Cases for the remaining builtin operators real models carry: CONV_3D and CONV_3D_TRANSPOSE (video
and volumetric models), ATAN2, RANK, BROADCAST_ARGS, REVERSE_SEQUENCE, UNSORTED_SEGMENT_SUM / MAX /
MIN / PROD, DYNAMIC_UPDATE_SLICE (key/value caches), MATRIX_SET_DIAG, BUCKETIZE, SPARSE_TO_DENSE,
RIGHT_SHIFT, BITWISE_XOR, BITCAST, RFFT2D (with REAL, IMAG, COMPLEX_ABS), DILATE, FAKE_QUANT and
EMBEDDING_LOOKUP_SPARSE.

Every name starts with `more_` (regenerate with `--only '^more_'`); the files live in `more/`.
Operators the converter never emits are written directly with the schema object API.
"""

import numpy as np
import tensorflow as tf
from ai_edge_litert import schema_py_generated as schema

from . import surgery
from .core import FLOAT32, Case, Input

CASES = []


def op(name, inputs, make, expect, **options):
  """Registers one float32-mode case `more_<name>` for a TF callable made by `make(rng)`."""
  CASES.append(Case(name=f"more_{name}", group="more", mode=FLOAT32, inputs=inputs, make=make, expect=expect,
                    **options))


def direct(name, code, inputs, operands, outputs, options=None, declared=None):
  """Registers a case written directly: `inputs` are (name, shape, dtype) model inputs with their
  seeded values from `declared` (Input specs), `operands` as in surgery.direct_model."""
  CASES.append(Case(
      name=f"more_{name}", group="more", mode=FLOAT32, inputs=declared, make=lambda r: None, expect=[code],
      build=lambda r: surgery.direct_model_with_output_shapes(code, inputs, operands, outputs, options=options),
      extra={"note": "written directly with the schema object API"}))


def ints(shape, lo, hi, dtype="int32", **options):
  return Input(shape, lo, hi, dtype, **options)


def fixed(values, dtype):
  values = np.asarray(values, dtype=dtype)
  return Input(values.shape, dtype=dtype, values=values)


# ---------------------------------------------------------------------------------------------
# CONV_3D / CONV_3D_TRANSPOSE (NDHWC input, DHWIO filter)


def conv3d(filter_shape, strides, padding, dilations=(1, 1, 1), bias=True, activation=None):
  def make(r):
    filters = r.const(filter_shape, 0.5)
    offsets = r.const((filter_shape[-1],), 0.5)
    def fn(x):
      y = tf.nn.conv3d(x, filters, (1,) + tuple(strides) + (1,), padding, dilations=(1,) + tuple(dilations) + (1,))
      y = y + offsets if bias else y
      return activation(y) if activation else y
    return fn
  return make


op("conv3d_same_bias_relu", [Input((1, 5, 6, 7, 3))], conv3d((3, 3, 3, 3, 8), (1, 1, 1), "SAME", activation=tf.nn.relu),
   ["CONV_3D"])
op("conv3d_valid_strided", [Input((2, 7, 8, 6, 4))], conv3d((2, 3, 2, 4, 5), (2, 2, 1), "VALID"), ["CONV_3D"])
op("conv3d_same_stride2_no_bias", [Input((1, 6, 7, 5, 2))], conv3d((3, 3, 3, 2, 6), (2, 2, 2), "SAME", bias=False),
   ["CONV_3D"])
op("conv3d_dilated", [Input((1, 7, 7, 7, 3))], conv3d((2, 3, 2, 3, 4), (1, 1, 1), "SAME", dilations=(2, 2, 3),
                                                      activation=tf.nn.relu6), ["CONV_3D"])
op("conv3d_pointwise", [Input((1, 4, 5, 6, 16))], conv3d((1, 1, 1, 16, 24), (1, 1, 1), "VALID"), ["CONV_3D"])
op("conv3d_video_block", [Input((1, 8, 16, 16, 8))], conv3d((3, 3, 3, 8, 16), (1, 2, 2), "SAME", activation=tf.nn.relu),
   ["CONV_3D"])


def conv3d_transpose(filter_shape, output_shape, strides, padding, bias=True):
  def make(r):
    filters = r.const(filter_shape, 0.5)
    offsets = r.const((filter_shape[-2],), 0.5)
    def fn(x):
      y = tf.nn.conv3d_transpose(x, filters, output_shape, (1,) + tuple(strides) + (1,), padding)
      return y + offsets if bias else y
    return fn
  return make


op("conv3d_transpose_same_stride2", [Input((1, 3, 4, 5, 4))],
   conv3d_transpose((3, 3, 3, 6, 4), (1, 6, 8, 10, 6), (2, 2, 2), "SAME"), ["CONV_3D_TRANSPOSE"])
op("conv3d_transpose_valid", [Input((2, 3, 3, 2, 3))],
   conv3d_transpose((2, 3, 2, 5, 3), (2, 4, 5, 3, 5), (1, 1, 1), "VALID", bias=False), ["CONV_3D_TRANSPOSE"])
op("conv3d_transpose_odd_same", [Input((1, 3, 3, 3, 2))],
   conv3d_transpose((3, 2, 3, 3, 2), (1, 5, 6, 7, 3), (2, 2, 3), "SAME"), ["CONV_3D_TRANSPOSE"])



def conv3d_transpose_dilated(r):
  """CONV_3D_TRANSPOSE with dilation 2 (TensorFlow's CPU kernel has none, so written directly)."""
  options = schema.Conv3DOptionsT()
  options.padding = schema.Padding.VALID
  options.strideD = options.strideH = options.strideW = 1
  options.dilationDFactor = options.dilationHFactor = options.dilationWFactor = 2
  options.fusedActivationFunction = schema.ActivationFunctionType.RELU
  filters = r.normal((2, 2, 2, 2, 3), 0.5)
  return surgery.direct_model(
      "CONV_3D_TRANSPOSE", [("x", (1, 3, 3, 3, 3), "float32")],
      [np.array([1, 5, 5, 5, 2], np.int32), filters, 0, np.array([0.25, -0.5], np.float32)],
      [("y", (1, 5, 5, 5, 2), "float32")], options=options)


CASES.append(Case(name="more_conv3d_transpose_dilated_relu", group="more", mode=FLOAT32, inputs=[Input((1, 3, 3, 3, 3))],
                  make=lambda r: None, expect=["CONV_3D_TRANSPOSE"], build=conv3d_transpose_dilated,
                  extra={"note": "written directly with the schema object API"}))

# ---------------------------------------------------------------------------------------------
# ATAN2, RANK, BROADCAST_ARGS

op("atan2", [Input((3, 7), -2, 2), Input((3, 7), -2, 2)], lambda r: tf.math.atan2, ["ATAN2"])
op("atan2_signed_zeros", [fixed([0.0, -0.0, 0.0, -0.0, 1.0, -1.0, 0.0, 0.0], np.float32),
                          fixed([0.0, 0.0, -0.0, -0.0, 0.0, 0.0, 1.0, -1.0], np.float32)],
   lambda r: tf.math.atan2, ["ATAN2"])
op("atan2_4d", [Input((2, 3, 4, 5), -5, 5), Input((2, 3, 4, 5), -0.5, 0.5)], lambda r: tf.math.atan2, ["ATAN2"])

direct("rank_3d", "RANK", [("x", (2, 3, 4), "float32")], [0], [("y", (), "int32")], declared=[Input((2, 3, 4))])
direct("rank_5d_int64", "RANK", [("x", (1, 2, 1, 3, 2), "int64")], [0], [("y", (), "int32")],
       declared=[Input((1, 2, 1, 3, 2), -5, 5, "int64")])

op("broadcast_args", [fixed([2, 1, 3], np.int32), fixed([4, 1], np.int32)],
   lambda r: (lambda a, b: tf.raw_ops.BroadcastArgs(s0=a, s1=b)), ["BROADCAST_ARGS"])
op("broadcast_args_int64_scalar_like", [Input((0,), dtype="int64", values=np.zeros(0, np.int64)),
                                        fixed([5, 1, 7], np.int64)],
   lambda r: (lambda a, b: tf.raw_ops.BroadcastArgs(s0=a, s1=b)), ["BROADCAST_ARGS"])
op("broadcast_args_ones", [fixed([1, 6, 1, 1], np.int32), fixed([6, 1, 5], np.int32)],
   lambda r: (lambda a, b: tf.raw_ops.BroadcastArgs(s0=a, s1=b)), ["BROADCAST_ARGS"])

# ---------------------------------------------------------------------------------------------
# REVERSE_SEQUENCE

op("reverse_sequence_seq1_batch0", [Input((4, 6, 3)), fixed([1, 6, 0, 3], np.int32)],
   lambda r: (lambda x, lengths: tf.reverse_sequence(x, lengths, seq_axis=1, batch_axis=0)), ["REVERSE_SEQUENCE"])
op("reverse_sequence_seq0_batch1_int64", [ints((5, 3, 2), -50, 50), fixed([5, 2, 4], np.int64)],
   lambda r: (lambda x, lengths: tf.reverse_sequence(x, lengths, seq_axis=0, batch_axis=1)), ["REVERSE_SEQUENCE"])
op("reverse_sequence_seq2_batch1", [Input((2, 3, 5, 2)), fixed([2, 5, 1], np.int32)],
   lambda r: (lambda x, lengths: tf.reverse_sequence(x, lengths, seq_axis=2, batch_axis=1)), ["REVERSE_SEQUENCE"])

# ---------------------------------------------------------------------------------------------
# UNSORTED_SEGMENT_SUM / MAX / MIN / PROD: ids in any order, negative or too large ids dropped,
# empty segments.

SEGMENT_OPS = {
    "sum": (tf.math.unsorted_segment_sum, "UNSORTED_SEGMENT_SUM"),
    "max": (tf.math.unsorted_segment_max, "UNSORTED_SEGMENT_MAX"),
    "min": (tf.math.unsorted_segment_min, "UNSORTED_SEGMENT_MIN"),
    "prod": (tf.math.unsorted_segment_prod, "UNSORTED_SEGMENT_PROD"),
}

for kind, (function, code) in SEGMENT_OPS.items():
  op(f"unsorted_segment_{kind}", [Input((7, 3)), fixed([2, 0, 2, 4, 0, 1, 2], np.int32)],
     lambda r, f=function: (lambda x, ids: f(x, ids, 5)), [code])
  op(f"unsorted_segment_{kind}_int32_2d_ids", [ints((2, 3, 4), -9, 9), fixed([[1, 0, 3], [3, 3, 1]], np.int32)],
     lambda r, f=function: (lambda x, ids: f(x, ids, 4)), [code])
  op(f"unsorted_segment_{kind}_dropped_ids", [Input((6, 2)), fixed([-1, 0, 2, 1, -2, 2], np.int32)],
     lambda r, f=function: (lambda x, ids: f(x, ids, 3)), [code])

# ---------------------------------------------------------------------------------------------
# DYNAMIC_UPDATE_SLICE (written directly; start indices are clamped so the update fits)


def dynamic_update_slice(name, operand, update, start, dtype="float32", index_type=np.int32):
  declared = [Input(operand, dtype=dtype, lo=-9, hi=9), Input(update, dtype=dtype, lo=-9, hi=9),
              fixed(start, index_type)]
  direct(name, "DYNAMIC_UPDATE_SLICE",
         [("x", operand, dtype), ("x1", update, dtype), ("x2", (len(operand),), np.dtype(index_type).name)],
         [0, 1, 2], [("y", operand, dtype)], declared=declared)


dynamic_update_slice("dynamic_update_slice_kv_cache", (1, 8, 2, 4), (1, 1, 2, 4), [0, 5, 0, 0])
dynamic_update_slice("dynamic_update_slice_clamped", (4, 5), (2, 3), [3, -2])
dynamic_update_slice("dynamic_update_slice_int32_int64_indices", (3, 4, 2), (2, 2, 2), [1, 1, 0], "int32", np.int64)
dynamic_update_slice("dynamic_update_slice_past_end", (6,), (4,), [5])

# ---------------------------------------------------------------------------------------------
# MATRIX_SET_DIAG, BUCKETIZE, SPARSE_TO_DENSE

op("matrix_set_diag_wide", [Input((2, 3, 5)), Input((2, 3))], lambda r: tf.linalg.set_diag, ["MATRIX_SET_DIAG"])
op("matrix_set_diag_tall_int32", [ints((4, 2), -9, 9), ints((2,), 50, 60)], lambda r: tf.linalg.set_diag,
   ["MATRIX_SET_DIAG"])

op("bucketize", [Input((3, 8), -3, 3)],
   lambda r: (lambda x: tf.raw_ops.Bucketize(input=x, boundaries=[-2.0, -0.5, 0.0, 0.25, 1.5])), ["BUCKETIZE"])
op("bucketize_int32_ties", [ints((12,), -3, 8)],
   lambda r: (lambda x: tf.raw_ops.Bucketize(input=x, boundaries=[-1.0, 0.0, 2.0, 5.0])), ["BUCKETIZE"])
op("bucketize_no_boundaries", [Input((4,))],
   lambda r: (lambda x: tf.raw_ops.Bucketize(input=x, boundaries=[])), ["BUCKETIZE"])

op("sparse_to_dense_2d", [fixed([[0, 1], [1, 3], [2, 0]], np.int32), Input((3,))],
   lambda r: (lambda indices, values: tf.raw_ops.SparseToDense(
       sparse_indices=indices, output_shape=tf.constant([3, 4]), sparse_values=values, default_value=-1.5)),
   ["SPARSE_TO_DENSE"])
op("sparse_to_dense_1d_scalar_value_int64", [fixed([4, 1, 6], np.int64)],
   lambda r: (lambda indices: tf.raw_ops.SparseToDense(
       sparse_indices=indices, output_shape=tf.constant([8], tf.int64), sparse_values=tf.constant(7),
       default_value=tf.constant(2), validate_indices=False)), ["SPARSE_TO_DENSE"])
op("sparse_to_dense_3d_int32_values", [fixed([[0, 0, 1], [1, 2, 0], [1, 1, 1], [0, 2, 2]], np.int32),
                                       ints((4,), -100, 100)],
   lambda r: (lambda indices, values: tf.raw_ops.SparseToDense(
       sparse_indices=indices, output_shape=tf.constant([2, 3, 3]), sparse_values=values, default_value=0)),
   ["SPARSE_TO_DENSE"])

# ---------------------------------------------------------------------------------------------
# RIGHT_SHIFT, BITWISE_XOR, BITCAST

for dtype, bits in (("int8", 8), ("uint8", 8), ("int16", 16), ("uint32", 32), ("int32", 32)):
  info = np.iinfo(dtype)
  op(f"right_shift_{dtype}_bcast", [ints((3, 1, 4), info.min, info.max, dtype), ints((5, 1), 0, bits - 1, dtype)],
     lambda r: tf.bitwise.right_shift, ["RIGHT_SHIFT"])
  op(f"bitwise_xor_{dtype}_bcast", [ints((2, 3, 4), info.min, info.max, dtype), ints((3, 1), info.min, info.max, dtype)],
     lambda r: tf.bitwise.bitwise_xor, ["BITWISE_XOR"])
op("bitwise_xor_int32_same_shape", [ints((5, 6), -2**31, 2**31 - 1), ints((5, 6), -2**31, 2**31 - 1)],
   lambda r: tf.bitwise.bitwise_xor, ["BITWISE_XOR"])

op("bitcast_float_to_int32", [Input((3, 4), -100, 100)], lambda r: (lambda x: tf.bitcast(x, tf.int32)), ["BITCAST"])
op("bitcast_int32_to_uint8", [ints((2, 3), -2**31, 2**31 - 1)], lambda r: (lambda x: tf.bitcast(x, tf.uint8)),
   ["BITCAST"])
op("bitcast_int16_to_float", [ints((3, 2), 0, 2**15 - 1, "int16")], lambda r: (lambda x: tf.bitcast(x, tf.float32) * 1.0),
   ["BITCAST"])

# ---------------------------------------------------------------------------------------------
# RFFT2D (its complex output read through REAL and IMAG)


def rfft2d(fft_length=None):
  def make(r):
    def fn(x):
      spectrum = tf.signal.rfft2d(x, fft_length)
      return tf.math.real(spectrum), tf.math.imag(spectrum)
    return fn
  return make


op("rfft2d_8x8", [Input((8, 8))], rfft2d(), ["RFFT2D", "REAL", "IMAG"])
op("rfft2d_batched_4x16", [Input((2, 3, 4, 16))], rfft2d(), ["RFFT2D", "REAL", "IMAG"])
op("rfft2d_magnitude", [Input((4, 8))], lambda r: (lambda x: tf.abs(tf.signal.rfft2d(x))), ["RFFT2D", "COMPLEX_ABS"])
op("rfft2d_cropped_and_padded", [Input((2, 6, 5))], rfft2d([4, 8]), ["RFFT2D", "REAL", "IMAG"])

# ---------------------------------------------------------------------------------------------
# DILATE, FAKE_QUANT, EMBEDDING_LOOKUP_SPARSE (written directly)


def dilate(name, shape, dilations, padding, dtype="float32"):
  declared = [Input(shape, dtype=dtype, lo=-9, hi=9)]
  direct(name, "DILATE", [("x", shape, dtype)],
         [0, np.asarray(dilations, np.int32), np.asarray(padding, dtype)], [("y", shape, dtype)], declared=declared)


dilate("dilate_2d", (3, 4), [2, 3], -1.0)
dilate("dilate_4d_int32", (1, 3, 2, 2), [1, 3, 2, 1], 7, "int32")
dilate("dilate_ones", (2, 5), [1, 1], 0.0)


def fake_quant(name, shape, low, high, bits, narrow):
  options = schema.FakeQuantOptionsT()
  options.min, options.max, options.numBits, options.narrowRange = low, high, bits, narrow
  declared = [Input(shape, lo=low * 1.5 - 0.5, hi=high * 1.5 + 0.5)]
  direct(name, "FAKE_QUANT", [("x", shape, "float32")], [0], [("y", shape, "float32")], options=options,
         declared=declared)


fake_quant("fake_quant_8bit", (4, 16), -1.0, 2.0, 8, False)
fake_quant("fake_quant_4bit", (3, 10), -0.7, 0.9, 4, False)
fake_quant("fake_quant_positive_range", (20,), 0.3, 6.0, 8, False)


def embedding_lookup_sparse(name, ids, indices, dense_shape, table_shape, combiner):
  options = schema.EmbeddingLookupSparseOptionsT()
  options.combiner = combiner
  declared = [fixed(ids, np.int32), fixed(indices, np.int32), Input((len(ids),), 0.1, 2.0), Input(table_shape)]
  direct(name, "EMBEDDING_LOOKUP_SPARSE",
         [("x", (len(ids),), "int32"), ("x1", np.shape(indices), "int32"), ("x2", (len(ids),), "float32"),
          ("x3", table_shape, "float32")],
         [0, 1, np.asarray(dense_shape, np.int32), 2, 3], [("y", (1,), "float32")], options=options,
         declared=declared)


embedding_lookup_sparse("embedding_lookup_sparse_sum", [1, 3, 0, 4, 2], [[0, 0], [0, 1], [1, 0], [2, 0], [2, 2]],
                        [3, 3], (5, 4), schema.CombinerType.SUM)
embedding_lookup_sparse("embedding_lookup_sparse_mean_3d", [2, 0, 1, 2], [[0, 0, 0], [0, 0, 1], [1, 1, 0], [1, 0, 0]],
                        [2, 2, 2], (3, 2, 3), schema.CombinerType.MEAN)
embedding_lookup_sparse("embedding_lookup_sparse_sqrtn_empty_row", [0, 1, 2], [[0, 0], [0, 1], [2, 0]],
                        [3, 2], (3, 5), schema.CombinerType.SQRTN)


# ---------------------------------------------------------------------------------------------
# Empty tensors


op("empty_unsorted_segment_sum", [Input((0, 3)), Input((0,), dtype="int32", values=np.zeros(0, np.int32))],
   lambda r: (lambda x, ids: tf.math.unsorted_segment_sum(x, ids, 2)), ["UNSORTED_SEGMENT_SUM"])
# Static empty shapes (the converter folds empty operations away, and a resize to an empty shape is
# refused by the runtime's API), so written directly.
direct("empty_bitwise_xor", "BITWISE_XOR", [("x", (0, 4), "int32"), ("x1", (1, 4), "int32")], [0, 1],
       [("y", (0, 4), "int32")], declared=[ints((0, 4), -9, 9), ints((1, 4), -9, 9)])


def bucketize_options(boundaries):
  options = schema.BucketizeOptionsT()
  options.boundaries = boundaries
  return options


direct("empty_bucketize", "BUCKETIZE", [("x", (2, 0), "float32")], [0], [("y", (2, 0), "int32")],
       options=bucketize_options([0.0, 1.0]), declared=[Input((2, 0))])


def conv3d_options():
  options = schema.Conv3DOptionsT()
  options.padding = schema.Padding.SAME
  options.strideD = options.strideH = options.strideW = 1
  options.dilationDFactor = options.dilationHFactor = options.dilationWFactor = 1
  return options


direct("empty_conv3d_batch", "CONV_3D", [("x", (0, 3, 3, 3, 2), "float32")],
       [0, np.full((2, 2, 2, 2, 3), 0.5, np.float32), np.arange(3, dtype=np.float32)],
       [("y", (0, 3, 3, 3, 3), "float32")], options=conv3d_options(), declared=[Input((0, 3, 3, 3, 2))])
dynamic_update_slice("empty_dynamic_update_slice", (3, 4), (3, 0), [1, 2])
