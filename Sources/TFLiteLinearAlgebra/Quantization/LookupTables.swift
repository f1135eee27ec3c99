// The look-up tables TFLite's quantized kernels build at prepare time, and the fixed table of
// the logistic function the 16-bit LOGISTIC and TANH kernels interpolate.
//
// The transforms are evaluated in the same precision (float or double) and with the same
// platform math library functions as LiteRT's kernels, so that the tables match entry by entry.

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Builders of quantized look-up tables.
@usableFromInline package enum QuantizedLookupTable {
  /// Entries of a table indexed by a 16-bit input: 512 samples and one extra for the last slope.
  @usableFromInline package static let sixteenBitCount = 513

  /// A 256-entry table for 8-bit inputs of `inputRange` (index = raw input − lower bound): each
  /// raw value is dequantized in float, transformed, requantized (rounding half away from zero)
  /// and clamped to `outputRange`.
  @inlinable package static func eightBit(
    inputRange: ClosedRange<Int32>, inputScale: Float, inputZeroPoint: Int32, outputScale: Float,
    outputZeroPoint: Int32, outputRange: ClosedRange<Int32>, transform: (Float) -> Float
  ) -> [Int32] {
    let inverseOutputScale = 1 / outputScale
    return inputRange.map { value in
      let dequantized = inputScale * Float(value - inputZeroPoint)
      let rescaled = (transform(dequantized) * inverseOutputScale).rounded(.toNearestOrAwayFromZero)
      let quantized = FixedPoint.truncatingConversion(rescaled + Float(outputZeroPoint))
      return min(max(quantized, outputRange.lowerBound), outputRange.upperBound)
    }
  }

  /// A 513-entry table for 16-bit inputs: `transform` sampled at 512 evenly spaced points of the
  /// input's real range (plus its end), each sample biased by half the error of linear
  /// interpolation at the midpoint, in the floating-point type `Real` TFLite uses for the op.
  @inlinable package static func sixteenBit<Real: BinaryFloatingPoint>(
    inputScale: Real, inputZeroPoint: Int32, outputScale: Real, outputZeroPoint: Int32, transform: (Real) -> Real
  ) -> [Int16] {
    let inputMin = inputScale * Real(Int32(Int16.min) - inputZeroPoint)
    let inputMax = inputScale * Real(Int32(Int16.max) - inputZeroPoint)
    let outputMin = outputScale * Real(Int32(Int16.min) - outputZeroPoint)
    let outputMax = outputScale * Real(Int32(Int16.max) - outputZeroPoint)
    let stepCount = sixteenBitCount - 1
    let step = (inputMax - inputMin) / Real(stepCount)
    let halfStep = step / 2
    let outputScalingInverse = Real(65536) / (outputMax - outputMin)
    func clampedEntry(_ value: Real) -> Int16 {
      // Scales so small that the sample is 0 × ∞ give NaN, which no entry can hold: use 0.
      value.isNaN ? 0 : Int16(min(max(value, Real(Int16.min)), Real(Int16.max)))
    }
    var table = (0..<stepCount).map { index -> Int16 in
      let start = inputMin + Real(index) * step
      let value = transform(start)
      let midpointValue = transform(start + halfStep)
      let nextValue = transform(inputMin + Real(index + 1) * step)
      let sample = (value * outputScalingInverse).rounded(.toNearestOrAwayFromZero)
      let interpolatedMidpoint = ((nextValue * outputScalingInverse + sample) / 2).rounded(.toNearestOrAwayFromZero)
      let exactMidpoint = (midpointValue * outputScalingInverse).rounded(.toNearestOrAwayFromZero)
      let bias = ((interpolatedMidpoint - exactMidpoint) / 2).rounded(.toNearestOrAwayFromZero)
      return clampedEntry(sample - bias)
    }
    table.append(clampedEntry((transform(inputMax) * outputScalingInverse).rounded(.toNearestOrAwayFromZero)))
    return table
  }

  /// The value of a 513-entry table at a 16-bit input: the entry at its top 9 bits, linearly
  /// interpolated with the next by its low 7 bits (rounding the correction half up).
  @inlinable @inline(__always)
  package static func lookup(_ value: Int16, in table: UnsafePointer<Int16>) -> Int16 {
    let index = 256 + Int(value >> 7)
    let offset = Int32(value & 0x7F)
    let base = table[index]
    let slope = Int32(table[index + 1] &- base)
    return base &+ Int16(truncatingIfNeeded: (slope * offset + 64) >> 7)
  }

  /// The logistic function sampled at i/24 for i = 0...255, in unsigned Q0.16 (the published
  /// table of TFLite's 16-bit LOGISTIC and TANH kernels; tanh(x) = 2·logistic(2x) − 1).
  @usableFromInline package static let logisticQ16: [UInt16] = [
    32768, 33451, 34133, 34813, 35493, 36169, 36843, 37513, 38180, 38841, 39498, 40149, 40794, 41432, 42064, 42688,
    43304, 43912, 44511, 45102, 45683, 46255, 46817, 47369, 47911, 48443, 48964, 49475, 49975, 50464, 50942, 51409,
    51865, 52311, 52745, 53169, 53581, 53983, 54374, 54755, 55125, 55485, 55834, 56174, 56503, 56823, 57133, 57433,
    57724, 58007, 58280, 58544, 58800, 59048, 59288, 59519, 59743, 59959, 60168, 60370, 60565, 60753, 60935, 61110,
    61279, 61441, 61599, 61750, 61896, 62036, 62172, 62302, 62428, 62549, 62666, 62778, 62886, 62990, 63090, 63186,
    63279, 63368, 63454, 63536, 63615, 63691, 63765, 63835, 63903, 63968, 64030, 64090, 64148, 64204, 64257, 64308,
    64357, 64405, 64450, 64494, 64536, 64576, 64614, 64652, 64687, 64721, 64754, 64786, 64816, 64845, 64873, 64900,
    64926, 64950, 64974, 64997, 65019, 65039, 65060, 65079, 65097, 65115, 65132, 65149, 65164, 65179, 65194, 65208,
    65221, 65234, 65246, 65258, 65269, 65280, 65291, 65301, 65310, 65319, 65328, 65337, 65345, 65352, 65360, 65367,
    65374, 65381, 65387, 65393, 65399, 65404, 65410, 65415, 65420, 65425, 65429, 65433, 65438, 65442, 65445, 65449,
    65453, 65456, 65459, 65462, 65465, 65468, 65471, 65474, 65476, 65479, 65481, 65483, 65485, 65488, 65489, 65491,
    65493, 65495, 65497, 65498, 65500, 65501, 65503, 65504, 65505, 65507, 65508, 65509, 65510, 65511, 65512, 65513,
    65514, 65515, 65516, 65517, 65517, 65518, 65519, 65520, 65520, 65521, 65522, 65522, 65523, 65523, 65524, 65524,
    65525, 65525, 65526, 65526, 65526, 65527, 65527, 65528, 65528, 65528, 65529, 65529, 65529, 65529, 65530, 65530,
    65530, 65530, 65531, 65531, 65531, 65531, 65531, 65532, 65532, 65532, 65532, 65532, 65532, 65533, 65533, 65533,
    65533, 65533, 65533, 65533, 65533, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65535,
  ]
}

/// The real functions that quantized kernels tabulate, in the precision LiteRT evaluates them.
@usableFromInline package enum TabulatedFunction {
  /// 1 / (1 + e^(−x)) in float.
  @inlinable package static func logistic(_ x: Float) -> Float { 1 / (1 + expf(-x)) }
  /// tanh(x) in float.
  @inlinable package static func hyperbolicTangent(_ x: Float) -> Float { tanhf(x) }
  /// GELU with the error function: x/2 · erfc(−x/√2), in float.
  @inlinable package static func gelu(_ x: Float) -> Float {
    0.5 * x * erfcf(x * Float(-0.70710678118654752440))
  }
  /// GELU with the tanh approximation: x/2 · (1 + tanh(√(2/π) · (x + 0.044715 x³))), in float.
  @inlinable package static func approximateGelu(_ x: Float) -> Float {
    let squareRootOfTwoOverPi = Float(1.12837916709551257390 * 0.70710678118654752440)
    return 0.5 * x * (1 + tanhf(squareRootOfTwoOverPi * (x + 0.044715 * x * x * x)))
  }
  /// e^x in float.
  @inlinable package static func exponential(_ x: Float) -> Float { expf(x) }
  /// ln x in float.
  @inlinable package static func naturalLogarithm(_ x: Float) -> Float { logf(x) }
  /// ELU: x for x ≥ 0, e^x − 1 below, in float.
  @inlinable package static func exponentialLinearUnit(_ x: Float) -> Float { x < 0 ? expm1f(x) : x }
  /// e^x in double.
  @inlinable package static func exponential(_ x: Double) -> Double { exp(x) }
  /// 1 / (1 + x) in double.
  @inlinable package static func oneOverOnePlus(_ x: Double) -> Double { 1 / (1 + x) }
}

extension FixedPoint {
  /// `value` truncated toward zero to Int32, saturating at the type's bounds (NaN becomes 0).
  @inlinable @inline(__always)
  package static func truncatingConversion(_ value: Float) -> Int32 {
    guard !value.isNaN else { return 0 }
    if value >= 2_147_483_648 { return .max }
    if value < -2_147_483_648 { return .min }
    return Int32(value)
  }

  /// `value.rounded()` (half away from zero) converted as `truncatingConversion` does, without the
  /// C library's `roundf` that `rounded()` becomes in the SSE2 baseline: below 2^30 in magnitude
  /// the truncated whole part and the remaining fraction are exact, so the result is the same.
  @inlinable @inline(__always)
  package static func roundingConversion(_ value: Float) -> Int32 {
    guard value.magnitude < 1_073_741_824 else { return truncatingConversion(value.rounded()) }
    let whole = Int32(value)
    let fraction = value - Float(whole)
    return whole &+ (fraction >= 0.5 ? 1 : fraction <= -0.5 ? -1 : 0)
  }

  /// `value` truncated toward zero to Int32 as the x86-64 conversion instruction does it: NaN and
  /// values outside the Int32 range become `Int32.min` (LiteRT's SQRT converts so).
  @inlinable @inline(__always)
  package static func x86TruncatingConversion(_ value: Float) -> Int32 {
    guard value > -2_147_483_904, value < 2_147_483_648 else { return .min }
    return Int32(value)
  }
}
