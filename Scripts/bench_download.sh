#!/usr/bin/env bash
# Download throughput and CPU of `tflite download` against curl on the same file: a valid
# .tflite model (200 MB by default) served by Debian's nginx on loopback. Both write the file to
# disk; the tool also hashes (SHA-256, on its own thread), fsyncs, verifies the format and
# installs it, so a third line times `curl -o` followed by `sha256sum`, the same work done by two
# C programs. CPU is user + system time of the command and its children.
# usage: Scripts/bench_download.sh [SIZE_BYTES] [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
size=${1:-200000000}
runs=${2:-3}
fixtures=Tests/FirebaseMLModelDownloaderTests/Fixtures
python=$(command -v /usr/bin/python3 || command -v python3)

swift build -c release --product tflite >&2
tool="$(swift build -c release --show-bin-path)/tflite"
work=$(mktemp -d /tmp/tflite-bench.XXXXXX)
cleanup() {
  exec 9>&- 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

mkdir "$work/site"
"$python" "$fixtures/make_tflite_model.py" "$work/site/bench.tflite" "$size"
"$tool" models index "$work/site/bench.tflite" >/dev/null
mkfifo "$work/nginx-stdin"
"$python" "$fixtures/nginx_fixture.py" "$work/site" <"$work/nginx-stdin" >"$work/nginx.out" &
exec 9>"$work/nginx-stdin"
for _ in $(seq 100); do grep -q '^PORT ' "$work/nginx.out" 2>/dev/null && break; sleep 0.1; done
port=$(awk '/^PORT /{print $2}' "$work/nginx.out")
url="http://127.0.0.1:$port"
bytes=$(stat -c %s "$work/site/bench.tflite")
export url work tool

# Runs `bash -c COMMAND` and appends "LABEL WALL_SECONDS CPU_SECONDS" to $work/times.
timed() {
  "$python" - "$1" "$2" >>"$work/times" <<'PY'
import resource, subprocess, sys, time
label, command = sys.argv[1], sys.argv[2]
start = time.monotonic()
subprocess.run(["bash", "-c", command], check=True, stdout=subprocess.DEVNULL)
wall = time.monotonic() - start
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(label, wall, usage.ru_utime + usage.ru_stime)
PY
}

: >"$work/times"
for _ in $(seq "$runs"); do
  timed curl 'rm -f "$work/curl.out"; curl -sf -o "$work/curl.out" "$url/bench.tflite"'
  timed tflite 'rm -rf "$work/storage"; "$tool" download bench --index "$url/" --storage "$work/storage"'
  timed curl+sha256sum 'rm -f "$work/curl.out"; curl -sf -o "$work/curl.out" "$url/bench.tflite" && sha256sum "$work/curl.out"'
done

"$python" - "$work/times" "$bytes" <<'EOF2'
import collections, statistics, sys
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    label, wall, cpu = line.split()
    rows[label].append((float(wall), float(cpu)))
size = int(sys.argv[2])
median = {label: (statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs)) for label, runs in rows.items()}
print("| command | median wall | throughput | median CPU | runs (wall s) |")
print("|---|---|---|---|---|")
for label in ("curl", "tflite", "curl+sha256sum"):
    wall, cpu = median[label]
    print("| %s | %.3f s | %.1f MB/s | %.3f s | %s |" % (
        label, wall, size / wall / 1e6, cpu, " ".join("%.3f" % w for w, _ in rows[label])))
for other in ("curl", "curl+sha256sum"):
    print("tflite vs %s: throughput %.2fx, CPU %.2fx" % (
        other, median[other][0] / median["tflite"][0], median["tflite"][1] / median[other][1]))
EOF2
