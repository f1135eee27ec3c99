"""Small whole networks, trained briefly on scikit-learn's bundled 8x8 digits (no downloads).

* `mobilenet_mini`: a reduced MobileNetV2 classifier (inverted residuals, depthwise convs,
  ReLU6, global average pool, dense + softmax). The `tflite demo` network.
* `efficientnet_mini`: EfficientNet / MobileNetV3-style blocks (expand, depthwise, squeeze-and-
  excite, swish and hard-swish, project, residual).
* `unet_mini`: a tiny encoder-decoder that segments the digit strokes (TRANSPOSE_CONV,
  RESIZE_BILINEAR, RESIZE_NEAREST_NEIGHBOR, skip concatenation, per-pixel logistic).
"""

import functools
import os

import numpy as np
import tensorflow as tf

from .core import FLOAT16_WEIGHTS, FLOAT32, HYBRID, INT8, UINT8, Case, Input

CASES = []
IMAGE_SIZE = 32
LABELS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
# Held-out digits written as demo inputs (indices into the test split), one per class.
DEMO_COUNT = 10


@functools.lru_cache(maxsize=None)
def digits():
  """(train_x, train_y, test_x, test_y): 32x32x3 float images in [0, 1] and integer labels."""
  from sklearn.datasets import load_digits
  data = load_digits()
  images = (data.images.astype(np.float32) / 16.0)[..., None]
  images = tf.image.resize(images, (IMAGE_SIZE, IMAGE_SIZE), method="bilinear").numpy()
  # Tint the three channels differently so the colour channels are not identical copies.
  images = np.concatenate([images, images * 0.8 + 0.1, 1.0 - images * 0.9], axis=-1).clip(0, 1)
  order = np.random.default_rng(7).permutation(len(images))
  images, labels = images[order].astype(np.float32), data.target[order].astype(np.int32)
  split = 1500
  return images[:split], labels[:split], images[split:], labels[split:]


def _batch_norm():
  # A short training run needs fast-moving statistics, or inference-mode outputs lag behind.
  return tf.keras.layers.BatchNormalization(momentum=0.9)


def _batch_norm_relu6(x):
  x = _batch_norm()(x)
  return tf.keras.layers.ReLU(6.0)(x)


def _inverted_residual(x, expansion, out_channels, stride, pad_explicitly=False):
  channels = x.shape[-1]
  y = x
  if expansion != 1:
    y = _batch_norm_relu6(tf.keras.layers.Conv2D(channels * expansion, 1, use_bias=False)(y))
  if stride == 2 and pad_explicitly:
    # Explicit PAD, then a VALID depthwise conv (padding that SAME cannot express, so PAD stays).
    y = tf.keras.layers.ZeroPadding2D(((1, 1), (1, 1)))(y)
    y = tf.keras.layers.DepthwiseConv2D(3, stride, padding="valid", use_bias=False)(y)
  else:
    y = tf.keras.layers.DepthwiseConv2D(3, stride, padding="same", use_bias=False)(y)
  y = _batch_norm_relu6(y)
  y = _batch_norm()(tf.keras.layers.Conv2D(out_channels, 1, use_bias=False)(y))
  if stride == 1 and channels == out_channels:
    y = tf.keras.layers.Add()([x, y])
  return y


def mobilenet_mini_model():
  inputs = tf.keras.Input((IMAGE_SIZE, IMAGE_SIZE, 3), batch_size=1, name="image")
  x = _batch_norm_relu6(tf.keras.layers.Conv2D(16, 3, 2, padding="same", use_bias=False)(inputs))
  x = _inverted_residual(x, 1, 8, 1)
  x = _inverted_residual(x, 4, 12, 2, pad_explicitly=True)
  x = _inverted_residual(x, 4, 12, 1)
  x = _inverted_residual(x, 4, 16, 2)
  x = _inverted_residual(x, 4, 16, 1)
  x = _batch_norm_relu6(tf.keras.layers.Conv2D(64, 1, use_bias=False)(x))
  x = tf.keras.layers.GlobalAveragePooling2D()(x)
  outputs = tf.keras.layers.Dense(len(LABELS), activation="softmax", name="probabilities")(x)
  return tf.keras.Model(inputs, outputs, name="mobilenet_mini")


def _hard_sigmoid(x):
  return tf.keras.layers.ReLU(6.0)(x + 3.0) * (1.0 / 6.0)


def _activation(kind):
  if kind == "swish":
    return tf.keras.layers.Activation(tf.nn.swish)
  return tf.keras.layers.Lambda(lambda v: v * _hard_sigmoid(v))


def _squeeze_excite(x, reduced, gate):
  channels = x.shape[-1]
  s = tf.keras.layers.GlobalAveragePooling2D(keepdims=True)(x)
  s = _activation("swish")(tf.keras.layers.Conv2D(reduced, 1)(s))
  s = tf.keras.layers.Conv2D(channels, 1)(s)
  s = tf.keras.layers.Activation("sigmoid")(s) if gate == "sigmoid" else tf.keras.layers.Lambda(_hard_sigmoid)(s)
  return tf.keras.layers.Multiply()([x, s])


def _mbconv(x, expansion, out_channels, stride, kernel, activation, gate):
  channels = x.shape[-1]
  y = tf.keras.layers.Conv2D(channels * expansion, 1, use_bias=False)(x)
  y = _activation(activation)(_batch_norm()(y))
  y = tf.keras.layers.DepthwiseConv2D(kernel, stride, padding="same", use_bias=False)(y)
  y = _activation(activation)(_batch_norm()(y))
  y = _squeeze_excite(y, max(4, channels // 4), gate)
  y = _batch_norm()(tf.keras.layers.Conv2D(out_channels, 1, use_bias=False)(y))
  if stride == 1 and channels == out_channels:
    y = tf.keras.layers.Add()([x, y])
  return y


def efficientnet_mini_model():
  inputs = tf.keras.Input((IMAGE_SIZE, IMAGE_SIZE, 3), batch_size=1, name="image")
  x = tf.keras.layers.Rescaling(2.0, offset=-1.0)(inputs)
  x = tf.keras.layers.Conv2D(16, 3, 2, padding="same", use_bias=False)(x)
  x = _activation("swish")(_batch_norm()(x))
  x = _mbconv(x, 4, 16, 1, 3, "swish", "sigmoid")
  x = _mbconv(x, 4, 24, 2, 5, "swish", "sigmoid")
  x = _mbconv(x, 3, 24, 1, 3, "hard_swish", "hard_sigmoid")
  x = _mbconv(x, 3, 32, 2, 3, "hard_swish", "hard_sigmoid")
  x = _activation("hard_swish")(tf.keras.layers.Conv2D(64, 1)(x))
  x = tf.keras.layers.GlobalAveragePooling2D()(x)
  outputs = tf.keras.layers.Dense(len(LABELS), activation="softmax", name="probabilities")(x)
  return tf.keras.Model(inputs, outputs, name="efficientnet_mini")


def unet_mini_model():
  inputs = tf.keras.Input((IMAGE_SIZE, IMAGE_SIZE, 3), batch_size=1, name="image")
  e1 = tf.keras.layers.Conv2D(12, 3, 2, padding="same", activation="relu")(inputs)       # 16x16
  e2 = tf.keras.layers.Conv2D(24, 3, 2, padding="same", activation="relu")(e1)           # 8x8
  b = tf.keras.layers.Conv2D(24, 3, 2, padding="same", activation="relu")(e2)            # 4x4
  d2 = tf.keras.layers.Lambda(lambda v: tf.compat.v1.image.resize_nearest_neighbor(v, (8, 8)))(b)  # 8x8
  d2 = tf.keras.layers.Concatenate()([d2, e2])
  d2 = tf.keras.layers.Conv2D(16, 3, padding="same", activation="relu")(d2)
  d1 = tf.keras.layers.Conv2DTranspose(12, 3, 2, padding="same", activation="relu")(d2)  # 16x16
  d1 = tf.keras.layers.Concatenate()([d1, e1])
  d1 = tf.keras.layers.Conv2D(8, 3, padding="same", activation="relu")(d1)
  up = tf.keras.layers.UpSampling2D(2, interpolation="bilinear")(d1)                    # 32x32
  outputs = tf.keras.layers.Conv2D(1, 1, activation="sigmoid", name="mask")(up)
  return tf.keras.Model(inputs, outputs, name="unet_mini")


def _segmentation_targets(images):
  return (images[..., :1] > 0.5).astype(np.float32)


@functools.lru_cache(maxsize=None)
def trained(name):
  """The network `name`, trained briefly with fixed seeds."""
  tf.keras.utils.set_random_seed(1234)
  train_x, train_y, test_x, test_y = digits()
  if name == "unet_mini":
    model = unet_mini_model()
    model.compile(tf.keras.optimizers.Adam(3e-3), "binary_crossentropy")
    model.fit(train_x, _segmentation_targets(train_x), batch_size=32, epochs=4, verbose=0, shuffle=False)
    return model
  model = {"mobilenet_mini": mobilenet_mini_model, "efficientnet_mini": efficientnet_mini_model}[name]()
  model.compile(tf.keras.optimizers.Adam(3e-3), "sparse_categorical_crossentropy", metrics=["accuracy"])
  model.fit(train_x, train_y, batch_size=32, epochs=8, verbose=0, shuffle=False)
  return model


def _representative(r):
  images = digits()[0][:100]
  def samples():
    for image in images:
      yield [image[None]]
  return samples


def _accuracy_with_reference(model_bytes):
  """Top-1 accuracy of the converted classifier on the held-out digits, run with BUILTIN_REF."""
  from ai_edge_litert import interpreter as litert
  interpreter = litert.Interpreter(model_content=model_bytes,
                                   experimental_op_resolver_type=litert.OpResolverType.BUILTIN_REF)
  interpreter.allocate_tensors()
  detail = interpreter.get_input_details()[0]
  output = interpreter.get_output_details()[0]
  _, _, test_x, test_y = digits()
  correct = 0
  for image, label in zip(test_x, test_y):
    value = image[None]
    if detail["dtype"] != np.float32:
      scale, zero_point = detail["quantization"]
      info = np.iinfo(detail["dtype"])
      value = np.clip(np.round(value / scale) + zero_point, info.min, info.max).astype(detail["dtype"])
    interpreter.set_tensor(detail["index"], value)
    interpreter.invoke()
    correct += int(np.argmax(interpreter.get_tensor(output["index"])[0]) == label)
  return correct / len(test_y)


def _classifier_accuracy(entry, model_bytes):
  entry["test_accuracy"] = round(_accuracy_with_reference(model_bytes), 4)


MODE_SUFFIX = {FLOAT32: "float", INT8: "int8", UINT8: "uint8", HYBRID: "hybrid", FLOAT16_WEIGHTS: "fp16"}


def network(name, modes, expect):
  for mode in modes:
    test_image = Input((1, IMAGE_SIZE, IMAGE_SIZE, 3), 0.0, 1.0, values=lambda r: digits()[2][:1])
    CASES.append(Case(
        name=f"{name}_{MODE_SUFFIX[mode]}", group="networks", mode=mode, kind="network", inputs=[test_image],
        make=lambda r, n=name: trained(n), expect=expect, representative=_representative,
        annotate=_classifier_accuracy if name != "unet_mini" else None,
        extra={"trained_on": "scikit-learn load_digits (8x8 upscaled to 32x32x3, tinted), 1500 train / 297 test"}))


network("mobilenet_mini", (FLOAT32, INT8, UINT8, FLOAT16_WEIGHTS, HYBRID),
        ["CONV_2D", "DEPTHWISE_CONV_2D", "ADD", "PAD", "MEAN", "FULLY_CONNECTED", "SOFTMAX"])
network("efficientnet_mini", (FLOAT32, INT8),
        ["CONV_2D", "DEPTHWISE_CONV_2D", "LOGISTIC", "MUL", "MEAN", "HARD_SWISH", "FULLY_CONNECTED"])
network("unet_mini", (FLOAT32, INT8),
        ["CONV_2D", "TRANSPOSE_CONV", "RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR", "CONCATENATION", "LOGISTIC"])


def write_demo(root):
  """Labels and one held-out image per digit for `tflite demo`; returns the manifest's demo section."""
  _, _, test_x, test_y = digits()
  directory = os.path.join(root, "networks", "demo")
  os.makedirs(directory, exist_ok=True)
  with open(os.path.join(root, "networks", "mobilenet_mini_labels.txt"), "w") as handle:
    handle.write("\n".join(LABELS) + "\n")
  images = []
  for label in range(DEMO_COUNT):
    index = int(np.flatnonzero(test_y == label)[0])
    file = f"networks/demo/digit_{label}.npy"
    np.save(os.path.join(root, file), test_x[index:index + 1], allow_pickle=False)
    images.append({"file": file, "label": label, "label_name": LABELS[label]})
  return {"model": "networks/mobilenet_mini_float.tflite", "labels": "networks/mobilenet_mini_labels.txt",
          "inputs": images, "input_range": [0.0, 1.0]}
