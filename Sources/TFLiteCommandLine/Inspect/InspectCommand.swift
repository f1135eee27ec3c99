import TFLiteFormat

/// `tflite inspect MODEL [--tensors] [--json]`: what a model contains, as text or JSON.
struct InspectCommand: Subcommand {
  static let specification = CommandSpecification(
    name: "inspect",
    abstract: "Show what a .tflite model contains: graph, tensors, operators, quantization, metadata.",
    positionals: ["MODEL"],
    options: [
      .flag("tensors", help: "Also list every tensor of every subgraph."),
      .flag("json", help: "Print the report as JSON (format described in README.md; always lists tensors)."),
    ],
    discussion: "Operators marked * have no kernel in this runtime yet.")

  static func run(_ arguments: ParsedArguments, output: inout any TextSink) throws -> Int32 {
    let path = try arguments.singlePositional("MODEL")
    let inspected = InspectedModel(path: path, file: try TFLiteModel(contentsOfFile: path))
    if arguments.flag("json") {
      output.write(InspectJSONReport(inspected: inspected).document().rendered())
    } else {
      output.write(InspectTextReport(inspected: inspected, includesTensors: arguments.flag("tensors")).rendered())
    }
    return ExitCode.success
  }
}
