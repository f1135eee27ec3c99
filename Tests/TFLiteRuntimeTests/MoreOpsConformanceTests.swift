import XCTest

@testable import TFLiteRuntime

/// Runs the `more_` TestModels cases (CONV_3D, CONV_3D_TRANSPOSE, bit operations, unsorted
/// segment reductions, DYNAMIC_UPDATE_SLICE, RFFT2D and the other remaining builtin operators)
/// against LiteRT's outputs, with one and two threads.
final class MoreOpsConformanceTests: XCTestCase {
  static let operators: Set<String> = [
    KernelRegistry.convolution3D, KernelRegistry.bitwise, KernelRegistry.unsortedSegment, KernelRegistry.shapeQueries,
    KernelRegistry.dynamicUpdateSlice, KernelRegistry.reverseSequence, KernelRegistry.matrixSetDiag,
    KernelRegistry.dilate, KernelRegistry.bitcast, KernelRegistry.bucketize, KernelRegistry.sparseToDense,
    KernelRegistry.fakeQuant, KernelRegistry.fourierTransform, KernelRegistry.embeddingLookupSparse,
  ].reduce(into: []) { names, family in names.formUnion(family.keys) }

  private static func isMoreCase(_ entry: TestModelManifest.Entry) -> Bool {
    entry.name.hasPrefix("more_") && entry.opNames.isSubset(of: KernelRegistry.supportedOperators)
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
