import Foundation
import TFLiteRuntime

/// `tflite bench MODEL`: load time, invoke times and arena size of a model.
enum BenchCommand: Subcommand {
  /// Name, options and help.
  static let specification = CommandSpecification(
    name: "bench",
    abstract: "Time loading and invoking a model on seeded random inputs.",
    positionals: ["MODEL"],
    options: [
      .option("threads", value: "N", help: "Threads the kernels may use (default 1)."),
      .option("runs", value: "N", help: "Timed invocations (default 50)."),
      .option("warmup", value: "N", help: "Untimed invocations first (default 5)."),
      .flag("json", help: "Print one JSON object instead of text."),
    ],
    discussion: """
      Load time covers reading and verifying the file, building the kernels and the first
      allocateTensors(). The inputs are copied once and invoked again and again, which relies on
      invoke() leaving them unchanged; the command checks that the last invoke's outputs equal the
      first one's bit for bit and that the inputs are unchanged, and exits with 1 otherwise.
      JSON output: {"load_ms":..., "min_ms":..., "median_ms":..., "max_ms":..., "arena_bytes":..., "outputs_identical":true}
      """)

  /// Runs the command.
  static func run(_ arguments: ParsedArguments, output: inout any TextSink) throws -> Int32 {
    let path = try arguments.singlePositional("MODEL")
    let result = try ModelBenchmark.measure(
      modelPath: path,
      threadCount: try arguments.integer("threads", default: 1, in: 1...256),
      runs: try arguments.integer("runs", default: 50, in: 1...1_000_000),
      warmupRuns: try arguments.integer("warmup", default: 5, in: 0...1_000_000))
    output.write((arguments.flag("json") ? result.json : result.text) + "\n")
    return result.outputsStayedIdentical ? ExitCode.success : ExitCode.failure
  }
}

/// Timings of one model.
public struct BenchmarkResult: Sendable {
  /// Milliseconds to read, verify, build and allocate the model.
  public var loadMilliseconds: Double
  /// Every timed invocation, in milliseconds, sorted ascending.
  public var invokeMilliseconds: [Double]
  /// Bytes of the activation arena.
  public var arenaByteCount: Int
  /// True when the last invoke gave the first one's outputs bit for bit and left the inputs as
  /// they were copied (the timings are then of the same computation).
  public var outputsStayedIdentical: Bool

  /// Creates a result; `invokeMilliseconds` are sorted here.
  public init(
    loadMilliseconds: Double, invokeMilliseconds: [Double], arenaByteCount: Int, outputsStayedIdentical: Bool
  ) {
    self.loadMilliseconds = loadMilliseconds
    self.invokeMilliseconds = invokeMilliseconds.sorted()
    self.arenaByteCount = arenaByteCount
    self.outputsStayedIdentical = outputsStayedIdentical
  }

  /// Fastest invocation.
  public var minimum: Double { invokeMilliseconds.first ?? 0 }
  /// Slowest invocation.
  public var maximum: Double { invokeMilliseconds.last ?? 0 }
  /// Median invocation (the mean of the two middle ones for an even count).
  public var median: Double {
    let count = invokeMilliseconds.count
    guard count > 0 else { return 0 }
    return count % 2 == 1
      ? invokeMilliseconds[count / 2] : (invokeMilliseconds[count / 2 - 1] + invokeMilliseconds[count / 2]) / 2
  }

  /// `{"load_ms":1.234, "min_ms":..., "median_ms":..., "max_ms":..., "arena_bytes":1024, "outputs_identical":true}`.
  public var json: String {
    let fields = [
      ("load_ms", loadMilliseconds), ("min_ms", minimum), ("median_ms", median), ("max_ms", maximum),
    ].map { "\"\($0.0)\":\(String(format: "%.3f", $0.1))" }
    let counts = ["\"arena_bytes\":\(arenaByteCount)", "\"outputs_identical\":\(outputsStayedIdentical)"]
    return "{" + (fields + counts).joined(separator: ", ") + "}"
  }

  /// A few readable lines.
  public var text: String {
    """
    load:   \(String(format: "%.3f", loadMilliseconds)) ms
    invoke: min \(String(format: "%.3f", minimum)) ms, median \(String(format: "%.3f", median)) ms, max \(String(format: "%.3f", maximum)) ms (\(invokeMilliseconds.count) runs)
    arena:  \(arenaByteCount) bytes
    \(outputsStayedIdentical ? "outputs: identical on every invoke of one input copy" : "MISMATCH: invoking one input copy again changed the outputs or the inputs")
    """
  }
}

/// Times a model: load once, warm up, then time each invocation.
public enum ModelBenchmark {
  /// Loads `modelPath` with `threadCount` threads, feeds seeded random inputs once, runs it
  /// `warmupRuns` times untimed and `runs` times timed, and checks that the last invoke gave the
  /// first one's outputs and left the inputs unchanged.
  public static func measure(modelPath: String, threadCount: Int, runs: Int, warmupRuns: Int) throws -> BenchmarkResult {
    let clock = ContinuousClock()
    let loadStart = clock.now
    let model = try LoadedModel(path: modelPath, signatureKey: nil, threadCount: threadCount)
    try model.executor.allocateTensors()
    let loadTime = clock.now - loadStart
    var generator = SeededGenerator(seed: 0)
    let inputs = try model.inputs.map { try HostArray.random(for: $0.tensor, generator: &generator) }
    try model.feed(inputs)
    var firstOutputs: [[UInt8]]?
    var times: [Double] = []
    times.reserveCapacity(runs)
    for run in 0..<(warmupRuns + runs) {
      let start = clock.now
      try model.executor.invoke()
      if run >= warmupRuns { times.append(milliseconds(clock.now - start)) }
      if firstOutputs == nil { firstOutputs = model.outputArrays().map(\.bytes) }
    }
    let inputsKept = zip(model.inputs, inputs).allSatisfy { HostArray(copying: $0.tensor).bytes == $1.bytes }
    return BenchmarkResult(
      loadMilliseconds: milliseconds(loadTime), invokeMilliseconds: times,
      arenaByteCount: model.executor.arenaByteCount,
      outputsStayedIdentical: inputsKept && model.outputArrays().map(\.bytes) == firstOutputs)
  }
}
