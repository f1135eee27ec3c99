// ADD, SUB and MUL with broadcasting, as TFLite's reference kernels compute them (`reference/add.h`,
// `reference/sub.h`, `reference/mul.h`, `integer_ops/add.h`, `integer_ops/mul.h`).
//
// The two inputs broadcast against each other (see `ReferenceGeometry.swift`); each output element combines
// the two input elements it reads, then the fused activation clamps.
//
// Integer ADD and SUB cannot add raw values of different scales. Each input, minus its zero point,
// is shifted left by 20 bits (15 for int16) for precision and rescaled to a common scale, twice the
// larger input scale (so that the multipliers are below 1); the two are added (or subtracted), and
// the sum is rescaled to the output's scale, offset by the output zero point and clamped. For int16
// with power-of-two scales (and the `pot_scale_int16` option, on by default), TFLite adds exactly
// instead: the input with the finer scale is shifted right, rounding, onto the output's scale.
//
// Integer MUL multiplies the two inputs minus their zero points and rescales the product once by
// lhs_scale · rhs_scale / output_scale (formed in float, as TFLite does).
//
// int32 tensors without quantization are added, subtracted or multiplied as plain integers.
import TFLiteLinearAlgebra


extension Reference {
  /// The quantization of a two-input integer operator and its fused activation.
  public struct BinaryQuantization: Sendable, Hashable {
    /// The left input's quantization.
    public var lhs: QuantizationParameters
    /// The right input's quantization.
    public var rhs: QuantizationParameters
    /// The output's quantization.
    public var output: QuantizationParameters
    /// The fused activation, clamped in raw output values.
    public var activation: FusedActivation
    /// How the rescales round.
    public var rounding: RoundingPolicy

    /// Parameters of a two-input integer operator.
    public init(
      lhs: QuantizationParameters, rhs: QuantizationParameters, output: QuantizationParameters,
      activation: FusedActivation, rounding: RoundingPolicy = .doubleRounding
    ) {
      self.lhs = lhs
      self.rhs = rhs
      self.output = output
      self.activation = activation
      self.rounding = rounding
    }
  }

  /// Float ADD with broadcasting.
  public static func add(
    _ lhs: Tensor<Float>, _ rhs: Tensor<Float>, activation: FusedActivation,
    into destination: Destination<Float> = .newTensor
  ) throws -> Tensor<Float> {
    let range = floatRange(activation)
    return try broadcast(lhs, rhs, into: destination) { a, b in clamp(a + b, range) }
  }

  /// Float SUB with broadcasting.
  public static func subtract(
    _ lhs: Tensor<Float>, _ rhs: Tensor<Float>, activation: FusedActivation,
    into destination: Destination<Float> = .newTensor
  ) throws -> Tensor<Float> {
    let range = floatRange(activation)
    return try broadcast(lhs, rhs, into: destination) { a, b in clamp(a - b, range) }
  }

  /// Float MUL with broadcasting.
  public static func multiply(
    _ lhs: Tensor<Float>, _ rhs: Tensor<Float>, activation: FusedActivation,
    into destination: Destination<Float> = .newTensor
  ) throws -> Tensor<Float> {
    let range = floatRange(activation)
    return try broadcast(lhs, rhs, into: destination) { a, b in clamp(a * b, range) }
  }

  /// int32 ADD, SUB or MUL (plain integers, no quantization) with broadcasting: the result wraps
  /// on overflow (undefined in TFLite's C++) and is clamped to the activation's integer bounds.
  public static func arithmetic(
    _ operation: ArithmeticOperation, _ lhs: Tensor<Int32>, _ rhs: Tensor<Int32>, activation: FusedActivation,
    into destination: Destination<Int32> = .newTensor
  ) throws -> Tensor<Int32> {
    let (lower, upper): (Int32, Int32)
    switch activation {
    case .none: (lower, upper) = (.min, .max)
    case .relu: (lower, upper) = (0, .max)
    case .relu6: (lower, upper) = (0, 6)
    case .reluN1To1: (lower, upper) = (-1, 1)
    }
    return try broadcast(lhs, rhs, into: destination) { a, b in
      let value: Int32
      switch operation {
      case .add: value = a &+ b
      case .subtract: value = a &- b
      case .multiply: value = a &* b
      }
      return min(max(value, lower), upper)
    }
  }

  /// The operations of ``arithmetic(_:_:_:activation:)``.
  public enum ArithmeticOperation: Sendable, Hashable {
    /// ADD.
    case add
    /// SUB.
    case subtract
    /// MUL.
    case multiply
  }

  /// Integer ADD (int8, uint8, int16) with broadcasting; `powerOfTwoInt16Scales` is the
  /// `pot_scale_int16` option.
  public static func add<Raw: FixedWidthInteger & Sendable & BitwiseCopyable>(
    _ lhs: Tensor<Raw>, _ rhs: Tensor<Raw>, quantization: BinaryQuantization, powerOfTwoInt16Scales: Bool = true,
    into destination: Destination<Raw> = .newTensor
  ) throws -> Tensor<Raw> {
    try addOrSubtract(
      lhs, rhs, quantization: quantization, subtracts: false, powerOfTwo: powerOfTwoInt16Scales, into: destination)
  }

  /// Integer SUB (int8, uint8, int16) with broadcasting; `powerOfTwoInt16Scales` is the
  /// `pot_scale_int16` option.
  public static func subtract<Raw: FixedWidthInteger & Sendable & BitwiseCopyable>(
    _ lhs: Tensor<Raw>, _ rhs: Tensor<Raw>, quantization: BinaryQuantization, powerOfTwoInt16Scales: Bool = true,
    into destination: Destination<Raw> = .newTensor
  ) throws -> Tensor<Raw> {
    try addOrSubtract(
      lhs, rhs, quantization: quantization, subtracts: true, powerOfTwo: powerOfTwoInt16Scales, into: destination)
  }

  /// Integer MUL (int8, uint8, int16) with broadcasting.
  public static func multiply<Raw: FixedWidthInteger & Sendable & BitwiseCopyable>(
    _ lhs: Tensor<Raw>, _ rhs: Tensor<Raw>, quantization: BinaryQuantization,
    into destination: Destination<Raw> = .newTensor
  ) throws -> Tensor<Raw> {
    let q = quantization
    let clamp = quantizedClamp(q.activation, output: q.output, type: Raw.self)
    let multiplier = QuantizedMultiplier(Double(q.lhs.scale * q.rhs.scale / q.output.scale), rounding: q.rounding)
    return try broadcast(lhs, rhs, into: destination) { a, b in
      let product = (Int32(a) &- q.lhs.zeroPoint) &* (Int32(b) &- q.rhs.zeroPoint)
      let value = multiplier.apply(product, rounding: q.rounding) &+ q.output.zeroPoint
      return Raw(truncatingIfNeeded: min(max(value, clamp.lowerBound), clamp.upperBound))
    }
  }

  /// ADD or SUB on raw values (see the file header).
  static func addOrSubtract<Raw: FixedWidthInteger & Sendable & BitwiseCopyable>(
    _ lhs: Tensor<Raw>, _ rhs: Tensor<Raw>, quantization q: BinaryQuantization, subtracts: Bool, powerOfTwo: Bool,
    into destination: Destination<Raw>
  ) throws -> Tensor<Raw> {
    let clamp = quantizedClamp(q.activation, output: q.output, type: Raw.self)
    func clamped(_ value: Int32) -> Raw { Raw(truncatingIfNeeded: min(max(value, clamp.lowerBound), clamp.upperBound)) }
    let sixteenBit = Raw.bitWidth == 16
    if sixteenBit && powerOfTwo {
      let exponents = [q.lhs.scale, q.rhs.scale, q.output.scale].map(FixedPoint.checkedLog2)
      if exponents.allSatisfy(\.isPowerOfTwo) {
        // How many bits finer than the output each input's scale is.
        let lhsShift = exponents[2].log2 - exponents[0].log2
        let rhsShift = exponents[2].log2 - exponents[1].log2
        guard lhsShift >= 0, rhsShift >= 0, lhsShift == 0 || rhsShift == 0, max(lhsShift, rhsShift) <= 31 else {
          throw Error("with power-of-two int16 scales one input must have the output's scale and the other a finer one")
        }
        return try broadcast(lhs, rhs, into: destination) { a, b in
          let left = FixedPoint.roundingDivideByPowerOfTwo(Int32(a), lhsShift)
          let right = FixedPoint.roundingDivideByPowerOfTwo(Int32(b), rhsShift)
          return clamped(subtracts ? left &- right : left &+ right)
        }
      }
    }
    let leftShift: Int32 = sixteenBit ? 15 : 20
    // The common scale, 2 · max(scales), formed in float; the ratios in double, as TFLite does.
    let commonScale = Double(2 * max(q.lhs.scale, q.rhs.scale))
    let lhsMultiplier = QuantizedMultiplier(Double(q.lhs.scale) / commonScale, rounding: q.rounding)
    let rhsMultiplier = QuantizedMultiplier(Double(q.rhs.scale) / commonScale, rounding: q.rounding)
    let outputMultiplier = QuantizedMultiplier(
      commonScale / Double(Float(Int32(1) << leftShift) * q.output.scale), rounding: q.rounding)
    return try broadcast(lhs, rhs, into: destination) { a, b in
      let left = lhsMultiplier.apply((Int32(a) &- q.lhs.zeroPoint) &<< leftShift, rounding: q.rounding)
      let right = rhsMultiplier.apply((Int32(b) &- q.rhs.zeroPoint) &<< leftShift, rounding: q.rounding)
      let combined = subtracts ? left &- right : left &+ right
      return clamped(outputMultiplier.apply(combined, rounding: q.rounding) &+ q.output.zeroPoint)
    }
  }

  /// The broadcasting loop: every output element from the two input elements it reads.
  static func broadcast<Left, Right, Result: BitwiseCopyable>(
    _ lhs: Tensor<Left>, _ rhs: Tensor<Right>, into destination: Destination<Result>,
    _ combine: (Left, Right) -> Result
  ) throws -> Tensor<Result> {
    let broadcast = try Broadcast(lhs.shape, rhs.shape)
    let output = try destination.tensor(shape: broadcast.shape)
    for index in output.values.indices {
      let (left, right) = broadcast.inputIndices(of: index)
      output[index] = combine(lhs.values[left], rhs.values[right])
    }
    return output.finished
  }
}
