// RELU, RELU6, RELU_N1_TO_1, RELU_0_TO_1, LOGISTIC and TANH, element by element, as TFLite's
// reference kernels compute them (`reference/logistic.h`, `reference/tanh.h`, the RELU family of
// `activations.cc`).
//
// Integer RELUs may change the scale: each raw value minus the input zero point is rescaled by
// input_scale / output_scale (formed in float), offset by the output zero point and clamped to
// the bounds quantized with the output's parameters.
//
// 8-bit LOGISTIC and TANH take only 256 distinct inputs, so TFLite tabulates them: each raw value
// is dequantized, transformed in float, requantized and clamped (`QuantizedLookupTable.eightBit`).
// LiteRT requires an 8-bit LOGISTIC output to have scale 1/256.
//
// int16 LOGISTIC and TANH (zero points 0, output scale 1/32768): the input is brought to Q3.12
// by a small integer multiplier and shift (3 · 2^k directly for power-of-two scales), and the
// published 256-entry logistic table (at steps of 1/24 in Q0.16) is interpolated linearly;
// tanh(x) = 2 · logistic(2x) − 1 reads the same table at twice the rate.
import TFLiteLinearAlgebra


extension Reference {
  /// The clamps of the RELU family, in real values.
  public enum ReluBounds: Sendable, Hashable {
    /// RELU: max(x, 0).
    case relu
    /// RELU6: min(max(x, 0), 6).
    case relu6
    /// RELU_N1_TO_1: min(max(x, −1), 1).
    case reluMinusOneToOne
    /// RELU_0_TO_1: min(max(x, 0), 1).
    case reluZeroToOne

    /// The real lower and upper bounds (the upper one infinite for RELU).
    public var bounds: (lower: Float, upper: Float) {
      switch self {
      case .relu: (0, .infinity)
      case .relu6: (0, 6)
      case .reluMinusOneToOne: (-1, 1)
      case .reluZeroToOne: (0, 1)
      }
    }
  }

  /// Float RELU, RELU6, RELU_N1_TO_1 or RELU_0_TO_1.
  public static func relu(
    _ input: Tensor<Float>, _ kind: ReluBounds, into destination: Destination<Float> = .newTensor
  ) throws -> Tensor<Float> {
    let (lower, upper) = kind.bounds
    return try elementwise(input, into: destination) { min(max(lower, $0), upper) }
  }

  /// Float LOGISTIC: 1 / (1 + e^(−x)), with TFLite's cut-offs (1 above 16.619, e^x below −9).
  public static func logistic(
    _ input: Tensor<Float>, into destination: Destination<Float> = .newTensor
  ) throws -> Tensor<Float> {
    let upperCutoff: Float = 16.619047164916992188
    let lowerCutoff: Float = -9
    return try elementwise(input, into: destination) { x in
      if x > upperCutoff { return 1 }
      if x < lowerCutoff { return TabulatedFunction.exponential(x) }
      return TabulatedFunction.logistic(x)
    }
  }

  /// Float TANH.
  public static func tanh(_ input: Tensor<Float>, into destination: Destination<Float> = .newTensor) throws -> Tensor<
    Float
  > {
    try elementwise(input, into: destination, TabulatedFunction.hyperbolicTangent)
  }

  /// The loop of every element-wise operator: output element i is `transform` of input element i.
  static func elementwise<Input, Output: BitwiseCopyable>(
    _ input: Tensor<Input>, into destination: Destination<Output>, _ transform: (Input) -> Output
  ) throws -> Tensor<Output> {
    let output = try destination.tensor(shape: input.shape)
    for index in output.values.indices { output[index] = transform(input.values[index]) }
    return output.finished
  }

  /// Integer RELU family (int8, uint8, int16 with zero points 0): rescale, then clamp.
  public static func relu<Raw: FixedWidthInteger & Sendable & BitwiseCopyable>(
    _ input: Tensor<Raw>, _ kind: ReluBounds, input inputQuantization: QuantizationParameters,
    output: QuantizationParameters, rounding: RoundingPolicy = .doubleRounding,
    into destination: Destination<Raw> = .newTensor
  ) throws -> Tensor<Raw> {
    let typeRange = rawRange(of: Raw.self)
    /// A real bound as a raw output value: round(real / scale) + zero point.
    func rawBound(_ real: Float) -> Int64 {
      Int64(output.zeroPoint) + Int64(FixedPoint.truncatingConversion((real / output.scale).rounded()))
    }
    let (lowerReal, upperReal) = kind.bounds
    let lower = Int32(clamping: max(Int64(typeRange.lowerBound), rawBound(lowerReal)))
    let upper =
      upperReal.isInfinite
      ? typeRange.upperBound : Int32(clamping: min(Int64(typeRange.upperBound), rawBound(upperReal)))
    let multiplier = QuantizedMultiplier(Double(inputQuantization.scale / output.scale), rounding: rounding)
    return try elementwise(input, into: destination) { x in
      let rescaled = output.zeroPoint &+ multiplier.apply(Int32(x) &- inputQuantization.zeroPoint, rounding: rounding)
      // max first, then min: crossed bounds give `upper`, as in TFLite.
      return Raw(truncatingIfNeeded: min(max(rescaled, lower), upper))
    }
  }

  /// 8-bit LOGISTIC (int8, uint8) through TFLite's 256-entry table.
  public static func logistic<Raw: FixedWidthInteger & Sendable & BitwiseCopyable>(
    _ input: Tensor<Raw>, input inputQuantization: QuantizationParameters, output: QuantizationParameters,
    into destination: Destination<Raw> = .newTensor
  ) throws -> Tensor<Raw> {
    try tabulated(
      input, input: inputQuantization, output: output, transform: TabulatedFunction.logistic, into: destination)
  }

  /// 8-bit TANH (int8, uint8) through TFLite's 256-entry table.
  public static func tanh<Raw: FixedWidthInteger & Sendable & BitwiseCopyable>(
    _ input: Tensor<Raw>, input inputQuantization: QuantizationParameters, output: QuantizationParameters,
    into destination: Destination<Raw> = .newTensor
  ) throws -> Tensor<Raw> {
    try tabulated(
      input, input: inputQuantization, output: output, transform: TabulatedFunction.hyperbolicTangent,
      into: destination)
  }

  /// A function of an 8-bit input as TFLite tabulates it: one entry per raw value.
  static func tabulated<Raw: FixedWidthInteger & Sendable & BitwiseCopyable>(
    _ input: Tensor<Raw>, input inputQuantization: QuantizationParameters, output: QuantizationParameters,
    transform: (Float) -> Float, into destination: Destination<Raw>
  ) throws -> Tensor<Raw> {
    guard Raw.bitWidth == 8 else { throw Error("tabulated activations take 8-bit inputs") }
    let range = rawRange(of: Raw.self)
    let table = QuantizedLookupTable.eightBit(
      inputRange: range, inputScale: inputQuantization.scale, inputZeroPoint: inputQuantization.zeroPoint,
      outputScale: output.scale, outputZeroPoint: output.zeroPoint, outputRange: range, transform: transform)
    return try elementwise(input, into: destination) { Raw(truncatingIfNeeded: table[Int(Int32($0) - range.lowerBound)]) }
  }

  /// int16 LOGISTIC (see the file header).
  public static func logistic(
    _ input: Tensor<Int16>, inputScale: Float, into destination: Destination<Int16> = .newTensor
  ) throws -> Tensor<Int16> {
    try sixteenBitSigmoid(input, inputScale: inputScale, isTanh: false, into: destination)
  }

  /// int16 TANH (see the file header).
  public static func tanh(
    _ input: Tensor<Int16>, inputScale: Float, into destination: Destination<Int16> = .newTensor
  ) throws -> Tensor<Int16> {
    try sixteenBitSigmoid(input, inputScale: inputScale, isTanh: true, into: destination)
  }

  /// The int16 logistic-table interpolation of LOGISTIC and TANH.
  static func sixteenBitSigmoid(
    _ input: Tensor<Int16>, inputScale: Float, isTanh: Bool, into destination: Destination<Int16>
  ) throws -> Tensor<Int16> {
    guard inputScale.isFinite, inputScale > 0, Double(inputScale) * 4096 * 3 < 2_147_483_648 else {
      throw Error("int16 LOGISTIC and TANH need an input scale in (0, 174762), got \(inputScale)")
    }
    // Step 1: a multiplier and shift taking raw inputs to Q3.12 (tanh's table steps are twice as fine).
    let multiplier: Int32
    let shift: Int32
    let (log2, isPowerOfTwo) = FixedPoint.checkedLog2(inputScale)
    let powerOfTwoShift = 12 + log2
    if isPowerOfTwo && (0...(isTanh ? 1 : 0)).contains(powerOfTwoShift) {
      multiplier = 3 << Int32(powerOfTwoShift)
      shift = 0
    } else {
      // Double the real multiplier until it uses 15 bits.
      var real = Double(inputScale) * 4096.0 * 3.0
      var steps: Int32 = 0
      while real <= 32767.0 / 2.0 && steps <= 30 {
        steps += 1
        real *= 2
      }
      multiplier = Int32(real)
      shift = steps
    }
    let table = QuantizedLookupTable.logisticQ16
    // The table is read at a resolution of 9 fractional bits (LOGISTIC) or 8 (TANH).
    let fractionBits: UInt32 = isTanh ? 8 : 9
    return try elementwise(input, into: destination) { raw -> Int16 in
      let round: Int32 = shift > 0 ? 1 << (shift - 1) : 0
      let value = (Int32(raw) &* multiplier &+ round) >> shift
      let magnitude = value.magnitude
      // Step 2: the entry below |value|, interpolated with the next one by the low bits.
      let entry = Int(magnitude >> fractionBits)
      let interpolated: UInt32
      if entry >= 255 {
        interpolated = isTanh ? 0xFFFF << 8 : 0x7FFF << 10
      } else {
        let low = UInt32(table[entry])
        let next = UInt32(table[entry + 1])
        interpolated = (low << fractionBits) &+ (magnitude & ((1 << fractionBits) - 1)) &* (next &- low)
      }
      // Step 3: mirror negative inputs (logistic(−x) = 1 − logistic(x)), round, narrow to Q0.15.
      if isTanh {
        let result = Int32(bitPattern: interpolated)
        let signed = value >= 0 ? result &- (1 << 23) &+ (1 << 7) : (1 << 23) &- result &+ (1 << 7) &- 1
        return Int16(truncatingIfNeeded: signed >> 8)
      }
      let signed = value >= 0 ? interpolated &+ (1 << 9) : (1 << 25) &- interpolated &+ (1 << 9) &- 1
      return Int16(truncatingIfNeeded: signed >> 10)
    }
  }
}
