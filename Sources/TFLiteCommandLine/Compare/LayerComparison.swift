// `tflite compare MODEL --reference DIR`: runs the primary subgraph on the dump's inputs and
// compares every node's outputs with the dump, through `NodeObserver`s on every subgraph's
// executor. Fusion is off, so every tensor is computed.
//
// A node of subgraph 0 runs once: its outputs are compared as it finishes, so only one tensor and
// its reference are held at a time. A node of another subgraph (a WHILE condition or body, an IF
// branch, a CALL_ONCE initializer) may run many times in one invoke, and LiteRT's dump holds its
// tensors as its last run left them: a copy of the node's outputs is kept after each run, and the
// last run's are compared once the invoke is over (memory: at most the sum of those subgraphs'
// tensors). Nodes that never ran (an IF branch not taken) are not compared.
//
// Chained (the default), each node runs on our own earlier outputs: a node's error includes what
// it inherited. Isolated (`--isolate`), the reference's values of every non-constant input of a
// subgraph-0 node are copied into it just before it runs, so its error is its own; the nodes of
// the subgraphs a control-flow node calls then run chained from the reference's inputs of that node.

import TFLiteRuntime

/// One operator and how its outputs compare with the reference.
struct OperatorComparison {
  /// The subgraph index.
  var subgraph: Int
  /// Position in execution order (the operator's index in its subgraph).
  var operatorIndex: Int
  /// The operator's name (`CONV_2D`).
  var op: String
  /// Each output tensor's comparison (of the last run for a node that ran several times).
  var outputs: [TensorComparison]
  /// With `--isolate`: input tensors that kept our own values because the reference has none.
  var inputsNotFromReference: [Int]
  /// How many times the node ran in the invoke.
  var runs: Int
  /// When the node first finished, counted in node completions since the invoke began (orders the
  /// nodes of every subgraph in execution order: a loop body's nodes finish before their WHILE).
  var firstCompletion: Int

  /// True when any compared output is beyond tolerance.
  var diverges: Bool { outputs.contains { $0.isWithinTolerance == false } }
}

/// The operators of one subgraph other than the primary one that ran.
struct SubgraphComparison {
  /// The subgraph index.
  var index: Int
  /// The subgraph's name in the model ("" when it has none).
  var name: String
  /// Its operators that ran, in operator order.
  var operators: [OperatorComparison]
}

/// The whole per-operator comparison of one run.
struct LayerComparison {
  /// Every operator of subgraph 0 in execution order.
  var operators: [OperatorComparison]
  /// Every other subgraph of the model, in index order.
  var subgraphs: [SubgraphComparison]
  /// True when each operator ran on the reference's inputs.
  var isolated: Bool

  /// Every compared operator of every subgraph.
  var allOperators: [OperatorComparison] { operators + subgraphs.flatMap(\.operators) }

  /// The first operator, in execution order, with an output beyond tolerance.
  var firstDivergent: OperatorComparison? {
    allOperators.filter(\.diverges).min { $0.firstCompletion < $1.firstCompletion }
  }

  /// Runs `model` (loaded without fusion) on the inputs in `dump` and compares every operator's
  /// outputs with it.
  init(model: LoadedModel, dump: ReferenceDump, tolerance: LayerTolerance, isolated: Bool) throws {
    self.isolated = isolated
    let executor = model.executor
    let inputs = try executor.inputs.map { input in
      if let reason = dump.absence(of: input.index) {
        throw ReferenceDumpError("the reference has no values for input tensor \(input.index) '\(input.name)': \(reason)")
      }
      return try dump.values(of: input.index)
    }
    do {
      try model.feed(inputs)
    } catch {
      throw ReferenceDumpError("the reference inputs do not fit the model: \(error)")
    }
    let schema = model.runner.model.model
    let nested = schema.subgraphs.indices.dropFirst().compactMap { try? model.runner.subgraph(at: $0) }
    var operators: [OperatorComparison] = []
    var completions = 0
    var inputsWithoutReference: [Int] = []
    executor.nodeObserver = NodeObserver(
      willRun: { node in
        inputsWithoutReference = isolated ? try Self.copyReferenceInputs(of: node, from: dump) : []
      },
      didRun: { node in
        let outputs = try node.outputs.map { tensor in
          try Self.compare(tensor, of: node, subgraph: 0, ours: HostArray(copying: tensor), with: dump, tolerance: tolerance)
        }
        operators.append(
          OperatorComparison(
            subgraph: 0, operatorIndex: node.position, op: node.opName, outputs: outputs,
            inputsNotFromReference: node.evaluation == .evaluated ? inputsWithoutReference : [], runs: 1,
            firstCompletion: completions))
        completions += 1
        inputsWithoutReference = []
      })
    // Per nested subgraph and node: the node, its outputs after its last run, its runs and first completion.
    var lastRuns: [Int: [Int: (node: ObservedNode, outputs: [HostArray], runs: Int, firstCompletion: Int)]] = [:]
    for subgraph in nested {
      let index = subgraph.subgraphIndex
      subgraph.nodeObserver = NodeObserver { node in
        let previous = lastRuns[index]?[node.position]
        let outputs = node.evaluation == .fusedAway ? [] : node.outputs.map { HostArray(copying: $0) }
        lastRuns[index, default: [:]][node.position] = (
          node, outputs, (previous?.runs ?? 0) + 1,
          previous?.firstCompletion ?? completions
        )
        completions += 1
      }
    }
    defer { for observed in [executor] + nested { observed.nodeObserver = nil } }
    try executor.invoke()
    self.operators = operators
    subgraphs = try nested.map { subgraph in
      let index = subgraph.subgraphIndex
      let ran = (lastRuns[index] ?? [:]).sorted { $0.key < $1.key }.map(\.value)
      return SubgraphComparison(
        index: index, name: schema.subgraphs[index].name ?? "",
        operators: try ran.map { run in
          OperatorComparison(
            subgraph: index, operatorIndex: run.node.position, op: run.node.opName,
            outputs: try run.node.outputs.enumerated().map { position, tensor in
              try Self.compare(
                tensor, of: run.node, subgraph: index, ours: run.outputs[position], with: dump, tolerance: tolerance)
            },
            inputsNotFromReference: [], runs: run.runs, firstCompletion: run.firstCompletion)
        })
    }
  }

  /// Output `tensor` of `node` in `subgraph`, whose values are `ours` (read only when compared),
  /// compared with the reference.
  private static func compare(
    _ tensor: RuntimeTensor, of node: ObservedNode, subgraph: Int, ours: @autoclosure () -> HostArray,
    with dump: ReferenceDump,
    tolerance: LayerTolerance
  ) throws -> TensorComparison {
    if node.evaluation == .fusedAway {
      return TensorComparison(tensor: tensor, skipped: .notComputed("fused into a later operator"))
    }
    if let reason = dump.absence(of: tensor.index, inSubgraph: subgraph) {
      return TensorComparison(tensor: tensor, skipped: .absentInReference(reason))
    }
    return TensorComparison(
      tensor: tensor, ours: ours(), reference: try dump.values(of: tensor.index, inSubgraph: subgraph), tolerance: tolerance)
  }

  /// Copies the reference's values into every input of `node` that is computed while running
  /// (not a constant or variable); returns the inputs the reference has no values for.
  private static func copyReferenceInputs(of node: ObservedNode, from dump: ReferenceDump) throws -> [Int] {
    var missing: [Int] = []
    for case let input? in node.inputs where !input.isConstant && !input.isVariable {
      guard dump.absence(of: input.index) == nil else {
        missing.append(input.index)
        continue
      }
      let values = try dump.values(of: input.index)
      guard values.type == input.type, values.shape == input.shape, values.bytes.count == input.byteCount,
        let data = input.data
      else {
        throw ReferenceDumpError(
          "--isolate: operator \(node.position) (\(node.opName)) reads tensor \(input.index) as \(input.typeAndShape), the reference has \(values.typeAndShape)"
        )
      }
      values.bytes.withUnsafeBytes { bytes in
        if let source = bytes.baseAddress { data.copyMemory(from: source, byteCount: bytes.count) }
      }
    }
    return missing
  }
}
