import Foundation

/// `1.5`, `-0.000123`, `1.2e+07`: a number in at most 6 significant digits.
func formatNumber(_ value: Double) -> String {
  if value.isNaN { return "nan" }
  if value.isInfinite { return value > 0 ? "inf" : "-inf" }
  return String(format: "%.6g", value)
}

/// The statistics `tflite run` prints for one output.
struct ValueSummary {
  /// Smallest value.
  var minimum: Double
  /// Largest value.
  var maximum: Double
  /// Mean of the values.
  var mean: Double
  /// The first few values.
  var firstValues: [Double]
  /// The five largest values with their indices, best first, for a classifier-like `[1, N]` or
  /// `[N]` output; empty otherwise.
  var topFive: [(index: Int, value: Double)]

  /// Summarises `values` of an array of `shape`; nil when there are no values.
  init?(_ values: [Double], shape: [Int], firstCount: Int = 8) {
    guard let first = values.first else { return nil }
    var minimum = first
    var maximum = first
    var sum = 0.0
    for value in values {
      minimum = Swift.min(minimum, value)
      maximum = Swift.max(maximum, value)
      sum += value
    }
    self.minimum = minimum
    self.maximum = maximum
    mean = sum / Double(values.count)
    firstValues = Array(values.prefix(firstCount))
    let isVector = shape.count == 1 || (shape.count == 2 && shape[0] == 1)
    topFive = isVector && values.count > 1 ? topIndices(values, count: 5) : []
  }

  /// `min 0 max 0.93 mean 0.1`, then the first values, then the top five, one per line, indented.
  func lines(labels: [String] = []) -> [String] {
    var lines = [
      "min \(formatNumber(minimum))  max \(formatNumber(maximum))  mean \(formatNumber(mean))",
      "first: " + firstValues.map(formatNumber).joined(separator: " "),
    ]
    if !topFive.isEmpty {
      lines.append("top-5: " + topFive.map { "\(label(for: $0.index, in: labels)) \(formatNumber($0.value))" }.joined(separator: ", "))
    }
    return lines
  }
}

/// The `count` largest values with their indices, largest first (the lower index first on ties).
func topIndices(_ values: [Double], count: Int) -> [(index: Int, value: Double)] {
  let ranked = values.enumerated().sorted { left, right in
    left.element != right.element ? left.element > right.element : left.offset < right.offset
  }
  return ranked.prefix(count).map { ($0.offset, $0.element) }
}

/// `#3` or `#3 "three"` when `labels` has an entry for the index.
func label(for index: Int, in labels: [String]) -> String {
  index < labels.count ? "#\(index) \"\(labels[index])\"" : "#\(index)"
}
