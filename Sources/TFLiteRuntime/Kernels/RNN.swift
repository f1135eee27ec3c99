import TFLiteFormat

// Float fully connected RNN kernels: RNN (one step), UNIDIRECTIONAL_SEQUENCE_RNN and
// BIDIRECTIONAL_SEQUENCE_RNN. Per time step h' = act(W·x + W_aux·aux + R·h + b); the output is h'
// and the hidden state (a variable tensor) becomes h'.

extension KernelRegistry {
  /// RNN, UNIDIRECTIONAL_SEQUENCE_RNN, BIDIRECTIONAL_SEQUENCE_RNN (float32).
  nonisolated(unsafe) static let rnn: [String: any Kernel.Type] = [
    "RNN": RNNKernel.self, "UNIDIRECTIONAL_SEQUENCE_RNN": UnidirectionalSequenceRNNKernel.self,
    "BIDIRECTIONAL_SEQUENCE_RNN": BidirectionalSequenceRNNKernel.self,
  ]
}

/// One direction of an RNN: weights `[units, inputs]`, recurrent weights `[units, units]`, bias
/// `[units]`, hidden state (`batch × units` values) and optional auxiliary weights `[units, aux]`.
struct RNNCell: RecurrentDirection {
  private let op: String
  private let weights: RuntimeTensor
  private let recurrentWeights: RuntimeTensor
  private let bias: RuntimeTensor
  private let hiddenState: RuntimeTensor
  private let auxiliaryWeights: RuntimeTensor?
  private let activation: RecurrentActivation
  /// Hidden units.
  private(set) var unitCount = 0
  /// Values each step writes per batch row: the units.
  var outputCount: Int { unitCount }
  private var inputCount = 0
  private var auxiliaryCount = 0

  /// Reads the operands at `positions` (weights, recurrent weights, bias, hidden state, auxiliary weights).
  init(
    node: Node, positions: (weights: Int, recurrent: Int, bias: Int, state: Int, auxiliary: Int?), op: String,
    activation: ActivationFunctionType
  ) throws {
    self.op = op
    weights = try node.input(positions.weights)
    recurrentWeights = try node.input(positions.recurrent)
    bias = try node.input(positions.bias)
    hiddenState = try node.input(positions.state)
    auxiliaryWeights = positions.auxiliary.flatMap { node.optionalInput($0) }
    self.activation = try RecurrentActivation(activation, op: op)
    let operands = [weights, recurrentWeights, bias, hiddenState, auxiliaryWeights]
    if operands.contains(where: { $0?.type == .int8 || $0?.type == .uint8 }) {
      throw KernelError.unsupported("\(op) with quantized weights (only FLOAT32 here)")
    }
    try FloatOperands.require(operands, op: op)
    try FloatOperands.requireDense(operands, op: op)
  }

  /// Checks the shapes for `batch` rows of `inputCount` values (and `auxiliaryCount` auxiliary ones).
  mutating func prepare(inputCount: Int, auxiliaryCount: Int, batch: Int) throws -> Int {
    try FloatOperands.requireRank(weights, 2, op: op, role: "weights")
    unitCount = weights.shape[0]
    self.inputCount = inputCount
    self.auxiliaryCount = auxiliaryCount
    guard weights.shape[1] == inputCount, recurrentWeights.shape == [unitCount, unitCount], bias.shape == [unitCount]
    else {
      throw KernelError.invalid(
        "\(op) weights \(weights.shape), recurrent weights \(recurrentWeights.shape) and bias \(bias.shape) do not fit \(inputCount) inputs")
    }
    if let auxiliaryWeights {
      guard auxiliaryWeights.shape == [unitCount, auxiliaryCount] else {
        throw KernelError.invalid("\(op) auxiliary weights must be [\(unitCount), \(auxiliaryCount)], got \(auxiliaryWeights.shape)")
      }
    }
    guard hiddenState.elementCount == batch * unitCount else {
      throw KernelError.invalid("\(op) hidden state \(hiddenState.shape) does not hold \(batch) rows of \(unitCount) units")
    }
    return 0
  }

  /// Runs the sequence in `layout` (backwards when `reversed`), writing each step into rows of
  /// `outputWidth` values of `output`, `outputOffset` values into each row.
  func run(
    input: UnsafePointer<Float>, auxiliary: UnsafePointer<Float>?, layout: SequenceLayout,
    output: UnsafeMutablePointer<Float>, outputWidth: Int, outputOffset: Int, reversed: Bool,
    scratch: UnsafeMutablePointer<Float>
  ) {
    let state = hiddenState.pointer(as: Float.self)
    let batch = layout.batch
    for position in 0..<layout.steps {
      let step = reversed ? layout.steps - 1 - position : position
      let row = layout.firstRow(step: step)
      let rows = output + row * outputWidth + outputOffset
      let rowStride = layout.batchRowStride * outputWidth
      RecurrentMath.fillRows(
        rows, with: bias.pointer(as: Float.self), count: unitCount, batch: batch, stride: rowStride)
      RecurrentMath.multiplyAccumulate(
        matrix: weights.pointer(as: Float.self), rows: unitCount, depth: inputCount, vectors: input + row * inputCount,
        vectorStride: layout.batchRowStride * inputCount, batch: batch, result: rows, resultStride: rowStride)
      if let auxiliaryWeights, let auxiliary {
        RecurrentMath.multiplyAccumulate(
          matrix: auxiliaryWeights.pointer(as: Float.self), rows: unitCount, depth: auxiliaryCount,
          vectors: auxiliary + row * auxiliaryCount, vectorStride: layout.batchRowStride * auxiliaryCount, batch: batch,
          result: rows, resultStride: rowStride)
      }
      RecurrentMath.multiplyAccumulate(
        matrix: recurrentWeights.pointer(as: Float.self), rows: unitCount, depth: unitCount, vectors: state,
        vectorStride: unitCount, batch: batch, result: rows, resultStride: rowStride)
      for index in 0..<batch { activation.apply(to: rows + index * rowStride, count: unitCount) }
      RecurrentMath.copyRows(
        from: rows, sourceStride: rowStride, to: state, destinationStride: unitCount, count: unitCount, batch: batch)
    }
  }
}

/// RNN (float32): input `[batch, inputs]`, weights, recurrent weights, bias, hidden state; output `[batch, units]`.
final class RNNKernel: Kernel {
  private var step: UnidirectionalSequence<RNNCell>

  init(node: Node) throws {
    try node.expect(inputs: 5, outputs: 1)
    let options = try FloatOperands.options(of: node, op: "RNN", defaults: RNNOptions()) {
      if case .rnnOptions(let options) = $0 { options } else { nil }
    }
    let cell = try RNNCell(node: node, positions: (1, 2, 3, 4, nil), op: "RNN", activation: options.fusedActivationFunction)
    step = try UnidirectionalSequence(node: node, op: "RNN", timeMajor: nil, direction: cell)
  }

  func prepare(_ context: inout PrepareContext) throws { try step.prepare(&context) }
  func eval(_ context: EvalContext) throws { step.eval(context) }
}

/// UNIDIRECTIONAL_SEQUENCE_RNN (float32): input `[time, batch, inputs]` (time major) or
/// `[batch, time, inputs]`; output of the same layout with `units` values per step.
final class UnidirectionalSequenceRNNKernel: Kernel {
  private var sequence: UnidirectionalSequence<RNNCell>

  init(node: Node) throws {
    let op = "UNIDIRECTIONAL_SEQUENCE_RNN"
    try node.expect(inputs: 5, outputs: 1)
    let options = try FloatOperands.options(of: node, op: op, defaults: SequenceRNNOptions()) {
      if case .sequenceRNNOptions(let options) = $0 { options } else { nil }
    }
    let cell = try RNNCell(node: node, positions: (1, 2, 3, 4, nil), op: op, activation: options.fusedActivationFunction)
    sequence = try UnidirectionalSequence(node: node, op: op, timeMajor: options.timeMajor, direction: cell)
  }

  func prepare(_ context: inout PrepareContext) throws { try sequence.prepare(&context) }
  func eval(_ context: EvalContext) throws { sequence.eval(context) }
}

/// BIDIRECTIONAL_SEQUENCE_RNN (float32): 9 to 12 operands (input; forward weights, recurrent
/// weights, bias, hidden state; the same backward; auxiliary input; forward and backward auxiliary
/// weights); see ``BidirectionalSequence`` for the directions and outputs.
final class BidirectionalSequenceRNNKernel: Kernel {
  private var sequence: BidirectionalSequence<RNNCell>

  init(node: Node) throws {
    let op = "BIDIRECTIONAL_SEQUENCE_RNN"
    let options = try FloatOperands.options(of: node, op: op, defaults: BidirectionalSequenceRNNOptions()) {
      if case .bidirectionalSequenceRNNOptions(let options) = $0 { options } else { nil }
    }
    try node.expect(inputs: 9, maxInputs: 12, outputs: options.mergeOutputs ? 1 : 2)
    let activation = options.fusedActivationFunction
    sequence = try BidirectionalSequence(
      node: node, op: op, auxiliaryPosition: 9, usesAuxiliaryWeights: node.optionalInput(10) != nil,
      mergesOutputs: options.mergeOutputs, timeMajor: options.timeMajor,
      forward: RNNCell(node: node, positions: (1, 2, 3, 4, 10), op: op, activation: activation),
      backward: RNNCell(node: node, positions: (5, 6, 7, 8, 11), op: op, activation: activation))
  }

  func prepare(_ context: inout PrepareContext) throws { try sequence.prepare(&context) }
  func eval(_ context: EvalContext) throws { sequence.eval(context) }
}
