// SOFTMAX over the last axis, as TFLite's reference kernels compute it (`reference/softmax.h`).
//
// Float: each row becomes e^(β·(x − max)) / Σ e^(β·(x − max)). Subtracting the row maximum first
// changes nothing mathematically and keeps every exponential in (0, 1], so nothing overflows.
//
// 8-bit input (int8 or uint8), in gemmlowp fixed point (the functions are in
// `Quantization/FixedPointFunctions.swift`):
// 1. the raw difference x − max (≤ 0) is multiplied by β · input_scale into a Q5.26 value (5
//    integer bits), by a quantized multiplier;
// 2. differences below −input radius (where the exponential is 0 at this precision) are dropped;
// 3. e^difference is computed in Q0.31 and summed in Q12.19;
// 4. the sum's reciprocal is computed as a Q0.31 mantissa and a power of two;
// 5. each probability e^difference / sum is rounded to the output's bits, offset so that the
//    type's lowest value stands for 0. The output quantization is fixed by TFLite: scale 1/256 for
//    8-bit outputs (zero point −128 for int8, 0 for uint8), 1/32768 with zero point −32768 for
//    int16 outputs.
//
// int16 input (zero point 0, output scale 1/32768 with zero point 0): two 513-entry tables of
// e^x on [−10, 0] and of 1/(1 + x) on [0, 1], interpolated (`Quantization/LookupTables.swift`).
import TFLiteLinearAlgebra


extension Reference {
  /// Float SOFTMAX over the last axis with inverse temperature `beta`.
  public static func softmax(
    input: Tensor<Float>, beta: Float, into destination: Destination<Float> = .newTensor
  ) throws -> Tensor<Float> {
    let depth = try lastAxisDepth(input, op: "SOFTMAX")
    let output = try destination.tensor(shape: input.shape)
    for rowStart in stride(from: 0, to: input.values.count, by: max(depth, 1)) {
      let row = rowStart..<rowStart + depth
      var maximum = -Float.greatestFiniteMagnitude
      for index in row { maximum = max(maximum, input.values[index]) }
      var sum: Float = 0
      for index in row {
        output[index] = TabulatedFunction.exponential((input.values[index] - maximum) * beta)
        sum += output[index]
      }
      for index in row { output[index] /= sum }
    }
    return output.finished
  }

  /// SOFTMAX of an int8 or uint8 input into int8, uint8 or int16 (see the file header for the
  /// output quantization TFLite fixes).
  public static func softmax<
    Input: FixedWidthInteger & Sendable, Output: FixedWidthInteger & Sendable & BitwiseCopyable
  >(
    input: Tensor<Input>, inputScale: Float, beta: Float, outputType: Output.Type,
    rounding: RoundingPolicy = .doubleRounding, into destination: Destination<Output> = .newTensor
  ) throws -> Tensor<Output> {
    guard Input.bitWidth == 8, Output.bitWidth == 8 || Output.bitWidth == 16 else {
      throw Error("8-bit SOFTMAX takes 8-bit inputs into 8- or 16-bit outputs")
    }
    let depth = try lastAxisDepth(input, op: "SOFTMAX")
    let differenceBits = 5
    let sumBits = 12
    // Step 1: β · scale as a multiplier producing Q5.26 values; step 2: the smallest difference kept.
    let multiplier = FixedPoint.softmaxInputMultiplier(
      beta: Double(beta), inputScale: Double(inputScale), integerBits: differenceBits, rounding: rounding)
    let differenceMin = -FixedPoint.inputRadius(integerBits: differenceBits, inputLeftShift: multiplier.shift)
    /// e^(β · scale · difference) in Q0.31.
    func exponential(_ difference: Int32) -> Int32 {
      FixedPoint.expOnNegativeValues(multiplier.apply(difference, rounding: rounding), integerBits: differenceBits)
    }
    let output = try destination.tensor(shape: input.shape)
    for rowStart in stride(from: 0, to: input.values.count, by: max(depth, 1)) {
      let row = rowStart..<rowStart + depth
      var maximum = Int32(Input.min)
      for index in row { maximum = max(maximum, Int32(input.values[index])) }
      // Step 3: the sum of exponentials in Q12.19 (wrapping, as gemmlowp's plain `+`).
      var sum: Int32 = 0
      for index in row {
        let difference = Int32(input.values[index]) - maximum
        if difference >= differenceMin {
          sum &+= FixedPoint.rescale(exponential(difference), fromIntegerBits: 0, toIntegerBits: sumBits)
        }
      }
      // Step 4: 1 / sum = reciprocal · 2^(−bitsOverUnit).
      let (reciprocal, bitsOverUnit) = FixedPoint.reciprocal(sum, integerBits: sumBits)
      // Step 5: e^d · (1 / sum) in Q0.31, shifted down to the output's bits.
      let exponent = bitsOverUnit + 31 - Output.bitWidth
      for index in row {
        let difference = Int32(input.values[index]) - maximum
        // LiteRT stops on an exponent above 31 (a sum of 512 or more); every quotient would round to 0.
        guard difference >= differenceMin, exponent <= 31 else {
          output[index] = Output.min
          continue
        }
        let probability = FixedPoint.saturatingRoundingDoublingHighMultiply(reciprocal, exponential(difference))
        let shifted = FixedPoint.roundingDivideByPowerOfTwo(probability, exponent)
        output[index] = Output(clamping: shifted &+ Int32(Output.min))
      }
    }
    return output.finished
  }

  /// SOFTMAX of an int16 input (zero point 0) into int16 (scale 1/32768, zero point 0).
  public static func softmax(
    input: Tensor<Int16>, inputScale: Float, beta: Float, rounding: RoundingPolicy = .doubleRounding,
    into destination: Destination<Int16> = .newTensor
  ) throws -> Tensor<Int16> {
    let depth = try lastAxisDepth(input, op: "SOFTMAX")
    let range = Double(Int32(Int16.max) - Int32(Int16.min))
    // e^x for x in [−10, 0] and 1/(1 + x) for x in [0, 1], both over the whole int16 range.
    let exponentials = QuantizedLookupTable.sixteenBit(
      inputScale: 10 / range, inputZeroPoint: Int32(Int16.max), outputScale: 2 / range, outputZeroPoint: 0,
      transform: TabulatedFunction.exponential)
    let reciprocals = QuantizedLookupTable.sixteenBit(
      inputScale: 1 / range, inputZeroPoint: Int32(Int16.min), outputScale: 2 / range, outputZeroPoint: 0,
      transform: TabulatedFunction.oneOverOnePlus)
    // Maps a raw difference onto the exponential table's input scale (10 / 65535); β · scale is
    // formed in float, then divided in double, as TFLite does.
    let multiplier = QuantizedMultiplier(Double(inputScale * beta) / (10.0 / 65535.0), rounding: rounding)
    let output = try destination.tensor(shape: input.shape)
    // Each row's sum of exponentials must fit in an Int32 (every exponential is at most 32767).
    guard depth <= Int(Int32.max / 32767) else { throw Error("int16 SOFTMAX rows of \(depth) values are too long") }
    exponentials.withUnsafeBufferPointer { exponentialTable in
      reciprocals.withUnsafeBufferPointer { reciprocalTable in
        let exponentialEntries = exponentialTable.baseAddress.unsafelyUnwrapped
        let reciprocalEntries = reciprocalTable.baseAddress.unsafelyUnwrapped
        for rowStart in stride(from: 0, to: input.values.count, by: max(depth, 1)) {
          let row = rowStart..<rowStart + depth
          var maximum = Int32(Int16.min)
          for index in row { maximum = max(maximum, Int32(input.values[index])) }
          // e^difference for each element (the table input 32767 stands for 0), and their sum.
          var sum: Int32 = 0
          for index in row {
            let scaled = multiplier.apply(Int32(input.values[index]) - maximum, rounding: rounding)
            output[index] = QuantizedLookupTable.lookup(Int16(clamping: scaled &+ 32767), in: exponentialEntries)
            sum &+= Int32(output[index])
          }
          // Normalize the sum to [1, 2) · 2^k, look 1 / sum up in the reciprocal table.
          let headroomPlusOne = UInt32(bitPattern: sum).leadingZeroBitCount
          let shiftedSum = Int32(truncatingIfNeeded: ((Int64(sum) << (headroomPlusOne - 1)) + (1 << 13)) >> 14)
          let reciprocal = QuantizedLookupTable.lookup(
            Int16(clamping: shiftedSum &- ((1 << 15) + (1 << 16))), in: reciprocalEntries)
          // Each exponential times the reciprocal, shifted back by the normalization, rounded.
          let rightShift = 31 - headroomPlusOne
          let round = Int64(1) << (rightShift - 1)
          for index in row {
            let product = Int32(truncatingIfNeeded: (Int64(output[index]) * Int64(reciprocal) + round) >> rightShift)
            output[index] = Int16(min(max(product, 0), 32767))
          }
        }
      }
    }
    return output.finished
  }

  /// The size of the last axis (rows are the rest); throws for a scalar.
  static func lastAxisDepth<Element>(_ input: Tensor<Element>, op: String) throws -> Int {
    try lastAxisDepth(input.shape, op: op)
  }

  /// The size of the last axis of `shape`; throws for a scalar.
  static func lastAxisDepth(_ shape: [Int], op: String) throws -> Int {
    guard let depth = shape.last else { throw Error("\(op) needs a tensor of rank at least 1, got a scalar") }
    return depth
  }

  /// SOFTMAX's output shape: the input's, which must have rank 1 or more.
  public static func softmaxOutputShape(input: [Int]) throws -> [Int] {
    _ = try lastAxisDepth(input, op: "SOFTMAX")
    return input
  }
}
