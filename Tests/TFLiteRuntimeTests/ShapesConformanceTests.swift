import XCTest

@testable import TFLiteRuntime

/// Every TestModels case made only of data-movement, shape and conversion operators, against LiteRT.
final class ShapesConformanceTests: XCTestCase {
  /// The operators of the shape family.
  static let operators: Set<String> = [
    "RESHAPE", "SQUEEZE", "EXPAND_DIMS", "TRANSPOSE", "CONCATENATION", "PACK", "UNPACK", "SPLIT", "SPLIT_V", "SLICE",
    "STRIDED_SLICE", "GATHER", "GATHER_ND", "PAD", "PADV2", "MIRROR_PAD", "TILE", "BROADCAST_TO", "RESIZE_BILINEAR",
    "RESIZE_NEAREST_NEIGHBOR", "DEPTH_TO_SPACE", "SPACE_TO_DEPTH", "SHAPE", "CAST", "FILL", "ZEROS_LIKE", "DEQUANTIZE",
    "DENSIFY",
  ]

  private func isShapeCase(_ entry: TestModelManifest.Entry) -> Bool {
    // Integer cases (requantizing CONCATENATION, integer RESIZE_BILINEAR) belong to the quantized suite.
    entry.kind == "op" && ["float32", "float16_weights"].contains(entry.quantization)
      && entry.opNames.isSubset(of: Self.operators)
  }

  /// Includes the cases whose output shapes depend on input values (FILL with run-time dims,
  /// STRIDED_SLICE with run-time begin): the runtime prepares those nodes while running.
  func testEveryShapeOperatorModelMatchesLiteRT() throws {
    let outcomes = try Conformance.check { self.isShapeCase($0) }
    var byOperator: [String: (cases: Int, maxError: Double)] = [:]
    for outcome in outcomes {
      for op in outcome.entry.opNames {
        let current = byOperator[op] ?? (0, 0)
        byOperator[op] = (current.cases + 1, max(current.maxError, outcome.maxAbsoluteError))
      }
    }
    for (op, summary) in byOperator.sorted(by: { $0.key < $1.key }) {
      print("\(op): \(summary.cases) cases, max abs error \(summary.maxError)")
    }
  }

  func testThreadedRunsMatchLiteRTToo() throws {
    try Conformance.check({ self.isShapeCase($0) }, threadCount: 2)
  }
}
