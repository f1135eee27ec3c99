/// A hook around every node a ``SubgraphExecutor`` runs in `invoke()`, for profilers and tracers.
///
/// Set ``SubgraphExecutor/nodeObserver`` on each executor to observe (control-flow bodies run on
/// their own executors, whose events nest inside the calling node's). `nodeWillRun` comes right
/// before the node's kernel evaluates, `nodeDidRun` right after it returns; a node that throws gets
/// no `nodeDidRun`. Nodes computed at prepare time (constant folding) and nodes fused into a later
/// node are not run by `invoke()` and are not reported. `node` is the operator's index in the
/// model's subgraph. With no observer set the executor pays one nil check per node.
package protocol NodeObserver: AnyObject {
  /// Node `node` of subgraph `subgraph` is about to run.
  func nodeWillRun(subgraph: Int, node: Int)
  /// Node `node` of subgraph `subgraph` has run.
  func nodeDidRun(subgraph: Int, node: Int)
}
