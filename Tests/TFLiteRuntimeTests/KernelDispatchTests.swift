import TFLiteFormat
import XCTest

@testable import TFLiteRuntime

/// Lowering's kernel choice: one typed dispatch per operator picks the float, integer or hybrid
/// kernel from the operand types, and `OperatorSupport` answers from the same dispatch.
final class KernelDispatchTests: XCTestCase {
  private let options = BuiltinOptions.conv2DOptions(Conv2DOptions(padding: .valid, strideW: 1, strideH: 1))

  /// A CONV_2D node of a [1, 2, 2, 1] input and one 1×1 filter.
  private func convolution(input: RuntimeTensor, filter: RuntimeTensor, bias: RuntimeTensor?, output: RuntimeTensor) -> Node {
    KernelHarness.node("CONV_2D", [input, filter, bias], output, options)
  }

  func testFloatActivationsAndWeightsGetTheFloatKernel() throws {
    let node = convolution(
      input: KernelHarness.floatTensor(0, [1, 2, 2, 1], [1, 2, 3, 4]),
      filter: KernelHarness.floatTensor(1, [1, 1, 1, 1], [2], constant: true), bias: nil,
      output: KernelHarness.outputTensor(2))
    XCTAssertTrue(try KernelDispatch.makeKernel(for: node) is Conv2DKernel)
  }

  func testFloatActivationsWithInt8WeightsGetTheHybridKernel() throws {
    let node = convolution(
      input: KernelHarness.floatTensor(0, [1, 2, 2, 1], [1, 2, 3, 4]),
      filter: KernelHarness.quantizedTensor(1, "w", .int8, [1, 1, 1, 1], [Int8(3)], scales: [0.5], zeroPoints: [0], constant: true),
      bias: nil, output: KernelHarness.outputTensor(2))
    XCTAssertTrue(try KernelDispatch.makeKernel(for: node) is HybridConv2DKernel)
  }

  func testQuantizedActivationsGetTheIntegerKernel() throws {
    let node = convolution(
      input: KernelHarness.quantizedTensor(0, "x", .int8, [1, 2, 2, 1], [Int8](), scales: [0.1], zeroPoints: [0]),
      filter: KernelHarness.quantizedTensor(1, "w", .int8, [1, 1, 1, 1], [Int8(3)], scales: [0.5], zeroPoints: [0], constant: true),
      bias: KernelHarness.quantizedTensor(2, "b", .int32, [1], [Int32(0)], scales: [0.05], zeroPoints: [0], constant: true),
      output: KernelHarness.quantizedTensor(3, "y", .int8, [1, 2, 2, 1], [Int8](), scales: [0.2], zeroPoints: [0]))
    XCTAssertTrue(try KernelDispatch.makeKernel(for: node) is IntegerConv2DKernel)
  }

  /// TFLite's 16x8 scheme: INT16 activations count as quantized only with quantization parameters.
  func testArithmeticFollowsTheActivationTypeAndItsQuantization() {
    let quantized16 = KernelHarness.quantizedTensor(0, "x", .int16, [2], [Int16](), scales: [0.1], zeroPoints: [0])
    let plain16 = KernelHarness.quantizedTensor(0, "x", .int16, [2], [Int16](), scales: nil, zeroPoints: [])
    let plain32 = KernelHarness.quantizedTensor(0, "x", .int32, [2], [Int32](), scales: nil, zeroPoints: [])
    XCTAssertEqual(OperandArithmetic(activation: quantized16, output: nil), .quantized)
    XCTAssertEqual(OperandArithmetic(activation: plain16, output: nil), .plain)
    XCTAssertEqual(OperandArithmetic(activation: plain16, output: quantized16), .quantized)
    XCTAssertEqual(OperandArithmetic(activation: plain32, output: nil), .plain)
    XCTAssertEqual(OperandArithmetic(activation: KernelHarness.floatTensor(0, [2], [0, 0]), output: nil), .plain)
  }

  func testSupportIsAnsweredFromTheDispatch() {
    XCTAssertTrue(OperatorSupport.isSupported(builtinCode: BuiltinOperator.conv2d.rawValue, customCode: nil))
    XCTAssertTrue(OperatorSupport.isSupported(builtinCode: BuiltinOperator.custom.rawValue, customCode: "TFLite_Detection_PostProcess"))
    XCTAssertFalse(OperatorSupport.isSupported(builtinCode: BuiltinOperator.custom.rawValue, customCode: "NoSuchOperator"))
    XCTAssertFalse(OperatorSupport.isSupported(builtinCode: BuiltinOperator.hashtableLookup.rawValue, customCode: nil))
    let names = OperatorSupport.supportedOperatorNames
    XCTAssertTrue(names.contains("CONV_2D") && names.contains("MaxUnpooling2D"))
    XCTAssertFalse(names.contains("CUSTOM"))
  }

  /// With no reference kernel written yet, `.reference` runs every operator on its optimized kernel,
  /// so the quantized convolution cases stay bit-exact with LiteRT.
  func testReferenceKernelSetRunsTheQuantizedConvolutionCasesExactly() throws {
    let outcomes = try Conformance.check({ $0.quantization == "int8" && $0.opNames == ["CONV_2D"] }, kernels: .reference)
    for outcome in outcomes { XCTAssertEqual(outcome.maxAbsoluteError, 0, outcome.entry.name) }
  }
}
