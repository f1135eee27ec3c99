import TFLiteFormat

// Fully connected RNN kernels (FLOAT32 activations, FLOAT32 or hybrid INT8 weights): RNN (one step), UNIDIRECTIONAL_SEQUENCE_RNN and
// BIDIRECTIONAL_SEQUENCE_RNN. Per time step h' = act(W·x + W_aux·aux + R·h + b); the output is h'
// and the hidden state (a variable tensor) becomes h'.

/// One direction of an RNN: weights `[units, inputs]`, recurrent weights `[units, units]`, bias
/// `[units]`, hidden state (`batch × units` values) and optional auxiliary weights `[units, aux]`.
/// The weights are FLOAT32, or INT8 with one scale each (hybrid: see ``RecurrentMatrix``).
struct RNNCell: RecurrentDirection {
  private let op: String
  private var weights: RecurrentMatrix
  private var recurrentWeights: RecurrentMatrix
  private let bias: RuntimeTensor
  private let hiddenState: RuntimeTensor
  private var auxiliaryWeights: RecurrentMatrix?
  private let activation: RecurrentActivation
  /// How vectors are quantized for hybrid weights; nil for float weights.
  private let quantization: HybridInputQuantization?
  /// Hidden units.
  private(set) var unitCount = 0
  /// Values each step writes per batch row: the units.
  var outputCount: Int { unitCount }
  private var inputCount = 0
  private var auxiliaryCount = 0
  private var inputScratch: RecurrentQuantizationScratch?
  private var auxiliaryScratch: RecurrentQuantizationScratch?
  private var stateScratch: RecurrentQuantizationScratch?

  /// Reads the operands at `positions` (weights, recurrent weights, bias, hidden state, auxiliary weights).
  init(
    node: Node, positions: (weights: Int, recurrent: Int, bias: Int, state: Int, auxiliary: Int?), op: String,
    activation: ActivationFunctionType, asymmetricQuantizeInputs: Bool
  ) throws {
    self.op = op
    let weightTensor = try node.input(positions.weights)
    let hybrid = weightTensor.type != .float32
    quantization = hybrid ? (asymmetricQuantizeInputs ? .asymmetric : .symmetric) : nil
    weights = try RecurrentMatrix(weightTensor, hybrid: hybrid, op: op)
    recurrentWeights = try RecurrentMatrix(try node.input(positions.recurrent), hybrid: hybrid, op: op)
    bias = try node.input(positions.bias)
    hiddenState = try node.input(positions.state)
    auxiliaryWeights = try positions.auxiliary.flatMap { node.optionalInput($0) }.map {
      try RecurrentMatrix($0, hybrid: hybrid, op: op)
    }
    self.activation = try RecurrentActivation(activation, op: op)
    try FloatOperands.require([bias, hiddenState], op: op)
  }

  mutating func prepare(inputCount: Int, auxiliaryCount: Int, batch: Int) throws -> Int {
    try FloatOperands.requireRank(weights.tensor, 2, op: op, role: "weights")
    let units = weights.tensor.shape[0]
    unitCount = units
    self.inputCount = inputCount
    self.auxiliaryCount = auxiliaryCount
    try weights.prepare(rows: units, depth: inputCount, op: op, role: "weights")
    try recurrentWeights.prepare(rows: units, depth: units, op: op, role: "recurrent weights")
    try auxiliaryWeights?.prepare(rows: units, depth: auxiliaryCount, op: op, role: "auxiliary weights")
    guard bias.shape == [units] else { throw KernelError.invalid("\(op) bias must be [\(units)], got \(bias.shape)") }
    try checkRecurrentState(hiddenState, rows: batch, width: units, op: op, role: "hidden state")
    var scratch = ScratchLayout()
    inputScratch = RecurrentQuantizationScratch(batch: batch, depth: inputCount, quantization: quantization, scratch: &scratch)
    auxiliaryScratch = RecurrentQuantizationScratch(
      batch: batch, depth: auxiliaryCount, quantization: quantization, scratch: &scratch)
    stateScratch = RecurrentQuantizationScratch(batch: batch, depth: units, quantization: quantization, scratch: &scratch)
    return scratch.byteCount
  }

  func run(
    input: UnsafePointer<Float>, auxiliary: UnsafePointer<Float>?, layout: SequenceLayout,
    output: UnsafeMutablePointer<Float>, outputWidth: Int, outputOffset: Int, reversed: Bool,
    scratch: UnsafeMutableRawPointer
  ) {
    guard let inputScratch, let auxiliaryScratch, let stateScratch else { return }
    let state = hiddenState.pointer(as: Float.self)
    let batch = layout.batch
    for position in 0..<layout.steps {
      let step = reversed ? layout.steps - 1 - position : position
      let row = layout.firstRow(step: step)
      let rows = output + row * outputWidth + outputOffset
      let rowStride = layout.batchRowStride * outputWidth
      RecurrentMath.fillRows(rows, with: bias.pointer(as: Float.self), count: unitCount, batch: batch, stride: rowStride)
      weights.multiplyAccumulate(
        inputScratch.vectors(input + row * inputCount, stride: layout.batchRowStride * inputCount, scratch: scratch),
        batch: batch, into: rows, resultStride: rowStride)
      if let auxiliaryWeights, let auxiliary {
        auxiliaryWeights.multiplyAccumulate(
          auxiliaryScratch.vectors(
            auxiliary + row * auxiliaryCount, stride: layout.batchRowStride * auxiliaryCount, scratch: scratch),
          batch: batch, into: rows, resultStride: rowStride)
      }
      recurrentWeights.multiplyAccumulate(
        stateScratch.vectors(state, stride: unitCount, scratch: scratch), batch: batch, into: rows,
        resultStride: rowStride)
      for index in 0..<batch { activation.apply(to: rows + index * rowStride, count: unitCount) }
      RecurrentMath.copyRows(
        from: rows, sourceStride: rowStride, to: state, destinationStride: unitCount, count: unitCount, batch: batch)
    }
  }
}

/// RNN (float32 activations): input `[batch, inputs]`, weights, recurrent weights, bias, hidden state; output `[batch, units]`.
final class RNNKernel: Kernel {
  private var step: UnidirectionalSequence<RNNCell>

  init(node: Node) throws {
    try node.expect(inputs: 5, outputs: 1)
    let options = try FloatOperands.options(of: node, op: "RNN", defaults: RNNOptions()) {
      if case .rnnOptions(let options) = $0 { options } else { nil }
    }
    let cell = try RNNCell(node: node, positions: (1, 2, 3, 4, nil), op: "RNN", activation: options.fusedActivationFunction,
      asymmetricQuantizeInputs: options.asymmetricQuantizeInputs)
    step = try UnidirectionalSequence(node: node, op: "RNN", timeMajor: nil, direction: cell)
  }

  func prepare(_ context: inout PrepareContext) throws { try step.prepare(&context) }
  func eval(_ context: EvalContext) throws { try step.eval(context) }
}

/// UNIDIRECTIONAL_SEQUENCE_RNN (float32 activations): input `[time, batch, inputs]` (time major) or
/// `[batch, time, inputs]`; output of the same layout with `units` values per step.
final class UnidirectionalSequenceRNNKernel: Kernel {
  private var sequence: UnidirectionalSequence<RNNCell>

  init(node: Node) throws {
    let op = "UNIDIRECTIONAL_SEQUENCE_RNN"
    try node.expect(inputs: 5, outputs: 1)
    let options = try FloatOperands.options(of: node, op: op, defaults: SequenceRNNOptions()) {
      if case .sequenceRNNOptions(let options) = $0 { options } else { nil }
    }
    let cell = try RNNCell(node: node, positions: (1, 2, 3, 4, nil), op: op, activation: options.fusedActivationFunction,
      asymmetricQuantizeInputs: options.asymmetricQuantizeInputs)
    sequence = try UnidirectionalSequence(node: node, op: op, timeMajor: options.timeMajor, direction: cell)
  }

  func prepare(_ context: inout PrepareContext) throws { try sequence.prepare(&context) }
  func eval(_ context: EvalContext) throws { try sequence.eval(context) }
}

/// BIDIRECTIONAL_SEQUENCE_RNN (float32 activations): 9 to 12 operands (input; forward weights, recurrent
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
    let (activation, asymmetric) = (options.fusedActivationFunction, options.asymmetricQuantizeInputs)
    sequence = try BidirectionalSequence(
      node: node, op: op, auxiliaryPosition: 9, usesAuxiliaryWeights: node.optionalInput(10) != nil,
      mergesOutputs: options.mergeOutputs, timeMajor: options.timeMajor,
      forward: RNNCell(node: node, positions: (1, 2, 3, 4, 10), op: op, activation: activation, asymmetricQuantizeInputs: asymmetric),
      backward: RNNCell(node: node, positions: (5, 6, 7, 8, 11), op: op, activation: activation, asymmetricQuantizeInputs: asymmetric))
  }

  func prepare(_ context: inout PrepareContext) throws { try sequence.prepare(&context) }
  func eval(_ context: EvalContext) throws { try sequence.eval(context) }
}
