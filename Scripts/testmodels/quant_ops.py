"""Quantized single-op models beyond the per-mode variants registered in single_ops.

* float interfaces: QUANTIZE at the inputs and DEQUANTIZE at the outputs of integer models;
* per-tensor (not per-channel) weights;
* zero points at the ends of the type's range and very small / very large scales;
* saturation: calibration data whose results span a much smaller range than the test inputs
  produce, so outputs clamp at the type's limits;
* 16-bit activations with 64-bit bias.
"""

import numpy as np
import tensorflow as tf

from . import single_ops
from .core import INT8, INT16X8, UINT8, Case, Input
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
