// Elementwise math of one operand: EXP, LOG, SQRT, RSQRT, SQUARE, ABS, NEG, FLOOR, CEIL, ROUND,
// SIN, COS (and, through the same driver, the activations in Activations.swift and LOGICAL_NOT).
//
// `UnaryDriver` streams 16-lane vectors through an operation type, specialized per operation.
// ROUND rounds half to even, as TFLite's reference kernel does.

/// An elementwise function of one operand, evaluated 16 lanes at a time.
protocol UnaryLanewiseOperation {
  /// Element type of the operand.
  associatedtype Operand: SIMDScalar & BitwiseCopyable
  /// Element type of the result.
  associatedtype Result: SIMDScalar & BitwiseCopyable
  /// The result lanes for operand lanes `x`.
  func callAsFunction(_ x: SIMD16<Operand>) -> SIMD16<Result>
}

/// Runs unary operations over contiguous tensors.
enum UnaryDriver {
  /// Computes output elements `range` from the same elements of `input`.
  static func run<Operation: UnaryLanewiseOperation>(
    _ operation: Operation, input: UnsafePointer<Operation.Operand>,
    output: UnsafeMutablePointer<Operation.Result>, range: Range<Int>
  ) {
    let source = StreamedOperand(input, offset: range.lowerBound)
    storeEachVector(count: range.count, into: output + range.lowerBound) { index, lanes in
      operation(source.vector(at: index, lanes: lanes))
    }
  }
}

/// A float function without parameters, named by its TFLite operator.
protocol FloatFunctionKind {
  /// The TFLite operator name.
  static var operatorName: String { get }
  /// The result lanes.
  static func apply(_ x: SIMD16<Float>) -> SIMD16<Float>
}

/// The unary operation that applies a `FloatFunctionKind`.
struct FloatFunction<Kind: FloatFunctionKind>: UnaryLanewiseOperation {
  @inline(__always)
  func callAsFunction(_ x: SIMD16<Float>) -> SIMD16<Float> { Kind.apply(x) }
}

/// EXP.
enum Exponential: FloatFunctionKind {
  static let operatorName = "EXP"
  @inline(__always)
  static func apply(_ x: SIMD16<Float>) -> SIMD16<Float> { VectorMath.exp(x) }
}

/// LOG.
enum NaturalLogarithm: FloatFunctionKind {
  static let operatorName = "LOG"
  @inline(__always)
  static func apply(_ x: SIMD16<Float>) -> SIMD16<Float> { VectorMath.log(x) }
}

/// SQRT.
enum SquareRoot: FloatFunctionKind {
  static let operatorName = "SQRT"
  @inline(__always)
  static func apply(_ x: SIMD16<Float>) -> SIMD16<Float> { x.squareRoot() }
}

/// RSQRT: 1 / √x.
enum ReciprocalSquareRoot: FloatFunctionKind {
  static let operatorName = "RSQRT"
  @inline(__always)
  static func apply(_ x: SIMD16<Float>) -> SIMD16<Float> { 1 / x.squareRoot() }
}

/// SQUARE.
enum Square: FloatFunctionKind {
  static let operatorName = "SQUARE"
  @inline(__always)
  static func apply(_ x: SIMD16<Float>) -> SIMD16<Float> { x * x }
}

/// FLOOR.
enum Floor: FloatFunctionKind {
  static let operatorName = "FLOOR"
  @inline(__always)
  static func apply(_ x: SIMD16<Float>) -> SIMD16<Float> { x.rounded(.down) }
}

/// CEIL.
enum Ceiling: FloatFunctionKind {
  static let operatorName = "CEIL"
  @inline(__always)
  static func apply(_ x: SIMD16<Float>) -> SIMD16<Float> { x.rounded(.up) }
}

/// ROUND: to the nearest integer, halves to even.
enum RoundHalfToEven: FloatFunctionKind {
  static let operatorName = "ROUND"
  @inline(__always)
  static func apply(_ x: SIMD16<Float>) -> SIMD16<Float> { x.rounded(.toNearestOrEven) }
}

/// SIN.
enum Sine: FloatFunctionKind {
  static let operatorName = "SIN"
  @inline(__always)
  static func apply(_ x: SIMD16<Float>) -> SIMD16<Float> { VectorMath.sin(x) }
}

/// COS.
enum Cosine: FloatFunctionKind {
  static let operatorName = "COS"
  @inline(__always)
  static func apply(_ x: SIMD16<Float>) -> SIMD16<Float> { VectorMath.cos(x) }
}

/// NEG for float and integer tensors (integers wrap).
struct NegationOperation<Scalar: ArithmeticScalar>: UnaryLanewiseOperation {
  @inline(__always)
  func callAsFunction(_ x: SIMD16<Scalar>) -> SIMD16<Scalar> { Scalar.negate(x) }
}

/// ABS for float and integer tensors (integers wrap at the minimum value).
struct AbsoluteValueOperation<Scalar: ArithmeticScalar>: UnaryLanewiseOperation {
  @inline(__always)
  func callAsFunction(_ x: SIMD16<Scalar>) -> SIMD16<Scalar> { Scalar.magnitude(x) }
}
