#!/usr/bin/env python3
"""Load + first invoke (CPU ms) and peak RSS of SwiftTFLite beside LiteRT builtin, fresh processes.

  python Benchmarks/load_time.py [--repeats 5] [--tools A,B] [--labels x,y] [--markdown] MODEL...

Issue #12 item 4 compares SwiftTFLite's load + first invoke with LiteRT builtin's
`Interpreter` + `allocate_tensors` + first invoke. For every model and repetition this runs, in
turn, each `tflite` binary of --tools (`tflite bench MODEL --runs 1 --warmup 0 --json`: its
load_cpu_ms + first_invoke_cpu_ms) and `Benchmarks/litert_load_memory.py` (load_cpu_ms +
first_invoke_cpu_ms, one thread, builtin kernels), so both sides see the same machine load. CPU
time (not wall time) leaves out the waits for a core on a shared machine; process start-up (the
dynamic linker, Python's imports) is outside both spans. A model's `.input_0.npy` beside it, when
there is one, is fed to both; otherwise ours gets seeded random values and LiteRT zeros.

Issue #12 item 6 compares the peak RSS of the same processes: `tflite bench`'s peak_rss_bytes and
the LiteRT Python process's (numpy and LiteRT imported; its baseline before the model is printed
too). Prints one JSON line per model (the minimum and median over the repetitions, per program, of
the CPU ms and of the peak RSS in MB, and the ratio of each tool's minimum to LiteRT's) and, with
--markdown, a table at the end. A program that
fails on a model (LiteRT without MediaPipe's custom operators, say) gets null.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def measured(result):
  """(load + first invoke CPU ms, peak RSS MB) of a program's JSON result, or None."""
  if result is None:
    return None
  return (result["load_cpu_ms"] + result["first_invoke_cpu_ms"], result["peak_rss_bytes"] / 1e6)


def run_json(command):
  """The last stdout line of `command` as JSON, or None when it fails."""
  finished = subprocess.run(command, capture_output=True, text=True)
  lines = finished.stdout.strip().splitlines()
  if finished.returncode != 0 or not lines:
    return None
  return json.loads(lines[-1])


def ours(tool, model, input_file):
  command = [tool, "bench", model, "--runs", "1", "--warmup", "0", "--json"]
  if input_file:
    command += ["--input", input_file]
  return measured(run_json(command))


def litert(model, input_file):
  command = [sys.executable, os.path.join(HERE, "litert_load_memory.py"), model] + ([input_file] if input_file else [])
  return measured(run_json(command))


def summary(samples):
  """Minimum and median CPU ms and peak RSS MB of (ms, MB) samples, None when all failed."""
  values = [value for value in samples if value is not None]
  if not values:
    return None
  times = [time for time, _ in values]
  memories = [memory for _, memory in values]
  return {"min": round(min(times), 3), "median": round(statistics.median(times), 3),
          "rss_mb_min": round(min(memories), 1), "rss_mb_median": round(statistics.median(memories), 1)}


def main():
  parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("models", nargs="+")
  parser.add_argument("--repeats", type=int, default=5)
  parser.add_argument("--tools", default=".build/release/tflite")
  parser.add_argument("--labels", default=None)
  parser.add_argument("--markdown", action="store_true")
  arguments = parser.parse_args()
  tools = arguments.tools.split(",")
  labels = arguments.labels.split(",") if arguments.labels else tools
  rows = []
  for model in arguments.models:
    candidate = os.path.splitext(model)[0] + ".input_0.npy"
    input_file = candidate if os.path.exists(candidate) else None
    samples = {label: [] for label in labels + ["litert"]}
    for _ in range(arguments.repeats):
      for tool, label in zip(tools, labels):
        samples[label].append(ours(tool, model, input_file))
      samples["litert"].append(litert(model, input_file))
    row = {"model": os.path.splitext(os.path.basename(model))[0]}
    row.update({label: summary(values) for label, values in samples.items()})
    for label in labels:
      if row[label] and row["litert"]:
        row[label + " / litert"] = round(row[label]["min"] / row["litert"]["min"], 2)
        row[label + " rss / litert"] = round(row[label]["rss_mb_min"] / row["litert"]["rss_mb_min"], 2)
    print(json.dumps(row), file=sys.stderr if arguments.markdown else sys.stdout, flush=True)
    rows.append(row)
  if arguments.markdown:
    def cell(value):
      return "–" if value is None else f"{value['min']:.3g}"
    def memory(value):
      return "–" if value is None else f"{value['rss_mb_min']:.1f}"
    def ratio(row, key):
      return f"{row[key]:.2f}" if key in row else "–"
    header = (["network"] + [f"{label} (ms)" for label in labels] + ["LiteRT builtin (ms)"]
              + [f"{label} ÷ LiteRT" for label in labels] + [f"{label} RSS (MB)" for label in labels]
              + ["LiteRT RSS (MB)"] + [f"{label} RSS ÷ LiteRT" for label in labels])
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows:
      cells = ([row["model"]] + [cell(row[label]) for label in labels] + [cell(row["litert"])]
               + [ratio(row, label + " / litert") for label in labels] + [memory(row[label]) for label in labels]
               + [memory(row["litert"])] + [ratio(row, label + " rss / litert") for label in labels])
      print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
  main()
