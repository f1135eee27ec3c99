#!/bin/sh
# Regenerates TestModels/reference_dumps/: LiteRT (BUILTIN_REF) dumps of every tensor of a float, an
# int8 and a MediaPipe network, two models with WHILE loops (every subgraph is dumped, the loop
# body as its last iteration left it), and one deliberately corrupted dump, for the `tflite compare
# --reference` tests. Run from the repository root with the venv of Scripts/litert_dump_requirements.txt:
#   PYTHON=/path/to/venv/bin/python Scripts/make_reference_dumps.sh
set -eu
PYTHON=${PYTHON:-python3}
OUT=TestModels/reference_dumps
rm -rf "$OUT"
dump() {  # dump NAME MODEL-PATH-WITHOUT-.tflite [litert_dump.py options]; inputs from MODEL.input_N.npy
  name=$1 model=$2
  shift 2
  for input in "TestModels/$model".input_*.npy; do set -- "$@" --input "$input"; done
  "$PYTHON" Scripts/litert_dump.py "TestModels/$model.tflite" --output "$OUT/$name" "$@"
}
dump unet_mini_float networks/unet_mini_float
dump unet_mini_int8 networks/unet_mini_int8
# Output 0 of operator 5 (CONV_2D) shifted by one step, and every later tensor recomputed from it.
dump unet_mini_int8_corrupt_op5 networks/unet_mini_int8 --corrupt-operator 5
# The face detector's activations are large: keep the input and the tensors of at most 4 KiB.
dump mediapipe_face_detection_short_range mediapipe/mediapipe_face_detection_short_range --max-bytes 4096
# WHILE loops: a counter loop (condition and body subgraphs) and a Keras LSTM's time loop.
dump while_f32_iterate_count graphs/while_f32_iterate_count
dump lstm_f32_keras_while_loop graphs/lstm_f32_keras_while_loop
