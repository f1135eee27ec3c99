// Activations: RELU, RELU6, RELU_N1_TO_1, RELU_0_TO_1, LEAKY_RELU, PRELU, LOGISTIC, TANH,
// HARD_SWISH, GELU, ELU.
//
// Formulas as in TFLite's reference kernels: LEAKY_RELU is x > 0 ? x : αx, PRELU is
// x ≥ 0 ? x : αx with α broadcast, HARD_SWISH is x·min(6, max(0, x + 3))/6, ELU is
// x < 0 ? eˣ − 1 : x, GELU is ½x·erfc(−x/√2) or, approximated, ½x(1 + tanh(√(2/π)(x + 0.044715x³))).

/// RELU-family clamp to a fixed range.
struct ClampOperation<Scalar: ArithmeticScalar>: UnaryLanewiseOperation {
  /// The output range.
  let range: ActivationRange<Scalar>

  @inline(__always)
  func callAsFunction(_ x: SIMD16<Scalar>) -> SIMD16<Scalar> { range.clamp(x) }
}

/// LEAKY_RELU: x > 0 ? x : alpha·x.
struct LeakyReluOperation: UnaryLanewiseOperation {
  /// Slope for non-positive inputs.
  let alpha: Float

  @inline(__always)
  func callAsFunction(_ x: SIMD16<Float>) -> SIMD16<Float> {
    (x * alpha).replacing(with: x, where: Float.isLess(SIMD16(repeating: 0), x))
  }
}

/// PRELU: x ≥ 0 ? x : alpha·x, with alpha a broadcast tensor.
struct PreluOperation: BinaryLanewiseOperation {
  @inline(__always)
  func callAsFunction(_ x: SIMD16<Float>, _ alpha: SIMD16<Float>) -> SIMD16<Float> {
    (x * alpha).replacing(with: x, where: Float.isLessOrEqual(SIMD16(repeating: 0), x))
  }
}

/// LOGISTIC: 1 / (1 + e^−x).
enum Logistic: FloatFunctionKind {
  static let operatorName = "LOGISTIC"
  @inline(__always)
  static func apply(_ x: SIMD16<Float>) -> SIMD16<Float> { VectorMath.logistic(x) }
}

/// TANH.
enum HyperbolicTangent: FloatFunctionKind {
  static let operatorName = "TANH"
  @inline(__always)
  static func apply(_ x: SIMD16<Float>) -> SIMD16<Float> { VectorMath.tanh(x) }
}

/// HARD_SWISH: x · relu6(x + 3) / 6.
enum HardSwish: FloatFunctionKind {
  static let operatorName = "HARD_SWISH"
  @inline(__always)
  static func apply(_ x: SIMD16<Float>) -> SIMD16<Float> {
    x * ActivationRange<Float>(lower: 0, upper: 6).clamp(x + 3) / 6
  }
}

/// ELU: x < 0 ? e^x − 1 : x.
enum ExponentialLinearUnit: FloatFunctionKind {
  static let operatorName = "ELU"
  @inline(__always)
  static func apply(_ x: SIMD16<Float>) -> SIMD16<Float> {
    x.replacing(with: VectorMath.expMinusOne(x), where: Float.isLess(x, SIMD16(repeating: 0)))
  }
}

/// GELU without approximation: ½x · erfc(−x/√2).
enum GeluExact: FloatFunctionKind {
  static let operatorName = "GELU"
  @inline(__always)
  static func apply(_ x: SIMD16<Float>) -> SIMD16<Float> {
    0.5 * x * VectorMath.erfc(x * -Float(0.5).squareRoot())
  }
}

/// GELU with `approximate`: ½x · (1 + tanh(√(2/π) · (x + 0.044715x³))).
enum GeluTanhApproximation: FloatFunctionKind {
  static let operatorName = "GELU"
  /// √(2/π).
  private static let scale: Float = 0.797_884_560_8
  @inline(__always)
  static func apply(_ x: SIMD16<Float>) -> SIMD16<Float> {
    0.5 * x * (1 + VectorMath.tanh(scale * (x + 0.044715 * x * x * x)))
  }
}
