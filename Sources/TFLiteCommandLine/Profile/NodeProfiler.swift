// Times every node `invoke()` runs, through the executors' `NodeObserver` callbacks.
//
// A node's time in one invoke is the sum of its runs in that invoke (a node of a WHILE body runs
// once per iteration); a control-flow node's time includes the nodes of the subgraphs it calls,
// which are reported too, nested inside it. The profiler keeps every run's events, so that the
// medians and a Chrome trace of one run can be built afterwards.
import TFLiteRuntime

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

/// Records the start and end of every node of one invoke at a time.
final class NodeProfiler {
  private let clock = ContinuousClock()
  private var invokeStart: ContinuousClock.Instant
  /// Events of the invoke in progress, in the order the nodes started.
  private(set) var events: [NodeEvent] = []
  /// For each node still running, the position of its event in ``events`` (a stack: control-flow
  /// nodes nest).
  private var open: [Int] = []

  /// Creates a profiler; call ``beginInvoke()`` before each invoke.
  init() { invokeStart = clock.now }

  /// Forgets the previous invoke's events and starts the clock for a new one.
  func beginInvoke() {
    events.removeAll(keepingCapacity: true)
    open.removeAll(keepingCapacity: true)
    invokeStart = clock.now
  }

  /// Nanoseconds since ``beginInvoke()``.
  private var elapsed: Int64 { nanoseconds(clock.now - invokeStart) }

  /// The observer to set on the executor of subgraph `subgraph`: it records the start and end of
  /// every node whose kernel runs (folded and fused-away nodes get only a `didRun`, and are skipped).
  func observer(forSubgraph subgraph: Int) -> NodeObserver {
    NodeObserver(
      willRun: { [unowned self] node in
        open.append(events.count)
        let now = elapsed
        events.append(NodeEvent(subgraph: subgraph, node: node.position, start: now, end: now))
      },
      didRun: { [unowned self] node in
        let now = elapsed
        guard node.evaluation == .evaluated, let position = open.popLast() else { return }
        events[position].end = now
      })
  }

  /// Nanoseconds each node took in the invoke just run, summed over its runs.
  var nodeTotals: [NodeKey: Int64] {
    events.reduce(into: [:]) { totals, event in
      totals[NodeKey(subgraph: event.subgraph, node: event.node), default: 0] += event.end - event.start
    }
  }
}
