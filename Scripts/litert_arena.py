#!/usr/bin/env python3
"""Estimates the activation arena LiteRT plans for each model's primary subgraph.

LiteRT's Python API does not report its arena size, so this reads where the tensors ended up:
after `allocate_tensors()` (builtin kernels, no delegate, one thread) every activation tensor of
subgraph 0 (no constant buffer, not a variable) lives in the one read-write arena, so the span
from the lowest start to the highest end of their buffers is a lower bound of that arena. The
kernels' temporary tensors (im2col and the like, appended after the model's tensors) are not
counted: the Python API cannot read them. LiteRT's arena is at least this large; ours also holds
each node's scratch memory.

Usage: python Scripts/litert_arena.py MODEL.tflite...   (one JSON line per model)
       python Scripts/litert_arena.py --write TestModels/networks/litert_arena.json MODEL.tflite...
The second form measures each model in a child process (LiteRT's Python API sometimes crashes when
one process builds many interpreters) and writes {"generator": ..., "activation_span_bytes":
{model name: bytes}}, the file `ArenaSizeTests` compares our arenas against.
"""
import json
import os
import subprocess
import sys

from ai_edge_litert import interpreter as litert
from ai_edge_litert import schema_py_generated as schema


def activation_tensors(path):
    """Indices of subgraph 0's tensors that have no constant data and are not variables."""
    with open(path, "rb") as handle:
        model = schema.ModelT.InitFromObj(schema.Model.GetRootAsModel(handle.read(), 0))
    graph = model.subgraphs[0]
    indices = []
    for index, tensor in enumerate(graph.tensors):
        buffer = model.buffers[tensor.buffer] if tensor.buffer < len(model.buffers) else None
        constant = buffer is not None and (
            (buffer.data is not None and len(buffer.data) > 0) or (buffer.size or 0) > 0)
        if not constant and not tensor.isVariable:
            indices.append(index)
    return indices


def extent(interpreter, index):
    """(start, end) of a tensor's buffer, or None when it has no memory."""
    try:
        array = interpreter.tensor(index)()
    except ValueError:
        return None
    if array.nbytes == 0:
        return None
    start = array.__array_interface__["data"][0]
    return start, start + array.nbytes


def measure(path):
    activations = activation_tensors(path)
    interpreter = litert.Interpreter(
        model_path=path, num_threads=1,
        experimental_op_resolver_type=litert.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
    interpreter.allocate_tensors()
    spans = [s for s in (extent(interpreter, i) for i in activations) if s]
    low, high = min(s[0] for s in spans), max(s[1] for s in spans)
    return {"model": path, "activation_span_bytes": high - low}


def write(output_path, model_paths):
    """Measures every model in a child process and writes the spans by model name."""
    spans = {}
    for model_path in model_paths:
        line = subprocess.run(
            [sys.executable, os.path.abspath(__file__), model_path],
            check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1]
        name = os.path.splitext(os.path.basename(model_path))[0]
        spans[name] = json.loads(line)["activation_span_bytes"]
    from ai_edge_litert import __version__ as litert_version
    document = {"generator": {"script": "Scripts/litert_arena.py", "ai_edge_litert": litert_version},
                "activation_span_bytes": dict(sorted(spans.items()))}
    with open(output_path, "w") as handle:
        json.dump(document, handle, indent=1)
        handle.write("\n")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--write"]:
        write(sys.argv[2], sys.argv[3:])
    else:
        for model_path in sys.argv[1:]:
            print(json.dumps(measure(model_path)))
