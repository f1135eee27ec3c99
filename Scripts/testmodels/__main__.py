"""Writes TestModels/ (and, with --benchmark-models, Benchmarks/Models/).

  python -m testmodels --out TestModels [--only REGEX] [--list] [--benchmark-models [DIR]] [--benchmark-only REGEX]

Without --only the output directory is rebuilt from scratch; with --only the matching cases are
regenerated and merged into the existing manifest.
"""

import argparse
import json
import os
import re
import shutil
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import ai_edge_litert  # noqa: E402

from . import core  # noqa: E402


DEFAULT_BENCHMARK_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                     "Benchmarks", "Models")


def all_cases():
  from . import (  # noqa: F401 (registration happens on import)
    detection, extra_ops, graphs, keras_regressions, mediapipe, more_ops, networks, sequence, single_ops, quant_ops)
  cases = (single_ops.CASES + quant_ops.CASES + networks.CASES + graphs.CASES + detection.CASES + extra_ops.CASES
           + more_ops.CASES + mediapipe.CASES + sequence.CASES + keras_regressions.CASES)
  names = [case.name for case in cases]
  duplicates = sorted({name for name in names if names.count(name) > 1})
  if duplicates:
    raise SystemExit(f"duplicate case names: {duplicates}")
  return cases


def litert_version():
  try:
    from importlib.metadata import version
    return version("ai-edge-litert")
  except Exception:
    return getattr(ai_edge_litert, "__version__", "unknown")


def write_manifest(path, entries, not_generated, demo):
  manifest = {
      "generator": {"tensorflow": tf.__version__, "ai_edge_litert": litert_version(), "numpy": np.__version__,
                    "seed": core.SEED},
      "demo": demo,
      "models": sorted(entries, key=lambda e: (e["group"], e["name"])),
      "not_generated": sorted(not_generated, key=lambda e: e["name"]),
  }
  with open(path, "w") as handle:
    json.dump(manifest, handle, indent=1, sort_keys=False)
    handle.write("\n")


def main():
  parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("--out", default="TestModels")
  parser.add_argument("--only", help="regenerate only cases whose name matches this regular expression")
  parser.add_argument("--list", action="store_true", help="list the case names and exit")
  parser.add_argument("--benchmark-models", metavar="DIR", nargs="?", const=DEFAULT_BENCHMARK_DIR,
                      help="also write the full-size benchmark networks into DIR (default Benchmarks/Models, "
                           "not committed)")
  parser.add_argument("--skip-test-models", action="store_true", help="with --benchmark-models: only those")
  parser.add_argument("--benchmark-only", metavar="REGEX",
                      help="with --benchmark-models: write only the networks whose name matches, keeping the others")
  args = parser.parse_args()

  tf.keras.utils.set_random_seed(core.SEED)
  tf.config.experimental.enable_op_determinism()

  if args.benchmark_models:
    from . import benchmark_models
    benchmark_models.write_all(args.benchmark_models, args.benchmark_only)
    if args.skip_test_models:
      return

  cases = all_cases()
  if args.list:
    for case in cases:
      print(f"{case.group}/{case.name}  [{case.mode}]")
    return
  selected = [case for case in cases if not args.only or re.search(args.only, case.name)]

  manifest_path = os.path.join(args.out, "manifest.json")
  entries, not_generated, demo = {}, {}, None
  if args.only and os.path.exists(manifest_path):
    with open(manifest_path) as handle:
      previous = json.load(handle)
    entries = {e["name"]: e for e in previous["models"]}
    not_generated = {e["name"]: e for e in previous.get("not_generated", [])}
    demo = previous.get("demo")
  elif os.path.isdir(args.out):
    for group in {case.group for case in cases}:
      shutil.rmtree(os.path.join(args.out, group), ignore_errors=True)
  os.makedirs(args.out, exist_ok=True)

  started = time.time()
  for number, case in enumerate(selected, 1):
    entries.pop(case.name, None)
    not_generated.pop(case.name, None)
    try:
      entries[case.name] = core.generate(case, args.out)
      status = "ok"
    except core.NotGenerated as reason:
      not_generated[case.name] = {"name": case.name, "group": case.group, "quantization": case.mode,
                                  "reason": str(reason)}
      status = f"NOT GENERATED: {reason}"
    print(f"[{number}/{len(selected)}] {case.group}/{case.name}: {status}", flush=True)

  if any(case.group == "networks" for case in selected) or demo is None:
    from . import networks
    demo = networks.write_demo(args.out)
  write_manifest(manifest_path, list(entries.values()), list(not_generated.values()), demo)
  print(f"{len(entries)} models, {len(not_generated)} not generated, {time.time() - started:.0f} s", file=sys.stderr)


if __name__ == "__main__":
  main()
