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
    guard let classifier = manifest.models.first(where: { $0.labels != nil }), let labelsFile = classifier.labels else {
      throw CommandFailure("\(manifest.path) lists no classifier with labels")
    }
    let labels = try String(contentsOfFile: manifest.resolve(labelsFile), encoding: .utf8)
      .split(whereSeparator: \.isNewline).map(String.init)
    let model = try LoadedModel(
      path: manifest.resolve(classifier.file), signatureKey: nil,
      threadCount: try arguments.integer("threads", default: 1, in: 1...256))
    let inputFiles = classifier.demoInputs ?? classifier.inputs.map(\.file)
    guard !inputFiles.isEmpty else { throw CommandFailure("\(classifier.name) has no demo inputs") }
    output.write("\(classifier.name) (\(classifier.file)), \(labels.count) classes\n")
    for file in inputFiles {
      try model.feed([try HostArray(numPyFile: manifest.resolve(file))])
      let started = ContinuousClock.now
      try model.executor.invoke()
      let elapsed = ContinuousClock.now - started
      guard let scores = model.outputArrays().first?.realValues() else {
        throw CommandFailure("\(classifier.name) has no numeric output")
      }
      output.write("\(file) (\(formatMilliseconds(elapsed)) ms):\n")
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

