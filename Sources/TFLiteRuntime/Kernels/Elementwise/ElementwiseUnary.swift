// Elementwise math of one operand: EXP, LOG, SQRT, RSQRT, SQUARE, ABS, NEG, FLOOR, CEIL, ROUND,
// SIN, COS, SIGN (and, through the same driver, the activations in Activations.swift and LOGICAL_NOT).
//
// `UnaryDriver` streams 16-lane vectors through an operation type, specialized per operation.
// ROUND rounds half to even, as TFLite's reference kernel does.
import TFLiteLinearAlgebra


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
    storeEachVector(
      MappedVectors(StreamedOperand(input, offset: range.lowerBound), operation), count: range.count,
      into: output + range.lowerBound)
  }
}

/// x / divisor, lane-wise (TFLite divides, so the kernels do too rather than multiplying by 1/divisor).
struct DivisionByScalarOperation: UnaryLanewiseOperation {
  /// The divisor.
  let divisor: Float

  @inline(__always)
  func callAsFunction(_ x: SIMD16<Float>) -> SIMD16<Float> { x / divisor }
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
  static func apply(_ x: SIMD16<Float>) -> SIMD16<Float> { VectorMath.floor(x) }
}

/// CEIL.
enum Ceiling: FloatFunctionKind {
  static let operatorName = "CEIL"
  @inline(__always)
  static func apply(_ x: SIMD16<Float>) -> SIMD16<Float> { VectorMath.ceiling(x) }
}

/// ROUND: to the nearest integer, halves to even.
enum RoundHalfToEven: FloatFunctionKind {
  static let operatorName = "ROUND"
  @inline(__always)
  static func apply(_ x: SIMD16<Float>) -> SIMD16<Float> { VectorMath.roundedToNearestEven(x) }
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

/// The kernel definition of the float functions.
struct FloatFunctionDefinition<Kind: FloatFunctionKind>: UnaryKernelDefinition {
  init(node: Node, input: RuntimeTensor, output: RuntimeTensor) throws {
    _ = try commonElementType([input, output], allowed: [.float32], operatorName: Kind.operatorName)
  }

  var minimumChunk: Int { costlyElementwiseChunk }

  // Specialized entries, as for the binary arithmetic (see `ArithmeticDefinition.run`).
  @_specialize(exported: false, where Kind == HyperbolicTangent)
  @_specialize(exported: false, where Kind == HardSwish)
  @_specialize(exported: false, where Kind == ExponentialLinearUnit)
  @_specialize(exported: false, where Kind == GeluExact)
  @_specialize(exported: false, where Kind == GeluTanhApproximation)
  @_specialize(exported: false, where Kind == Exponential)
  @_specialize(exported: false, where Kind == NaturalLogarithm)
  @_specialize(exported: false, where Kind == SquareRoot)
  @_specialize(exported: false, where Kind == ReciprocalSquareRoot)
  @_specialize(exported: false, where Kind == Square)
  @_specialize(exported: false, where Kind == Floor)
  @_specialize(exported: false, where Kind == Ceiling)
  @_specialize(exported: false, where Kind == RoundHalfToEven)
  @_specialize(exported: false, where Kind == Sine)
  @_specialize(exported: false, where Kind == Cosine)
  func run(input: UnsafeRawPointer, output: UnsafeMutableRawPointer, range: Range<Int>) {
    UnaryDriver.run(FloatFunction<Kind>(), input: input, output: output, range: range)
  }
}

/// A unary operation defined for floats and integers, named by its TFLite operator.
protocol ArithmeticUnaryKind {
  /// The TFLite operator name.
  static var operatorName: String { get }
  /// The element types the kernel runs.
  static var elementTypes: [ElementType] { get }
  /// The result lanes.
  static func apply<Scalar: ArithmeticScalar>(_ x: SIMD16<Scalar>) -> SIMD16<Scalar>
}

/// NEG (integers wrap; int8 and int16 are negated raw, whatever their quantization, as TFLite does).
enum Negation: ArithmeticUnaryKind {
  static let operatorName = "NEG"
  static let elementTypes: [ElementType] = [.float32, .int32, .int64, .int8, .int16]
  @inline(__always)
  static func apply<Scalar: ArithmeticScalar>(_ x: SIMD16<Scalar>) -> SIMD16<Scalar> { Scalar.negate(x) }
}

/// ABS (integers wrap at the minimum value; quantized int8 and int16 belong to the quantized kernels).
enum AbsoluteValue: ArithmeticUnaryKind {
  static let operatorName = "ABS"
  static let elementTypes: [ElementType] = [.float32, .int32, .int16]
  @inline(__always)
  static func apply<Scalar: ArithmeticScalar>(_ x: SIMD16<Scalar>) -> SIMD16<Scalar> { Scalar.magnitude(x) }
}

/// SIGN: 1, 0 or −1 (0 for NaN).
enum Sign: ArithmeticUnaryKind {
  static let operatorName = "SIGN"
  static let elementTypes: [ElementType] = [.float32, .int32]
  @inline(__always)
  static func apply<Scalar: ArithmeticScalar>(_ x: SIMD16<Scalar>) -> SIMD16<Scalar> {
    let zero = SIMD16<Scalar>(repeating: 0)
    return zero.replacing(with: 1, where: Scalar.isLess(zero, x)).replacing(with: -1, where: Scalar.isLess(x, zero))
  }
}

/// The unary operation that applies an `ArithmeticUnaryKind` to `Scalar` lanes.
struct ArithmeticUnaryOperation<Scalar: ArithmeticScalar, Kind: ArithmeticUnaryKind>: UnaryLanewiseOperation {
  @inline(__always)
  func callAsFunction(_ x: SIMD16<Scalar>) -> SIMD16<Scalar> { Kind.apply(x) }
}

/// The kernel definition of NEG and ABS.
struct ArithmeticUnaryDefinition<Kind: ArithmeticUnaryKind>: UnaryKernelDefinition {
  private let type: ElementType

  init(node: Node, input: RuntimeTensor, output: RuntimeTensor) throws {
    type = try commonElementType([input, output], allowed: Kind.elementTypes, operatorName: Kind.operatorName)
  }

  var minimumChunk: Int { cheapElementwiseChunk }

  func run(input: UnsafeRawPointer, output: UnsafeMutableRawPointer, range: Range<Int>) {
    switch type {
    case .float32: UnaryDriver.run(ArithmeticUnaryOperation<Float, Kind>(), input: input, output: output, range: range)
    case .int32: UnaryDriver.run(ArithmeticUnaryOperation<Int32, Kind>(), input: input, output: output, range: range)
    case .int16: UnaryDriver.run(ArithmeticUnaryOperation<Int16, Kind>(), input: input, output: output, range: range)
    case .int8: UnaryDriver.run(ArithmeticUnaryOperation<Int8, Kind>(), input: input, output: output, range: range)
    default: UnaryDriver.run(ArithmeticUnaryOperation<Int64, Kind>(), input: input, output: output, range: range)
    }
  }
}
