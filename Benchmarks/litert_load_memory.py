#!/usr/bin/env python3
"""Load time and peak memory of LiteRT's builtin kernels on one model, in a fresh process.

  python Benchmarks/litert_load_memory.py MODEL.tflite [INPUT.npy]

Prints one JSON object: load_ms (interpreter creation + allocate_tensors), first_invoke_ms,
load_cpu_ms and first_invoke_cpu_ms (this process's CPU time over the same spans, process_time()),
baseline_rss_bytes (peak RSS of this Python process with numpy and LiteRT imported, before the
model is loaded) and peak_rss_bytes (after the first invoke), both from getrusage. Compare
`tflite bench MODEL --input INPUT.npy --runs 1 --warmup 0 --json` (load_ms, first_invoke_ms,
peak_rss_bytes) with these; Python's own baseline is part of LiteRT's peak, so the README also
gives the peak minus the baseline.
"""

import json
import resource
import sys
import time

import numpy as np
from ai_edge_litert import interpreter as litert


def peak_rss_bytes():
  return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def main():
  if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
    print(__doc__)
    sys.exit(0 if len(sys.argv) > 1 else 2)
  model = sys.argv[1]
  baseline = peak_rss_bytes()
  start = time.perf_counter()
  start_cpu = time.process_time()
  interpreter = litert.Interpreter(
      model_path=model, num_threads=1,
      experimental_op_resolver_type=litert.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
  interpreter.allocate_tensors()
  loaded_cpu = time.process_time()
  loaded = time.perf_counter()
  details = interpreter.get_input_details()
  if len(sys.argv) > 2:
    interpreter.set_tensor(details[0]["index"], np.load(sys.argv[2]))
  invoke_start = time.perf_counter()
  invoke_start_cpu = time.process_time()
  interpreter.invoke()
  invoked_cpu = time.process_time()
  invoked = time.perf_counter()
  print(json.dumps({
      "load_ms": round((loaded - start) * 1000, 3), "first_invoke_ms": round((invoked - invoke_start) * 1000, 3),
      "load_cpu_ms": round((loaded_cpu - start_cpu) * 1000, 3),
      "first_invoke_cpu_ms": round((invoked_cpu - invoke_start_cpu) * 1000, 3),
      "baseline_rss_bytes": baseline, "peak_rss_bytes": peak_rss_bytes()}))


if __name__ == "__main__":
  main()
