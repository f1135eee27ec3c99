import XCTest

@testable import TFLiteRuntime

/// Runs every float32 TestModels case made only of the GEMM-based and windowed operators
/// (convolutions, fully connected, batch matmul, pools) against LiteRT's outputs, with 1 and 2 threads.
final class ConvolutionConformanceTests: XCTestCase {
  static let operators: Set<String> = [
    "AVERAGE_POOL_2D", "BATCH_MATMUL", "CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "L2_POOL_2D", "MAX_POOL_2D",
    "TRANSPOSE_CONV",
  ]

  func testFloatModelsMatchLiteRT() throws {
    for threads in [1, 2] {
      let outcomes = try Conformance.check(
        { $0.quantization == "float32" && $0.opNames.isSubset(of: Self.operators) }, threadCount: threads)
      Conformance.printOperatorSummary(outcomes, operators: Self.operators, label: "conformance (\(threads) threads)")
    }
  }

  /// Models where these operators meet others: float16 weights (DEQUANTIZE folded at prepare),
  /// sparse weights (DENSIFY), and the whole small float networks.
  func testMixedFloatModelsMatchLiteRT() throws {
    for threads in [1, 2] {
      let outcomes = try Conformance.check(
        { entry in
          ["float32", "float16_weights"].contains(entry.quantization) && !entry.opNames.isDisjoint(with: Self.operators)
            && !entry.opNames.isSubset(of: Self.operators)
        }, threadCount: threads)
      Conformance.printOperatorSummary(outcomes, operators: Self.operators, label: "conformance (\(threads) threads)")
    }
  }
}
