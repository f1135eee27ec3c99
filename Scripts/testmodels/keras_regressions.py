"""Small Keras models reproducing what Scripts/real_model_sweep.py found on converted real networks.

* `keras_transpose_conv_hybrid_*`: a Conv2DTranspose (stride 2; SAME, or VALID with a fused RELU)
  converted with dynamic-range quantization: TRANSPOSE_CONV with float input and int8 per-channel
  weights, as a UNet decoder has it. LiteRT adds the partial sums in float in its own order, so
  these are "graph" cases with the default 1e-5 x range tolerance, one layer each: chained, a last-bit
  difference in the first layer can move a value of the second layer's run-time quantization by
  one step (XNNPACK then differs from BUILTIN_REF just as much).
"""

import tensorflow as tf

from .core import HYBRID, Case, Input

CASES = []


def _transpose_conv(input_shape, filters, kernel, padding, activation=None):
  def make(r):
    inputs = tf.keras.Input(input_shape, batch_size=1)
    outputs = tf.keras.layers.Conv2DTranspose(filters, kernel, strides=2, padding=padding,
                                              activation=activation)(inputs)
    model = tf.keras.Model(inputs, outputs)
    model.set_weights([r.normal(w.shape, 0.3) for w in model.get_weights()])
    return model
  return make


for suffix, shape, filters, kernel, padding, activation in [
    ("same", (6, 6, 16), 24, 3, "same", None), ("valid_relu", (6, 6, 24), 8, 4, "valid", "relu")]:
  CASES.append(Case(
      name=f"keras_transpose_conv_hybrid_{suffix}", group="keras", mode=HYBRID, kind="graph",
      inputs=[Input((1,) + shape)], make=_transpose_conv(shape, filters, kernel, padding, activation),
      expect=["TRANSPOSE_CONV"]))
