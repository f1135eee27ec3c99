/// Conversions between `Float` and IEEE 754 half precision (binary16) bit patterns, written out
/// by hand because `Float16` is unavailable on some Apple targets (macOS on Intel).
public enum HalfPrecision {
  /// The `Float` equal to the half-precision number with bit pattern `bits` (exact; NaN payloads kept).
  public static func float(fromBits bits: UInt16) -> Float {
    let sign = UInt32(bits & 0x8000) << 16
    let exponent = UInt32(bits >> 10) & 0x1F
    let mantissa = UInt32(bits & 0x3FF)
    switch exponent {
    case 0:
      // Zero or subnormal: mantissa units of 2^-24.
      let magnitude = Float(mantissa) * 0x1p-24
      return sign == 0 ? magnitude : -magnitude
    case 0x1F:
      return Float(bitPattern: sign | 0x7F80_0000 | mantissa << 13)
    default:
      return Float(bitPattern: sign | (exponent + 112) << 23 | mantissa << 13)
    }
  }

  /// The half-precision bit pattern nearest to `value` (ties to even; too large becomes infinity;
  /// NaN stays NaN).
  public static func bits(from value: Float) -> UInt16 {
    let pattern = value.bitPattern
    let sign = UInt16(truncatingIfNeeded: pattern >> 16) & 0x8000
    let exponent = Int((pattern >> 23) & 0xFF)
    let mantissa = pattern & 0x7F_FFFF
    if exponent == 0xFF {
      let payload = UInt16(truncatingIfNeeded: mantissa >> 13)
      return sign | 0x7C00 | (mantissa == 0 ? 0 : max(payload, 1))
    }
    let unbiased = exponent - 127
    if unbiased > 15 { return sign | 0x7C00 }
    if unbiased >= -14 {
      let truncated = UInt32(unbiased + 15) << 10 | mantissa >> 13
      return sign | UInt16(truncatingIfNeeded: roundedToEven(truncated, remainder: mantissa & 0x1FFF, halfway: 0x1000))
    }
    if unbiased < -25 { return sign }
    // Subnormal half: count units of 2^-24 in the full 24-bit significand.
    let significand = mantissa | 0x80_0000
    let shift = UInt32(-(unbiased + 1))
    let truncated = significand >> shift
    let remainder = significand & ((1 << shift) - 1)
    return sign | UInt16(truncatingIfNeeded: roundedToEven(truncated, remainder: remainder, halfway: 1 << (shift - 1)))
  }

  /// `truncated` rounded up when the dropped `remainder` is above `halfway`, or equal to it and
  /// `truncated` is odd. A carry into the exponent field is the correct result.
  private static func roundedToEven(_ truncated: UInt32, remainder: UInt32, halfway: UInt32) -> UInt32 {
    remainder > halfway || (remainder == halfway && truncated & 1 == 1) ? truncated + 1 : truncated
  }
}
