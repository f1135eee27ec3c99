// Quantized activations (int8, uint8 and, where TFLite has them, int16): RELU, RELU6,
// RELU_N1_TO_1, RELU_0_TO_1, LEAKY_RELU, HARD_SWISH, LOGISTIC, TANH, GELU and ELU, each bit-exact
// with LiteRT's reference kernels. 8-bit inputs run through a 256-entry table built at prepare
// time from the reference formula; int16 inputs apply the formula element by element.

import TFLiteFormat
import TFLiteLinearAlgebra

/// What a quantized one-input, same-shape kernel computes.
protocol IntegerUnaryDefinition {
  /// The TFLite operator name.
  static var operatorName: String { get }
  /// Reads the options; throws ``KernelError/unsupported(_:)`` for operand types it does not run
  /// (float nodes belong to the float kernels).
  init(node: Node, input: RuntimeTensor, output: RuntimeTensor) throws
  /// Validates the quantization and prepares the element map.
  func prepare(input: RuntimeTensor, output: RuntimeTensor, rounding: RoundingPolicy) throws -> QuantizedElementMap
  /// The condition LiteRT checks on the input's values when the operator runs, if any.
  func inputCondition(input: RuntimeTensor) throws -> QuantizedInputCondition?
}

extension IntegerUnaryDefinition {
  func inputCondition(input: RuntimeTensor) throws -> QuantizedInputCondition? { nil }
}

/// A quantized kernel whose output has its input's shape and each output element depends on the
/// same input element.
final class IntegerUnaryKernel<Definition: IntegerUnaryDefinition>: Kernel {
  /// Output element i is computed from input element i (a broadcast operand is never the one
  /// shared: it is smaller than the output).
  static var writesOutputInPlace: Bool { true }
  private let input: RuntimeTensor
  private let output: RuntimeTensor
  private let definition: Definition
  private var map: QuantizedElementMap?
  private var condition: QuantizedInputCondition?

  init(node: Node) throws {
    try node.expect(inputs: 1, outputs: 1)
    input = try node.input(0)
    output = try node.output(0)
    definition = try Definition(node: node, input: input, output: output)
  }

  func prepare(_ context: inout PrepareContext) throws {
    map = try definition.prepare(input: input, output: output, rounding: context.roundingPolicy)
    condition = try definition.inputCondition(input: input)
    output.shape = input.shape
  }

  func eval(_ context: EvalContext) throws {
    guard let map else { throw KernelError.invalid("\(Definition.operatorName) evaluated before prepare") }
    try condition?.check(input, op: Definition.operatorName)
    try map.run(input: input, output: output, context)
  }

  var kernelDescription: String? { byteTableLevel(input: input, output: output) }
}

extension QuantizedElementMap {
  /// Maps all of `input` into `output`, split across threads.
  func run(input: RuntimeTensor, output: RuntimeTensor, _ context: EvalContext) throws {
    let source = try tensorData(input)
    let destination = try tensorData(output)
    // Read here, on the thread that runs the node: the switch is task-local.
    let generated = GeneratedByteTableKernel.current
    context.forEachChunk(of: output.elementCount, minimumChunk: cheapElementwiseChunk) { range in
      run(input: source, output: destination, range: range, generated: generated)
    }
  }
}

/// x · logistic(x) on int8 or uint8 tensors, for a LOGISTIC whose only reader is a MUL of its
/// output by its input (SiLU): one table of the input byte. The table holds what the LOGISTIC and
/// MUL kernels, prepared as for the separate nodes, compute for each of the 256 input values, so
/// the output is the same bytes; the logistic itself is never written.
final class IntegerSigmoidLinearUnitKernel: Kernel {
  /// Output element i is computed from input element i.
  static var writesOutputInPlace: Bool { true }
  private let logistic: Node
  private let multiply: Node
  private let input: RuntimeTensor
  private let gate: RuntimeTensor
  private let output: RuntimeTensor
  private var map: QuantizedElementMap?

  /// The kernel for `multiply`, one of whose inputs is `logistic`'s output and the other its input.
  init(logistic: Node, multiply: Node) throws {
    try logistic.expect(inputs: 1, outputs: 1)
    try multiply.expect(inputs: 2, outputs: 1)
    let input = try logistic.input(0)
    let gate = try logistic.output(0)
    let operands = [try multiply.input(0), try multiply.input(1)]
    guard operands.contains(where: { $0 === gate }), operands.contains(where: { $0 === input }) else {
      throw KernelError.invalid("MUL node \(multiply.index) does not multiply LOGISTIC node \(logistic.index)'s input and output")
    }
    output = try multiply.output(0)
    _ = try requireQuantizedTypes(input, gate, [.int8, .uint8], op: QuantizedLogistic.operatorName)
    _ = try requireQuantizedTypes(input, output, [.int8, .uint8], op: IntegerMultiplyDefinition.operatorName)
    self.logistic = logistic
    self.multiply = multiply
    self.input = input
    self.gate = gate
  }

  /// Refused: the kernel is built from the LOGISTIC and MUL nodes the lowering pairs.
  init(node: Node) throws {
    throw KernelError.invalid("node \(node.index): the 8-bit SiLU kernel is made from a LOGISTIC and a MUL node")
  }

  func prepare(_ context: inout PrepareContext) throws {
    let rounding = context.roundingPolicy
    let logisticMap = try IntegerSigmoidDefinition<QuantizedLogistic>(node: logistic, input: input, output: gate)
      .prepare(input: input, output: gate, rounding: rounding)
    let lhs = try multiply.input(0)
    let rhs = try multiply.input(1)
    let multiplyMap = try IntegerMultiplyDefinition(node: multiply, lhs: lhs, rhs: rhs, output: output)
      .prepare(lhs: lhs, rhs: rhs, output: output, rounding: rounding, elementCount: 256)
    // Every input byte through LOGISTIC, then MUL with the operands in the node's order.
    let inputs = (0...255).map { UInt8($0) }
    var gates = [UInt8](repeating: 0, count: 256)
    var products = [UInt8](repeating: 0, count: 256)
    logisticMap.run(input: inputs, output: &gates, range: 0..<256, generated: nil)
    let (first, second) = lhs === gate ? (gates, inputs) : (inputs, gates)
    multiplyMap.run(
      layout: try BroadcastLayout(broadcasting: [[256], [256]]), lhs: first, rhs: second, output: &products,
      range: 0..<256)
    let signed = input.type == .int8
    let lowest: Int32 = signed ? -128 : 0
    let table = (lowest...(lowest + 255)).map { raw in
      let byte = products[Int(UInt8(truncatingIfNeeded: raw))]
      return signed ? Int32(Int8(bitPattern: byte)) : Int32(byte)
    }
    map = try QuantizedElementMap(
      TabulatedQuantizedFunction(table: table, lowest: lowest), from: input.type, to: output.type)
    output.shape = input.shape
  }

  func eval(_ context: EvalContext) throws {
    guard let map else { throw KernelError.invalid("MUL evaluated before prepare") }
    try map.run(input: input, output: output, context)
  }

  var kernelDescription: String? {
    "\(byteTableLevel(input: input, output: output) ?? KernelDescription.swiftLevel), LOGISTIC and MUL as one table"
  }
}

/// Where an 8-bit to 8-bit table map runs now (`generated AVX-512F` on the generated look-up),
/// nil for other element types (their one Swift implementation).
func byteTableLevel(input: RuntimeTensor, output: RuntimeTensor) -> String? {
  guard [input.type, output.type].allSatisfy({ $0 == .int8 || $0 == .uint8 }) else { return nil }
  return GeneratedByteTableKernel.current.map { _ in "generated \(GeneratedKernelISA.avx512) byte table" }
    ?? KernelDescription.swiftLevel
}

/// Throws `unsupported` unless input and output have one type and `types` contains it.
func requireQuantizedTypes(
  _ input: RuntimeTensor, _ output: RuntimeTensor, _ types: [ElementType], op: String
) throws -> ElementType {
  guard input.type == output.type, types.contains(input.type) else {
    throw KernelError.unsupported(
      "\(op) from \(input.type.name) to \(output.type.name) in the quantized kernels (they take \(types.map(\.name).joined(separator: ", ")))")
  }
  return input.type
}

// MARK: - Per-element functions

/// A function given by its 256 values on an 8-bit input range.
struct TabulatedQuantizedFunction: QuantizedUnaryFunction {
  /// Output for each raw input, from the lowest.
  let table: [Int32]
  /// The lowest raw input.
  let lowest: Int32
  @inline(__always)
  func callAsFunction(_ x: Int32) -> Int32 { table[Int(x &- lowest)] }
}

/// Rescales `x − inputZeroPoint` by `multiplier`, adds the output zero point and clamps: the
/// requantization of QUANTIZE and the quantized RELU family (`ReluX`).
struct RescaleFunction: QuantizedUnaryFunction {
  let inputZeroPoint: Int32
  let outputZeroPoint: Int32
  let multiplier: QuantizedMultiplier
  let rounding: RoundingPolicy
  /// Clamp bounds, applied as max then min (so crossed bounds give `upper`).
  let lower: Int32
  let upper: Int32
  @inline(__always)
  func callAsFunction(_ x: Int32) -> Int32 {
    let rescaled = outputZeroPoint &+ multiplier.apply(x &- inputZeroPoint, rounding: rounding)
    return min(max(rescaled, lower), upper)
  }
}

/// LEAKY_RELU: the identity and alpha branches rescaled separately.
struct LeakyReluFunction: QuantizedUnaryFunction {
  let inputZeroPoint: Int32
  let outputZeroPoint: Int32
  let identity: QuantizedMultiplier
  /// |alpha| · input scale / output scale.
  let alpha: QuantizedMultiplier
  let alphaIsNegative: Bool
  let rounding: RoundingPolicy
  let range: ClosedRange<Int32>
  @inline(__always)
  func callAsFunction(_ x: Int32) -> Int32 {
    let value = x &- inputZeroPoint
    var result = outputZeroPoint
    if value >= 0 {
      result &+= identity.apply(value, rounding: rounding)
    } else {
      let scaled = alpha.apply(value, rounding: rounding)
      result &+= alphaIsNegative ? 0 &- scaled : scaled
    }
    return min(max(result, range.lowerBound), range.upperBound)
  }
}

/// HARD_SWISH in TFLite's 16-bit fixed point: the input on a finer scale times a "reluish"
/// factor in [0, 1] that ramps from −3 to 3.
struct HardSwishFunction: QuantizedUnaryFunction {
  let inputZeroPoint: Int32
  let outputZeroPoint: Int32
  let outputMultiplier: Int16
  let outputExponent: Int
  let reluishMultiplier: Int16
  let reluishExponent: Int
  let range: ClosedRange<Int32>

  /// `value · 2^amount` clamped to Int16.
  @inline(__always)
  private func saturatingLeftShift(_ value: Int16, _ amount: Int) -> Int16 {
    Int16(clamping: Int64(value) << amount)
  }

  @inline(__always)
  func callAsFunction(_ x: Int32) -> Int32 {
    let input = Int16(truncatingIfNeeded: x &- inputZeroPoint)
    let hiresInput = input &* (1 << 7)
    let preshiftOutput = FixedPoint.saturatingRoundingDoublingHighMultiply(hiresInput, outputMultiplier)
    var reluish = hiresInput
    if reluishExponent > 0 { reluish = saturatingLeftShift(reluish, reluishExponent - 1) }
    reluish = FixedPoint.saturatingRoundingDoublingHighMultiply(reluish, reluishMultiplier)
    if reluishExponent > 0 { reluish = saturatingLeftShift(reluish, 1) }
    if reluishExponent < 0 {
      reluish = Int16(truncatingIfNeeded: FixedPoint.roundingDivideByPowerOfTwo(Int32(reluish), -reluishExponent))
    }
    reluish = Int16(truncatingIfNeeded: (Int32(reluish) + (1 << 15)) >> 1)
    // The doubling high multiply without rounding: truncating division of the doubled product.
    let product: Int16 =
      reluish == preshiftOutput && reluish == .min
      ? .max : Int16(truncatingIfNeeded: (Int32(reluish) * Int32(preshiftOutput)) / (1 << 15))
    var output = Int16(truncatingIfNeeded: FixedPoint.roundingDivideByPowerOfTwo(Int32(product), -outputExponent))
    output = output &+ Int16(truncatingIfNeeded: outputZeroPoint)
    return min(max(Int32(output), range.lowerBound), range.upperBound)
  }
}

/// The 16-bit LOGISTIC and TANH: the input rescaled to Q3.12 (or scaled by 3 for a power-of-two
/// input scale), then the logistic table interpolated.
struct SixteenBitSigmoidFunction: QuantizedUnaryFunction {
  /// Which curve.
  enum Curve { case logistic, hyperbolicTangent }
  let curve: Curve
  let multiplier: Int32
  let shift: Int32
  let table: [UInt16]

  /// The multiplier and shift TFLite derives for an int16 input of `scale` (`maximumPowerOfTwoShift`
  /// is the largest shift a power-of-two scale may use directly: 0 for LOGISTIC, 1 for TANH).
  init(curve: Curve, inputScale: Float, maximumPowerOfTwoShift: Int) {
    self.curve = curve
    table = QuantizedLookupTable.logisticQ16
    let (log2, isPowerOfTwo) = FixedPoint.checkedLog2(inputScale)
    let powerOfTwoShift = 12 + log2
    if isPowerOfTwo && (0...maximumPowerOfTwoShift).contains(powerOfTwoShift) {
      multiplier = 3 << Int32(powerOfTwoShift)
      shift = 0
    } else {
      var real = Double(inputScale) * 4096.0 * 3.0
      var steps: Int32 = 0
      while real <= 32767.0 / 2.0 && steps <= 30 {
        steps += 1
        real *= 2
      }
      multiplier = Int32(real)
      shift = steps
    }
  }

  @inline(__always)
  func callAsFunction(_ x: Int32) -> Int32 {
    let round: Int32 = shift > 0 ? 1 << (shift - 1) : 0
    let value = (x &* multiplier &+ round) >> shift
    let magnitude = value.magnitude
    switch curve {
    case .logistic:
      let high = Int(magnitude >> 9)
      var result: UInt32
      if high >= 255 {
        result = 0x7FFF << 10
      } else {
        let low = UInt32(table[high])
        let next = UInt32(table[high + 1])
        result = (low << 9) &+ (magnitude & 0x1FF) &* (next &- low)
      }
      result = value >= 0 ? result &+ (1 << 9) : (1 << 25) &- result &+ (1 << 9) &- 1
      return Int32(Int16(truncatingIfNeeded: result >> 10))
    case .hyperbolicTangent:
      let high = Int(magnitude >> 8)
      var result: Int32
      if high >= 255 {
        result = 0xFFFF << 8
      } else {
        let low = UInt32(table[high])
        let next = UInt32(table[high + 1])
        result = Int32(bitPattern: (low << 8) &+ (magnitude & 0xFF) &* (next &- low))
      }
      result = value >= 0 ? result &- (1 << 23) &+ (1 << 7) : (1 << 23) &- result &+ (1 << 7) &- 1
      return Int32(Int16(truncatingIfNeeded: result >> 8))
    }
  }
}

/// A 16-bit function interpolated in a 513-entry table (GELU on int16).
struct SixteenBitTableFunction: QuantizedUnaryFunction {
  let table: [Int16]
  @inline(__always)
  func callAsFunction(_ x: Int32) -> Int32 {
    table.withUnsafeBufferPointer { entries in
      Int32(QuantizedLookupTable.lookup(Int16(truncatingIfNeeded: x), in: entries.baseAddress.unsafelyUnwrapped))
    }
  }
}

/// The 8-bit table TFLite builds for a float `transform` between the two operands.
func eightBitTable(
  input: QuantizedOperand, output: QuantizedOperand, transform: (Float) -> Float
) -> TabulatedQuantizedFunction {
  let table = QuantizedLookupTable.eightBit(
    inputRange: input.range, inputScale: input.scale, inputZeroPoint: input.zeroPoint, outputScale: output.scale,
    outputZeroPoint: output.zeroPoint, outputRange: output.range, transform: transform)
  return TabulatedQuantizedFunction(table: table, lowest: input.range.lowerBound)
}

// MARK: - Definitions

/// The clamps of the RELU family.
protocol ReluBounds {
  static var operatorName: String { get }
  /// Real lower bound.
  static var lower: Float { get }
  /// Real upper bound (infinity for none).
  static var upper: Float { get }
  /// Types TFLite runs the operator on.
  static var types: [ElementType] { get }
}

/// RELU.
enum QuantizedRelu: ReluBounds {
  static let operatorName = "RELU"
  static let lower: Float = 0
  static let upper = Float.infinity
  static let types: [ElementType] = [.int8, .uint8, .int16]
}

/// RELU6.
enum QuantizedRelu6: ReluBounds {
  static let operatorName = "RELU6"
  static let lower: Float = 0
  static let upper: Float = 6
  static let types: [ElementType] = [.int8, .uint8, .int16]
}

/// RELU_N1_TO_1.
enum QuantizedReluMinusOneToOne: ReluBounds {
  static let operatorName = "RELU_N1_TO_1"
  static let lower: Float = -1
  static let upper: Float = 1
  static let types: [ElementType] = [.int8, .uint8]
}

/// RELU_0_TO_1.
enum QuantizedReluZeroToOne: ReluBounds {
  static let operatorName = "RELU_0_TO_1"
  static let lower: Float = 0
  static let upper: Float = 1
  static let types: [ElementType] = [.int8, .uint8]
}

/// The RELU family: requantize to the output scale, then clamp to the quantized bounds.
struct IntegerReluDefinition<Bounds: ReluBounds>: IntegerUnaryDefinition {
  static var operatorName: String { Bounds.operatorName }
  private let type: ElementType

  init(node: Node, input: RuntimeTensor, output: RuntimeTensor) throws {
    type = try requireQuantizedTypes(input, output, Bounds.types, op: Bounds.operatorName)
  }

  func prepare(input: RuntimeTensor, output: RuntimeTensor, rounding: RoundingPolicy) throws -> QuantizedElementMap {
    let symmetric = type == .int16
    let inputOperand = try QuantizedOperand(input, op: Self.operatorName, symmetric: symmetric)
    let outputOperand = try QuantizedOperand(output, op: Self.operatorName, symmetric: symmetric)
    func bound(_ real: Float) -> Int64 {
      Int64(outputOperand.zeroPoint) + Int64(FixedPoint.truncatingConversion((real / outputOperand.scale).rounded()))
    }
    let lower = Int32(clamping: max(Int64(outputOperand.range.lowerBound), bound(Bounds.lower)))
    let upper =
      Bounds.upper.isInfinite
      ? outputOperand.range.upperBound : Int32(clamping: min(Int64(outputOperand.range.upperBound), bound(Bounds.upper)))
    let function = RescaleFunction(
      inputZeroPoint: inputOperand.zeroPoint, outputZeroPoint: outputOperand.zeroPoint,
      multiplier: QuantizedMultiplier(Double(inputOperand.scale / outputOperand.scale), rounding: rounding),
      rounding: rounding, lower: lower, upper: upper)
    return try QuantizedElementMap(function, from: type, to: type)
  }
}

/// LEAKY_RELU.
struct IntegerLeakyReluDefinition: IntegerUnaryDefinition {
  static let operatorName = "LEAKY_RELU"
  private let type: ElementType
  private let alpha: Float

  init(node: Node, input: RuntimeTensor, output: RuntimeTensor) throws {
    type = try requireQuantizedTypes(input, output, [.int8, .uint8, .int16], op: Self.operatorName)
    if case .leakyReluOptions(let options) = node.options {
      alpha = options.alpha
    } else {
      alpha = LeakyReluOptions().alpha
    }
  }

  func prepare(input: RuntimeTensor, output: RuntimeTensor, rounding: RoundingPolicy) throws -> QuantizedElementMap {
    let symmetric = type == .int16
    let inputOperand = try QuantizedOperand(input, op: Self.operatorName, symmetric: symmetric)
    let outputOperand = try QuantizedOperand(output, op: Self.operatorName, symmetric: symmetric)
    // Both ratios are formed in float, as TFLite does.
    let alphaRatio = inputOperand.scale * alpha / outputOperand.scale
    let function = LeakyReluFunction(
      inputZeroPoint: inputOperand.zeroPoint, outputZeroPoint: outputOperand.zeroPoint,
      identity: QuantizedMultiplier(Double(inputOperand.scale / outputOperand.scale), rounding: rounding),
      alpha: QuantizedMultiplier(Double(alphaRatio.magnitude), rounding: rounding), alphaIsNegative: alphaRatio < 0,
      rounding: rounding, range: outputOperand.range)
    return try QuantizedElementMap(function, from: type, to: type)
  }
}

/// HARD_SWISH (int8 and uint8).
struct IntegerHardSwishDefinition: IntegerUnaryDefinition {
  static let operatorName = "HARD_SWISH"
  private let type: ElementType

  init(node: Node, input: RuntimeTensor, output: RuntimeTensor) throws {
    type = try requireQuantizedTypes(input, output, [.int8, .uint8], op: Self.operatorName)
  }

  func prepare(input: RuntimeTensor, output: RuntimeTensor, rounding: RoundingPolicy) throws -> QuantizedElementMap {
    let inputOperand = try QuantizedOperand(input, op: Self.operatorName)
    let outputOperand = try QuantizedOperand(output, op: Self.operatorName)
    let hiresInputScale = (1 / 128 as Float) * inputOperand.scale
    let outputMultiplier = QuantizedMultiplier(Double(hiresInputScale / outputOperand.scale), rounding: rounding)
    guard outputMultiplier.shift <= 0 else {
      throw KernelError.invalid(
        "\(Self.operatorName): output scale \(outputOperand.scale) is too small for input scale \(inputOperand.scale)")
    }
    let reluishMultiplier = QuantizedMultiplier(Double(hiresInputScale / (3 / 32768 as Float)), rounding: rounding)
    let function = HardSwishFunction(
      inputZeroPoint: inputOperand.zeroPoint, outputZeroPoint: outputOperand.zeroPoint,
      outputMultiplier: outputMultiplier.sixteenBitMantissa, outputExponent: outputMultiplier.shift,
      reluishMultiplier: reluishMultiplier.sixteenBitMantissa, reluishExponent: reluishMultiplier.shift,
      range: outputOperand.range)
    return try QuantizedElementMap(function, from: type, to: type)
  }
}

/// LOGISTIC or TANH.
protocol SigmoidCurve {
  static var operatorName: String { get }
  /// The curve of the 16-bit kernel.
  static var curve: SixteenBitSigmoidFunction.Curve { get }
  /// The function the 8-bit table holds.
  static func transform(_ x: Float) -> Float
  /// The output scale an 8-bit output must have, if TFLite fixes one.
  static var eightBitOutputScale: Float? { get }
  /// The largest shift of a power-of-two int16 input scale the 16-bit kernel uses directly.
  static var maximumPowerOfTwoShift: Int { get }
}

/// LOGISTIC: output scale 1/256 on 8 bits.
enum QuantizedLogistic: SigmoidCurve {
  static let operatorName = "LOGISTIC"
  static let curve = SixteenBitSigmoidFunction.Curve.logistic
  static func transform(_ x: Float) -> Float { TabulatedFunction.logistic(x) }
  static let eightBitOutputScale: Float? = 1 / 256
  static let maximumPowerOfTwoShift = 0
}

/// TANH.
enum QuantizedTanh: SigmoidCurve {
  static let operatorName = "TANH"
  static let curve = SixteenBitSigmoidFunction.Curve.hyperbolicTangent
  static func transform(_ x: Float) -> Float { TabulatedFunction.hyperbolicTangent(x) }
  static let eightBitOutputScale: Float? = nil
  static let maximumPowerOfTwoShift = 1
}

/// LOGISTIC and TANH: an 8-bit table of the function, or the int16 interpolation of the logistic
/// table with output scale 2^−15.
struct IntegerSigmoidDefinition<Curve: SigmoidCurve>: IntegerUnaryDefinition {
  static var operatorName: String { Curve.operatorName }
  private let type: ElementType

  init(node: Node, input: RuntimeTensor, output: RuntimeTensor) throws {
    type = try requireQuantizedTypes(input, output, [.int8, .uint8, .int16], op: Self.operatorName)
  }

  func prepare(input: RuntimeTensor, output: RuntimeTensor, rounding: RoundingPolicy) throws -> QuantizedElementMap {
    let symmetric = type == .int16
    let inputOperand = try QuantizedOperand(input, op: Self.operatorName, symmetric: symmetric)
    let outputOperand = try QuantizedOperand(output, op: Self.operatorName, symmetric: symmetric)
    if symmetric {
      let (log2, isPowerOfTwo) = FixedPoint.checkedLog2(outputOperand.scale)
      guard isPowerOfTwo && log2 == -15 else {
        throw KernelError.invalid("\(Self.operatorName): an int16 output must have scale 1/32768, got \(outputOperand.scale)")
      }
      let function = SixteenBitSigmoidFunction(
        curve: Curve.curve, inputScale: inputOperand.scale, maximumPowerOfTwoShift: Curve.maximumPowerOfTwoShift)
      return try QuantizedElementMap(function, from: type, to: type)
    }
    if let required = Curve.eightBitOutputScale, outputOperand.scale != required {
      throw KernelError.invalid("\(Self.operatorName): an 8-bit output must have scale \(required), got \(outputOperand.scale)")
    }
    let function = eightBitTable(input: inputOperand, output: outputOperand, transform: Curve.transform)
    return try QuantizedElementMap(function, from: type, to: type)
  }
}

/// GELU (exact or tanh-approximated): an 8-bit table, or a 513-entry interpolated table on int16.
struct IntegerGeluDefinition: IntegerUnaryDefinition {
  static let operatorName = "GELU"
  private let type: ElementType
  private let approximate: Bool

  init(node: Node, input: RuntimeTensor, output: RuntimeTensor) throws {
    type = try requireQuantizedTypes(input, output, [.int8, .uint8, .int16], op: Self.operatorName)
    if case .geluOptions(let options) = node.options {
      approximate = options.approximate
    } else {
      approximate = false
    }
  }

  func prepare(input: RuntimeTensor, output: RuntimeTensor, rounding: RoundingPolicy) throws -> QuantizedElementMap {
    let inputOperand = try QuantizedOperand(input, op: Self.operatorName)
    let outputOperand = try QuantizedOperand(output, op: Self.operatorName)
    let transform = approximate ? TabulatedFunction.approximateGelu : TabulatedFunction.gelu
    if type == .int16 {
      let table = QuantizedLookupTable.sixteenBit(
        inputScale: inputOperand.scale, inputZeroPoint: inputOperand.zeroPoint, outputScale: outputOperand.scale,
        outputZeroPoint: outputOperand.zeroPoint, transform: transform)
      return try QuantizedElementMap(SixteenBitTableFunction(table: table), from: type, to: type)
    }
    let function = eightBitTable(input: inputOperand, output: outputOperand, transform: transform)
    return try QuantizedElementMap(function, from: type, to: type)
  }
}

/// ELU on int8: a table of x (x ≥ 0) and e^x − 1 (x < 0).
struct IntegerExponentialLinearUnitDefinition: IntegerUnaryDefinition {
  static let operatorName = "ELU"

  init(node: Node, input: RuntimeTensor, output: RuntimeTensor) throws {
    _ = try requireQuantizedTypes(input, output, [.int8], op: Self.operatorName)
  }

  func prepare(input: RuntimeTensor, output: RuntimeTensor, rounding: RoundingPolicy) throws -> QuantizedElementMap {
    let inputOperand = try QuantizedOperand(input, op: Self.operatorName)
    let outputOperand = try QuantizedOperand(output, op: Self.operatorName)
    let function = eightBitTable(
      input: inputOperand, output: outputOperand, transform: TabulatedFunction.exponentialLinearUnit)
    return try QuantizedElementMap(function, from: .int8, to: .int8)
  }
}
