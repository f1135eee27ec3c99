// Colours for `tflite graph --overlay FILE`, read from the JSON of another command:
// - `tflite profile --json` (`"format": "tflite-profile"`): each operator's `median_ms`, coloured on a
//   green–yellow–red scale from the fastest to the slowest operator.
// - `tflite compare --reference --json` (`first_divergent` and `operators[].outputs[]`): an operator is
//   red when any output has `"within_tolerance": false`, green otherwise; its line shows the largest
//   `max_abs_error` (and `max_error_steps` when present). `operators` belong to subgraph 0, and
//   `subgraphs[].operators` to the subgraph `subgraphs[].index`.
import Foundation

/// Per-operator colours and one line of text each.
struct GraphOverlay {
  /// The colour and text of one operator.
  struct Mark: Equatable {
    /// A CSS colour.
    var color: String
    /// The line shown in the box.
    var text: String
  }

  /// Marks by subgraph and operator index.
  var marks: [NodeKey: Mark]

  /// Reads the overlay file at `path`.
  init(contentsOfFile path: String) throws {
    guard let data = FileManager.default.contents(atPath: path) else { throw CommandFailure("cannot read overlay \(path)") }
    try self.init(json: data, source: path)
  }

  /// Reads an overlay from JSON `data` (`source` names it in errors).
  init(json data: Data, source: String) throws {
    guard let root = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any],
      let operators = root["operators"] as? [[String: Any]]
    else {
      throw CommandFailure("overlay \(source) is not the JSON of `tflite profile --json` or `tflite compare --json` (no \"operators\" list)")
    }
    func integer(_ value: Any?) -> Int? { (value as? NSNumber).flatMap { Int(exactly: $0.doubleValue) } }
    func number(_ value: Any?) -> Double? { (value as? NSNumber)?.doubleValue }
    var marks: [NodeKey: Mark] = [:]
    if root["format"] as? String == "tflite-profile" {
      var times: [NodeKey: Double] = [:]
      for entry in operators {
        guard let node = integer(entry["operator_index"]), let time = number(entry["median_ms"]) else {
          throw CommandFailure("overlay \(source): an operator lacks operator_index or median_ms")
        }
        times[NodeKey(subgraph: integer(entry["subgraph"]) ?? 0, node: node)] = time
      }
      let slowest = times.values.max() ?? 0
      for (key, time) in times {
        marks[key] = Mark(color: Self.heat(slowest > 0 ? time / slowest : 0), text: String(format: "%.3f ms", time))
      }
    } else {
      let nested = (root["subgraphs"] as? [[String: Any]] ?? []).flatMap { subgraph in
        (subgraph["operators"] as? [[String: Any]] ?? []).map { (integer(subgraph["index"]) ?? -1, $0) }
      }
      for (subgraph, entry) in operators.map({ (0, $0) }) + nested {
        guard let node = integer(entry["operator_index"]), let outputs = entry["outputs"] as? [[String: Any]] else {
          throw CommandFailure("overlay \(source): an operator lacks operator_index or outputs")
        }
        let within = outputs.allSatisfy { ($0["within_tolerance"] as? Bool) ?? true }
        let error = outputs.compactMap { number($0["max_abs_error"]) }.max()
        let steps = outputs.compactMap { number($0["max_error_steps"]) }.max()
        var text = error.map { String(format: "max |Δ| %.3g", $0) } ?? "compared"
        if let steps { text += String(format: ", %.3g steps", steps) }
        marks[NodeKey(subgraph: subgraph, node: node)] = Mark(color: within ? "#a5d6a7" : "#ef9a9a", text: within ? text : "OUT: " + text)
      }
      if let first = root["first_divergent"] as? [String: Any], let node = integer(first["operator_index"]) {
        let key = NodeKey(subgraph: integer(first["subgraph"]) ?? 0, node: node)
        if let mark = marks[key] { marks[key] = Mark(color: "#e53935", text: "FIRST " + mark.text) }
      }
    }
    self.marks = marks
  }

  /// A colour from green (0) through yellow (0.5) to red (1).
  static func heat(_ fraction: Double) -> String {
    let clamped = min(max(fraction.isFinite ? fraction : 0, 0), 1)
    let red = clamped < 0.5 ? 0x81 + (0xff - 0x81) * clamped * 2 : 0xff
    let green = clamped < 0.5 ? 0xc7 + (0xee - 0xc7) * clamped * 2 : 0xee - (0xee - 0x80) * (clamped - 0.5) * 2
    let blue = clamped < 0.5 ? 0x84 - (0x84 - 0x58) * clamped * 2 : 0x58
    return "#" + [red, green, blue].map { String(format: "%02x", Int($0.rounded())) }.joined()
  }
}
