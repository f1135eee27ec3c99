"""Full-size networks for benchmarking (written to Benchmarks/Models/, never committed).

keras.applications networks at their standard input sizes with random (seeded) weights, plus a
small vision transformer (ViT-Tiny layout) and a UNet with transposed convolutions and bilinear
resizes. MobileNetV2, EfficientNetB0 and ResNet50 also come in full int8 (int8 input and output,
calibrated on random images) and dynamic range (float activations, int8 weights: `_hybrid`). Each gets the same files as a TestModels case (model, input, BUILTIN_REF
output) and an entry in Benchmarks/Models/manifest.json.

  Scripts/make_test_models.sh --benchmark-models --skip-test-models --benchmark-only 'resnet50|vgg16'
"""

import functools
import json
import os
import re

import numpy as np
import tensorflow as tf

from . import core
from .core import FLOAT32, HYBRID, INT8, Case, Input


def _random_images(size, lo, hi):
  def representative(r):
    def samples():
      for _ in range(8):
        yield [r.uniform((1, size, size, 3), lo, hi)]
    return samples
  return representative


class _PositionEmbedding(tf.keras.layers.Layer):
  """Adds a learned (here random) vector per token."""

  def build(self, input_shape):
    self.table = self.add_weight(shape=tuple(input_shape[1:]), initializer="random_normal", name="table")

  def call(self, tokens):
    return tokens + self.table


def _vision_transformer():
  """ViT-Tiny layout: 16x16 patches of a 224 image, width 192, 12 blocks of 3-head attention and a
  768-wide GELU MLP, pre-LayerNorm, mean-pooled tokens into a 1000-way classifier."""
  layers = tf.keras.layers
  images = tf.keras.Input((224, 224, 3), batch_size=1)
  tokens = layers.Reshape((196, 192))(layers.Conv2D(192, 16, strides=16)(images))
  tokens = _PositionEmbedding()(tokens)
  for _ in range(12):
    normalized = layers.LayerNormalization(epsilon=1e-6)(tokens)
    tokens = tokens + layers.MultiHeadAttention(num_heads=3, key_dim=64)(normalized, normalized)
    normalized = layers.LayerNormalization(epsilon=1e-6)(tokens)
    tokens = tokens + layers.Dense(192)(layers.Dense(768, activation="gelu")(normalized))
  pooled = layers.GlobalAveragePooling1D()(layers.LayerNormalization(epsilon=1e-6)(tokens))
  model = tf.keras.Model(images, layers.Dense(1000, activation="softmax")(pooled))
  # from_keras_model fails on this model with Keras 3 ("'NoneType' object is not callable");
  # converting the traced call works.
  call = tf.function(lambda x: model(x, training=False), input_signature=[tf.TensorSpec((1, 224, 224, 3), tf.float32)])
  return tf.lite.TFLiteConverter.from_concrete_functions([call.get_concrete_function()], model)


def _unet():
  """A 256x256 segmentation UNet (32..256 channels): 3x3 conv pairs, max pools, and a decoder that
  upsamples with TRANSPOSE_CONV (2x2 and 3x3, stride 2) and bilinear RESIZE, joined by concats."""
  layers = tf.keras.layers

  def conv_pair(x, channels):
    for _ in range(2):
      x = layers.Conv2D(channels, 3, padding="same", activation="relu")(x)
    return x

  images = tf.keras.Input((256, 256, 3), batch_size=1)
  skips, x = [], images
  for channels in (32, 64, 128):
    x = conv_pair(x, channels)
    skips.append(x)
    x = layers.MaxPooling2D()(x)
  x = conv_pair(x, 256)
  upsamplers = [lambda x: layers.Conv2DTranspose(128, 2, strides=2)(x),
                lambda x: layers.Conv2D(64, 1)(layers.UpSampling2D(interpolation="bilinear")(x)),
                lambda x: layers.Conv2DTranspose(32, 3, strides=2, padding="same")(x)]
  for upsample, skip, channels in zip(upsamplers, reversed(skips), (128, 64, 32)):
    x = conv_pair(layers.Concatenate()([upsample(x), skip]), channels)
  return tf.keras.Model(images, layers.Conv2D(2, 1, activation="softmax")(x))


def _application(constructor, size, **options):
  return lambda: constructor(input_shape=(size, size, 3), weights=None, **options)


applications = tf.keras.applications
# name -> (builder, input size, input range the network expects, also int8 and dynamic range). Networks that include
# their own preprocessing (EfficientNet, MobileNetV3, ConvNeXt) take [0, 255], the others [-1, 1].
NETWORKS = {
    "mobilenet_v2": (_application(applications.MobileNetV2, 224), 224, (-1.0, 1.0), True),
    "efficientnet_b0": (_application(applications.EfficientNetB0, 224), 224, (0.0, 255.0), True),
    "resnet50": (_application(applications.ResNet50, 224), 224, (-1.0, 1.0), True),
    # Without the two 4096-wide dense layers (0.5 GB of weights): the 3x3 convolutions are what matter.
    "vgg16": (_application(applications.VGG16, 224, include_top=False, pooling="avg"), 224, (-1.0, 1.0), False),
    "inception_v3": (_application(applications.InceptionV3, 299), 299, (-1.0, 1.0), False),
    "densenet121": (_application(applications.DenseNet121, 224), 224, (-1.0, 1.0), False),
    "mobilenet_v3_large": (_application(applications.MobileNetV3Large, 224), 224, (0.0, 255.0), False),
    "xception": (_application(applications.Xception, 299), 299, (-1.0, 1.0), False),
    "convnext_tiny": (_application(applications.ConvNeXtTiny, 224), 224, (0.0, 255.0), False),
    "vit_tiny": (_vision_transformer, 224, (-1.0, 1.0), False),
    "unet": (_unet, 256, (-1.0, 1.0), False),
}


@functools.lru_cache(maxsize=None)
def _network(name):
  """The network with seeded weights (built once, shared by its float, int8 and hybrid cases), or a
  converter of it."""
  builder, size, (lo, hi), _ = NETWORKS[name]
  tf.keras.utils.set_random_seed(core.SEED)
  model = builder()
  if isinstance(model, tf.keras.Model):
    _set_batch_norm_statistics(model, core.Rng(name + "/batch_norm").uniform((8, size, size, 3), lo, hi))
  return model


def _set_batch_norm_statistics(model, images):
  """Gives every BatchNormalization the statistics of one batch of images. With the untrained
  defaults (mean 0, variance 1) activations shrink layer after layer until the logits are all
  equal, and the int8 SOFTMAX input scale becomes so small that BUILTIN_REF aborts."""
  layers = [layer for layer in model.layers if isinstance(layer, tf.keras.layers.BatchNormalization)]
  if not layers:
    return
  for layer in layers:
    layer.momentum = 0.0
  model(images, training=True)


def cases():
  result = []
  for name, (_, size, (lo, hi), quantized) in NETWORKS.items():
    modes = ((FLOAT32, "float"), (INT8, "int8"), (HYBRID, "hybrid")) if quantized else ((FLOAT32, "float"),)
    for mode, suffix in modes:
      result.append(Case(name=f"{name}_{suffix}", group="", mode=mode, kind="network",
                         inputs=[Input((1, size, size, 3), lo, hi)],
                         make=lambda r, n=name: _network(n), expect=["CONV_2D"],
                         representative=_random_images(size, lo, hi), widen=1.0, isolated=True))
  return result


def write_all(directory, only=None):
  """Writes the cases whose name matches `only` (all without it) and merges them into the
  directory's manifest.json, keeping the entries of the others."""
  os.makedirs(directory, exist_ok=True)
  manifest_path = os.path.join(directory, "manifest.json")
  entries, failures = {}, {}
  if only and os.path.exists(manifest_path):
    with open(manifest_path) as handle:
      previous = json.load(handle)
    entries = {entry["name"]: entry for entry in previous["models"]}
    failures = {failure["name"]: failure for failure in previous.get("not_generated", [])}
  for case in cases():
    if only and not re.search(only, case.name):
      continue
    entries.pop(case.name, None)
    failures.pop(case.name, None)
    try:
      entry = core.generate(case, directory)
      entry.pop("tensors")
      entries[case.name] = entry
      print(f"benchmark model {case.name}: ok", flush=True)
    except core.NotGenerated as reason:
      failures[case.name] = {"name": case.name, "reason": str(reason)}
      print(f"benchmark model {case.name}: NOT GENERATED: {reason}", flush=True)
  with open(manifest_path, "w") as handle:
    json.dump({"generator": {"tensorflow": tf.__version__, "numpy": np.__version__, "seed": core.SEED},
               "models": list(entries.values()), "not_generated": list(failures.values())}, handle, indent=1)
    handle.write("\n")
