// Quantized elementwise math of one operand: ABS, EXP, LOG, RSQRT and SQRT on int8 and int16,
// bit-exact with LiteRT's reference kernels.
//
// ABS rescales |x − zero point| when the scales differ; EXP and LOG look values up in the tables
// TFLite builds at prepare time (256 entries for int8, 513 interpolated ones for int16); int8
// RSQRT computes 1/√x in fixed point; int16 RSQRT uses a table; SQRT dequantizes, takes the
// float square root and truncates. Every one runs through `IntegerUnaryKernel`, so each input
// value is computed once at prepare time into a table of the whole input type.
import TFLiteLinearAlgebra


/// A quantized operator of one int8 or int16 operand; TFLite requires zero points 0 on int16.
protocol SignedIntegerUnaryDefinition: IntegerUnaryDefinition {
  /// The definition (it reads no options).
  init()
}

extension SignedIntegerUnaryDefinition {
  /// Throws `unsupported` unless input and output share the type int8, or int16 with quantization
  /// (plain int16 tensors belong to the integer kernels).
  init(node: Node, input: RuntimeTensor, output: RuntimeTensor) throws {
    let type = try requireQuantizedTypes(input, output, [.int8, .int16], op: Self.operatorName)
    if type == .int16 && input.quantization == nil {
      throw KernelError.unsupported("\(Self.operatorName) on INT16 tensors without quantization in the quantized kernels")
    }
    self.init()
  }
}

/// The 513-entry table TFLite builds for a float `transform` between two int16 operands.
private func sixteenBitTable(
  input: QuantizedOperand, output: QuantizedOperand, transform: (Float) -> Float
) -> SixteenBitTableFunction {
  SixteenBitTableFunction(
    table: QuantizedLookupTable.sixteenBit(
      inputScale: input.scale, inputZeroPoint: input.zeroPoint, outputScale: output.scale,
      outputZeroPoint: output.zeroPoint, transform: transform))
}

/// The input condition of RSQRT and SQRT: no value below the zero point (a negative real value).
private func nonNegativeInputs(_ input: RuntimeTensor, op: String) throws -> QuantizedInputCondition {
  let operand = try QuantizedOperand(input, op: op)
  return QuantizedInputCondition(
    relation: .atLeast, value: operand.zeroPoint,
    requirement: "a value lies below the zero point \(operand.zeroPoint) (\(op) of a negative number)")
}

// MARK: - Per-element functions

/// ABS: |x − input zero point|, rescaled when the scales differ, plus the output zero point.
struct AbsoluteValueFunction: QuantizedUnaryFunction {
  let inputZeroPoint: Int32
  let outputZeroPoint: Int32
  /// input scale / output scale; nil when the scales are equal.
  let multiplier: QuantizedMultiplier?
  let rounding: RoundingPolicy
  let range: ClosedRange<Int32>

  @inline(__always)
  func callAsFunction(_ x: Int32) -> Int32 {
    let magnitude = (x &- inputZeroPoint).magnitude
    let value = Int32(truncatingIfNeeded: magnitude)
    let rescaled = multiplier.map { $0.apply(value, rounding: rounding) } ?? value
    return min(max(rescaled &+ outputZeroPoint, range.lowerBound), range.upperBound)
  }
}

/// int8 RSQRT: 1/√(x − zero point) as a fixed-point multiplier, applied to 2^20, then rescaled
/// by 1 / (√(input scale) · output scale) and 2^−20. The zero point itself gives the largest value.
struct ReciprocalSquareRootFunction: QuantizedUnaryFunction {
  /// The extra precision of the intermediate value.
  static let precisionBits = 20
  let inputZeroPoint: Int32
  let outputZeroPoint: Int32
  let multiplier: QuantizedMultiplier
  let rounding: RoundingPolicy
  let range: ClosedRange<Int32>

  @inline(__always)
  func callAsFunction(_ x: Int32) -> Int32 {
    let value = x &- inputZeroPoint
    if value == 0 { return range.upperBound }
    var inverse = FixedPoint.inverseSquareRoot(value)
    inverse.shift += Self.precisionBits
    let scaled = inverse.apply(1, rounding: rounding)
    let rescale = QuantizedMultiplier(multiplier: multiplier.multiplier, shift: multiplier.shift - Self.precisionBits)
    let output = rescale.apply(scaled, rounding: rounding) &+ outputZeroPoint
    return min(max(output, range.lowerBound), range.upperBound)
  }
}

/// SQRT: the float square root of the dequantized input divided by the output scale, truncated
/// (converting as x86-64 does, as LiteRT's reference outputs show: results beyond the Int32
/// range become `Int32.min`), plus the output zero point.
struct SquareRootFunction: QuantizedUnaryFunction {
  let inputScale: Float
  let inputZeroPoint: Int32
  let outputScale: Float
  let outputZeroPoint: Int32
  let range: ClosedRange<Int32>

  @inline(__always)
  func callAsFunction(_ x: Int32) -> Int32 {
    let root = (inputScale * Float(x &- inputZeroPoint)).squareRoot()
    let output = FixedPoint.x86TruncatingConversion(root / outputScale) &+ outputZeroPoint
    return min(max(output, range.lowerBound), range.upperBound)
  }
}

// MARK: - Definitions

/// ABS on int8 and int16.
struct IntegerAbsoluteValueDefinition: SignedIntegerUnaryDefinition {
  static let operatorName = "ABS"

  func prepare(input: RuntimeTensor, output: RuntimeTensor, rounding: RoundingPolicy) throws -> QuantizedElementMap {
    let (inputOperand, outputOperand) = try operands(input, output)
    // The ratio is formed in float, as TFLite does.
    let multiplier =
      inputOperand.scale == outputOperand.scale
      ? nil : QuantizedMultiplier(Double(inputOperand.scale / outputOperand.scale), rounding: rounding)
    let function = AbsoluteValueFunction(
      inputZeroPoint: inputOperand.zeroPoint, outputZeroPoint: outputOperand.zeroPoint, multiplier: multiplier,
      rounding: rounding, range: outputOperand.range)
    return try QuantizedElementMap(function, from: input.type, to: input.type)
  }
}

/// A float function TFLite tabulates for EXP or LOG.
protocol TabulatedUnaryKind {
  static var operatorName: String { get }
  /// The function, given the output operand (LOG maps non-positive values to the output's lowest real value).
  static func transform(output: QuantizedOperand) -> (Float) -> Float
}

/// EXP.
enum QuantizedExponential: TabulatedUnaryKind {
  static let operatorName = "EXP"
  static func transform(output: QuantizedOperand) -> (Float) -> Float { TabulatedFunction.exponential }
}

/// LOG: ln x, and the output's lowest real value for x ≤ 0.
enum QuantizedLogarithm: TabulatedUnaryKind {
  static let operatorName = "LOG"
  static func transform(output: QuantizedOperand) -> (Float) -> Float {
    let lowest = Float(output.range.lowerBound - output.zeroPoint) * output.scale
    return { value in value <= 0 ? lowest : TabulatedFunction.naturalLogarithm(value) }
  }
}

/// EXP and LOG: a 256-entry table on int8, a 513-entry interpolated table on int16.
struct IntegerTabulatedUnaryDefinition<Kind: TabulatedUnaryKind>: SignedIntegerUnaryDefinition {
  static var operatorName: String { Kind.operatorName }

  func prepare(input: RuntimeTensor, output: RuntimeTensor, rounding: RoundingPolicy) throws -> QuantizedElementMap {
    let (inputOperand, outputOperand) = try operands(input, output)
    let transform = Kind.transform(output: outputOperand)
    if input.type == .int16 {
      return try QuantizedElementMap(
        sixteenBitTable(input: inputOperand, output: outputOperand, transform: transform), from: input.type, to: input.type)
    }
    let function = eightBitTable(input: inputOperand, output: outputOperand, transform: transform)
    return try QuantizedElementMap(function, from: input.type, to: input.type)
  }
}

/// RSQRT: fixed point on int8, a table on int16 (whose non-positive inputs give 32767 · output scale).
struct IntegerReciprocalSquareRootDefinition: SignedIntegerUnaryDefinition {
  static let operatorName = "RSQRT"

  func prepare(input: RuntimeTensor, output: RuntimeTensor, rounding: RoundingPolicy) throws -> QuantizedElementMap {
    let (inputOperand, outputOperand) = try operands(input, output)
    if input.type == .int16 {
      let largest = Float(Int16.max) * outputOperand.scale
      let function = sixteenBitTable(input: inputOperand, output: outputOperand) { value in
        value <= 0 ? largest : 1 / value.squareRoot()
      }
      return try QuantizedElementMap(function, from: input.type, to: input.type)
    }
    // √(input scale) · output scale in float, its reciprocal in double, as TFLite forms it.
    let real = 1 / Double(inputOperand.scale.squareRoot() * outputOperand.scale)
    let function = ReciprocalSquareRootFunction(
      inputZeroPoint: inputOperand.zeroPoint, outputZeroPoint: outputOperand.zeroPoint,
      multiplier: QuantizedMultiplier(real, rounding: rounding), rounding: rounding, range: outputOperand.range)
    return try QuantizedElementMap(function, from: input.type, to: input.type)
  }

  func inputCondition(input: RuntimeTensor) throws -> QuantizedInputCondition? {
    try nonNegativeInputs(input, op: Self.operatorName)
  }
}

/// SQRT on int8 and int16.
struct IntegerSquareRootDefinition: SignedIntegerUnaryDefinition {
  static let operatorName = "SQRT"

  func prepare(input: RuntimeTensor, output: RuntimeTensor, rounding: RoundingPolicy) throws -> QuantizedElementMap {
    let (inputOperand, outputOperand) = try operands(input, output)
    let function = SquareRootFunction(
      inputScale: inputOperand.scale, inputZeroPoint: inputOperand.zeroPoint, outputScale: outputOperand.scale,
      outputZeroPoint: outputOperand.zeroPoint, range: outputOperand.range)
    return try QuantizedElementMap(function, from: input.type, to: input.type)
  }

  func inputCondition(input: RuntimeTensor) throws -> QuantizedInputCondition? {
    try nonNegativeInputs(input, op: Self.operatorName)
  }
}
