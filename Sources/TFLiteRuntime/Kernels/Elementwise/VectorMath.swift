// Transcendental functions on 16 float lanes.
//
// `exp` (and `tanh`/`logistic`/`expMinusOne` built on it) is a SIMD polynomial: the argument is
// split as n·ln2 + r with |r| ≤ ln2/2, e^r comes from its degree-7 Taylor polynomial and 2^n is
// assembled in the exponent bits (in two halves, so overflow gives +inf and underflow gives 0 or
// a subnormal). Over [-104, 89] its error stays within 2 ulp of libm's expf (checked by the
// tests). erfc is a classic rational-polynomial approximation on top of exp, and rounding uses
// the 2^23 trick (no SSE4.1 round instruction on baseline x86-64). Everything rarer in networks
// (log, sin, cos, pow, fmod) calls libm lane by lane.
// Only `+` and `*` are used, never `addingProduct`, so default x86-64 builds (no FMA) stay fast.

import TFLiteLinearAlgebra

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// SIMD and libm-backed math on `SIMD16<Float>`.
enum VectorMath {
  /// log2(e), for n = round(x · log2(e)).
  private static let log2OfE: Float = 1.442_695_04
  /// ln(2) split in a part with few significant bits (so n · high is exact) and the rest.
  private static let ln2High: Float = 0.693_359_375
  private static let ln2Low: Float = -2.121_944_4e-4
  /// 1.5 · 2^23: adding it rounds a float of magnitude < 2^22 to an integer, which then sits in
  /// the low mantissa bits.
  private static let roundingShifter: Float = 12_582_912

  /// e^x lane-wise; +inf above ≈88.72, 0 far below -87, NaN for NaN.
  @inline(__always)
  static func exp(_ x: SIMD16<Float>) -> SIMD16<Float> {
    let bounded = clamp(x, lower: -104, upper: 89)
    let shifted = bounded * log2OfE + roundingShifter
    let n = shifted - roundingShifter
    let r = (bounded - n * ln2High) - n * ln2Low
    // e^r by Horner on the Taylor coefficients 1/k!, k = 7…0.
    var polynomial = SIMD16<Float>(repeating: 1.0 / 5040)
    polynomial = polynomial * r + 1.0 / 720
    polynomial = polynomial * r + 1.0 / 120
    polynomial = polynomial * r + 1.0 / 24
    polynomial = polynomial * r + 1.0 / 6
    polynomial = polynomial * r + 0.5
    polynomial = polynomial * r + 1
    polynomial = polynomial * r + 1
    let exponent = unsafeBitCast(shifted, to: SIMD16<Int32>.self)
      &- Int32(bitPattern: roundingShifter.bitPattern)
    let firstHalf = exponent &>> 1
    let secondHalf = exponent &- firstHalf
    let firstScale = unsafeBitCast((firstHalf &+ 127) &<< 23, to: SIMD16<Float>.self)
    let secondScale = unsafeBitCast((secondHalf &+ 127) &<< 23, to: SIMD16<Float>.self)
    let result = polynomial * firstScale * secondScale
    return bitwiseSelect(notANumberLanes(x), x, result)
  }

  /// x clamped to `lower ... upper` with sign-bit arithmetic instead of lane masks (masks make
  /// LLVM split AVX-512 code into 128-bit pieces). A NaN lane may come out as either bound.
  @inline(__always)
  static func clamp(_ x: SIMD16<Float>, lower: Float, upper: Float) -> SIMD16<Float> {
    let belowLower = unsafeBitCast(x - lower, to: SIMD16<Int32>.self) &>> 31
    let raised = bitwiseSelect(belowLower, SIMD16(repeating: lower), x)
    let aboveUpper = unsafeBitCast(upper - raised, to: SIMD16<Int32>.self) &>> 31
    return bitwiseSelect(aboveUpper, SIMD16(repeating: upper), raised)
  }

  /// All ones in the lanes of `x` that hold NaN (an exponent of all ones and a non-zero
  /// fraction), zero elsewhere; integer arithmetic, no lane masks.
  @inline(__always)
  static func notANumberLanes(_ x: SIMD16<Float>) -> SIMD16<Int32> {
    let magnitudeBits = unsafeBitCast(x, to: SIMD16<Int32>.self) & 0x7fff_ffff
    return (SIMD16<Int32>(repeating: 0x7f80_0000) &- magnitudeBits) &>> 31
  }

  /// Lanes of `chosen` where `mask` is all ones, of `other` where it is zero.
  @inline(__always)
  static func bitwiseSelect(_ mask: SIMD16<Int32>, _ chosen: SIMD16<Float>, _ other: SIMD16<Float>) -> SIMD16<Float> {
    let chosenBits = unsafeBitCast(chosen, to: SIMD16<Int32>.self)
    let otherBits = unsafeBitCast(other, to: SIMD16<Int32>.self)
    return unsafeBitCast((chosenBits & mask) | (otherBits & ~mask), to: SIMD16<Float>.self)
  }

  /// e^x − 1 lane-wise (absolute error near 1e-7 around 0, as for exp).
  @inline(__always)
  static func expMinusOne(_ x: SIMD16<Float>) -> SIMD16<Float> {
    exp(x) - 1
  }

  /// |x| lane-wise (clears the sign bit).
  @inline(__always)
  static func magnitude(_ x: SIMD16<Float>) -> SIMD16<Float> {
    unsafeBitCast(unsafeBitCast(x, to: SIMD16<UInt32>.self) & 0x7fff_ffff, to: SIMD16<Float>.self)
  }

  /// tanh(x) lane-wise: (1 − e^−2|x|)/(1 + e^−2|x|) with the sign of x, and its odd Taylor
  /// polynomial for |x| < 1/16 where the quotient would lose relative precision.
  @inline(__always)
  static func tanh(_ x: SIMD16<Float>) -> SIMD16<Float> {
    let absolute = magnitude(x)
    let decay = exp(absolute * -2)
    let large = (1 - decay) / (1 + decay)
    let square = absolute * absolute
    var small = SIMD16<Float>(repeating: -17.0 / 315)
    small = small * square + 2.0 / 15
    small = small * square - 1.0 / 3
    small = (small * square + 1) * absolute
    let positive = large.replacing(with: small, where: absolute .< 0.0625)
    let signBit = unsafeBitCast(x, to: SIMD16<UInt32>.self) & 0x8000_0000
    return unsafeBitCast(unsafeBitCast(positive, to: SIMD16<UInt32>.self) | signBit, to: SIMD16<Float>.self)
  }

  /// 1 / (1 + e^−x) lane-wise, within 1e-7 of the exact value and 3.2e-7 relative for x ≥ −87
  /// (below, e^−87 where the exact value is smaller); NaN stays NaN.
  ///
  /// Goes through e = e^−|x| ∈ (0, 1], so nothing overflows: 1/(1+e) for x ≥ 0, e/(1+e) below.
  /// |x| is capped at 87 (e stays a normal float, 2^n with n ≥ −126 is one normal scale; the tiny
  /// results of very negative x keep their size instead of stopping at e^−20 ≈ 2e-9) and e^r
  /// needs only a degree-5 polynomial, whose error reaches the result damped by e/(1+e)² ≤ 1/4.
  /// About half the operations of `exp`. The constants are those of the generated AVX-512 kernels
  /// (`LogisticApproximation`, `LogisticKernelGenerator`), which fuse multiply-adds and replace the
  /// division by a reciprocal estimate and a Newton step (within 3 ulp of this code).
  @inline(__always)
  static func logistic(_ x: SIMD16<Float>) -> SIMD16<Float> {
    let bits = unsafeBitCast(x, to: SIMD16<Int32>.self)
    let negativeMagnitude = unsafeBitCast(bits | Int32.min, to: SIMD16<Float>.self)
    // A NaN lane compares false and stays NaN.
    let lowest = LogisticApproximation.lowestExponent
    let t = negativeMagnitude.replacing(with: lowest, where: negativeMagnitude .< lowest)
    let shifter = LogisticApproximation.roundingShifter
    let shifted = t * LogisticApproximation.log2OfE + shifter
    let n = shifted - shifter
    let r = (t - n * LogisticApproximation.ln2High) - n * LogisticApproximation.ln2Low
    // e^r by Horner, highest degree first.
    let c = LogisticApproximation.coefficients
    var polynomial = SIMD16<Float>(repeating: c.0)
    polynomial = polynomial * r + c.1
    polynomial = polynomial * r + c.2
    polynomial = polynomial * r + c.3
    polynomial = polynomial * r + c.4
    polynomial = polynomial * r + c.5
    // n sits in the low mantissa bits of `shifted`; 2^n for n in -126...0 is built directly.
    let exponentBias = LogisticApproximation.exponentBias
    let scale = unsafeBitCast((unsafeBitCast(shifted, to: SIMD16<Int32>.self) &- exponentBias) &<< 23, to: SIMD16<Float>.self)
    let e = polynomial * scale
    let reciprocal = 1 / (1 + e)
    return bitwiseSelect(bits &>> 31, e * reciprocal, reciprocal)
  }

  /// Applies a scalar function to each lane (for libm functions without a SIMD form here).
  @inline(__always)
  static func eachLane(_ x: SIMD16<Float>, _ function: (Float) -> Float) -> SIMD16<Float> {
    var result = x
    for lane in 0..<vectorLaneCount { result[lane] = function(x[lane]) }
    return result
  }

  /// Applies a scalar function of two arguments to each pair of lanes.
  @inline(__always)
  static func eachLane(
    _ x: SIMD16<Float>, _ y: SIMD16<Float>, _ function: (Float, Float) -> Float
  ) -> SIMD16<Float> {
    var result = x
    for lane in 0..<vectorLaneCount { result[lane] = function(x[lane], y[lane]) }
    return result
  }

  /// Natural logarithm lane-wise (libm).
  @inline(__always)
  static func log(_ x: SIMD16<Float>) -> SIMD16<Float> { eachLane(x) { logf($0) } }

  /// Sine lane-wise (libm).
  @inline(__always)
  static func sin(_ x: SIMD16<Float>) -> SIMD16<Float> { eachLane(x) { sinf($0) } }

  /// Cosine lane-wise (libm).
  @inline(__always)
  static func cos(_ x: SIMD16<Float>) -> SIMD16<Float> { eachLane(x) { cosf($0) } }

  /// Complementary error function lane-wise: Abramowitz & Stegun's approximation 7.1.26
  /// (absolute error below 1.5e-7) evaluated for |x|, reflected with erfc(−x) = 2 − erfc(x).
  @inline(__always)
  static func erfc(_ x: SIMD16<Float>) -> SIMD16<Float> {
    let absolute = magnitude(x)
    let t = 1 / (1 + 0.327_591_1 * absolute)
    var polynomial = SIMD16<Float>(repeating: 1.061_405_429)
    polynomial = polynomial * t - 1.453_152_027
    polynomial = polynomial * t + 1.421_413_741
    polynomial = polynomial * t - 0.284_496_736
    polynomial = polynomial * t + 0.254_829_592
    polynomial = polynomial * t
    let positive = polynomial * exp(-(absolute * absolute))
    return positive.replacing(with: 2 - positive, where: x .< SIMD16<Float>(repeating: 0))
  }

  /// The nearest integer, halves to even (exact for every float; NaN stays NaN).
  @inline(__always)
  static func roundedToNearestEven(_ x: SIMD16<Float>) -> SIMD16<Float> {
    let absolute = magnitude(x)
    // 2^23: adding it to a smaller magnitude leaves no fraction bits, so the addition rounds
    // (to nearest, ties to even); larger magnitudes are already integers.
    let shifter = SIMD16<Float>(repeating: 8_388_608)
    let rounded = (absolute + shifter) - shifter
    return x.replacing(with: withSign(of: x, rounded), where: absolute .< shifter)
  }

  /// The largest integer not above x (a zero result keeps x's sign, as in C).
  @inline(__always)
  static func floor(_ x: SIMD16<Float>) -> SIMD16<Float> {
    let rounded = roundedToNearestEven(x)
    return withSign(of: x, rounded.replacing(with: rounded - 1, where: x .< rounded))
  }

  /// The smallest integer not below x (a zero result keeps x's sign, as in C).
  @inline(__always)
  static func ceiling(_ x: SIMD16<Float>) -> SIMD16<Float> {
    let rounded = roundedToNearestEven(x)
    return withSign(of: x, rounded.replacing(with: rounded + 1, where: rounded .< x))
  }

  /// `value` with the sign bit of `x` added (for values whose sign can only differ at zero).
  @inline(__always)
  private static func withSign(of x: SIMD16<Float>, _ value: SIMD16<Float>) -> SIMD16<Float> {
    let signBit = unsafeBitCast(x, to: SIMD16<UInt32>.self) & 0x8000_0000
    return unsafeBitCast(unsafeBitCast(value, to: SIMD16<UInt32>.self) | signBit, to: SIMD16<Float>.self)
  }

  /// x^y lane-wise (libm).
  @inline(__always)
  static func pow(_ x: SIMD16<Float>, _ y: SIMD16<Float>) -> SIMD16<Float> { eachLane(x, y) { powf($0, $1) } }

  /// Remainder of x / y truncated toward zero, lane-wise (libm fmod).
  @inline(__always)
  static func truncatingRemainder(_ x: SIMD16<Float>, _ y: SIMD16<Float>) -> SIMD16<Float> {
    eachLane(x, y) { fmodf($0, $1) }
  }
}
