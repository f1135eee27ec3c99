import XCTest

import TFLiteLinearAlgebra
@testable import TFLiteRuntime

/// Checks the fixed-point primitives against independent computations in exact 128-bit or
/// `Double` arithmetic (not against copied expected values).
final class FixedPointTests: XCTestCase {
  /// Round half away from zero of `numerator / 2^exponent`, computed with wide integers.
  private func roundedQuotient(_ numerator: Int64, exponent: Int) -> Int64 {
    let magnitude = numerator.magnitude
    let divisor = UInt64(1) << exponent
    let quotient = magnitude / divisor
    let remainder = magnitude % divisor
    let rounded = remainder * 2 >= divisor ? quotient + 1 : quotient
    return numerator < 0 ? -Int64(rounded) : Int64(rounded)
  }

  /// floor(numerator / 2^exponent + 1/2): round half toward positive infinity.
  private func roundedHalfUp(_ numerator: Int64, exponent: Int) -> Int64 {
    (numerator + (Int64(1) << (exponent - 1))) >> exponent
  }

  func testDoublingHighMultiplyMatchesWideArithmetic() {
    var generator = SystemRandomNumberGenerator()
    let edges: [Int32] = [.min, .min + 1, -1, 0, 1, .max - 1, .max, 1 << 30, -(1 << 30)]
    var pairs = edges.flatMap { a in edges.map { (a, $0) } }
    for _ in 0..<20_000 { pairs.append((Int32.random(in: .min ... .max, using: &generator), Int32.random(in: .min ... .max, using: &generator))) }
    for (a, b) in pairs {
      // gemmlowp's nudge makes exact halves round toward +infinity.
      let expected: Int64 = a == .min && b == .min ? Int64(Int32.max) : roundedHalfUp(Int64(a) * Int64(b), exponent: 31)
      XCTAssertEqual(Int64(FixedPoint.saturatingRoundingDoublingHighMultiply(a, b)), expected, "\(a) × \(b)")
    }
  }

  func testRoundingDivideByPowerOfTwoRoundsHalfAwayFromZero() {
    var generator = SystemRandomNumberGenerator()
    for _ in 0..<20_000 {
      let x = Int32.random(in: .min ... .max, using: &generator)
      let exponent = Int.random(in: 0...31, using: &generator)
      XCTAssertEqual(Int64(FixedPoint.roundingDivideByPowerOfTwo(x, exponent)), roundedQuotient(Int64(x), exponent: exponent), "\(x) >> \(exponent)")
    }
    XCTAssertEqual(FixedPoint.roundingDivideByPowerOfTwo(-3, 1), -2)
    XCTAssertEqual(FixedPoint.roundingDivideByPowerOfTwo(3, 1), 2)
    XCTAssertEqual(FixedPoint.roundingDivideByPowerOfTwo(-5, 2), -1)
  }

  func testMultiplierDecompositionIsCloseAndNormalized() {
    var generator = SystemRandomNumberGenerator()
    for _ in 0..<10_000 {
      let real = Double.random(in: 1e-9...1e3, using: &generator)
      let quantized = QuantizedMultiplier(real)
      XCTAssertGreaterThanOrEqual(quantized.multiplier, 1 << 30)
      XCTAssertEqual(quantized.realValue / real, 1, accuracy: 1e-9)
    }
    XCTAssertEqual(QuantizedMultiplier(0), QuantizedMultiplier(multiplier: 0, shift: 0))
    XCTAssertEqual(QuantizedMultiplier(0.5), QuantizedMultiplier(multiplier: 1 << 30, shift: 0))
    XCTAssertEqual(QuantizedMultiplier(1e-12).multiplier, 0, "below 2^-32 the multiplier vanishes")
  }

  func testBothRoundingPoliciesApproximateTheRealProduct() {
    var generator = SystemRandomNumberGenerator()
    var differences = 0
    let trials = 20_000
    for _ in 0..<trials {
      let real = Double.random(in: 1e-6...0.99, using: &generator)
      let quantized = QuantizedMultiplier(real)
      let x = Int32.random(in: -(1 << 24)...(1 << 24), using: &generator)
      let exact = Double(x) * quantized.realValue
      let double = quantized.apply(x, rounding: .doubleRounding)
      let single = quantized.apply(x, rounding: .singleRounding)
      XCTAssertLessThanOrEqual(abs(Double(single) - exact), 0.5 + 1e-9, "single rounding is one correct rounding")
      XCTAssertLessThanOrEqual(abs(Double(double) - exact), 1.0, "double rounding is off by at most one")
      if single != double { differences += 1 }
    }
    XCTAssertLessThan(differences, trials / 10)
  }

  func testActivationRangesClampToTypeAndActivation() {
    let int8 = Int32(Int8.min)...Int32(Int8.max)
    XCTAssertEqual(FixedPoint.activationRange(.none, scale: 0.1, zeroPoint: 3, typeRange: int8), int8)
    XCTAssertEqual(FixedPoint.activationRange(.relu, scale: 0.1, zeroPoint: 3, typeRange: int8), 3...127)
    XCTAssertEqual(FixedPoint.activationRange(.relu6, scale: 0.1, zeroPoint: -128, typeRange: int8), -128...(-68))
    XCTAssertEqual(FixedPoint.activationRange(.reluN1To1, scale: 0.5, zeroPoint: 0, typeRange: int8), -2...2)
  }

  /// The libm-free rounding conversion equals the standard library's `rounded()` (half away from
  /// zero) followed by the saturating conversion: on ties, the floats next to ties, large and
  /// non-finite values, and a million random values over the int8 and Int32 ranges.
  func testRoundingConversionEqualsRoundedThenTruncated() {
    func expected(_ value: Float) -> Int32 { FixedPoint.truncatingConversion(value.rounded()) }
    var values: [Float] = [0, -0.0, .nan, .infinity, -.infinity, .greatestFiniteMagnitude, -.greatestFiniteMagnitude,
      1_073_741_824, -1_073_741_824, 2_147_483_648, -2_147_483_904, 3e9, -3e9]
    for whole in -300...300 {
      let tie = Float(whole) + 0.5
      values += [tie, tie.nextUp, tie.nextDown, Float(whole), Float(whole).nextUp, Float(whole).nextDown]
    }
    var generator = SystemRandomNumberGenerator()
    for _ in 0..<500_000 {
      values.append(Float.random(in: -200...200, using: &generator))
      values.append(Float.random(in: -2.2e9...2.2e9, using: &generator))
    }
    var mismatches = 0
    for value in values where FixedPoint.roundingConversion(value) != expected(value) {
      mismatches += 1
      if mismatches < 5 { XCTFail("\(value): \(FixedPoint.roundingConversion(value)) != \(expected(value))") }
    }
    XCTAssertEqual(mismatches, 0)
  }
}
