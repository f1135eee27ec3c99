import XCTest

@testable import TFLiteRuntime

/// Runs every TestModels case of the extra operators (SPACE_TO_BATCH_ND, BATCH_TO_SPACE_ND,
/// REVERSE_V2, ONE_HOT, RANGE, TOPK_V2, TFLite_Detection_PostProcess, NON_MAX_SUPPRESSION_V4/V5,
/// WHERE, UNIQUE, EMBEDDING_LOOKUP, MATRIX_DIAG, SEGMENT_SUM) against LiteRT's outputs: the models made of them alone (float and integer), and
/// the models where they meet operators of other families.
final class ExtraOpsConformanceTests: XCTestCase {
  static let operators: Set<String> = [
    "BATCH_TO_SPACE_ND", "EMBEDDING_LOOKUP", "MATRIX_DIAG", "NON_MAX_SUPPRESSION_V4", "NON_MAX_SUPPRESSION_V5",
    "ONE_HOT", "RANGE", "REVERSE_V2", "SEGMENT_SUM", "SPACE_TO_BATCH_ND", "TFLite_Detection_PostProcess", "TOPK_V2",
    "UNIQUE", "WHERE",
  ]

  /// Models made only of the extra operators.
  private func isAlone(_ entry: TestModelManifest.Entry) -> Bool {
    entry.opNames.isSubset(of: Self.operators)
  }

  /// Models mixing extra operators with operators of other families the runtime has.
  private func isMixed(_ entry: TestModelManifest.Entry) -> Bool {
    !entry.opNames.isSubset(of: Self.operators) && !entry.opNames.isDisjoint(with: Self.operators)
      && entry.opNames.allSatisfy { Conformance.supportedOperators.contains($0) }
  }

  /// Prints cases passing and the largest error per extra operator.
  private func summarize(_ outcomes: [ConformanceOutcome], _ label: String) {
    Conformance.printOperatorSummary(outcomes, operators: Self.operators, label: "conformance \(label)")
  }

  func testFloatModelsMatchLiteRT() throws {
    let outcomes = try Conformance.check { self.isAlone($0) && $0.quantization == "float32" }
    summarize(outcomes, "float")
    XCTAssertEqual(Set(outcomes.flatMap(\.entry.opNames)), Self.operators, "some extra operator has no float case")
  }

  func testIntegerModelsMatchLiteRT() throws {
    let outcomes = try Conformance.check { self.isAlone($0) && $0.quantization != "float32" }
    summarize(outcomes, "integer")
    XCTAssertTrue(outcomes.contains { $0.entry.quantization == "uint8" }, "no uint8 detector head among the cases")
  }

  func testModelsMixingOtherFamiliesMatchLiteRT() throws {
    let outcomes = try Conformance.check { self.isMixed($0) }
    summarize(outcomes, "mixed")
    XCTAssertTrue(outcomes.contains { $0.entry.kind == "network" }, "no whole detector among the cases")
    XCTAssertTrue(
      outcomes.contains { $0.entry.opNames.isSuperset(of: ["SHAPE", "RANGE"]) }, "no RANGE over a SHAPE among the cases")
  }

  func testThreadedRunsMatchLiteRTToo() throws {
    try Conformance.check({ self.isAlone($0) || self.isMixed($0) }, threadCount: 2)
  }

  func testValueSizedOutputsAreComputedWhileRunning() throws {
    // Outputs sized by values only known once the inputs are set, and the nodes after them.
    let valueSized: Set<String> = ["RANGE", "WHERE", "UNIQUE", "NON_MAX_SUPPRESSION_V5", "SEGMENT_SUM"]
    let outcomes = try Conformance.check { entry in
      !entry.opNames.isDisjoint(with: valueSized) && (self.isAlone(entry) || self.isMixed(entry))
    }
    XCTAssertTrue(outcomes.contains { $0.entry.name == "range_f32_int32" })
    XCTAssertTrue(outcomes.contains { $0.entry.opNames.isSuperset(of: ["WHERE", "GATHER_ND"]) })
  }
}
