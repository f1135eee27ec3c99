import XCTest

@testable import TFLiteRuntime

/// Every recurrent TestModels case (`seq_` names: LSTM, UNIDIRECTIONAL_SEQUENCE_LSTM,
/// BIDIRECTIONAL_SEQUENCE_LSTM, RNN, UNIDIRECTIONAL_SEQUENCE_RNN, BIDIRECTIONAL_SEQUENCE_RNN, SVDF,
/// and Keras recurrent layers converted to WHILE loops) against LiteRT's reference outputs.
final class RecurrentConformanceTests: XCTestCase {
  /// The operators of the recurrent families.
  static let operators: Set<String> = [KernelRegistry.lstm, KernelRegistry.rnn, KernelRegistry.svdf]
    .reduce(into: []) { names, family in names.formUnion(family.keys) }

  private static func isRecurrent(_ entry: TestModelManifest.Entry) -> Bool { entry.name.hasPrefix("seq_") }

  func testFloatRecurrentModelsMatchLiteRT() throws {
    let outcomes = try Conformance.check { Self.isRecurrent($0) && $0.quantization == "float32" }
    XCTAssertGreaterThanOrEqual(outcomes.count, 30, "the recurrent TestModels batch is smaller than expected")
    let covered = outcomes.reduce(into: Set<String>()) { $0.formUnion($1.entry.opNames) }
    XCTAssertTrue(Self.operators.isSubset(of: covered), "no float case for \(Self.operators.subtracting(covered))")
    Conformance.printOperatorSummary(outcomes, operators: Self.operators.union(["WHILE"]), label: "recurrent float")
  }

  func testRecurrentModelsMatchLiteRTWithTwoThreads() throws {
    try Conformance.check({ Self.isRecurrent($0) }, threadCount: 2)
  }
}
