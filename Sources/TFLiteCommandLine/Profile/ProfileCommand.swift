import Foundation
import TFLiteFormat
import TFLiteRuntime

/// `tflite profile MODEL`: time per operator, share of the invoke, arithmetic throughput and memory.
enum ProfileCommand: Subcommand {
  /// Name, options and help.
  static let specification = CommandSpecification(
    name: "profile",
    abstract: "Time every operator of a model (median over runs) and write traces or Model Explorer data.",
    positionals: ["MODEL"],
    options: [
      .option("runs", value: "N", help: "Timings per operator (default 20); as many unprofiled invokes measure the overhead."),
      .option("threads", value: "N", help: "Threads the kernels may use (default 1)."),
      .option("input", value: "[NAME=]FILE.npy", repeatable: true, help: "Input values (default: seeded random)."),
      .flag("json", help: "Print one JSON object instead of a table."),
      .option("chrome-trace", value: "FILE", help: "Write one run as a Chrome trace (Perfetto, chrome://tracing)."),
      .option("node-data", value: "FILE", help: "Write each operator's median milliseconds as Model Explorer node data."),
    ],
    discussion: """
      Plain invokes alternate with profiled ones, so the profiler's overhead is measured, not
      assumed. Where observing every node would cost more than 2.5 % of the invoke (networks of
      many tiny operators), each profiled invoke times every k-th node, in rotation; every node
      is still timed N times. A node's time is summed over its runs in one invoke (WHILE
      bodies); control-flow nodes include the subgraphs they call, which are listed too. Nodes folded
      at prepare time or fused into a later node do not run and are not listed. Throughput is shown
      for CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED, BATCH_MATMUL and TRANSPOSE_CONV (2 operations
      per multiply-accumulate; GOP/s for integer operands). JSON fields are listed in the README.
      """)

  /// Runs the command.
  static func run(_ arguments: ParsedArguments, output: inout any TextSink) throws -> Int32 {
    let path = try arguments.singlePositional("MODEL")
    let report = try ModelProfile.measure(
      modelPath: path, inputValues: arguments.allValues("input"),
      threadCount: try arguments.integer("threads", default: 1, in: 1...256),
      runs: try arguments.integer("runs", default: 20, in: 1...1_000_000))
    if let tracePath = arguments.value("chrome-trace") { try writeText(report.chromeTrace.rendered(), to: tracePath) }
    if let nodeDataPath = arguments.value("node-data") { try writeText(report.nodeData.json.rendered(), to: nodeDataPath) }
    output.write(arguments.flag("json") ? report.json.rendered() : report.table)
    return ExitCode.success
  }
}

/// Writes `text` to the file at `path`, replacing it.
func writeText(_ text: String, to path: String) throws {
  do {
    try Data(text.utf8).write(to: URL(fileURLWithPath: path))
  } catch {
    throw CommandFailure("cannot write \(path): \(error.localizedDescription)")
  }
}

/// The per-operator profile of a model.
struct ModelProfile {
  /// One operator's row.
  struct Row {
    /// Subgraph and operator index.
    var key: NodeKey
    /// Schema name or custom code.
    var op: String
    /// The first output tensor's index and name, if any.
    var outputTensor: (index: Int, name: String)?
    /// Median over runs of the node's nanoseconds per invoke.
    var medianNanoseconds: Int64
    /// The node's arithmetic, when known.
    var work: OperatorWork?
    /// Bytes of scratch memory the node's kernel asked for.
    var scratchBytes: Int

    /// Milliseconds.
    var medianMilliseconds: Double { Double(medianNanoseconds) / 1e6 }
    /// Billions of operations per second at the median time, when the work is known.
    var throughput: Double? {
      guard let work, medianNanoseconds > 0 else { return nil }
      return Double(work.operations) / Double(medianNanoseconds)
    }
  }

  /// The model path.
  var modelPath: String
  /// Profiled runs.
  var runs: Int
  /// Kernel threads.
  var threadCount: Int
  /// Median nanoseconds of an invoke with the profiler attached.
  var profiledInvokeNanoseconds: Int64
  /// Median nanoseconds of an invoke without it.
  var plainInvokeNanoseconds: Int64
  /// Fastest invoke with the profiler attached and without it, nanoseconds (other load on the
  /// machine only adds time, so the fastest runs compare the two most fairly on a busy machine).
  var fastestInvokeNanoseconds: (profiled: Int64, plain: Int64)
  /// The measured cost of one clock read, nanoseconds.
  var clockReadNanoseconds: Double
  /// The measured cost of observing one node at stride 1 (two calls and a clock read), nanoseconds.
  var observedNodeNanoseconds: Double
  /// Profiled invokes per timed sample of each node (``NodeProfiler``): 1 when every invoke times
  /// every node, k when each times every k-th node, in rotation.
  var stride: Int
  /// Activation arena of the primary subgraph, bytes.
  var arenaBytes: Int
  /// Every node run, subgraph by subgraph in operator order.
  var rows: [Row]
  /// Every node event of one extra invoke with every node timed.
  var traceEvents: [NodeEvent]
  /// Model Explorer graph id per subgraph index.
  var graphIDs: [String]

  /// The profiler's cost: (profiled − plain) / plain of the medians, in percent.
  var overheadPercent: Double { Self.percent(profiledInvokeNanoseconds, over: plainInvokeNanoseconds) }
  /// The same of the fastest runs.
  var fastestOverheadPercent: Double { Self.percent(fastestInvokeNanoseconds.profiled, over: fastestInvokeNanoseconds.plain) }

  /// (`value` − `base`) / `base` in percent, 0 when `base` is 0.
  private static func percent(_ value: Int64, over base: Int64) -> Double {
    base > 0 ? Double(value - base) / Double(base) * 100 : 0
  }

  /// The share of the invoke time observing nodes may take when the profiler picks its stride.
  static let overheadBudget = 0.025

  /// Loads the model, feeds its inputs and warms up; picks the profiler's stride from the measured
  /// cost of observing a node; alternates plain and profiled invokes until every node is timed
  /// `runs` times; then times one more invoke with every node for the Chrome trace.
  static func measure(modelPath: String, inputValues: [String], threadCount: Int, runs: Int) throws -> ModelProfile {
    let model = try LoadedModel(path: modelPath, signatureKey: nil, threadCount: threadCount)
    try model.feed(try inputArrays(for: model, inputValues: inputValues, seed: 0))
    let schema = model.runner.model.model
    let executors = schema.subgraphs.indices.compactMap { try? model.runner.subgraph(at: $0) }
    var nodeCounts = Array(repeating: 0, count: schema.subgraphs.count)
    for executor in executors { nodeCounts[executor.subgraphIndex] = executor.operatorNames.count }
    let profiler = NodeProfiler(nodeCounts: nodeCounts)
    func timedInvoke() throws -> Int64 {
      let start = monotonicNanoseconds()
      try model.executor.invoke()
      return monotonicNanoseconds() - start
    }
    func profiledInvoke(stride: Int, phase: Int, recordsEvents: Bool = false, expectedEvents: Int = 0) throws -> Int64 {
      for executor in executors {
        executor.nodeObserver = profiler.observer(forSubgraph: executor.subgraphIndex, stride: stride, phase: phase)
      }
      defer { for executor in executors { executor.nodeObserver = nil } }
      profiler.beginInvoke(stride: stride, phase: phase, recordsEvents: recordsEvents, expectedEvents: expectedEvents)
      return try timedInvoke()
    }
    // Calibration: the cost of observing every node, from alternating plain and profiled invokes.
    var calibration: (plain: [Int64], profiled: [Int64]) = ([], [])
    for _ in 0..<15 {
      calibration.plain.append(try timedInvoke())
      calibration.profiled.append(try profiledInvoke(stride: 1, phase: 0))
    }
    let nodeRuns = max(profiler.timedRunCount, 1)
    let clockRead = NodeProfiler.clockReadNanoseconds()
    let observedNode = max(
      Double(median(calibration.profiled) - median(calibration.plain)) / Double(nodeRuns), clockRead)
    let stride = NodeProfiler.stride(
      nodeRuns: nodeRuns, nodeNanoseconds: observedNode, clockReadNanoseconds: clockRead,
      invokeNanoseconds: median(calibration.plain), budget: overheadBudget, maximum: nodeCounts.max() ?? 1)
    var plainTimes: [Int64] = []
    var profiledTimes: [Int64] = []
    for run in 0..<runs * stride {
      plainTimes.append(try timedInvoke())
      profiledTimes.append(try profiledInvoke(stride: stride, phase: run % stride))
      profiler.endInvoke()
    }
    _ = try profiledInvoke(stride: 1, phase: 0, recordsEvents: true, expectedEvents: nodeRuns)
    let bySubgraph = Dictionary(uniqueKeysWithValues: executors.map { ($0.subgraphIndex, $0) })
    let keys = profiler.samples.enumerated().flatMap { subgraph, nodes in
      nodes.indices.filter { nodes[$0] != nil }.map { NodeKey(subgraph: subgraph, node: $0) }
    }
    let rows = keys.map { key in
      let executor = bySubgraph[key.subgraph]
      let op = schema.subgraphs[key.subgraph].operators[key.node]
      let code = schema.operatorCodes[Int(op.opcodeIndex)]
      let firstOutput = op.outputs.first.map(Int.init).flatMap { index in
        executor?.tensors.indices.contains(index) == true ? (index, executor?.tensors[index].name ?? "") : nil
      }
      return Row(
        key: key,
        op: code.resolvedBuiltinCode == .custom ? (code.customCode ?? "CUSTOM") : code.resolvedBuiltinCode.name,
        outputTensor: firstOutput, medianNanoseconds: median(profiler.samples[key.subgraph][key.node] ?? []),
        work: executor.flatMap { OperatorWork(of: op, code: code.resolvedBuiltinCode, in: $0) },
        scratchBytes: executor.map { scratchBytes(of: key.node, in: $0) } ?? 0)
    }
    return ModelProfile(
      modelPath: modelPath, runs: runs, threadCount: threadCount,
      profiledInvokeNanoseconds: median(profiledTimes), plainInvokeNanoseconds: median(plainTimes),
      fastestInvokeNanoseconds: (profiledTimes.min() ?? 0, plainTimes.min() ?? 0),
      clockReadNanoseconds: clockRead, observedNodeNanoseconds: observedNode, stride: stride,
      arenaBytes: model.executor.arenaByteCount, rows: rows, traceEvents: profiler.events,
      graphIDs: schema.subgraphs.indices.map { ModelExplorerNodeData.graphID(of: schema, subgraph: $0) })
  }

  /// Scratch bytes of operator `node` (its position in execution order) in `executor`'s memory plan.
  private static func scratchBytes(of node: Int, in executor: SubgraphExecutor) -> Int {
    executor.memoryPlan.placements.reduce(0) { total, placement in
      placement.request.owner == .scratch(node: node) ? total + placement.request.byteCount : total
    }
  }

  /// The middle value (the mean of the two middle ones for an even count); 0 for none.
  static func median(_ values: [Int64]) -> Int64 {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return 0 }
    return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
  }

  /// A node's share of the profiled invoke, in percent.
  func share(of row: Row) -> Double {
    profiledInvokeNanoseconds > 0 ? Double(row.medianNanoseconds) / Double(profiledInvokeNanoseconds) * 100 : 0
  }

  /// The readable table.
  var table: String {
    func milliseconds(_ nanoseconds: Int64) -> String { String(format: "%.3f", Double(nanoseconds) / 1e6) }
    var lines = [
      "model: \(modelPath)  runs: \(runs)  threads: \(threadCount)",
      "invoke median: \(milliseconds(profiledInvokeNanoseconds)) ms profiled, \(milliseconds(plainInvokeNanoseconds)) ms unprofiled"
        + " (profiler overhead \(String(format: "%.1f", overheadPercent)) %;"
        + " fastest runs \(milliseconds(fastestInvokeNanoseconds.profiled)) and \(milliseconds(fastestInvokeNanoseconds.plain)) ms,"
        + " \(String(format: "%.1f", fastestOverheadPercent)) %)",
      "timer: clock read \(String(format: "%.0f", clockReadNanoseconds)) ns, observing a node"
        + " \(String(format: "%.0f", observedNodeNanoseconds)) ns; "
        + (stride == 1
          ? "every node timed in each of \(runs) profiled invokes"
          : "1 node in \(stride) timed per invoke, in rotation: \(runs * stride) profiled invokes, \(runs) timings per node"),
      "arena: \(arenaBytes) bytes (scratch included)",
      "",
    ]
    let header = ["node", "op", "output", "ms", "share", "throughput", "scratch"]
    let cells = rows.map { row -> [String] in
      [
        row.key.subgraph == 0 ? "\(row.key.node)" : "\(row.key.subgraph):\(row.key.node)", row.op,
        row.outputTensor.map { "T#\($0.index)" } ?? "-", String(format: "%.3f", row.medianMilliseconds),
        String(format: "%.1f %%", share(of: row)),
        row.throughput.map { String(format: "%.2f ", $0) + (row.work?.unit ?? "") } ?? "-",
        row.scratchBytes > 0 ? "\(row.scratchBytes)" : "-",
      ]
    }
    let widths = header.indices.map { column in ([header] + cells).map { $0[column].count }.max() ?? 0 }
    let leftAligned: Set = [1, 2]
    for line in [header] + cells {
      lines.append(
        line.enumerated().map { column, text in
          let padding = String(repeating: " ", count: widths[column] - text.count)
          return leftAligned.contains(column) ? text + padding : padding + text
        }.joined(separator: "  "))
    }
    lines.append("(node = operator index; S:N = operator N of subgraph S, run inside a control-flow node)")
    return lines.joined(separator: "\n") + "\n"
  }

  /// `tflite profile --json` (fields in the README).
  var json: JSONValue {
    .object([
      ("format", .string("tflite-profile")), ("format_version", .int(1)), ("model", .string(modelPath)),
      ("runs", .int(runs)), ("threads", .int(threadCount)),
      ("invoke_median_ms", .number(Double(profiledInvokeNanoseconds) / 1e6)),
      ("unprofiled_invoke_median_ms", .number(Double(plainInvokeNanoseconds) / 1e6)),
      ("overhead_percent", .number(overheadPercent)), ("fastest_overhead_percent", .number(fastestOverheadPercent)),
      ("clock_read_ns", .number(clockReadNanoseconds)), ("observed_node_ns", .number(observedNodeNanoseconds)),
      ("stride", .int(stride)),
      ("profiled_invokes", .int(runs * stride)),
      ("arena_bytes", .int(arenaBytes)),
      (
        "operators",
        .array(
          rows.map { row in
            .object([
              ("subgraph", .int(row.key.subgraph)), ("operator_index", .int(row.key.node)), ("op", .string(row.op)),
              ("output_tensor", row.outputTensor.map { .int($0.index) } ?? .null),
              ("median_ms", .number(row.medianMilliseconds)), ("share_percent", .number(share(of: row))),
              ("operations", row.work.map { .int($0.operations) } ?? .null),
              ("throughput_g_per_s", row.throughput.map { .number($0) } ?? .null),
              ("throughput_unit", row.work.map { .string($0.unit) } ?? .null),
              ("scratch_bytes", .int(row.scratchBytes)),
            ])
          })
      ),
    ])
  }

  /// One invoke with every node timed (after the measured ones) in the Trace Event Format
  /// (complete events, microseconds).
  var chromeTrace: JSONValue {
    let names = Dictionary(uniqueKeysWithValues: rows.map { ($0.key, $0) })
    let events = traceEvents.map { event -> JSONValue in
      let row = names[NodeKey(subgraph: event.subgraph, node: event.node)]
      return .object([
        ("name", .string(row?.op ?? "node")), ("cat", .string("operator")), ("ph", .string("X")),
        ("ts", .number(Double(event.start) / 1000)), ("dur", .number(Double(event.end - event.start) / 1000)),
        ("pid", .int(1)), ("tid", .int(1)),
        (
          "args",
          .object([
            ("subgraph", .int(event.subgraph)), ("operator_index", .int(event.node)),
            ("output", .string(row?.outputTensor?.name)),
          ])
        ),
      ])
    }
    let processName = JSONValue.object([
      ("name", .string("process_name")), ("ph", .string("M")), ("pid", .int(1)),
      ("args", .object([("name", .string("tflite profile \(modelPath)"))])),
    ])
    return .object([("traceEvents", .array([processName] + events)), ("displayTimeUnit", .string("ms"))])
  }

  /// Median milliseconds per operator as Model Explorer node data.
  var nodeData: ModelExplorerNodeData {
    let bySubgraph = Dictionary(grouping: rows, by: \.key.subgraph)
    return ModelExplorerNodeData(
      name: "median ms (tflite profile)",
      graphs: bySubgraph.keys.sorted().map { subgraph in
        (graphIDs[subgraph], (bySubgraph[subgraph] ?? []).map { ("\($0.key.node)", $0.medianMilliseconds) })
      },
      coloring: ModelExplorerNodeData.coldToHot)
  }
}
