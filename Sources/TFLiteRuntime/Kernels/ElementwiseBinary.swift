// Broadcasting binary arithmetic: ADD, SUB, MUL, DIV, SQUARED_DIFFERENCE, MAXIMUM, MINIMUM, POW,
// FLOOR_DIV, FLOOR_MOD.
//
// One driver (`BinaryDriver`) walks a `BroadcastLayout` and feeds 16-lane vectors to an operation
// type; the operation is a generic struct, so each (operation, element type) pair is specialized
// and the hot loop has no dynamic dispatch. Semantics follow TFLite's reference kernels:
// integer arithmetic wraps, FLOOR_DIV/FLOOR_MOD round toward −∞ (the remainder takes the
// divisor's sign), integer division by zero is an error, MAXIMUM/MINIMUM pick `a > b ? a : b`.

/// An elementwise function of two operands, evaluated 16 lanes at a time.
protocol BinaryLanewiseOperation {
  /// Element type of both operands.
  associatedtype Operand: SIMDScalar & BitwiseCopyable
  /// Element type of the result.
  associatedtype Result: SIMDScalar & BitwiseCopyable
  /// The result lanes for operand lanes `lhs` and `rhs`.
  func callAsFunction(_ lhs: SIMD16<Operand>, _ rhs: SIMD16<Operand>) -> SIMD16<Result>
}

/// Runs binary operations over broadcast operands.
enum BinaryDriver {
  /// Computes output elements `range` of `layout` (built from the shapes of `lhs` and `rhs`).
  static func run<Operation: BinaryLanewiseOperation>(
    _ operation: Operation, layout: BroadcastLayout,
    lhs: UnsafePointer<Operation.Operand>, rhs: UnsafePointer<Operation.Operand>,
    output: UnsafeMutablePointer<Operation.Result>, range: Range<Int>
  ) {
    switch (layout.innerStride(of: 0), layout.innerStride(of: 1)) {
    case (0, 0):
      run(operation, layout, lhs, rhs, output, range,
          RepeatedOperand<Operation.Operand>.self, RepeatedOperand<Operation.Operand>.self)
    case (0, _):
      run(operation, layout, lhs, rhs, output, range,
          RepeatedOperand<Operation.Operand>.self, StreamedOperand<Operation.Operand>.self)
    case (_, 0):
      run(operation, layout, lhs, rhs, output, range,
          StreamedOperand<Operation.Operand>.self, RepeatedOperand<Operation.Operand>.self)
    default:
      run(operation, layout, lhs, rhs, output, range,
          StreamedOperand<Operation.Operand>.self, StreamedOperand<Operation.Operand>.self)
    }
  }

  @inline(__always)
  private static func run<Operation: BinaryLanewiseOperation, Left: VectorSource, Right: VectorSource>(
    _ operation: Operation, _ layout: BroadcastLayout,
    _ lhs: UnsafePointer<Operation.Operand>, _ rhs: UnsafePointer<Operation.Operand>,
    _ output: UnsafeMutablePointer<Operation.Result>, _ range: Range<Int>,
    _: Left.Type, _: Right.Type
  ) where Left.Scalar == Operation.Operand, Right.Scalar == Operation.Operand {
    layout.forEachSegment(in: range) { start, lhsOffset, rhsOffset, _, count in
      let left = Left(lhs, offset: lhsOffset)
      let right = Right(rhs, offset: rhsOffset)
      storeEachVector(count: count, into: output + start) { index, lanes in
        operation(left.vector(at: index, lanes: lanes), right.vector(at: index, lanes: lanes))
      }
    }
  }
}

/// Clamping applied after an operation with a fused activation (RELU, RELU6, RELU_N1_TO_1).
struct ActivationRange<Scalar: SIMDScalar & Comparable>: Sendable where Scalar: Sendable {
  /// Smallest output value.
  let lower: Scalar
  /// Largest output value.
  let upper: Scalar

  /// Clamps each lane to `lower ... upper`; NaN lanes stay NaN.
  @inline(__always)
  func clamp(_ vector: SIMD16<Scalar>) -> SIMD16<Scalar> {
    let raised = vector.replacing(with: lower, where: vector .< lower)
    return raised.replacing(with: upper, where: raised .> upper)
  }
}

/// Element types of the arithmetic kernels and the lane-wise meaning of each operation on them.
protocol ArithmeticScalar: SIMDScalar, BitwiseCopyable, Comparable, Numeric, Hashable, Codable, Sendable {
  /// The range that leaves every value unchanged (activation NONE).
  static var unboundedRange: ActivationRange<Self> { get }
  /// The smallest finite value (the start of a running maximum, as in TFLite).
  static var leastFiniteValue: Self { get }
  /// The largest finite value (the start of a running minimum, as in TFLite).
  static var greatestFiniteValue: Self { get }
  /// lhs + rhs (integers wrap).
  static func add(_ lhs: SIMD16<Self>, _ rhs: SIMD16<Self>) -> SIMD16<Self>
  /// lhs − rhs (integers wrap).
  static func subtract(_ lhs: SIMD16<Self>, _ rhs: SIMD16<Self>) -> SIMD16<Self>
  /// lhs × rhs (integers wrap).
  static func multiply(_ lhs: SIMD16<Self>, _ rhs: SIMD16<Self>) -> SIMD16<Self>
  /// lhs / rhs (integers truncate toward zero; callers reject zero divisors first).
  static func divide(_ lhs: SIMD16<Self>, _ rhs: SIMD16<Self>) -> SIMD16<Self>
  /// ⌊lhs / rhs⌋.
  static func floorDivide(_ lhs: SIMD16<Self>, _ rhs: SIMD16<Self>) -> SIMD16<Self>
  /// lhs − rhs·⌊lhs / rhs⌋: the remainder with the divisor's sign.
  static func floorModulo(_ lhs: SIMD16<Self>, _ rhs: SIMD16<Self>) -> SIMD16<Self>
  /// lhs raised to rhs (integers: callers reject negative exponents first).
  static func power(_ lhs: SIMD16<Self>, _ rhs: SIMD16<Self>) -> SIMD16<Self>
  /// −x (integers wrap).
  static func negate(_ x: SIMD16<Self>) -> SIMD16<Self>
  /// |x| (integers wrap at the minimum value).
  static func magnitude(_ x: SIMD16<Self>) -> SIMD16<Self>
}

extension Float: ArithmeticScalar {
  static var unboundedRange: ActivationRange<Float> { ActivationRange(lower: -.infinity, upper: .infinity) }
  static var leastFiniteValue: Float { -.greatestFiniteMagnitude }
  static var greatestFiniteValue: Float { .greatestFiniteMagnitude }

  @inline(__always)
  static func add(_ lhs: SIMD16<Float>, _ rhs: SIMD16<Float>) -> SIMD16<Float> { lhs + rhs }

  @inline(__always)
  static func subtract(_ lhs: SIMD16<Float>, _ rhs: SIMD16<Float>) -> SIMD16<Float> { lhs - rhs }

  @inline(__always)
  static func multiply(_ lhs: SIMD16<Float>, _ rhs: SIMD16<Float>) -> SIMD16<Float> { lhs * rhs }

  @inline(__always)
  static func divide(_ lhs: SIMD16<Float>, _ rhs: SIMD16<Float>) -> SIMD16<Float> { lhs / rhs }

  /// TFLite divides in double precision before flooring; so does this.
  @inline(__always)
  static func floorDivide(_ lhs: SIMD16<Float>, _ rhs: SIMD16<Float>) -> SIMD16<Float> {
    SIMD16<Float>((SIMD16<Double>(lhs) / SIMD16<Double>(rhs)).rounded(.down))
  }

  @inline(__always)
  static func floorModulo(_ lhs: SIMD16<Float>, _ rhs: SIMD16<Float>) -> SIMD16<Float> {
    let truncated = VectorMath.truncatingRemainder(lhs, rhs)
    let adjust = (truncated .!= 0) .& ((rhs .< 0) .!= (truncated .< 0))
    return truncated.replacing(with: truncated + rhs, where: adjust)
  }

  @inline(__always)
  static func power(_ lhs: SIMD16<Float>, _ rhs: SIMD16<Float>) -> SIMD16<Float> { VectorMath.pow(lhs, rhs) }

  @inline(__always)
  static func negate(_ x: SIMD16<Float>) -> SIMD16<Float> { -x }

  @inline(__always)
  static func magnitude(_ x: SIMD16<Float>) -> SIMD16<Float> { VectorMath.magnitude(x) }
}

extension ArithmeticScalar where Self: FixedWidthInteger {
  static var unboundedRange: ActivationRange<Self> { ActivationRange(lower: .min, upper: .max) }
  static var leastFiniteValue: Self { .min }
  static var greatestFiniteValue: Self { .max }

  @inline(__always)
  static func add(_ lhs: SIMD16<Self>, _ rhs: SIMD16<Self>) -> SIMD16<Self> { lhs &+ rhs }

  @inline(__always)
  static func subtract(_ lhs: SIMD16<Self>, _ rhs: SIMD16<Self>) -> SIMD16<Self> { lhs &- rhs }

  @inline(__always)
  static func multiply(_ lhs: SIMD16<Self>, _ rhs: SIMD16<Self>) -> SIMD16<Self> { lhs &* rhs }

  @inline(__always)
  static func divide(_ lhs: SIMD16<Self>, _ rhs: SIMD16<Self>) -> SIMD16<Self> {
    eachLane(lhs, rhs) { $0.dividedReportingOverflow(by: $1).partialValue }
  }

  @inline(__always)
  static func floorDivide(_ lhs: SIMD16<Self>, _ rhs: SIMD16<Self>) -> SIMD16<Self> {
    eachLane(lhs, rhs) { dividend, divisor in
      let quotient = dividend.dividedReportingOverflow(by: divisor).partialValue
      let remainder = dividend.remainderReportingOverflow(dividingBy: divisor).partialValue
      return remainder != 0 && (remainder < 0) != (divisor < 0) ? quotient &- 1 : quotient
    }
  }

  @inline(__always)
  static func floorModulo(_ lhs: SIMD16<Self>, _ rhs: SIMD16<Self>) -> SIMD16<Self> {
    eachLane(lhs, rhs) { dividend, divisor in
      let remainder = dividend.remainderReportingOverflow(dividingBy: divisor).partialValue
      return remainder != 0 && (remainder < 0) != (divisor < 0) ? remainder &+ divisor : remainder
    }
  }

  @inline(__always)
  static func power(_ lhs: SIMD16<Self>, _ rhs: SIMD16<Self>) -> SIMD16<Self> {
    eachLane(lhs, rhs) { base, exponent in
      var result: Self = 1
      var factor = base
      var remaining = exponent
      while remaining > 0 {
        if remaining & 1 == 1 { result = result &* factor }
        remaining >>= 1
        factor = factor &* factor
      }
      return result
    }
  }

  @inline(__always)
  static func negate(_ x: SIMD16<Self>) -> SIMD16<Self> { SIMD16(repeating: 0) &- x }

  @inline(__always)
  static func magnitude(_ x: SIMD16<Self>) -> SIMD16<Self> { x.replacing(with: SIMD16(repeating: 0) &- x, where: x .< 0) }

  /// Applies a scalar function to each pair of lanes.
  @inline(__always)
  private static func eachLane(
    _ lhs: SIMD16<Self>, _ rhs: SIMD16<Self>, _ function: (Self, Self) -> Self
  ) -> SIMD16<Self> {
    var result = lhs
    for lane in 0..<vectorLaneCount { result[lane] = function(lhs[lane], rhs[lane]) }
    return result
  }
}

extension Int32: ArithmeticScalar {}
extension Int64: ArithmeticScalar {}
extension Int16: ArithmeticScalar {}
extension Int8: ArithmeticScalar {}
extension UInt8: ArithmeticScalar {}

/// Which arithmetic operation an `ArithmeticOperation` performs.
protocol ArithmeticKind {
  /// The TFLite operator name (for messages).
  static var operatorName: String { get }
  /// True when integer operands must not contain a zero divisor (DIV, FLOOR_DIV, FLOOR_MOD).
  static var rejectsZeroDivisor: Bool { get }
  /// True when integer operands must not contain a negative exponent (POW).
  static var rejectsNegativeExponent: Bool { get }
  /// The result lanes.
  static func apply<Scalar: ArithmeticScalar>(_ lhs: SIMD16<Scalar>, _ rhs: SIMD16<Scalar>) -> SIMD16<Scalar>
}

extension ArithmeticKind {
  static var rejectsZeroDivisor: Bool { false }
  static var rejectsNegativeExponent: Bool { false }
}

/// ADD.
enum Addition: ArithmeticKind {
  static let operatorName = "ADD"
  @inline(__always)
  static func apply<Scalar: ArithmeticScalar>(_ lhs: SIMD16<Scalar>, _ rhs: SIMD16<Scalar>) -> SIMD16<Scalar> {
    Scalar.add(lhs, rhs)
  }
}

/// SUB.
enum Subtraction: ArithmeticKind {
  static let operatorName = "SUB"
  @inline(__always)
  static func apply<Scalar: ArithmeticScalar>(_ lhs: SIMD16<Scalar>, _ rhs: SIMD16<Scalar>) -> SIMD16<Scalar> {
    Scalar.subtract(lhs, rhs)
  }
}

/// MUL.
enum Multiplication: ArithmeticKind {
  static let operatorName = "MUL"
  @inline(__always)
  static func apply<Scalar: ArithmeticScalar>(_ lhs: SIMD16<Scalar>, _ rhs: SIMD16<Scalar>) -> SIMD16<Scalar> {
    Scalar.multiply(lhs, rhs)
  }
}

/// DIV.
enum Division: ArithmeticKind {
  static let operatorName = "DIV"
  static var rejectsZeroDivisor: Bool { true }
  @inline(__always)
  static func apply<Scalar: ArithmeticScalar>(_ lhs: SIMD16<Scalar>, _ rhs: SIMD16<Scalar>) -> SIMD16<Scalar> {
    Scalar.divide(lhs, rhs)
  }
}

/// SQUARED_DIFFERENCE: (lhs − rhs)².
enum SquaredDifference: ArithmeticKind {
  static let operatorName = "SQUARED_DIFFERENCE"
  @inline(__always)
  static func apply<Scalar: ArithmeticScalar>(_ lhs: SIMD16<Scalar>, _ rhs: SIMD16<Scalar>) -> SIMD16<Scalar> {
    let difference = Scalar.subtract(lhs, rhs)
    return Scalar.multiply(difference, difference)
  }
}

/// MAXIMUM: lhs > rhs ? lhs : rhs.
enum Maximum: ArithmeticKind {
  static let operatorName = "MAXIMUM"
  @inline(__always)
  static func apply<Scalar: ArithmeticScalar>(_ lhs: SIMD16<Scalar>, _ rhs: SIMD16<Scalar>) -> SIMD16<Scalar> {
    rhs.replacing(with: lhs, where: lhs .> rhs)
  }
}

/// MINIMUM: lhs < rhs ? lhs : rhs.
enum Minimum: ArithmeticKind {
  static let operatorName = "MINIMUM"
  @inline(__always)
  static func apply<Scalar: ArithmeticScalar>(_ lhs: SIMD16<Scalar>, _ rhs: SIMD16<Scalar>) -> SIMD16<Scalar> {
    rhs.replacing(with: lhs, where: lhs .< rhs)
  }
}

/// POW.
enum Power: ArithmeticKind {
  static let operatorName = "POW"
  static var rejectsNegativeExponent: Bool { true }
  @inline(__always)
  static func apply<Scalar: ArithmeticScalar>(_ lhs: SIMD16<Scalar>, _ rhs: SIMD16<Scalar>) -> SIMD16<Scalar> {
    Scalar.power(lhs, rhs)
  }
}

/// FLOOR_DIV.
enum FloorDivision: ArithmeticKind {
  static let operatorName = "FLOOR_DIV"
  static var rejectsZeroDivisor: Bool { true }
  @inline(__always)
  static func apply<Scalar: ArithmeticScalar>(_ lhs: SIMD16<Scalar>, _ rhs: SIMD16<Scalar>) -> SIMD16<Scalar> {
    Scalar.floorDivide(lhs, rhs)
  }
}

/// FLOOR_MOD.
enum FloorModulo: ArithmeticKind {
  static let operatorName = "FLOOR_MOD"
  static var rejectsZeroDivisor: Bool { true }
  @inline(__always)
  static func apply<Scalar: ArithmeticScalar>(_ lhs: SIMD16<Scalar>, _ rhs: SIMD16<Scalar>) -> SIMD16<Scalar> {
    Scalar.floorModulo(lhs, rhs)
  }
}

/// An arithmetic operation followed by its fused activation clamp.
struct ArithmeticOperation<Scalar: ArithmeticScalar, Kind: ArithmeticKind>: BinaryLanewiseOperation {
  /// Output clamp (unbounded when the activation is NONE).
  let activation: ActivationRange<Scalar>

  @inline(__always)
  func callAsFunction(_ lhs: SIMD16<Scalar>, _ rhs: SIMD16<Scalar>) -> SIMD16<Scalar> {
    activation.clamp(Kind.apply(lhs, rhs))
  }
}
