#!/usr/bin/env python3
"""CPU time per invoke of SwiftTFLite and LiteRT, one thread: steadier than wall-clock medians on
a machine whose cores other jobs share (a process waiting for a core is not charged for it).

  python Benchmarks/cpu_time.py [--runs 5] [--reference-runs 1] [--tools A,B] [--kinds K,...] [--method M] [--markdown] MODEL...

--tools lists model-benchmarks executables (default: the two builds of Benchmarks/run.sh). For
each, with --method processes (the default), the CPU time of a process doing runs+1 invokes minus
that of a process doing 1 (so loading and the first invoke drop out), divided by runs: a mean,
which counts every slow invoke (a busy sibling hyperthread, an interrupt) and the noise of two
whole processes. With --method medians, the median of the process CPU time around each invoke
after one warm-up invoke, as LiteRT is timed below (`cpu_median_ms` of the tool's JSON with
`--cpu-times`; a tool without the flag gives an empty cell). LiteRT (--kinds, default xnnpack,builtin,reference)
runs in a child process per kernel set, timed with process_time() around each invoke after one
warm-up invoke; the median is reported. With --method minima, both sides are timed by the wall clock
and the fastest invoke is reported (ours: `min_ms` of the tool's JSON after one warm-up invoke;
LiteRT: the fastest of `perf_counter()` around each invoke): another tenant's burst only ever
makes an invoke slower, so on a busy machine the fastest invoke is the steadiest estimate of an
undisturbed one, for networks far shorter than a scheduler tick (the minis). Prints one JSON line per model, milliseconds, with the
ratios of each tool to LiteRT builtin. Sibling hyperthreads still slow both sides when busy:
alternate and repeat, and compare ratios rather than absolute times.

--markdown prints the JSON lines to stderr and, at the end, the README's benchmark table to stdout:
one row per model with the two tools (labelled by --labels, default "ours default,ours native"),
LiteRT XNNPACK, builtin and BUILTIN_REF, and the ratios default ÷ XNNPACK, default ÷ builtin and
native ÷ XNNPACK (below 1: SwiftTFLite is faster). `Benchmarks/run.sh --markdown` builds both
tools and runs this over every network.
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

DEFAULT_TOOLS = "Benchmarks/.build/default/release/model-benchmarks,Benchmarks/.build/native/release/model-benchmarks"


def children_cpu_seconds():
  usage = resource.getrusage(resource.RUSAGE_CHILDREN)
  return usage.ru_utime + usage.ru_stime


def swift_cpu_ms(tool, model, runs, method="processes"):
  """Milliseconds, or None when the tool fails on the model (or does not report the median)."""
  if method in ("medians", "minima"):
    finished = subprocess.run([tool, "--json", "--cpu-times", "--threads", "1", "--runs", str(runs), "--warmup", "1", model],
                              capture_output=True, text=True)
    lines = finished.stdout.strip().splitlines()
    key = "cpu_median_ms" if method == "medians" else "min_ms"
    return json.loads(lines[-1]).get(key) if finished.returncode == 0 and lines else None

  def process_cpu(invokes):
    before = children_cpu_seconds()
    subprocess.run([tool, "--json", "--threads", "1", "--runs", str(invokes), "--warmup", "0", model], check=True,
                   capture_output=True)
    return children_cpu_seconds() - before
  try:
    fixed = min(process_cpu(1) for _ in range(2))
    return (process_cpu(runs + 1) - fixed) / runs * 1000
  except subprocess.CalledProcessError:
    return None


def litert_child(model, kind, runs, method):
  import numpy as np
  from ai_edge_litert import interpreter as litert
  resolver = {"xnnpack": litert.OpResolverType.AUTO,
              "builtin": litert.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES,
              "reference": litert.OpResolverType.BUILTIN_REF}[kind]
  interpreter = litert.Interpreter(model_path=model, experimental_op_resolver_type=resolver, num_threads=1)
  interpreter.allocate_tensors()
  rng = np.random.default_rng(1234)
  for detail in interpreter.get_input_details():
    interpreter.set_tensor(detail["index"], rng.uniform(-1, 1, size=tuple(detail["shape"])).astype(detail["dtype"]))
  interpreter.invoke()
  clock = time.perf_counter if method == "minima" else time.process_time
  times = []
  for _ in range(runs):
    started = clock()
    interpreter.invoke()
    times.append((clock() - started) * 1000)
  print(json.dumps(min(times) if method == "minima" else statistics.median(times)))


def litert_cpu_ms(model, kind, runs, method):
  finished = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", kind, "--runs", str(runs),
                             "--method", method, model],
                            capture_output=True, text=True)
  lines = finished.stdout.strip().splitlines()
  return json.loads(lines[-1]) if finished.returncode == 0 and lines else None


def main():
  parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("models", nargs="+")
  parser.add_argument("--runs", type=int, default=5)
  parser.add_argument("--reference-runs", type=int, default=1)
  parser.add_argument("--tools", default=DEFAULT_TOOLS)
  parser.add_argument("--kinds", default="xnnpack,builtin,reference")
  parser.add_argument("--method", choices=["processes", "medians", "minima"], default="processes",
                      help="how the tools are timed (see above)")
  parser.add_argument("--markdown", action="store_true", help="print the markdown table (JSON lines to stderr)")
  parser.add_argument("--labels", default="ours default,ours native", help="column names of the tools")
  parser.add_argument("--child", help=argparse.SUPPRESS)
  args = parser.parse_args()
  if args.child:
    litert_child(args.models[0], args.child, args.runs, args.method)
    return
  tools = [tool for tool in args.tools.split(",") if tool]
  rows = []
  for model in args.models:
    row = {"model": model}
    for tool in tools:
      value = swift_cpu_ms(tool, model, args.runs, args.method)
      row[tool] = round(value, 4) if value is not None else None
    for kind in [kind for kind in args.kinds.split(",") if kind]:
      runs = args.reference_runs if kind == "reference" else args.runs
      value = litert_cpu_ms(model, kind, runs, args.method)
      row[kind] = round(value, 4) if value is not None else None
    if row.get("builtin"):
      row["ratio_to_builtin"] = {tool: round(row[tool] / row["builtin"], 3) for tool in tools if row[tool] is not None}
    print(json.dumps(row), flush=True, file=sys.stderr if args.markdown else sys.stdout)
    rows.append(row)
  if args.markdown:
    print(markdown_table(rows, tools, [label for label in args.labels.split(",")]))


def markdown_table(rows, tools, labels):
  """The rows as a markdown table: times with three significant digits, ratios with two decimals."""
  def time(value):
    if value is None:
      return "–"
    return f"{value:.3g}" if value < 100 else f"{value:.0f}"

  def ratio(numerator, denominator):
    return f"{numerator / denominator:.2f}" if numerator is not None and denominator else "–"

  default, native = (tools + [None, None])[:2]
  names = (labels + [os.path.basename(tool) for tool in tools])[:len(tools)]
  header = ["network"] + names + ["LiteRT XNNPACK", "LiteRT builtin", "LiteRT `BUILTIN_REF`",
                                   f"{names[0]} ÷ XNNPACK", f"{names[0]} ÷ builtin"]
  if native:
    header.append(f"{names[1]} ÷ XNNPACK")
  lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
  for row in rows:
    cells = [os.path.splitext(os.path.basename(row["model"]))[0]] + [time(row.get(tool)) for tool in tools]
    cells += [time(row.get(kind)) for kind in ("xnnpack", "builtin", "reference")]
    cells += [ratio(row.get(default), row.get("xnnpack")), ratio(row.get(default), row.get("builtin"))]
    if native:
      cells.append(ratio(row.get(native), row.get("xnnpack")))
    lines.append("| " + " | ".join(cells) + " |")
  return "\n".join(lines)


if __name__ == "__main__":
  main()
