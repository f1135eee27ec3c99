import TFLiteRuntime

/// `tflite compare MODEL --expected FILE.npy ...`: runs a model and checks its outputs against
/// expected values (for example, LiteRT's); `tflite compare MODEL --reference DIR` compares every
/// operator's outputs with a reference dump (``LayerComparison``).
enum CompareCommand: Subcommand {
  /// Name, options and help.
  static let specification = CommandSpecification(
    name: "compare",
    abstract: "Compare a model's outputs with expected .npy files, or every operator's with a reference dump.",
    positionals: ["MODEL"],
    options: [
      .option("input", value: "[NAME=]FILE.npy", repeatable: true, help: "An input, in input order or by name."),
      .option("expected", value: "[NAME=]FILE.npy", repeatable: true, help: "An expected output, in output order or by name."),
      .option("reference", value: "DIR", help: "Compare every operator with a reference dump (Scripts/litert_dump.py)."),
      .flag("isolate", help: "With --reference: run each operator on the reference's values of its inputs."),
      .option(
        "node-data", value: "FILE",
        help: "With --reference: write each operator's fraction of values beyond tolerance as Model Explorer node data."),
      .flag("json", help: "With --reference: print the comparison as JSON."),
      .option("max-steps", value: "K", help: "With --reference: allowed difference of integer tensors (default 0, exact)."),
      .option("atol", value: "A", help: "Absolute tolerance (default 1e-5)."),
      .option("rtol", value: "R", help: "Relative tolerance (default 1e-5)."),
      .option("signature", value: "KEY", help: "Run this signature instead of the primary graph."),
      .option("threads", value: "N", help: "Threads the kernels may use (default 1)."),
      .flag("reference-kernels", help: "Run on the plain reference kernels (Sources/TFLiteRuntime/Reference) where they exist."),
      .option("seed", value: "N", help: "Seed of random values for inputs without a file (default 0)."),
      .option("runs", value: "N", help: "Invoke N times from one copy of the inputs (default 1)."),
    ],
    discussion: """
      A value matches when |actual - expected| <= atol + rtol * |expected|. Quantized outputs are
      compared as stored integers, or dequantized when the expected file holds floats. The exit
      code is 1 when any output is out of tolerance or has another type or shape. With --runs N
      the inputs are copied once and invoked N times (invoke() leaves them unchanged, as in
      LiteRT); every run must give the first run's outputs bit for bit, and the last run's are
      compared.

      With --reference DIR (a dump of every tensor, written by Scripts/litert_dump.py) the primary
      subgraph runs on the dump's inputs and every operator's outputs are compared with the dump
      in execution order: integer tensors exactly (or within --max-steps), float tensors within
      atol + rtol * |reference|. Operators of the subgraphs control flow calls (WHILE, IF,
      CALL_ONCE) are compared too, each as its last run left its outputs (as the dump holds them),
      in a table per subgraph. The first operator beyond tolerance is named. Exit code 0 when
      every compared tensor is within tolerance, 1 when any is not, 2 when the dump cannot be used
      (another model, missing or malformed files).
      """)

  /// Runs the command.
  static func run(_ arguments: ParsedArguments, output: inout any TextSink) throws -> Int32 {
    let path = try arguments.singlePositional("MODEL")
    if let reference = arguments.value("reference") {
      return try compareLayers(modelPath: path, reference: reference, arguments, output: &output)
    }
    for option in ["isolate", "json"] where arguments.flag(option) {
      throw UsageError("--\(option) needs --reference DIR")
    }
    if arguments.value("node-data") != nil { throw UsageError("--node-data needs --reference DIR") }
    let expectedValues = arguments.allValues("expected")
    guard !expectedValues.isEmpty else { throw UsageError("give at least one --expected FILE.npy") }
    let tolerance = Tolerance(
      absolute: try arguments.number("atol", default: 1e-5), relative: try arguments.number("rtol", default: 1e-5))
    let model = try LoadedModel(
      path: path, signatureKey: arguments.value("signature"),
      threadCount: try arguments.integer("threads", default: 1, in: 1...256),
      kernels: arguments.flag("reference-kernels") ? .reference : .optimized)
    let expectedFiles = try FileAssignment(expectedValues, to: model.outputs, role: "output")
    let inputs = try inputArrays(
      for: model, inputValues: arguments.allValues("input"),
      seed: UInt64(try arguments.integer("seed", default: 0, in: 0...Int.max)))
    let runs = try arguments.integer("runs", default: 1, in: 1...1_000_000)
    try model.feed(inputs)
    try model.executor.invoke()
    let firstOutputs = model.outputArrays().map(\.bytes)
    var differingRuns = 0
    for _ in 1..<runs {
      try model.executor.invoke()
      if model.outputArrays().map(\.bytes) != firstOutputs { differingRuns += 1 }
    }
    var allMatch = true
    for (index, (endpoint, file)) in zip(model.outputs, expectedFiles.files).enumerated() {
      guard let file else { continue }
      let actual = HostArray(copying: endpoint.tensor)
      let report = OutputComparison(actual: actual, expected: try HostArray(numPyFile: file), tolerance: tolerance)
      allMatch = allMatch && report.matches
      output.write("output \(index) '\(endpoint.name)' vs \(file):\n" + report.lines.map { "  \($0)\n" }.joined())
    }
    if runs > 1 {
      output.write(
        differingRuns == 0
          ? "\(runs) invokes of one input copy gave bit-identical outputs\n"
          : "MISMATCH: \(differingRuns) of \(runs - 1) repeated invokes of one input copy gave other outputs than the first\n")
    }
    output.write(allMatch ? "all outputs within tolerance\n" : "MISMATCH: outputs beyond tolerance\n")
    return allMatch && differingRuns == 0 ? ExitCode.success : ExitCode.failure
  }
}

extension CompareCommand {
  /// `compare MODEL --reference DIR`: the per-operator comparison, as a table or JSON.
  static func compareLayers(
    modelPath: String, reference: String, _ arguments: ParsedArguments, output: inout any TextSink
  ) throws -> Int32 {
    for option in ["expected", "input", "signature", "runs", "seed"] where arguments.value(option) != nil {
      throw UsageError("--\(option) cannot be used with --reference (the dump's inputs are used, on the primary subgraph)")
    }
    let tolerance = LayerTolerance(
      float: Tolerance(
        absolute: try arguments.number("atol", default: 1e-5), relative: try arguments.number("rtol", default: 1e-5)),
      integerSteps: try arguments.integer("max-steps", default: 0, in: 0...Int(Int32.max)))
    let threadCount = try arguments.integer("threads", default: 1, in: 1...256)
    let comparison: LayerComparison
    let dump: ReferenceDump
    let graphIDs: [String]
    do {
      let model = try LoadedModel(
        path: modelPath, signatureKey: nil, threadCount: threadCount,
        kernels: arguments.flag("reference-kernels") ? .reference : .optimized, fusesOperators: false)
      let schema = model.runner.model.model
      graphIDs = schema.subgraphs.indices.map { ModelExplorerNodeData.graphID(of: schema, subgraph: $0) }
      dump = try ReferenceDump(
        directory: reference, modelPath: modelPath,
        subgraphTensors: schema.subgraphs.indices.map { (try? model.runner.subgraph(at: $0))?.tensors })
      comparison = try LayerComparison(model: model, dump: dump, tolerance: tolerance, isolated: arguments.flag("isolate"))
    } catch {
      output.writeError("tflite compare: error: \(error)\n")
      return ExitCode.unusableInput
    }
    output.write(
      arguments.flag("json")
        ? comparison.json(model: modelPath, dump: dump, tolerance: tolerance).rendered()
        : comparison.table(dump: dump, tolerance: tolerance))
    if let nodeDataPath = arguments.value("node-data") {
      try writeText(comparison.nodeData(graphIDs: graphIDs).json.rendered(), to: nodeDataPath)
    }
    return comparison.firstDivergent == nil ? ExitCode.success : ExitCode.failure
  }
}

/// How close actual values must be to expected ones: `|a - e| <= absolute + relative * |e|`.
struct Tolerance {
  /// Absolute tolerance.
  var absolute: Double
  /// Relative tolerance.
  var relative: Double

  /// True when `actual` is close enough to `expected` (NaN matches only NaN).
  func accepts(_ actual: Double, _ expected: Double) -> Bool {
    if actual.isNaN || expected.isNaN { return actual.isNaN && expected.isNaN }
    if actual == expected { return true }
    return abs(actual - expected) <= absolute + relative * abs(expected)
  }
}

/// The comparison of one output with its expected values.
struct OutputComparison {
  /// True when the type, shape and every value fit.
  var matches: Bool
  /// The report, one line per fact.
  var lines: [String]

  /// Compares `actual` with `expected` under `tolerance`.
  init(actual: HostArray, expected: HostArray, tolerance: Tolerance) {
    guard actual.shape == expected.shape else {
      matches = false
      lines = ["shape differs: actual \(actual.typeAndShape), expected \(expected.typeAndShape)"]
      return
    }
    let floatingTypes: Set<ElementType> = [.float16, .bfloat16, .float32, .float64]
    let comparesRealValues = actual.quantization != nil && floatingTypes.contains(expected.type)
    guard let actualValues = comparesRealValues ? actual.realValues() : actual.numbers(),
      let expectedValues = expected.numbers()
    else {
      matches = actual.type == expected.type && actual.bytes == expected.bytes
      lines = [matches ? "identical bytes" : "values differ (types \(actual.type.name) and \(expected.type.name) compared as bytes)"]
      return
    }
    var lines: [String] = []
    if actual.type != expected.type {
      lines.append(
        "types differ: actual \(actual.type.name)\(comparesRealValues ? " (dequantized)" : ""), expected \(expected.type.name)")
    }
    var maxAbsolute = 0.0
    var maxRelative = 0.0
    var firstMismatch: Int?
    var mismatchCount = 0
    for (index, (a, e)) in zip(actualValues, expectedValues).enumerated() {
      if !tolerance.accepts(a, e) {
        mismatchCount += 1
        if firstMismatch == nil { firstMismatch = index }
      }
      let difference = abs(a - e)
      guard difference.isFinite else { continue }
      maxAbsolute = max(maxAbsolute, difference)
      if e != 0 { maxRelative = max(maxRelative, difference / abs(e)) }
    }
    lines.append("max abs error \(formatNumber(maxAbsolute)), max rel error \(formatNumber(maxRelative))")
    if let firstMismatch {
      lines.append(
        "\(mismatchCount) of \(actualValues.count) values beyond tolerance; first at \(formatShape(multiIndex(firstMismatch, in: actual.shape))) (flat \(firstMismatch)): actual \(formatNumber(actualValues[firstMismatch])), expected \(formatNumber(expectedValues[firstMismatch]))"
      )
    } else {
      lines.append("all \(actualValues.count) values within tolerance")
    }
    let typesFit =
      actual.type == expected.type || comparesRealValues
      || (floatingTypes.contains(actual.type) && floatingTypes.contains(expected.type))
    matches = firstMismatch == nil && typesFit && actualValues.count == expectedValues.count
    self.lines = lines
  }
}

/// The position of flat (row-major) index `flat` in an array of `shape`.
func multiIndex(_ flat: Int, in shape: [Int]) -> [Int] {
  var remainder = flat
  var index = [Int](repeating: 0, count: shape.count)
  for axis in shape.indices.reversed() where shape[axis] > 0 {
    index[axis] = remainder % shape[axis]
    remainder /= shape[axis]
  }
  return index
}
