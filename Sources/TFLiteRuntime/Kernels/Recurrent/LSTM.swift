import TFLiteFormat

// LSTM kernels: LSTM (one step), UNIDIRECTIONAL_SEQUENCE_LSTM and BIDIRECTIONAL_SEQUENCE_LSTM, with
// FLOAT32 or hybrid INT8 weights (see RecurrentWeights.swift) and FLOAT32 activations.
//
// Per time step, with x the input, h the output state and c the cell state of the previous step:
//   gate  = act(W·x + W_aux·aux + R·h + p ⊙ c + b)   (for the input, forget and output gates act = sigmoid;
//                                                   for the cell gate, the node's activation; no peephole on it)
//   with layer norm the bias moves after the normalization: act(norm(...) ⊙ coefficients + b)
//   c' = clip(f ⊙ c + i ⊙ g)                        (CIFG: i = 1 − f; clip only with cell_clip > 0)
//   the output gate's peephole reads c', then h' = o ⊙ act(c'), projected with h' = clip(P·h' + b_P)
// The input gate's operands are absent in a CIFG LSTM; peepholes, projection, layer norm and the
// auxiliary input are optional. Output and cell states are variable tensors updated in place.

/// Where one LSTM direction's operands are among a node's inputs.
struct LSTMOperandPositions {
  /// First of 17 consecutive operands: input-to-gate weights (input, forget, cell, output),
  /// recurrent weights (same order), peepholes (input, forget, output), gate biases (input,
  /// forget, cell, output), projection weights, projection bias.
  let weights: Int
  /// The output state (variable).
  let outputState: Int
  /// The cell state (variable).
  let cellState: Int
  /// First of the four layer-norm coefficient vectors, when the operator has them.
  let layerNorm: Int?
  /// First of the four auxiliary-input weight matrices, when the operator has them.
  let auxiliaryWeights: Int?

  /// The single direction of LSTM and UNIDIRECTIONAL_SEQUENCE_LSTM.
  static let unidirectional = LSTMOperandPositions(
    weights: 1, outputState: 18, cellState: 19, layerNorm: 20, auxiliaryWeights: nil)
  /// The forward direction of BIDIRECTIONAL_SEQUENCE_LSTM.
  static let forward = LSTMOperandPositions(
    weights: 1, outputState: 35, cellState: 36, layerNorm: nil, auxiliaryWeights: 40)
  /// The backward direction of BIDIRECTIONAL_SEQUENCE_LSTM.
  static let backward = LSTMOperandPositions(
    weights: 18, outputState: 37, cellState: 38, layerNorm: nil, auxiliaryWeights: 44)
}

/// The operands of one LSTM gate.
struct LSTMGate {
  /// `[cells, inputs]`.
  var inputWeights: RecurrentMatrix
  /// `[cells, auxiliary inputs]`, when the auxiliary input feeds this gate.
  var auxiliaryWeights: RecurrentMatrix?
  /// `[cells, outputs]`.
  var recurrentWeights: RecurrentMatrix
  /// `[cells]`: the diagonal weights from the cell state (peephole).
  let peephole: RecurrentVector?
  /// `[cells]`.
  let bias: RuntimeTensor
  /// `[cells]`: layer-norm coefficients.
  let layerNorm: RuntimeTensor?
  /// Sigmoid, or the node's activation for the cell gate.
  let activation: RecurrentActivation
  /// Where LiteRT keeps this gate in its scratch buffer, in gate-sized slots (input, cell, forget,
  /// output; without the input gate cell, forget, output): it decides how LiteRT rounds the sigmoid.
  let liteRTSlot: Int
}

/// The vectors one LSTM step multiplies, and where its output rows go.
private struct LSTMStepOperands {
  let input: RecurrentVectors
  let auxiliary: RecurrentVectors?
  let outputState: RecurrentVectors
  let output: UnsafeMutablePointer<Float>
  let outputStride: Int
}

/// One direction of an LSTM: its gates, projection and states. The weight matrices are all
/// FLOAT32, or all INT8 (hybrid: see ``RecurrentMatrix``).
struct LSTMCell: RecurrentDirection {
  private let op: String
  /// Nil for a CIFG LSTM (coupled input and forget gates).
  private var inputGate: LSTMGate?
  private var forgetGate: LSTMGate
  private var cellGate: LSTMGate
  private var outputGate: LSTMGate
  private var projectionWeights: RecurrentMatrix?
  private let projectionBias: RuntimeTensor?
  private let outputState: RuntimeTensor
  private let cellState: RuntimeTensor
  private let activation: RecurrentActivation
  private let cellClip: Float
  private let projectionClip: Float
  /// How vectors are quantized for hybrid weights; nil for float weights.
  private let quantization: HybridInputQuantization?
  /// Units of the cell state.
  private(set) var cellCount = 0
  /// Values of the output (and output state) per step.
  private(set) var outputCount = 0
  private var inputCount = 0
  private var auxiliaryCount = 0
  private var gatesOffset = 0
  private var inputScratch: RecurrentQuantizationScratch?
  private var auxiliaryScratch: RecurrentQuantizationScratch?
  private var outputStateScratch: RecurrentQuantizationScratch?
  private var hiddenScratch: RecurrentQuantizationScratch?

  /// Reads the operands of one direction of `node`: FLOAT32 input, states, biases and layer-norm
  /// coefficients; FLOAT32 weights, or INT8 weights with one scale each (hybrid).
  init(
    node: Node, positions: LSTMOperandPositions, op: String, activation: ActivationFunctionType, cellClip: Float,
    projectionClip: Float, asymmetricQuantizeInputs: Bool
  ) throws {
    self.op = op
    self.activation = try RecurrentActivation(activation, op: op, allowsNone: false)
    guard cellClip >= 0, projectionClip >= 0 else {
      throw KernelError.invalid("\(op) needs non-negative clip values, got \(cellClip) and \(projectionClip)")
    }
    self.cellClip = cellClip
    self.projectionClip = projectionClip
    let first = positions.weights
    let hybrid = try node.input(first + 3).type != .float32
    quantization = hybrid ? (asymmetricQuantizeInputs ? .asymmetric : .symmetric) : nil
    func operand(_ offset: Int) -> RuntimeTensor? { node.optionalInput(first + offset) }
    func matrix(_ tensor: RuntimeTensor?) throws -> RecurrentMatrix? {
      try tensor.map { try RecurrentMatrix($0, hybrid: hybrid, op: op) }
    }
    let coupled = operand(0) == nil
    func gate(_ index: Int, peephole: Int?, activation: RecurrentActivation) throws -> LSTMGate {
      let required = { (offset: Int) throws -> RecurrentMatrix in
        try RecurrentMatrix(try node.input(first + offset), hybrid: hybrid, op: op)
      }
      return LSTMGate(
        inputWeights: try required(index),
        auxiliaryWeights: try matrix(positions.auxiliaryWeights.flatMap { node.optionalInput($0 + index) }),
        recurrentWeights: try required(4 + index),
        peephole: try peephole.flatMap { operand(8 + $0) }.map { try RecurrentVector($0, hybrid: hybrid, op: op) },
        bias: try node.input(first + 11 + index), layerNorm: positions.layerNorm.flatMap { node.optionalInput($0 + index) },
        activation: activation, liteRTSlot: [0, 2, 1, 3][index] - (coupled ? 1 : 0))
    }
    inputGate = coupled ? nil : try gate(0, peephole: 0, activation: .sigmoid)
    forgetGate = try gate(1, peephole: 1, activation: .sigmoid)
    cellGate = try gate(2, peephole: nil, activation: self.activation)
    outputGate = try gate(3, peephole: 2, activation: .sigmoid)
    projectionWeights = try matrix(operand(15))
    projectionBias = operand(16)
    outputState = try node.input(positions.outputState)
    cellState = try node.input(positions.cellState)
    if inputGate == nil, operand(4) != nil {
      throw KernelError.invalid("\(op) has recurrent-to-input weights without input-to-input weights")
    }
    let gates = [inputGate, forgetGate, cellGate, outputGate].compactMap { $0 }
    let floats: [RuntimeTensor?] = gates.map(\.bias) + gates.map(\.layerNorm) + [projectionBias, outputState, cellState]
    try FloatOperands.require(floats, op: op)
  }

  mutating func prepare(inputCount: Int, auxiliaryCount: Int, batch: Int) throws -> Int {
    try FloatOperands.requireRank(outputGate.inputWeights.tensor, 2, op: op, role: "input-to-output weights")
    try FloatOperands.requireRank(outputGate.recurrentWeights.tensor, 2, op: op, role: "recurrent-to-output weights")
    cellCount = outputGate.inputWeights.tensor.shape[0]
    outputCount = outputGate.recurrentWeights.tensor.shape[1]
    self.inputCount = inputCount
    self.auxiliaryCount = auxiliaryCount
    guard cellCount > 0, outputCount > 0 else { throw KernelError.invalid("\(op) has an empty cell or output") }
    let (cells, outputs) = (cellCount, outputCount)
    func prepareGate(_ gate: inout LSTMGate) throws {
      try gate.inputWeights.prepare(rows: cells, depth: inputCount, op: op, role: "input-to-gate weights")
      try gate.recurrentWeights.prepare(rows: cells, depth: outputs, op: op, role: "recurrent weights")
      try gate.peephole?.prepare(shape: [cells], op: op, role: "peephole weights")
      for case let vector? in [gate.bias, gate.layerNorm] where vector.shape != [cells] {
        throw KernelError.invalid("\(op) gate bias and layer-norm coefficients must be [\(cells)], got \(vector.shape)")
      }
      guard gate.auxiliaryWeights != nil else { return }
      guard auxiliaryCount > 0 else { throw KernelError.invalid("\(op) has auxiliary weights but no auxiliary input") }
      try gate.auxiliaryWeights?.prepare(rows: cells, depth: auxiliaryCount, op: op, role: "auxiliary-input weights")
    }
    if var gate = inputGate {
      try prepareGate(&gate)
      inputGate = gate
    }
    try prepareGate(&forgetGate)
    try prepareGate(&cellGate)
    try prepareGate(&outputGate)
    if inputGate == nil, forgetGate.peephole != nil, outputGate.peephole == nil {
      throw KernelError.invalid("\(op) has a forget-gate peephole but no output-gate peephole")
    }
    if projectionWeights != nil {
      try projectionWeights?.prepare(rows: outputs, depth: cells, op: op, role: "projection weights")
    } else {
      guard outputs == cells, projectionBias == nil else {
        throw KernelError.invalid("\(op) without projection needs as many outputs as cells, got \(outputs) and \(cells)")
      }
    }
    if let projectionBias, projectionBias.shape != [outputs] {
      throw KernelError.invalid("\(op) projection bias must be [\(outputs)], got \(projectionBias.shape)")
    }
    try checkRecurrentState(outputState, rows: batch, width: outputs, op: op, role: "output state")
    try checkRecurrentState(cellState, rows: batch, width: cells, op: op, role: "cell state")
    var scratch = ScratchLayout()
    gatesOffset = scratch.reserve(floats: 5 * batch * cells)
    inputScratch = RecurrentQuantizationScratch(batch: batch, depth: inputCount, quantization: quantization, scratch: &scratch)
    auxiliaryScratch = RecurrentQuantizationScratch(
      batch: batch, depth: auxiliaryCount, quantization: quantization, scratch: &scratch)
    outputStateScratch = RecurrentQuantizationScratch(batch: batch, depth: outputs, quantization: quantization, scratch: &scratch)
    hiddenScratch = RecurrentQuantizationScratch(batch: batch, depth: cells, quantization: quantization, scratch: &scratch)
    return scratch.byteCount
  }

  func run(
    input: UnsafePointer<Float>, auxiliary: UnsafePointer<Float>?, layout: SequenceLayout,
    output: UnsafeMutablePointer<Float>, outputWidth: Int, outputOffset: Int, reversed: Bool,
    scratch: UnsafeMutableRawPointer
  ) {
    guard let inputScratch, let auxiliaryScratch, let outputStateScratch else { return }
    for position in 0..<layout.steps {
      let step = reversed ? layout.steps - 1 - position : position
      let row = layout.firstRow(step: step)
      let operands = LSTMStepOperands(
        input: inputScratch.vectors(
          input + row * inputCount, stride: layout.batchRowStride * inputCount, scratch: scratch),
        auxiliary: auxiliary.map {
          auxiliaryScratch.vectors($0 + row * auxiliaryCount, stride: layout.batchRowStride * auxiliaryCount, scratch: scratch)
        },
        outputState: outputStateScratch.vectors(outputState.pointer(as: Float.self), stride: outputCount, scratch: scratch),
        output: output + row * outputWidth + outputOffset, outputStride: layout.batchRowStride * outputWidth)
      self.step(operands, layout: layout, scratch: scratch)
    }
  }

  private func step(_ operands: LSTMStepOperands, layout: SequenceLayout, scratch: UnsafeMutableRawPointer) {
    let batch = layout.batch
    let size = batch * cellCount
    let gateValues = (scratch + gatesOffset).assumingMemoryBound(to: Float.self)
    let (inputValues, forget, cellValues, outputValues, hidden) =
      (gateValues, gateValues + size, gateValues + 2 * size, gateValues + 3 * size, gateValues + 4 * size)
    let cell = cellState.pointer(as: Float.self)
    let state = outputState.pointer(as: Float.self)
    if let inputGate { compute(inputGate, operands, layout: layout, into: inputValues) }
    compute(forgetGate, operands, layout: layout, into: forget)
    compute(cellGate, operands, layout: layout, into: cellValues)
    for index in 0..<size {
      let inputShare = inputGate == nil ? 1 - forget[index] : inputValues[index]
      cell[index] = forget[index] * cell[index] + inputShare * cellValues[index]
    }
    if cellClip > 0 { RecurrentMath.clip(cell, count: size, limit: cellClip) }
    compute(outputGate, operands, layout: layout, into: outputValues)
    hidden.update(from: cell, count: size)
    activation.apply(to: hidden, count: size)
    for index in 0..<size { hidden[index] *= outputValues[index] }
    if let projectionWeights, let hiddenScratch {
      RecurrentMath.fillRows(
        state, with: projectionBias.map { UnsafePointer($0.pointer(as: Float.self)) }, count: outputCount, batch: batch,
        stride: outputCount)
      projectionWeights.multiplyAccumulate(
        hiddenScratch.vectors(hidden, stride: cellCount, scratch: scratch), batch: batch, into: state,
        resultStride: outputCount)
      if projectionClip > 0 { RecurrentMath.clip(state, count: batch * outputCount, limit: projectionClip) }
    } else {
      state.update(from: hidden, count: size)
    }
    RecurrentMath.copyRows(
      from: state, sourceStride: outputCount, to: operands.output, destinationStride: operands.outputStride,
      count: outputCount, batch: batch)
  }

  /// One gate for every batch row, from the current input and the previous output state (and the
  /// cell state as it is when the gate is computed, for a peephole).
  private func compute(
    _ gate: LSTMGate, _ operands: LSTMStepOperands, layout: SequenceLayout, into values: UnsafeMutablePointer<Float>
  ) {
    let batch = layout.batch
    let bias = UnsafePointer(gate.bias.pointer(as: Float.self))
    RecurrentMath.fillRows(values, with: gate.layerNorm == nil ? bias : nil, count: cellCount, batch: batch, stride: cellCount)
    gate.inputWeights.multiplyAccumulate(operands.input, batch: batch, into: values, resultStride: cellCount)
    if let auxiliaryWeights = gate.auxiliaryWeights, let auxiliary = operands.auxiliary {
      auxiliaryWeights.multiplyAccumulate(auxiliary, batch: batch, into: values, resultStride: cellCount)
    }
    gate.recurrentWeights.multiplyAccumulate(operands.outputState, batch: batch, into: values, resultStride: cellCount)
    if let peephole = gate.peephole {
      RecurrentMath.diagonalMultiplyAccumulate(
        weights: peephole.values, vectors: cellState.pointer(as: Float.self), count: cellCount, batch: batch,
        values: values)
    }
    if let layerNorm = gate.layerNorm {
      RecurrentMath.normalizeRows(
        values, count: cellCount, batch: batch, coefficients: layerNorm.pointer(as: Float.self), bias: bias)
    }
    // LiteRT activates a time-major step in one run, a batch-major one sequence by sequence.
    let slotStart = gate.liteRTSlot * batch * cellCount
    if layout.timeMajor {
      gate.activation.apply(to: values, count: batch * cellCount, liteRTOffset: slotStart)
    } else {
      for row in 0..<batch {
        gate.activation.apply(
          to: values + row * cellCount, count: cellCount, liteRTOffset: slotStart + row * cellCount)
      }
    }
  }
}

/// UNIDIRECTIONAL_SEQUENCE_LSTM (float32 activations): input `[time, batch, inputs]` (time major) or
/// `[batch, time, inputs]`, 20 or 24 operands (see ``LSTMOperandPositions``), output of the
/// input's layout with `outputs` values per step.
final class UnidirectionalSequenceLSTMKernel: Kernel {
  private var sequence: UnidirectionalSequence<LSTMCell>

  init(node: Node) throws {
    let op = "UNIDIRECTIONAL_SEQUENCE_LSTM"
    try node.expect(inputs: 20, maxInputs: 24, outputs: 1)
    let options = try FloatOperands.options(of: node, op: op, defaults: UnidirectionalSequenceLSTMOptions()) {
      if case .unidirectionalSequenceLSTMOptions(let options) = $0 { options } else { nil }
    }
    guard !options.diagonalRecurrentTensors else { throw KernelError.unsupported("\(op) with diagonal recurrent weights") }
    let cell = try LSTMCell(
      node: node, positions: .unidirectional, op: op, activation: options.fusedActivationFunction,
      cellClip: options.cellClip, projectionClip: options.projClip,
      asymmetricQuantizeInputs: options.asymmetricQuantizeInputs)
    sequence = try UnidirectionalSequence(node: node, op: op, timeMajor: options.timeMajor, direction: cell)
  }

  func prepare(_ context: inout PrepareContext) throws { try sequence.prepare(&context) }
  func eval(_ context: EvalContext) throws { try sequence.eval(context) }
}

/// LSTM (float32 activations, full kernel): one step of `[batch, inputs]`, 20 or 24 operands (see
/// ``LSTMOperandPositions``), output `[batch, outputs]`. The basic kernel type is not run.
final class LSTMKernel: Kernel {
  private var step: UnidirectionalSequence<LSTMCell>

  init(node: Node) throws {
    let options = try FloatOperands.options(of: node, op: "LSTM", defaults: LSTMOptions()) {
      if case .lstmOptions(let options) = $0 { options } else { nil }
    }
    guard options.kernelType == .full else { throw KernelError.unsupported("LSTM with the BASIC kernel type") }
    try node.expect(inputs: 20, maxInputs: 24, outputs: 1)
    let cell = try LSTMCell(
      node: node, positions: .unidirectional, op: "LSTM", activation: options.fusedActivationFunction,
      cellClip: options.cellClip, projectionClip: options.projClip,
      asymmetricQuantizeInputs: options.asymmetricQuantizeInputs)
    step = try UnidirectionalSequence(node: node, op: "LSTM", timeMajor: nil, direction: cell)
  }

  func prepare(_ context: inout PrepareContext) throws { try step.prepare(&context) }
  func eval(_ context: EvalContext) throws { try step.eval(context) }
}

/// BIDIRECTIONAL_SEQUENCE_LSTM (float32 activations): 48 operands (forward and backward weights at
/// ``LSTMOperandPositions/forward`` and ``LSTMOperandPositions/backward``, an optional auxiliary
/// input at 39); see ``BidirectionalSequence`` for the directions and outputs.
final class BidirectionalSequenceLSTMKernel: Kernel {
  private var sequence: BidirectionalSequence<LSTMCell>

  init(node: Node) throws {
    let op = "BIDIRECTIONAL_SEQUENCE_LSTM"
    let options = try FloatOperands.options(of: node, op: op, defaults: BidirectionalSequenceLSTMOptions()) {
      if case .bidirectionalSequenceLSTMOptions(let options) = $0 { options } else { nil }
    }
    try node.expect(inputs: 48, outputs: options.mergeOutputs ? 1 : 2)
    func cell(_ positions: LSTMOperandPositions) throws -> LSTMCell {
      try LSTMCell(
        node: node, positions: positions, op: op, activation: options.fusedActivationFunction,
        cellClip: options.cellClip, projectionClip: options.projClip,
        asymmetricQuantizeInputs: options.asymmetricQuantizeInputs)
    }
    sequence = try BidirectionalSequence(
      node: node, op: op, auxiliaryPosition: 39, usesAuxiliaryWeights: node.optionalInput(41) != nil,
      mergesOutputs: options.mergeOutputs, timeMajor: options.timeMajor, forward: cell(.forward),
      backward: cell(.backward))
  }

  func prepare(_ context: inout PrepareContext) throws { try sequence.prepare(&context) }
  func eval(_ context: EvalContext) throws { try sequence.eval(context) }
}
