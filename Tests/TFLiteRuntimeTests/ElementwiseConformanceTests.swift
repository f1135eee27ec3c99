import XCTest

@testable import TFLiteRuntime

/// Runs every float TestModels case made only of elementwise, activation, softmax,
/// normalization, reduction, comparison and select operators against LiteRT's outputs.
final class ElementwiseConformanceTests: XCTestCase {
  static let operators: Set<String> = [
    KernelRegistry.elementwiseBinary, KernelRegistry.elementwiseUnary, KernelRegistry.activations,
    KernelRegistry.softmax, KernelRegistry.normalization, KernelRegistry.reductions,
    KernelRegistry.comparisons, KernelRegistry.select,
  ].reduce(into: []) { names, family in names.formUnion(family.keys) }

  func testFloatModelsMatchLiteRT() throws {
    let outcomes = try Conformance.check { entry in
      entry.quantization == "float32" && entry.opNames.isSubset(of: Self.operators)
    }
    // Per-operator summary: cases passing and the largest error.
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
  }
}
