import TFLiteFormat
import XCTest

@testable import TFLiteRuntime

/// Bad quantization parameters make the quantized kernels throw at prepare, naming the tensor.
final class QuantizationValidationTests: XCTestCase {
  /// A tensor of `type` and `shape` with the given quantization (nil for none), zero-filled.
  private func tensor(
    _ index: Int, _ name: String, _ type: ElementType, _ shape: [Int], scales: [Float]? = [0.1], zeroPoints: [Int] = [0],
    axis: Int = 0
  ) -> RuntimeTensor {
    KernelHarness.quantizedTensor(index, name, type, shape, [Int8](), scales: scales, zeroPoints: zeroPoints, axis: axis)
  }

  /// Builds and prepares the registered kernel for a one-output node; returns the error text.
  private func preparationError(_ opName: String, _ inputs: [RuntimeTensor], _ output: RuntimeTensor, _ options: BuiltinOptions)
    -> String?
  {
    let node = KernelHarness.node(opName, inputs, output, options)
    do {
      let kernel = try KernelDispatch.makeKernel(for: node)
      var context = PrepareContext(threadCount: 1)
      try kernel.prepare(&context)
      return nil
    } catch {
      return "\(error)"
    }
  }

  /// Asserts that preparing the node throws an error mentioning every fragment.
  private func assertRejected(
    _ opName: String, _ inputs: [RuntimeTensor], _ output: RuntimeTensor, _ options: BuiltinOptions = .none,
    mentioning fragments: [String], file: StaticString = #filePath, line: UInt = #line
  ) {
    guard let error = preparationError(opName, inputs, output, options) else {
      XCTFail("\(opName) accepted the bad parameters", file: file, line: line)
      return
    }
    for fragment in fragments {
      XCTAssertTrue(error.contains(fragment), "'\(error)' does not mention '\(fragment)'", file: file, line: line)
    }
  }

  private let add = BuiltinOptions.addOptions(AddOptions())

  func testMissingScaleIsRejected() {
    assertRejected(
      "ADD", [tensor(0, "lhs", .int8, [4], scales: nil), tensor(1, "rhs", .int8, [4])], tensor(2, "sum", .int8, [4]),
      add, mentioning: ["'lhs'", "no quantization scale"])
  }

  func testZeroAndNonFiniteScalesAreRejected() {
    assertRejected(
      "MUL", [tensor(0, "a", .uint8, [4]), tensor(1, "b", .uint8, [4], scales: [0])], tensor(2, "product", .uint8, [4]),
      .mulOptions(MulOptions()), mentioning: ["'b'", "scale 0.0"])
    assertRejected(
      "LOGISTIC", [tensor(0, "x", .int8, [4], scales: [.nan])], tensor(1, "y", .int8, [4], scales: [Float(1) / 256]),
      mentioning: ["'x'", "scale nan"])
  }

  func testZeroPointOutsideTheTypeIsRejected() {
    assertRejected(
      "RELU", [tensor(0, "x", .int8, [4], zeroPoints: [200])], tensor(1, "y", .int8, [4]),
      mentioning: ["'x'", "zero point 200", "INT8"])
    assertRejected(
      "QUANTIZE", [tensor(0, "x", .float32, [4], scales: nil)], tensor(1, "q", .uint8, [4], zeroPoints: [-1]),
      mentioning: ["'q'", "zero point -1"])
  }

  func testPerAxisParametersAreChecked() {
    assertRejected(
      "QUANTIZE", [tensor(0, "x", .float32, [2, 3], scales: nil)],
      tensor(1, "q", .int8, [2, 3], scales: [0.1, 0.2, 0.3], zeroPoints: [0], axis: 2),
      mentioning: ["'q'", "axis 2"])
    assertRejected(
      "DEQUANTIZE", [tensor(0, "w", .int8, [2, 3], scales: [0.1, 0.2], zeroPoints: [0], axis: 1)],
      tensor(1, "x", .float32, [2, 3], scales: nil), mentioning: ["'w'", "2 scales", "3 entries of axis 1"])
    assertRejected(
      "DEQUANTIZE", [tensor(0, "w", .int8, [3], scales: [0.1, 0.2, 0.3], zeroPoints: [0, 0])],
      tensor(1, "x", .float32, [3], scales: nil), mentioning: ["'w'", "3 scales but 2 zero points"])
    assertRejected(
      "ADD", [tensor(0, "lhs", .int8, [2], scales: [0.1, 0.2], zeroPoints: [0]), tensor(1, "rhs", .int8, [2])],
      tensor(2, "sum", .int8, [2]), add, mentioning: ["'lhs'", "per axis"])
  }

  func testSixteenBitZeroPointsMustBeZero() {
    assertRejected(
      "ADD", [tensor(0, "lhs", .int16, [4]), tensor(1, "rhs", .int16, [4], zeroPoints: [5])],
      tensor(2, "sum", .int16, [4]), add, mentioning: ["'rhs'", "zero point 0"])
  }

  func testOutputScalesTheKernelsRequire() {
    assertRejected(
      "LOGISTIC", [tensor(0, "x", .int8, [4])], tensor(1, "y", .int8, [4], scales: [0.01]),
      mentioning: ["LOGISTIC", "0.00390625"])
    assertRejected(
      "SOFTMAX", [tensor(0, "x", .int8, [4])], tensor(1, "p", .int8, [4], scales: [Float(1) / 256], zeroPoints: [0]),
      .softmaxOptions(SoftmaxOptions()), mentioning: ["SOFTMAX", "zero point -128"])
  }

  func testValidParametersAreAccepted() {
    XCTAssertNil(
      preparationError(
        "ADD", [tensor(0, "lhs", .int8, [4], zeroPoints: [-128]), tensor(1, "rhs", .int8, [4], zeroPoints: [127])],
        tensor(2, "sum", .int8, [4]), add))
    XCTAssertNil(
      preparationError(
        "QUANTIZE", [tensor(0, "x", .float32, [2, 3], scales: nil)],
        tensor(1, "q", .int8, [2, 3], scales: [0.1, 0.2, 0.3], zeroPoints: [0], axis: 1), .none))
  }
}

/// The parameters and input values the less common quantized kernels (DIV, ABS, EXP, LOG, RSQRT,
/// SQRT, ELU, L2_NORMALIZATION, the comparisons, REDUCE_PROD) refuse.
extension QuantizationValidationTests {
  /// Builds, prepares and evaluates the registered kernel for a one-output node whose inputs hold
  /// raw `values` (bytes of int8 inputs); returns the error text of the evaluation.
  private func evaluationError(
    _ opName: String, _ inputs: [(tensor: RuntimeTensor, values: [Int8])], _ output: RuntimeTensor,
    _ options: BuiltinOptions = .none
  ) -> String? {
    for (tensor, values) in inputs {
      values.withUnsafeBytes { bytes in
        if let source = bytes.baseAddress { tensor.data?.copyMemory(from: source, byteCount: bytes.count) }
      }
    }
    let node = KernelHarness.node(opName, inputs.map(\.tensor), output, options)
    do {
      let kernel = try KernelDispatch.makeKernel(for: node)
      var context = PrepareContext(threadCount: 1)
      try kernel.prepare(&context)
      output.allocateOwnedMemory()
      let scratch = UnsafeMutableRawPointer.allocate(byteCount: max(context.scratchByteCount, 1), alignment: 64)
      defer { scratch.deallocate() }
      try kernel.eval(EvalContext(threadCount: 1, scratch: scratch))
      return nil
    } catch {
      return "\(error)"
    }
  }

  func testDivisionRejectsBadParametersAndZeroDivisors() {
    let div = BuiltinOptions.divOptions(DivOptions())
    assertRejected(
      "DIV", [tensor(0, "x", .int8, [4]), tensor(1, "y", .int8, [4], scales: nil)], tensor(2, "q", .int8, [4]), div,
      mentioning: ["'y'", "no quantization scale"])
    assertRejected(
      "DIV", [tensor(0, "x", .uint8, [4]), tensor(1, "y", .uint8, [4])], tensor(2, "q", .uint8, [4], scales: [-1]),
      div, mentioning: ["'q'", "scale -1.0"])
    let inputs = [
      (tensor(0, "x", .int8, [4]), [Int8](arrayLiteral: 1, 2, 3, 4)),
      (tensor(1, "divisor", .int8, [4], zeroPoints: [3]), [Int8](arrayLiteral: 1, 2, 3, 4)),
    ]
    let error = evaluationError("DIV", inputs, tensor(2, "q", .int8, [4]), div)
    XCTAssertTrue(error?.contains("'divisor'") == true && error?.contains("zero point 3") == true, "\(error ?? "no error")")
    let valid = [(tensor(0, "x", .int8, [2]), [Int8](arrayLiteral: 1, 2)), (tensor(1, "y", .int8, [2]), [Int8](arrayLiteral: 5, -5))]
    XCTAssertNil(evaluationError("DIV", valid, tensor(2, "q", .int8, [2]), div))
  }

  func testSquareRootsRejectValuesBelowTheZeroPoint() {
    for op in ["RSQRT", "SQRT"] {
      let inputs = [(tensor(0, "x", .int8, [3], zeroPoints: [-10]), [Int8](arrayLiteral: -10, 20, -11))]
      let error = evaluationError(op, inputs, tensor(1, "y", .int8, [3]))
      XCTAssertTrue(error?.contains("'x'") == true && error?.contains("below the zero point -10") == true, "\(op): \(error ?? "none")")
      let valid = [(tensor(0, "x", .int8, [2], zeroPoints: [-10]), [Int8](arrayLiteral: -10, 100))]
      XCTAssertNil(evaluationError(op, valid, tensor(1, "y", .int8, [2])), op)
    }
  }

  func testUnaryKernelsCheckTheirOperands() {
    assertRejected("ABS", [tensor(0, "x", .int8, [4], scales: [0])], tensor(1, "y", .int8, [4]), mentioning: ["'x'", "scale 0.0"])
    for op in ["ABS", "EXP", "LOG", "RSQRT", "SQRT"] {
      assertRejected(
        op, [tensor(0, "x", .int16, [4])], tensor(1, "y", .int16, [4], zeroPoints: [3]), mentioning: ["'y'", "zero point 0"])
    }
    assertRejected("ELU", [tensor(0, "x", .int8, [4])], tensor(1, "y", .int8, [4], zeroPoints: [-129]), mentioning: ["'y'", "-129"])
    assertRejected("EXP", [tensor(0, "x", .uint8, [4])], tensor(1, "y", .uint8, [4]), mentioning: ["EXP", "UINT8"])
  }

  func testL2NormalizationNeedsItsOutputScaleAndZeroPoint() {
    let l2 = BuiltinOptions.l2NormOptions(L2NormOptions())
    assertRejected(
      "L2_NORMALIZATION", [tensor(0, "x", .int8, [2, 4])], tensor(1, "unit", .int8, [2, 4], scales: [0.01]), l2,
      mentioning: ["'unit'", "1/128"])
    assertRejected(
      "L2_NORMALIZATION", [tensor(0, "x", .uint8, [2, 4])], tensor(1, "unit", .uint8, [2, 4], scales: [Float(1) / 128]), l2,
      mentioning: ["'unit'", "zero point 128"])
    XCTAssertNil(
      preparationError(
        "L2_NORMALIZATION", [tensor(0, "x", .uint8, [2, 4], zeroPoints: [255])],
        tensor(1, "unit", .uint8, [2, 4], scales: [Float(1) / 128], zeroPoints: [128]), l2))
  }

  func testComparisonsAndProductsCheckTheirOperands() {
    assertRejected(
      "LESS", [tensor(0, "a", .int8, [2], scales: [0.1, 0.2], zeroPoints: [0]), tensor(1, "b", .int8, [2])],
      tensor(2, "c", .bool, [2], scales: nil), mentioning: ["'a'", "per axis"])
    assertRejected(
      "EQUAL", [tensor(0, "a", .int16, [2]), tensor(1, "b", .int16, [2], scales: [.infinity])],
      tensor(2, "c", .bool, [2], scales: nil), mentioning: ["'b'", "scale inf"])
    let axis = KernelHarness.int32Tensor(1, [1])
    let reducer = BuiltinOptions.reducerOptions(ReducerOptions())
    assertRejected(
      "REDUCE_PROD", [tensor(0, "x", .int16, [2, 3], zeroPoints: [1]), axis], tensor(2, "p", .int16, [2]), reducer,
      mentioning: ["'x'", "zero point 0"])
    assertRejected(
      "REDUCE_PROD", [tensor(0, "x", .int8, [2, 3]), axis], tensor(2, "p", .int8, [2], scales: nil), reducer,
      mentioning: ["'p'", "no quantization scale"])
  }
}
