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

from . import single_ops
from .core import HYBRID, INT8, INT16X8, UINT8, UINT8_LEGACY, Case, Input
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
