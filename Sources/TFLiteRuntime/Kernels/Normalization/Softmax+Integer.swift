// Quantized SOFTMAX (int8 / uint8 inputs with 8- or 16-bit outputs, int16 → int16) and
// LOG_SOFTMAX (int8, uint8) over the last axis, bit-exact with LiteRT's reference kernels.
//
// The 8-bit kernels work in gemmlowp fixed point: the difference to the row maximum is scaled to
// Q5.26, exponentiated, summed in Q12.19 and normalised by a fixed-point reciprocal (or
// logarithm). A difference of two 8-bit values has only 256 possible values, so every per-element
// quantity is tabulated at prepare time. The int16 kernel uses TFLite's two 513-entry tables
// (e^x and 1/(1+x)).

import TFLiteFormat
import TFLiteLinearAlgebra

/// The fixed-point formats of the 8-bit kernels.
private enum SoftmaxFormat {
  /// Integer bits of the scaled input difference.
  static let differenceIntegerBits = 5
  /// Integer bits of the sum of exponentials.
  static let accumulatorIntegerBits = 12
  /// Integer bits of LOG_SOFTMAX's output before requantization.
  static let logOutputIntegerBits = 4
}

/// Per-difference values of an 8-bit softmax row: index `d` is the input `d` below the row maximum.
private struct DifferenceTable {
  /// Differences `0 ..< includedCount` take part (those within TFLite's input radius).
  let includedCount: Int
  /// The difference scaled by β·scale in Q5.26.
  let scaled: [Int32]
  /// e^(scaled difference) in Q0.31.
  let exponential: [Int32]
  /// The same exponential in Q12.19, the summing format.
  let summand: [Int32]

  init(multiplier: QuantizedMultiplier, differenceMin: Int32, rounding: RoundingPolicy) {
    includedCount = Int(min(255, -differenceMin)) + 1
    scaled = (0..<256).map { multiplier.apply(-Int32($0), rounding: rounding) }
    exponential = scaled.map { FixedPoint.expOnNegativeValues($0, integerBits: SoftmaxFormat.differenceIntegerBits) }
    summand = exponential.map {
      FixedPoint.rescale($0, fromIntegerBits: 0, toIntegerBits: SoftmaxFormat.accumulatorIntegerBits)
    }
  }

  /// The Q12.19 sum of the exponentials of a row whose maximum is `maximum`.
  @inline(__always)
  func sumOfExponentials<Element: QuantizedInteger>(_ row: UnsafePointer<Element>, depth: Int, maximum: Int32) -> Int32 {
    summand.withUnsafeBufferPointer { summands in
      var sum: Int32 = 0
      for index in 0..<depth {
        let difference = Int(maximum &- Int32(truncatingIfNeeded: row[index]))
        if difference < includedCount { sum = sum &+ summands[difference] }
      }
      return sum
    }
  }
}

/// The largest raw value of a row.
@inline(__always)
private func rowMaximum<Element: QuantizedInteger>(_ row: UnsafePointer<Element>, depth: Int) -> Element {
  var maximum = Element.min
  for index in 0..<depth { maximum = max(maximum, row[index]) }
  return maximum
}

/// Computes rows `rows` of `depth` elements from the input into the output (a closure formed
/// where the element types are concrete, so that it runs specialised code).
typealias RowLoop = (_ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer, _ depth: Int, _ rows: Range<Int>) -> Void

/// A quantized kernel computing each row of the last axis independently; the output has the
/// input's shape.
class IntegerRowKernel {
  let input: RuntimeTensor
  let output: RuntimeTensor
  let op: String
  private var body: RowLoop?

  init(node: Node, op: String, types: [(ElementType, ElementType)]) throws {
    (input, output) = try node.singleInputAndOutput()
    self.op = op
    guard types.contains(where: { $0 == (input.type, output.type) }) else {
      throw KernelError.unsupported("\(op) from \(input.type.name) to \(output.type.name) in the quantized kernels")
    }
  }

  func prepareShape() throws {
    guard !input.shape.isEmpty else { throw KernelError.invalid("\(op) needs a tensor of rank at least 1, got a scalar") }
    output.shape = input.shape
  }

  func setBody(_ body: @escaping RowLoop) { self.body = body }

  func eval(_ context: EvalContext) throws {
    guard let body else { throw KernelError.invalid("\(op) evaluated before prepare") }
    let source = try tensorData(input)
    let destination = try tensorData(output)
    let depth = input.shape[input.shape.count - 1]
    guard depth > 0 else { return }
    let rows = input.elementCount / depth
    context.forEachChunk(of: rows, minimumChunk: max(1, costlyElementwiseChunk / depth)) { range in
      body(source, destination, depth, range)
    }
  }
}

// MARK: - SOFTMAX

/// SOFTMAX on quantized tensors.
final class IntegerSoftmaxKernel: IntegerRowKernel, Kernel {
  private let beta: Float

  init(node: Node) throws {
    if case .softmaxOptions(let options) = node.options {
      beta = options.beta
    } else {
      beta = SoftmaxOptions().beta
    }
    try super.init(
      node: node, op: "SOFTMAX",
      types: [(.int8, .int8), (.int8, .int16), (.uint8, .uint8), (.uint8, .int16), (.int16, .int16)])
  }

  func prepare(_ context: inout PrepareContext) throws {
    try prepareShape()
    let rounding = context.roundingPolicy
    if input.type == .int16 {
      let inputOperand = try QuantizedOperand(input, op: op, symmetric: true)
      let outputOperand = try QuantizedOperand(output, op: op, symmetric: true)
      try requireScale(outputOperand, near: 1 / 32768)
      let softmax = SixteenBitSoftmax(input: inputOperand, beta: beta, rounding: rounding)
      setBody { softmax.run(input: $0, output: $1, depth: $2, rows: $3) }
      return
    }
    let inputOperand = try QuantizedOperand(input, op: op)
    let outputOperand = try QuantizedOperand(output, op: op)
    if output.type == .int8 {
      guard outputOperand.zeroPoint == -128 else {
        throw KernelError.invalid("\(op): an int8 output must have zero point -128, got \(outputOperand.zeroPoint)")
      }
      try requireScale(outputOperand, near: 1 / 256)
    }
    let multiplier = FixedPoint.softmaxInputMultiplier(
      beta: Double(beta), inputScale: Double(inputOperand.scale), integerBits: SoftmaxFormat.differenceIntegerBits,
      rounding: rounding)
    let differenceMin = -FixedPoint.inputRadius(
      integerBits: SoftmaxFormat.differenceIntegerBits, inputLeftShift: multiplier.shift)
    let table = DifferenceTable(multiplier: multiplier, differenceMin: differenceMin, rounding: rounding)
    setBody(try visitQuantized(input.type, output.type, EightBitSoftmaxFactory(table: table)))
  }

  /// TFLite's `TF_LITE_ENSURE_NEAR` on the output scale (within 0.1%).
  private func requireScale(_ operand: QuantizedOperand, near expected: Float) throws {
    guard abs(operand.scale - expected) <= 0.001 * expected else {
      throw KernelError.invalid("\(op): a \(operand.type.name) output must have scale \(expected), got \(operand.scale)")
    }
  }
}

/// Builds the typed 8-bit softmax.
private struct EightBitSoftmaxFactory: QuantizedTypePairVisitor {
  let table: DifferenceTable
  func visit<Input: QuantizedInteger, Output: QuantizedInteger>(_ input: Input.Type, _ output: Output.Type) throws
    -> RowLoop
  {
    let softmax = EightBitSoftmax<Input, Output>(table: table)
    return { softmax.run(input: $0, output: $1, depth: $2, rows: $3) }
  }
}

/// SOFTMAX of 8-bit rows into 8- or 16-bit outputs whose lowest raw value stands for 0.
private struct EightBitSoftmax<Input: QuantizedInteger, Output: QuantizedInteger> {
  let table: DifferenceTable

  func run(input: UnsafeRawPointer, output: UnsafeMutableRawPointer, depth: Int, rows: Range<Int>) {
    for row in rows {
      let source = input.assumingMemoryBound(to: Input.self) + row * depth
      let destination = output.assumingMemoryBound(to: Output.self) + row * depth
      let maximum = Int32(truncatingIfNeeded: rowMaximum(source, depth: depth))
      let sum = table.sumOfExponentials(source, depth: depth, maximum: maximum)
      let (reciprocal, bitsOverUnit) = FixedPoint.reciprocal(sum, integerBits: SoftmaxFormat.accumulatorIntegerBits)
      // TFLite checks the exponent is at most 31; beyond it every quotient rounds to zero.
      let exponent = bitsOverUnit + 31 - Output.bitWidth
      table.exponential.withUnsafeBufferPointer { exponentials in
        /// The output for an input `difference` below the row maximum.
        func probability(_ difference: Int) -> Output {
          guard difference < table.includedCount, exponent <= 31 else { return Output.min }
          let scaled = FixedPoint.saturatingRoundingDoublingHighMultiply(reciprocal, exponentials[difference])
          return Output(clamping: FixedPoint.roundingDivideByPowerOfTwo(scaled, exponent) &+ Int32(Output.min))
        }
        if depth < Self.rowTableDepth {
          for index in 0..<depth {
            destination[index] = probability(Int(maximum &- Int32(truncatingIfNeeded: source[index])))
          }
        } else {
          // Long rows: every possible difference once, then a look-up per element.
          withUnsafeTemporaryAllocation(of: Output.self, capacity: 256) { outputs in
            for difference in 0..<256 { outputs[difference] = probability(difference) }
            for index in 0..<depth {
              destination[index] = outputs[Int(maximum &- Int32(truncatingIfNeeded: source[index]))]
            }
          }
        }
      }
    }
  }

  /// Rows from this depth on tabulate their 256 possible outputs first.
  static var rowTableDepth: Int { 512 }
}

/// SOFTMAX of int16 rows (zero points 0, output scale 1/32768).
private struct SixteenBitSoftmax {
  let multiplier: QuantizedMultiplier
  let rounding: RoundingPolicy
  /// e^x for x in [−10, 0] on the int16 range.
  let exponentialTable: [Int16]
  /// 1/(1 + x) for x in [0, 1] on the int16 range.
  let reciprocalTable: [Int16]

  init(input: QuantizedOperand, beta: Float, rounding: RoundingPolicy) {
    let range = Double(Int32(Int16.max) - Int32(Int16.min))
    exponentialTable = QuantizedLookupTable.sixteenBit(
      inputScale: 10 / range, inputZeroPoint: Int32(Int16.max), outputScale: 2 / range, outputZeroPoint: 0,
      transform: TabulatedFunction.exponential)
    reciprocalTable = QuantizedLookupTable.sixteenBit(
      inputScale: 1 / range, inputZeroPoint: Int32(Int16.min), outputScale: 2 / range, outputZeroPoint: 0,
      transform: TabulatedFunction.oneOverOnePlus)
    // β · scale is formed in float, then divided in double, as TFLite does.
    multiplier = QuantizedMultiplier(Double(input.scale * beta) / (10.0 / 65535.0), rounding: rounding)
    self.rounding = rounding
  }

  func run(input: UnsafeRawPointer, output: UnsafeMutableRawPointer, depth: Int, rows: Range<Int>) {
    exponentialTable.withUnsafeBufferPointer { exponentials in
      reciprocalTable.withUnsafeBufferPointer { reciprocals in
        let exponentialEntries = exponentials.baseAddress.unsafelyUnwrapped
        let reciprocalEntries = reciprocals.baseAddress.unsafelyUnwrapped
        for row in rows {
          let source = input.assumingMemoryBound(to: Int16.self) + row * depth
          let destination = output.assumingMemoryBound(to: Int16.self) + row * depth
          let maximum = Int32(rowMaximum(source, depth: depth))
          var sum: Int32 = 0
          for index in 0..<depth {
            let scaled = multiplier.apply(Int32(source[index]) &- maximum, rounding: rounding)
            let shifted = Int16(clamping: scaled &+ 32767)
            let exponential = QuantizedLookupTable.lookup(shifted, in: exponentialEntries)
            destination[index] = exponential
            sum &+= Int32(exponential)
          }
          let headroomPlusOne = UInt32(bitPattern: sum).leadingZeroBitCount
          let shiftedSum = Int32(truncatingIfNeeded: ((Int64(sum) << (headroomPlusOne - 1)) + (1 << 13)) >> 14)
          let reciprocal = QuantizedLookupTable.lookup(
            Int16(clamping: shiftedSum &- ((1 << 15) + (1 << 16))), in: reciprocalEntries)
          let rightShift = 31 - headroomPlusOne
          let round = Int64(1) << (rightShift - 1)
          for index in 0..<depth {
            let result = Int32(truncatingIfNeeded: (Int64(destination[index]) * Int64(reciprocal) + round) >> rightShift)
            destination[index] = Int16(min(max(result, 0), 32767))
          }
        }
      }
    }
  }
}

// MARK: - LOG_SOFTMAX

/// LOG_SOFTMAX on int8 and uint8 tensors (output scale 16/256, zero point at the type's maximum).
final class IntegerLogSoftmaxKernel: IntegerRowKernel, Kernel {
  init(node: Node) throws {
    try super.init(node: node, op: "LOG_SOFTMAX", types: [(.int8, .int8), (.uint8, .uint8)])
  }

  func prepare(_ context: inout PrepareContext) throws {
    try prepareShape()
    let rounding = context.roundingPolicy
    let inputOperand = try QuantizedOperand(input, op: op)
    let outputOperand = try QuantizedOperand(output, op: op)
    guard outputOperand.scale == 16 / 256 else {
      throw KernelError.invalid("\(op): the output must have scale 16/256, got \(outputOperand.scale)")
    }
    guard outputOperand.zeroPoint == outputOperand.range.upperBound else {
      throw KernelError.invalid(
        "\(op): a \(output.type.name) output must have zero point \(outputOperand.range.upperBound), got \(outputOperand.zeroPoint)")
    }
    let multiplier = FixedPoint.softmaxInputMultiplier(
      beta: 1, inputScale: Double(inputOperand.scale), integerBits: SoftmaxFormat.differenceIntegerBits,
      rounding: rounding)
    guard (1...31).contains(multiplier.shift) else {
      throw KernelError.invalid("\(op): input scale \(inputOperand.scale) is outside the range the kernel can rescale")
    }
    let reverse = QuantizedMultiplier(
      Double(Int64(1) << (31 - multiplier.shift)) / Double(multiplier.multiplier), rounding: rounding)
    let differenceMin = -FixedPoint.inputRadius(
      integerBits: SoftmaxFormat.differenceIntegerBits, inputLeftShift: multiplier.shift)
    let table = DifferenceTable(multiplier: multiplier, differenceMin: differenceMin, rounding: rounding)
    setBody(
      try input.type.visitQuantized(
        EightBitLogSoftmaxFactory(table: table, reverse: reverse, differenceMin: differenceMin, rounding: rounding)))
  }
}

/// Builds the typed 8-bit log-softmax.
private struct EightBitLogSoftmaxFactory: QuantizedTypeVisitor {
  let table: DifferenceTable
  let reverse: QuantizedMultiplier
  let differenceMin: Int32
  let rounding: RoundingPolicy
  func visit<Element: QuantizedInteger>(_ type: Element.Type) throws -> RowLoop {
    let logSoftmax = EightBitLogSoftmax<Element>(
      table: table, reverse: reverse, differenceMin: differenceMin, rounding: rounding)
    return { logSoftmax.run(input: $0, output: $1, depth: $2, rows: $3) }
  }
}

/// LOG_SOFTMAX of 8-bit rows.
private struct EightBitLogSoftmax<Element: QuantizedInteger> {
  let table: DifferenceTable
  /// Maps a Q5.26 logarithm back to raw input differences.
  let reverse: QuantizedMultiplier
  let differenceMin: Int32
  let rounding: RoundingPolicy

  func run(input: UnsafeRawPointer, output: UnsafeMutableRawPointer, depth: Int, rows: Range<Int>) {
    let outputShift = 31 - SoftmaxFormat.differenceIntegerBits - SoftmaxFormat.logOutputIntegerBits
    for row in rows {
      let source = input.assumingMemoryBound(to: Element.self) + row * depth
      let destination = output.assumingMemoryBound(to: Element.self) + row * depth
      let maximum = Int32(truncatingIfNeeded: rowMaximum(source, depth: depth))
      let sum = table.sumOfExponentials(source, depth: depth, maximum: maximum)
      let logSum = FixedPoint.logOfValueAtLeastOne(
        sum, inputIntegerBits: SoftmaxFormat.accumulatorIntegerBits, outputIntegerBits: SoftmaxFormat.differenceIntegerBits)
      let adjustedDifferenceMin = max(differenceMin - 1, reverse.apply(logSum &+ Int32.min, rounding: rounding))
      for index in 0..<depth {
        let difference = Int32(truncatingIfNeeded: source[index]) &- maximum
        guard difference > adjustedDifferenceMin else {
          destination[index] = Element.min
          continue
        }
        let scaled = table.scaled[Int(-difference)]
        let value = FixedPoint.roundingDivideByPowerOfTwo(scaled &- logSum, outputShift) &+ Int32(Element.max)
        destination[index] = Element(clamping: value)
      }
    }
  }
}
