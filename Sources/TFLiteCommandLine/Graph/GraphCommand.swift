import TFLiteFormat

/// `tflite graph MODEL`: a picture of a subgraph as SVG, DOT or a self-contained HTML page.
enum GraphCommand: Subcommand {
  /// Name, options and help.
  static let specification = CommandSpecification(
    name: "graph",
    abstract: "Draw a model's graph as SVG, Graphviz DOT or one self-contained HTML page.",
    positionals: ["MODEL"],
    options: [
      .option("format", value: "svg|dot|html", help: "Output format (default svg)."),
      .option("subgraph", value: "N", help: "Subgraph to draw (default 0; HTML holds every subgraph, this one first)."),
      .option("output", value: "FILE", help: "Write to FILE instead of standard output."),
      .option("overlay", value: "FILE.json", help: "Colour operators by `tflite profile --json` times or `tflite compare --json` errors."),
    ],
    discussion: """
      Operators are boxes showing their options, constant inputs folded in; edges are tensors
      labelled with type and shape (hover for the name). The layout is computed here: no Graphviz is
      needed for SVG or HTML. In HTML, WHILE/IF/CALL_ONCE boxes link to the subgraphs they call.
      """)

  /// Runs the command.
  static func run(_ arguments: ParsedArguments, output: inout any TextSink) throws -> Int32 {
    let path = try arguments.singlePositional("MODEL")
    let format = arguments.value("format") ?? "svg"
    guard ["svg", "dot", "html"].contains(format) else { throw UsageError("--format must be svg, dot or html, got '\(format)'") }
    let file = try TFLiteModel(contentsOfFile: path)
    let chosen = try arguments.integer("subgraph", default: 0, in: 0...Int(Int32.max))
    let overlay = try arguments.value("overlay").map { try GraphOverlay(contentsOfFile: $0) }
    func diagram(_ index: Int) throws -> GraphDiagram {
      var diagram = try GraphDiagram(file: file, subgraphIndex: index)
      if let overlay { diagram.apply(overlay) }
      return diagram
    }
    let text: String
    switch format {
    case "dot": text = GraphWriter.dot(try diagram(chosen))
    case "html":
      let first = try diagram(chosen)
      let others = try file.model.subgraphs.indices.filter { $0 != chosen }.map(diagram)
      text = GraphWriter.html([first] + others, title: "tflite graph " + path)
    default: text = GraphWriter.svg(try diagram(chosen), standalone: true)
    }
    if let destination = arguments.value("output") {
      try writeText(text, to: destination)
    } else {
      output.write(text)
    }
    return ExitCode.success
  }
}
