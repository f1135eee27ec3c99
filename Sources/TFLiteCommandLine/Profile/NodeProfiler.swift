// Times the nodes `invoke()` runs, through the executors' `NodeObserver` callbacks, cheaply enough
// not to distort what it measures (README "tflite profile": at most 5 % of the invoke time).
//
// A node's time in one invoke is the sum of its runs in that invoke (a node of a WHILE body runs
// once per iteration); a control-flow node's time includes the nodes of the subgraphs it calls,
// which are timed too. The clock is `CLOCK_MONOTONIC`, read directly (the cheapest of
// `clock_gettime`, `DispatchTime` and `ContinuousClock` measured: 315, 370 and 580 ns per read on
// a virtual machine that traps time reads, about 20 ns where the vDSO answers).
//
// Observing a node costs two calls and a clock read: timing every node takes one read per node
// when nodes follow each other (a node starts when the previous one ended). Where that is too much
// for the invoke's length (networks of many small nodes), one profiled invoke observes only the
// nodes whose position is `phase` modulo `stride` (`NodeObserver.stride`: the executor skips the
// calls for the others; two reads per timed node), and the phase rotates from invoke to invoke, so
// every node is timed as often as with stride 1 over `stride` times as many invokes.
//
// Everything the callbacks touch is allocated before the invoke: per subgraph a start stamp and a
// running total per node, and the clock state. A Chrome trace needs every node's start and end in
// one invoke: those events are kept only in an invoke begun with `recordsEvents`.

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif
import TFLiteRuntime

/// Nanoseconds of the monotonic clock (`CLOCK_MONOTONIC`).
@inline(__always) func monotonicNanoseconds() -> Int64 {
  var time = timespec()
  clock_gettime(CLOCK_MONOTONIC, &time)
  return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
}

/// One node run inside an invoke: which node, and when it started and ended, in nanoseconds since
/// the invoke began.
struct NodeEvent: Equatable {
  /// The subgraph index.
  var subgraph: Int
  /// The operator index in the subgraph.
  var node: Int
  /// Start, in nanoseconds since the invoke began.
  var start: Int64
  /// End, in nanoseconds since the invoke began.
  var end: Int64
}

/// A subgraph index and an operator index in it.
struct NodeKey: Hashable, Comparable {
  /// The subgraph index.
  var subgraph: Int
  /// The operator index in the subgraph.
  var node: Int

  /// Subgraph first, then operator.
  static func < (left: Self, right: Self) -> Bool { (left.subgraph, left.node) < (right.subgraph, right.node) }
}

/// Times the nodes of one invoke at a time and keeps each node's time per profiled invoke.
final class NodeProfiler {
  /// What the callbacks of every subgraph share, in memory allocated once.
  private struct ClockState {
    /// Nodes at positions `phase` modulo `stride` are timed in the invoke in progress.
    var stride = 1
    /// See `stride`.
    var phase = 0
    /// The clock when the invoke began.
    var invokeStart: Int64 = 0
    /// The last clock read by a `didRun`.
    var lastStamp: Int64 = 0
    /// True when the previous callback was a timed `didRun`: a node starting now starts at `lastStamp`.
    var previousCallbackStamped = false
    /// True when every node run's start and end are kept as ``NodeEvent``s.
    var recordsEvents = false
    /// Node runs timed in the invoke in progress.
    var timedRuns = 0
  }

  /// One subgraph's per-node memory, allocated once.
  private final class SubgraphTimes {
    /// When each node's current run started.
    let starts: UnsafeMutableBufferPointer<Int64>
    /// Each node's nanoseconds in the invoke in progress.
    let totals: UnsafeMutableBufferPointer<Int64>
    /// How many times each node was timed in the invoke in progress.
    let runCounts: UnsafeMutableBufferPointer<Int>

    init(nodeCount: Int) {
      starts = .allocate(capacity: nodeCount)
      totals = .allocate(capacity: nodeCount)
      runCounts = .allocate(capacity: nodeCount)
      starts.initialize(repeating: 0)
      totals.initialize(repeating: 0)
      runCounts.initialize(repeating: 0)
    }

    deinit {
      starts.deallocate()
      totals.deallocate()
      runCounts.deallocate()
    }
  }

  private let state = UnsafeMutablePointer<ClockState>.allocate(capacity: 1)
  private let subgraphs: [SubgraphTimes]
  /// Node runs of the last invoke begun with `recordsEvents`, in the order they ended.
  private(set) var events: [NodeEvent] = []
  /// Per subgraph and node, the node's nanoseconds in each profiled invoke that timed it (0 when
  /// it did not run in that invoke); nil for a node never seen running.
  private(set) var samples: [[[Int64]?]]

  /// A profiler for a model whose subgraph `s` has `nodeCounts[s]` nodes.
  init(nodeCounts: [Int]) {
    state.initialize(to: ClockState())
    subgraphs = nodeCounts.map { SubgraphTimes(nodeCount: $0) }
    samples = nodeCounts.map { Array(repeating: nil, count: $0) }
  }

  deinit {
    state.deinitialize(count: 1)
    state.deallocate()
  }

  /// Node runs timed in the last invoke.
  var timedRunCount: Int { state.pointee.timedRuns }

  /// Starts an invoke that times the nodes at positions `phase` modulo `stride` and, with
  /// `recordsEvents`, keeps every timed run as an event (with room for `expectedEvents`).
  func beginInvoke(stride: Int = 1, phase: Int = 0, recordsEvents: Bool = false, expectedEvents: Int = 0) {
    if recordsEvents {
      events.removeAll(keepingCapacity: true)
      events.reserveCapacity(expectedEvents)
    }
    for times in subgraphs {
      times.totals.update(repeating: 0)
      times.runCounts.update(repeating: 0)
    }
    state.pointee = ClockState(stride: max(stride, 1), phase: phase, recordsEvents: recordsEvents)
    state.pointee.invokeStart = monotonicNanoseconds()
  }

  /// Ends the invoke begun by ``beginInvoke(stride:phase:recordsEvents:expectedEvents:)``: every
  /// timed node's total becomes one sample (0 for a node already seen running that did not run this time).
  func endInvoke() {
    let (stride, phase) = (state.pointee.stride, state.pointee.phase)
    for (subgraph, times) in subgraphs.enumerated() {
      for node in Swift.stride(from: phase, to: times.totals.count, by: stride)
      where times.runCounts[node] > 0 || samples[subgraph][node] != nil {
        if samples[subgraph][node] == nil { samples[subgraph][node] = [] }
        samples[subgraph][node]?.append(times.totals[node])
      }
    }
  }

  /// The observer to set on the executor of subgraph `subgraph` for the invoke begun with `stride`
  /// and `phase` (it observes only the nodes it times). Folded and fused-away nodes get only a
  /// `didRun`, and are not timed.
  func observer(forSubgraph subgraph: Int, stride: Int = 1, phase: Int = 0) -> NodeObserver {
    let state = state
    let times = subgraphs[subgraph]
    var observer = NodeObserver(
      willRun: { node in
        // At stride 1 the previous node's end is this node's start.
        let shares = state.pointee.previousCallbackStamped && state.pointee.stride == 1
        times.starts[node.position] = shares ? state.pointee.lastStamp : monotonicNanoseconds()
        state.pointee.previousCallbackStamped = false
      },
      didRun: { [unowned self] node in
        let position = node.position
        guard case .evaluated = node.evaluation else {
          state.pointee.previousCallbackStamped = false
          return
        }
        let now = monotonicNanoseconds()
        let start = times.starts[position]
        times.totals[position] += now - start
        times.runCounts[position] += 1
        state.pointee.timedRuns += 1
        state.pointee.lastStamp = now
        state.pointee.previousCallbackStamped = true
        if state.pointee.recordsEvents {
          let origin = state.pointee.invokeStart
          events.append(NodeEvent(subgraph: subgraph, node: position, start: start - origin, end: now - origin))
        }
      })
    observer.stride = stride
    observer.phase = phase
    return observer
  }

  /// The median cost of one clock read, in nanoseconds, over `reads` reads in batches.
  static func clockReadNanoseconds(reads: Int = 2000) -> Double {
    let batch = 100
    var perRead: [Double] = []
    for _ in 0..<max(reads / batch, 1) {
      let start = monotonicNanoseconds()
      var sink: Int64 = 0
      for _ in 0..<batch { sink &+= monotonicNanoseconds() }
      let end = monotonicNanoseconds()
      perRead.append(Double(end - start) / Double(batch + 1) + (sink == 0 ? 1 : 0))
    }
    return perRead.sorted()[perRead.count / 2]
  }

  /// The smallest stride whose observed nodes cost at most `budget` (a fraction) of an invoke of
  /// `invokeNanoseconds` running `nodeRuns` node runs, when observing one node costs
  /// `nodeNanoseconds` at stride 1 (two calls, one clock read) and one more clock read,
  /// `clockReadNanoseconds`, at larger strides; at most `maximum` (every node must be timed in
  /// some phase).
  static func stride(
    nodeRuns: Int, nodeNanoseconds: Double, clockReadNanoseconds: Double, invokeNanoseconds: Int64, budget: Double,
    maximum: Int
  ) -> Int {
    let allowed = budget * Double(invokeNanoseconds)
    if Double(nodeRuns) * nodeNanoseconds <= allowed { return 1 }
    let observedRuns = allowed / max(nodeNanoseconds + clockReadNanoseconds, 1)
    let stride = Int((Double(nodeRuns) / max(observedRuns, 1)).rounded(.up))
    return min(max(stride, 2), max(maximum, 1))
  }
}
