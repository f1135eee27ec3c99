import Foundation
import XCTest
@testable import TFLiteRuntime

final class SoftmaxTests: XCTestCase {
  func testSoftmaxMatchesDoublePrecisionFormula() {
    var generator = SeededGenerator(seed: 12)
    for (rows, depth, beta) in [(3, 1000, Float(1)), (5, 7, 0.5), (1, 1, 2), (4, 33, 3)] {
      let input = generator.floats(rows * depth, in: -20...20)
      let output: [Float] = filledArray(count: rows * depth) { output in
        for range in chunkRanges(rows, 2) {
          SoftmaxDriver.softmax(input: input, output: output, depth: depth, beta: beta, rows: range)
        }
      }
      for row in 0..<rows {
        let values = input[row * depth..<(row + 1) * depth].map(Double.init)
        let maximum = values.max()!
        let exponentials = values.map { exp(($0 - maximum) * Double(beta)) }
        let sum = exponentials.reduce(0, +)
        for (column, value) in exponentials.enumerated() {
          XCTAssertEqual(Double(output[row * depth + column]), value / sum, accuracy: 1e-6)
        }
      }
    }
  }

  func testLogSoftmaxMatchesDoublePrecisionFormula() {
    var generator = SeededGenerator(seed: 13)
    let (rows, depth) = (6, 129)
    let input = generator.floats(rows * depth, in: -10...10)
    let output: [Float] = filledArray(count: rows * depth) {
      SoftmaxDriver.logSoftmax(input: input, output: $0, depth: depth, rows: 0..<rows)
    }
    for row in 0..<rows {
      let values = input[row * depth..<(row + 1) * depth].map(Double.init)
      let maximum = values.max()!
      let logSum = log(values.map { exp($0 - maximum) }.reduce(0, +))
      for (column, value) in values.enumerated() {
        XCTAssertEqual(Double(output[row * depth + column]), value - maximum - logSum, accuracy: 2e-5)
      }
    }
  }

  func testL2NormalizationMatchesDoublePrecisionFormula() {
    var generator = SeededGenerator(seed: 14)
    let (rows, depth) = (5, 70)
    var input = generator.floats(rows * depth, in: -4...4)
    for column in 0..<depth { input[column] = 0 }  // an all-zero row stays zero
    let output: [Float] = filledArray(count: rows * depth) {
      L2NormalizationDriver.run(input: input, output: $0, depth: depth, rows: 0..<rows)
    }
    for row in 0..<rows {
      let values = input[row * depth..<(row + 1) * depth].map(Double.init)
      let norm = max(values.map { $0 * $0 }.reduce(0, +).squareRoot(), 1e-6)
      for (column, value) in values.enumerated() {
        XCTAssertEqual(Double(output[row * depth + column]), value / norm, accuracy: 1e-6)
      }
    }
  }
}
