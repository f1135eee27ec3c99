extension Conformance {
  /// Prints, per operator of `operators` found in the outcomes' models, the cases passing, the
  /// output elements compared, those out of tolerance (all of a case that failed to run) and the
  /// largest error, each line starting with `label`.
  static func printOperatorSummary(_ outcomes: [ConformanceOutcome], operators: Set<String>, label: String) {
    var byOperator: [String: (passed: Int, total: Int, elements: Int, mismatches: Int, maxError: Double)] = [:]
    for outcome in outcomes {
      for name in outcome.entry.opNames.intersection(operators) {
        var row = byOperator[name] ?? (0, 0, 0, 0, 0)
        row.total += 1
        row.passed += outcome.passed ? 1 : 0
        row.elements += outcome.elementCount
        row.mismatches += outcome.failure == nil ? outcome.mismatchCount : outcome.elementCount
        row.maxError = max(row.maxError, outcome.maxAbsoluteError)
        byOperator[name] = row
      }
    }
    for (name, row) in byOperator.sorted(by: { $0.key < $1.key }) {
      print(
        "\(label) \(name): \(row.passed)/\(row.total) cases, \(row.elements) elements, \(row.mismatches) mismatches, max abs error \(row.maxError)")
    }
  }
}
