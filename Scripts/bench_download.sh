#!/usr/bin/env bash
# Download throughput of `tflite download` against curl on the same file: a valid .tflite model
# (100 MB by default) served by Debian's nginx on loopback. Both write the file to disk; the tool
# also hashes (SHA-256), fsyncs, verifies the format and installs it, so a third line times
# `curl` followed by `sha256sum`, the same work done by two C programs.
# usage: Scripts/bench_download.sh [SIZE_BYTES] [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
size=${1:-100000000}
runs=${2:-5}
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

now() { date +%s.%N; }
: >"$work/times"
for run in $(seq "$runs"); do
  rm -f "$work/curl.out"
  start=$(now)
  curl -sf -o "$work/curl.out" "$url/bench.tflite"
  middle=$(now)
  rm -rf "$work/storage"
  "$tool" download bench --index "$url/" --storage "$work/storage" >/dev/null
  end=$(now)
  rm -f "$work/curl.out"
  curl -sf -o "$work/curl.out" "$url/bench.tflite" && sha256sum "$work/curl.out" >/dev/null
  hashed=$(now)
  echo "$start $middle $end $hashed" >>"$work/times"
done

"$python" - "$work/times" "$bytes" <<'EOF'
import statistics, sys
rows = [list(map(float, line.split())) for line in open(sys.argv[1])]
size = int(sys.argv[2])
curl = [middle - start for start, middle, end, hashed in rows]
tool = [end - middle for start, middle, end, hashed in rows]
curl_hash = [hashed - end for start, middle, end, hashed in rows]
for name, times in (("curl", curl), ("tflite download", tool), ("curl + sha256sum", curl_hash)):
    median = statistics.median(times)
    print("%-16s median %.3f s  %7.1f MB/s  (runs: %s)" % (
        name, median, size / median / 1e6, " ".join("%.3f" % t for t in times)))
print("throughput ratio tflite/curl: %.2f" % (statistics.median(curl) / statistics.median(tool)))
print("throughput ratio tflite/(curl + sha256sum): %.2f" % (statistics.median(curl_hash) / statistics.median(tool)))
EOF
