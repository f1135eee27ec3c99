import XCTest

@testable import TFLiteRuntime

/// Runs every float TestModels case made only of elementwise, activation, softmax,
/// normalization, reduction, comparison and select operators against LiteRT's outputs.
final class ElementwiseConformanceTests: XCTestCase {
  static let operators: Set<String> = [
    "ABS", "ADD", "ADD_N", "ARG_MAX", "ARG_MIN", "CEIL", "COS", "CUMSUM", "DIV", "ELU", "EQUAL", "EXP", "FLOOR",
    "FLOOR_DIV", "FLOOR_MOD", "GELU", "GREATER", "GREATER_EQUAL", "HARD_SWISH", "L2_NORMALIZATION", "LEAKY_RELU",
    "LESS", "LESS_EQUAL", "LOCAL_RESPONSE_NORMALIZATION", "LOG", "LOGICAL_AND", "LOGICAL_NOT", "LOGICAL_OR",
    "LOGISTIC", "LOG_SOFTMAX", "MAXIMUM", "MEAN", "MINIMUM", "MUL", "NEG", "NOT_EQUAL", "POW", "PRELU", "REDUCE_ALL",
    "REDUCE_ANY", "REDUCE_MAX", "REDUCE_MIN", "REDUCE_PROD", "RELU", "RELU6", "RELU_0_TO_1", "RELU_N1_TO_1", "ROUND",
    "RSQRT", "SELECT", "SELECT_V2", "SIGN", "SIN", "SOFTMAX", "SQRT", "SQUARE", "SQUARED_DIFFERENCE", "SUB", "SUM",
    "TANH",
  ]

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
