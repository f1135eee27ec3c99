// Writes a `GraphDiagram` as SVG, Graphviz DOT or one self-contained HTML page.
//
// Every piece of model text (tensor, operator, custom-code and subgraph names, option strings) is
// escaped for where it lands: `&`, `<`, `>`, `"` and `'` become character references in SVG and
// HTML text and attribute values; `"`, `\` and line breaks are escaped in DOT strings. Element ids
// are built from numbers only. The HTML page has no script and loads nothing: it holds one SVG per
// subgraph, and a control-flow operator's box links to the subgraphs it calls.

import TFLiteFormat

/// The graph writers.
enum GraphWriter {
  /// `text` escaped for XML/HTML text and attribute values.
  static func escapeMarkup(_ text: String) -> String {
    text.replacingScalars { character in
      switch character {
      case "&": "&amp;"
      case "<": "&lt;"
      case ">": "&gt;"
      case "\"": "&quot;"
      case "'": "&#39;"
      case _ where character.value < 0x20 && character != "\n" && character != "\t": "\u{FFFD}"
      default: nil
      }
    }
  }

  /// `text` as the inside of a DOT double-quoted string.
  static func escapeDOT(_ text: String) -> String {
    text.replacingScalars { character in
      switch character {
      case "\"": "\\\""
      case "\\": "\\\\"
      case "\n", "\r": "\\n"
      default: nil
      }
    }
  }

  /// A number with at most one decimal.
  private static func coordinate(_ value: Double) -> String {
    let rounded = (value * 10).rounded() / 10
    return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
  }

  /// The diagram as a standalone SVG document (`standalone`) or an inline `<svg>` element for HTML,
  /// where boxes of control-flow operators link to `#subgraph-N`.
  static func svg(_ diagram: GraphDiagram, standalone: Bool) -> String {
    var text = ""
    if standalone { text += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" }
    text += "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"graph\" width=\"\(coordinate(diagram.width))\" height=\"\(coordinate(diagram.height))\""
    text += " viewBox=\"0 0 \(coordinate(diagram.width)) \(coordinate(diagram.height))\" font-family=\"monospace\" font-size=\"12\">\n"
    text += "<defs><marker id=\"arrow-\(diagram.subgraphIndex)\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#555\"/></marker></defs>\n"
    for edge in diagram.edges {
      text += "<g class=\"edge\" data-tensor=\"\(edge.tensor)\"><title>\(escapeMarkup(edge.tensorName))</title>"
      text += "<path d=\"\(path(through: edge.points))\" fill=\"none\" stroke=\"#555\" marker-end=\"url(#arrow-\(diagram.subgraphIndex))\"/>"
      if let label = edge.labelPosition {
        text += "<text x=\"\(coordinate(label.x))\" y=\"\(coordinate(label.y))\" font-size=\"10\" fill=\"#333\">\(escapeMarkup(edge.label))</text>"
      }
      text += "</g>\n"
    }
    for box in diagram.boxes {
      let fill: String
      switch box.kind {
      case .op: fill = box.overlay?.color ?? "#e3f2fd"
      case .input: fill = "#fff9c4"
      case .output: fill = "#f3e5f5"
      }
      let link = standalone ? nil : box.calls.first.map { "#subgraph-\($0.subgraph)" }
      text += "<g class=\"node\" id=\"sg\(diagram.subgraphIndex)-\(box.elementID)\">"
      if let link { text += "<a href=\"\(link)\">" }
      text += "<title>\(escapeMarkup(([box.title] + box.lines).joined(separator: "\n")))</title>"
      text += "<rect x=\"\(coordinate(box.x))\" y=\"\(coordinate(box.y))\" width=\"\(coordinate(box.width))\" height=\"\(coordinate(box.height))\" rx=\"5\" fill=\"\(escapeMarkup(fill))\" stroke=\"#333\"/>"
      let lines = [box.title] + box.lines + (box.overlay.map { [$0.text] } ?? [])
      for (number, line) in lines.enumerated() {
        let y = box.y + 6 + GraphDiagram.lineHeight * Double(number + 1) - 3
        let weight = number == 0 ? " font-weight=\"bold\"" : ""
        text += "<text x=\"\(coordinate(box.x + 10))\" y=\"\(coordinate(y))\"\(weight)>\(escapeMarkup(line))</text>"
      }
      if link != nil { text += "</a>" }
      text += "</g>\n"
    }
    return text + "</svg>\n"
  }

  /// SVG path data through `points`, alternately straight down through a row (below the producer,
  /// or beside the boxes of a row the edge crosses) and across the gap between rows (a curve,
  /// vertical at both ends).
  private static func path(through points: [(x: Double, y: Double)]) -> String {
    guard let first = points.first else { return "" }
    var data = "M\(coordinate(first.x)),\(coordinate(first.y))"
    for (index, (from, to)) in zip(points, points.dropFirst()).enumerated() {
      if index % 2 == 0 {
        data += " L\(coordinate(to.x)),\(coordinate(to.y))"
      } else {
        let middle = coordinate((from.y + to.y) / 2)
        data += " C\(coordinate(from.x)),\(middle) \(coordinate(to.x)),\(middle) \(coordinate(to.x)),\(coordinate(to.y))"
      }
    }
    return data
  }

  /// The diagram as Graphviz DOT (record-free: plain boxes with multi-line labels).
  static func dot(_ diagram: GraphDiagram) -> String {
    var text = "digraph \"\(escapeDOT("subgraph \(diagram.subgraphIndex) \(diagram.subgraphName)"))\" {\n"
    text += "  node [shape=box, style=\"rounded,filled\", fontname=\"monospace\", fillcolor=\"#e3f2fd\"];\n"
    for box in diagram.boxes {
      let lines = [box.title] + box.lines + (box.overlay.map { [$0.text] } ?? [])
      var attributes = "label=\"\(escapeDOT(lines.joined(separator: "\n")))\""
      if let overlay = box.overlay { attributes += ", fillcolor=\"\(escapeDOT(overlay.color))\"" }
      if case .op = box.kind {} else { attributes += ", shape=ellipse, fillcolor=\"#fff9c4\"" }
      text += "  \"\(box.elementID)\" [\(attributes)];\n"
    }
    for edge in diagram.edges {
      text += "  \"\(diagram.boxes[edge.from].elementID)\" -> \"\(diagram.boxes[edge.to].elementID)\" [label=\"\(escapeDOT(edge.label))\", tooltip=\"\(escapeDOT(edge.tensorName))\"];\n"
    }
    return text + "}\n"
  }

  /// One HTML page with every diagram (the first shown first), a table of contents, and links from
  /// control-flow boxes to the subgraphs they call.
  static func html(_ diagrams: [GraphDiagram], title: String) -> String {
    var text = """
      <!DOCTYPE html>
      <html lang="en">
      <head>
      <meta charset="utf-8">
      <title>\(escapeMarkup(title))</title>
      <style>
      body { font-family: sans-serif; margin: 16px; background: #fafafa; }
      section { margin: 24px 0; }
      .scroll { overflow: auto; border: 1px solid #ccc; background: #fff; }
      .node a rect { stroke: #1565c0; stroke-width: 2; }
      .node:hover rect { stroke-width: 3; }
      .edge:hover path { stroke: #d32f2f; stroke-width: 2; }
      </style>
      </head>
      <body>
      <h1>\(escapeMarkup(title))</h1>
      <nav><ul>

      """
    for diagram in diagrams {
      let name = diagram.subgraphName.isEmpty ? "" : " " + diagram.subgraphName
      let operatorCount = diagram.boxes.filter { if case .op = $0.kind { true } else { false } }.count
      text += "<li><a href=\"#subgraph-\(diagram.subgraphIndex)\">subgraph \(diagram.subgraphIndex)\(escapeMarkup(name))</a> (\(operatorCount) operators)</li>\n"
    }
    text += "</ul></nav>\n"
    for diagram in diagrams {
      let name = diagram.subgraphName.isEmpty ? "" : " " + diagram.subgraphName
      text += "<section id=\"subgraph-\(diagram.subgraphIndex)\">\n<h2>subgraph \(diagram.subgraphIndex)\(escapeMarkup(name))</h2>\n"
      text += "<div class=\"scroll\">\n" + svg(diagram, standalone: false) + "</div>\n</section>\n"
    }
    return text + "</body>\n</html>\n"
  }
}
