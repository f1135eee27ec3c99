import XCTest

@testable import TFLiteRuntime

/// Runs the `more_` TestModels cases (CONV_3D, CONV_3D_TRANSPOSE, bit operations, unsorted
/// segment reductions, DYNAMIC_UPDATE_SLICE, RFFT2D and the other remaining builtin operators)
/// against LiteRT's outputs, with one and two threads.
final class MoreOpsConformanceTests: XCTestCase {
  static let operators: Set<String> = [
    "ATAN2", "BITCAST", "BITWISE_XOR", "BROADCAST_ARGS", "BUCKETIZE", "COMPLEX_ABS", "CONV_3D", "CONV_3D_TRANSPOSE",
    "DILATE", "DYNAMIC_UPDATE_SLICE", "EMBEDDING_LOOKUP_SPARSE", "FAKE_QUANT", "IMAG", "MATRIX_SET_DIAG", "RANK",
    "REAL", "REVERSE_SEQUENCE", "RFFT2D", "RIGHT_SHIFT", "SPARSE_TO_DENSE", "UNSORTED_SEGMENT_MAX",
    "UNSORTED_SEGMENT_MIN", "UNSORTED_SEGMENT_PROD", "UNSORTED_SEGMENT_SUM",
  ]

  private static func isMoreCase(_ entry: TestModelManifest.Entry) -> Bool {
    entry.name.hasPrefix("more_") && entry.opNames.isSubset(of: OperatorSupport.supportedOperatorNames)
  }

  func testModelsMatchLiteRT() throws {
    let outcomes = try Conformance.check(Self.isMoreCase)
    Conformance.printOperatorSummary(outcomes, operators: Self.operators, label: "more conformance")
    let covered = Set(outcomes.flatMap(\.entry.opNames))
    XCTAssertTrue(Self.operators.isSubset(of: covered), "no case for \(Self.operators.subtracting(covered).sorted())")
  }

  func testModelsMatchLiteRTWithTwoThreads() throws {
    try Conformance.check(Self.isMoreCase, threadCount: 2)
  }
}
