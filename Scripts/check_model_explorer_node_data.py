#!/usr/bin/env python3
"""Checks a node-data file written by `tflite profile --node-data` against Model Explorer itself.

Usage (not run by `swift test`; needs the `ai-edge-model-explorer` package, e.g. in a venv made with
`python3 -m venv --system-site-packages /work/venv-me && /work/venv-me/bin/pip install ai-edge-model-explorer`):

    /work/venv-me/bin/python Scripts/check_model_explorer_node_data.py MODEL.tflite NODE_DATA.json

What it checks, with the package's own code:
1. The file is accepted by `ModelExplorerConfig.add_node_data_from_path` (what `model-explorer
   --node_data_paths` uses) and parses into the package's dataclasses `ModelNodeData` /
   `GraphNodeData` / `NodeDataResult` / `GradientItem` / `ThresholdItem`, which reject unknown
   fields; re-serialising with `ModelNodeData.to_json_string` gives back every graph, node key and
   value.
2. Every graph id is a graph of MODEL as the package's built-in `.tflite` flatbuffer adapter
   converts it, and every node key is the id of an operator node of that graph (not of the
   GraphInputs/GraphOutputs/pseudo_const nodes the adapter adds).
3. Every value is a number; a gradient has stops 0 and 1.
Prints one line per graph and exits 1 on the first failure.
"""
import json
import sys

import model_explorer
from model_explorer.builtin_tflite_flatbuffer_adapter import BuiltinTfliteFlatbufferAdapter
from model_explorer.node_data_builder import (GradientItem, GraphNodeData, ModelNodeData, NodeDataResult,
                                              ThresholdItem)


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def operator_node_ids(model_path):
    """Graph id -> ids of the nodes the adapter made for operators."""
    converted = BuiltinTfliteFlatbufferAdapter().convert(model_path, {})
    graphs = {}
    for collection in converted["graphCollections"]:
        for graph in collection.graphs:
            added = {"GraphInputs", "GraphOutputs", "pseudo_const"}
            graphs[graph["id"]] = {node["id"] for node in graph["nodes"] if node["label"] not in added}
    return graphs


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        sys.exit(2)
    model_path, data_path = sys.argv[1], sys.argv[2]
    model_explorer.config().add_node_data_from_path(data_path)
    with open(data_path) as handle:
        document = json.load(handle)
    if not isinstance(document, dict) or not document:
        fail("the file must be a non-empty object keyed by graph id")
    parsed = ModelNodeData(graphsData={
        graph_id: GraphNodeData(
            results={key: NodeDataResult(**result) for key, result in graph["results"].items()},
            **{field: value for field, value in graph.items() if field not in ("results", "gradient", "thresholds")},
            gradient=[GradientItem(**item) for item in graph.get("gradient", [])],
            thresholds=[ThresholdItem(**item) for item in graph.get("thresholds", [])])
        for graph_id, graph in document.items()
    })
    round_trip = json.loads(parsed.to_json_string())
    graphs = operator_node_ids(model_path)
    for graph_id, graph in document.items():
        if graph_id not in graphs:
            fail(f"graph id {graph_id!r} is not a graph of the model (adapter graphs: {sorted(graphs)})")
        for key, result in graph["results"].items():
            if key not in graphs[graph_id]:
                fail(f"node key {key!r} of graph {graph_id!r} is not an operator node id")
            if not isinstance(result["value"], (int, float)) or isinstance(result["value"], bool):
                fail(f"value of node {key!r} is not a number")
            if round_trip[graph_id]["results"][key]["value"] != result["value"]:
                fail(f"node {key!r} changed in the package's round trip")
        stops = [item["stop"] for item in graph.get("gradient", [])]
        if stops and (min(stops) != 0 or max(stops) != 1):
            fail(f"gradient of graph {graph_id!r} must have stops 0 and 1, has {stops}")
        print(f"ok: graph {graph_id!r}: {len(graph['results'])} of {len(graphs[graph_id])} operator nodes have values")


if __name__ == "__main__":
    main()
