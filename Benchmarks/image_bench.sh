#!/usr/bin/env bash
# PNG decode speed of TFLiteImage beside Pillow, in the same run: makes a 1920×1280 RGB PNG from
# scikit-learn's china.jpg (Pillow, default compression), times Pillow's decode (open + load,
# median of RUNS) and the release build of image-benchmarks on the same file, and prints the
# ratio (SwiftTFLite / Pillow: below 1 means SwiftTFLite is faster).
#
#   Benchmarks/image_bench.sh [RUNS]        (PYTHON defaults to /work/venv/bin/python, else python3)
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-20}"
python="${PYTHON:-}"
if [ -z "$python" ]; then
  if [ -x /work/venv/bin/python ]; then python=/work/venv/bin/python; else python=python3; fi
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
swift build -c release --package-path Benchmarks --scratch-path Benchmarks/.build/default --product image-benchmarks >&2
"$python" - "$work/photo.png" "$runs" <<'PY' > "$work/pillow.txt"
import sys, time, io
import numpy as np
from PIL import Image
from sklearn.datasets import load_sample_image
path, runs = sys.argv[1], int(sys.argv[2])
Image.fromarray(load_sample_image("china.jpg")).resize((1920, 1280), Image.BICUBIC).save(path)
data = open(path, "rb").read()
times = []
for run in range(runs + 1):
    started = time.perf_counter()
    image = Image.open(io.BytesIO(data))
    image.load()
    elapsed = (time.perf_counter() - started) * 1000
    if run:
        times.append(elapsed)
times.sort()
print(f"{times[len(times) // 2]:.3f} {times[0]:.3f}")
PY
read -r pillow_median pillow_min < "$work/pillow.txt"
read -r _ swift_median swift_min _ < <(Benchmarks/.build/default/release/image-benchmarks "$work/photo.png" "$runs")
echo "PNG decode, 1920x1280 RGB ($(stat -c %s "$work/photo.png" 2>/dev/null || stat -f %z "$work/photo.png") bytes), $runs runs"
printf "  %-12s median %9.3f ms  min %9.3f ms\n" SwiftTFLite "$swift_median" "$swift_min" Pillow "$pillow_median" "$pillow_min"
awk -v s="$swift_median" -v p="$pillow_median" -v a="$swift_min" -v b="$pillow_min" \
  'BEGIN { printf "  ratio SwiftTFLite/Pillow: median %.2f, min %.2f\n", s / p, a / b }'
