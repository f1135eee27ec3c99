import TFLiteFormat
import TFLiteRuntime

/// `tflite inspect MODEL [--tensors] [--json] [--plan]`: what a model contains, as text or JSON.
struct InspectCommand: Subcommand {
  static let specification = CommandSpecification(
    name: "inspect",
    abstract: "Show what a .tflite model contains: graph, tensors, operators, quantization, metadata.",
    positionals: ["MODEL"],
    options: [
      .flag("tensors", help: "Also list every tensor of every subgraph."),
      .flag("json", help: "Print the report as JSON (format described in README.md; always lists tensors)."),
      .flag("plan", help: "Also print the activation memory plan: arena size, each tensor's offset, size and lifetime."),
    ],
    discussion: "Operators marked * have no kernel in this runtime yet.")

  static func run(_ arguments: ParsedArguments, output: inout any TextSink) throws -> Int32 {
    let path = try arguments.singlePositional("MODEL")
    let model = try TFLiteModel(contentsOfFile: path)
    let inspected = InspectedModel(path: path, file: model)
    if arguments.flag("plan") && arguments.flag("json") { throw UsageError("--plan prints text; it cannot be combined with --json") }
    if arguments.flag("json") {
      output.write(InspectJSONReport(inspected: inspected).document().rendered())
    } else {
      output.write(InspectTextReport(inspected: inspected, includesTensors: arguments.flag("tensors")).rendered())
    }
    if arguments.flag("plan") {
      output.write("\n" + (try renderMemoryPlan(of: ModelRunner(model: model).primary)))
    }
    return ExitCode.success
  }
}
