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
    XCTAssertEqual(largestError(FloatFunction<HardSwish>(), input) { $0 * min(6, max(0, $0 + 3)) / 6 }, 0)
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
