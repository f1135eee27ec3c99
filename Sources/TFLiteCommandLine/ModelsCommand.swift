import FirebaseMLModelDownloader
import Foundation

/// `tflite models list|delete|index`: manages downloaded models and writes static-hosting indexes.
enum ModelsCommand: Subcommand {
  /// Name, options and help.
  static let specification = CommandSpecification(
    name: "models",
    abstract: "List or delete downloaded models, or write the static-hosting index of a model file.",
    positionals: ["list | delete NAME | index MODEL.tflite"],
    options: [
      .option("storage", value: "DIR", help: "model storage folder (default: $XDG_DATA_HOME or ~/.local/share)"),
      .option("name", value: "NAME", help: "index: the model's name (default: the file name without extension)"),
      .option("url", value: "URL", help: "index: where the file will be served, absolute or relative to the index (default: the file name)"),
      .option("output", value: "FILE", help: "index: where to write it, '-' for standard output (default: NAME.json beside the model)"),
    ],
    discussion: """
      list    prints name, size, version and path of each downloaded model
      delete  removes a downloaded model
      index   writes {"name", "url", "sha256", "size"} for MODEL.tflite; upload both files to a
              static host and download with `tflite download NAME --index BASE_URL`
      """)

  /// Runs the subcommand named by the first positional argument.
  static func run(_ arguments: ParsedArguments, output: inout any TextSink) throws -> Int32 {
    guard let action = arguments.positionals.first else { throw UsageError("missing action: list, delete or index") }
    let operands = Array(arguments.positionals.dropFirst())
    switch action {
    case "list":
      guard operands.isEmpty else { throw UsageError("'list' takes no arguments") }
      return try list(arguments, output: &output)
    case "delete":
      guard operands.count == 1, let name = operands.first else { throw UsageError("'delete' needs one model NAME") }
      try waitFor { try await downloader(arguments).deleteDownloadedModel(name: name) }
      output.write("deleted \(name)\n")
      return ExitCode.success
    case "index":
      guard operands.count == 1, let path = operands.first else { throw UsageError("'index' needs one MODEL file") }
      return try writeIndex(modelPath: path, arguments, output: &output)
    default:
      throw UsageError("unknown action '\(action)': use list, delete or index")
    }
  }

  /// A downloader over the chosen storage folder (its source is never asked).
  private static func downloader(_ arguments: ParsedArguments) throws -> ModelDownloader {
    ModelDownloader(
      source: .localDirectory(URL(fileURLWithPath: "/", isDirectory: true)),
      settings: ModelDownloaderSettings(storageDirectory: try storageDirectory(arguments), callbackQueue: .privateSerial))
  }

  /// Prints one line per stored model: name, size in bytes, version, path.
  private static func list(_ arguments: ParsedArguments, output: inout any TextSink) throws -> Int32 {
    let models = try waitFor { try await downloader(arguments).listDownloadedModels() }.sorted { $0.name < $1.name }
    guard !models.isEmpty else {
      output.writeError("no downloaded models\n")
      return ExitCode.success
    }
    let nameWidth = models.map(\.name.count).max() ?? 0
    let sizeWidth = models.map { String($0.size).count }.max() ?? 0
    for model in models {
      let name = model.name.padding(toLength: nameWidth, withPad: " ", startingAt: 0)
      let size = String(repeating: " ", count: sizeWidth - String(model.size).count) + String(model.size)
      output.write("\(name)  \(size)  \(model.hash)  \(model.path)\n")
    }
    return ExitCode.success
  }

  /// Writes the index of the model at `modelPath` and prints where it went.
  private static func writeIndex(modelPath: String, _ arguments: ParsedArguments, output: inout any TextSink) throws -> Int32 {
    let index = try StaticModelIndex(describingModelAtPath: modelPath, name: arguments.value("name"), url: arguments.value("url"))
    let destination = arguments.value("output") ?? URL(fileURLWithPath: modelPath).deletingLastPathComponent()
      .appendingPathComponent("\(index.name).json").path
    if destination == "-" {
      output.write(index.jsonText)
    } else {
      try Data(index.jsonText.utf8).write(to: URL(fileURLWithPath: destination), options: .atomic)
      output.write(destination + "\n")
    }
    return ExitCode.success
  }
}
