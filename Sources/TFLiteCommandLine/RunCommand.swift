import Foundation
import TFLiteFormat
import TFLiteRuntime
import TensorFlowLiteTaskVision

/// `tflite run MODEL`: runs a model once on given or random inputs and summarises its outputs.
enum RunCommand: Subcommand {
  /// Name, options and help.
  static let specification = CommandSpecification(
    name: "run",
    abstract: "Run a model on .npy inputs (or seeded random ones) and summarise its outputs.",
    positionals: ["MODEL"],
    options: [
      .option("input", value: "[NAME=]FILE.npy", repeatable: true, help: "An input, in input order or by name."),
      .option("image", value: "IMAGE", help: "Feed a PNG/JPEG/PPM image to the first input, prepared as its metadata says."),
      .option("signature", value: "KEY", help: "Run this signature instead of the primary graph."),
      .option("threads", value: "N", help: "Threads the kernels may use (default 1)."),
      .flag("reference-kernels", help: "Run on the plain reference kernels (Sources/TFLiteRuntime/Reference) where they exist."),
      .option("seed", value: "N", help: "Seed of the random inputs (default 0)."),
      .option("output-dir", value: "DIR", help: "Write output_0.npy, output_1.npy, ... into DIR."),
    ] + VisionOptions.preparation,
    discussion: """
      Inputs without a file get seeded random values: uniform in [-1, 1) for floats, the type's
      whole range for quantized integers, 0...15 for other integers. An input whose model shape has
      flexible (-1) dimensions takes the shape of its .npy file. Quantized outputs are written
      unchanged, as their integer type. --image fills a [1, H, W, 1 or 3] first input as the
      TFLite metadata (or --mean/--std/--fit) says: resized bilinearly, raw pixels for uint8
      inputs, (x - mean) / std for float inputs, then quantized for int8 inputs.
      """)

  /// Runs the command.
  static func run(_ arguments: ParsedArguments, output: inout any TextSink) throws -> Int32 {
    let path = try arguments.singlePositional("MODEL")
    let model = try LoadedModel(
      path: path, signatureKey: arguments.value("signature"),
      threadCount: try arguments.integer("threads", default: 1, in: 1...256),
      kernels: arguments.flag("reference-kernels") ? .reference : .optimized)
    var inputs = try inputArrays(
      for: model, inputValues: arguments.allValues("input"),
      seed: UInt64(try arguments.integer("seed", default: 0, in: 0...Int.max)))
    if let image = arguments.value("image") {
      guard arguments.allValues("input").isEmpty else { throw UsageError("--image and --input cannot be combined") }
      guard let first = model.inputs.first?.tensor else { throw CommandFailure("the model has no input to feed the image to") }
      inputs[0] = try imageArray(image, for: first, metadata: try model.runner.model.modelMetadata(), arguments: arguments)
    }
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

  /// The image file at `path` prepared for `tensor`, as the metadata's first input tensor entry and the options say.
  static func imageArray(
    _ path: String, for tensor: RuntimeTensor, metadata: ModelMetadata?, arguments: ParsedArguments
  ) throws -> HostArray {
    let elementType: ImageTensorFormat.ElementType
    switch tensor.type {
    case .uint8: elementType = .uint8
    case .float32: elementType = .float32
    case .int8:
      guard let scale = tensor.quantization?.scales.first, let zeroPoint = tensor.quantization?.zeroPoints.first else {
        throw CommandFailure("the int8 input '\(tensor.name)' has no quantization parameters")
      }
      elementType = .int8(scale: scale, zeroPoint: zeroPoint)
    default:
      throw CommandFailure("--image needs a uint8, int8 or float32 input; '\(tensor.name)' is \(tensor.typeAndShape)")
    }
    let format = try ImageTensorFormat(
      shape: tensor.shape, elementType: elementType, metadata: metadata?.subgraphs.first?.inputTensors.first,
      options: try VisionOptions.inputOptions(arguments))
    let bytes = try format.tensorBytes(for: try VisionOptions.image(at: path).image)
    return HostArray(type: tensor.type, shape: tensor.shape, bytes: bytes, quantization: tensor.quantization, origin: path)
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
