#!/usr/bin/env bash
# Fetches MediaPipe's published float networks into Benchmarks/Models/mediapipe/ (gitignored) for
# the benchmarks: downloads the mediapipe 0.10.14 wheel from PyPI with `pip download --no-deps`,
# extracts the 14 .tflite files of its mediapipe/modules/ folder, and writes beside each model
# MODEL.input_0.npy (seeded random values, uniform over the range MediaPipe's graph feeds that
# model: [-1, 1] for the face and pose detectors and hand_recrop, [0, 1] for the others).
#
#   Scripts/fetch_mediapipe_benchmark_models.sh [DESTINATION]
#
# The models are Google's (Apache License 2.0, Google LLC / The MediaPipe Authors), unchanged; see
# TestModels/mediapipe/README.md for the two committed as test cases.
# Environment: PYTHON (default python3; needs pip and numpy). The wheel is picked for CPython 3.11
# on manylinux x86-64 whatever the interpreter (the .tflite files are the same in every wheel).
set -euo pipefail
cd "$(dirname "$0")/.."

destination="${1:-Benchmarks/Models/mediapipe}"
python="${PYTHON:-python3}"
download="$(mktemp -d)"
trap 'rm -rf "$download"' EXIT

"$python" -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.11 \
  --platform manylinux_2_17_x86_64 --dest "$download" mediapipe==0.10.14
mkdir -p "$destination"

"$python" - "$download" "$destination" <<'PYTHON'
import glob, os, sys, zipfile
import numpy as np

download, destination = sys.argv[1], sys.argv[2]
wheel = glob.glob(os.path.join(download, "mediapipe-0.10.14-*.whl"))[0]
# MediaPipe's graphs scale the image to [-1, 1] for these models, to [0, 1] for the others.
signed_inputs = {"face_detection_short_range", "face_detection_full_range_sparse", "hand_recrop", "pose_detection"}

def input_shape(model):
  """The first input's shape, read with LiteRT when it is installed, else from the known layouts."""
  try:
    from ai_edge_litert import interpreter as litert
    return tuple(litert.Interpreter(model_path=model).get_input_details()[0]["shape"])
  except ImportError:
    return None

with zipfile.ZipFile(wheel) as archive:
  members = sorted(name for name in archive.namelist()
                   if name.startswith("mediapipe/modules/") and name.endswith(".tflite"))
  for member in members:
    name = os.path.basename(member)
    path = os.path.join(destination, name)
    with archive.open(member) as source, open(path, "wb") as target:
      target.write(source.read())
    shape = input_shape(path)
    stem = name[:-len(".tflite")]
    if shape is not None:
      low = -1.0 if stem in signed_inputs else 0.0
      values = np.random.default_rng(1234).uniform(low, 1.0, size=shape).astype(np.float32)
      np.save(os.path.join(destination, stem + ".input_0.npy"), values)
    print(f"{path}" + ("" if shape is not None else " (no input written: ai_edge_litert not installed)"))
print(f"{len(members)} models from {os.path.basename(wheel)}")
PYTHON
