import Foundation

/// `tflite demo`: classifies the bundled demo inputs with the bundled trained classifier.
enum DemoCommand: Subcommand {
  /// Name, options and help.
  static let specification = CommandSpecification(
    name: "demo",
    abstract: "Classify the bundled demo inputs with the bundled classifier and print the top 5.",
    options: [
      .option("models", value: "DIR", help: "The TestModels directory (default: found from the current directory)."),
      .option("threads", value: "N", help: "Threads the kernels may use (default 1)."),
    ],
    discussion: "Run it from the repository: swift run tflite demo")

  /// Runs the command.
  static func run(_ arguments: ParsedArguments, output: inout any TextSink) throws -> Int32 {
    guard arguments.positionals.isEmpty else { throw UsageError("demo takes no arguments") }
    let directory = try arguments.value("models") ?? locateTestModels()
    let manifest = try TestModelManifest(directory: directory)
    guard let demo = manifest.demo else { throw CommandFailure("\(manifest.path) has no demo classifier") }
    let labels = try String(contentsOfFile: manifest.resolve(demo.labels), encoding: .utf8)
      .split(whereSeparator: \.isNewline).map(String.init)
    let model = try LoadedModel(
      path: manifest.resolve(demo.model), signatureKey: nil,
      threadCount: try arguments.integer("threads", default: 1, in: 1...256))
    guard !demo.inputs.isEmpty else { throw CommandFailure("\(demo.model) has no demo inputs") }
    output.write("\(demo.model), \(labels.count) classes\n")
    for sample in demo.inputs {
      let file = sample.file
      try model.feed([try HostArray(numPyFile: manifest.resolve(file))])
      let started = ContinuousClock.now
      try model.executor.invoke()
      let elapsed = ContinuousClock.now - started
      guard let scores = model.outputArrays().first?.realValues() else {
        throw CommandFailure("\(demo.model) has no numeric output")
      }
      let truth = sample.labelName.map { ", true class \($0)" } ?? ""
      output.write("\(file)\(truth) (\(formatMilliseconds(elapsed)) ms):\n")
      for (rank, entry) in topIndices(scores, count: 5).enumerated() {
        let name = entry.index < labels.count ? labels[entry.index] : "class \(entry.index)"
        output.write("  \(rank + 1). \(name)  \(String(format: "%.4f", entry.value))\n")
      }
    }
    return ExitCode.success
  }

  /// `TestModels` in the current directory or the nearest parent that has one.
  static func locateTestModels() throws -> String {
    var directory = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
    while true {
      let candidate = directory.appendingPathComponent("TestModels")
      if FileManager.default.fileExists(atPath: candidate.appendingPathComponent("manifest.json").path) {
        return candidate.path
      }
      let parent = directory.deletingLastPathComponent()
      guard parent.path != directory.path else {
        throw CommandFailure("no TestModels/manifest.json in the current directory or above; run from the repository or pass --models DIR")
      }
      directory = parent
    }
  }
}

