#!/usr/bin/env python3
"""How much faster two threads run a network than one, measured so that a noisy shared machine
does not decide the answer: short rounds of 1-thread and 2-thread runs of the same binary
interleaved (the order alternating from round to round), and of each the fastest round kept.

  python Benchmarks/thread_scaling.py [--tools A,B] [--labels a,b] [--threads 1,2] [--rounds 8]
                                      [--runs 5] [--warmup 2] [--json] MODEL...
  python Benchmarks/thread_scaling.py --nodes [--tool A] [--rounds 4] [--runs 10] [--top 15] MODEL

Totals (default): every round runs, for every model, `TOOL bench MODEL --threads N --runs R
--warmup W --json` once per tool and thread count, in an order that alternates between rounds, so
that a neighbour's burst slows both sides alike. A row per model and tool gives, per thread count,
the fastest invoke over all rounds (`--statistic median`: the fastest round's median) and the ratio
one thread ÷ N threads; above 1 means N threads are faster. The fastest invoke is the estimate of
"the cores are free": another tenant's burst only ever makes an invoke slower.

On a machine other processes keep busy, run it under `chrt -f 10` (SCHED_FIFO, inherited by the
benchmark processes; root or CAP_SYS_NICE): otherwise a helper thread waits for a core behind the
other processes and two threads measure slower than one. Even so, a one-thread run shares the
machine with the other processes on the other core (and, on a VM, with the host's other tenants
on sibling hardware threads) while a two-thread run has both cores, so one-thread times come out
bimodal; the fastest invoke over many short rounds picks the undisturbed mode. Several tools (`--tools before,after`, `tflite` executables) make before/after
comparisons from one interleaved session.

Nodes (`--nodes`): `TOOL profile MODEL --threads N --runs R --json`, interleaved the same way, and
per node the fastest round's median. Per-node times are far steadier than totals (a round's noise
moves every node alike, and the comparison is between node shares), so this finds what does not
scale: the nodes sorted by the time they lose to a perfect split (time on N threads minus time on
one ÷ N), then the same summed per operator.

Tools are `tflite` executables, or `model-benchmarks` ones (Benchmarks/.build/*/release/, e.g. a
build of main kept for "before"), which time the same seeded random inputs (seed 0) as `tflite
bench` without `--input`; `--model-inputs` feeds `tflite` tools a model's `.input_0.npy` instead
(the Benchmarks/Models convention). Nothing here needs more than the standard library.
"""

import argparse
import json
import os
import subprocess
import sys
from collections import defaultdict


def input_arguments(model, model_inputs):
  if not model_inputs:
    return []
  base = model[:-len(".tflite")] if model.endswith(".tflite") else model
  path = base + ".input_0.npy"
  return ["--input", path] if os.path.exists(path) else []


def run_json(command):
  """The last JSON value the command prints (model-benchmarks prints one line per model)."""
  text = subprocess.run(command, check=True, capture_output=True, text=True).stdout.strip()
  try:
    return json.loads(text)
  except json.JSONDecodeError:
    return json.loads(text.splitlines()[-1])


def interleaved(configurations, rounds, measure):
  """Calls measure(configuration) `rounds` times for each configuration, alternating the order
  every round; returns {configuration: [result, ...]}."""
  results = defaultdict(list)
  for round_index in range(rounds):
    order = configurations if round_index % 2 == 0 else list(reversed(configurations))
    for configuration in order:
      results[configuration].append(measure(configuration))
  return results


def totals(arguments):
  tools = arguments.tools.split(",")
  labels = arguments.labels.split(",") if arguments.labels else [os.path.basename(os.path.dirname(t)) or t for t in tools]
  threads = [int(n) for n in arguments.threads.split(",")]
  rows = []
  for model in arguments.models:
    def measure(configuration):
      tool, thread_count = configuration
      options = ["--threads", str(thread_count), "--runs", str(arguments.runs), "--warmup", str(arguments.warmup),
                 "--json"]
      if os.path.basename(tool) == "model-benchmarks":
        return run_json([tool] + options + [model])[arguments.statistic + "_ms"]
      command = [tool, "bench", model] + options + input_arguments(model, arguments.model_inputs)
      return run_json(command)[arguments.statistic + "_ms"]
    configurations = [(tool, n) for tool in tools for n in threads]
    results = interleaved(configurations, arguments.rounds, measure)
    for tool, label in zip(tools, labels):
      fastest = {n: min(results[(tool, n)]) for n in threads}
      row = {"model": os.path.basename(model), "tool": label, "statistic": arguments.statistic,
             "fastest_round_ms": {str(n): round(fastest[n], 3) for n in threads},
             "speedup": {str(n): round(fastest[threads[0]] / fastest[n], 3) for n in threads[1:]}}
      rows.append(row)
      if arguments.json:
        print(json.dumps(row), flush=True)
      else:
        times = "  ".join(f"{n}t {fastest[n]:8.3f}" for n in threads)
        ratios = "  ".join(f"x{fastest[threads[0]] / fastest[n]:.2f}" for n in threads[1:])
        print(f"{os.path.basename(model):40s} {label:10s} {times}  {ratios}", flush=True)
  return rows


def nodes(arguments):
  tool = arguments.tool
  threads = [int(n) for n in arguments.threads.split(",")]
  if len(threads) != 2:
    sys.exit("--nodes compares two thread counts")
  for model in arguments.models:
    def measure(thread_count):
      return run_json([tool, "profile", model, "--threads", str(thread_count), "--runs", str(arguments.runs),
                       "--json"] + input_arguments(model, arguments.model_inputs))
    results = interleaved(threads, arguments.rounds, measure)
    fastest = {}
    for n in threads:
      per_node = defaultdict(list)
      for profile in results[n]:
        for node in profile["operators"]:
          per_node[(node["subgraph"], node["operator_index"], node["op"])].append(node["median_ms"])
      fastest[n] = {key: min(values) for key, values in per_node.items()}
    one, many = threads
    keys = sorted(fastest[one], key=lambda key: fastest[many].get(key, 0) - fastest[one][key] / many, reverse=True)
    total_one = sum(fastest[one].values())
    total_many = sum(fastest[many].get(key, 0) for key in fastest[one])
    lost_total = total_many - total_one / many
    print(f"{os.path.basename(model)}: nodes summed {total_one:.3f} ms on {one} thread, {total_many:.3f} ms on {many}"
          f" (x{total_one / total_many:.2f}); {lost_total:.3f} ms above a perfect split")
    print(f"  {'node':>10s} {'op':24s} {one}t ms    {many}t ms    ratio  lost ms  lost %")
    for key in keys[:arguments.top]:
      t1, tn = fastest[one][key], fastest[many].get(key, 0)
      lost = tn - t1 / many
      print(f"  {key[0]}:{key[1]:<8d} {key[2]:24s} {t1:8.3f} {tn:9.3f} {t1 / tn if tn else 0:8.2f} {lost:8.3f} {100 * lost / lost_total:6.1f}")
    per_op = defaultdict(lambda: [0.0, 0.0, 0])
    for key in keys:
      entry = per_op[key[2]]
      entry[0] += fastest[one][key]
      entry[1] += fastest[many].get(key, 0)
      entry[2] += 1
    print(f"  {'op':35s} nodes  {one}t ms    {many}t ms    ratio  lost ms")
    for op, (t1, tn, count) in sorted(per_op.items(), key=lambda item: item[1][1] - item[1][0] / many, reverse=True):
      print(f"  {op:35s} {count:5d} {t1:8.3f} {tn:9.3f} {t1 / tn if tn else 0:8.2f} {tn - t1 / many:8.3f}")
    sys.stdout.flush()


def main():
  parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("models", nargs="+", metavar="MODEL")
  parser.add_argument("--tools", default=".build/release/tflite", help="tflite executables, comma-separated (totals)")
  parser.add_argument("--labels", help="names for --tools, comma-separated")
  parser.add_argument("--tool", default=".build/release/tflite", help="the tflite executable (--nodes)")
  parser.add_argument("--threads", default="1,2", help="thread counts, the first is the baseline")
  parser.add_argument("--rounds", type=int, default=8)
  parser.add_argument("--runs", type=int, default=5, help="invokes per process (per node with --nodes)")
  parser.add_argument("--warmup", type=int, default=2)
  parser.add_argument("--statistic", choices=["min", "median"], default="min",
                      help="per round: the fastest invoke (default) or the median one (totals)")
  parser.add_argument("--nodes", action="store_true", help="per-node profile instead of totals")
  parser.add_argument("--top", type=int, default=15, help="nodes listed with --nodes")
  parser.add_argument("--json", action="store_true", help="totals as JSON lines")
  parser.add_argument("--model-inputs", action="store_true", help="feed tflite tools MODEL.input_0.npy")
  arguments = parser.parse_args()
  if arguments.nodes:
    nodes(arguments)
  else:
    totals(arguments)


if __name__ == "__main__":
  main()
