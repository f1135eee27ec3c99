import XCTest

@testable import TFLiteRuntime

/// Every dynamic-range ("hybrid") TestModels case — float activations with int8 or int4 weights in
/// FULLY_CONNECTED, CONV_2D, DEPTHWISE_CONV_2D and BATCH_MATMUL, weights behind DEQUANTIZE, and a
/// whole network — against LiteRT's reference kernels.
final class HybridConformanceTests: XCTestCase {
  /// The operators with hybrid kernels.
  static let hybridOperators = Set([
    "BATCH_MATMUL", "CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "TRANSPOSE_CONV",
  ])

  private static func isHybrid(_ entry: TestModelManifest.Entry) -> Bool { entry.quantization == "hybrid" }

  /// The hybrid kernels use LiteRT's integer arithmetic and its float operations in its order, so
  /// the single-operator cases must match exactly, not only within the manifest tolerance.
  func testHybridModelsMatchLiteRT() throws {
    let outcomes = try Conformance.check(Self.isHybrid)
    XCTAssertGreaterThanOrEqual(outcomes.count, 11, "the hybrid TestModels batch is smaller than expected")
    let covered = outcomes.reduce(into: Set<String>()) { $0.formUnion($1.entry.opNames) }
    XCTAssertTrue(
      Self.hybridOperators.isSubset(of: covered), "no hybrid case for \(Self.hybridOperators.subtracting(covered))")
    for outcome in outcomes where outcome.entry.kind == "op" {
      XCTAssertEqual(outcome.maxAbsoluteError, 0, "\(outcome.entry.name) differs from LiteRT")
    }
    Conformance.printOperatorSummary(outcomes, operators: Self.hybridOperators.union(["DEQUANTIZE"]), label: "hybrid")
  }

  func testHybridModelsMatchLiteRTWithTwoThreads() throws {
    try Conformance.check(Self.isHybrid, threadCount: 2)
  }
}
