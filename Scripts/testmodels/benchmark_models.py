"""Full-size networks for benchmarking (written to Benchmarks/Models/, never committed).

keras.applications MobileNetV2 (224x224, alpha 1.0) and EfficientNetB0 with random (seeded)
weights, in float32 and full int8 (int8 input and output, calibrated on random images). Each
gets the same files as a TestModels case (model, input, BUILTIN_REF output) and a manifest.
"""

import functools
import json
import os

import numpy as np
import tensorflow as tf

from . import core
from .core import FLOAT32, INT8, Case, Input


def _random_images(lo, hi):
  def representative(r):
    def samples():
      for _ in range(8):
        yield [r.uniform((1, 224, 224, 3), lo, hi)]
    return samples
  return representative


@functools.lru_cache(maxsize=None)
def _keras_application(name, lo, hi):
  """The network with seeded weights (built once, shared by its float and int8 cases)."""
  tf.keras.utils.set_random_seed(core.SEED)
  if name == "mobilenet_v2":
    model = tf.keras.applications.MobileNetV2(input_shape=(224, 224, 3), weights=None)
  else:
    model = tf.keras.applications.EfficientNetB0(input_shape=(224, 224, 3), weights=None)
  _set_batch_norm_statistics(model, core.Rng(name + "/batch_norm").uniform((8, 224, 224, 3), lo, hi))
  return model


def _set_batch_norm_statistics(model, images):
  """Gives every BatchNormalization the statistics of one batch of images. With the untrained
  defaults (mean 0, variance 1) activations shrink layer after layer until the logits are all
  equal, and the int8 SOFTMAX input scale becomes so small that BUILTIN_REF aborts."""
  layers = [layer for layer in model.layers if isinstance(layer, tf.keras.layers.BatchNormalization)]
  for layer in layers:
    layer.momentum = 0.0
  model(images, training=True)


# (name, input range the network expects: MobileNetV2 takes [-1, 1], EfficientNetB0 rescales [0, 255] itself)
NETWORKS = [("mobilenet_v2", (-1.0, 1.0)), ("efficientnet_b0", (0.0, 255.0))]


def cases():
  result = []
  for name, (lo, hi) in NETWORKS:
    for mode, suffix in ((FLOAT32, "float"), (INT8, "int8")):
      result.append(Case(name=f"{name}_{suffix}", group="", mode=mode, kind="network",
                         inputs=[Input((1, 224, 224, 3), lo, hi)],
                         make=lambda r, n=name, a=lo, b=hi: _keras_application(n, a, b), expect=["CONV_2D"],
                         representative=_random_images(lo, hi), widen=1.0, isolated=True))
  return result


def write_all(directory):
  os.makedirs(directory, exist_ok=True)
  entries, failures = [], []
  for case in cases():
    try:
      entry = core.generate(case, directory)
      entry.pop("tensors")
      entries.append(entry)
      print(f"benchmark model {case.name}: ok", flush=True)
    except core.NotGenerated as reason:
      failures.append({"name": case.name, "reason": str(reason)})
      print(f"benchmark model {case.name}: NOT GENERATED: {reason}", flush=True)
  with open(os.path.join(directory, "manifest.json"), "w") as handle:
    json.dump({"generator": {"tensorflow": tf.__version__, "numpy": np.__version__, "seed": core.SEED},
               "models": entries, "not_generated": failures}, handle, indent=1)
    handle.write("\n")
