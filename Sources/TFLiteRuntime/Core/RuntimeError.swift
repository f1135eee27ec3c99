/// An operator of the model that the runtime cannot run.
public struct UnsupportedOperator: Sendable, Hashable, CustomStringConvertible {
  /// The subgraph holding the node.
  public var subgraph: Int
  /// The node's index in its subgraph; −1 for a subgraph input or output no node touches whose
  /// tensor the runtime cannot hold (``opName`` then says which).
  public var node: Int
  /// The operator's schema name or custom code.
  public var opName: String
  /// The operator version in the model.
  public var version: Int
  /// Why it cannot run (no kernel, an unsupported type or option).
  public var reason: String

  /// `node 12 (subgraph 1): CUMSUM v1: no kernel`; `subgraph input 0: tensor 2 'x': type UINT4, …`.
  public var description: String {
    let place = subgraph == 0 ? "" : " (subgraph \(subgraph))"
    return node < 0 ? "\(opName)\(place): \(reason)" : "node \(node)\(place): \(opName) v\(version): \(reason)"
  }
}

/// Errors of the runtime.
public enum RuntimeError: Error, CustomStringConvertible, Sendable {
  /// The model uses operators, types or options the runtime cannot run; every one is listed.
  case unsupportedOperators([UnsupportedOperator])
  /// A node's kernel rejected its operands while preparing or running.
  case nodeFailed(subgraph: Int, node: Int, opName: String, version: Int, reason: String)
  /// The model's graph is not usable (a bad index, a missing buffer, an impossible shape).
  case invalidModel(String)
  /// `invoke()` or a data access came before `allocateTensors()`, or after a resize without it.
  case allocationRequired
  /// An index given by the caller is out of range.
  case indexOutOfRange(what: String, index: Int, count: Int)
  /// A shape given by the caller is not valid.
  case invalidShape(String)
  /// The memory `what` needs (`byteCount` bytes) exceeds ``RunnerOptions/memoryLimit``.
  case memoryLimitExceeded(what: String, byteCount: Int, limit: Int)

  /// A readable description.
  public var description: String {
    switch self {
    case .unsupportedOperators(let list):
      "the model has \(list.count) operator\(list.count == 1 ? "" : "s") this runtime cannot run:\n"
        + list.map { "  \($0)" }.joined(separator: "\n")
    case .nodeFailed(let subgraph, let node, let opName, let version, let reason):
      "node \(node)\(subgraph == 0 ? "" : " of subgraph \(subgraph)") (\(opName) v\(version)): \(reason)"
    case .invalidModel(let reason): "invalid model: \(reason)"
    case .allocationRequired: "tensors are not allocated: call allocateTensors() first"
    case .indexOutOfRange(let what, let index, let count):
      "\(what) index \(index) is out of range (there \(count == 1 ? "is" : "are") \(count))"
    case .invalidShape(let reason): "invalid shape: \(reason)"
    case .memoryLimitExceeded(let what, let byteCount, let limit):
      "\(what) needs \(byteCount) bytes, more than the memory limit of \(limit) bytes"
    }
  }
}
