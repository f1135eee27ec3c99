#!/usr/bin/env bash
# Times the whole networks of TestModels/ and Benchmarks/Models/ with SwiftTFLite, built in release
# mode twice (default flags, and -target-cpu native), and with LiteRT (XNNPACK, builtin optimized
# kernels, BUILTIN_REF reference kernels) in the same run, one thread each, and prints the table
# with ratios (SwiftTFLite median / LiteRT median: below 1 means SwiftTFLite is faster).
#
#   Benchmarks/run.sh [--runs N] [--warmup N] [--markdown] [MODEL_OR_DIR...]
#
# --markdown times CPU per invoke instead (Benchmarks/cpu_time.py, steadier on a shared machine;
# --runs defaults to 5 then) and prints the README's benchmark table in markdown.
#
# Without paths it times every network model-benchmarks finds (TestModels/ and Benchmarks/Models/).
# Small networks want more runs than large ones on a loaded machine, e.g.
#   Benchmarks/run.sh --runs 400 TestModels/networks && Benchmarks/run.sh --runs 30 Benchmarks/Models
#
# Environment: PYTHON (default Scripts/.venv/bin/python, else python3) runs litert_bench.py.
set -euo pipefail
cd "$(dirname "$0")/.."

runs=
warmup=5
markdown=0
paths=()
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --warmup) warmup="$2"; shift 2 ;;
    --markdown) markdown=1; shift ;;
    --*) echo "usage: Benchmarks/run.sh [--runs N] [--warmup N] [--markdown] [MODEL_OR_DIR...]" >&2; exit 64 ;;
    *) paths+=("$1"); shift ;;
  esac
done

python="${PYTHON:-}"
if [ -z "$python" ]; then
  if [ -x Scripts/.venv/bin/python ]; then python=Scripts/.venv/bin/python; else python=python3; fi
fi

results="$(mktemp -d)"
trap 'rm -rf "$results"' EXIT

echo "building (release, default flags)..." >&2
swift build -c release --package-path Benchmarks --scratch-path Benchmarks/.build/default --product model-benchmarks >&2
echo "building (release, -target-cpu native)..." >&2
swift build -c release --package-path Benchmarks --scratch-path Benchmarks/.build/native --product model-benchmarks \
  -Xswiftc -target-cpu -Xswiftc native >&2

default_tool=Benchmarks/.build/default/release/model-benchmarks
native_tool=Benchmarks/.build/native/release/model-benchmarks
mapfile -t models < <("$default_tool" --list "${paths[@]}")
if [ ${#models[@]} -eq 0 ]; then
  echo "no networks found in TestModels/manifest.json or Benchmarks/Models/" >&2
  exit 1
fi

if [ "$markdown" = 1 ]; then
  echo "CPU time of ${#models[@]} networks, ${runs:-5} runs, one thread; load average: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)" >&2
  exec "$python" Benchmarks/cpu_time.py --markdown --runs "${runs:-5}" --reference-runs 1 \
    --tools "$default_tool,$native_tool" "${models[@]}"
fi
runs="${runs:-50}"

echo "timing ${#models[@]} networks, $runs runs after $warmup warm-up runs, one thread..." >&2
# Model by model, both builds and LiteRT back to back: on a shared machine the load drifts over
# minutes, and timing all models with one build before the next would skew the ratios.
for model in "${models[@]}"; do
  "$default_tool" --json --threads 1 --runs "$runs" --warmup "$warmup" "$model" >> "$results/default.jsonl"
  "$native_tool" --json --threads 1 --runs "$runs" --warmup "$warmup" "$model" >> "$results/native.jsonl"
  if ! "$python" Benchmarks/litert_bench.py --runs "$runs" --warmup "$warmup" --reference-runs 3 "$model" \
    >> "$results/litert.jsonl"; then
    echo "warning: litert_bench.py failed on $model; its LiteRT columns are empty" >&2
  fi
done

python3 - "$results" <<'PYTHON'
import json, os, sys

directory = sys.argv[1]

def load(name):
  rows = {}
  path = os.path.join(directory, name)
  if os.path.exists(path):
    for line in open(path):
      line = line.strip()
      if line.startswith("{"):
        rows.setdefault(json.loads(line)["model"], []).append(json.loads(line))
  return rows

ours = {"default": load("default.jsonl"), "native": load("native.jsonl")}
litert = load("litert.jsonl")
kernels = ["xnnpack", "builtin", "reference"]

def median(rows):
  return rows[0].get("median_ms") if rows and "error" not in rows[0] else None

def litert_median(model, kind):
  # litert_bench.py prints one line per model: {"model": …, "xnnpack": {"median_ms": …}, "builtin": …, "reference": …}.
  for row in litert.get(model, []):
    timing = row.get(kind) or {}
    if "error" not in timing and timing.get("median_ms") is not None:
      return timing["median_ms"]
  return None

def cell(value, width=10, digits=3):
  return f"{value:{width}.{digits}f}" if value is not None else " " * (width - 1) + "-"

models = list(ours["default"])
width = max([len(os.path.basename(m)) for m in models] + [5])
print("median invoke time, ms (one thread); ratio = SwiftTFLite / LiteRT, below 1 is faster")
print(f"{'model':<{width}}  {'ours':>10} {'ours nat':>10} {'xnnpack':>10} {'builtin':>10} {'ref':>10}"
      f"  {'/xnn':>7} {'/builtin':>8} {'/ref':>7} {'nat/xnn':>8} {'nat/bltn':>8}  arena KiB")
for model in models:
  mine, native = median(ours["default"].get(model)), median(ours["native"].get(model))
  theirs = [litert_median(model, kind) for kind in kernels]
  def ratio(a, b):
    return f"{a / b:7.2f}" if a is not None and b else "      -"
  arena = ours["default"][model][0].get("arena_bytes")
  line = (f"{os.path.basename(model):<{width}}  {cell(mine)} {cell(native)} " + " ".join(cell(t) for t in theirs)
          + f"  {ratio(mine, theirs[0])} {ratio(mine, theirs[1]):>8} {ratio(mine, theirs[2])} {ratio(native, theirs[0]):>8}"
          + f" {ratio(native, theirs[1]):>8}"
          + f"  {cell(arena / 1024 if arena is not None else None, 9, 1)}")
  print(line)
  error = ours["default"][model][0].get("error")
  if error:
    print(f"  ours: {error[:200]}")
PYTHON
