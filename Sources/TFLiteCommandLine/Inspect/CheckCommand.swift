import TFLiteFormat
import TFLiteRuntime

/// `tflite check MODEL [--json]`: before running anything, every operator of the model this runtime
/// cannot run (no kernel, or a type, version, option or quantization scheme no kernel handles).
/// The answer is the runtime's own (``OperatorSupport/unsupportedOperators(in:options:)``: the list
/// loading the model, or a signature's first use, throws), so `check` and loading cannot disagree. Exit code 0 when everything
/// can run, 1 when something cannot, 2 when the model cannot be read or is not a valid graph.
struct CheckCommand: Subcommand {
  static let specification = CommandSpecification(
    name: "check",
    abstract: "List every operator, type or quantization scheme of a model this runtime cannot run.",
    positionals: ["MODEL"],
    options: [
      .flag("json", help: "Print the result as JSON (format described in README.md)."),
    ],
    discussion: "Exit code 0 when the runtime can run every operator, 1 when it cannot run some, "
      + "2 when the model cannot be read. Checks what loading checks (subgraph 0 and every subgraph its "
      + "control flow calls) and every signature's subgraph.")

  /// Bumped when a field changes meaning or disappears; adding fields keeps the number.
  static let formatVersion = 1

  static func run(_ arguments: ParsedArguments, output: inout any TextSink) throws -> Int32 {
    let path = try arguments.singlePositional("MODEL")
    let asJSON = arguments.flag("json")
    let unsupported: [UnsupportedOperator]
    do {
      unsupported = try OperatorSupport.unsupportedOperators(in: TFLiteModel(contentsOfFile: path))
    } catch {
      if asJSON {
        output.write(document(path: path, unsupported: nil, error: "\(error)").rendered())
      } else {
        output.writeError("tflite check: \(path) cannot be read: \(error)\n")
      }
      return ExitCode.unusableInput
    }
    if asJSON {
      output.write(document(path: path, unsupported: unsupported, error: nil).rendered())
    } else if unsupported.isEmpty {
      output.write("\(path): this runtime can run every operator\n")
    } else {
      let count = unsupported.count
      output.write(
        "\(path): \(count) operator\(count == 1 ? "" : "s") this runtime cannot run:\n"
          + unsupported.map { "  \($0)\n" }.joined())
    }
    return unsupported.isEmpty ? ExitCode.success : ExitCode.failure
  }

  /// The JSON document: `supported` is null and `error` set when the model could not be read.
  private static func document(path: String, unsupported: [UnsupportedOperator]?, error: String?) -> JSONValue {
    .object([
      ("format", .string("tflite-check")),
      ("format_version", .int(formatVersion)),
      ("file", .string(path)),
      ("supported", unsupported.map { .bool($0.isEmpty) } ?? .null),
      ("error", .string(error)),
      ("unsupported", .array((unsupported ?? []).map { entry in
        .object([
          ("subgraph", .int(entry.subgraph)), ("node", .int(entry.node)), ("op", .string(entry.opName)),
          ("version", .int(entry.version)), ("reason", .string(entry.reason)),
        ])
      })),
    ])
  }
}
