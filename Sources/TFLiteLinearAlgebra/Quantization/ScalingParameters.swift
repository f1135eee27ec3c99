// How TFLite's kernels derive their fixed-point parameters from real scales at prepare time.

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

extension QuantizedMultiplier {
  /// The mantissa reduced to 16 bits with rounding (saturating at Int16.max), as the 16-bit
  /// fixed-point kernels (HARD_SWISH) use it.
  @inlinable package var sixteenBitMantissa: Int16 {
    if multiplier >= Int32.max - (1 << 15) { return .max }
    return Int16(truncatingIfNeeded: (multiplier + (1 << 15)) >> 16)
  }
}

extension FixedPoint {
  /// log2(x) rounded to the nearest integer, computed in float as TFLite does, and whether x is a
  /// power of two (the fractional part is below 0.001).
  @inlinable package static func checkedLog2(_ x: Float) -> (log2: Int, isPowerOfTwo: Bool) {
    let exact = logf(x) * (1 / logf(2))
    let rounded = exact.rounded(.toNearestOrAwayFromZero)
    guard rounded.isFinite, rounded.magnitude < 1_073_741_824 else { return (0, false) }
    return (Int(rounded), (exact - rounded).magnitude < 1e-3)
  }

  /// The largest input difference (in raw input units, after a left shift of `inputLeftShift`)
  /// that still fits a Q(`integerBits`) value of `totalBits` signed bits: TFLite's
  /// `CalculateInputRadius`.
  @inlinable package static func inputRadius(integerBits: Int, inputLeftShift: Int, totalBits: Int = 31) -> Int32 {
    let rescaled =
      Double((1 << integerBits) - 1) * Double(Int64(1) << (totalBits - integerBits)) / Double(Int64(1) << inputLeftShift)
    return Int32(clamping: Int64(rescaled.rounded(.down)))
  }

  /// The multiplier that turns a difference of raw 8-bit softmax inputs into a Q(`integerBits`)
  /// value of β·Δ: β · scale · 2^(31 − integerBits), capped below 2^31 (2^30 under single rounding).
  @inlinable package static func softmaxInputMultiplier(
    beta: Double, inputScale: Double, integerBits: Int, rounding policy: RoundingPolicy
  ) -> QuantizedMultiplier {
    let cap = policy == .singleRounding ? Double((1 << 30) - 1) : Double((Int64(1) << 31) - 1)
    let real = min(beta * inputScale * Double(1 << (31 - integerBits)), cap)
    return QuantizedMultiplier(real, rounding: policy)
  }
}
