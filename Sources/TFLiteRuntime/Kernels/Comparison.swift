// Broadcasting comparisons with bool output (EQUAL, NOT_EQUAL, LESS, LESS_EQUAL, GREATER,
// GREATER_EQUAL) and logical operators (LOGICAL_AND, LOGICAL_OR, LOGICAL_NOT).
//
// Bool tensors hold one byte per element, 0 or 1; logical operators treat any non-zero byte as
// true and always write 0 or 1.

/// One byte per lane: 1 where `mask` is set, 0 elsewhere.
@inline(__always)
func booleanBytes<Lane: SIMDScalar & FixedWidthInteger & SignedInteger>(
  _ mask: SIMDMask<SIMD16<Lane>>
) -> SIMD16<UInt8> where Lane.SIMDMaskScalar == Lane {
  SIMD16<UInt8>(truncatingIfNeeded: SIMD16<Lane>(repeating: 0).replacing(with: 1, where: mask))
}

/// Which comparison a `ComparisonOperation` performs.
protocol ComparisonKind {
  /// The TFLite operator name.
  static var operatorName: String { get }
  /// Lanes where the comparison holds.
  static func holds<Scalar: SIMDScalar & Comparable>(
    _ lhs: SIMD16<Scalar>, _ rhs: SIMD16<Scalar>
  ) -> SIMDMask<SIMD16<Scalar.SIMDMaskScalar>>
}

/// EQUAL.
enum EqualComparison: ComparisonKind {
  static let operatorName = "EQUAL"
  @inline(__always)
  static func holds<Scalar: SIMDScalar & Comparable>(
    _ lhs: SIMD16<Scalar>, _ rhs: SIMD16<Scalar>
  ) -> SIMDMask<SIMD16<Scalar.SIMDMaskScalar>> { lhs .== rhs }
}

/// NOT_EQUAL.
enum NotEqualComparison: ComparisonKind {
  static let operatorName = "NOT_EQUAL"
  @inline(__always)
  static func holds<Scalar: SIMDScalar & Comparable>(
    _ lhs: SIMD16<Scalar>, _ rhs: SIMD16<Scalar>
  ) -> SIMDMask<SIMD16<Scalar.SIMDMaskScalar>> { lhs .!= rhs }
}

/// LESS.
enum LessComparison: ComparisonKind {
  static let operatorName = "LESS"
  @inline(__always)
  static func holds<Scalar: SIMDScalar & Comparable>(
    _ lhs: SIMD16<Scalar>, _ rhs: SIMD16<Scalar>
  ) -> SIMDMask<SIMD16<Scalar.SIMDMaskScalar>> { lhs .< rhs }
}

/// LESS_EQUAL.
enum LessEqualComparison: ComparisonKind {
  static let operatorName = "LESS_EQUAL"
  @inline(__always)
  static func holds<Scalar: SIMDScalar & Comparable>(
    _ lhs: SIMD16<Scalar>, _ rhs: SIMD16<Scalar>
  ) -> SIMDMask<SIMD16<Scalar.SIMDMaskScalar>> { lhs .<= rhs }
}

/// GREATER.
enum GreaterComparison: ComparisonKind {
  static let operatorName = "GREATER"
  @inline(__always)
  static func holds<Scalar: SIMDScalar & Comparable>(
    _ lhs: SIMD16<Scalar>, _ rhs: SIMD16<Scalar>
  ) -> SIMDMask<SIMD16<Scalar.SIMDMaskScalar>> { lhs .> rhs }
}

/// GREATER_EQUAL.
enum GreaterEqualComparison: ComparisonKind {
  static let operatorName = "GREATER_EQUAL"
  @inline(__always)
  static func holds<Scalar: SIMDScalar & Comparable>(
    _ lhs: SIMD16<Scalar>, _ rhs: SIMD16<Scalar>
  ) -> SIMDMask<SIMD16<Scalar.SIMDMaskScalar>> { lhs .>= rhs }
}

/// A comparison of two operands of `Scalar` into bool bytes.
struct ComparisonOperation<Scalar: SIMDScalar & Comparable & BitwiseCopyable, Kind: ComparisonKind>: BinaryLanewiseOperation
where Scalar.SIMDMaskScalar.SIMDMaskScalar == Scalar.SIMDMaskScalar {
  @inline(__always)
  func callAsFunction(_ lhs: SIMD16<Scalar>, _ rhs: SIMD16<Scalar>) -> SIMD16<UInt8> {
    booleanBytes(Kind.holds(lhs, rhs))
  }
}

/// LOGICAL_AND.
struct LogicalAndOperation: BinaryLanewiseOperation {
  @inline(__always)
  func callAsFunction(_ lhs: SIMD16<UInt8>, _ rhs: SIMD16<UInt8>) -> SIMD16<UInt8> {
    booleanBytes((lhs .!= 0) .& (rhs .!= 0))
  }
}

/// LOGICAL_OR.
struct LogicalOrOperation: BinaryLanewiseOperation {
  @inline(__always)
  func callAsFunction(_ lhs: SIMD16<UInt8>, _ rhs: SIMD16<UInt8>) -> SIMD16<UInt8> {
    booleanBytes((lhs .!= 0) .| (rhs .!= 0))
  }
}

/// LOGICAL_NOT.
struct LogicalNotOperation: UnaryLanewiseOperation {
  @inline(__always)
  func callAsFunction(_ x: SIMD16<UInt8>) -> SIMD16<UInt8> { booleanBytes(x .== 0) }
}
