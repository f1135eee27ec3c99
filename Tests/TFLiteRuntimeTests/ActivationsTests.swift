import Foundation
import XCTest
@testable import TFLiteRuntime

final class ActivationsTests: XCTestCase {
  let input = ElementwiseUnaryTests.sweep

  func testReluFamilyClamps() {
    for (lower, upper) in [(Float(0), Float.infinity), (0, 6), (-1, 1), (0, 1)] {
      let operation = ClampOperation(range: ActivationRange(lower: lower, upper: upper))
      XCTAssertEqual(largestError(operation, input) { min(max($0, lower), upper) }, 0)
    }
  }

  func testLeakyReluAndHardSwish() {
    for alpha: Float in [0.2, -0.5, 1.5] {
      XCTAssertEqual(largestError(LeakyReluOperation(alpha: alpha), input) { $0 > 0 ? $0 : $0 * alpha }, 0)
    }
    // LiteRT's reference divides by 6; the kernel multiplies by 1/6 rounded to float: within 1 ulp.
    let hardSwish = runUnary(FloatFunction<HardSwish>(), input, chunks: 3)
    for (x, y) in zip(input, hardSwish) {
      let reference = x * min(6, max(0, x + 3)) / 6
      if reference.isNaN {
        XCTAssertTrue(y.isNaN, "HARD_SWISH(\(x)) = \(y)")
      } else {
        XCTAssertLessThanOrEqual(ulpDistance(y, reference), 1, "HARD_SWISH(\(x)) = \(y), LiteRT's formula \(reference)")
      }
    }
  }

  func testEluAndGelu() {
    XCTAssertLessThan(largestError(FloatFunction<ExponentialLinearUnit>(), input) { $0 < 0 ? expm1f($0) : $0 }, 2e-7)
    XCTAssertLessThan(largestError(FloatFunction<GeluExact>(), input) {
      Float(0.5 * Double($0) * erfc(-Double($0) / 2.0.squareRoot()))
    }, 2e-6)
    XCTAssertLessThan(largestError(FloatFunction<GeluTanhApproximation>(), input) {
      let x = Double($0)
      return Float(0.5 * x * (1 + tanh((2 / Double.pi).squareRoot() * (x + 0.044715 * x * x * x))))
    }, 2e-6)
  }
}
