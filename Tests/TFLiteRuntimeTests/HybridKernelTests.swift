import TFLiteFormat
import XCTest

@testable import TFLiteRuntime

/// The hybrid kernels (float activations, int8 weights) refuse bad weights at prepare with an error
/// naming the weight tensor. Their results are checked against LiteRT in `HybridConformanceTests`.
final class HybridKernelTests: XCTestCase {
  /// A zero-filled INT8 weight tensor named `name`; `scales` nil means no quantization.
  private func weights(
    _ name: String, _ shape: [Int], scales: [Float]? = [0.05], zeroPoints: [Int] = [0], axis: Int = 0,
    constant: Bool = true
  ) -> RuntimeTensor {
    let tensor = RuntimeTensor(
      index: 1, name: name, type: .int8, shape: shape, shapeSignature: shape,
      quantization: scales.map { Quantization(scales: $0, zeroPoints: zeroPoints, axis: axis) }, isVariable: false,
      constantData: nil)
    tensor.allocateOwnedMemory()
    tensor.isConstant = constant
    return tensor
  }

  /// A float input of `shape` (zeros).
  private func input(_ shape: [Int]) -> RuntimeTensor {
    KernelHarness.floatTensor(0, shape, [Float](repeating: 0, count: shape.reduce(1, *)))
  }

  private let fullyConnected = BuiltinOptions.fullyConnectedOptions(FullyConnectedOptions())
  private let conv = BuiltinOptions.conv2DOptions(Conv2DOptions(padding: .valid, strideW: 1, strideH: 1))
  private let depthwise = BuiltinOptions.depthwiseConv2DOptions(
    DepthwiseConv2DOptions(padding: .valid, strideW: 1, strideH: 1, depthMultiplier: 1))

  func testMissingWeightScaleIsRejected() {
    let node = KernelHarness.node(
      "FULLY_CONNECTED", [input([2, 8]), weights("dense/kernel", [4, 8], scales: nil)], KernelHarness.outputTensor(2),
      fullyConnected)
    KernelHarness.assertRejects(node, containing: "'dense/kernel'")
    KernelHarness.assertRejects(node, containing: "no quantization scale")
  }

  func testZeroWeightScaleIsRejected() {
    let node = KernelHarness.node(
      "CONV_2D", [input([1, 3, 3, 2]), weights("conv/filter", [2, 1, 1, 2], scales: [0.1, 0], zeroPoints: [0, 0])],
      KernelHarness.outputTensor(2), conv)
    KernelHarness.assertRejects(node, containing: "'conv/filter'")
    KernelHarness.assertRejects(node, containing: "scale 0.0")
  }

  func testScaleCountMustMatchTheChannels() {
    let tooFew = KernelHarness.node(
      "DEPTHWISE_CONV_2D",
      [input([1, 3, 3, 4]), weights("dw/filter", [1, 3, 3, 4], scales: [0.1, 0.2, 0.3], zeroPoints: [0], axis: 3)],
      KernelHarness.outputTensor(2), depthwise)
    KernelHarness.assertRejects(tooFew, containing: "'dw/filter'")
    KernelHarness.assertRejects(tooFew, containing: "3 scales")
    // One scale per input channel instead of per output channel.
    let wrongAxis = KernelHarness.node(
      "CONV_2D",
      [input([1, 2, 2, 3]), weights("conv/filter", [2, 1, 1, 3], scales: [0.1, 0.2, 0.3], zeroPoints: [0], axis: 3)],
      KernelHarness.outputTensor(2), conv)
    KernelHarness.assertRejects(wrongAxis, containing: "'conv/filter'")
    KernelHarness.assertRejects(wrongAxis, containing: "3 scales along axis 3 for 2 output channels")
  }

  func testNonConstantWeightsAreRejected() {
    let node = KernelHarness.node(
      "BATCH_MATMUL", [input([2, 3, 8]), weights("matmul/rhs", [2, 8, 5], constant: false)],
      KernelHarness.outputTensor(2), .batchMatMulOptions(BatchMatMulOptions()))
    KernelHarness.assertRejects(node, containing: "'matmul/rhs'")
    KernelHarness.assertRejects(node, containing: "not constant")
  }

  func testNonzeroWeightZeroPointIsRejected() {
    let node = KernelHarness.node(
      "FULLY_CONNECTED", [input([1, 8]), weights("dense/kernel", [4, 8], zeroPoints: [3])],
      KernelHarness.outputTensor(2), fullyConnected)
    KernelHarness.assertRejects(node, containing: "'dense/kernel'")
    KernelHarness.assertRejects(node, containing: "nonzero zero point")
  }

  func testFloatBiasIsRequired() {
    let bias = RuntimeTensor(
      index: 3, name: "dense/bias", type: .int32, shape: [4], shapeSignature: [4], quantization: nil,
      isVariable: false, constantData: nil)
    let node = KernelHarness.node(
      "FULLY_CONNECTED", [input([1, 8]), weights("dense/kernel", [4, 8]), bias], KernelHarness.outputTensor(2),
      fullyConnected)
    KernelHarness.assertRejects(node, containing: "'dense/bias'")
  }
}
