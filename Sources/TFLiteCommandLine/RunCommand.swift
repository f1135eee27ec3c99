import Foundation
import TFLiteRuntime

/// `tflite run MODEL`: runs a model once on given or random inputs and summarises its outputs.
enum RunCommand: Subcommand {
  /// Name, options and help.
  static let specification = CommandSpecification(
    name: "run",
    abstract: "Run a model on .npy inputs (or seeded random ones) and summarise its outputs.",
    positionals: ["MODEL"],
    options: [
      .option("input", value: "[NAME=]FILE.npy", repeatable: true, help: "An input, in input order or by name."),
      .option("signature", value: "KEY", help: "Run this signature instead of the primary graph."),
      .option("threads", value: "N", help: "Threads the kernels may use (default 1)."),
      .flag("reference-kernels", help: "Run on the plain reference kernels (Sources/TFLiteRuntime/Reference) where they exist."),
      .option("seed", value: "N", help: "Seed of the random inputs (default 0)."),
      .option("output-dir", value: "DIR", help: "Write output_0.npy, output_1.npy, ... into DIR."),
    ],
    discussion: """
      Inputs without a file get seeded random values: uniform in [-1, 1) for floats, the type's
      whole range for quantized integers, 0...15 for other integers. An input whose model shape has
      flexible (-1) dimensions takes the shape of its .npy file. Quantized outputs are written
      unchanged, as their integer type.
      """)

  /// Runs the command.
  static func run(_ arguments: ParsedArguments, output: inout any TextSink) throws -> Int32 {
    let path = try arguments.singlePositional("MODEL")
    let model = try LoadedModel(
      path: path, signatureKey: arguments.value("signature"),
      threadCount: try arguments.integer("threads", default: 1, in: 1...256),
      kernels: arguments.flag("reference-kernels") ? .reference : .optimized)
    let inputs = try inputArrays(
      for: model, inputValues: arguments.allValues("input"),
      seed: UInt64(try arguments.integer("seed", default: 0, in: 0...Int.max)))
    try model.feed(inputs)
    let started = ContinuousClock.now
    try model.executor.invoke()
    let elapsed = ContinuousClock.now - started
    let outputs = model.outputArrays()
    for (index, (endpoint, array)) in zip(model.outputs, outputs).enumerated() {
      output.write(describe(output: index, named: endpoint.name, array))
    }
    output.write("invoke: \(formatMilliseconds(elapsed)) ms\n")
    if let directory = arguments.value("output-dir") {
      try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
      for (index, array) in outputs.enumerated() {
        let file = (directory as NSString).appendingPathComponent("output_\(index).npy")
        try array.writeNumPy(to: file)
        output.write("wrote \(file)\n")
      }
    }
    return ExitCode.success
  }

  /// The report of one output: a header line and its indented statistics.
  static func describe(output index: Int, named name: String, _ array: HostArray, labels: [String] = []) -> String {
    var text = "output \(index) '\(name)': \(array.typeAndShape)"
    if let quantization = array.quantization, quantization.scales.count == 1 {
      text += " (scale \(formatNumber(Double(quantization.scale))), zero point \(quantization.zeroPoint))"
    }
    text += "\n"
    let values = array.realValues() ?? []
    guard let summary = ValueSummary(values, shape: array.shape) else {
      return text + (array.numbers() == nil ? "  (no numeric values)\n" : "  (empty)\n")
    }
    if array.quantization != nil && array.type != .float32 { text += "  dequantized values:\n" }
    return text + summary.lines(labels: labels).map { "  \($0)\n" }.joined()
  }
}

/// `1.234`: a duration in milliseconds with three decimals.
func formatMilliseconds(_ duration: Duration) -> String {
  String(format: "%.3f", milliseconds(duration))
}

/// A duration in milliseconds.
func milliseconds(_ duration: Duration) -> Double {
  let components = duration.components
  return Double(components.seconds) * 1000 + Double(components.attoseconds) / 1e15
}
