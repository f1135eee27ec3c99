import XCTest

@testable import TFLiteRuntime

/// Runs every float TestModels case made only of the extra operators (ADD_N, CUMSUM,
/// SPACE_TO_BATCH_ND, BATCH_TO_SPACE_ND, REVERSE_V2, ONE_HOT, RANGE, TOPK_V2,
/// LOCAL_RESPONSE_NORMALIZATION, SIGN, TFLite_Detection_PostProcess) against LiteRT's outputs.
final class ExtraOpsConformanceTests: XCTestCase {
  static let operators: Set<String> = [
    KernelRegistry.accumulation, KernelRegistry.spaceBatch, KernelRegistry.reverse, KernelRegistry.oneHot,
    KernelRegistry.range, KernelRegistry.topK, KernelRegistry.localResponseNormalization, KernelRegistry.sign,
    KernelRegistry.detectionPostProcess,
  ].reduce(into: []) { names, family in names.formUnion(family.keys) }

  /// Cases whose inputs are all model inputs sized by the caller, so a value-sized output (RANGE
  /// of run-time start and limit) cannot be known at allocation: the runtime must say so.
  static let valueSizedOutputs: Set<String> = ["range_f32_int32"]

  private func isExtraCase(_ entry: TestModelManifest.Entry) -> Bool {
    entry.quantization == "float32" && entry.opNames.isSubset(of: Self.operators)
  }

  /// Detector models: the post-processing op fed by float32 or uint8 tensors, alone or after a
  /// small convolutional box predictor made of operators other families run.
  private func isDetectionCase(_ entry: TestModelManifest.Entry) -> Bool {
    entry.opNames.contains("TFLite_Detection_PostProcess")
      && entry.opNames.allSatisfy { !KernelRegistry.kernels(for: $0).isEmpty }
  }

  func testDetectionModelsMatchLiteRT() throws {
    let outcomes = try Conformance.check { self.isDetectionCase($0) }
    XCTAssertTrue(outcomes.contains { $0.entry.kind == "network" }, "no whole detector among the cases")
    XCTAssertTrue(outcomes.contains { $0.entry.quantization == "uint8" }, "no uint8 detector head among the cases")
  }

  private func check(threadCount: Int) throws -> [ConformanceOutcome] {
    try Conformance.check({ self.isExtraCase($0) && !Self.valueSizedOutputs.contains($0.name) }, threadCount: threadCount)
  }

  func testFloatModelsMatchLiteRT() throws {
    let outcomes = try check(threadCount: 1)
    var byOperator: [String: (passed: Int, total: Int, maxError: Double)] = [:]
    for outcome in outcomes {
      for name in outcome.entry.opNames {
        var row = byOperator[name] ?? (0, 0, 0)
        row.total += 1
        row.passed += outcome.passed ? 1 : 0
        row.maxError = max(row.maxError, outcome.maxAbsoluteError)
        byOperator[name] = row
      }
    }
    for (name, row) in byOperator.sorted(by: { $0.key < $1.key }) {
      print("conformance \(name): \(row.passed)/\(row.total) cases, max abs error \(row.maxError)")
    }
    XCTAssertTrue(byOperator.keys.count >= 9, "expected cases for at least 9 operators, got \(byOperator.keys.sorted())")
  }

  func testThreadedRunsMatchLiteRTToo() throws {
    try check(threadCount: 2)
  }

  func testRangeOfRunTimeValuesIsReportedAsDynamic() throws {
    let entries = try TestModelManifest.load().models.filter { Self.valueSizedOutputs.contains($0.name) }
    XCTAssertEqual(entries.count, Self.valueSizedOutputs.count)
    for entry in entries {
      let outcome = Conformance.run(entry)
      XCTAssertTrue(outcome.failure?.contains("dynamic output shape") ?? false, "\(entry.name): \(outcome.failure ?? "ran")")
    }
  }
}
