import Foundation
import XCTest
@testable import TFLiteRuntime

final class ElementwiseBinaryTests: XCTestCase {
  /// Shape pairs covering the driver's paths: flat, scalar on either side, row and column
  /// broadcasts, and random broadcasts up to 6-D.
  static let shapePairs: [([Int], [Int])] = {
    var pairs: [([Int], [Int])] = [
      ([1003], [1003]), ([], [37]), ([2, 19], [1]), ([3, 50], [50]), ([4, 1], [1, 33]),
      ([2, 3, 1, 17], [3, 5, 1]), ([1, 8, 8, 3], [1, 8, 8, 1]), ([0, 4], [4]),
    ]
    var generator = SeededGenerator(seed: 3)
    for rank in 1...6 {
      for _ in 0..<3 {
        pairs.append(generator.broadcastPair(output: generator.shape(rank: rank, sizes: 1...6)))
      }
    }
    return pairs
  }()

  /// Runs `operation` on every shape pair (in 1 and 3 chunks) and compares with `expected`.
  func check<Operation: BinaryLanewiseOperation>(
    _ operation: Operation, values: (inout SeededGenerator, Int) -> [Operation.Operand],
    divisors: ((inout SeededGenerator, Int) -> [Operation.Operand])? = nil,
    _ expected: (Operation.Operand, Operation.Operand) -> Operation.Result,
    file: StaticString = #filePath, line: UInt = #line
  ) throws where Operation.Result: Equatable {
    var generator = SeededGenerator(seed: 1)
    for (lhsShape, rhsShape) in Self.shapePairs {
      let lhs = values(&generator, max(lhsShape.reduce(1, *), 1))
      let rhsCount = max(rhsShape.reduce(1, *), 1)
      let rhs = divisors.map { $0(&generator, rhsCount) } ?? values(&generator, rhsCount)
      for chunks in [1, 3] {
        let (output, shape) = try runBinary(operation, lhs, lhsShape, rhs, rhsShape, chunks: chunks)
        let reference = scalarBroadcast(lhs, lhsShape, rhs, rhsShape, outputShape: shape, expected)
        XCTAssertEqual(Array(output.prefix(reference.count)), reference, "shapes \(lhsShape) \(rhsShape)", file: file, line: line)
      }
    }
  }

  func floats(_ generator: inout SeededGenerator, _ count: Int) -> [Float] { generator.floats(count, in: -4...4) }
  func nonZeroFloats(_ generator: inout SeededGenerator, _ count: Int) -> [Float] {
    generator.floats(count, in: 0.25...3).map { Bool.random(using: &generator) ? $0 : -$0 }
  }
  func int32s(_ generator: inout SeededGenerator, _ count: Int) -> [Int32] { generator.integers(count, in: -1000...1000) }
  func nonZeroInt32s(_ generator: inout SeededGenerator, _ count: Int) -> [Int32] {
    generator.integers(count, in: 1...17).map { Bool.random(using: &generator) ? $0 : -$0 }
  }

  func testFloatArithmetic() throws {
    let none = Float.unboundedRange
    try check(ArithmeticOperation<Float, Addition>(activation: none), values: floats) { $0 + $1 }
    try check(ArithmeticOperation<Float, Subtraction>(activation: none), values: floats) { $0 - $1 }
    try check(ArithmeticOperation<Float, Multiplication>(activation: none), values: floats) { $0 * $1 }
    try check(ArithmeticOperation<Float, Division>(activation: none), values: floats, divisors: nonZeroFloats) { $0 / $1 }
    try check(ArithmeticOperation<Float, SquaredDifference>(activation: none), values: floats) { ($0 - $1) * ($0 - $1) }
    try check(ArithmeticOperation<Float, Maximum>(activation: none), values: floats) { $0 > $1 ? $0 : $1 }
    try check(ArithmeticOperation<Float, Minimum>(activation: none), values: floats) { $0 < $1 ? $0 : $1 }
  }

  func testFloatFloorDivisionModuloAndPower() throws {
    let none = Float.unboundedRange
    try check(ArithmeticOperation<Float, FloorDivision>(activation: none), values: floats, divisors: nonZeroFloats) {
      Float((Double($0) / Double($1)).rounded(.down))
    }
    try check(ArithmeticOperation<Float, FloorModulo>(activation: none), values: floats, divisors: nonZeroFloats) {
      let remainder = fmodf($0, $1)
      return remainder != 0 && (remainder < 0) != ($1 < 0) ? remainder + $1 : remainder
    }
    try check(
      ArithmeticOperation<Float, Power>(activation: none),
      values: { generator, count in generator.floats(count, in: 0.1...3) }
    ) { powf($0, $1) }
  }

  func testFusedActivationClamps() throws {
    try check(ArithmeticOperation<Float, Addition>(activation: ActivationRange(lower: 0, upper: 6)), values: floats) {
      min(max($0 + $1, 0), 6)
    }
    try check(ArithmeticOperation<Float, Multiplication>(activation: ActivationRange(lower: -1, upper: 1)), values: floats) {
      min(max($0 * $1, -1), 1)
    }
    try check(ArithmeticOperation<Int32, Subtraction>(activation: ActivationRange(lower: 0, upper: .max)), values: int32s) {
      max($0 - $1, 0)
    }
  }

  func testIntegerArithmeticWraps() throws {
    let full: (inout SeededGenerator, Int) -> [Int32] = { generator, count in generator.integers(count, in: .min ... .max) }
    try check(ArithmeticOperation<Int32, Addition>(activation: Int32.unboundedRange), values: full) { $0 &+ $1 }
    try check(ArithmeticOperation<Int32, Subtraction>(activation: Int32.unboundedRange), values: full) { $0 &- $1 }
    try check(ArithmeticOperation<Int32, Multiplication>(activation: Int32.unboundedRange), values: full) { $0 &* $1 }
    let full64: (inout SeededGenerator, Int) -> [Int64] = { generator, count in generator.integers(count, in: .min ... .max) }
    try check(ArithmeticOperation<Int64, Multiplication>(activation: Int64.unboundedRange), values: full64) { $0 &* $1 }
    try check(ArithmeticOperation<Int64, Maximum>(activation: Int64.unboundedRange), values: full64) { max($0, $1) }
  }

  func testIntegerDivisionRoundsAsTFLite() throws {
    let none = Int32.unboundedRange
    try check(ArithmeticOperation<Int32, Division>(activation: none), values: int32s, divisors: nonZeroInt32s) { $0 / $1 }
    try check(ArithmeticOperation<Int32, FloorDivision>(activation: none), values: int32s, divisors: nonZeroInt32s) {
      Int32((Double($0) / Double($1)).rounded(.down))
    }
    try check(ArithmeticOperation<Int32, FloorModulo>(activation: none), values: int32s, divisors: nonZeroInt32s) {
      $0 - $1 * Int32((Double($0) / Double($1)).rounded(.down))
    }
    try check(
      ArithmeticOperation<Int32, Power>(activation: none),
      values: { generator, count in generator.integers(count, in: -5...5) },
      divisors: { generator, count in generator.integers(count, in: 0...7) }
    ) { base, exponent in (0..<exponent).reduce(1) { product, _ in product * base } }
  }

  func testIntegerEdgeCasesDoNotTrap() throws {
    let (quotient, _) = try runBinary(
      ArithmeticOperation<Int32, FloorDivision>(activation: Int32.unboundedRange), [Int32.min, 7], [2], [-1, 1], [2])
    XCTAssertEqual(quotient, [Int32.min, 7])
    let (remainder, _) = try runBinary(
      ArithmeticOperation<Int64, FloorModulo>(activation: Int64.unboundedRange), [Int64.min, -7], [2], [-1, 3], [2])
    XCTAssertEqual(remainder, [0, 2])
  }

  func testPreluBroadcastsAlpha() throws {
    try check(PreluOperation(), values: floats) { $0 >= 0 ? $0 : $0 * $1 }
  }
}
