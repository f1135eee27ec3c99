import TFLiteFormat
import XCTest

@testable import TFLiteRuntime

final class FusionTests: XCTestCase {
  /// x, LOGISTIC(x) and MUL over them, with the logistic as the MUL's `gateFirst ? first : second` input.
  private func siluGraph(gateFirst: Bool, activation: ActivationFunctionType) -> (nodes: [Node], gate: RuntimeTensor) {
    var random = SeededGenerator(seed: 5)
    // Values around the logistic's cap, extremes and infinities.
    let values = random.floats(311, in: -25...25) + [.greatestFiniteMagnitude, -.greatestFiniteMagnitude, .infinity, -.infinity]
    let x = KernelHarness.floatTensor(0, [1, 5, 7, 9], values)
    let gate = KernelHarness.outputTensor(1)
    let product = KernelHarness.outputTensor(2)
    var options = MulOptions()
    options.fusedActivationFunction = activation
    let logistic = KernelHarness.node("LOGISTIC", [x], gate, .none)
    let multiply = KernelHarness.node("MUL", gateFirst ? [gate, x] : [x, gate], product, .mulOptions(options))
    return ([logistic, multiply], gate)
  }

  /// LOGISTIC feeding only a MUL by its own input is fused, and the fused kernel gives exactly
  /// what the two kernels give one after the other.
  func testLogisticTimesItsInputIsFusedWithIdenticalResults() throws {
    for (gateFirst, activation) in [(false, ActivationFunctionType.none), (true, .relu6)] {
      let (nodes, _) = siluGraph(gateFirst: gateFirst, activation: activation)
      let fusions = OperatorFusion.find(in: nodes, keptTensors: [])
      XCTAssertEqual(fusions.map(\.producer), [0])
      XCTAssertEqual(fusions.map(\.consumer), [1])
      let separate = try KernelHarness.run(nodes[0], threads: 1)
      XCTAssertEqual(nodes[0].outputs[0].shape, separate.shape)
      let expected = try KernelHarness.run(nodes[1], threads: 1)
      let kernel = try XCTUnwrap(fusions.first?.kernel)
      var context = PrepareContext(threadCount: 2)
      try kernel.prepare(&context)
      let output = nodes[1].outputs[0]
      output.allocateOwnedMemory()
      try kernel.eval(EvalContext(threadCount: 2, scratch: nil))
      XCTAssertEqual(output.shape, expected.shape)
      let fused = Array(UnsafeBufferPointer(start: output.pointer(as: Float.self), count: output.elementCount))
      for (index, (value, reference)) in zip(fused, expected.values).enumerated() where value.bitPattern != reference.bitPattern {
        XCTFail("element \(index): fused \(value), separate \(reference) (activation \(activation.name))")
      }
      XCTAssertEqual(fused.count, expected.values.count)
    }
  }

  /// A logistic that is read elsewhere or must stay observable is not fused away.
  func testLogisticWithOtherReadersIsKept() {
    let (nodes, gate) = siluGraph(gateFirst: false, activation: .none)
    XCTAssertTrue(OperatorFusion.find(in: nodes, keptTensors: [gate.index]).isEmpty)
    let reader = KernelHarness.node("ABS", [gate], KernelHarness.outputTensor(3), .none)
    XCTAssertTrue(OperatorFusion.find(in: nodes + [reader], keptTensors: []).isEmpty)
  }
}
