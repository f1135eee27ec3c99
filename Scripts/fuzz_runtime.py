#!/usr/bin/env python3
"""Searches for runtime crashes with the hostile model variants of RuntimeFuzzTests.

A crash kills the test process, so this driver runs the built test binary with TFLITE_FUZZ_TRACE=1
(each case is announced on standard error before it runs), and when the process dies from a
signal or stops making progress, records the last announced case and restarts after it.

Usage (after `swift build --build-tests`):
  Scripts/fuzz_runtime.py [--variants N] [--start K] [--seed S] [--stall SECONDS] [--log crashes.txt]

With AddressSanitizer, which also reports reads and writes out of bounds that do not crash:
  swift build --build-tests --sanitize=address --scratch-path .build-asan
  Scripts/fuzz_runtime.py --build-dir .build-asan
"""

import argparse
import os
import re
import resource
import subprocess
import sys
import threading
import time

CASE = re.compile(r"^fuzz case (\d+): (.*)$")


def test_binary(build_dir):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = os.path.join(root, build_dir, "debug", "SwiftTFLitePackageTests.xctest")
    if not os.path.exists(path):
        sys.exit(f"build the tests first: no {path}")
    return path


def limit_memory():
    # A hostile shape that slips through must show up as a failure, not swap the machine to death.
    limit = 16 << 30
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def run_from(binary, start, variants, stall, sanitized, seed):
    """Runs the cases from `start`; returns the last case seen with its name and stderr tail, and how it ended."""
    environment = dict(os.environ, TFLITE_FUZZ_TRACE="1", TFLITE_FUZZ_START=str(start),
                       TFLITE_FUZZ_VARIANTS=str(variants))
    if seed is not None:
        environment["TFLITE_FUZZ_SEED"] = seed
    if sanitized:
        # AddressSanitizer reserves terabytes of address space, so it limits allocations itself.
        environment["ASAN_OPTIONS"] = "abort_on_error=1:detect_leaks=0:max_allocation_size_mb=16384"
        # AddressSanitizer prints the stack itself; Swift's backtracer would linger after the crash.
        environment["SWIFT_BACKTRACE"] = "enable=no"
    process = subprocess.Popen(
        [binary, "TFLiteRuntimeTests.RuntimeFuzzTests/testHostileModelsNeverCrashTheRuntime"],
        env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace",
        preexec_fn=None if sanitized else limit_memory, start_new_session=True)
    state = {"case": None, "name": "", "seen": time.time(), "tail": [], "stdout": []}

    def read_errors():
        for line in process.stderr:
            match = CASE.match(line.rstrip("\n"))
            if match:
                state["case"], state["name"] = int(match.group(1)), match.group(2)
                state["seen"] = time.time()
                state["tail"] = []
            else:
                state["tail"].append(line.rstrip("\n"))

    def read_output():
        for line in process.stdout:
            state["stdout"].append(line.rstrip("\n"))

    readers = [threading.Thread(target=read_errors), threading.Thread(target=read_output)]
    for reader in readers:
        reader.start()
    ending = None
    while process.poll() is None:
        time.sleep(0.5)
        if time.time() - state["seen"] > stall:
            process.kill()
            ending = f"stalled for over {stall} s"
    # Helpers the crash started (symbolizer, backtracer) may hold the pipes open: end them.
    try:
        os.killpg(process.pid, 9)
    except ProcessLookupError:
        pass
    for reader in readers:
        reader.join()
    if ending is None:
        finished = any("runtime fuzz:" in line for line in state["stdout"])
        ending = "finished" if finished else f"died (exit status {process.returncode})"
    return state, ending


def summary(tail):
    """The fatal error line and the first frame in the package's sources."""
    fatal = next((line for line in tail if "Fatal error" in line or "fatal error" in line
                  or "ERROR: AddressSanitizer" in line), "")
    frame = next((line.strip() for line in tail if "/Sources/" in line), "")
    frame = re.sub(r"^.*? in SwiftTFLitePackageTests.xctest at |^.* (?=/\S*/Sources/)", "", frame)
    return f"{fatal.strip()} @ {frame}"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--variants", type=int, default=40)
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--stall", type=float, default=60)
    parser.add_argument("--log", default="/tmp/runtime_fuzz_crashes.txt")
    parser.add_argument("--build-dir", default=".build")
    parser.add_argument("--seed", help="another seed draws other variants")
    arguments = parser.parse_args()
    binary = test_binary(arguments.build_dir)
    sanitized = "asan" in arguments.build_dir
    start = arguments.start
    crashes = 0
    with open(arguments.log, "a") as log:
        while True:
            state, ending = run_from(binary, start, arguments.variants, arguments.stall, sanitized, arguments.seed)
            if ending == "finished":
                print("\n".join(line for line in state["stdout"] if "runtime fuzz" in line or "error" in line))
                print(f"finished; {crashes} crashing cases logged in {arguments.log}")
                return
            if state["case"] is None:
                sys.exit(f"the test process {ending} before its first case:\n" + "\n".join(state["tail"][-30:]))
            crashes += 1
            entry = f"case {state['case']} {ending}: {state['name']}\n    {summary(state['tail'])}"
            print(entry, flush=True)
            log.write(entry + "\n")
            log.flush()
            start = state["case"] + 1


if __name__ == "__main__":
    main()
