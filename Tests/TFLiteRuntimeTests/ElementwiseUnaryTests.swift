import Foundation
import XCTest
@testable import TFLiteRuntime

/// Distance in units in the last place between two finite floats of the same sign.
func ulpDistance(_ a: Float, _ b: Float) -> Int {
  if a == b { return 0 }
  return abs(Int(Int32(bitPattern: a.bitPattern)) - Int(Int32(bitPattern: b.bitPattern)))
}

/// Runs a float unary operation and returns the largest absolute difference from `expected`.
func largestError<Operation: UnaryLanewiseOperation>(
  _ operation: Operation, _ input: [Float], _ expected: (Float) -> Float
) -> Float where Operation.Operand == Float, Operation.Result == Float {
  let output = runUnary(operation, input, chunks: 3)
  return zip(input, output).map { abs($1 - expected($0)) }.max() ?? 0
}

final class ElementwiseUnaryTests: XCTestCase {
  /// A dense sweep plus the values where implementations usually break.
  static let sweep: [Float] = stride(from: Float(-12), through: 12, by: 0.0037).map { $0 }
    + [0, -0.0, 0.5, -0.5, 1.5, 2.5, -2.5, 1e-8, -1e-8, 30, -30, 100, -100]

  func testVectorExpIsWithinTwoUlpOfLibm() {
    let input = stride(from: Float(-87), through: 88.7, by: 0.000_71).map { $0 }
    let output = runUnary(FloatFunction<Exponential>(), input)
    let worst = zip(input, output).map { ulpDistance($1, expf($0)) }.max() ?? 0
    XCTAssertLessThanOrEqual(worst, 2)
  }

  func testVectorExpLimits() {
    let input: [Float] = [89, 100, .infinity, -88, -103, -104, -200, -.infinity, .nan]
    let output = runUnary(FloatFunction<Exponential>(), input)
    XCTAssertEqual(Array(output[0..<3]), [.infinity, .infinity, .infinity])
    for index in 3..<8 { XCTAssertLessThan(abs(output[index] - expf(input[index])), 1e-37) }
    XCTAssertTrue(output[8].isNaN)
  }

  func testTanhAndLogisticMatchLibmClosely() {
    let input = Self.sweep
    XCTAssertLessThan(largestError(FloatFunction<HyperbolicTangent>(), input) { tanhf($0) }, 3e-7)
    XCTAssertLessThan(largestError(FloatFunction<Logistic>(), input) { 1 / (1 + expf(-$0)) }, 3e-7)
    let tiny = runUnary(FloatFunction<HyperbolicTangent>(), [1e-20, -1e-20, -0.0])
    XCTAssertEqual(tiny[0], 1e-20)
    XCTAssertEqual(tiny[1], -1e-20)
    XCTAssertEqual(tiny[2].sign, .minus)
  }

  func testExactFunctionsMatchScalarSwift() {
    let input = Self.sweep
    XCTAssertEqual(largestError(FloatFunction<SquareRoot>(), input.map(abs)) { $0.squareRoot() }, 0)
    XCTAssertEqual(largestError(FloatFunction<ReciprocalSquareRoot>(), input.map { abs($0) + 0.01 }) { 1 / $0.squareRoot() }, 0)
    XCTAssertEqual(largestError(FloatFunction<Square>(), input) { $0 * $0 }, 0)
    XCTAssertEqual(largestError(FloatFunction<NaturalLogarithm>(), input.map { abs($0) + 0.01 }) { logf($0) }, 0)
    XCTAssertEqual(largestError(FloatFunction<Sine>(), input) { sinf($0) }, 0)
    XCTAssertEqual(largestError(FloatFunction<Cosine>(), input) { cosf($0) }, 0)
    XCTAssertEqual(largestError(ArithmeticUnaryOperation<Float, Negation>(), input) { -$0 }, 0)
    XCTAssertEqual(largestError(ArithmeticUnaryOperation<Float, AbsoluteValue>(), input) { abs($0) }, 0)
  }

  func testRoundingMatchesSwiftBitForBit() {
    var generator = SeededGenerator(seed: 17)
    var input = Self.sweep + generator.floats(3000, in: -1e9...1e9) + generator.floats(3000, in: -40...40)
    input += [8_388_607.5, 8_388_608, -8_388_609, 16_777_218, 0.49999997, -0.49999997, .infinity, -.infinity]
    input += (-20...20).map { Float($0) / 2 }
    for (kind, rule) in [(0, FloatingPointRoundingRule.down), (1, .up), (2, .toNearestOrEven)] {
      let output: [Float]
      switch kind {
      case 0: output = runUnary(FloatFunction<Floor>(), input, chunks: 3)
      case 1: output = runUnary(FloatFunction<Ceiling>(), input, chunks: 3)
      default: output = runUnary(FloatFunction<RoundHalfToEven>(), input, chunks: 3)
      }
      for (value, result) in zip(input, output) {
        XCTAssertEqual(result.bitPattern, value.rounded(rule).bitPattern, "\(value) rounded \(rule)")
      }
    }
    XCTAssertTrue(runUnary(FloatFunction<Floor>(), [.nan])[0].isNaN)
  }

  func testComplementaryErrorFunctionIsCloseToLibm() {
    let input = Self.sweep
    let output = VectorMathProbe.map(input) { VectorMath.erfc($0) }
    let worst = zip(input, output).map { abs(Double($1) - erfc(Double($0))) }.max() ?? 0
    XCTAssertLessThan(worst, 5e-7)
  }

  func testRoundSendsHalvesToEven() {
    let halves: [Float] = [-3.5, -2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 4.5]
    XCTAssertEqual(runUnary(FloatFunction<RoundHalfToEven>(), halves), halves.map { $0.rounded(.toNearestOrEven) })
    XCTAssertEqual(runUnary(FloatFunction<RoundHalfToEven>(), [2.5, -0.5, 3.5]), [2, -0, 4])
  }

  func testIntegerNegationAbsoluteValueAndSign() {
    let input: [Int32] = [Int32.min, -5, 0, 7, Int32.max] + (0..<40).map { Int32($0 - 20) }
    XCTAssertEqual(runUnary(ArithmeticUnaryOperation<Int32, Negation>(), input, chunks: 2), input.map { 0 &- $0 })
    XCTAssertEqual(runUnary(ArithmeticUnaryOperation<Int32, AbsoluteValue>(), input, chunks: 2), input.map { $0 < 0 ? 0 &- $0 : $0 })
    XCTAssertEqual(runUnary(ArithmeticUnaryOperation<Int32, Sign>(), input, chunks: 2), input.map { $0 > 0 ? 1 : $0 < 0 ? -1 : 0 })
    let floats: [Float] = [-2, -0.0, 0, 1e-30, .nan, -.infinity, 7] + (0..<20).map { Float($0) - 10 }
    XCTAssertEqual(runUnary(ArithmeticUnaryOperation<Float, Sign>(), floats), floats.map { $0 > 0 ? 1 : $0 < 0 ? -1 : 0 })
    let wide: [Int64] = [Int64.min, -3, 3]
    XCTAssertEqual(runUnary(ArithmeticUnaryOperation<Int64, Negation>(), wide), wide.map { 0 &- $0 })
  }
}

/// Applies a SIMD function to an array, 16 lanes at a time (tail lanes repeat the last value).
enum VectorMathProbe {
  static func map(_ input: [Float], _ function: (SIMD16<Float>) -> SIMD16<Float>) -> [Float] {
    var output: [Float] = []
    for start in stride(from: 0, to: input.count, by: 16) {
      var lanes = SIMD16<Float>(repeating: input[input.count - 1])
      for lane in 0..<min(16, input.count - start) { lanes[lane] = input[start + lane] }
      let result = function(lanes)
      for lane in 0..<min(16, input.count - start) { output.append(result[lane]) }
    }
    return output
  }
}
