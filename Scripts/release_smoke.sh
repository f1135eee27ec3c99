#!/usr/bin/env bash
# What `swift test` (a debug build) cannot see: builds `tflite` in release mode, lists any function
# that tail-calls memmove/memcpy/memset with the error register clobbered
# (Scripts/check_error_register_tail_calls.py, x86-64 only), then runs every TestModels model with
# its committed inputs under the release build and fails if one crashes (a signal instead of an exit
# code; a model that is meant to be refused exits 1 with a thrown error). Run from the root.
set -u
swift build -c release --product tflite >/dev/null || exit 1
tflite=$(swift build -c release --show-bin-path)/tflite
status=0
if [ "$(uname -m)" = x86_64 ] && command -v objdump >/dev/null; then
  python3 Scripts/check_error_register_tail_calls.py "$tflite" || status=1
fi
ran=0; refused=0; crashed=0
output=$(mktemp -d)
while read -r model; do
  inputs=()
  for file in "${model%.tflite}".input_*.npy; do [ -f "$file" ] && inputs+=(--input "$file"); done
  "$tflite" run "$model" "${inputs[@]}" --output-dir "$output" >/dev/null 2>&1
  code=$?
  ran=$((ran + 1))
  if [ $code -gt 128 ]; then crashed=$((crashed + 1)); status=1; echo "crashed (signal $((code - 128))): $model"
  elif [ $code -ne 0 ]; then refused=$((refused + 1)); fi
done < <(find TestModels -name '*.tflite' | sort)
rm -rf "$output"
echo "release tflite run: $ran models, $refused refused with an error, $crashed crashed"
exit $status
