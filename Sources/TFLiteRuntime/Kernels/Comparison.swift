// Broadcasting comparisons with bool output (EQUAL, NOT_EQUAL, LESS, LESS_EQUAL, GREATER,
// GREATER_EQUAL) and logical operators (LOGICAL_AND, LOGICAL_OR, LOGICAL_NOT).
//
// Bool tensors hold one byte per element, 0 or 1; logical operators treat any non-zero byte as
// true and always write 0 or 1.

/// Which comparison a `ComparisonOperation` performs.
protocol ComparisonKind {
  /// The TFLite operator name.
  static var operatorName: String { get }
  /// Bool bytes: 1 where the comparison holds.
  static func evaluate<Scalar: OrderedLaneScalar>(_ lhs: SIMD16<Scalar>, _ rhs: SIMD16<Scalar>) -> SIMD16<UInt8>
}

/// EQUAL.
enum EqualComparison: ComparisonKind {
  static let operatorName = "EQUAL"
  @inline(__always)
  static func evaluate<Scalar: OrderedLaneScalar>(_ lhs: SIMD16<Scalar>, _ rhs: SIMD16<Scalar>) -> SIMD16<UInt8> {
    Scalar.booleanBytes(Scalar.isEqual(lhs, rhs))
  }
}

/// NOT_EQUAL (true for NaN operands).
enum NotEqualComparison: ComparisonKind {
  static let operatorName = "NOT_EQUAL"
  @inline(__always)
  static func evaluate<Scalar: OrderedLaneScalar>(_ lhs: SIMD16<Scalar>, _ rhs: SIMD16<Scalar>) -> SIMD16<UInt8> {
    Scalar.booleanBytes(Scalar.isEqual(lhs, rhs)) ^ SIMD16(repeating: 1)
  }
}

/// LESS.
enum LessComparison: ComparisonKind {
  static let operatorName = "LESS"
  @inline(__always)
  static func evaluate<Scalar: OrderedLaneScalar>(_ lhs: SIMD16<Scalar>, _ rhs: SIMD16<Scalar>) -> SIMD16<UInt8> {
    Scalar.booleanBytes(Scalar.isLess(lhs, rhs))
  }
}

/// LESS_EQUAL.
enum LessEqualComparison: ComparisonKind {
  static let operatorName = "LESS_EQUAL"
  @inline(__always)
  static func evaluate<Scalar: OrderedLaneScalar>(_ lhs: SIMD16<Scalar>, _ rhs: SIMD16<Scalar>) -> SIMD16<UInt8> {
    Scalar.booleanBytes(Scalar.isLessOrEqual(lhs, rhs))
  }
}

/// GREATER.
enum GreaterComparison: ComparisonKind {
  static let operatorName = "GREATER"
  @inline(__always)
  static func evaluate<Scalar: OrderedLaneScalar>(_ lhs: SIMD16<Scalar>, _ rhs: SIMD16<Scalar>) -> SIMD16<UInt8> {
    Scalar.booleanBytes(Scalar.isLess(rhs, lhs))
  }
}

/// GREATER_EQUAL.
enum GreaterEqualComparison: ComparisonKind {
  static let operatorName = "GREATER_EQUAL"
  @inline(__always)
  static func evaluate<Scalar: OrderedLaneScalar>(_ lhs: SIMD16<Scalar>, _ rhs: SIMD16<Scalar>) -> SIMD16<UInt8> {
    Scalar.booleanBytes(Scalar.isLessOrEqual(rhs, lhs))
  }
}

/// A comparison of two operands of `Scalar` into bool bytes.
struct ComparisonOperation<Scalar: OrderedLaneScalar, Kind: ComparisonKind>: BinaryLanewiseOperation {
  @inline(__always)
  func callAsFunction(_ lhs: SIMD16<Scalar>, _ rhs: SIMD16<Scalar>) -> SIMD16<UInt8> {
    Kind.evaluate(lhs, rhs)
  }
}

/// Lanes of bool bytes that are true (non-zero).
@inline(__always)
private func isTrue(_ bytes: SIMD16<UInt8>) -> SIMDMask<SIMD16<Int8>> {
  bytes .!= SIMD16(repeating: 0)
}

/// LOGICAL_AND.
struct LogicalAndOperation: BinaryLanewiseOperation {
  @inline(__always)
  func callAsFunction(_ lhs: SIMD16<UInt8>, _ rhs: SIMD16<UInt8>) -> SIMD16<UInt8> {
    UInt8.booleanBytes(isTrue(lhs) .& isTrue(rhs))
  }
}

/// LOGICAL_OR.
struct LogicalOrOperation: BinaryLanewiseOperation {
  @inline(__always)
  func callAsFunction(_ lhs: SIMD16<UInt8>, _ rhs: SIMD16<UInt8>) -> SIMD16<UInt8> {
    UInt8.booleanBytes(isTrue(lhs) .| isTrue(rhs))
  }
}

/// LOGICAL_NOT.
struct LogicalNotOperation: UnaryLanewiseOperation {
  @inline(__always)
  func callAsFunction(_ x: SIMD16<UInt8>) -> SIMD16<UInt8> { UInt8.booleanBytes(.!isTrue(x)) }
}
