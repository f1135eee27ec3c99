#!/usr/bin/env python3
"""Times LiteRT on .tflite models with three kernel sets, one thread each, and prints JSON.

  python Benchmarks/litert_bench.py MODEL_OR_DIR... [--runs 50] [--warmup 5] [--reference-runs 5]

For every model it prints one JSON object per line:
  {"model": PATH, "xnnpack": {...}, "builtin": {...}, "reference": {...}}
where each kernel set has load_ms (interpreter creation and allocate_tensors), min_ms,
median_ms, max_ms of invoke() over the timed runs (after the warm-up runs), and runs.
  xnnpack   = the default resolver (XNNPACK delegate applied),
  builtin   = BUILTIN_WITHOUT_DEFAULT_DELEGATES (LiteRT's optimized builtin kernels),
  reference = BUILTIN_REF (LiteRT's reference kernels; slow, so fewer runs).
Inputs are seeded random values over each input's type range (or [-1, 1] for floats).
Each kernel set runs in its own process, so a kernel that aborts (BUILTIN_REF does on some
int8 SOFTMAX scales) is reported as an error instead of ending the run.
Run it with the generator's environment, e.g. Scripts/.venv/bin/python or $VENV/bin/python.
"""

import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np
from ai_edge_litert import interpreter as litert

KERNEL_SETS = {
    "xnnpack": litert.OpResolverType.AUTO,
    "builtin": litert.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES,
    "reference": litert.OpResolverType.BUILTIN_REF,
}


def seeded_inputs(details, seed=1234):
  rng = np.random.default_rng(seed)
  values = []
  for detail in details:
    dtype = np.dtype(detail["dtype"])
    shape = tuple(detail["shape"])
    if np.issubdtype(dtype, np.floating):
      values.append(rng.uniform(-1, 1, size=shape).astype(dtype))
    elif dtype == np.bool_:
      values.append(rng.integers(0, 2, size=shape).astype(bool))
    else:
      info = np.iinfo(dtype)
      values.append(rng.integers(max(info.min, -128), min(info.max, 127), size=shape, endpoint=True).astype(dtype))
  return values


def time_model(path, resolver, runs, warmup):
  started = time.perf_counter()
  interpreter = litert.Interpreter(model_path=path, experimental_op_resolver_type=resolver, num_threads=1)
  interpreter.allocate_tensors()
  load_ms = (time.perf_counter() - started) * 1000
  details = interpreter.get_input_details()
  for detail, value in zip(details, seeded_inputs(details)):
    interpreter.set_tensor(detail["index"], value)
  for _ in range(warmup):
    interpreter.invoke()
  times = []
  for _ in range(runs):
    started = time.perf_counter()
    interpreter.invoke()
    times.append((time.perf_counter() - started) * 1000)
  return {"load_ms": round(load_ms, 3), "min_ms": round(min(times), 3), "median_ms": round(statistics.median(times), 3),
          "max_ms": round(max(times), 3), "runs": runs}


def time_in_child(path, name, runs, warmup):
  """time_model in a separate process; returns its result or {"error": ...}."""
  command = [sys.executable, os.path.abspath(__file__), "--child", name, "--runs", str(runs), "--warmup", str(warmup),
             path]
  finished = subprocess.run(command, capture_output=True, text=True)
  lines = finished.stdout.strip().splitlines()
  if finished.returncode != 0 or not lines:
    if finished.returncode < 0:
      return {"error": f"the LiteRT process died with signal {-finished.returncode}"}
    detail = (finished.stderr.strip().splitlines() or ["no output"])[-1]
    return {"error": f"exit status {finished.returncode}: {detail}"}
  return json.loads(lines[-1])


def model_paths(arguments):
  paths = []
  for argument in arguments:
    if os.path.isdir(argument):
      paths.extend(sorted(glob.glob(os.path.join(argument, "**", "*.tflite"), recursive=True)))
    else:
      paths.append(argument)
  return paths


def main():
  parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("models", nargs="+", help=".tflite files or directories to search")
  parser.add_argument("--runs", type=int, default=50, help="timed runs for xnnpack and builtin")
  parser.add_argument("--warmup", type=int, default=5)
  parser.add_argument("--reference-runs", type=int, default=5, help="timed runs for BUILTIN_REF")
  parser.add_argument("--kernels", default="xnnpack,builtin,reference", help="comma-separated subset")
  parser.add_argument("--child", choices=sorted(KERNEL_SETS), help=argparse.SUPPRESS)
  args = parser.parse_args()
  if args.child:
    print(json.dumps(time_model(args.models[0], KERNEL_SETS[args.child], args.runs, args.warmup)))
    return 0
  for path in model_paths(args.models):
    result = {"model": path}
    for name in args.kernels.split(","):
      runs = args.reference_runs if name == "reference" else args.runs
      warmup = min(args.warmup, 1) if name == "reference" else args.warmup
      result[name] = time_in_child(path, name, runs, warmup)
    print(json.dumps(result), flush=True)
  return 0


if __name__ == "__main__":
  sys.exit(main())
