// Element types of the elementwise kernels and their 16-lane primitives.
//
// Why per-type conformances: in generic code, `a .< b` on `SIMD16<Scalar>` resolves to the
// standard library's generic lane-by-lane implementation, which compiles to a branchy loop through
// memory (measured 20–25× slower than one vector compare), and comparing a vector with a scalar
// is slow even for concrete types. So every comparison the kernels use is a protocol requirement
// written in a concrete extension (where the vector instruction overloads are chosen), always
// vector against vector. Generic code then combines the masks with `replacing(with:where:)`,
// which specializes well. Integer `&+ &- &*` specialize well from generic code and stay generic.

import TFLiteFormat
import TFLiteLinearAlgebra

/// An element type with fast 16-lane comparisons (float32, the integer widths, bool bytes).
protocol OrderedLaneScalar: SIMDScalar, BitwiseCopyable, Comparable, Hashable, Codable, Sendable {
  /// Lanes where lhs < rhs.
  static func isLess(_ lhs: SIMD16<Self>, _ rhs: SIMD16<Self>) -> SIMDMask<SIMD16<SIMDMaskScalar>>
  /// Lanes where lhs ≤ rhs.
  static func isLessOrEqual(_ lhs: SIMD16<Self>, _ rhs: SIMD16<Self>) -> SIMDMask<SIMD16<SIMDMaskScalar>>
  /// Lanes where lhs = rhs.
  static func isEqual(_ lhs: SIMD16<Self>, _ rhs: SIMD16<Self>) -> SIMDMask<SIMD16<SIMDMaskScalar>>
  /// One byte per lane: 1 where `mask` is set, 0 elsewhere (the layout of bool tensors).
  static func booleanBytes(_ mask: SIMDMask<SIMD16<SIMDMaskScalar>>) -> SIMD16<UInt8>
}

extension Float: OrderedLaneScalar {
  @inline(__always)
  static func isLess(_ lhs: SIMD16<Float>, _ rhs: SIMD16<Float>) -> SIMDMask<SIMD16<Int32>> { lhs .< rhs }
  @inline(__always)
  static func isLessOrEqual(_ lhs: SIMD16<Float>, _ rhs: SIMD16<Float>) -> SIMDMask<SIMD16<Int32>> { lhs .<= rhs }
  @inline(__always)
  static func isEqual(_ lhs: SIMD16<Float>, _ rhs: SIMD16<Float>) -> SIMDMask<SIMD16<Int32>> { lhs .== rhs }
  @inline(__always)
  static func booleanBytes(_ mask: SIMDMask<SIMD16<Int32>>) -> SIMD16<UInt8> { narrowedBooleans(mask) }
}

extension Int32: OrderedLaneScalar {
  @inline(__always)
  static func isLess(_ lhs: SIMD16<Int32>, _ rhs: SIMD16<Int32>) -> SIMDMask<SIMD16<Int32>> { lhs .< rhs }
  @inline(__always)
  static func isLessOrEqual(_ lhs: SIMD16<Int32>, _ rhs: SIMD16<Int32>) -> SIMDMask<SIMD16<Int32>> { lhs .<= rhs }
  @inline(__always)
  static func isEqual(_ lhs: SIMD16<Int32>, _ rhs: SIMD16<Int32>) -> SIMDMask<SIMD16<Int32>> { lhs .== rhs }
  @inline(__always)
  static func booleanBytes(_ mask: SIMDMask<SIMD16<Int32>>) -> SIMD16<UInt8> { narrowedBooleans(mask) }
}

extension Int64: OrderedLaneScalar {
  @inline(__always)
  static func isLess(_ lhs: SIMD16<Int64>, _ rhs: SIMD16<Int64>) -> SIMDMask<SIMD16<Int64>> { lhs .< rhs }
  @inline(__always)
  static func isLessOrEqual(_ lhs: SIMD16<Int64>, _ rhs: SIMD16<Int64>) -> SIMDMask<SIMD16<Int64>> { lhs .<= rhs }
  @inline(__always)
  static func isEqual(_ lhs: SIMD16<Int64>, _ rhs: SIMD16<Int64>) -> SIMDMask<SIMD16<Int64>> { lhs .== rhs }
  @inline(__always)
  static func booleanBytes(_ mask: SIMDMask<SIMD16<Int64>>) -> SIMD16<UInt8> {
    SIMD16<UInt8>(truncatingIfNeeded: SIMD16<Int64>(repeating: 0).replacing(with: 1, where: mask))
  }
}

extension Int16: OrderedLaneScalar {
  @inline(__always)
  static func isLess(_ lhs: SIMD16<Int16>, _ rhs: SIMD16<Int16>) -> SIMDMask<SIMD16<Int16>> { lhs .< rhs }
  @inline(__always)
  static func isLessOrEqual(_ lhs: SIMD16<Int16>, _ rhs: SIMD16<Int16>) -> SIMDMask<SIMD16<Int16>> { lhs .<= rhs }
  @inline(__always)
  static func isEqual(_ lhs: SIMD16<Int16>, _ rhs: SIMD16<Int16>) -> SIMDMask<SIMD16<Int16>> { lhs .== rhs }
  @inline(__always)
  static func booleanBytes(_ mask: SIMDMask<SIMD16<Int16>>) -> SIMD16<UInt8> {
    SIMD16<UInt8>(truncatingIfNeeded: SIMD16<Int16>(repeating: 0).replacing(with: 1, where: mask))
  }
}

extension Int8: OrderedLaneScalar {
  @inline(__always)
  static func isLess(_ lhs: SIMD16<Int8>, _ rhs: SIMD16<Int8>) -> SIMDMask<SIMD16<Int8>> { lhs .< rhs }
  @inline(__always)
  static func isLessOrEqual(_ lhs: SIMD16<Int8>, _ rhs: SIMD16<Int8>) -> SIMDMask<SIMD16<Int8>> { lhs .<= rhs }
  @inline(__always)
  static func isEqual(_ lhs: SIMD16<Int8>, _ rhs: SIMD16<Int8>) -> SIMDMask<SIMD16<Int8>> { lhs .== rhs }
  @inline(__always)
  static func booleanBytes(_ mask: SIMDMask<SIMD16<Int8>>) -> SIMD16<UInt8> { byteBooleans(mask) }
}

extension UInt8: OrderedLaneScalar {
  @inline(__always)
  static func isLess(_ lhs: SIMD16<UInt8>, _ rhs: SIMD16<UInt8>) -> SIMDMask<SIMD16<Int8>> { lhs .< rhs }
  @inline(__always)
  static func isLessOrEqual(_ lhs: SIMD16<UInt8>, _ rhs: SIMD16<UInt8>) -> SIMDMask<SIMD16<Int8>> { lhs .<= rhs }
  @inline(__always)
  static func isEqual(_ lhs: SIMD16<UInt8>, _ rhs: SIMD16<UInt8>) -> SIMDMask<SIMD16<Int8>> { lhs .== rhs }
  @inline(__always)
  static func booleanBytes(_ mask: SIMDMask<SIMD16<Int8>>) -> SIMD16<UInt8> { byteBooleans(mask) }
}

/// 1/0 bytes from a mask of 32-bit lanes.
@inline(__always)
private func narrowedBooleans(_ mask: SIMDMask<SIMD16<Int32>>) -> SIMD16<UInt8> {
  SIMD16<UInt8>(truncatingIfNeeded: SIMD16<Int32>(repeating: 0).replacing(with: 1, where: mask))
}

/// 1/0 bytes from a mask of 8-bit lanes.
@inline(__always)
private func byteBooleans(_ mask: SIMDMask<SIMD16<Int8>>) -> SIMD16<UInt8> {
  unsafeBitCast(SIMD16<Int8>(repeating: 0).replacing(with: 1, where: mask), to: SIMD16<UInt8>.self)
}

/// Clamping applied after an operation with a fused activation (RELU, RELU6, RELU_N1_TO_1), and
/// by the RELU-family kernels.
struct ActivationRange<Scalar: OrderedLaneScalar>: Sendable {
  /// Smallest output value.
  let lower: Scalar
  /// Largest output value.
  let upper: Scalar

  /// Clamps each lane to `lower ... upper`; NaN lanes stay NaN.
  @inline(__always)
  func clamp(_ vector: SIMD16<Scalar>) -> SIMD16<Scalar> {
    let lowerBound = SIMD16(repeating: lower)
    let upperBound = SIMD16(repeating: upper)
    let raised = vector.replacing(with: lowerBound, where: Scalar.isLess(vector, lowerBound))
    return raised.replacing(with: upperBound, where: Scalar.isLess(upperBound, raised))
  }
}

/// Element types of the arithmetic kernels and the lane-wise meaning of each operation on them.
protocol ArithmeticScalar: OrderedLaneScalar, Numeric {
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

extension ArithmeticScalar {
  /// lhs > rhs ? lhs : rhs, lane-wise (TFLite's MAXIMUM).
  @inline(__always)
  static func maximum(_ lhs: SIMD16<Self>, _ rhs: SIMD16<Self>) -> SIMD16<Self> {
    rhs.replacing(with: lhs, where: isLess(rhs, lhs))
  }

  /// lhs < rhs ? lhs : rhs, lane-wise (TFLite's MINIMUM).
  @inline(__always)
  static func minimum(_ lhs: SIMD16<Self>, _ rhs: SIMD16<Self>) -> SIMD16<Self> {
    rhs.replacing(with: lhs, where: isLess(lhs, rhs))
  }
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
    let zero = SIMD16<Float>(repeating: 0)
    let truncated = VectorMath.truncatingRemainder(lhs, rhs)
    let adjust = (truncated .!= zero) .& ((rhs .< zero) .!= (truncated .< zero))
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
  static func magnitude(_ x: SIMD16<Self>) -> SIMD16<Self> {
    let zero = SIMD16<Self>(repeating: 0)
    return x.replacing(with: zero &- x, where: isLess(x, zero))
  }

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

extension ActivationRange where Scalar: ArithmeticScalar {
  /// The clamp of a fused activation; TANH and SIGN_BIT are not fused by TFLite's kernels.
  init(_ activation: ActivationFunctionType) throws {
    let unbounded = Scalar.unboundedRange
    switch activation {
    case .none: self = unbounded
    case .relu: self.init(lower: 0, upper: unbounded.upper)
    case .relu6: self.init(lower: 0, upper: 6)
    case .reluN1To1: self.init(lower: -1, upper: 1)
    default: throw KernelError.unsupported("fused activation \(activation.name)")
    }
  }
}

/// Element widths SELECT moves as raw bit patterns.
protocol SelectableLanes: SIMDScalar, BitwiseCopyable, Hashable, Codable {
  /// flags ≠ 0 ? x : y, lane-wise (`flags` are bool bytes).
  static func select(_ flags: SIMD16<UInt8>, _ x: SIMD16<Self>, _ y: SIMD16<Self>) -> SIMD16<Self>
}

extension UInt8: SelectableLanes {
  @inline(__always)
  static func select(_ flags: SIMD16<UInt8>, _ x: SIMD16<UInt8>, _ y: SIMD16<UInt8>) -> SIMD16<UInt8> {
    y.replacing(with: x, where: flags .!= SIMD16(repeating: 0))
  }
}

extension UInt16: SelectableLanes {
  @inline(__always)
  static func select(_ flags: SIMD16<UInt8>, _ x: SIMD16<UInt16>, _ y: SIMD16<UInt16>) -> SIMD16<UInt16> {
    y.replacing(with: x, where: SIMD16<UInt16>(truncatingIfNeeded: flags) .!= SIMD16(repeating: 0))
  }
}

extension UInt32: SelectableLanes {
  @inline(__always)
  static func select(_ flags: SIMD16<UInt8>, _ x: SIMD16<UInt32>, _ y: SIMD16<UInt32>) -> SIMD16<UInt32> {
    y.replacing(with: x, where: SIMD16<UInt32>(truncatingIfNeeded: flags) .!= SIMD16(repeating: 0))
  }
}

extension UInt64: SelectableLanes {
  @inline(__always)
  static func select(_ flags: SIMD16<UInt8>, _ x: SIMD16<UInt64>, _ y: SIMD16<UInt64>) -> SIMD16<UInt64> {
    y.replacing(with: x, where: SIMD16<UInt64>(truncatingIfNeeded: flags) .!= SIMD16(repeating: 0))
  }
}
