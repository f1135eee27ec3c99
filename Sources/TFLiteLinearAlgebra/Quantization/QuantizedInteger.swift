// The integer element types of quantized tensors (INT8, UINT8, INT16, INT32) as one generic
// constraint, with the widening loads and narrowing stores of eight lanes that the integer GEMM
// and the quantized kernels share.

/// The integer element types quantized kernels read and write.
@usableFromInline package protocol QuantizedInteger: FixedWidthInteger, SIMDScalar, Codable {}

extension QuantizedInteger {
  /// Eight consecutive elements at `pointer`, widened to Int32 lanes. (Spelled out lane by lane:
  /// the standard library's generic `SIMD8(truncatingIfNeeded:)` stays an out-of-line call in the
  /// elementwise loops; this form becomes one widening instruction sequence.)
  @inlinable @inline(__always)
  package static func loadWidened(_ pointer: UnsafePointer<Self>) -> SIMD8<Int32> {
    let x = UnsafeRawPointer(pointer).loadUnaligned(as: SIMD8<Self>.self)
    return SIMD8<Int32>(
      Int32(truncatingIfNeeded: x[0]), Int32(truncatingIfNeeded: x[1]), Int32(truncatingIfNeeded: x[2]),
      Int32(truncatingIfNeeded: x[3]), Int32(truncatingIfNeeded: x[4]), Int32(truncatingIfNeeded: x[5]),
      Int32(truncatingIfNeeded: x[6]), Int32(truncatingIfNeeded: x[7]))
  }

  /// Stores eight Int32 lanes (already inside this type's range) as elements at `pointer` (lane by
  /// lane, as ``loadWidened(_:)``).
  @inlinable @inline(__always)
  package static func storeNarrowed(_ lanes: SIMD8<Int32>, to pointer: UnsafeMutablePointer<Self>) {
    let narrowed = SIMD8<Self>(
      Self(truncatingIfNeeded: lanes[0]), Self(truncatingIfNeeded: lanes[1]), Self(truncatingIfNeeded: lanes[2]),
      Self(truncatingIfNeeded: lanes[3]), Self(truncatingIfNeeded: lanes[4]), Self(truncatingIfNeeded: lanes[5]),
      Self(truncatingIfNeeded: lanes[6]), Self(truncatingIfNeeded: lanes[7]))
    UnsafeMutableRawPointer(pointer).storeBytes(of: narrowed, as: SIMD8<Self>.self)
  }
}

extension SIMD8 where Scalar == Int32 {
  /// `min(max(self, range.lowerBound), range.upperBound)` lane by lane. (As compare-and-select:
  /// the standard library's `clamped(lowerBound:upperBound:)` reaches `pointwiseMin`/`pointwiseMax`
  /// out of line from the runtime's specializations.)
  @inlinable @inline(__always)
  package func clamped(to range: ClosedRange<Int32>) -> Self {
    let lower = Self(repeating: range.lowerBound)
    let upper = Self(repeating: range.upperBound)
    var result = self
    result.replace(with: lower, where: result .< lower)
    result.replace(with: upper, where: result .> upper)
    return result
  }

  /// Lanes of `ifNegative` where `selector` is negative, of `self` elsewhere (a branch-free select).
  @inlinable @inline(__always)
  package func replacing(with ifNegative: Self, whereNegative selector: Self) -> Self {
    let mask = selector &>> 31
    return (self & ~mask) | (ifNegative & mask)
  }
}
extension Int8: QuantizedInteger {}
extension UInt8: QuantizedInteger {}
extension Int16: QuantizedInteger {}
extension Int32: QuantizedInteger {}
