import Foundation
import TFLiteRuntime

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// `tflite bench MODEL`: load time, first and steady invoke times, arena size and peak memory of
/// a model, on seeded random inputs or given `.npy` files; `--verbose` adds the kernel of every node.
enum BenchCommand: Subcommand {
  /// Name, options and help.
  static let specification = CommandSpecification(
    name: "bench",
    abstract: "Time loading and invoking a model on .npy inputs (or seeded random ones).",
    positionals: ["MODEL"],
    options: [
      .option("input", value: "[NAME=]FILE.npy", repeatable: true, help: "An input, in input order or by name (as for run)."),
      .option("threads", value: "N", help: "Threads the kernels may use (default 1)."),
      .option("runs", value: "N", help: "Timed invocations (default 50)."),
      .option("warmup", value: "N", help: "Untimed invocations first (default 5)."),
      .flag("verbose", help: "Also print, per node, the kernel that runs it and its instruction-set level."),
      .flag("cpu-times", help: "Also read the process CPU time around every timed invoke and report its median."),
      .flag("json", help: "Print one JSON object instead of text."),
    ],
    discussion: """
      Load time covers reading and verifying the file, building the kernels and the first
      allocateTensors(); the first invoke is timed on its own (it is not one of the runs). Inputs
      without a file get seeded random values (seed 0, as run). The inputs are copied once and invoked again and again, which relies on
      invoke() leaving them unchanged; the command checks that the last invoke's outputs equal the
      first one's bit for bit and that the inputs are unchanged, and exits with 1 otherwise.
      Peak RSS is the process's high-water mark of resident memory (getrusage) after the runs.
      --verbose lists every node as `kind KernelType: route` (kind: float, integer, hybrid,
      reference, or the element type of a type-generic kernel; route: e.g. `GEMM, generated
      AVX-512F` or `Swift SIMD (SSE baseline)`).
      load_cpu_ms and first_invoke_cpu_ms are the process's CPU time (user + system) over the same
      spans: steadier than wall time on a shared machine, where waiting for a core is not charged.
      --cpu-times adds cpu_median_ms, the median CPU time of a timed invoke (as LiteRT's Python
      benchmarks time theirs with process_time()); the two clock reads cost about a microsecond
      each on Linux, so without the flag the runs read only the wall clock.
      JSON output: {"load_ms":..., "first_invoke_ms":..., "load_cpu_ms":..., "first_invoke_cpu_ms":...,
      "min_ms":..., "median_ms":..., "max_ms":..., ["cpu_median_ms":...,] "arena_bytes":...,
      "peak_rss_bytes":..., "outputs_identical":true}, and with --verbose
      "kernels":["CONV_2D: float Conv2DKernel: GEMM, ...", ...].
      """)

  /// Runs the command.
  static func run(_ arguments: ParsedArguments, output: inout any TextSink) throws -> Int32 {
    let path = try arguments.singlePositional("MODEL")
    let result = try ModelBenchmark.measure(
      modelPath: path,
      threadCount: try arguments.integer("threads", default: 1, in: 1...256),
      runs: try arguments.integer("runs", default: 50, in: 1...1_000_000),
      warmupRuns: try arguments.integer("warmup", default: 5, in: 0...1_000_000),
      inputValues: arguments.allValues("input"), describesKernels: arguments.flag("verbose"),
      timesCPU: arguments.flag("cpu-times"))
    let verbose = arguments.flag("verbose")
    output.write((arguments.flag("json") ? result.json(verbose: verbose) : result.text(verbose: verbose)) + "\n")
    return result.outputsStayedIdentical ? ExitCode.success : ExitCode.failure
  }
}

/// Timings of one model.
public struct BenchmarkResult: Sendable {
  /// Milliseconds to read, verify, build and allocate the model.
  public var loadMilliseconds: Double
  /// Milliseconds of the first invoke (which may pack weights or generate code on first use).
  public var firstInvokeMilliseconds: Double
  /// Process CPU milliseconds (user + system) spent loading: the span of `loadMilliseconds`.
  public var loadCPUMilliseconds: Double
  /// Process CPU milliseconds of the first invoke: the span of `firstInvokeMilliseconds`.
  public var firstInvokeCPUMilliseconds: Double
  /// Every timed invocation, in milliseconds, sorted ascending.
  public var invokeMilliseconds: [Double]
  /// Process CPU milliseconds (user + system) of every timed invocation, sorted ascending; empty
  /// unless asked for (`--cpu-times`).
  public var invokeCPUMilliseconds: [Double]
  /// Bytes of the activation arena.
  public var arenaByteCount: Int
  /// The process's peak resident memory in bytes after the runs (0 where the OS does not say).
  public var peakResidentBytes: Int
  /// Per node, `OPERATOR: kind KernelType: route` (``SubgraphExecutor/kernelDescriptions``).
  public var kernelDescriptions: [String]
  /// True when the last invoke gave the first one's outputs bit for bit and left the inputs as
  /// they were copied (the timings are then of the same computation).
  public var outputsStayedIdentical: Bool

  /// Creates a result; `invokeMilliseconds` are sorted here.
  public init(
    loadMilliseconds: Double, firstInvokeMilliseconds: Double = 0, loadCPUMilliseconds: Double = 0,
    firstInvokeCPUMilliseconds: Double = 0, invokeMilliseconds: [Double], invokeCPUMilliseconds: [Double] = [],
    arenaByteCount: Int,
    peakResidentBytes: Int = 0, kernelDescriptions: [String] = [], outputsStayedIdentical: Bool
  ) {
    self.loadMilliseconds = loadMilliseconds
    self.firstInvokeMilliseconds = firstInvokeMilliseconds
    self.loadCPUMilliseconds = loadCPUMilliseconds
    self.firstInvokeCPUMilliseconds = firstInvokeCPUMilliseconds
    self.invokeMilliseconds = invokeMilliseconds.sorted()
    self.invokeCPUMilliseconds = invokeCPUMilliseconds.sorted()
    self.arenaByteCount = arenaByteCount
    self.peakResidentBytes = peakResidentBytes
    self.kernelDescriptions = kernelDescriptions
    self.outputsStayedIdentical = outputsStayedIdentical
  }

  /// Fastest invocation.
  public var minimum: Double { invokeMilliseconds.first ?? 0 }
  /// Slowest invocation.
  public var maximum: Double { invokeMilliseconds.last ?? 0 }
  /// Median invocation (the mean of the two middle ones for an even count).
  public var median: Double { Self.middleValue(ofSorted: invokeMilliseconds) }
  /// Median process CPU time of an invocation, as LiteRT's benchmarks time theirs (`process_time()`
  /// around each invoke): unlike a mean it leaves out invokes slowed by a busy sibling core.
  public var cpuMedian: Double { Self.middleValue(ofSorted: invokeCPUMilliseconds) }

  /// The median of sorted `values` (the mean of the two middle ones for an even count), 0 for none.
  private static func middleValue(ofSorted values: [Double]) -> Double {
    let count = values.count
    guard count > 0 else { return 0 }
    return count % 2 == 1 ? values[count / 2] : (values[count / 2 - 1] + values[count / 2]) / 2
  }

  /// `{"load_ms":1.2345, "first_invoke_ms":..., "load_cpu_ms":..., "first_invoke_cpu_ms":..., "min_ms":..., "median_ms":..., "max_ms":..., "arena_bytes":1024,
  /// "peak_rss_bytes":..., "outputs_identical":true}`, with `"cpu_median_ms"` after `max_ms` when the
  /// CPU time of every invoke was read; with `verbose`, also `"kernels":[...]`.
  public func json(verbose: Bool = false) -> String {
    let fields = [
      ("load_ms", loadMilliseconds), ("first_invoke_ms", firstInvokeMilliseconds),
      ("load_cpu_ms", loadCPUMilliseconds), ("first_invoke_cpu_ms", firstInvokeCPUMilliseconds), ("min_ms", minimum),
      ("median_ms", median), ("max_ms", maximum),
    ] + (invokeCPUMilliseconds.isEmpty ? [] : [("cpu_median_ms", cpuMedian)])
    // Four decimals: a tenth of a microsecond, which the mini networks' invokes (10–30 µs) need.
    let timings = fields.map { "\"\($0.0)\":\(String(format: "%.4f", $0.1))" }
    let counts = [
      "\"arena_bytes\":\(arenaByteCount)", "\"peak_rss_bytes\":\(peakResidentBytes)",
      "\"outputs_identical\":\(outputsStayedIdentical)",
    ]
    let kernels = verbose ? ["\"kernels\":[" + kernelDescriptions.map(jsonString).joined(separator: ", ") + "]"] : []
    return "{" + (timings + counts + kernels).joined(separator: ", ") + "}"
  }

  /// `, CPU median … ms` when the CPU time of every invoke was read, else nothing.
  private var cpuMedianText: String {
    invokeCPUMilliseconds.isEmpty ? "" : ", CPU median \(String(format: "%.3f", cpuMedian)) ms"
  }

  /// A few readable lines; with `verbose`, one more per node naming its kernel.
  public func text(verbose: Bool = false) -> String {
    let summary = """
      load:   \(String(format: "%.3f", loadMilliseconds)) ms, first invoke \(String(format: "%.3f", firstInvokeMilliseconds)) ms (CPU \(String(format: "%.3f", loadCPUMilliseconds)) + \(String(format: "%.3f", firstInvokeCPUMilliseconds)) ms)
      invoke: min \(String(format: "%.3f", minimum)) ms, median \(String(format: "%.3f", median)) ms, max \(String(format: "%.3f", maximum)) ms (\(invokeMilliseconds.count) runs)\(cpuMedianText)
      arena:  \(arenaByteCount) bytes
      peak RSS: \(peakResidentBytes) bytes
      \(outputsStayedIdentical ? "outputs: identical on every invoke of one input copy" : "MISMATCH: invoking one input copy again changed the outputs or the inputs")
      """
    guard verbose else { return summary }
    return summary + "\nkernels:\n" + kernelDescriptions.enumerated().map { "  \($0.offset): \($0.element)" }.joined(separator: "\n")
  }
}

/// A JSON string literal of `text` (quotes, backslashes and control characters escaped).
private func jsonString(_ text: String) -> String {
  var escaped = "\""
  for scalar in text.unicodeScalars {
    switch scalar {
    case "\"": escaped += "\\\""
    case "\\": escaped += "\\\\"
    case _ where scalar.value < 0x20: escaped += String(format: "\\u%04x", scalar.value)
    default: escaped.unicodeScalars.append(scalar)
    }
  }
  return escaped + "\""
}

/// Times a model: load once, warm up, then time each invocation.
public enum ModelBenchmark {
  /// Loads `modelPath` with `threadCount` threads, feeds the `--input` files `inputValues` (seeded
  /// random values for inputs without one) once, invokes once on its own, then `warmupRuns` times
  /// untimed and `runs` times timed, and checks that the last invoke gave the first one's outputs
  /// and left the inputs unchanged. With `describesKernels`, the result names every node's kernel
  /// (formatting type names costs the runtime a conformance scan per kernel type: several
  /// milliseconds, so it is only done when asked for). With `timesCPU`, the process CPU time of
  /// every timed invoke is read too (two system calls per invoke, so only when asked for).
  public static func measure(
    modelPath: String, threadCount: Int, runs: Int, warmupRuns: Int, inputValues: [String] = [],
    describesKernels: Bool = false, timesCPU: Bool = false
  ) throws -> BenchmarkResult {
    let clock = ContinuousClock()
    let loadStart = clock.now
    let loadCPUStart = processCPUMilliseconds()
    let model = try LoadedModel(path: modelPath, signatureKey: nil, threadCount: threadCount)
    try model.executor.allocateTensors()
    let loadCPU = processCPUMilliseconds() - loadCPUStart
    let loadTime = clock.now - loadStart
    let inputs = try inputArrays(for: model, inputValues: inputValues, seed: 0)
    try model.feed(inputs)
    let firstStart = clock.now
    let firstCPUStart = processCPUMilliseconds()
    try model.executor.invoke()
    let firstInvokeCPU = processCPUMilliseconds() - firstCPUStart
    let firstInvokeTime = clock.now - firstStart
    let firstOutputs = model.outputArrays().map(\.bytes)
    var times: [Double] = []
    var cpuTimes: [Double] = []
    times.reserveCapacity(runs)
    cpuTimes.reserveCapacity(runs)
    for run in 0..<(warmupRuns + runs) {
      let cpuStart = timesCPU ? processCPUMilliseconds() : 0
      let start = clock.now
      try model.executor.invoke()
      let end = clock.now
      if run >= warmupRuns {
        times.append(milliseconds(end - start))
        if timesCPU { cpuTimes.append(processCPUMilliseconds() - cpuStart) }
      }
    }
    let inputsKept = zip(model.inputs, inputs).allSatisfy { HostArray(copying: $0.tensor).bytes == $1.bytes }
    return BenchmarkResult(
      loadMilliseconds: milliseconds(loadTime), firstInvokeMilliseconds: milliseconds(firstInvokeTime),
      loadCPUMilliseconds: loadCPU, firstInvokeCPUMilliseconds: firstInvokeCPU, invokeMilliseconds: times,
      invokeCPUMilliseconds: cpuTimes, arenaByteCount: model.executor.arenaByteCount,
      peakResidentBytes: peakResidentSetBytes(),
      kernelDescriptions: describesKernels
        ? zip(model.executor.operatorNames, model.executor.kernelDescriptions).map { "\($0): \($1)" } : [],
      outputsStayedIdentical: inputsKept && model.outputArrays().map(\.bytes) == firstOutputs)
  }

  /// CPU time (user + system, every thread) the process has used so far, in milliseconds, or 0
  /// where the OS does not say.
  static func processCPUMilliseconds() -> Double {
    #if canImport(Glibc) || canImport(Darwin)
      var time = timespec()
      guard clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time) == 0 else { return 0 }
      return Double(time.tv_sec) * 1e3 + Double(time.tv_nsec) * 1e-6
    #else
      return 0
    #endif
  }

  /// The process's peak resident set size in bytes (`getrusage`: kilobytes on Linux, bytes on
  /// Apple platforms), or 0 where it cannot be read.
  static func peakResidentSetBytes() -> Int {
    #if canImport(Glibc) || canImport(Darwin)
      var usage = rusage()
      #if canImport(Darwin)
        guard getrusage(RUSAGE_SELF, &usage) == 0 else { return 0 }
        return Int(usage.ru_maxrss)
      #else
        guard getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage) == 0 else { return 0 }
        return Int(usage.ru_maxrss) * 1024
      #endif
    #else
      return 0
    #endif
  }
}
