"""Single-operator models: one TF expression per case, converted in every mode the op has.

`op(...)` registers one definition for a list of modes; float32 models go to `ops/`, integer
models (int8, uint8, int16x8) to `quant/`, dynamic-range models to `hybrid/`. Names read
`<op>_<mode>_<variant>`.
"""

import math

import numpy as np
import tensorflow as tf
from ai_edge_litert import schema_py_generated as schema

from . import surgery
from .core import (FLOAT16_WEIGHTS, FLOAT32, HYBRID, INT8, INT16X8, MODE_TAGS, UINT8, Case, Input)

CASES = []

GROUPS = {FLOAT32: "ops", FLOAT16_WEIGHTS: "ops", INT8: "quant", UINT8: "quant", INT16X8: "quant",
          HYBRID: "hybrid"}
Q = (INT8, UINT8, INT16X8)
ALL = (FLOAT32,) + Q


def op(base, variant, inputs, make, expect, modes=(FLOAT32,), **options):
  """Registers one case per mode for a TF callable made by `make(rng)`."""
  for mode in modes:
    name = "_".join(part for part in (base, MODE_TAGS[mode], variant) if part)
    CASES.append(Case(name=name, group=GROUPS[mode], mode=mode, inputs=inputs, make=make,
                      expect=expect, **options))


def image(h=6, w=6, c=3, n=1, lo=-1.0, hi=1.0):
  return Input((n, h, w, c), lo, hi)


ACTIVATIONS = {
    None: lambda y: y,
    "relu": tf.nn.relu,
    "relu6": tf.nn.relu6,
    "relu_n1_to_1": lambda y: tf.clip_by_value(y, -1.0, 1.0),
}


# ---------------------------------------------------------------------------------------------
# Convolutions, fully connected, matmul


def conv2d(kh, kw, cin, cout, strides=1, padding="SAME", dilation=1, act=None, bias=True, groups=1):
  def make(r):
    weights = r.const((kh, kw, cin // groups, cout), 1 / math.sqrt(kh * kw * cin / groups))
    biases = r.const((cout,), 0.5)
    def fn(x):
      y = tf.nn.conv2d(x, weights, strides, padding, dilations=dilation)
      return ACTIVATIONS[act](y + biases if bias else y)
    return fn
  return make


CONV_CASES = [
    ("s1_same", image(8, 8, 3), dict(strides=1, padding="SAME"), ALL),
    ("s2_same_relu6", image(8, 8, 3), dict(strides=2, padding="SAME", act="relu6"), ALL),
    ("s1_valid_relu", image(8, 8, 3), dict(strides=1, padding="VALID", act="relu"), ALL),
    ("s2_valid", image(9, 9, 4), dict(strides=2, padding="VALID"), ALL),
    ("dil2_same", image(9, 9, 3), dict(dilation=2, padding="SAME"), ALL),
    ("dil2_valid_relu_n1_to_1", image(9, 9, 3), dict(dilation=2, padding="VALID", act="relu_n1_to_1"), (FLOAT32, INT8)),
    ("1x1", image(5, 5, 8), dict(kh=1, kw=1, cout=6), ALL),
    ("1x1_s2_relu", image(7, 7, 8), dict(kh=1, kw=1, cout=6, strides=2, act="relu"), (FLOAT32,)),
    ("odd_7x5_k3x2_s2x1_same", image(7, 5, 3), dict(kh=3, kw=2, strides=(2, 1)), ALL),
    ("odd_7x5_k5x3_s3_valid", image(7, 5, 2), dict(kh=5, kw=3, strides=3, padding="VALID"), (FLOAT32, INT8)),
    ("batch2_s1_same", image(5, 5, 3, n=2), dict(), (FLOAT32, INT8)),
    ("nobias", image(6, 6, 3), dict(bias=False), (FLOAT32, INT8)),
    ("grouped_g2", image(6, 6, 8), dict(groups=2, cout=6), (FLOAT32, INT8)),
    # One input channel per group: a depthwise convolution as Keras' Conv2D(groups=channels) converts.
    ("grouped_depthwise_k7_relu", image(9, 8, 8), dict(kh=7, kw=7, groups=8, cout=16, act="relu"), (FLOAT32,)),
    ("grouped_depthwise_k3_s2", image(9, 9, 6), dict(groups=6, cout=6, strides=2), (FLOAT32,)),
    ("s2_same_k5", image(11, 11, 3), dict(kh=5, kw=5, strides=2, act="relu6"), (FLOAT32,)),
]

for variant, x, options, modes in CONV_CASES:
  cin = x.shape[3]
  options = dict(options)
  kh, kw, cout = options.pop("kh", 3), options.pop("kw", 3), options.pop("cout", 4)
  op("conv2d", variant, [x], conv2d(kh, kw, cin, cout, **options), ["CONV_2D"], modes)

op("conv2d", "s1_same_c16", [image(6, 6, 16)], conv2d(3, 3, 16, 16), ["CONV_2D"], (HYBRID, FLOAT16_WEIGHTS))
op("conv2d", "s2_valid_relu_c16", [image(9, 9, 16)], conv2d(3, 3, 16, 16, strides=2, padding="VALID", act="relu"),
   ["CONV_2D"], (HYBRID,))


def depthwise(k, cin, multiplier=1, strides=1, padding="SAME", dilation=1, act=None):
  def make(r):
    weights = r.const((k, k, cin, multiplier), 1 / k)
    biases = r.const((cin * multiplier,), 0.5)
    def fn(x):
      y = tf.nn.depthwise_conv2d(x, weights, [1, strides, strides, 1], padding,
                                 dilations=[dilation, dilation] if dilation > 1 else None)
      return ACTIVATIONS[act](y + biases)
    return fn
  return make


DEPTHWISE_CASES = [
    ("m1_s1_same", image(8, 8, 4), dict(), ALL),
    ("m1_s2_same_relu6", image(8, 8, 4), dict(strides=2, act="relu6"), ALL),
    ("m2_s1_valid", image(7, 7, 3), dict(multiplier=2, padding="VALID"), ALL),
    ("m2_s2_same_relu", image(9, 7, 3), dict(multiplier=2, strides=2, act="relu"), (FLOAT32, INT8)),
    ("m1_dil2_same", image(9, 9, 4), dict(dilation=2), ALL),
    ("m1_dil2_valid", image(9, 9, 4), dict(dilation=2, padding="VALID"), (FLOAT32, INT8)),
    ("m1_k5_s2_valid", image(11, 11, 5), dict(k=5, strides=2, padding="VALID"), (FLOAT32, INT8)),
]

for variant, x, options, modes in DEPTHWISE_CASES:
  options = dict(options)
  k = options.pop("k", 3)
  op("depthwise_conv2d", variant, [x], depthwise(k, x.shape[3], **options), ["DEPTHWISE_CONV_2D"], modes)

op("depthwise_conv2d", "m1_c128", [image(6, 6, 128)], depthwise(3, 128), ["DEPTHWISE_CONV_2D"],
   (HYBRID, FLOAT16_WEIGHTS))


def transpose_conv(k, cin, cout, out_hw, strides=2, padding="SAME", bias=True, n=1, act=None):
  def make(r):
    weights = r.const((k, k, cout, cin), 1 / k)
    biases = r.const((cout,), 0.5)
    def fn(x):
      y = tf.nn.conv2d_transpose(x, weights, [n, out_hw[0], out_hw[1], cout], strides, padding)
      return ACTIVATIONS[act](y + biases if bias else y)
    return fn
  return make


TRANSPOSE_CONV_CASES = [
    ("s2_same_bias", image(4, 4, 3), dict(k=3, cout=4, out_hw=(8, 8)), ALL),
    ("s2_same_nobias", image(4, 4, 3), dict(k=3, cout=4, out_hw=(8, 8), bias=False), ALL),
    ("s2_valid_bias", image(4, 4, 3), dict(k=3, cout=2, out_hw=(9, 9), padding="VALID"), ALL),
    ("s2_valid_k2", image(3, 5, 4), dict(k=2, cout=3, out_hw=(6, 10), padding="VALID"), (FLOAT32, INT8)),
    ("s1_same", image(5, 5, 3), dict(k=3, cout=4, out_hw=(5, 5), strides=1), (FLOAT32, INT8)),
    ("s2_same_relu", image(4, 4, 3), dict(k=4, cout=4, out_hw=(8, 8), act="relu"), (FLOAT32,)),
]

for variant, x, options, modes in TRANSPOSE_CONV_CASES:
  options = dict(options)
  op("transpose_conv", variant, [x],
     transpose_conv(options.pop("k"), x.shape[3], options.pop("cout"), options.pop("out_hw"), **options),
     ["TRANSPOSE_CONV"], modes)


def dense(cin, cout, bias=True, act=None):
  def make(r):
    weights = r.const((cin, cout), 1 / math.sqrt(cin))
    biases = r.const((cout,), 0.5)
    def fn(x):
      if len(x.shape) == 2:
        y = tf.matmul(x, weights)
      else:
        y = tf.tensordot(x, weights, [[len(x.shape) - 1], [0]])
      return ACTIVATIONS[act](y + biases if bias else y)
    return fn
  return make


def keras_dense(input_shape, units, act=None, bias=True):
  def make(r):
    inputs = tf.keras.Input(input_shape[1:], batch_size=input_shape[0])
    layer = tf.keras.layers.Dense(units, activation=act, use_bias=bias)
    outputs = layer(inputs)
    weights = [r.normal((input_shape[-1], units), 1 / math.sqrt(input_shape[-1]))]
    if bias:
      weights.append(r.normal((units,), 0.5))
    layer.set_weights(weights)
    return tf.keras.Model(inputs, outputs)
  return make


FC_CASES = [
    ("2d", Input((2, 16)), dense(16, 8), ALL),
    ("2d_relu", Input((3, 10)), dense(10, 5, act="relu"), ALL),
    ("2d_nobias", Input((2, 16)), dense(16, 8, bias=False), ALL),
    ("2d_relu6_batch1", Input((1, 24)), dense(24, 10, act="relu6"), (FLOAT32, INT8)),
    ("3d_keep_num_dims", Input((1, 4, 12)), keras_dense((1, 4, 12), 6), ALL),
    ("3d_keep_num_dims_nobias", Input((2, 3, 8)), keras_dense((2, 3, 8), 5, bias=False), (FLOAT32, INT8)),
    ("4d_tensordot", Input((1, 2, 3, 8)), dense(8, 4), (FLOAT32, INT8)),
]

for variant, x, make, modes in FC_CASES:
  op("fully_connected", variant, [x], make, ["FULLY_CONNECTED"], modes)

op("fully_connected", "2d_64x32", [Input((2, 64))], dense(64, 32), ["FULLY_CONNECTED"], (HYBRID, FLOAT16_WEIGHTS))
op("fully_connected", "2d_64x32_relu", [Input((4, 64))], dense(64, 32, act="relu"), ["FULLY_CONNECTED"], (HYBRID,))
op("fully_connected", "2d_64x32_symmetric_inputs", [Input((3, 64))], dense(64, 32), ["FULLY_CONNECTED"], (HYBRID,),
   post=surgery.set_options("FULLY_CONNECTED", asymmetricQuantizeInputs=False),
   extra={"edited": "asymmetric_quantize_inputs turned off after conversion (older converters wrote it so)"})
op("fully_connected", "3d_keep_num_dims_64x32", [Input((1, 3, 64))], keras_dense((1, 3, 64), 32),
   ["FULLY_CONNECTED"], (HYBRID,))


def batch_matmul(adj_x=False, adj_y=False):
  return lambda r: (lambda x, y: tf.matmul(x, y, transpose_a=adj_x, transpose_b=adj_y))


BMM_CASES = [
    ("3d", [Input((2, 3, 4)), Input((2, 4, 5))], dict(), ALL),
    ("adj_x", [Input((2, 4, 3)), Input((2, 4, 5))], dict(adj_x=True), ALL),
    ("adj_y", [Input((2, 3, 4)), Input((2, 5, 4))], dict(adj_y=True), ALL),
    ("adj_x_adj_y", [Input((1, 4, 3)), Input((1, 5, 4))], dict(adj_x=True, adj_y=True), (FLOAT32, INT8)),
    ("bcast_batch_4d", [Input((2, 3, 4, 5)), Input((3, 5, 2))], dict(), ALL),
    ("bcast_batch_both", [Input((2, 1, 3, 4)), Input((1, 3, 4, 2))], dict(), (FLOAT32, INT8)),
    ("2d", [Input((3, 4)), Input((4, 6))], dict(), (FLOAT32,)),
]

for variant, inputs, options, modes in BMM_CASES:
  op("batch_matmul", variant, inputs, batch_matmul(**options), ["BATCH_MATMUL"], modes)


def batch_matmul_const_rhs(shape):
  def make(r):
    rhs = r.const(shape, 1 / math.sqrt(shape[-2]))
    return lambda x: tf.matmul(x, rhs)
  return make


op("batch_matmul", "const_rhs_3d", [Input((2, 4, 64))], batch_matmul_const_rhs((2, 64, 32)), ["BATCH_MATMUL"],
   (FLOAT32, HYBRID))


# ---------------------------------------------------------------------------------------------
# Pooling, softmax, normalization


def pool(kind, k, strides, padding, act=None):
  function = tf.nn.max_pool2d if kind == "max" else tf.nn.avg_pool2d
  return lambda r: (lambda x: ACTIVATIONS[act](function(x, k, strides, padding)))


POOL_CASES = [
    ("k2_s2_valid", image(8, 8, 3), (2, 2, "VALID"), None, ALL),
    ("k3_s2_same", image(7, 7, 3), (3, 2, "SAME"), None, ALL),
    ("k3_s1_same_relu6", image(6, 6, 4), (3, 1, "SAME"), "relu6", ALL),
    ("k3_s2_valid_relu", image(9, 8, 3), (3, 2, "VALID"), "relu", (FLOAT32, INT8)),
    ("k2x3_s1x2_same", image(7, 9, 2), ((2, 3), (1, 2), "SAME"), None, (FLOAT32, INT8)),
    ("global_7x7", image(7, 7, 8), (7, 1, "VALID"), None, (FLOAT32, INT8)),
]

for kind, name in (("avg", "average_pool_2d"), ("max", "max_pool_2d")):
  for variant, x, (k, s, padding), act, modes in POOL_CASES:
    op(name, variant, [x], pool(kind, k, s, padding, act), [name.upper()], modes)


L2_POOL_NOTE = {"edited": "converted as AVERAGE_POOL_2D and retargeted to L2_POOL_2D (the converter never emits it)"}
for variant, x, (k, s, padding), act, modes in POOL_CASES[:4]:
  op("l2_pool_2d", variant, [x], pool("avg", k, s, padding, act), ["L2_POOL_2D"],
     post=surgery.retarget("AVERAGE_POOL_2D", "L2_POOL_2D"), extra=L2_POOL_NOTE)

op("softmax", "2d", [Input((2, 10), -4, 4)], lambda r: tf.nn.softmax, ["SOFTMAX"], ALL)
BETA_NOTE = {"edited": "SoftmaxOptions.beta set after conversion (the converter keeps beta = 1 and emits a MUL)"}
op("softmax", "beta2", [Input((1, 12), -3, 3)], lambda r: tf.nn.softmax, ["SOFTMAX"], ALL,
   post=surgery.set_options("SOFTMAX", beta=2.0), extra=BETA_NOTE)
op("softmax", "beta0_5_4d", [Input((1, 2, 3, 8), -4, 4)], lambda r: tf.nn.softmax, ["SOFTMAX"], (FLOAT32, INT8),
   post=surgery.set_options("SOFTMAX", beta=0.5), extra=BETA_NOTE)
op("softmax", "scaled_logits_mul", [Input((1, 12), -3, 3)], lambda r: (lambda x: tf.nn.softmax(x * 2.0)),
   ["MUL", "SOFTMAX"])
op("softmax", "large_logits", [Input((3, 7), -40, 40)], lambda r: tf.nn.softmax, ["SOFTMAX"], (FLOAT32, INT8))
op("softmax", "1000_classes", [Input((1, 1000), -4, 4)], lambda r: tf.nn.softmax, ["SOFTMAX"], (FLOAT32, INT8),
   extra={"note": "BUILTIN_REF's int8 SOFTMAX aborts the process on 1000 classes with a narrow input range (about +-0.4)"})
op("softmax", "3d", [Input((2, 3, 5), -4, 4)], lambda r: tf.nn.softmax, ["SOFTMAX"], (FLOAT32, INT8, INT16X8))
op("log_softmax", "2d", [Input((2, 10), -4, 4)], lambda r: tf.nn.log_softmax, ["LOG_SOFTMAX"], (FLOAT32, INT8, UINT8))
op("log_softmax", "3d", [Input((2, 3, 6), -8, 8)], lambda r: tf.nn.log_softmax, ["LOG_SOFTMAX"], (FLOAT32, INT8))

op("l2_normalization", "axis_last", [image(3, 4, 6)], lambda r: (lambda x: tf.math.l2_normalize(x, axis=-1)),
   ["L2_NORMALIZATION"], (FLOAT32, INT8, UINT8))
op("l2_normalization", "2d", [Input((3, 10), -2, 2)], lambda r: (lambda x: tf.math.l2_normalize(x, axis=-1)),
   ["L2_NORMALIZATION"])

op("local_response_normalization", "r2", [image(4, 4, 8)],
   lambda r: (lambda x: tf.nn.local_response_normalization(x, depth_radius=2, bias=1.0, alpha=0.5, beta=0.75)),
   ["LOCAL_RESPONSE_NORMALIZATION"])


# ---------------------------------------------------------------------------------------------
# Elementwise binary ops with broadcasting

BINARY_SHAPES = {
    "same": ((2, 3, 4, 5), (2, 3, 4, 5)),
    "scalar": ((2, 3, 4), (1,)),
    "bcast_2d": ((3, 4), (4,)),
    "bcast_4d": ((2, 1, 4, 1), (1, 3, 1, 5)),
    "bcast_5d": ((2, 1, 3, 1, 4), (1, 2, 1, 3, 1)),
    "bcast_6d": ((2, 1, 2, 1, 3, 2), (1, 2, 1, 3, 1, 2)),
}

BINARY_OPS = {
    # name: (tf function, x range, y range, extra input options, modes for 'same'/'bcast_4d')
    "ADD": (tf.add, (-2, 2), (-2, 2), {}, ALL),
    "SUB": (tf.subtract, (-2, 2), (-2, 2), {}, ALL),
    "MUL": (tf.multiply, (-2, 2), (-2, 2), {}, ALL),
    "DIV": (tf.divide, (-4, 4), (-2, 2), {"away_from_zero": 0.25}, (FLOAT32, INT8, UINT8)),
    "SQUARED_DIFFERENCE": (tf.math.squared_difference, (-2, 2), (-2, 2), {}, (FLOAT32, INT8, INT16X8)),
    "MAXIMUM": (tf.maximum, (-2, 2), (-2, 2), {}, ALL),
    "MINIMUM": (tf.minimum, (-2, 2), (-2, 2), {}, ALL),
    "POW": (tf.pow, (0.25, 2.5), (-2, 2), {}, (FLOAT32,)),
    "FLOOR_DIV": (tf.math.floordiv, (-6, 6), (-3, 3), {"away_from_zero": 0.5, "step": 0.5}, (FLOAT32,)),
    "FLOOR_MOD": (tf.math.floormod, (-6, 6), (-3, 3), {"away_from_zero": 0.5, "step": 0.25}, (FLOAT32,)),
}

for opname, (function, xr, yr, y_options, quant_modes) in BINARY_OPS.items():
  for shape_name, (xs, ys) in BINARY_SHAPES.items():
    modes = quant_modes if shape_name in ("same", "bcast_4d") else (FLOAT32,)
    if shape_name in ("scalar",) and INT8 in quant_modes:
      modes = (FLOAT32, INT8)
    inputs = [Input(xs, *xr), Input(ys, *yr, **y_options)]
    op(opname.lower(), shape_name, inputs, lambda r, f=function: f, [opname], modes)


def binary_with_constant(function, shape):
  def make(r):
    constant = r.const_uniform(shape, -1.5, 1.5)
    return lambda x: function(x, constant)
  return make


for opname, function in (("ADD", tf.add), ("MUL", tf.multiply), ("SUB", tf.subtract)):
  op(opname.lower(), "const_bcast_channels", [image(4, 4, 6)], binary_with_constant(function, (6,)), [opname],
     (FLOAT32, INT8, INT16X8))

op("add", "relu", [Input((2, 8), -2, 2), Input((2, 8), -2, 2)], lambda r: (lambda x, y: tf.nn.relu(x + y)), ["ADD"],
   (FLOAT32, INT8, INT16X8))
op("add", "relu6_bcast", [image(4, 4, 3, lo=-4, hi=8), Input((1, 1, 1, 3), -2, 2)],
   lambda r: (lambda x, y: tf.nn.relu6(x + y)), ["ADD"], (FLOAT32, INT8))
op("mul", "relu_n1_to_1", [Input((3, 5), -2, 2), Input((3, 5), -2, 2)],
   lambda r: (lambda x, y: tf.clip_by_value(x * y, -1.0, 1.0)), ["MUL"], (FLOAT32, INT8))

INT_BINARY = {
    "ADD": tf.add, "SUB": tf.subtract, "MUL": tf.multiply, "MAXIMUM": tf.maximum, "MINIMUM": tf.minimum,
    "FLOOR_DIV": tf.math.floordiv, "FLOOR_MOD": tf.math.floormod, "SQUARED_DIFFERENCE": tf.math.squared_difference,
}
for opname, function in INT_BINARY.items():
  divisor = opname.startswith("FLOOR")
  y = Input((3, 1, 4), -7, 7, "int32", values=(lambda r: np.where(r.integers((3, 1, 4), -4, 4) >= 0,
                                                                  r.integers((3, 1, 4), 1, 5),
                                                                  r.integers((3, 1, 4), -5, -1)))
            if divisor else None)
  op(opname.lower(), "int32_bcast", [Input((3, 2, 4), -20, 20, "int32"), y], lambda r, f=function: f, [opname])

op("div", "int32", [Input((2, 6), -20, 20, "int32"), Input((2, 6), 1, 5, "int32")],
   lambda r: (lambda x, y: tf.truncatediv(x, y)), ["DIV"])
op("add_n", "3_inputs", [Input((2, 3, 4)), Input((2, 3, 4)), Input((2, 3, 4))], lambda r: (lambda a, b, c: tf.add_n([a, b, c])),
   ["ADD_N"])


# ---------------------------------------------------------------------------------------------
# Unary ops and activations


def prelu(input_shape, shared_axes):
  def make(r):
    inputs = tf.keras.Input(input_shape[1:], batch_size=input_shape[0])
    layer = tf.keras.layers.PReLU(shared_axes=shared_axes)
    outputs = layer(inputs)
    layer.set_weights([r.uniform(layer.get_weights()[0].shape, 0.05, 0.5)])
    return tf.keras.Model(inputs, outputs)
  return make


UNARY_OPS = [
    # (op, variant, fn, x range, input options, modes)
    ("RELU", "", tf.nn.relu, (-3, 3), {}, ALL),
    ("RELU6", "", tf.nn.relu6, (-3, 9), {}, ALL),
    ("RELU_N1_TO_1", "", lambda x: tf.clip_by_value(x, -1.0, 1.0), (-2, 2), {}, (FLOAT32, INT8, UINT8)),
    ("LEAKY_RELU", "alpha0_2", lambda x: tf.nn.leaky_relu(x, 0.2), (-3, 3), {}, ALL),
    ("LEAKY_RELU", "alpha1_5", lambda x: tf.nn.leaky_relu(x, 1.5), (-3, 3), {}, (FLOAT32, INT8)),
    ("LOGISTIC", "", tf.sigmoid, (-8, 8), {}, ALL),
    ("TANH", "", tf.tanh, (-4, 4), {}, ALL),
    ("HARD_SWISH", "", lambda x: x * tf.nn.relu6(x + 3.0) / 6.0, (-5, 5), {}, ALL),
    ("GELU", "exact", lambda x: tf.nn.gelu(x, approximate=False), (-4, 4), {}, ALL),
    ("GELU", "approximate", lambda x: tf.nn.gelu(x, approximate=True), (-4, 4), {}, (FLOAT32, INT8)),
    ("ELU", "", tf.nn.elu, (-3, 3), {}, (FLOAT32, INT8)),
    ("EXP", "", tf.exp, (-5, 5), {}, (FLOAT32, INT8, UINT8)),
    ("LOG", "", tf.math.log, (0.01, 10), {}, (FLOAT32, INT8, UINT8)),
    ("SQRT", "", tf.sqrt, (0, 10), {}, (FLOAT32, INT8, UINT8)),
    ("RSQRT", "", tf.math.rsqrt, (0.01, 10), {}, (FLOAT32, INT8, UINT8)),
    ("SQUARE", "", tf.square, (-3, 3), {}, (FLOAT32,)),
    ("ABS", "", tf.abs, (-3, 3), {}, ALL),
    ("NEG", "", tf.negative, (-3, 3), {}, (FLOAT32, INT8)),
    ("FLOOR", "", tf.floor, (-4, 4), {"step": 0.25}, (FLOAT32,)),
    ("CEIL", "", tf.math.ceil, (-4, 4), {"step": 0.25}, (FLOAT32,)),
    ("ROUND", "half_to_even", tf.round, (-4, 4), {"step": 0.25}, (FLOAT32,)),
    ("SIN", "", tf.sin, (-7, 7), {}, (FLOAT32,)),
    ("COS", "", tf.cos, (-7, 7), {}, (FLOAT32,)),
    ("SIGN", "", tf.sign, (-2, 2), {"step": 0.5}, (FLOAT32,)),
]

for opname, variant, function, (lo, hi), options, modes in UNARY_OPS:
  op(opname.lower(), variant, [Input((1, 4, 5, 3), lo, hi, **options)], lambda r, f=function: f, [opname], modes)

op("prelu", "alpha_channels", [image(4, 5, 3, lo=-3, hi=3)], prelu((1, 4, 5, 3), [1, 2]), ["PRELU"], ALL)
op("prelu", "alpha_full", [image(3, 4, 2, lo=-3, hi=3)], prelu((1, 3, 4, 2), None), ["PRELU"], (FLOAT32, INT8))
op("relu_0_to_1", "", [Input((1, 4, 5, 3), -2, 2)], lambda r: tf.nn.relu, ["RELU_0_TO_1"], (FLOAT32, INT8),
   post=surgery.retarget("RELU", "RELU_0_TO_1"),
   extra={"edited": "converted as RELU and retargeted to RELU_0_TO_1 (the converter emits MINIMUM + RELU)"})
op("abs", "int32", [Input((3, 4), -50, 50, "int32")], lambda r: tf.abs, ["ABS"])
op("neg", "int32", [Input((3, 4), -50, 50, "int32")], lambda r: tf.negative, ["NEG"])


# ---------------------------------------------------------------------------------------------
# Reductions and arg min/max


def reduce(function, axes, keep):
  return lambda r: (lambda x: function(x, axis=axes, keepdims=keep))


REDUCTIONS = {
    "MEAN": (tf.reduce_mean, ALL),
    "SUM": (tf.reduce_sum, (FLOAT32, INT8, INT16X8)),
    "REDUCE_MAX": (tf.reduce_max, ALL),
    "REDUCE_MIN": (tf.reduce_min, ALL),
    "REDUCE_PROD": (tf.reduce_prod, ALL),
}
REDUCTION_AXES = [
    ("axes_1_2_keep", (1, 4, 5, 6), [1, 2], True),
    ("axes_1_2", (2, 4, 5, 3), [1, 2], False),
    ("axis_neg1", (2, 3, 7), [-1], False),
    ("axis_neg1_keep", (2, 3, 7), [-1], True),
    ("axes_0_2", (3, 4, 5), [0, 2], False),
    ("axis_0", (6, 5), [0], False),
    ("all_axes", (2, 3, 4), [0, 1, 2], False),
    ("axes_neg3_neg1_keep", (2, 3, 4, 5), [-3, -1], True),
]

for opname, (function, quant_modes) in REDUCTIONS.items():
  for variant, shape, axes, keep in REDUCTION_AXES:
    lo, hi = (0.6, 1.4) if opname == "REDUCE_PROD" else (-2, 2)
    modes = quant_modes if variant in ("axes_1_2_keep", "axis_neg1") else (FLOAT32,)
    op(opname.lower(), variant, [Input(shape, lo, hi)], reduce(function, axes, keep), [opname], modes)

op("mean", "long_axis_1024", [Input((1, 1024, 2), -2, 2)], reduce(tf.reduce_mean, [1], False), ["MEAN"],
   tolerance_factor=1e-5)
op("sum", "int32_axis_1", [Input((3, 5, 2), -100, 100, "int32")], reduce(tf.reduce_sum, [1], False), ["SUM"])
op("reduce_max", "int32_axis_neg1", [Input((3, 5), -100, 100, "int32")], reduce(tf.reduce_max, [-1], True), ["REDUCE_MAX"])
op("reduce_any", "axis_1", [Input((3, 4, 2), dtype="bool")], reduce(tf.reduce_any, [1], False), ["REDUCE_ANY"])
op("reduce_all", "axis_neg1", [Input((3, 4, 2), dtype="bool")], reduce(tf.reduce_all, [-1], True), ["REDUCE_ALL"])

for opname, function in (("ARG_MAX", tf.argmax), ("ARG_MIN", tf.argmin)):
  base = opname.lower()
  for out_type in ("int32", "int64"):
    op(base, f"axis_neg1_{out_type}", [Input((2, 3, 10), -3, 3)],
       lambda r, f=function, t=out_type: (lambda x: f(x, axis=-1, output_type=tf.as_dtype(t))), [opname],
       ALL if out_type == "int32" else (FLOAT32,))
  op(base, "axis_1_int32", [Input((2, 5, 4), -3, 3)], lambda r, f=function: (lambda x: f(x, axis=1, output_type=tf.int32)),
     [opname], (FLOAT32, INT8))
  op(base, "axis_0_int32_input", [Input((6, 3), -100, 100, "int32")],
     lambda r, f=function: (lambda x: f(x, axis=0, output_type=tf.int32)), [opname])


# ---------------------------------------------------------------------------------------------
# Shape ops

SHAPE_MODES = (FLOAT32, INT8, INT16X8)

op("reshape", "3d_to_2d", [Input((2, 3, 4))], lambda r: (lambda x: tf.reshape(x, [6, 4])), ["RESHAPE"], SHAPE_MODES)
op("reshape", "infer_dim", [Input((2, 3, 4))], lambda r: (lambda x: tf.reshape(x, [-1, 2, 3])), ["RESHAPE"])
op("reshape", "dynamic_batch", [Input((2, 3, 4), dynamic_dims=(0,))], lambda r: (lambda x: tf.reshape(x, [-1, 12])),
   ["RESHAPE"])


def _options(options_class, **fields):
  options = options_class()
  for field, value in fields.items():
    setattr(options, field, value)
  return options


DIRECT_NOTE = {"note": "written directly with the schema object API (a form older converters wrote)"}
op("reshape", "direct_new_shape_option_only", [Input((2, 3, 4))], lambda r: (lambda x: tf.reshape(x, [4, 6])),
   ["RESHAPE"], extra=DIRECT_NOTE,
   build=lambda r: surgery.direct_model("RESHAPE", [("x", (2, 3, 4), "float32")], [0], [("y", (4, 6), "float32")],
                                        options=_options(schema.ReshapeOptionsT, newShape=[4, 6])))
op("reshape", "shape_as_input", [Input((2, 3, 4)), Input((3,), dtype="int32", values=[3, 4, 2])],
   lambda r: (lambda x, shape: tf.reshape(x, shape)), ["RESHAPE"])
op("squeeze", "direct_static", [Input((1, 3, 1, 4))], lambda r: (lambda x: tf.squeeze(x, [0, 2])), ["SQUEEZE"],
   extra=DIRECT_NOTE,
   build=lambda r: surgery.direct_model("SQUEEZE", [("x", (1, 3, 1, 4), "float32")], [0], [("y", (3, 4), "float32")],
                                        options=_options(schema.SqueezeOptionsT, squeezeDims=[0, 2])))
op("squeeze", "axis_1", [Input((2, 1, 4, 1), dynamic_dims=(0, 2, 3))], lambda r: (lambda x: tf.squeeze(x, axis=[1])),
   ["SQUEEZE"])
op("squeeze", "axes_0_2", [Input((1, 3, 1, 4), dynamic_dims=(1, 3))], lambda r: (lambda x: tf.squeeze(x, axis=[0, 2])),
   ["SQUEEZE"])
op("expand_dims", "axis_neg1", [Input((2, 3), dynamic_dims=(0,))], lambda r: (lambda x: tf.expand_dims(x, -1)),
   ["EXPAND_DIMS"])
op("expand_dims", "axis_1", [Input((2, 3), dynamic_dims=(0,))], lambda r: (lambda x: tf.expand_dims(x, 1)),
   ["EXPAND_DIMS"])


def transpose(perm):
  return lambda r: (lambda x: tf.transpose(x, perm))


TRANSPOSES = [
    ("2d", (3, 5), [1, 0], SHAPE_MODES),
    ("3d_021", (2, 3, 4), [0, 2, 1], (FLOAT32, INT8)),
    ("4d_nhwc_to_nchw", (1, 3, 4, 5), [0, 3, 1, 2], SHAPE_MODES),
    ("4d_3120", (2, 3, 4, 5), [3, 1, 2, 0], (FLOAT32,)),
    ("5d", (2, 3, 1, 4, 2), [4, 2, 0, 3, 1], (FLOAT32, INT8)),
    ("6d", (2, 1, 3, 2, 2, 3), [5, 0, 4, 1, 3, 2], (FLOAT32,)),
]
for variant, shape, perm, modes in TRANSPOSES:
  op("transpose", variant, [Input(shape)], transpose(perm), ["TRANSPOSE"], modes)


def concat(axis):
  return lambda r: (lambda *xs: tf.concat(xs, axis))


op("concatenation", "axis_neg1", [Input((1, 4, 4, 3)), Input((1, 4, 4, 5), -3, 3)], concat(-1), ["CONCATENATION"], ALL)
op("concatenation", "axis_1_3_inputs", [Input((2, 1, 3)), Input((2, 4, 3), 0, 4), Input((2, 2, 3), -0.5, 0.5)],
   concat(1), ["CONCATENATION"], (FLOAT32, INT8, UINT8))
op("concatenation", "axis_0", [Input((2, 3)), Input((1, 3))], concat(0), ["CONCATENATION"], (FLOAT32, INT8))
op("concatenation", "int32", [Input((2, 3), -9, 9, "int32"), Input((2, 2), -9, 9, "int32")], concat(1),
   ["CONCATENATION"])


def concat_with_constant(r):
  constant = r.const_uniform((1, 4, 4, 2), -3, 3)
  return lambda x: tf.concat([x, constant], -1)


op("concatenation", "with_constant", [image(4, 4, 3)], concat_with_constant, ["CONCATENATION"], (FLOAT32, INT8))

op("pack", "axis_0", [Input((3, 4)), Input((3, 4)), Input((3, 4))], lambda r: (lambda *xs: tf.stack(xs, 0)), ["PACK"],
   (FLOAT32, INT8, INT16X8))
op("pack", "axis_neg1", [Input((2, 3)), Input((2, 3), -2, 2)], lambda r: (lambda *xs: tf.stack(xs, -1)), ["PACK"],
   (FLOAT32, INT8))
op("pack", "int32_axis_1", [Input((2, 3), -9, 9, "int32"), Input((2, 3), -9, 9, "int32")],
   lambda r: (lambda *xs: tf.stack(xs, 1)), ["PACK"])
op("unpack", "axis_0", [Input((3, 2, 4))], lambda r: (lambda x: tf.unstack(x, axis=0)), ["UNPACK"], (FLOAT32, INT8))
op("unpack", "axis_neg1", [Input((2, 3, 2))], lambda r: (lambda x: tf.unstack(x, axis=-1)), ["UNPACK"])
op("split", "3_axis_neg1", [Input((2, 4, 6))], lambda r: (lambda x: tf.split(x, 3, axis=-1)), ["SPLIT"],
   (FLOAT32, INT8, INT16X8))
op("split", "2_axis_1", [Input((1, 6, 4, 2))], lambda r: (lambda x: tf.split(x, 2, axis=1)), ["SPLIT"], (FLOAT32, INT8))
op("split_v", "sizes_1_3_2", [Input((2, 6, 3))], lambda r: (lambda x: tf.split(x, [1, 3, 2], axis=1)), ["SPLIT_V"],
   (FLOAT32, INT8))
op("split_v", "inferred_size", [Input((2, 7))], lambda r: (lambda x: tf.split(x, [2, -1, 1], axis=-1)), ["SPLIT_V"])
op("slice", "begin_size", [Input((3, 4, 5))], lambda r: (lambda x: tf.slice(x, [1, 0, 2], [2, 3, 2])), ["SLICE"],
   (FLOAT32, INT8))
op("slice", "size_minus1", [Input((2, 5, 6))], lambda r: (lambda x: tf.slice(x, [0, 1, 3], [-1, 3, -1])), ["SLICE"])

STRIDED_SLICES = [
    ("strides_2", (5, 7, 3), lambda x: x[::2, 1::3, :], SHAPE_MODES),
    ("negative_stride", (4, 5), lambda x: x[::-1, 4:0:-2], (FLOAT32, INT8)),
    ("negative_indices", (6, 5), lambda x: x[-4:-1, -3:], (FLOAT32,)),
    ("begin_end_mask", (3, 6, 4), lambda x: tf.strided_slice(x, [1, 2, 1], [2, 5, 3], [1, 1, 1],
                                                             begin_mask=0b101, end_mask=0b010), (FLOAT32,)),
    ("ellipsis", (2, 3, 4, 5), lambda x: x[..., 1:4], (FLOAT32, INT8)),
    ("ellipsis_middle", (2, 3, 4, 5), lambda x: x[1:, ..., ::2], (FLOAT32,)),
    ("new_axis", (3, 4), lambda x: x[:, tf.newaxis, 1:3], (FLOAT32,)),
    ("shrink_axis", (3, 4, 5), lambda x: x[1, :, 2], (FLOAT32, INT8)),
    ("shrink_negative", (3, 4, 5), lambda x: x[:, -1], (FLOAT32,)),
    ("new_and_shrink", (3, 4, 5), lambda x: x[tf.newaxis, 2, ..., 1:4:2], (FLOAT32,)),
    ("out_of_range_clamped", (4, 5), lambda x: tf.strided_slice(x, [-10, 2], [10, 100], [1, 1]), (FLOAT32,)),
    ("5d", (2, 3, 2, 4, 3), lambda x: x[:, 1:, :, ::2, 1:], (FLOAT32,)),
]
for variant, shape, function, modes in STRIDED_SLICES:
  op("strided_slice", variant, [Input(shape)], lambda r, f=function: f, ["STRIDED_SLICE"], modes)



def strided_slice_direct(shape, begin, end, strides, offset=False, **masks):
  """A STRIDED_SLICE written directly: today's converter folds ellipsis and new-axis masks into
  RESHAPEs and never sets `offset`, but older files contain them."""
  camel = {mask: "".join(w.capitalize() if i else w for i, w in enumerate(mask.split("_"))) for mask in masks}
  options = _options(schema.StridedSliceOptionsT, offset=offset, **{camel[m]: v for m, v in masks.items()})
  constants = [np.array(v, dtype=np.int32) for v in (begin, end, strides)]
  build = lambda r: surgery.direct_model_with_output_shapes(
      "STRIDED_SLICE", [("x", shape, "float32")], [0] + constants, [("y", [1], "float32")], options=options)
  tf_end = [b + e for b, e in zip(begin, end)] if offset else end
  make = lambda r: (lambda x: tf.strided_slice(x, begin, tf_end, strides, **masks))
  return build, make


DIRECT_STRIDED_SLICES = [
    ("ellipsis_mask", (2, 3, 4, 5), dict(begin=[1, 0, 0], end=[2, 0, 3], strides=[1, 1, 2], ellipsis_mask=0b010)),
    ("new_axis_mask", (3, 4), dict(begin=[0, 0, 1], end=[0, 0, 3], strides=[1, 1, 1], new_axis_mask=0b001,
                                   begin_mask=0b010, end_mask=0b010)),
    ("new_shrink_ellipsis", (2, 3, 4, 5), dict(begin=[0, 1, 0, 2], end=[0, 2, 0, 4], strides=[1, 1, 1, 1],
                                                 new_axis_mask=0b0001, shrink_axis_mask=0b0010, ellipsis_mask=0b0100)),
    ("offset", (6, 5), dict(begin=[1, 2], end=[3, 2], strides=[1, 1], offset=True)),
    ("offset_negative_stride", (6, 5), dict(begin=[4, 0], end=[-3, 5], strides=[-1, 2], offset=True)),
]
for variant, shape, arguments in DIRECT_STRIDED_SLICES:
  build, make = strided_slice_direct(shape, **arguments)
  op("strided_slice", f"direct_{variant}", [Input(shape)], make, ["STRIDED_SLICE"], build=build,
     extra={"note": "written directly with the schema object API (options the converter no longer emits)"})

op("strided_slice", "dynamic_begin_offset", [Input((6, 5)), Input((1,), 0, 3, "int32")],
   lambda r: (lambda x, b: x[b[0]:b[0] + 2]), ["STRIDED_SLICE"])

op("gather", "axis_0", [Input((5, 4))], lambda r: (lambda x: tf.gather(x, [4, 0, 2, 2])), ["GATHER"], SHAPE_MODES)
op("gather", "axis_1_2d_indices", [Input((3, 6, 2))], lambda r: (lambda x: tf.gather(x, [[5, 0], [1, 1], [3, 2]], axis=1)),
   ["GATHER"], (FLOAT32, INT8))
op("gather", "axis_neg1", [Input((2, 3, 5))], lambda r: (lambda x: tf.gather(x, [4, 1], axis=-1)), ["GATHER"])
op("gather", "batch_dims_1", [Input((3, 5, 2))],
   lambda r: (lambda x: tf.gather(x, [[0, 4], [1, 1], [3, 2]], axis=1, batch_dims=1)), ["GATHER"])
op("gather", "indices_input_int32", [Input((6, 3)), Input((4,), 0, 5, "int32")], lambda r: (lambda x, i: tf.gather(x, i)),
   ["GATHER"])
op("gather", "indices_input_int64", [Input((6, 3)), Input((2, 2), 0, 5, "int64")], lambda r: (lambda x, i: tf.gather(x, i)),
   ["GATHER"])
op("gather", "int32_params", [Input((5, 3), -9, 9, "int32")], lambda r: (lambda x: tf.gather(x, [3, 1])), ["GATHER"])
op("gather_nd", "full_index", [Input((4, 5))], lambda r: (lambda x: tf.gather_nd(x, [[0, 1], [3, 4], [2, 2]])),
   ["GATHER_ND"], (FLOAT32, INT8, INT16X8))
op("gather_nd", "slice_index", [Input((4, 3, 2))], lambda r: (lambda x: tf.gather_nd(x, [[[1], [3]], [[0], [0]]])),
   ["GATHER_ND"])
op("gather_nd", "indices_input", [Input((3, 4, 2)), Input((5, 2), 0, 2, "int32")],
   lambda r: (lambda x, i: tf.gather_nd(x, i)), ["GATHER_ND"])

PADS = [[0, 0], [1, 2], [2, 1], [0, 1]]
op("pad", "4d", [image(3, 4, 2)], lambda r: (lambda x: tf.pad(x, PADS)), ["PAD"], ALL)
op("pad", "2d", [Input((3, 4))], lambda r: (lambda x: tf.pad(x, [[1, 0], [0, 3]])), ["PAD"], (FLOAT32, INT8))
op("pad", "int32", [Input((2, 3), -9, 9, "int32")], lambda r: (lambda x: tf.pad(x, [[1, 1], [2, 0]])), ["PAD"])
op("padv2", "value_1_5", [image(3, 4, 2)], lambda r: (lambda x: tf.pad(x, PADS, constant_values=1.5)), ["PADV2"],
   (FLOAT32, INT8))
op("padv2", "value_neg", [Input((2, 3), 0, 2)], lambda r: (lambda x: tf.pad(x, [[1, 1], [0, 2]], constant_values=-2.0)),
   ["PADV2"], (FLOAT32, INT8))
op("mirror_pad", "reflect", [image(4, 5, 2)], lambda r: (lambda x: tf.pad(x, [[0, 0], [2, 3], [1, 2], [0, 0]], "REFLECT")),
   ["MIRROR_PAD"], ALL)
op("mirror_pad", "symmetric", [image(4, 5, 2)],
   lambda r: (lambda x: tf.pad(x, [[0, 0], [3, 4], [2, 5], [0, 1]], "SYMMETRIC")), ["MIRROR_PAD"], (FLOAT32, INT8))
op("mirror_pad", "reflect_2d", [Input((3, 4))], lambda r: (lambda x: tf.pad(x, [[2, 1], [3, 3]], "REFLECT")),
   ["MIRROR_PAD"])
op("tile", "3d", [Input((2, 1, 3))], lambda r: (lambda x: tf.tile(x, [2, 3, 1])), ["TILE"], (FLOAT32, INT8))
op("tile", "int32", [Input((2, 3), -9, 9, "int32")], lambda r: (lambda x: tf.tile(x, [1, 2])), ["TILE"])
op("broadcast_to", "3d", [Input((3, 1))], lambda r: (lambda x: tf.broadcast_to(x, [2, 3, 4])), ["BROADCAST_TO"],
   (FLOAT32, INT8, INT16X8))
op("broadcast_to", "5d", [Input((1, 3, 1, 2, 1))], lambda r: (lambda x: tf.broadcast_to(x, [2, 3, 2, 2, 3])),
   ["BROADCAST_TO"])

op("depth_to_space", "block2", [image(3, 4, 8)], lambda r: (lambda x: tf.nn.depth_to_space(x, 2)), ["DEPTH_TO_SPACE"],
   (FLOAT32, INT8, UINT8))
op("depth_to_space", "block3", [image(2, 2, 18)], lambda r: (lambda x: tf.nn.depth_to_space(x, 3)), ["DEPTH_TO_SPACE"])
op("space_to_depth", "block2", [image(4, 6, 3)], lambda r: (lambda x: tf.nn.space_to_depth(x, 2)), ["SPACE_TO_DEPTH"],
   (FLOAT32, INT8))
op("space_to_batch_nd", "block2_pad", [image(5, 6, 2)],
   lambda r: (lambda x: tf.space_to_batch_nd(x, [2, 2], [[1, 0], [0, 0]])), ["SPACE_TO_BATCH_ND"], ALL)
op("batch_to_space_nd", "block2_crop", [Input((4, 3, 3, 2))],
   lambda r: (lambda x: tf.batch_to_space(x, [2, 2], [[1, 0], [0, 1]])), ["BATCH_TO_SPACE_ND"], (FLOAT32, INT8, INT16X8))
op("reverse_v2", "axis_1", [Input((2, 4, 3))], lambda r: (lambda x: tf.reverse(x, [1])), ["REVERSE_V2"])


def resize(kind, size, align_corners=False, half_pixel_centers=False):
  function = tf.raw_ops.ResizeBilinear if kind == "bilinear" else tf.raw_ops.ResizeNearestNeighbor
  return lambda r: (lambda x: function(images=x, size=size, align_corners=align_corners,
                                       half_pixel_centers=half_pixel_centers))


RESIZES = [
    ("up2x", (4, 5), (8, 10), {}, ALL),
    ("up2x_align_corners", (4, 5), (8, 10), {"align_corners": True}, (FLOAT32, INT8)),
    ("up2x_half_pixel", (4, 5), (8, 10), {"half_pixel_centers": True}, (FLOAT32, INT8, UINT8)),
    ("up_odd_half_pixel", (3, 4), (7, 9), {"half_pixel_centers": True}, (FLOAT32,)),
    ("up_odd_align_corners", (3, 4), (7, 9), {"align_corners": True}, (FLOAT32,)),
    ("down", (8, 9), (3, 5), {}, (FLOAT32, INT8)),
    ("down_half_pixel", (8, 9), (3, 5), {"half_pixel_centers": True}, (FLOAT32,)),
]
for kind, opname in (("bilinear", "RESIZE_BILINEAR"), ("nearest", "RESIZE_NEAREST_NEIGHBOR")):
  for variant, (h, w), size, options, modes in RESIZES:
    op(opname.lower(), variant, [image(h, w, 3)], resize(kind, list(size), **options), [opname], modes)


# ---------------------------------------------------------------------------------------------
# Shapes, types, creation, selection, comparisons, logic

op("shape", "int32", [Input((2, 3, 4), dynamic_dims=(0, 2))], lambda r: (lambda x: tf.shape(x)), ["SHAPE"])
op("shape", "int64", [Input((1, 5), dynamic_dims=(0,))], lambda r: (lambda x: tf.shape(x, out_type=tf.int64)), ["SHAPE"])

CASTS = [
    ("float32", "int32", (-5, 5)),
    ("int32", "float32", (-1000, 1000)),
    ("float32", "bool", (-1, 1)),
    ("bool", "float32", (0, 1)),
    ("int32", "int64", (-1000, 1000)),
    ("int64", "int32", (-1000, 1000)),
    ("uint8", "float32", (0, 255)),
    ("float32", "uint8", (0, 255)),
    ("int8", "float32", (-128, 127)),
    ("int16", "int32", (-30000, 30000)),
    ("int32", "bool", (-2, 2)),
    ("float32", "float16", (-4, 4)),
    ("float16", "float32", (-4, 4)),
]
for source, target, (lo, hi) in CASTS:
  x = Input((2, 3, 4), lo, hi, source, step=0.25 if source == "float32" else 0.0)
  op("cast", f"{source}_to_{target}", [x], lambda r, t=target: (lambda v: tf.cast(v, t)), ["CAST"])

op("fill", "float32", [Input((2,), dtype="int32", values=[2, 3]), Input((), 0, 1)],
   lambda r: (lambda dims, value: tf.fill(dims, value)), ["FILL"])
op("fill", "int32", [Input((3,), dtype="int32", values=[2, 1, 3]), Input((), -9, 9, "int32")],
   lambda r: (lambda dims, value: tf.fill(dims, value)), ["FILL"])
op("zeros_like", "", [Input((2, 3), dynamic_dims=(0,))], lambda r: tf.zeros_like, ["ZEROS_LIKE"])
op("range", "int32", [Input((), 0, 3, "int32"), Input((), 8, 12, "int32")],
   lambda r: (lambda start, limit: tf.range(start, limit, 2)), ["RANGE"])

op("select", "same_shape", [Input((2, 3), dtype="bool"), Input((2, 3)), Input((2, 3))],
   lambda r: (lambda c, x, y: tf.where(c, x, y)), ["SELECT"], ALL)
op("select_v2", "bcast", [Input((1, 4, 1), dtype="bool"), Input((2, 4, 3)), Input((1,))],
   lambda r: (lambda c, x, y: tf.where(c, x, y)), ["SELECT_V2"], (FLOAT32, INT8, INT16X8))
op("select_v2", "int32_bcast_cond", [Input((3, 1), dtype="bool"), Input((3, 4), -9, 9, "int32"),
                                     Input((3, 4), -9, 9, "int32")],
   lambda r: (lambda c, x, y: tf.where(c, x, y)), ["SELECT_V2"])

COMPARISONS = {
    "EQUAL": tf.equal, "NOT_EQUAL": tf.not_equal, "LESS": tf.less, "LESS_EQUAL": tf.less_equal,
    "GREATER": tf.greater, "GREATER_EQUAL": tf.greater_equal,
}
for opname, function in COMPARISONS.items():
  op(opname.lower(), "bcast", [Input((2, 3, 4), -1, 1, step=0.5), Input((3, 1), -1, 1, step=0.5)],
     lambda r, f=function: f, [opname])
  op(opname.lower(), "int32", [Input((3, 4), -3, 3, "int32"), Input((3, 4), -3, 3, "int32")],
     lambda r, f=function: f, [opname])

op("logical_and", "bcast", [Input((2, 3), dtype="bool"), Input((3,), dtype="bool")], lambda r: tf.logical_and,
   ["LOGICAL_AND"])
op("logical_or", "bcast", [Input((2, 3), dtype="bool"), Input((2, 1), dtype="bool")], lambda r: tf.logical_or,
   ["LOGICAL_OR"])
op("logical_not", "", [Input((3, 4), dtype="bool")], lambda r: tf.logical_not, ["LOGICAL_NOT"])

op("one_hot", "depth5", [Input((2, 3), 0, 4, "int32")], lambda r: (lambda i: tf.one_hot(i, 5, 2.0, -1.0)), ["ONE_HOT"])
op("cumsum", "axis_1", [Input((2, 5, 3))], lambda r: (lambda x: tf.cumsum(x, axis=1)), ["CUMSUM"])
op("cumsum", "exclusive_reverse", [Input((3, 6))], lambda r: (lambda x: tf.cumsum(x, axis=-1, exclusive=True, reverse=True)),
   ["CUMSUM"])
op("topk_v2", "k3", [Input((2, 10), -5, 5)], lambda r: (lambda x: tf.math.top_k(x, 3)), ["TOPK_V2"], (FLOAT32, INT8, UINT8))


# ---------------------------------------------------------------------------------------------
# Constant weights stored compressed: float16 (DEQUANTIZE), int8 (DEQUANTIZE), sparse (DENSIFY)


def add_large_constant(r):
  constant = r.const_uniform((1, 32, 48), -2, 2)
  return lambda x: x + constant


op("dequantize", "fp16_add_constant", [Input((1, 32, 48))], add_large_constant, ["DEQUANTIZE", "ADD"],
   (FLOAT16_WEIGHTS,))


def gather_large_table(r):
  table = r.const_uniform((64, 48), -2, 2)
  return lambda indices: tf.gather(table, indices)


op("dequantize", "int8_gather_table", [Input((5,), 0, 63, "int32")], gather_large_table, ["DEQUANTIZE", "GATHER"],
   (HYBRID,))


def sparse_weights(r, shape, density, block=1, scale=1.0):
  """Random weights where only `density` of the 1 x `block` runs along the last axis are non-zero."""
  weights = r.normal(shape, scale)
  kept = r.generator.random(tuple(shape[:-1]) + (shape[-1] // block,)) < density
  return (weights * np.repeat(kept, block, axis=-1)).astype(np.float32)


def sparse_dense_layer(cin, cout, density, block=1):
  def make(r):
    # TFLite stores FULLY_CONNECTED weights as [out, in]; blocks run along the input axis.
    weights = tf.constant(sparse_weights(r, (cout, cin), density, block, 1 / math.sqrt(cin * density)).T)
    biases = r.const((cout,), 0.5)
    return lambda x: tf.matmul(x, weights) + biases
  return make


def sparse_conv_layer(cin, cout, density):
  def make(r):
    weights = tf.constant(sparse_weights(r, (3, 3, cin, cout), density, 1, 1 / math.sqrt(9 * cin * density)))
    biases = r.const((cout,), 0.5)
    return lambda x: tf.nn.conv2d(x, weights, 1, "SAME") + biases
  return make


def sparsity(converter):
  converter.optimizations = [tf.lite.Optimize.EXPERIMENTAL_SPARSITY]


op("densify", "conv2d_random_sparse", [image(6, 6, 16)], sparse_conv_layer(16, 32, 0.1), ["DENSIFY", "CONV_2D"],
   tweak=sparsity)
op("densify", "fully_connected_random_sparse", [Input((2, 64))], sparse_dense_layer(64, 48, 0.1), ["FULLY_CONNECTED"],
   tweak=sparsity, extra={"note": "sparse weights feed FULLY_CONNECTED directly or through DENSIFY"})
op("densify", "fully_connected_block_1x4", [Input((2, 64))], sparse_dense_layer(64, 48, 0.15, block=4),
   ["FULLY_CONNECTED"], tweak=sparsity)
