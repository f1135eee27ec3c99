// Quantized comparisons: EQUAL, NOT_EQUAL, LESS, LESS_EQUAL, GREATER and GREATER_EQUAL on int8,
// uint8 and int16 tensors with quantization, bit-exact with LiteRT's reference kernels.
//
// TFLite does not compare raw 8-bit values: it brings both inputs to a common real scale,
// (q − zero point) · 2^8 · scale in fixed point, and compares those. The rounding makes nearby
// values equal when 2^8 · scale < 1, and scales of 1 or more give LiteRT's x86-64 results for
// right shifts by negative amounts (see `QuantizedMultiplier.applyAsSmallerThanOne`), so even
// inputs sharing their quantization are compared this way. On int16, EQUAL and NOT_EQUAL scale
// the same way, while the ordering comparisons compare raw values (whatever the quantization),
// as LiteRT does.
import TFLiteLinearAlgebra


/// A comparison of two integers, named by its TFLite operator.
protocol QuantizedComparisonKind {
  static var operatorName: String { get }
  /// Whether int16 inputs are scaled (else compared raw).
  static var scalesSixteenBitInputs: Bool { get }
  /// The lanes where the comparison holds.
  static func holds(_ a: SIMD8<Int32>, _ b: SIMD8<Int32>) -> SIMDMask<SIMD8<Int32>.MaskStorage>
}

/// EQUAL.
enum QuantizedEqual: QuantizedComparisonKind {
  static let operatorName = "EQUAL"
  static let scalesSixteenBitInputs = true
  @inline(__always)
  static func holds(_ a: SIMD8<Int32>, _ b: SIMD8<Int32>) -> SIMDMask<SIMD8<Int32>.MaskStorage> { a .== b }
}

/// NOT_EQUAL.
enum QuantizedNotEqual: QuantizedComparisonKind {
  static let operatorName = "NOT_EQUAL"
  static let scalesSixteenBitInputs = true
  @inline(__always)
  static func holds(_ a: SIMD8<Int32>, _ b: SIMD8<Int32>) -> SIMDMask<SIMD8<Int32>.MaskStorage> { a .!= b }
}

/// LESS.
enum QuantizedLess: QuantizedComparisonKind {
  static let operatorName = "LESS"
  static let scalesSixteenBitInputs = false
  @inline(__always)
  static func holds(_ a: SIMD8<Int32>, _ b: SIMD8<Int32>) -> SIMDMask<SIMD8<Int32>.MaskStorage> { a .< b }
}

/// LESS_EQUAL.
enum QuantizedLessEqual: QuantizedComparisonKind {
  static let operatorName = "LESS_EQUAL"
  static let scalesSixteenBitInputs = false
  @inline(__always)
  static func holds(_ a: SIMD8<Int32>, _ b: SIMD8<Int32>) -> SIMDMask<SIMD8<Int32>.MaskStorage> { a .<= b }
}

/// GREATER.
enum QuantizedGreater: QuantizedComparisonKind {
  static let operatorName = "GREATER"
  static let scalesSixteenBitInputs = false
  @inline(__always)
  static func holds(_ a: SIMD8<Int32>, _ b: SIMD8<Int32>) -> SIMDMask<SIMD8<Int32>.MaskStorage> { a .> b }
}

/// GREATER_EQUAL.
enum QuantizedGreaterEqual: QuantizedComparisonKind {
  static let operatorName = "GREATER_EQUAL"
  static let scalesSixteenBitInputs = false
  @inline(__always)
  static func holds(_ a: SIMD8<Int32>, _ b: SIMD8<Int32>) -> SIMDMask<SIMD8<Int32>.MaskStorage> { a .>= b }
}

/// One operand of a comparison brought to the common scale: (q − zero point) · 2^8, rescaled by
/// the operand's own scale; or the raw value.
struct ComparisonScaling {
  /// The left shift applied before rescaling.
  static let leftShift: Int32 = 8
  let zeroPoint: Int32
  /// The operand's scale; nil to compare raw values.
  let scale: QuantizedMultiplier?
  let rounding: RoundingPolicy

  /// The scaling of `operand`, or the raw values when `scales` is false.
  init(_ operand: QuantizedOperand, scales: Bool, rounding: RoundingPolicy) {
    zeroPoint = scales ? operand.zeroPoint : 0
    scale = scales ? QuantizedMultiplier(Double(operand.scale), rounding: rounding) : nil
    self.rounding = rounding
  }

  /// The compared value of raw `x`.
  @inline(__always)
  func callAsFunction(_ x: Int32) -> Int32 {
    guard let scale else { return x }
    return scale.applyAsSmallerThanOne((x &- zeroPoint) &<< Self.leftShift, rounding: rounding)
  }
}

/// A comparison of two scaled operands, 1 where it holds and 0 elsewhere.
struct ScaledComparisonFunction<Kind: QuantizedComparisonKind>: QuantizedBinaryFunction {
  let lhs: ComparisonScaling
  let rhs: ComparisonScaling

  @inline(__always)
  func callAsFunction(_ a: SIMD8<Int32>, _ b: SIMD8<Int32>) -> SIMD8<Int32> {
    var left = SIMD8<Int32>()
    var right = SIMD8<Int32>()
    for lane in 0..<8 {
      left[lane] = lhs(a[lane])
      right[lane] = rhs(b[lane])
    }
    return SIMD8<Int32>(repeating: 0).replacing(with: 1, where: Kind.holds(left, right))
  }
}

/// The comparisons on quantized int8, uint8 and int16 inputs of one type; BOOL output.
struct IntegerComparisonDefinition<Kind: QuantizedComparisonKind>: IntegerBinaryDefinition {
  static var operatorName: String { Kind.operatorName }
  private let type: ElementType

  init(node: Node, lhs: RuntimeTensor, rhs: RuntimeTensor, output: RuntimeTensor) throws {
    type = lhs.type
    guard rhs.type == type, [.int8, .uint8, .int16].contains(type), lhs.quantization != nil,
      rhs.quantization != nil
    else {
      throw KernelError.unsupported(
        "\(Self.operatorName) on \(lhs.type.name) and \(rhs.type.name) in the quantized kernels (they take quantized INT8, UINT8 or INT16)")
    }
    guard output.type == .bool else {
      throw KernelError.invalid("\(Self.operatorName) writes a BOOL tensor, the output is \(output.type.name)")
    }
  }

  func prepare(
    lhs: RuntimeTensor, rhs: RuntimeTensor, output: RuntimeTensor, rounding: RoundingPolicy, elementCount: Int
  ) throws -> QuantizedBinaryMap {
    let scales = type != .int16 || Kind.scalesSixteenBitInputs
    let function = ScaledComparisonFunction<Kind>(
      lhs: ComparisonScaling(try QuantizedOperand(lhs, op: Self.operatorName), scales: scales, rounding: rounding),
      rhs: ComparisonScaling(try QuantizedOperand(rhs, op: Self.operatorName), scales: scales, rounding: rounding))
    return try QuantizedBinaryMap(function, lhs: type, rhs: type, writesBooleans: true, elementCount: elementCount)
  }
}
