#!/usr/bin/env bash
# TFLiteImage beside Pillow (+ NumPy), in the same run, on files made here from scikit-learn's
# china.jpg (nothing committed):
#   photo.jpg  upscaled to 4000×3000, quality 90, EXIF orientation 6 (rotate 90°)
#   photo.png  1920×1280 RGB, Pillow's default compression
# Cases: JPEG decode and PNG decode (orientation not applied: Pillow's open + load), and photo →
# detection input tensor: decode, EXIF orientation, bilinear stretch to 320×320, uint8
# quantization (Pillow: exif_transpose, resize(BILINEAR), NumPy round/clip). Times are process CPU
# time (median of RUNS after a warm-up), which other jobs on a shared machine inflate less than
# wall time. Then the peak resident memory of one decode in a fresh process, both sides, against
# output pixels + file bytes. Ratios are SwiftTFLite / Pillow: below 1 means SwiftTFLite is faster.
#
#   Benchmarks/image_bench.sh [RUNS]        (PYTHON defaults to /work/venv/bin/python, else python3)
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-10}"
python="${PYTHON:-}"
if [ -z "$python" ]; then
  if [ -x /work/venv/bin/python ]; then python=/work/venv/bin/python; else python=python3; fi
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
swift build -c release --package-path Benchmarks --scratch-path Benchmarks/.build/default --product image-benchmarks >&2
tool=Benchmarks/.build/default/release/image-benchmarks

"$python" - "$work" <<'PY'
import sys
from PIL import Image
from sklearn.datasets import load_sample_image
photo = Image.fromarray(load_sample_image("china.jpg"))
exif = Image.Exif()
exif[0x0112] = 6
photo.resize((4000, 3000), Image.BICUBIC).save(sys.argv[1] + "/photo.jpg", quality=90, exif=exif)
photo.resize((1920, 1280), Image.BICUBIC).save(sys.argv[1] + "/photo.png")
PY

pillow() {  # MODE FILE: the same output format as image-benchmarks
  "$python" - "$1" "$2" "$runs" <<'PY'
import io, resource, sys, time
import numpy as np
from PIL import Image, ImageOps
mode, path, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
data = open(path, "rb").read()
def decode():
    image = Image.open(io.BytesIO(data))
    image.load()
    return image
def tensor():
    image = ImageOps.exif_transpose(Image.open(io.BytesIO(data))).convert("RGB")
    resized = np.asarray(image.resize((320, 320), Image.BILINEAR), dtype=np.float32)
    return np.clip(np.round(resized / 1.0) + 0, 0, 255).astype(np.uint8)
if mode == "memory":
    baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    image = decode()
    print("memory", baseline, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
          image.width * image.height * len(image.getbands()), len(data))
    sys.exit()
work = decode if mode == "decode" else tensor
cpu, wall = [], []
for run in range(runs + 1):
    cpu_start, wall_start = time.process_time(), time.perf_counter()
    work()
    if run:
        cpu.append((time.process_time() - cpu_start) * 1000)
        wall.append((time.perf_counter() - wall_start) * 1000)
cpu.sort(); wall.sort()
print(mode, f"{cpu[runs // 2]:.3f} {cpu[0]:.3f} {wall[runs // 2]:.3f}")
PY
}

compare() {  # LABEL MODE FILE [TOOL ARGUMENTS...]
  local label="$1" mode="$2" file="$3"
  shift 3
  read -r _ p_cpu p_min p_wall < <(pillow "$mode" "$file")
  read -r _ s_cpu s_min s_wall _ < <("$tool" "$mode" "$file" "$@" "$runs")
  printf "%-34s SwiftTFLite cpu %8.1f ms (min %8.1f, wall %8.1f)   Pillow cpu %8.1f ms (min %8.1f, wall %8.1f)   ratio %.2f (min %.2f)\n" \
    "$label" "$s_cpu" "$s_min" "$s_wall" "$p_cpu" "$p_min" "$p_wall" \
    "$(awk -v a="$s_cpu" -v b="$p_cpu" 'BEGIN { print a / b }')" "$(awk -v a="$s_min" -v b="$p_min" 'BEGIN { print a / b }')"
}

memory() {  # LABEL FILE
  read -r _ s_base s_peak pixels bytes < <("$tool" memory "$2")
  read -r _ p_base p_peak _ _ < <(pillow memory "$2")
  awk -v l="$1" -v sb="$s_base" -v sp="$s_peak" -v pb="$p_base" -v pp="$p_peak" -v px="$pixels" -v by="$bytes" 'BEGIN {
    budget = (px + by) / 1024
    printf "%-34s peak during decode: SwiftTFLite %.1f MiB (%.2f x (pixels + file)), Pillow %.1f MiB (%.2f x); pixels + file %.1f MiB\n",
      l, (sp - sb + by / 1024) / 1024, (sp - sb + by / 1024) / budget, (pp - pb + by / 1024) / 1024, (pp - pb + by / 1024) / budget, budget / 1024 }'
}

echo "photo.jpg $(wc -c < "$work/photo.jpg") bytes, photo.png $(wc -c < "$work/photo.png") bytes; $runs runs; $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)"
compare "JPEG decode 4000x3000 q90" decode "$work/photo.jpg"
compare "PNG decode 1920x1280 RGB" decode "$work/photo.png"
compare "JPEG photo -> 320x320 uint8 tensor" tensor "$work/photo.jpg" 320 320
memory "JPEG decode 4000x3000 q90" "$work/photo.jpg"
memory "PNG decode 1920x1280 RGB" "$work/photo.png"
