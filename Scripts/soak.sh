#!/usr/bin/env bash
# The long form of Tests/SoakTests (the interpreter lifecycle soak checks that `swift test` runs
# in seconds): every loop repeated SOAK_SCALE times more, in a release build, then under
# AddressSanitizer and ThreadSanitizer, each in a build folder of its own (.build-asan, .build-tsan)
# so that the ordinary .build stays as it is.
#
#   Scripts/soak.sh                  # release (SOAK_SCALE=100), asan and tsan (SOAK_SCALE=10)
#   Scripts/soak.sh release          # only some of: release asan tsan
#   SOAK_SCALE=1000 Scripts/soak.sh release
#
# Each check prints a "soak ..." line with its iteration count, time, resident memory and heap in
# use before and after; in the release run it fails when memory grows beyond its bound (a few MB
# resident, 256 KB of heap). Under the sanitizers memory is reported but not bounded
# (AddressSanitizer keeps freed memory in quarantine); any sanitizer report fails the run.
# LeakSanitizer is off: at exit it reports only the test-case objects XCTest keeps alive on Linux
# (about 4 KB in 17 blocks, none from the runtime); heap growth is what the release run bounds.
# The exit code is 0 only when every run passed.
set -euo pipefail
cd "$(dirname "$0")/.."

release_scale=${SOAK_SCALE:-100}
sanitizer_scale=${SOAK_SANITIZER_SCALE:-10}
modes=("$@")
[ ${#modes[@]} -eq 0 ] && modes=(release asan tsan)

# run LABEL SCALE BOUNDS SWIFT-FLAGS...: builds the tests with the flags, then runs SoakTests.
run() {
  local label=$1 scale=$2 bounds=$3
  shift 3
  echo "== $label: building"
  swift build --build-tests "$@"
  echo "== $label: SoakTests with SOAK_SCALE=$scale"
  local log
  log=$(mktemp)
  local status=0
  SOAK_SCALE=$scale SOAK_MEMORY_BOUNDS=$bounds TSAN_OPTIONS=halt_on_error=1 ASAN_OPTIONS=detect_leaks=0 \
    swift test --skip-build "$@" --filter SoakTests >"$log" 2>&1 || status=$?
  grep -E '^soak |error|ERROR: (Address|Thread)Sanitizer|WARNING: ThreadSanitizer|Executed .* tests' "$log" || true
  if grep -qE 'ERROR: (Address|Thread)Sanitizer|WARNING: ThreadSanitizer' "$log"; then status=1; fi
  rm -f "$log"
  echo "== $label: $([ $status -eq 0 ] && echo passed || echo FAILED)"
  return $status
}

failed=0
for mode in "${modes[@]}"; do
  case $mode in
    release) run release "$release_scale" 1 -c release -Xswiftc -enable-testing || failed=1 ;;
    asan) run asan "$sanitizer_scale" 0 --sanitize=address --build-path .build-asan || failed=1 ;;
    tsan) run tsan "$sanitizer_scale" 0 --sanitize=thread --build-path .build-tsan || failed=1 ;;
    *) echo "unknown mode '$mode' (release, asan, tsan)" >&2; exit 2 ;;
  esac
done
exit $failed
