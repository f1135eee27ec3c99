// The fixed-point arithmetic of TFLite's integer kernels, in one place.
//
// A real multiplier `m` (for example input_scale · filter_scale / output_scale) is represented as a
// 32-bit mantissa `multiplier` in [2^30, 2^31) with a power-of-two `shift`:
// m ≈ multiplier · 2^(shift − 31). Kernels rescale 32-bit accumulators with it.

/// How a 32-bit value is multiplied by a ``QuantizedMultiplier``.
///
/// LiteRT's reference kernels (`BUILTIN_REF`) and default builds round twice: a rounding doubling
/// high multiply, then a rounding right shift. Builds with `TFLITE_SINGLE_ROUNDING` (and some
/// optimized paths) round once on the 64-bit product. The two differ by one in a small fraction of
/// results.
public enum RoundingPolicy: Sendable, Hashable, CaseIterable {
  /// Two roundings, as LiteRT's reference kernels compute (the default).
  case doubleRounding
  /// One rounding of the exact 64-bit product.
  case singleRounding
}

/// A real multiplier as a 32-bit fixed-point mantissa and a power-of-two exponent.
@usableFromInline package struct QuantizedMultiplier: Sendable, Hashable {
  /// The mantissa, in [2^30, 2^31) for non-zero multipliers, 0 for zero.
  @usableFromInline package var multiplier: Int32
  /// The exponent: the value is `multiplier · 2^(shift − 31)`. Positive shifts scale up.
  @usableFromInline package var shift: Int

  /// Creates a multiplier from its parts.
  @inlinable package init(multiplier: Int32, shift: Int) {
    self.multiplier = multiplier
    self.shift = shift
  }

  /// Decomposes `real` (≥ 0) as TFLite does: mantissa rounded half away from zero to 31 bits;
  /// multipliers too small to matter (shift below −31) become zero. Under
  /// ``RoundingPolicy/singleRounding`` shifts above 30 are clamped to the largest multiplier, as
  /// TFLite's single-rounding builds do.
  @inlinable package init(_ real: Double, rounding policy: RoundingPolicy = .doubleRounding) {
    guard real > 0, real.isFinite else {
      self.init(multiplier: 0, shift: 0)
      return
    }
    // real = fraction · 2^exponent with fraction in [0.5, 1).
    var exponent = Int(real.exponent) + 1
    let fraction = real.significand / 2
    var mantissa = Int64((fraction * 2_147_483_648.0).rounded(.toNearestOrAwayFromZero))
    if mantissa == 1 << 31 {
      mantissa /= 2
      exponent += 1
    }
    if exponent < -31 {
      self.init(multiplier: 0, shift: 0)
    } else if policy == .singleRounding && exponent > 30 {
      self.init(multiplier: .max, shift: 30)
    } else {
      self.init(multiplier: Int32(mantissa), shift: exponent)
    }
  }

  /// The real value this multiplier stands for.
  @inlinable package var realValue: Double { Double(multiplier) * Double.pow2(shift - 31) }

  /// `x · multiplier · 2^(shift − 31)`, rounded as `policy` says.
  @inlinable @inline(__always)
  package func apply(_ x: Int32, rounding policy: RoundingPolicy = .doubleRounding) -> Int32 {
    switch policy {
    case .doubleRounding:
      let leftShift = max(shift, 0)
      let rightShift = max(-shift, 0)
      let scaled = FixedPoint.saturatingRoundingDoublingHighMultiply(x &<< Int32(leftShift), multiplier)
      return FixedPoint.roundingDivideByPowerOfTwo(scaled, rightShift)
    case .singleRounding:
      let totalShift = Int64(31 - shift)
      let round = Int64(1) << (totalShift - 1)
      let product = Int64(x) * Int64(multiplier) + round
      return Int32(truncatingIfNeeded: product >> totalShift)
    }
  }

  /// Eight lanes of ``apply(_:rounding:)`` at once, bit for bit the same.
  @inlinable @inline(__always)
  package func apply(_ x: SIMD8<Int32>, rounding policy: RoundingPolicy = .doubleRounding) -> SIMD8<Int32> {
    QuantizedMultiplierLanes(repeating: self, rounding: policy).apply(x)
  }

  /// `x · multiplier · 2^(shift − 31)` as TFLite's `MultiplyByQuantizedMultiplierSmallerThanOneExp`
  /// computes it (DIV, L2_NORMALIZATION on uint8, the quantized comparisons). Under double rounding
  /// the shift only ever divides: a rounding doubling high multiply, then a rounding division by
  /// 2^(−shift) with LiteRT's x86-64 handling of exponents outside 0...31 (see
  /// ``FixedPoint/roundingDivideByPowerOfTwoReducingExponent(_:_:)``), so positive shifts and
  /// shifts below −31 give LiteRT's results rather than the real product. Under single rounding it
  /// is ``apply(_:rounding:)``, rounding to 0 when the shift is −32 or lower.
  @inlinable @inline(__always)
  package func applyAsSmallerThanOne(_ x: Int32, rounding policy: RoundingPolicy = .doubleRounding) -> Int32 {
    switch policy {
    case .doubleRounding:
      let product = FixedPoint.saturatingRoundingDoublingHighMultiply(x, multiplier)
      return FixedPoint.roundingDivideByPowerOfTwoReducingExponent(product, 0 &- shift)
    case .singleRounding:
      // |x · multiplier| < 2^62, so shifting right by 63 bits or more rounds to 0.
      return shift <= -32 ? 0 : apply(x, rounding: .singleRounding)
    }
  }

  /// The 64-bit-accumulator variant used by the 16-bit kernels: the multiplier is first reduced
  /// to 16 bits (rounded), then one rounding shift of the 64-bit product.
  @inlinable @inline(__always)
  package func apply(_ x: Int64) -> Int32 {
    let reduced: Int64 = multiplier < 0x7FFF_0000 ? (Int64(multiplier) + (1 << 15)) >> 16 : 0x7FFF
    let totalShift = Int64(15 - shift)
    let product = x &* reduced &+ (Int64(1) << (totalShift - 1))
    return Int32(truncatingIfNeeded: product >> totalShift)
  }
}

/// Eight quantized multipliers side by side, one per lane: rescales eight channels at once, each
/// lane bit for bit as ``QuantizedMultiplier/apply(_:rounding:)`` does with its own multiplier.
///
/// Both roundings become one 64-bit product, offsets and one arithmetic shift. With a value
/// `v = x · 2^leftShift` (wrapping in 32 bits) and `p = v · multiplier`:
/// - one rounding: `(p + 2^(t−1)) >> t` with `t = 31 − shift`;
/// - two roundings (doubling high multiply, then rounding division by `2^r`, `r = −shift ≥ 0`):
///   `q = p + 2^30` is the high multiply's rounding, and dividing `floor(q / 2^31)` by `2^r` with
///   halves away from zero equals `(q + 2^(30+r) − (q < 0 ? 2^31 : 0)) >> (31 + r)` for `r > 0`
///   (`q >> 31` for `r = 0`), since floor(floor(a / b) + c) / d) = floor((a + c·b) / (b·d)).
/// So each lane keeps `q = p + first`, adds `second`, adds `negative` when `q < 0` and shifts.
@usableFromInline package struct QuantizedMultiplierLanes: Sendable {
  /// The mantissas (never negative).
  @usableFromInline package var multiplier: SIMD8<Int32>
  /// Applied to the value first (two roundings with a positive exponent); otherwise 0.
  @usableFromInline package var leftShift: SIMD8<Int32>
  /// Added to the product: 2^30 for two roundings, 2^(t−1) for one.
  @usableFromInline package var first: SIMD8<Int64>
  /// Added next: 2^(30+r) for two roundings with `r > 0`, else 0.
  @usableFromInline package var second: SIMD8<Int64>
  /// Added when the product plus `first` is negative: −2^31 for two roundings with `r > 0`, else 0.
  @usableFromInline package var negative: SIMD8<Int64>
  /// The final arithmetic right shift: 31 + r for two roundings, t for one.
  @usableFromInline package var shift: SIMD8<Int64>

  /// Lanes from their parts (see the type's description).
  @inlinable @inline(__always)
  package init(
    multiplier: SIMD8<Int32>, leftShift: SIMD8<Int32>, first: SIMD8<Int64>, second: SIMD8<Int64>,
    negative: SIMD8<Int64>, shift: SIMD8<Int64>
  ) {
    self.multiplier = multiplier
    self.leftShift = leftShift
    self.first = first
    self.second = second
    self.negative = negative
    self.shift = shift
  }

  /// Every lane holding `multiplier`, rounding as `policy` says.
  @inlinable @inline(__always)
  package init(repeating multiplier: QuantizedMultiplier, rounding policy: RoundingPolicy) {
    let lane = Self.parts(multiplier, rounding: policy)
    self.init(
      multiplier: SIMD8(repeating: lane.multiplier), leftShift: SIMD8(repeating: lane.leftShift),
      first: SIMD8(repeating: lane.first), second: SIMD8(repeating: lane.second),
      negative: SIMD8(repeating: lane.negative), shift: SIMD8(repeating: lane.shift))
  }

  /// The lane values of one multiplier under `policy`.
  @inlinable @inline(__always)
  package static func parts(_ multiplier: QuantizedMultiplier, rounding policy: RoundingPolicy) -> (
    multiplier: Int32, leftShift: Int32, first: Int64, second: Int64, negative: Int64, shift: Int64
  ) {
    let mantissa = multiplier.multiplier
    switch policy {
    case .doubleRounding:
      let left = Int32(truncatingIfNeeded: max(multiplier.shift, 0))
      let right = Int64(min(max(-multiplier.shift, 0), 31))
      return (
        mantissa, left, 1 << 30, right > 0 ? 1 << (30 + right) : 0, right > 0 ? -(1 << 31) : 0, 31 + right
      )
    case .singleRounding:
      let total = Int64(min(max(31 - multiplier.shift, 1), 62))
      return (mantissa, 0, 1 << (total - 1), 0, 0, total)
    }
  }

  /// Each lane of `x` times its lane's multiplier, rounded as the lanes were built for.
  @inlinable @inline(__always)
  package func apply(_ x: SIMD8<Int32>) -> SIMD8<Int32> {
    // Both factors are sign-extended Int32 lanes (one multiply of 32-bit halves): the product is exact.
    let product = SIMD8<Int64>(signExtending: x &<< leftShift) &* SIMD8<Int64>(signExtending: multiplier)
    let rounded = product &+ first
    let adjusted = rounded &+ second &+ ((rounded &>> 63) & negative)
    return SIMD8<Int32>(truncating: adjusted &>> shift)
  }
}

// Lane-by-lane conversions between Int32 and Int64 vectors. The standard library's generic
// `init(truncatingIfNeeded:)` is often left as an out-of-line call in large kernels, which passes
// each vector through memory; spelled out lane by lane, LLVM emits one vector instruction.
extension SIMD8 where Scalar == Int64 {
  /// The lanes of `x`, sign-extended.
  @inlinable @inline(__always)
  package init(signExtending x: SIMD8<Int32>) {
    self.init(
      Int64(x[0]), Int64(x[1]), Int64(x[2]), Int64(x[3]), Int64(x[4]), Int64(x[5]), Int64(x[6]), Int64(x[7]))
  }
}

extension SIMD8 where Scalar == Int32 {
  /// The low 32 bits of every lane of `x`.
  @inlinable @inline(__always)
  package init(truncating x: SIMD8<Int64>) {
    self.init(
      Int32(truncatingIfNeeded: x[0]), Int32(truncatingIfNeeded: x[1]), Int32(truncatingIfNeeded: x[2]),
      Int32(truncatingIfNeeded: x[3]), Int32(truncatingIfNeeded: x[4]), Int32(truncatingIfNeeded: x[5]),
      Int32(truncatingIfNeeded: x[6]), Int32(truncatingIfNeeded: x[7]))
  }
}

/// gemmlowp-style fixed-point primitives, bit-exact with TFLite.
@usableFromInline package enum FixedPoint {
  /// The high 32 bits of `2 · a · b`, rounded to nearest (exact halves toward +infinity);
  /// saturates the one overflowing case `a == b == Int32.min`.
  @inlinable @inline(__always)
  package static func saturatingRoundingDoublingHighMultiply(_ a: Int32, _ b: Int32) -> Int32 {
    if a == b && a == .min { return .max }
    let product = Int64(a) * Int64(b)
    let nudge: Int64 = product >= 0 ? 1 << 30 : 1 - (1 << 30)
    // Division truncating toward zero, as C++ `/` does.
    return Int32(truncatingIfNeeded: (product + nudge) / (1 << 31))
  }

  /// `x / 2^exponent` rounded to nearest, ties away from zero (`exponent` in 0...31).
  @inlinable @inline(__always)
  package static func roundingDivideByPowerOfTwo(_ x: Int32, _ exponent: Int) -> Int32 {
    let mask = Int32(truncatingIfNeeded: (Int64(1) << exponent) - 1)
    let remainder = x & mask
    let threshold = (mask >> 1) + (x < 0 ? 1 : 0)
    return (x >> Int32(exponent)) + (remainder > threshold ? 1 : 0)
  }

  /// ``roundingDivideByPowerOfTwo(_:_:)`` for any exponent, as LiteRT's x86-64 builds compute
  /// gemmlowp's `RoundingDivideByPOT` when the exponent leaves 0...31 (DIV does so for numerators
  /// near 0, the quantized comparisons for scales of 1 or more): the remainder mask comes from a
  /// 64-bit shift by the exponent modulo 64, and the value is shifted by the exponent modulo 32.
  @inlinable @inline(__always)
  package static func roundingDivideByPowerOfTwoReducingExponent(_ x: Int32, _ exponent: Int) -> Int32 {
    let mask = Int32(truncatingIfNeeded: (Int64(1) &<< Int64(exponent & 63)) &- 1)
    let remainder = x & mask
    let threshold = (mask >> 1) &+ (x < 0 ? 1 : 0)
    return (x >> Int32(exponent & 31)) &+ (remainder > threshold ? 1 : 0)
  }

  /// Eight lanes of ``roundingDivideByPowerOfTwo(_:_:)`` at once (`exponent` in 0...31).
  @inlinable @inline(__always)
  package static func roundingDivideByPowerOfTwo(_ x: SIMD8<Int32>, _ exponent: Int) -> SIMD8<Int32> {
    let mask = Int32(truncatingIfNeeded: (Int64(1) << exponent) &- 1)
    let threshold = (mask &>> 1) &+ ((x &>> 31) & 1)
    return (x &>> Int32(truncatingIfNeeded: exponent)) &+ (((threshold &- (x & mask)) &>> 31) & 1)
  }

  /// The clamping range of a quantized output for a fused activation, as TFLite computes it:
  /// the activation's real bounds quantized with `round(real / scale) + zeroPoint`, intersected
  /// with the type's range `typeRange`. When the bounds cross, TFLite's `min(max(x, lower), upper)`
  /// yields `upper` for every input, so the range collapses onto it.
  @inlinable package static func activationRange(
    _ activation: FusedActivation, scale: Float, zeroPoint: Int, typeRange: ClosedRange<Int32>
  ) -> ClosedRange<Int32> {
    func quantize(_ real: Float) -> Int32 {
      // A tiny scale puts the bound beyond every integer (at infinity for a denormal scale):
      // clamp the step count before converting, the result is clamped to Int32 anyway.
      let steps = min(max((real / scale).rounded(.toNearestOrAwayFromZero), -0x1p40), 0x1p40)
      return Int32(clamping: Int64(zeroPoint) + Int64(steps))
    }
    var lower = typeRange.lowerBound
    var upper = typeRange.upperBound
    switch activation {
    case .none: break
    case .relu: lower = max(lower, quantize(0))
    case .relu6:
      lower = max(lower, quantize(0))
      upper = min(upper, quantize(6))
    case .reluN1To1:
      lower = max(lower, quantize(-1))
      upper = min(upper, quantize(1))
    }
    return min(lower, upper)...upper
  }
}

/// The fused activations kernels clamp with (public because the reference kernels take one).
public enum FusedActivation: Sendable, Hashable {
  /// No clamping beyond the type's range.
  case none
  /// max(x, 0).
  case relu
  /// min(max(x, 0), 6).
  case relu6
  /// min(max(x, −1), 1).
  case reluN1To1
}

extension Double {
  /// 2^exponent, exactly.
  @inlinable package static func pow2(_ exponent: Int) -> Double { Double(sign: .plus, exponent: exponent, significand: 1) }
}
