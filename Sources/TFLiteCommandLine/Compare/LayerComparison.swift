// `tflite compare MODEL --reference DIR`: runs the primary subgraph on the dump's inputs and
// compares every node's outputs with the dump as the node finishes (a `NodeObserver`), so only one
// tensor and its reference are held at a time. Fusion is off, so every tensor is computed.
//
// Chained (the default), each node runs on our own earlier outputs: a node's error includes what
// it inherited. Isolated (`--isolate`), the reference's values of every non-constant input are
// copied into the node's inputs just before it runs, so its error is its own.

import TFLiteRuntime

/// One operator of subgraph 0 and how its outputs compare with the reference.
struct OperatorComparison {
  /// Position in execution order (the operator's index in the model).
  var operatorIndex: Int
  /// The operator's name (`CONV_2D`).
  var op: String
  /// Each output tensor's comparison.
  var outputs: [TensorComparison]
  /// With `--isolate`: input tensors that kept our own values because the reference has none.
  var inputsNotFromReference: [Int]

  /// True when any compared output is beyond tolerance.
  var diverges: Bool { outputs.contains { $0.isWithinTolerance == false } }
}

/// The whole per-operator comparison of one run.
struct LayerComparison {
  /// Every operator in execution order.
  var operators: [OperatorComparison]
  /// True when each operator ran on the reference's inputs.
  var isolated: Bool

  /// The first operator with an output beyond tolerance.
  var firstDivergent: OperatorComparison? { operators.first(where: \.diverges) }

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
    var operators: [OperatorComparison] = []
    var inputsWithoutReference: [Int] = []
    let willRun: (ObservedNode) throws -> Void = { node in
      inputsWithoutReference = isolated ? try Self.copyReferenceInputs(of: node, from: dump) : []
    }
    executor.nodeObserver = NodeObserver(willRun: willRun) { node in
      let outputs = try node.outputs.map { tensor in
        if node.evaluation == .fusedAway {
          return TensorComparison(tensor: tensor, skipped: .notComputed("fused into a later operator"))
        }
        if let reason = dump.absence(of: tensor.index) {
          return TensorComparison(tensor: tensor, skipped: .absentInReference(reason))
        }
        return TensorComparison(
          tensor: tensor, ours: HostArray(copying: tensor), reference: try dump.values(of: tensor.index),
          tolerance: tolerance)
      }
      operators.append(
        OperatorComparison(
          operatorIndex: node.position, op: node.opName, outputs: outputs,
          inputsNotFromReference: node.evaluation == .evaluated ? inputsWithoutReference : []))
      inputsWithoutReference = []
    }
    defer { executor.nodeObserver = nil }
    try executor.invoke()
    self.operators = operators
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
