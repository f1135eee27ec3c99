#!/usr/bin/env python3
"""Loads the Chrome trace of `tflite profile --chrome-trace` into Perfetto's trace processor and checks it.

Usage (not run by `swift test`; needs the PyPI `perfetto` package in a private venv; the package
downloads its `trace_processor_shell` binary on first use, or takes one with `--trace-processor`):

    python3 -m venv --system-site-packages /work/venv-perfetto && /work/venv-perfetto/bin/pip install perfetto
    /work/venv-perfetto/bin/python Scripts/check_chrome_trace.py [MODEL.tflite ...] [--tflite PATH/TO/tflite] \
        [--trace-processor PATH/TO/trace_processor_shell]

Before loading, each trace is checked the way Perfetto's JSON importer reads it (its facts, not its
code): "ts" and "dur" are microseconds that become whole nanoseconds by rounding `value * 1000`, and
complete events on one thread must nest (a slice that starts inside another must end inside it),
else the importer drops or misplaces them. These offline checks run even where the trace processor
cannot be fetched (then the script says so and exits 2).

MODELs default to a float network and a model with a WHILE loop from TestModels; the tool to
`swift run tflite`. For each model the script writes the trace with `tflite profile MODEL --runs 2
--chrome-trace FILE`, loads it with `perfetto.trace_processor.TraceProcessor`, and checks:
- the importer reported no error or data loss (its `stats` table);
- every complete event ("ph": "X") became one slice, with its name, start and duration (to 1 ns);
- the process got its name from the metadata event;
- slices nest as the operators do: a node of a subgraph a control-flow operator calls (its
  `args.subgraph` is not 0) lies inside that operator's slice (depth > 0, its parent's span holds it).
Exits 1 with the reasons when a check fails.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

from perfetto.trace_processor import TraceProcessor, TraceProcessorConfig

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_MODELS = ["TestModels/networks/mobilenet_mini_float.tflite", "TestModels/graphs/lstm_f32_keras_while_loop.tflite"]


def nesting_problems(complete):
    """Complete events of one thread that overlap without nesting, in whole nanoseconds."""
    problems = []
    by_thread = {}
    for event in complete:
        start = round(event["ts"] * 1000)
        by_thread.setdefault((event["pid"], event["tid"]), []).append((start, -(start + round(event["dur"] * 1000)), event["name"]))
    for events in by_thread.values():
        open_ends = []
        for start, negative_end, name in sorted(events):
            end = -negative_end
            while open_ends and open_ends[-1] <= start:
                open_ends.pop()
            if open_ends and end > open_ends[-1]:
                problems.append(f"{name} [{start}, {end}] ns overlaps the slice around it without nesting")
            open_ends.append(end)
    return problems


def offline_problems(trace):
    """What Perfetto's JSON importer would reject or misplace, checked without it."""
    problems = []
    events = trace.get("traceEvents")
    if not isinstance(events, list):
        return ["no traceEvents list"]
    for event in events:
        if event.get("ph") == "X":
            numbers = all(isinstance(event.get(key), (int, float)) and event[key] >= 0 for key in ("ts", "dur"))
            ids = all(isinstance(event.get(key), int) for key in ("pid", "tid"))
            if not (numbers and ids and isinstance(event.get("name"), str)):
                problems.append(f"malformed complete event {event}")
        elif event.get("ph") != "M":
            problems.append(f"unexpected phase {event.get('ph')!r}")
    return problems + nesting_problems([event for event in events if event.get("ph") == "X"])


def check(tool, model, work, trace_processor):
    """Returns the problems found in the trace of `model`."""
    trace_path = os.path.join(work, os.path.basename(model) + ".json")
    subprocess.run(tool + ["profile", model, "--runs", "2", "--chrome-trace", trace_path], check=True, capture_output=True)
    with open(trace_path, encoding="utf-8") as handle:
        trace = json.load(handle)
    complete = [event for event in trace["traceEvents"] if event.get("ph") == "X"]
    problems = offline_problems(trace)
    print(f"{model}: {len(complete)} complete events, offline checks {'passed' if not problems else 'FAILED'}")
    try:
        config = TraceProcessorConfig(bin_path=trace_processor) if trace_processor else TraceProcessorConfig()
        processor = TraceProcessor(trace=trace_path, config=config)
    except Exception as error:  # the package raises whatever fetching or starting its binary raised
        if problems:
            return problems
        raise TraceProcessorUnavailable(f"{type(error).__name__}: {error}") from error
    try:
        stats = processor.query(
            "select name, idx, severity, value from stats where severity in ('error', 'data_loss') and value > 0").as_pandas_dataframe()
        problems += [f"importer {row.severity}: {row.name}[{row.idx}] = {row.value}" for row in stats.itertuples()]
        slices = processor.query(
            "select s.id, s.ts, s.dur, s.name, s.depth, s.parent_id, p.ts as parent_ts, p.dur as parent_dur "
            "from slice s left join slice p on s.parent_id = p.id order by s.ts, s.depth").as_pandas_dataframe()
        if len(slices) != len(complete):
            problems.append(f"{len(complete)} complete events, {len(slices)} slices")
        expected = sorted((round(event["ts"] * 1000), round(event["dur"] * 1000), event["name"]) for event in complete)
        loaded = sorted((int(row.ts), int(row.dur), row.name) for row in slices.itertuples())
        mismatched = [(a, b) for a, b in zip(expected, loaded) if abs(a[0] - b[0]) > 1 or abs(a[1] - b[1]) > 1 or a[2] != b[2]]
        problems += [f"event {a} loaded as {b}" for a, b in mismatched[:5]]
        names = processor.query("select name from process where name is not null").as_pandas_dataframe()
        if not any(str(name).startswith("tflite profile") for name in names["name"]):
            problems.append(f"process name not loaded: {list(names['name'])}")
        nested = sum(1 for event in complete if event["args"]["subgraph"] != 0)
        deep = slices[slices["depth"] > 0]
        if len(deep) != nested:
            problems.append(f"{nested} events of called subgraphs, {len(deep)} nested slices")
        outside = deep[(deep["ts"] < deep["parent_ts"]) | (deep["ts"] + deep["dur"] > deep["parent_ts"] + deep["parent_dur"])]
        problems += [f"slice {row.name} at {row.ts} lies outside its parent" for row in outside.itertuples()]
        print(f"{model}: {len(slices)} slices ({len(deep)} nested) loaded by trace processor")
    finally:
        processor.close()
    return problems


class TraceProcessorUnavailable(Exception):
    """The trace processor binary could not be fetched or started."""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("models", nargs="*", default=[os.path.join(REPO, model) for model in DEFAULT_MODELS])
    parser.add_argument("--tflite", help="path of a built tflite executable (default: swift run tflite)")
    parser.add_argument("--trace-processor", help="path of a trace_processor_shell binary (default: the package fetches one)")
    arguments = parser.parse_args()
    tool = [arguments.tflite] if arguments.tflite else ["swift", "run", "--package-path", REPO, "tflite"]
    problems = []
    unavailable = None
    with tempfile.TemporaryDirectory() as work:
        for model in arguments.models:
            try:
                problems += [f"{os.path.basename(model)}: {problem}" for problem in check(tool, model, work, arguments.trace_processor)]
            except TraceProcessorUnavailable as error:
                unavailable = str(error)
    if problems:
        print("FAIL:\n  " + "\n  ".join(problems))
        sys.exit(1)
    if unavailable:
        print(f"offline checks passed; cannot start Perfetto's trace processor ({unavailable[:300]}); give one with --trace-processor")
        sys.exit(2)
    print("ok: every trace loads in Perfetto's trace processor without errors, slices match the events")


if __name__ == "__main__":
    main()
