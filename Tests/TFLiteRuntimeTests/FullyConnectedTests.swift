import TFLiteFormat
import XCTest

import TFLiteLinearAlgebra
@testable import TFLiteRuntime

final class FullyConnectedTests: XCTestCase {
  /// 2-D and higher-rank inputs, keep_num_dims, optional bias, constant and run-time weights,
  /// activations, batch 1 (the GEMV case) and larger, 1 and 2 threads.
  func testFullyConnectedKernelMatchesReference() throws {
    var random = SeededGenerator(seed: 21)
    let activations: [(ActivationFunctionType, FloatClampRange)] = [
      (.none, .none), (.relu, .relu), (.reluN1To1, .reluMinusOneToOne), (.relu6, .relu6),
    ]
    for trial in 0..<16 {
      let depth = random.int(1...70)
      let units = random.int(1...40)
      let inputShape = [[1, depth], [random.int(2...9), depth], [2, random.int(1...4), depth], [3, 2 * depth]][trial % 4]
      let keepNumDims = trial % 4 == 2 && trial % 8 == 2
      let rows = inputShape.reduce(1, *) / depth
      let (function, range) = activations[trial % 4]
      let constantWeights = trial % 3 != 2
      let input = random.floats(inputShape.reduce(1, *))
      let weights = random.floats(units * depth)
      let bias = trial % 5 == 3 ? nil : random.floats(units)
      let expected = referenceMatrixProduct(
        rows: rows, columns: units, depth: depth, a: { input[$0 * depth + $1] }, b: { weights[$1 * depth + $0] },
        bias: bias, lower: range.lower, upper: range.upper)
      let options = FullyConnectedOptions(fusedActivationFunction: function, keepNumDims: keepNumDims)
      for threads in [1, 2] {
        let node = KernelHarness.node(
          "FULLY_CONNECTED",
          [
            KernelHarness.floatTensor(0, inputShape, input),
            KernelHarness.floatTensor(1, [units, depth], weights, constant: constantWeights),
            bias.map { KernelHarness.floatTensor(2, [units], $0, constant: trial % 2 == 0) },
          ], KernelHarness.outputTensor(3), .fullyConnectedOptions(options))
        let result = try KernelHarness.run(node, threads: threads)
        XCTAssertEqual(result.shape, keepNumDims ? inputShape.dropLast() + [units] : [rows, units])
        assertMatches(result.values, expected, "trial \(trial) input \(inputShape) threads \(threads)")
      }
    }
  }

  func testFullyConnectedRejectsBadOperands() {
    let input = KernelHarness.floatTensor(0, [2, 5], [Float](repeating: 1, count: 10))
    let weights = KernelHarness.floatTensor(1, [3, 4], [Float](repeating: 1, count: 12), constant: true)
    KernelHarness.assertRejects(
      KernelHarness.node("FULLY_CONNECTED", [input, weights], KernelHarness.outputTensor(2), .fullyConnectedOptions(FullyConnectedOptions())),
      containing: "rows of 4")
    let weights5 = KernelHarness.floatTensor(1, [3, 5], [Float](repeating: 1, count: 15), constant: true)
    KernelHarness.assertRejects(
      KernelHarness.node(
        "FULLY_CONNECTED", [input, weights5], KernelHarness.outputTensor(2),
        .fullyConnectedOptions(FullyConnectedOptions(weightsFormat: .shuffled4x16int8))),
      containing: "weights format")
    KernelHarness.assertRejects(
      KernelHarness.node(
        "FULLY_CONNECTED", [KernelHarness.floatTensor(0, [5, 2], [Float](repeating: 1, count: 10)), weights5],
        KernelHarness.outputTensor(2), .fullyConnectedOptions(FullyConnectedOptions(keepNumDims: true))),
      containing: "keep_num_dims")
  }
}
