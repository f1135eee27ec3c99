"""Quantized single-op models beyond the per-mode variants registered in single_ops.

* float interfaces: QUANTIZE at the inputs and DEQUANTIZE at the outputs of integer models;
* per-tensor (not per-channel) weights;
* zero points at the ends of the type's range and very small / very large scales;
* saturation: calibration data whose results span a much smaller range than the test inputs
  produce, so outputs clamp at the type's limits;
* 16-bit activations with 64-bit bias.
"""

import dataclasses
import math

import numpy as np
import tensorflow as tf

from . import single_ops, surgery
from .core import HYBRID, INT8, INT16X8, UINT8, UINT8_LEGACY, Case, Input, input_name
from .single_ops import conv2d, dense, depthwise, image

CASES = []


def quant(name, mode, inputs, make, expect, **options):
  CASES.append(Case(name=name, group="quant", mode=mode, inputs=inputs, make=make, expect=expect, **options))


def float_interface(converter):
  converter.inference_input_type = tf.float32
  converter.inference_output_type = tf.float32


def per_tensor_weights(converter):
  converter._experimental_disable_per_channel = True


# Float in / float out: the converter adds QUANTIZE and DEQUANTIZE around the integer graph.
quant("conv2d_int8_float_io", INT8, [image(6, 6, 3)], conv2d(3, 3, 3, 4, act="relu6"),
      ["QUANTIZE", "CONV_2D", "DEQUANTIZE"], tweak=float_interface)
quant("fully_connected_int8_float_io", INT8, [Input((2, 16))], dense(16, 8), ["QUANTIZE", "FULLY_CONNECTED", "DEQUANTIZE"],
      tweak=float_interface)
quant("add_int16x8_float_io", INT16X8, [Input((2, 8), -3, 3), Input((2, 8), -1, 1)], lambda r: tf.add,
      ["QUANTIZE", "ADD", "DEQUANTIZE"], tweak=float_interface)
quant("conv2d_int16x8_float_io", INT16X8, [image(6, 6, 3)], conv2d(3, 3, 3, 4), ["QUANTIZE", "CONV_2D", "DEQUANTIZE"],
      tweak=float_interface)
quant("quantize_int8_float_io_identity_relu", INT8, [Input((3, 7), -5, 5)], lambda r: tf.nn.relu,
      ["QUANTIZE", "DEQUANTIZE"], tweak=float_interface)


# Per-tensor weight quantization (one scale for the whole filter).
for mode in (INT8, UINT8):
  quant(f"conv2d_{mode}_per_tensor_s1_same", mode, [image(6, 6, 3)], conv2d(3, 3, 3, 4), ["CONV_2D"],
        tweak=per_tensor_weights)
  quant(f"depthwise_conv2d_{mode}_per_tensor_m2", mode, [image(6, 6, 3)], depthwise(3, 3, multiplier=2),
        ["DEPTHWISE_CONV_2D"], tweak=per_tensor_weights)
quant("fully_connected_int8_per_tensor", INT8, [Input((2, 16))], dense(16, 8), ["FULLY_CONNECTED"], tweak=per_tensor_weights)
quant("conv2d_int16x8_per_tensor", INT16X8, [image(6, 6, 3)], conv2d(3, 3, 3, 4), ["CONV_2D"], tweak=per_tensor_weights)


# Zero points at the extremes and unusual scales (the input range decides scale and zero point).
RANGES = {
    "zp_min_positive_input": (0.0, 6.0),       # int8 zero point -128
    "zp_max_negative_input": (-4.0, 0.0),      # int8 zero point 127
    "zp_near_min": (-0.05, 10.0),
    "tiny_scale": (-0.01, 0.01),
    "large_scale": (-300.0, 300.0),
}
for variant, (lo, hi) in RANGES.items():
  for mode in (INT8, UINT8):
    quant(f"conv2d_{mode}_{variant}", mode, [image(5, 5, 3, lo=lo, hi=hi)], conv2d(3, 3, 3, 4), ["CONV_2D"])
  quant(f"add_int8_{variant}", INT8, [Input((2, 3, 4), lo, hi), Input((2, 3, 4), -1, 1)], lambda r: tf.add, ["ADD"])
  quant(f"mul_int8_{variant}", INT8, [Input((2, 3, 4), lo, hi), Input((2, 3, 4), -1, 1)], lambda r: tf.multiply, ["MUL"])
  quant(f"fully_connected_int8_{variant}", INT8, [Input((2, 12), lo, hi)], dense(12, 6), ["FULLY_CONNECTED"])
  quant(f"average_pool_2d_int8_{variant}", INT8, [image(6, 6, 2, lo=lo, hi=hi)],
        single_ops.pool("avg", 3, 2, "SAME"), ["AVERAGE_POOL_2D"])


def _correlated_calibration(shapes, correlation):
  """Calibration samples where input k+1 = correlation * input k: sums or products stay small,
  so the calibrated output range is narrow and independent test inputs saturate it."""
  def representative(r):
    def samples():
      for i in range(64):
        first = r.uniform(shapes[0], -1, 1)
        if i == 0:
          first.reshape(-1)[:2] = (-1, 1)
        yield [first] + [np.broadcast_to(first * correlation, shape).astype(np.float32) for shape in shapes[1:]]
    return samples
  return representative


for mode in (INT8, UINT8, INT16X8):
  quant(f"add_{mode}_saturating", mode, [Input((3, 8)), Input((3, 8))], lambda r: tf.add, ["ADD"],
        representative=_correlated_calibration([(3, 8), (3, 8)], -0.9), widen=1.0)
  quant(f"sub_{mode}_saturating", mode, [Input((3, 8)), Input((3, 8))], lambda r: tf.subtract, ["SUB"],
        representative=_correlated_calibration([(3, 8), (3, 8)], 0.9), widen=1.0)
  quant(f"mul_{mode}_saturating", mode, [Input((3, 8)), Input((3, 8))], lambda r: tf.multiply, ["MUL"],
        representative=_correlated_calibration([(3, 8), (3, 8)], 0.1), widen=1.0)
quant("conv2d_int8_saturating_relu6", INT8, [image(6, 6, 3, lo=-4, hi=4)], conv2d(3, 3, 3, 8, act="relu6"), ["CONV_2D"],
      widen=2.0)
quant("fully_connected_int8_saturating", INT8, [Input((2, 16), -3, 3)], dense(16, 8), ["FULLY_CONNECTED"], widen=2.0)


# 16-bit activations: the bias of CONV_2D / FULLY_CONNECTED is 64-bit by default; also force 32-bit.
def bias_int32(converter):
  converter._experimental_full_integer_quantization_bias_type = tf.int32


quant("conv2d_int16x8_bias_int32", INT16X8, [image(6, 6, 3)], conv2d(3, 3, 3, 4), ["CONV_2D"], tweak=bias_int32)
quant("fully_connected_int16x8_bias_int32", INT16X8, [Input((2, 16))], dense(16, 8), ["FULLY_CONNECTED"],
      tweak=bias_int32)


# uint8 kernels (TF1 FakeQuant conversion) for the ops that old quantized models contain.
LEGACY_UINT8 = [
    "conv2d_f32_s1_same", "conv2d_f32_s2_same_relu6", "conv2d_f32_s1_valid_relu", "conv2d_f32_dil2_same",
    "conv2d_f32_1x1", "conv2d_f32_odd_7x5_k3x2_s2x1_same",
    "depthwise_conv2d_f32_m1_s1_same", "depthwise_conv2d_f32_m1_s2_same_relu6", "depthwise_conv2d_f32_m2_s1_valid",
    "depthwise_conv2d_f32_m1_dil2_same",
    "fully_connected_f32_2d", "fully_connected_f32_2d_relu",
    "transpose_conv_f32_s2_same_nobias",
    "average_pool_2d_f32_k2_s2_valid", "average_pool_2d_f32_global_7x7", "max_pool_2d_f32_k3_s2_same",
    "softmax_f32_2d", "log_softmax_f32_2d", "logistic_f32", "tanh_f32", "relu_f32", "relu6_f32",
    "add_f32_same", "add_f32_bcast_4d", "add_f32_relu", "sub_f32_same", "mul_f32_same", "mul_f32_bcast_4d",
    "maximum_f32_same", "minimum_f32_same",
    "concatenation_f32_axis_neg1", "concatenation_f32_axis_1_3_inputs",
    "reshape_f32_3d_to_2d", "transpose_f32_4d_nhwc_to_nchw", "pad_f32_4d", "mean_f32_axes_1_2_keep",
    "resize_bilinear_f32_up2x", "resize_bilinear_f32_up2x_half_pixel", "resize_nearest_neighbor_f32_up2x",
    "l2_normalization_f32_axis_last", "strided_slice_f32_strides_2", "gather_f32_axis_0", "split_f32_3_axis_neg1",
    "pack_f32_axis_0", "depth_to_space_f32_block2", "space_to_depth_f32_block2", "arg_max_f32_axis_neg1_int32",
    "squared_difference_f32_same", "leaky_relu_f32_alpha0_2", "hard_swish_f32", "reduce_max_f32_axes_1_2_keep",
    "sum_f32_axes_1_2_keep",
]
_float_cases = {case.name: case for case in single_ops.CASES}
for float_name in LEGACY_UINT8:
  source = _float_cases[float_name]
  CASES.append(dataclasses.replace(source, name=float_name.replace("_f32", "_uint8_legacy", 1), group="quant",
                                   mode=UINT8_LEGACY, post=None, extra={}))


def _legacy_network_stages(r):
  """A MobileNetV1-style uint8 classifier as quantization-aware training exported it."""
  def conv(kh, cin, cout, stride, act=True):
    weights, biases = r.const((kh, kh, cin, cout), 1 / math.sqrt(kh * kh * cin)), r.const((cout,), 0.2)
    return lambda x: (tf.nn.relu6 if act else tf.identity)(tf.nn.conv2d(x, weights, stride, "SAME") + biases)
  def dw(cin, stride):
    weights, biases = r.const((3, 3, cin, 1), 1 / 3), r.const((cin,), 0.2)
    return lambda x: tf.nn.relu6(tf.nn.depthwise_conv2d(x, weights, [1, stride, stride, 1], "SAME") + biases)
  return [
      conv(3, 3, 8, 2), dw(8, 1), conv(1, 8, 16, 1), dw(16, 2), conv(1, 16, 24, 1), dw(24, 2), conv(1, 24, 32, 1),
      lambda x: tf.nn.avg_pool2d(x, 4, 1, "VALID"),
      conv(1, 32, 10, 1, act=False),
      lambda x: tf.reshape(x, [1, 10]),
      tf.nn.softmax,
  ]


CASES.append(Case(name="mobilenet_v1_mini_uint8_legacy", group="networks", mode=UINT8_LEGACY, kind="network",
                  inputs=[Input((1, 32, 32, 3), -1, 1)], make=_legacy_network_stages,
                  expect=["CONV_2D", "DEPTHWISE_CONV_2D", "AVERAGE_POOL_2D", "RESHAPE", "SOFTMAX"],
                  extra={"note": "random weights; uint8 kernels as TF1 quantization-aware training exported them"}))


# int4 weights (TensorType INT4, two values per byte): a FakeQuant with num_bits=4 on the weights
# and the converter's low-bit flag.
def int4_dense(cin, cout):
  def make(r):
    weights = r.const((cin, cout), 0.2)
    limit = float(np.max(np.abs(weights.numpy())))
    def fn(x):
      quantized = tf.quantization.fake_quant_with_min_max_vars(weights, -limit, limit, num_bits=4, narrow_range=True)
      return tf.matmul(x, quantized) + 0.25
    return fn
  return make


def low_bit(converter):
  converter._experimental_low_bit_qat = True


CASES.append(Case(name="fully_connected_hybrid_int4_weights", group="hybrid", mode=HYBRID, inputs=[Input((2, 64))],
                  make=int4_dense(64, 32), expect=["FULLY_CONNECTED"], tweak=low_bit))
quant("fully_connected_int8_int4_weights", INT8, [Input((2, 64))], int4_dense(64, 32), ["FULLY_CONNECTED"], tweak=low_bit)


# ---------------------------------------------------------------------------------------------
# The less common quantized kernels (ABS, EXP, LOG, RSQRT, SQRT, ELU, DIV, L2_NORMALIZATION, the
# comparisons, SELECT, REDUCE_PROD): every raw input value ("sweep" inputs), extreme zero points,
# saturating outputs, int16 kernels the converter cannot quantize to 16 bits (written directly
# with symmetric scales from the declared ranges) and uint8 kernels.

def direct_int16(code, inputs, output_range=None, options=None):
  """`build` of a one-operator int16 model written directly: symmetric scales from the declared
  input ranges and `output_range` (a BOOL output when None)."""
  def symmetric(lo, hi):
    return (max(abs(lo), abs(hi)) / 32767, 0)
  tensors = [(input_name(i), spec.shape, "int16", symmetric(spec.lo, spec.hi)) for i, spec in enumerate(inputs)]
  result = ("y", [1], "bool") if output_range is None else ("y", [1], "int16", symmetric(*output_range))
  return lambda r: surgery.direct_model_with_output_shapes(code, tensors, list(range(len(inputs))), [result],
                                                           options=options)


DIRECT_INT16_NOTE = {"edited": "written directly with symmetric int16 scales (the converter does not quantize "
                               "this operator to 16 bits)"}

UNARY_SWEEPS = [
    # (op, tf function, input range, modes)
    ("ABS", tf.abs, (-3, 3), (INT8, INT16X8)),
    ("EXP", tf.exp, (-4, 2), (INT8, INT16X8)),
    ("LOG", tf.math.log, (0.01, 10), (INT8, INT16X8)),
    ("RSQRT", tf.math.rsqrt, (0.01, 10), (INT8, INT16X8)),
    ("SQRT", tf.sqrt, (0, 10), (INT8,)),
]
for opname, function, (lo, hi), modes in UNARY_SWEEPS:
  for mode in modes:
    count = 256 if mode == INT8 else 4096
    quant(f"{opname.lower()}_{mode}_sweep", mode, [Input((1, count), lo, hi, sweep="all")],
          lambda r, f=function: f, [opname])
quant("sqrt_int16x8_sweep", INT16X8, [Input((1, 4096), 0, 10, sweep="all")], lambda r: tf.sqrt, ["SQRT"],
      build=direct_int16("SQRT", [Input((1, 4096), 0, 10)], (0, math.sqrt(10))), extra=DIRECT_INT16_NOTE)
quant("abs_int8_zp_max_negative_input", INT8, [Input((2, 3, 8), -4, 0)], lambda r: tf.abs, ["ABS"])
quant("exp_int8_zp_max_negative_input", INT8, [Input((2, 3, 8), -4, 0)], lambda r: tf.exp, ["EXP"])
quant("exp_int8_saturating", INT8, [Input((2, 3, 8), -2, 2)], lambda r: tf.exp, ["EXP"], widen=2.0)
quant("log_int8_large_scale", INT8, [Input((2, 3, 8), 1, 300)], lambda r: tf.math.log, ["LOG"])
quant("rsqrt_int8_tiny_scale", INT8, [Input((2, 3, 8), 0.002, 0.01)], lambda r: tf.math.rsqrt, ["RSQRT"])
quant("rsqrt_int16x8", INT16X8, [Input((2, 3, 8), 0.05, 10)], lambda r: tf.math.rsqrt, ["RSQRT"], widen=1.0)

# ELU: the converter keeps ELU in float, so an int8 LEAKY_RELU (similar output range) is retargeted.
ELU_NOTE = {"edited": "converted as int8 LEAKY_RELU (alpha 0.3) and retargeted to ELU (the converter keeps ELU in "
                      "float)"}
quant("elu_int8_sweep", INT8, [Input((1, 256), -3, 3, sweep="all")], lambda r: (lambda x: tf.nn.leaky_relu(x, 0.3)),
      ["ELU"], post=surgery.retarget("LEAKY_RELU", "ELU", keep_options=False), extra=ELU_NOTE)
quant("elu_int8_zp_min_positive_input", INT8, [Input((2, 3, 8), 0, 6)], lambda r: (lambda x: tf.nn.leaky_relu(x, 0.3)),
      ["ELU"], post=surgery.retarget("LEAKY_RELU", "ELU", keep_options=False), extra=ELU_NOTE)

# DIV: every pair of int8 values (divisors skip the zero point), narrow calibration, int16.
quant("div_int8_sweep", INT8, [Input((256, 256), -4, 4, sweep="rows"),
                               Input((256, 256), -2, 2, sweep="columns", away_from_zero=0.25)],
      lambda r: tf.divide, ["DIV"])
quant("div_int8_zp_max_negative_input", INT8, [Input((2, 3, 8), -4, 0), Input((2, 3, 8), 0.5, 2)],
      lambda r: tf.divide, ["DIV"])


def _ratio_calibration(shape, ratio):
  """Calibration where the numerator is `ratio` times the divisor, so the quotient's calibrated
  range is a single value and independent test inputs saturate it."""
  def representative(r):
    def samples():
      for _ in range(64):
        divisor = r.uniform(shape, 0.5, 2)
        yield [divisor * ratio, divisor]
    return samples
  return representative


quant("div_int8_saturating", INT8, [Input((3, 8), 0.5, 2), Input((3, 8), 0.5, 2)], lambda r: tf.divide, ["DIV"],
      representative=_ratio_calibration((3, 8), 1.5), widen=1.0)
for variant, shapes in (("same", ((2, 3, 4, 5), (2, 3, 4, 5))), ("bcast_4d", ((2, 1, 4, 1), (1, 3, 1, 5)))):
  inputs = [Input(shapes[0], -4, 4), Input(shapes[1], -2, 2, away_from_zero=0.25)]
  quant(f"div_int16x8_{variant}", INT16X8, inputs, lambda r: tf.divide, ["DIV"],
        build=direct_int16("DIV", inputs, (-16, 16)), extra=DIRECT_INT16_NOTE)

# PRELU on int16 with int8 alphas (the converter refuses 16-bit PRELU).
PRELU_ALPHAS = np.array([[[0.05, 0.3, -0.2]]], dtype=np.float32)
quant("prelu_int16x8_direct_alpha_channels", INT16X8, [image(4, 5, 3, lo=-3, hi=3)],
      lambda r: (lambda x: tf.maximum(x, 0.0) + PRELU_ALPHAS * tf.minimum(x, 0.0)), ["PRELU"],
      build=lambda r: surgery.direct_model_with_output_shapes(
          "PRELU", [("x", (1, 4, 5, 3), "int16", (3 / 32767, 0))],
          [0, (np.round(PRELU_ALPHAS / (0.3 / 127)).astype(np.int8), (0.3 / 127, 0))],
          [("y", [1], "int16", (3 / 32767, 0))]),
      extra=DIRECT_INT16_NOTE)

# L2_NORMALIZATION: a row of zeros, an extreme input zero point.
ZERO_ROW = np.concatenate([np.zeros(6), np.linspace(-2, 2, 6), np.full(6, 0.01), np.linspace(0.5, 3, 6)])
quant("l2_normalization_int8_zero_row", INT8, [Input((4, 6), -2, 3, values=ZERO_ROW)],
      lambda r: (lambda x: tf.math.l2_normalize(x, axis=-1)), ["L2_NORMALIZATION"])
quant("l2_normalization_int8_zp_min_positive_input", INT8, [Input((3, 16), 0, 6)],
      lambda r: (lambda x: tf.math.l2_normalize(x, axis=-1)), ["L2_NORMALIZATION"])

# Comparisons rescale both inputs (by 2^8 times their scale) before comparing.
COMPARISON_FUNCTIONS = {
    "EQUAL": tf.equal, "NOT_EQUAL": tf.not_equal, "LESS": tf.less, "LESS_EQUAL": tf.less_equal,
    "GREATER": tf.greater, "GREATER_EQUAL": tf.greater_equal,
}
# The converter keeps NOT_EQUAL in float, so its 8-bit cases are converted as EQUAL and retargeted.
NOT_EQUAL_EDIT = dict(post=surgery.retarget("EQUAL", "NOT_EQUAL"),
                      extra={"edited": "converted as EQUAL and retargeted to NOT_EQUAL (the converter keeps "
                                       "NOT_EQUAL in float)"})
for opname, function in COMPARISON_FUNCTIONS.items():
  base = opname.lower()
  edit = NOT_EQUAL_EDIT if opname == "NOT_EQUAL" else {}
  make = lambda r, f=(tf.equal if edit else function): f
  quant(f"{base}_int8_bcast", INT8, [Input((2, 3, 4), -3, 3, step=0.25), Input((3, 1), -1, 1, step=0.25)], make,
        [opname], **edit)
  quant(f"{base}_uint8_same", UINT8, [Input((2, 3, 4), -3, 3, step=0.25), Input((2, 3, 4), -1, 1, step=0.25)], make,
        [opname], **edit)
  inputs = [Input((2, 3, 4), -3, 3, step=0.25), Input((3, 1), -1, 1, step=0.25)]
  quant(f"{base}_int16x8_bcast", INT16X8, inputs, make, [opname], build=direct_int16(opname, inputs),
        extra=DIRECT_INT16_NOTE)
for opname in ("EQUAL", "LESS"):
  quant(f"{opname.lower()}_int8_sweep", INT8, [Input((256, 256), -3, 3, sweep="rows"),
                                               Input((256, 256), -1, 1, sweep="columns")],
        lambda r, f=COMPARISON_FUNCTIONS[opname]: f, [opname])
for opname in ("EQUAL", "LESS_EQUAL"):
  quant(f"{opname.lower()}_int8_tiny_scale", INT8, [Input((4, 16), -0.1, 0.1), Input((4, 16), -0.1, 0.1)],
        lambda r, f=COMPARISON_FUNCTIONS[opname]: f, [opname])
for opname in ("NOT_EQUAL", "GREATER"):
  quant(f"{opname.lower()}_int8_large_scale", INT8, [Input((4, 16), -300, 300), Input((4, 16), -200, 200)],
        lambda r, f=COMPARISON_FUNCTIONS["EQUAL" if opname == "NOT_EQUAL" else opname]: f, [opname],
        **(NOT_EQUAL_EDIT if opname == "NOT_EQUAL" else {}))

# uint8 kernels of the same operators.
LEGACY_UINT8_EXTRAS = [
    "div_f32_same", "div_f32_bcast_4d", "l2_normalization_f32_2d", "less_f32_bcast", "equal_f32_bcast",
    "greater_equal_f32_bcast", "mirror_pad_f32_reflect", "space_to_batch_nd_f32_block2_pad",
    "batch_to_space_nd_f32_block2_crop", "reduce_min_f32_axes_1_2_keep",
]
for float_name in LEGACY_UINT8_EXTRAS:
  source = _float_cases[float_name]
  CASES.append(dataclasses.replace(source, name=float_name.replace("_f32", "_uint8_legacy", 1), group="quant",
                                   mode=UINT8_LEGACY, post=None, extra={}))
