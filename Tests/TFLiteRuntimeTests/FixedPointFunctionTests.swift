import Foundation
import XCTest

import TFLiteLinearAlgebra
@testable import TFLiteRuntime

/// Checks the fixed-point functions, constants and tables against independent computations in
/// `Double` or wide integer arithmetic (never against values copied from TFLite).
final class FixedPointFunctionTests: XCTestCase {
  /// round(value · 2^fractionalBits), the raw value of `value` in a fixed-point format.
  private func raw(_ value: Double, fractionalBits: Int) -> Int64 {
    Int64((value * pow(2, Double(fractionalBits))).rounded())
  }

  func testConstantsAreTheRealNumbersTheyName() {
    XCTAssertEqual(Int64(FixedPoint.expOfMinusOneEighth), raw(exp(-1.0 / 8), fractionalBits: 31))
    XCTAssertEqual(Int64(FixedPoint.oneThird), raw(1.0 / 3, fractionalBits: 31))
    XCTAssertEqual(FixedPoint.expOfMinusPowersOfTwo.count, 7)
    for (index, multiplier) in FixedPoint.expOfMinusPowersOfTwo.enumerated() {
      let exponent = FixedPoint.expOfMinusPowersOfTwoFirstExponent + index
      XCTAssertEqual(Int64(multiplier), raw(exp(-pow(2, Double(exponent))), fractionalBits: 31), "e^-2^\(exponent)")
    }
    XCTAssertEqual(Int64(FixedPoint.fortyEightSeventeenths), raw(48.0 / 17, fractionalBits: 29))
    XCTAssertEqual(Int64(FixedPoint.minusThirtyTwoSeventeenths), raw(-32.0 / 17, fractionalBits: 29))
    XCTAssertEqual(Int64(FixedPoint.logOfTwo), raw(log(2.0), fractionalBits: 31))
    XCTAssertEqual(Int64(FixedPoint.fourthRootOfOneHalf), raw(pow(0.5, 0.25), fractionalBits: 31))
    XCTAssertEqual(Int64(FixedPoint.squareRootOfOneHalf), raw(0.5.squareRoot(), fractionalBits: 31))
    XCTAssertEqual(Int64(FixedPoint.oneQuarter), raw(0.25, fractionalBits: 31))
    let fourthRootOfTwo = pow(2.0, 0.25)
    XCTAssertEqual(Int64(FixedPoint.logNumeratorCubic), raw(11.0 / 240 * fourthRootOfTwo, fractionalBits: 31))
    XCTAssertEqual(Int64(FixedPoint.logDenominatorSquare), raw(1.0 / 20 * fourthRootOfTwo, fractionalBits: 31))
    XCTAssertEqual(
      Int64(FixedPoint.logDenominatorLinear), raw(2 / fourthRootOfTwo - fourthRootOfTwo, fractionalBits: 31))
    XCTAssertEqual(Int64(FixedPoint.logDenominatorFirst), raw(0.25 * fourthRootOfTwo, fractionalBits: 31))
  }

  func testEightLaneRescalingMatchesTheScalarOne() {
    var generator = SeededGenerator(seed: 400)
    for _ in 0..<5_000 {
      let multiplier = QuantizedMultiplier(
        Double.random(in: 1e-9...1e4, using: &generator), rounding: Bool.random(using: &generator) ? .singleRounding : .doubleRounding)
      let magnitude = Int32(1) << Int32.random(in: 0...30, using: &generator)
      let lanes = SIMD8<Int32>((0..<8).map { _ in Int32.random(in: -magnitude...magnitude, using: &generator) })
      let exponent = Int.random(in: 0...31, using: &generator)
      for policy in RoundingPolicy.allCases {
        let vector = multiplier.apply(lanes, rounding: policy)
        for lane in 0..<8 {
          XCTAssertEqual(vector[lane], multiplier.apply(lanes[lane], rounding: policy), "\(multiplier) × \(lanes[lane]) \(policy)")
        }
      }
      let divided = FixedPoint.roundingDivideByPowerOfTwo(lanes, exponent)
      for lane in 0..<8 {
        XCTAssertEqual(divided[lane], FixedPoint.roundingDivideByPowerOfTwo(lanes[lane], exponent))
      }
    }
  }

  func testSaturatingMultiplyByPowerOfTwo() {
    var generator = SeededGenerator(seed: 401)
    for _ in 0..<20_000 {
      let x = Int32.random(in: .min ... .max, using: &generator)
      let exponent = Int.random(in: -31...31, using: &generator)
      let result = Int64(FixedPoint.saturatingRoundingMultiplyByPowerOfTwo(x, exponent))
      if exponent >= 0 {
        XCTAssertEqual(result, min(max(Int64(x) << exponent, Int64(Int32.min)), Int64(Int32.max)), "\(x) << \(exponent)")
      } else {
        let exact = Double(x) / pow(2, Double(-exponent))
        XCTAssertEqual(Double(result), exact.rounded(.toNearestOrAwayFromZero), "\(x) >> \(-exponent)")
      }
    }
  }

  func testSixteenBitDoublingHighMultiplyAndHalfSum() {
    for a in stride(from: Int32(Int16.min), through: Int32(Int16.max), by: 97) {
      for b in stride(from: Int32(Int16.min), through: Int32(Int16.max), by: 89) {
        let expected = a == -32768 && b == -32768 ? 32767 : (Int64(a) * Int64(b) + (1 << 14)) >> 15
        XCTAssertEqual(
          Int64(FixedPoint.saturatingRoundingDoublingHighMultiply(Int16(a), Int16(b))), expected, "\(a) × \(b)")
      }
    }
    var generator = SeededGenerator(seed: 402)
    for _ in 0..<10_000 {
      let a = Int32.random(in: .min ... .max, using: &generator)
      let b = Int32.random(in: .min ... .max, using: &generator)
      let exact = (Double(a) + Double(b)) / 2
      XCTAssertEqual(Double(FixedPoint.roundingHalfSum(a, b)), exact.rounded(.toNearestOrAwayFromZero))
    }
  }

  func testExponentialOfNegativeValuesIsAccurate() {
    for integerBits in [0, 3, 5, 12] {
      let fractionalBits = 31 - integerBits
      var generator = SeededGenerator(seed: 403 + UInt64(integerBits))
      for _ in 0..<5_000 {
        let input = Int32.random(in: Int32.min...0, using: &generator)
        let expected = exp(Double(input) / pow(2, Double(fractionalBits)))
        let actual = Double(FixedPoint.expOnNegativeValues(input, integerBits: integerBits)) / pow(2, 31)
        XCTAssertEqual(actual, expected, accuracy: 2e-8 + 1e-6 * expected, "Q\(integerBits) \(input)")
      }
      XCTAssertEqual(FixedPoint.expOnNegativeValues(0, integerBits: integerBits), .max, "e^0 is the largest Q0 value")
    }
  }

  func testReciprocalAndLogarithmAreAccurate() {
    var generator = SeededGenerator(seed: 404)
    for _ in 0..<5_000 {
      let x = Int32.random(in: 0...Int32.max, using: &generator)
      let real = Double(x) / pow(2, 31)
      XCTAssertEqual(Double(FixedPoint.oneOverOnePlusX(x)) / pow(2, 31), 1 / (1 + real), accuracy: 1e-8)
      // A Q12 value in [1, 4096): its reciprocal and its logarithm.
      let sum = Int32.random(in: (1 << 19)...Int32.max, using: &generator)
      let value = Double(sum) / pow(2, 19)
      let (mantissa, bitsOverUnit) = FixedPoint.reciprocal(sum, integerBits: 12)
      XCTAssertEqual(Double(mantissa) / pow(2, 31) / pow(2, Double(bitsOverUnit)), 1 / value, accuracy: 1e-8 / value)
      let logarithm = FixedPoint.logOfValueAtLeastOne(sum, inputIntegerBits: 12, outputIntegerBits: 5)
      XCTAssertEqual(Double(logarithm) / pow(2, 26), log(value), accuracy: 1e-6)
    }
  }

  func testInverseSquareRootIsAccurate() {
    var generator = SeededGenerator(seed: 405)
    for _ in 0..<5_000 {
      let x = Int32.random(in: 2...Int32.max, using: &generator)
      let inverse = FixedPoint.inverseSquareRoot(x)
      // Five Newton steps from 1 leave a relative error of about 1e-6 on the slowest inputs.
      XCTAssertEqual(inverse.realValue, 1 / Double(x).squareRoot(), accuracy: 1e-5 / Double(x).squareRoot(), "1/√\(x)")
    }
    XCTAssertEqual(FixedPoint.inverseSquareRoot(0), QuantizedMultiplier(multiplier: .max, shift: 0), "0 is taken as 1")
    XCTAssertEqual(FixedPoint.inverseSquareRoot(1), QuantizedMultiplier(multiplier: .max, shift: 0))
  }

  func testLeadingSignBitsCountTheRepeatedSignBits() {
    var generator = SeededGenerator(seed: 406)
    for _ in 0..<5_000 {
      let x = Int32(truncatingIfNeeded: UInt32.random(in: 0...UInt32.max, using: &generator) >> UInt32.random(in: 0...31, using: &generator))
      for value in [x, ~x] {
        let bits = (0..<32).map { (value >> (31 - $0)) & 1 }
        let repeated = bits.dropFirst().prefix { $0 == bits[0] }.count
        XCTAssertEqual(FixedPoint.countLeadingSignBits(value), repeated, "\(value)")
      }
    }
  }

  func testReducedExponentDivisionAgreesInRangeAndWrapsOutside() {
    var generator = SeededGenerator(seed: 407)
    for _ in 0..<5_000 {
      let x = Int32.random(in: .min ... .max, using: &generator)
      let exponent = Int.random(in: 0...31, using: &generator)
      XCTAssertEqual(
        FixedPoint.roundingDivideByPowerOfTwoReducingExponent(x, exponent), FixedPoint.roundingDivideByPowerOfTwo(x, exponent))
    }
    // Exponents 32...63: the mask keeps every bit and the shift wraps to exponent − 32.
    XCTAssertEqual(FixedPoint.roundingDivideByPowerOfTwoReducingExponent(0, 40), 1, "0 & mask exceeds the threshold −1")
    XCTAssertEqual(FixedPoint.roundingDivideByPowerOfTwoReducingExponent(-1_000, 34), -250)
    // A negative exponent −k shifts right by 32 − k, and its full mask rounds every non-negative value up.
    XCTAssertEqual(FixedPoint.roundingDivideByPowerOfTwoReducingExponent(1 << 30, -2), 2)
  }

  func testEightBitTableOfTheIdentityRequantizes() {
    let table = QuantizedLookupTable.eightBit(
      inputRange: -128...127, inputScale: 0.5, inputZeroPoint: 3, outputScale: 0.25, outputZeroPoint: -10,
      outputRange: -128...127, transform: { $0 })
    for (offset, entry) in table.enumerated() {
      let input = Int32(offset) - 128
      XCTAssertEqual(entry, min(max(2 * (input - 3) - 10, -128), 127), "input \(input)")
    }
  }

  func testSixteenBitTableInterpolatesTheFunction() {
    let table = QuantizedLookupTable.sixteenBit(
      inputScale: 8.0 / 32768, inputZeroPoint: 0, outputScale: 1.0 / 32768, outputZeroPoint: 0,
      transform: { (x: Double) in tanh(x) })
    XCTAssertEqual(table.count, QuantizedLookupTable.sixteenBitCount)
    table.withUnsafeBufferPointer { entries in
      for raw in stride(from: Int32(Int16.min), through: Int32(Int16.max), by: 7) {
        let expected = tanh(Double(raw) * 8 / 32768) * 32768
        let actual = Double(QuantizedLookupTable.lookup(Int16(raw), in: entries.baseAddress!))
        XCTAssertEqual(actual, min(expected, 32767), accuracy: 40, "input \(raw)")
      }
    }
  }

  func testLogisticTableSamplesTheLogistic() {
    XCTAssertEqual(QuantizedLookupTable.logisticQ16.count, 256)
    for (index, entry) in QuantizedLookupTable.logisticQ16.enumerated() {
      let expected = 65536 / (1 + exp(-Double(index) / 24))
      XCTAssertEqual(Double(entry), min(expected, 65535), accuracy: 1.5, "entry \(index)")
    }
  }

  func testScalingParameters() {
    XCTAssertTrue(FixedPoint.checkedLog2(0.125).isPowerOfTwo)
    XCTAssertEqual(FixedPoint.checkedLog2(0.125).log2, -3)
    XCTAssertFalse(FixedPoint.checkedLog2(0.1).isPowerOfTwo)
    XCTAssertFalse(FixedPoint.checkedLog2(0).isPowerOfTwo, "log2(0) is not finite")
    for (integerBits, shift) in [(5, 20), (5, 23), (4, 12), (3, 0)] {
      let expected = (Double((1 << integerBits) - 1) * pow(2, Double(31 - integerBits)) / pow(2, Double(shift))).rounded(.down)
      XCTAssertEqual(Double(FixedPoint.inputRadius(integerBits: integerBits, inputLeftShift: shift)), expected)
    }
    XCTAssertEqual(QuantizedMultiplier(multiplier: 1 << 30, shift: 0).sixteenBitMantissa, 1 << 14)
    XCTAssertEqual(QuantizedMultiplier(multiplier: .max, shift: 0).sixteenBitMantissa, .max)
    XCTAssertEqual(
      QuantizedMultiplier(pow(2, 40), rounding: .singleRounding), QuantizedMultiplier(multiplier: .max, shift: 30),
      "single rounding caps the shift at 30")
    XCTAssertEqual(QuantizedMultiplier(pow(2, 40)).shift, 41)
  }

  func testCrossedActivationBoundsCollapseOntoTheUpperBound() {
    let range = FixedPoint.activationRange(.relu, scale: 1, zeroPoint: 200, typeRange: Int32(Int8.min)...Int32(Int8.max))
    XCTAssertEqual(range, 127...127, "min(max(x, 200), 127) is 127 for every x")
  }
}
