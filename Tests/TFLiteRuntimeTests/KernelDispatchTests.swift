import TFLiteFormat
import TFLiteLinearAlgebra
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

  /// `.reference` builds the reference kernel alone: it holds no optimized kernel (so nothing packs
  /// its weights), asks for no scratch memory, sets the output's shape in `prepare` and computes a
  /// SAME CONV_2D worked out by hand in `eval`.
  func testReferenceKernelHoldsNoOptimizedKernel() throws {
    let output = KernelHarness.outputTensor(3)
    let node = KernelHarness.node(
      "CONV_2D",
      [
        KernelHarness.floatTensor(0, [1, 2, 2, 1], [1, 2, 3, 4]),
        KernelHarness.floatTensor(1, [1, 2, 2, 1], [1, 10, 100, 1000], constant: true),
        KernelHarness.floatTensor(2, [1], [0.5], constant: true),
      ], output, .conv2DOptions(Conv2DOptions(padding: .same, strideW: 1, strideH: 1)))
    let kernel = try KernelDispatch.makeKernel(for: node, set: .reference)
    XCTAssertTrue(kernel is ReferenceAdapterKernel)
    XCTAssertFalse(
      Mirror(reflecting: kernel).children.contains { $0.value is any Kernel }, "the reference kernel holds another kernel")
    var context = PrepareContext(threadCount: 1)
    try kernel.prepare(&context)
    XCTAssertEqual(output.shape, [1, 2, 2, 1])
    XCTAssertEqual(context.scratchByteCount, 0)
    output.allocateOwnedMemory()
    try kernel.eval(EvalContext(threadCount: 1, scratch: nil))
    // SAME pads one row and one column after the data: 1·1 + 2·10 + 3·100 + 4·1000 + 0.5, ...
    XCTAssertEqual(
      Array(UnsafeBufferPointer(start: output.pointer(as: Float.self), count: 4)), [4321.5, 402.5, 43.5, 4.5])
  }

  /// The whole TestModels networks (`networks/`: MobileNet, EfficientNet and U-Net minis, int8, uint8 and
  /// float) run with `.reference` match LiteRT: bit for bit when quantized, within the manifest's
  /// tolerance for float; in each the reference kernels compute at least one node.
  func testReferenceKernelSetMatchesLiteRTOnWholeNetworks() throws {
    let isNetwork: (TestModelManifest.Entry) -> Bool = {
      $0.kind == "network" && $0.file.hasPrefix("networks/")
        && ["int8", "uint8", "float32"].contains($0.quantization)
    }
    let outcomes = try Conformance.check(isNetwork, kernels: .reference)
    XCTAssertGreaterThanOrEqual(outcomes.filter { $0.entry.quantization != "float32" }.count, 4)
    for outcome in outcomes {
      let model = try TFLiteModel(
        contentsOfFile: TestModelManifest.directory.appendingPathComponent(outcome.entry.file).path)
      let kinds = try ModelRunner(model: model, options: RunnerOptions(kernels: .reference)).primary.kernelTypeNames
      XCTAssertTrue(kinds.contains("ReferenceAdapterKernel"), "\(outcome.entry.name) ran no reference kernel")
    }
  }

  /// `.reference` builds ``ReferenceAdapterKernel`` for a covered node and the optimized kernel otherwise.
  func testReferenceKernelSetSelectsTheReferenceKernels() throws {
    let entries = try TestModelManifest.load().models.filter { $0.kind == "op" && $0.opNames.count == 1 }
    var checked = (reference: 0, optimized: 0)
    for entry in entries where ["CONV_2D", "GATHER"].contains(entry.ops[0].op) && entry.quantization == "float32" {
      let model = try TFLiteModel(contentsOfFile: TestModelManifest.directory.appendingPathComponent(entry.file).path)
      let referenceKinds = try ModelRunner(model: model, options: RunnerOptions(kernels: .reference)).primary.kernelTypeNames
      let optimizedKinds = try ModelRunner(model: model, options: RunnerOptions()).primary.kernelTypeNames
      XCTAssertFalse(optimizedKinds.contains("ReferenceAdapterKernel"), entry.name)
      if entry.ops[0].op == "CONV_2D" {
        XCTAssertEqual(referenceKinds, ["ReferenceAdapterKernel"], entry.name)
        checked.reference += 1
      } else {
        XCTAssertEqual(referenceKinds, optimizedKinds, entry.name)
        checked.optimized += 1
      }
    }
    XCTAssertGreaterThan(checked.reference, 0)
    XCTAssertGreaterThan(checked.optimized, 0)
  }

  /// `kernelDescriptions` names the route each kernel chose and the ISA its GEMM runs on: the
  /// generated kernels unless the runner turns them off, the depthwise route for a grouped
  /// convolution of one channel per group, and the integer GEMM's route (generated VNNI or the
  /// Swift kernel on 16-bit panels) for an int8 node.
  func testKernelDescriptionsNameTheRouteAndInstructionSet() throws {
    func descriptions(_ file: String, usesGeneratedKernels: Bool = true) throws -> [String] {
      let model = try TFLiteModel(contentsOfFile: TestModelManifest.directory.appendingPathComponent(file).path)
      let executor = try ModelRunner(model: model, options: RunnerOptions(usesGeneratedKernels: usesGeneratedKernels)).primary
      try executor.allocateTensors()
      return executor.kernelDescriptions
    }
    let swift = KernelDescription.swiftLevel
    let generated = GeneratedKernelISA.supported.map { "generated \($0)" } ?? swift
    XCTAssertEqual(try descriptions("ops/conv2d_f32_1x1.tflite"), ["float Conv2DKernel: GEMM, \(generated)"])
    XCTAssertEqual(
      try descriptions("ops/conv2d_f32_1x1.tflite", usesGeneratedKernels: false), ["float Conv2DKernel: GEMM, \(swift)"])
    XCTAssertEqual(
      try descriptions("ops/conv2d_f32_grouped_depthwise_k3_s2.tflite"), ["float Conv2DKernel: depthwise route, \(swift)"])
    let integerGenerated = GeneratedDotProductKernels.preferred.map { "generated \($0.isa)" }
    let integerSwift = "16-bit weight panels, \(swift)"
    XCTAssertEqual(
      try descriptions("quant/conv2d_int8_1x1.tflite"),
      ["integer IntegerConv2DKernel: int8 GEMM, \(integerGenerated ?? integerSwift)"])
    XCTAssertEqual(
      try descriptions("quant/conv2d_int8_1x1.tflite", usesGeneratedKernels: false),
      ["integer IntegerConv2DKernel: int8 GEMM, \(integerSwift)"])
  }

  /// The generic kernel classes are built through factories generic over their innermost type
  /// (which keeps the runtime's conformance scans out of loading): each operator still gets the
  /// class its operand types call for. EfficientNet mini runs MUL, ADD, HARD_SWISH, MEAN and
  /// SOFTMAX through them as float and as int8, and LOGISTIC as int8 (float LOGISTIC has its own
  /// `LogisticKernel`).
  func testGenericKernelFactoriesBuildTheOperatorsKernelClasses() throws {
    func kernelTypes(_ file: String) throws -> Set<String> {
      let model = try TFLiteModel(contentsOfFile: TestModelManifest.directory.appendingPathComponent(file).path)
      return Set(try ModelRunner(model: model, options: RunnerOptions()).primary.kernelTypeNames)
    }
    let float = try kernelTypes("networks/efficientnet_mini_float.tflite")
    for expected in [
      "LogisticKernel", "UnaryKernel<FloatFunctionDefinition<HardSwish>>",
      "BinaryKernel<ArithmeticDefinition<Multiplication>>", "BinaryKernel<ArithmeticDefinition<Addition>>",
      "ReductionKernel<MeanDefinition>", "LastAxisKernel<SoftmaxDefinition>",
    ] {
      XCTAssertTrue(float.contains(expected), "\(expected) missing from \(float.sorted())")
    }
    let integer = try kernelTypes("networks/efficientnet_mini_int8.tflite")
    for expected in [
      "IntegerUnaryKernel<IntegerSigmoidDefinition<QuantizedLogistic>>", "IntegerUnaryKernel<IntegerHardSwishDefinition>",
      "IntegerBinaryKernel<IntegerMultiplyDefinition>", "IntegerBinaryKernel<IntegerAddSubtractDefinition<QuantizedAddition>>",
      "IntegerReductionKernel<QuantizedMean>", "IntegerSoftmaxKernel",
    ] {
      XCTAssertTrue(integer.contains(expected), "\(expected) missing from \(integer.sorted())")
    }
  }
}
