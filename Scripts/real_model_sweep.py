"""Converts real Keras networks to .tflite in several ways and checks SwiftTFLite against LiteRT.

  /work/venv-ref/bin/python Scripts/real_model_sweep.py [--out DIR] [--only REGEX] [--variants f32,int8,...]
                                                        [--skip-build] [--skip-compare] [--cli PATH]

Every `keras.applications` architecture (random weights, small input) and a few common custom
architectures (transformer encoder, Conv1D text classifier, UNet, detector head, ...) are converted
as float32, float16 weights, dynamic-range (hybrid) and full int8 (int8 and float input/output).
For each model the tool writes a seeded input and LiteRT's outputs (BUILTIN_REF; for float models
also XNNPACK and the builtin kernels without delegate) under DIR/<model>/, then runs
`tflite compare` and prints one line per model and variant. Models are cached: delete a model's
directory to rebuild it. The models are not part of the repository.

Verdicts: float models must be within LiteRT's own XNNPACK-vs-BUILTIN_REF spread (or 1e-5 x range);
quantized models must match BUILTIN_REF bit for bit; dynamic-range (hybrid) models, whose float outputs
LiteRT's own kernels do not agree on either, are judged like float ones.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_OUT = "/work/realmodels/keras"
DEFAULT_CLI = os.path.join(ROOT, ".build", "release", "tflite")
SEED = 1234

VARIANTS = ("f32", "fp16w", "dynamic", "int8", "int8_floatio")
FLOAT_VARIANTS = ("f32", "fp16w")
# Variants with float outputs whose error is judged against LiteRT's own spread between its kernels:
# in hybrid networks a last-bit difference of a float op can move a value of the next layer's
# run-time input quantization by one step, so LiteRT's own kernels disagree too.
SPREAD_VARIANTS = FLOAT_VARIANTS + ("dynamic",)
SPREAD_RESOLVERS = ("BUILTIN", "BUILTIN_WITHOUT_DEFAULT_DELEGATES")


# ---------------------------------------------------------------------------------------------
# Models: name -> (builder, [(input shape without batch, lo, hi, dtype)])


def _application(name, size, preprocessing_range=False, **options):
  """A keras.applications model with random weights at `size` x `size` x 3, returning logits (a
  softmax over 1000 near-equal random logits would hide every error). Models that include their
  own preprocessing see pixel values in [0, 255], the others values in [-1, 1]."""
  def build():
    import keras
    return getattr(keras.applications, name)(weights=None, input_shape=(size, size, 3),
                                             classifier_activation=None, **options)
  return build, [((size, size, 3), 0.0 if preprocessing_range else -1.0, 255.0 if preprocessing_range else 1.0,
                  "float32")]


def _vit():
  import keras
  from keras import layers
  tokens, width, heads = 16, 64, 4
  image = keras.Input((32, 32, 3))
  patches = layers.Conv2D(width, 8, strides=8)(image)
  x = layers.Reshape((tokens, width))(patches)
  x = x + layers.Embedding(tokens, width)(keras.ops.arange(tokens))
  for _ in range(2):
    attended = layers.MultiHeadAttention(heads, width // heads)(layers.LayerNormalization()(x),
                                                                layers.LayerNormalization()(x))
    x = x + attended
    hidden = layers.Dense(width * 2, activation="gelu")(layers.LayerNormalization(epsilon=1e-6)(x))
    x = x + layers.Dense(width)(hidden)
  x = layers.LayerNormalization()(x)
  x = layers.GlobalAveragePooling1D()(x)
  return keras.Model(image, layers.Dense(10, activation="softmax")(x))


def _text_conv1d():
  import keras
  from keras import layers
  ids = keras.Input((64,), dtype="int32")
  x = layers.Embedding(1000, 32)(ids)
  x = layers.Conv1D(48, 5, padding="same", activation="relu")(x)
  x = layers.MaxPooling1D(2)(x)
  x = layers.Conv1D(64, 3, dilation_rate=2, activation="relu")(x)
  x = layers.GlobalAveragePooling1D()(x)
  x = layers.Dropout(0.2)(x)
  return keras.Model(ids, layers.Dense(4, activation="softmax")(x))


def _audio_conv1d():
  import keras
  from keras import layers
  wave = keras.Input((1600, 1))
  x = layers.Conv1D(16, 9, strides=4, activation="relu")(wave)
  x = layers.BatchNormalization()(x)
  x = layers.SeparableConv1D(32, 5, strides=2, activation="relu")(x)
  x = layers.AveragePooling1D(2)(x)
  x = layers.Conv1D(32, 3, padding="same", activation="swish")(x)
  x = layers.GlobalMaxPooling1D()(x)
  return keras.Model(wave, layers.Dense(6)(x))


def _unet():
  import keras
  from keras import layers
  image = keras.Input((64, 64, 3))
  skips, x = [], image
  for filters in (16, 32, 64):
    x = layers.Conv2D(filters, 3, padding="same", activation="relu")(x)
    x = layers.BatchNormalization()(x)
    skips.append(x)
    x = layers.MaxPooling2D()(x)
  x = layers.SeparableConv2D(128, 3, padding="same", activation="relu")(x)
  for filters, skip, transpose in zip((64, 32, 16), reversed(skips), (True, False, True)):
    if transpose:
      x = layers.Conv2DTranspose(filters, 3, strides=2, padding="same")(x)
    else:
      x = layers.UpSampling2D(interpolation="bilinear")(x)
      x = layers.Conv2D(filters, 1)(x)
    x = layers.Concatenate()([x, skip])
    x = layers.Conv2D(filters, 3, padding="same", activation="relu")(x)
  return keras.Model(image, layers.Conv2D(2, 1, activation="softmax")(x))


def _group_norm_net():
  import keras
  from keras import layers
  image = keras.Input((48, 48, 3))
  x = layers.Conv2D(32, 3, strides=2, padding="same")(image)
  x = layers.GroupNormalization(groups=8)(x)
  x = layers.Activation("swish")(x)
  x = layers.SeparableConv2D(64, 3, padding="same", depth_multiplier=2)(x)
  x = layers.GroupNormalization(groups=4)(x)
  x = layers.ReLU(max_value=6.0)(x)
  x = layers.UpSampling2D(size=2, interpolation="nearest")(x)
  x = layers.DepthwiseConv2D(3, strides=2, padding="valid")(x)
  x = layers.LeakyReLU(negative_slope=0.1)(x)
  x = layers.GlobalAveragePooling2D()(x)
  return keras.Model(image, layers.Dense(5)(x))


def _detector():
  import keras
  from keras import layers
  anchors, classes = 3, 4
  image = keras.Input((64, 64, 3))
  x = layers.Conv2D(16, 3, strides=2, padding="same", activation="relu6")(image)
  x = layers.Conv2D(32, 3, strides=2, padding="same", activation="relu6")(x)
  features = [x]
  x = layers.Conv2D(64, 3, strides=2, padding="same", activation="relu6")(x)
  features.append(x)
  boxes, scores = [], []
  for feature in features:
    cells = feature.shape[1] * feature.shape[2]
    box = layers.Conv2D(anchors * 4, 3, padding="same")(feature)
    boxes.append(layers.Reshape((cells * anchors, 4))(box))
    score = layers.Conv2D(anchors * classes, 3, padding="same")(feature)
    scores.append(layers.Reshape((cells * anchors, classes))(score))
  boxes = layers.Concatenate(axis=1)(boxes)
  scores = layers.Activation("sigmoid")(layers.Concatenate(axis=1)(scores))
  return keras.Model(image, [boxes, scores])


MODELS = {
    "ViTSmall": (_vit, [((32, 32, 3), -1.0, 1.0, "float32")]),
    "TextConv1D": (_text_conv1d, [((64,), 0, 999, "int32")]),
    "AudioConv1D": (_audio_conv1d, [((1600, 1), -1.0, 1.0, "float32")]),
    "UNet": (_unet, [((64, 64, 3), -1.0, 1.0, "float32")]),
    "GroupNormSeparable": (_group_norm_net, [((48, 48, 3), -1.0, 1.0, "float32")]),
    "DetectorHead": (_detector, [((64, 64, 3), -1.0, 1.0, "float32")]),
    "MobileNet": _application("MobileNet", 96),
    "MobileNetV2": _application("MobileNetV2", 96),
    "MobileNetV3Small": _application("MobileNetV3Small", 96, preprocessing_range=True),
    "MobileNetV3Large": _application("MobileNetV3Large", 96, preprocessing_range=True),
    "EfficientNetB0": _application("EfficientNetB0", 96, preprocessing_range=True),
    "EfficientNetV2B0": _application("EfficientNetV2B0", 96, preprocessing_range=True),
    "ConvNeXtTiny": _application("ConvNeXtTiny", 64, preprocessing_range=True),
    "ResNet50": _application("ResNet50", 96),
    "ResNet50V2": _application("ResNet50V2", 96),
    "VGG16": _application("VGG16", 64),
    "InceptionV3": _application("InceptionV3", 96),
    "InceptionResNetV2": _application("InceptionResNetV2", 96),
    "Xception": _application("Xception", 96),
    "DenseNet121": _application("DenseNet121", 96),
    "NASNetMobile": _application("NASNetMobile", 96),
}


# ---------------------------------------------------------------------------------------------
# Building


def _draw(inputs, rng):
  values = []
  for shape, lo, hi, dtype in inputs:
    if dtype == "float32":
      values.append(rng.uniform(lo, hi, size=(1,) + tuple(shape)).astype(np.float32))
    else:
      values.append(rng.integers(lo, hi, size=(1,) + tuple(shape), endpoint=True).astype(dtype))
  return values


def _convert(saved_model, variant, inputs, name):
  import tensorflow as tf
  converter = tf.lite.TFLiteConverter.from_saved_model(saved_model)
  if variant != "f32":
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
  if variant == "fp16w":
    converter.target_spec.supported_types = [tf.float16]
  if variant.startswith("int8"):
    rng = np.random.default_rng([SEED, len(name), 7])

    def representative():
      for _ in range(8):
        yield _draw(inputs, rng)
    converter.representative_dataset = representative
    converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    if variant == "int8":
      if inputs[0][3] == "float32":
        converter.inference_input_type = tf.int8
      converter.inference_output_type = tf.int8
  return converter.convert()


def _run_litert(model_bytes, inputs, resolver):
  """LiteRT's outputs in a child process (some reference kernels abort the process) and the
  seconds the run took including the child's start."""
  from testmodels import litert_run
  started = time.time()
  outputs = litert_run.run_isolated(model_bytes, inputs, resolver)
  return outputs, time.time() - started


def _model_inputs(path, float_inputs):
  """The float inputs, quantized where the model takes quantized inputs."""
  from ai_edge_litert import interpreter as litert
  details = litert.Interpreter(model_path=path).get_input_details()
  result = []
  for detail, value in zip(details, float_inputs):
    if detail["dtype"] != value.dtype and value.dtype == np.float32:
      scale, zero_point = detail["quantization"]
      info = np.iinfo(detail["dtype"])
      value = np.clip(np.round(value / scale) + zero_point, info.min, info.max).astype(detail["dtype"])
    result.append(value)
  return result


def build_model(name, out, variants):
  import keras
  builder, inputs = MODELS[name]
  directory = os.path.join(out, name)
  os.makedirs(directory, exist_ok=True)
  missing = [v for v in variants if not os.path.exists(os.path.join(directory, v, "facts.json"))]
  if not missing:
    return
  keras.utils.set_random_seed(SEED)
  model = builder()
  # Export once: converting from the SavedModel is faster than tracing the Keras model per variant.
  saved_model = os.path.join(directory, "saved_model")
  model.export(saved_model, verbose=False)
  float_inputs = _draw(inputs, np.random.default_rng([SEED, len(name)]))
  for variant in missing:
    target = os.path.join(directory, variant)
    os.makedirs(target, exist_ok=True)
    facts = {"model": name, "variant": variant}
    started = time.time()
    try:
      model_bytes = _convert(saved_model, variant, inputs, name)
    except Exception as error:  # the converter raises many unrelated types
      facts["not_generated"] = f"converter failed: {str(error).strip().splitlines()[0][:200]}"
      _write_json(os.path.join(target, "facts.json"), facts)
      continue
    facts["convert_seconds"] = round(time.time() - started, 1)
    model_path = os.path.join(target, "model.tflite")
    with open(model_path, "wb") as handle:
      handle.write(model_bytes)
    values = _model_inputs(model_path, float_inputs)
    facts["inputs"] = []
    for index, value in enumerate(values):
      file = f"input{index}.npy"
      np.save(os.path.join(target, file), value)
      facts["inputs"].append(file)
    resolvers = ["BUILTIN_REF"] + (list(SPREAD_RESOLVERS) if variant in SPREAD_VARIANTS else [])
    facts["outputs"], facts["litert_seconds"] = {}, {}
    for resolver in resolvers:
      try:
        outputs, elapsed = _run_litert(model_bytes, values, resolver)
      except Exception as error:
        facts.setdefault("litert_errors", {})[resolver] = str(error).strip().splitlines()[0][:200]
        continue
      facts["litert_seconds"][resolver] = round(elapsed, 4)
      facts["outputs"][resolver] = []
      for index, output in enumerate(outputs):
        file = f"{resolver.lower()}_output{index}.npy"
        np.save(os.path.join(target, file), output)
        facts["outputs"][resolver].append(file)
    if "BUILTIN_REF" not in facts["outputs"] and "BUILTIN_WITHOUT_DEFAULT_DELEGATES" not in facts["outputs"]:
      # The reference kernels failed (BUILTIN_REF lacks TILE version 3, and its int8 SOFTMAX aborts
      # on tiny input scales): fall back to the builtin kernels, which are not always bit-exact with
      # the reference ones, and say so.
      try:
        outputs, elapsed = _run_litert(model_bytes, values, "BUILTIN_WITHOUT_DEFAULT_DELEGATES")
        facts["litert_seconds"]["BUILTIN_WITHOUT_DEFAULT_DELEGATES"] = round(elapsed, 4)
        facts["outputs"]["BUILTIN_WITHOUT_DEFAULT_DELEGATES"] = []
        for index, output in enumerate(outputs):
          file = f"builtin_without_default_delegates_output{index}.npy"
          np.save(os.path.join(target, file), output)
          facts["outputs"]["BUILTIN_WITHOUT_DEFAULT_DELEGATES"].append(file)
      except Exception as error:
        facts.setdefault("litert_errors", {})["BUILTIN_WITHOUT_DEFAULT_DELEGATES"] = str(error)[:200]
    _write_json(os.path.join(target, "facts.json"), facts)
    print(f"built {name}/{variant} in {time.time() - started:.0f} s", flush=True)


def _write_json(path, value):
  with open(path, "w") as handle:
    json.dump(value, handle, indent=1)


# ---------------------------------------------------------------------------------------------
# Comparing


def _load(target, files):
  return [np.load(os.path.join(target, f)) for f in files]


def _max_error(a_list, b_list):
  return max((float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64)), initial=0.0))
              for a, b in zip(a_list, b_list)), default=0.0)


def compare_model(name, variant, out, cli, timeout):
  """One result row: status (OK / MISMATCH / FAILED / ...), our error, LiteRT's spread, details."""
  target = os.path.join(out, name, variant)
  facts_path = os.path.join(target, "facts.json")
  if not os.path.exists(facts_path):
    return {"status": "NOT BUILT"}
  with open(facts_path) as handle:
    facts = json.load(handle)
  if "not_generated" in facts:
    return {"status": "NOT CONVERTED", "detail": facts["not_generated"]}
  floating = variant in FLOAT_VARIANTS
  resolver = "BUILTIN_REF" if floating or "BUILTIN_REF" in facts["outputs"] else "BUILTIN_WITHOUT_DEFAULT_DELEGATES"
  if resolver not in facts["outputs"]:
    return {"status": "NO REF", "detail": json.dumps(facts.get("litert_errors"))}
  reference = _load(target, facts["outputs"][resolver])
  row = {"status": "", "ref_seconds": facts["litert_seconds"].get(resolver),
         "detail": "" if resolver == "BUILTIN_REF" else
         f"(vs {resolver}; BUILTIN_REF: {facts.get('litert_errors', {}).get('BUILTIN_REF', '')[:80]}) "}
  if variant in SPREAD_VARIANTS:
    value_range = max(float(np.max(r) - np.min(r)) for r in reference if np.issubdtype(r.dtype, np.floating))
    # Outputs of the other resolvers, by the file names build_model gives them.
    other_outputs = [[os.path.join(target, f"{r.lower()}_output{i}.npy") for i in range(len(reference))]
                     for r in SPREAD_RESOLVERS]
    spreads = [_max_error([np.load(f) for f in files], reference)
               for files in other_outputs if all(os.path.exists(f) for f in files)]
    row["litert_spread"] = max(spreads) if spreads else None
    atol = max(row["litert_spread"] or 0.0, 1e-5 * max(1.0, value_range))
  else:
    atol = 0.0
  command = [cli, "compare", os.path.join(target, "model.tflite"), "--atol", f"{atol:.9g}", "--rtol", "0"]
  command += [arg for f in facts["inputs"] for arg in ("--input", os.path.join(target, f))]
  command += [arg for f in facts["outputs"][resolver] for arg in ("--expected", os.path.join(target, f))]
  started = time.time()
  try:
    result = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
  except subprocess.TimeoutExpired:
    return dict(row, status="TIMEOUT", detail=f"> {timeout} s")
  row["our_seconds"] = round(time.time() - started, 3)
  errors = [float(m) for m in re.findall(r"max abs error ([0-9.eE+-]+|nan|inf)", result.stdout)]
  row["max_error"] = max(errors) if errors else None
  row["atol"] = atol
  if result.returncode == 0:
    row["status"] = "OK"
  elif "MISMATCH" in result.stdout:
    # Against the optimized builtin kernels a quantized difference is not necessarily ours.
    row["status"] = "MISMATCH" if resolver == "BUILTIN_REF" else "DIFF(BUILTIN)"
    row["detail"] += " | ".join(line.strip() for line in result.stdout.splitlines() if "beyond" in line or "differ" in line)[:300]
  else:
    row["status"] = "FAILED" if result.returncode > 0 else f"CRASH({result.returncode})"
    row["detail"] += (result.stderr.strip() or result.stdout.strip()).splitlines()[-1][:300] if (result.stderr or result.stdout) else ""
  return row


def _format(value):
  return "-" if value is None else f"{value:.3g}"


def main():
  parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("--out", default=DEFAULT_OUT)
  parser.add_argument("--only", help="models whose name matches this regular expression")
  parser.add_argument("--variants", default=",".join(VARIANTS))
  parser.add_argument("--skip-build", action="store_true")
  parser.add_argument("--skip-compare", action="store_true")
  parser.add_argument("--cli", default=DEFAULT_CLI)
  parser.add_argument("--timeout", type=float, default=300)
  parser.add_argument("--json", help="also write the result rows to this file")
  args = parser.parse_args()
  variants = [v for v in args.variants.split(",") if v]
  unknown = set(variants) - set(VARIANTS)
  if unknown:
    raise SystemExit(f"unknown variants {sorted(unknown)}; known: {VARIANTS}")
  names = [n for n in MODELS if not args.only or re.search(args.only, n)]

  if not args.skip_build:
    for name in names:
      build_model(name, args.out, variants)
  if args.skip_compare:
    return

  rows = []
  print(f"{'model':<20} {'variant':<13} {'status':<14} {'max err':>9} {'atol':>9} {'litert spread':>13} "
        f"{'ours s':>7} {'ref s':>7}  detail", flush=True)
  for name in names:
    for variant in variants:
      row = dict(compare_model(name, variant, args.out, args.cli, args.timeout), model=name, variant=variant)
      rows.append(row)
      print(f"{name:<20} {variant:<13} {row['status']:<14} {_format(row.get('max_error')):>9} "
            f"{_format(row.get('atol')):>9} {_format(row.get('litert_spread')):>13} "
            f"{_format(row.get('our_seconds')):>7} {_format(row.get('ref_seconds')):>7}  {row.get('detail', '')}",
            flush=True)
  counts = {}
  for row in rows:
    counts[row["status"]] = counts.get(row["status"], 0) + 1
  print(f"{len(names)} models x {len(variants)} variants: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
  if args.json:
    _write_json(args.json, rows)


if __name__ == "__main__":
  main()
