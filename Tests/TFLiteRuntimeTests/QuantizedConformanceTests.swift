import TFLiteLinearAlgebra
import XCTest

@testable import TFLiteRuntime

/// Runs every quantized TestModels case (int8, uint8, int16x8) made only of operators with
/// quantized kernels here and of type-agnostic data-movement operators, and requires every output
/// element to equal LiteRT's byte for byte.
final class QuantizedConformanceTests: XCTestCase {
  /// Operators whose quantized kernels live in the integer families.
  static let integerOperators: Set<String> = [
    "ABS", "ADD", "AVERAGE_POOL_2D", "BATCH_MATMUL", "CONCATENATION", "CONV_2D", "DEPTHWISE_CONV_2D", "DIV", "ELU",
    "EQUAL", "EXP", "FULLY_CONNECTED", "GELU", "GREATER", "GREATER_EQUAL", "HARD_SWISH", "L2_NORMALIZATION",
    "LEAKY_RELU", "LESS", "LESS_EQUAL", "LOG", "LOGISTIC", "LOG_SOFTMAX", "MAXIMUM", "MAX_POOL_2D", "MEAN", "MINIMUM",
    "MUL", "NOT_EQUAL", "PRELU", "QUANTIZE", "REDUCE_MAX", "REDUCE_MIN", "REDUCE_PROD", "RELU", "RELU6",
    "RELU_0_TO_1", "RELU_N1_TO_1", "RESIZE_BILINEAR", "RSQRT", "SOFTMAX", "SQRT", "SQUARED_DIFFERENCE", "SUB", "SUM",
    "TANH", "TRANSPOSE_CONV",
  ]

  /// Operators with a kernel here that move quantized values without arithmetic (or only compare them).
  static let dataMovementOperators = Set([
    "RESHAPE", "SQUEEZE", "EXPAND_DIMS", "TRANSPOSE", "STRIDED_SLICE", "SLICE", "PAD", "PADV2", "MIRROR_PAD",
    "GATHER", "SPLIT", "SPLIT_V", "PACK", "UNPACK", "TILE", "DEPTH_TO_SPACE", "SPACE_TO_DEPTH", "BATCH_TO_SPACE_ND",
    "SPACE_TO_BATCH_ND", "RESIZE_NEAREST_NEIGHBOR", "DEQUANTIZE", "ARG_MAX", "ARG_MIN", "BROADCAST_TO", "GATHER_ND",
    "REVERSE_V2", "SELECT", "SELECT_V2", "TOPK_V2",
  ]).intersection(OperatorSupport.supportedOperatorNames)

  /// Operators whose results do not depend on the rounding policy.
  static let roundingFreeOperators: Set<String> = dataMovementOperators.union([
    "MAXIMUM", "MINIMUM", "MAX_POOL_2D", "AVERAGE_POOL_2D", "REDUCE_MAX", "REDUCE_MIN", "CONCATENATION",
    "LOGISTIC", "TANH", "GELU", "ELU", "EXP", "LOG", "SQRT", "REDUCE_PROD",
  ])

  /// Every operator the quantized cases here may contain.
  static let covered = integerOperators.union(dataMovementOperators)

  /// True for the quantized cases this test runs.
  static func isCovered(_ entry: TestModelManifest.Entry) -> Bool {
    ["int8", "uint8", "int16x8"].contains(entry.quantization) && entry.opNames.isSubset(of: covered)
  }

  func testQuantizedModelsMatchLiteRTExactly() throws {
    let outcomes = try Conformance.check(Self.isCovered)
    XCTAssertGreaterThan(outcomes.count, 100, "the quantized TestModels batch is smaller than expected")
    Conformance.printOperatorSummary(outcomes, operators: Self.covered, label: "quantized conformance")
  }

  func testQuantizedModelsMatchWithTwoThreads() throws {
    try Conformance.check(Self.isCovered, threadCount: 2)
  }

  /// With generated kernels turned off (the 8-bit GEMM on the Swift kernel and 16-bit panels),
  /// every case still matches LiteRT byte for byte; on (the default, above) the int8 CONV_2D and
  /// FULLY_CONNECTED nodes run the VNNI kernels where this machine has them.
  func testQuantizedModelsMatchWithGeneratedKernelsOff() throws {
    try Conformance.check(Self.isCovered, usesGeneratedKernels: false)
  }

  /// Every int8 and uint8 network of TestModels gives the same output bytes with generated kernels
  /// on and off, on one and two threads. Wherever this machine runs VNNI, the int8 networks must
  /// really take the generated route with them on (and none with them off).
  func testEightBitNetworksGiveIdenticalBytesWithGeneratedKernelsOnAndOff() throws {
    let networks = try TestModelManifest.load().models.filter {
      $0.kind == "network" && ["int8", "uint8"].contains($0.quantization)
    }
    XCTAssertGreaterThanOrEqual(networks.count, 5, "fewer 8-bit networks than expected")
    for entry in networks {
      for threadCount in [1, 2] {
        let on = try Conformance.invoke(entry, options: RunnerOptions(threadCount: threadCount))
        let off = try Conformance.invoke(
          entry, options: RunnerOptions(threadCount: threadCount, usesGeneratedKernels: false))
        for (index, (generated, swift)) in zip(on.primary.outputs, off.primary.outputs).enumerated() {
          let generatedBytes = try XCTUnwrap(generated.data.map { Array(UnsafeRawBufferPointer(start: $0, count: generated.byteCount)) })
          let swiftBytes = try XCTUnwrap(swift.data.map { Array(UnsafeRawBufferPointer(start: $0, count: swift.byteCount)) })
          XCTAssertEqual(generatedBytes, swiftBytes, "\(entry.name) output \(index) threads \(threadCount)")
        }
        let generatedRoutes = on.primary.kernelDescriptions.filter { $0.contains("GEMM, generated AVX") && $0.contains("VNNI") }
        XCTAssertTrue(
          off.primary.kernelDescriptions.allSatisfy { !$0.contains("VNNI") }, "\(entry.name): VNNI with generated kernels off")
        // uint8 networks too: legacy weight zero points take the route with row sums.
        if GeneratedDotProductKernels.preferred != nil {
          XCTAssertFalse(generatedRoutes.isEmpty, "\(entry.name) took no generated 8-bit GEMM route")
        }
      }
    }
  }

  /// LiteRT's outputs come from its default double-rounding build, so under single rounding only
  /// the operators that never rescale by a quantized multiplier must still match; the others are
  /// reported.
  func testSingleRoundingPolicy() throws {
    let entries = try TestModelManifest.load().models.filter(Self.isCovered)
    let outcomes = entries.map { Conformance.run($0, roundingPolicy: .singleRounding) }
    for outcome in outcomes {
      XCTAssertNil(outcome.failure, "\(outcome.entry.name): \(outcome.failure ?? "")")
      if outcome.entry.opNames.isSubset(of: Self.roundingFreeOperators) {
        XCTAssertEqual(outcome.mismatchCount, 0, "\(outcome.entry.name) does not use the rounding policy")
      }
    }
    Conformance.printOperatorSummary(outcomes, operators: Self.covered, label: "single rounding")
  }
}
