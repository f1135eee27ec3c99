import TFLiteFormat
import XCTest

@testable import TFLiteRuntime

/// Malformed recurrent nodes (hand-made operands) are refused with a descriptive error, never run.
final class RecurrentKernelTests: XCTestCase {
  /// A zeroed FLOAT32 tensor of `shape`; `variable` marks a state tensor.
  private func tensor(_ index: Int, _ shape: [Int], variable: Bool = false, constant: Bool = true) -> RuntimeTensor {
    let tensor = RuntimeTensor(
      index: index, name: "t\(index)", type: .float32, shape: shape, shapeSignature: shape, quantization: nil,
      isVariable: variable, constantData: nil)
    tensor.allocateOwnedMemory()
    tensor.isConstant = constant && !variable
    return tensor
  }

  /// The operands of an RNN with `units` units over `[batch, inputs]`.
  private func rnnOperands(batch: Int = 2, inputs: Int = 3, units: Int = 4, stateVariable: Bool = true) -> [RuntimeTensor?] {
    [
      tensor(0, [batch, inputs], constant: false), tensor(1, [units, inputs]), tensor(2, [units, units]),
      tensor(3, [units]), tensor(4, [batch, units], variable: stateVariable),
    ]
  }

  /// The 24 operands of a UNIDIRECTIONAL_SEQUENCE_LSTM (no CIFG, peephole, projection or layer norm).
  private func lstmOperands(inputShape: [Int] = [2, 5, 3], cells: Int = 4, cellWeightColumns: Int = 3) -> [RuntimeTensor?] {
    let inputs = inputShape.last ?? 0
    var operands: [RuntimeTensor?] = [tensor(0, inputShape, constant: false)]
    operands += (0..<4).map { tensor(1 + $0, [cells, $0 == 2 ? cellWeightColumns : inputs]) }
    operands += (0..<4).map { tensor(5 + $0, [cells, cells]) }
    operands += [nil, nil, nil]
    operands += (0..<4).map { tensor(12 + $0, [cells]) }
    operands += [nil, nil, tensor(18, [2, cells], variable: true), tensor(19, [2, cells], variable: true)]
    return operands + [nil, nil, nil, nil]
  }

  private func node(_ op: String, _ inputs: [RuntimeTensor?], _ options: BuiltinOptions) -> Node {
    KernelHarness.node(op, inputs, KernelHarness.outputTensor(99), options)
  }

  func testRNNRefusesAHiddenStateThatIsNotAVariable() {
    KernelHarness.assertRejects(
      node("RNN", rnnOperands(stateVariable: false), .rnnOptions(RNNOptions(fusedActivationFunction: .tanh))),
      containing: "must be a variable tensor")
  }

  func testRNNRefusesRecurrentWeightsOfTheWrongShape() {
    var operands = rnnOperands()
    operands[2] = tensor(2, [4, 3])
    KernelHarness.assertRejects(
      node("RNN", operands, .rnnOptions(RNNOptions(fusedActivationFunction: .relu))), containing: "recurrent weights")
  }

  func testRNNRefusesAStateForAnotherBatch() {
    var operands = rnnOperands()
    operands[4] = tensor(4, [3, 4], variable: true)
    KernelHarness.assertRejects(
      node("RNN", operands, .rnnOptions(RNNOptions(fusedActivationFunction: .relu))), containing: "hidden state")
  }

  func testSequenceLSTMRefusesGateWeightsOfTheWrongShape() {
    let options = BuiltinOptions.unidirectionalSequenceLSTMOptions(
      UnidirectionalSequenceLSTMOptions(fusedActivationFunction: .tanh))
    KernelHarness.assertRejects(
      node("UNIDIRECTIONAL_SEQUENCE_LSTM", lstmOperands(cellWeightColumns: 5), options), containing: "input-to-gate weights")
  }

  func testSequenceLSTMRefusesAnInputThatIsNotASequence() {
    let options = BuiltinOptions.unidirectionalSequenceLSTMOptions(
      UnidirectionalSequenceLSTMOptions(fusedActivationFunction: .tanh))
    KernelHarness.assertRejects(
      node("UNIDIRECTIONAL_SEQUENCE_LSTM", lstmOperands(inputShape: [2, 3]), options), containing: "rank 3")
  }

  func testLSTMRefusesTheBasicKernelAndNoActivation() {
    var operands = lstmOperands(inputShape: [2, 3])
    operands.removeLast(4)
    KernelHarness.assertRejects(
      node("LSTM", operands, .lstmOptions(LSTMOptions(fusedActivationFunction: .tanh, kernelType: .basic))),
      containing: "BASIC")
    KernelHarness.assertRejects(
      node("LSTM", operands, .lstmOptions(LSTMOptions(fusedActivationFunction: .none))), containing: "activation NONE")
  }

  func testSVDFRefusesARankThatDoesNotDivideTheFilters() {
    let operands: [RuntimeTensor?] = [
      tensor(0, [2, 5], constant: false), tensor(1, [6, 5]), tensor(2, [6, 3]), nil, tensor(4, [2, 18], variable: true),
    ]
    KernelHarness.assertRejects(
      node("SVDF", operands, .svdfOptions(SVDFOptions(rank: 4, fusedActivationFunction: .none))), containing: "rank 4")
    KernelHarness.assertRejects(
      node("SVDF", operands, .svdfOptions(SVDFOptions(rank: 0, fusedActivationFunction: .none))), containing: "positive rank")
  }

  func testHybridWeightsNeedOneScale() {
    var operands = rnnOperands()
    operands[1] = KernelHarness.quantizedTensor(
      1, "w", .int8, [4, 3], [Int8](repeating: 1, count: 12), scales: [0.1, 0.2, 0.3, 0.4], zeroPoints: [0, 0, 0, 0],
      constant: true)
    KernelHarness.assertRejects(
      node("RNN", operands, .rnnOptions(RNNOptions(fusedActivationFunction: .relu))), containing: "one scale")
  }
}
