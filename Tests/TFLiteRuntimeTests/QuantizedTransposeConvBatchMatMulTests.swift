import TFLiteFormat
import XCTest

@testable import TFLiteRuntime

/// The integer TRANSPOSE_CONV and BATCH_MATMUL kernels reject bad operands at prepare with an error
/// naming the problem, and give the same results whether BATCH_MATMUL's right operand is a constant
/// (widened once at prepare) or computed at run time. (Their results are checked against LiteRT by
/// `QuantizedConformanceTests`.)
final class QuantizedTransposeConvBatchMatMulTests: XCTestCase {
  /// A tensor of `type` holding the raw `values`, quantized with `scales` and `zeroPoints`.
  private func tensor<Value: FixedWidthInteger>(
    _ index: Int, _ name: String, _ type: ElementType, _ shape: [Int], _ values: [Value], scales: [Float]? = [0.05],
    zeroPoints: [Int] = [0], constant: Bool = false
  ) -> RuntimeTensor {
    KernelHarness.quantizedTensor(
      index, name, type, shape, values, scales: scales, zeroPoints: zeroPoints, constant: constant)
  }

  /// Constant int8 TRANSPOSE_CONV weights `[4,3,3,3]` named `w`, quantized along axis 0.
  private func weights(scales: [Float], zeroPoints: [Int]) -> RuntimeTensor {
    tensor(1, "w", .int8, [4, 3, 3, 3], ramp(108, as: Int8.self), scales: scales, zeroPoints: zeroPoints, constant: true)
  }

  /// `count` raw values cycling through a small signed range.
  private func ramp<Value: FixedWidthInteger>(_ count: Int, as type: Value.Type) -> [Value] {
    (0..<count).map { Value(truncatingIfNeeded: ($0 * 7) % 23 - 11) }
  }

  // MARK: - TRANSPOSE_CONV

  /// The operands of an int8 TRANSPOSE_CONV: input `[1,2,2,3]`, four output channels with
  /// per-channel weights `[4,3,3,3]` and an int32 bias, stride 2, SAME padding, output `[1,4,4,4]`.
  private struct TransposeConvOperands {
    var outputShape: RuntimeTensor
    var weights: RuntimeTensor
    var input: RuntimeTensor
    var bias: RuntimeTensor?
    var output: RuntimeTensor
    var options = TransposeConvOptions(padding: .same, strideW: 2, strideH: 2)

    var node: Node {
      KernelHarness.node(
        "TRANSPOSE_CONV", [outputShape, weights, input, bias], output, .transposeConvOptions(options))
    }
  }

  private func transposeConv() -> TransposeConvOperands {
    TransposeConvOperands(
      outputShape: KernelHarness.int32Tensor(0, [1, 4, 4, 4]),
      weights: weights(scales: [0.01, 0.02, 0.03, 0.04], zeroPoints: [0, 0, 0, 0]),
      input: tensor(2, "x", .int8, [1, 2, 2, 3], ramp(12, as: Int8.self), scales: [0.02], zeroPoints: [-1]),
      bias: tensor(3, "b", .int32, [4], [Int32](repeating: 40, count: 4), scales: nil, constant: true),
      output: tensor(4, "y", .int8, [1, 4, 4, 4], [Int8](repeating: 0, count: 64), scales: [0.05], zeroPoints: [3]))
  }

  /// The same node with 16-bit activations and an int64 bias.
  private func sixteenBitTransposeConv() -> TransposeConvOperands {
    var operands = transposeConv()
    operands.input = tensor(2, "x", .int16, [1, 2, 2, 3], ramp(12, as: Int16.self), scales: [0.001])
    operands.bias = tensor(3, "b", .int64, [4], [Int64](repeating: 40, count: 4), scales: nil, constant: true)
    operands.output = tensor(4, "y", .int16, [1, 4, 4, 4], [Int16](repeating: 0, count: 64), scales: [0.002])
    operands.options.quantizedBiasType = .int64
    return operands
  }

  func testTransposeConvAcceptsValidOperands() throws {
    XCTAssertEqual(try KernelHarness.run(transposeConv().node, threads: 1, as: Int8.self).shape, [1, 4, 4, 4])
    XCTAssertEqual(try KernelHarness.run(sixteenBitTransposeConv().node, threads: 2, as: Int16.self).shape, [1, 4, 4, 4])
  }

  func testTransposeConvRejectsMismatchedWeightScaleCount() {
    var operands = transposeConv()
    operands.weights = weights(scales: [0.01, 0.02, 0.03], zeroPoints: [0, 0, 0])
    KernelHarness.assertRejects(operands.node, containing: "'w'")
    KernelHarness.assertRejects(operands.node, containing: "3 scales")
  }

  func testTransposeConvRejectsWrongBiasSize() {
    var operands = transposeConv()
    operands.bias = tensor(3, "b", .int32, [3], [Int32](repeating: 1, count: 3), scales: nil, constant: true)
    KernelHarness.assertRejects(operands.node, containing: "bias has 3 elements, expected 4")
  }

  func testTransposeConvRejectsAsymmetricSignedWeights() {
    var operands = transposeConv()
    operands.weights = weights(scales: [0.01, 0.02, 0.03, 0.04], zeroPoints: [0, 2, 0, 0])
    KernelHarness.assertRejects(operands.node, containing: "'w' must have zero point 0, got 2")
  }

  func testTransposeConvRejectsSixteenBitZeroPoints() {
    var operands = sixteenBitTransposeConv()
    operands.output = tensor(
      4, "y", .int16, [1, 4, 4, 4], [Int16](repeating: 0, count: 64), scales: [0.002], zeroPoints: [5])
    KernelHarness.assertRejects(operands.node, containing: "'y'")
    KernelHarness.assertRejects(operands.node, containing: "must have zero point 0, got 5")
  }

  func testTransposeConvRejectsBiasOfTheWrongType() {
    var eightBit = transposeConv()
    eightBit.bias = tensor(3, "b", .int64, [4], [Int64](repeating: 1, count: 4), scales: nil, constant: true)
    KernelHarness.assertRejects(eightBit.node, containing: "INT64 bias on INT8 input")
    var sixteenBit = sixteenBitTransposeConv()
    sixteenBit.bias = tensor(3, "b", .int32, [4], [Int32](repeating: 1, count: 4), scales: nil, constant: true)
    KernelHarness.assertRejects(sixteenBit.node, containing: "'b' is INT32 but quantized_bias_type is INT64")
  }

  func testTransposeConvRejectsOutputShapeThatDoesNotFitTheInput() {
    var operands = transposeConv()
    operands.outputShape = KernelHarness.int32Tensor(0, [1, 7, 7, 4])
    KernelHarness.assertRejects(operands.node, containing: "does not come from input [1, 2, 2, 3]")
  }

  func testTransposeConvRejectsUnquantizedOutput() {
    var operands = transposeConv()
    operands.output = tensor(4, "y", .int8, [1, 4, 4, 4], [Int8](repeating: 0, count: 64), scales: nil)
    KernelHarness.assertRejects(operands.node, containing: "'y'")
    KernelHarness.assertRejects(operands.node, containing: "no quantization scale")
  }

  // MARK: - BATCH_MATMUL

  /// An int8 BATCH_MATMUL node: lhs `[2,3,4]` times rhs `[5,4]` stored transposed (adj_y), so
  /// the right operand broadcasts over the batch.
  private func batchMatMul(rhs: RuntimeTensor? = nil, lhs: RuntimeTensor? = nil, adjY: Bool = true) -> Node {
    let left = lhs ?? tensor(0, "a", .int8, [2, 3, 4], ramp(24, as: Int8.self), scales: [0.02], zeroPoints: [-1])
    let right = rhs ?? tensor(1, "b", .int8, [5, 4], ramp(20, as: Int8.self), scales: [0.03], zeroPoints: [4])
    let output = tensor(2, "c", .int8, [2, 3, 5], [Int8](repeating: 0, count: 30), scales: [0.01], zeroPoints: [-2])
    return KernelHarness.node(
      "BATCH_MATMUL", [left, right], output, .batchMatMulOptions(BatchMatMulOptions(adjX: false, adjY: adjY)))
  }

  func testBatchMatMulConstantRightOperandMatchesRunTimeOne() throws {
    let runTime = try KernelHarness.run(batchMatMul(), threads: 1, as: Int8.self)
    let constantRight = tensor(
      1, "b", .int8, [5, 4], ramp(20, as: Int8.self), scales: [0.03], zeroPoints: [4], constant: true)
    let constant = try KernelHarness.run(batchMatMul(rhs: constantRight), threads: 2, as: Int8.self)
    XCTAssertEqual(runTime.shape, [2, 3, 5])
    XCTAssertEqual(constant.shape, runTime.shape)
    XCTAssertEqual(constant.values, runTime.values)
    XCTAssertGreaterThan(Set(runTime.values).count, 5, "the products should not all clamp to one value")
  }

  func testBatchMatMulRejectsPerAxisOperand() {
    let perAxis = tensor(
      1, "b", .int8, [5, 4], ramp(20, as: Int8.self), scales: [0.1, 0.2, 0.3, 0.4, 0.5], zeroPoints: [0])
    KernelHarness.assertRejects(batchMatMul(rhs: perAxis), containing: "'b'")
    KernelHarness.assertRejects(batchMatMul(rhs: perAxis), containing: "per axis")
  }

  func testBatchMatMulRejectsSixteenBitZeroPoint() {
    let left = tensor(0, "a", .int16, [3, 4], ramp(12, as: Int16.self), scales: [0.001], zeroPoints: [0])
    let right = tensor(1, "b", .int16, [4, 2], ramp(8, as: Int16.self), scales: [0.001], zeroPoints: [3])
    let output = tensor(2, "c", .int16, [3, 2], [Int16](repeating: 0, count: 6), scales: [0.001])
    let node = KernelHarness.node("BATCH_MATMUL", [left, right], output, .batchMatMulOptions(BatchMatMulOptions()))
    KernelHarness.assertRejects(node, containing: "'b'")
    KernelHarness.assertRejects(node, containing: "must have zero point 0, got 3")
  }

  func testBatchMatMulRejectsMixedOperandTypes() {
    let right = tensor(1, "b", .int16, [5, 4], ramp(20, as: Int16.self), scales: [0.001])
    KernelHarness.assertRejects(batchMatMul(rhs: right), containing: "INT8 × INT16 → INT8")
  }

  func testBatchMatMulRejectsMismatchedInnerDimensions() {
    KernelHarness.assertRejects(batchMatMul(adjY: false), containing: "inner dimensions differ")
  }

  func testBatchMatMulRejectsZeroScale() {
    let left = tensor(0, "a", .int8, [2, 3, 4], ramp(24, as: Int8.self), scales: [0], zeroPoints: [0])
    KernelHarness.assertRejects(batchMatMul(lhs: left), containing: "'a'")
    KernelHarness.assertRejects(batchMatMul(lhs: left), containing: "scale 0.0")
  }
}
