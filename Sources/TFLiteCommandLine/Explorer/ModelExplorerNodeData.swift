// Google's Model Explorer "node data" JSON: values per graph node, shown as colours over the graph
// (`ai-edge-model-explorer`'s `ModelNodeData`, checked by `Scripts/check_model_explorer_node_data.py`).
//
// The file is one object keyed by graph id; each graph's value is a `GraphNodeData`:
// `{"name": ..., "results": {"<node id>": {"value": n}}, "gradient": [{"stop": 0…1, "bgColor": ...}]}`
// or, instead of `gradient`, `"thresholds": [{"value": upper bound, "bgColor": ...}]` (a value at or
// below the first bound takes its colour, and so on; above the last, no colour). Values that are
// not finite have no JSON number and are left out.
// For a `.tflite` file, Model Explorer's flatbuffer adapter names each graph after its subgraph
// (`SubGraph.name`) and each operator node by the operator's index in its subgraph ("0", "1", …).
import TFLiteFormat

/// Per-operator values for Model Explorer, one set per graph, with how to colour them.
struct ModelExplorerNodeData {
  /// How Model Explorer colours a node from its value.
  enum Coloring {
    /// Interpolated between colours at stops 0 (the smallest value) to 1 (the largest).
    case gradient([(stop: Double, color: String)])
    /// The first upper bound at or above the value gives the colour.
    case thresholds([(upperBound: Double, color: String)])
  }

  /// The name Model Explorer shows for the data.
  var name: String
  /// Values per graph id, each keyed by node id, in the order they are written.
  var graphs: [(graphID: String, values: [(nodeID: String, value: Double)])]
  /// How nodes are coloured.
  var coloring: Coloring

  /// Green for small values through yellow to red for large ones (times, errors).
  static let coldToHot: Coloring = .gradient([(0, "#2e7d32"), (0.5, "#f9a825"), (1, "#c62828")])

  /// The graph id Model Explorer's `.tflite` adapter gives subgraph `index`: its name, or
  /// `subgraph_<index>` when the file gives none.
  static func graphID(of model: Model, subgraph index: Int) -> String {
    let name = model.subgraphs[index].name ?? ""
    return name.isEmpty ? "subgraph_\(index)" : name
  }

  /// The document, as Model Explorer's `ModelNodeData.save_to_file` would write it.
  var json: JSONValue {
    let colors: (String, JSONValue)
    switch coloring {
    case .gradient(let stops):
      colors = ("gradient", .array(stops.map { .object([("stop", .number($0.stop)), ("bgColor", .string($0.color))]) }))
    case .thresholds(let bounds):
      colors = ("thresholds", .array(bounds.map { .object([("value", .number($0.upperBound)), ("bgColor", .string($0.color))]) }))
    }
    return .object(
      graphs.map { graph in
        let results = JSONValue.object(graph.values.filter(\.value.isFinite).map { ($0.nodeID, .object([("value", .number($0.value))])) })
        return (graph.graphID, .object([("name", .string(name)), ("results", results), colors]))
      })
  }
}
