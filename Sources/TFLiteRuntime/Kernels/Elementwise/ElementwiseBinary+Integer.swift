// Quantized broadcasting binary operators: ADD, SUB, MUL, DIV, SQUARED_DIFFERENCE, MAXIMUM,
// MINIMUM and PRELU, bit-exact with LiteRT's reference kernels.
//
// ADD and SUB bring both inputs to a common scale with 20 (int16: 15) extra bits of precision,
// add, and rescale to the output; MUL rescales the product of the offset inputs once. On int16
// with power-of-two scales and `pot_scale_int16`, ADD and SUB use TFLite's exact shift path. DIV
// multiplies the numerator by a fixed-point reciprocal of the divisor and rescales the quotient.
// 8-bit ADD, SUB and MUL run on generated kernels where they run (GeneratedElementwise.swift),
// giving the same bytes.

import TFLiteFormat
import TFLiteLinearAlgebra

/// What a quantized two-input broadcasting kernel computes.
protocol IntegerBinaryDefinition {
  /// The TFLite operator name.
  static var operatorName: String { get }
  /// True when the output must keep the first input's shape (PRELU).
  static var outputKeepsFirstShape: Bool { get }
  /// The fewest elements worth a parallel chunk of their own.
  static var minimumChunk: Int { get }
  /// Reads the options; throws ``KernelError/unsupported(_:)`` for operand types it does not run.
  init(node: Node, lhs: RuntimeTensor, rhs: RuntimeTensor, output: RuntimeTensor) throws
  /// Validates the quantization and prepares the operation for `elementCount` outputs.
  func prepare(
    lhs: RuntimeTensor, rhs: RuntimeTensor, output: RuntimeTensor, rounding: RoundingPolicy, elementCount: Int
  ) throws -> QuantizedBinaryMap
  /// The condition LiteRT checks on the second input's values when the operator runs, if any.
  func rhsCondition(rhs: RuntimeTensor) throws -> QuantizedInputCondition?
}

extension IntegerBinaryDefinition {
  static var outputKeepsFirstShape: Bool { false }
  static var minimumChunk: Int { cheapElementwiseChunk }
  func rhsCondition(rhs: RuntimeTensor) throws -> QuantizedInputCondition? { nil }
}

/// A quantized kernel combining two broadcast operands element by element.
final class IntegerBinaryKernel<Definition: IntegerBinaryDefinition>: Kernel {
  /// Output element i is computed from input element i (a broadcast operand is never the one
  /// shared: it is smaller than the output).
  static var writesOutputInPlace: Bool { true }
  private let lhs: RuntimeTensor
  private let rhs: RuntimeTensor
  private let output: RuntimeTensor
  private let definition: Definition
  private var prepared: PreparedIntegerBinary?
  /// The generated route of an 8-bit ADD, SUB or MUL whose operands stream or repeat.
  private var generatedPlan: GeneratedBinaryPlan?

  init(node: Node) throws {
    (lhs, rhs, output) = try node.twoInputsAndOutput()
    definition = try Definition(node: node, lhs: lhs, rhs: rhs, output: output)
  }

  func prepare(_ context: inout PrepareContext) throws {
    let layout = try BroadcastLayout(broadcasting: [lhs.shape, rhs.shape])
    if Definition.outputKeepsFirstShape && layout.shape != lhs.shape {
      throw KernelError.invalid(
        "\(Definition.operatorName): \(rhs.summary) broadcasts \(lhs.summary) to \(layout.shape); the output must keep the input's shape")
    }
    let map = try definition.prepare(
      lhs: lhs, rhs: rhs, output: output, rounding: context.roundingPolicy, elementCount: layout.elementCount)
    prepared = PreparedIntegerBinary(layout: layout, map: map, rhsCondition: try definition.rhsCondition(rhs: rhs))
    generatedPlan = map.generated.flatMap {
      GeneratedBinaryPlan(layout: layout, constants: $0.constants, outputType: $0.output, pairTable: map.pairTable)
    }
    if let generatedPlan, let kernels = GeneratedQuantizedBinaryKernels.current {
      generatedPlan.reserveKernel(on: kernels, lookUp: GeneratedPairTableKernels.current)
    }
    output.shape = layout.shape
  }

  func eval(_ context: EvalContext) throws {
    guard let prepared else {
      throw KernelError.invalid("\(Definition.operatorName) evaluated before prepare")
    }
    try prepared.rhsCondition?.check(rhs, op: Definition.operatorName)
    let lhsData = try tensorData(lhs)
    let rhsData = try tensorData(rhs)
    let outputData = try tensorData(output)
    // Read here, on the thread that runs the node: the switch is task-local.
    guard let generatedPlan, let kernels = GeneratedQuantizedBinaryKernels.current else {
      context.forEachChunk(of: prepared.layout.elementCount, minimumChunk: Definition.minimumChunk) { range in
        prepared.map.run(layout: prepared.layout, lhs: lhsData, rhs: rhsData, output: outputData, range: range)
      }
      return
    }
    let lookUp = GeneratedPairTableKernels.current
    generatedPlan.expandOperands(lhs: lhsData, rhs: rhsData)
    context.forEachChunk(of: prepared.layout.elementCount, minimumChunk: Definition.minimumChunk) { range in
      let rest = generatedPlan.run(
        kernels, lookUp: lookUp, lhs: lhsData, rhs: rhsData, output: outputData, range: range)
      prepared.map.run(layout: prepared.layout, lhs: lhsData, rhs: rhsData, output: outputData, range: rest..<range.upperBound)
    }
  }

  var kernelDescription: String? {
    guard let generatedPlan, let kernels = GeneratedQuantizedBinaryKernels.current else { return nil }
    return generatedPlan.looksUp(with: GeneratedPairTableKernels.current)
      ? "generated \(kernels.isa), pair table look-up" : "generated \(kernels.isa)"
  }
}

/// What an `IntegerBinaryKernel` prepares: the operands' layout, the operation and the condition
/// LiteRT checks on the second input. A class, so that `eval` reads it through one reference (as a
/// tuple in the kernel's optional property, every invoke copied it, retaining and releasing its
/// arrays: most of an 8-bit ADD's time on mobilenet_mini_int8's 768-element sums).
private final class PreparedIntegerBinary {
  let layout: BroadcastLayout
  let map: QuantizedBinaryMap
  let rhsCondition: QuantizedInputCondition?

  init(layout: BroadcastLayout, map: QuantizedBinaryMap, rhsCondition: QuantizedInputCondition?) {
    self.layout = layout
    self.map = map
    self.rhsCondition = rhsCondition
  }
}

/// Throws `unsupported` unless the three operands share a type from `types`; int16 counts only
/// when the output is quantized (plain int16 arithmetic belongs to the integer kernels).
private func requireCommonQuantizedType(
  _ tensors: [RuntimeTensor], output: RuntimeTensor, _ types: [ElementType], op: String
) throws -> ElementType {
  let type = output.type
  guard tensors.allSatisfy({ $0.type == type }), types.contains(type), type != .int16 || output.quantization != nil
  else {
    throw KernelError.unsupported(
      "\(op) on \(tensors.map(\.type.name).joined(separator: ", ")) in the quantized kernels")
  }
  return type
}

/// The fused activation of ADD, SUB, MUL and DIV options.
private func fusedActivation(of node: Node, op: String) throws -> FusedActivation {
  switch node.options {
  case .addOptions(let options): try FusedActivation(options.fusedActivationFunction, op: op)
  case .subOptions(let options): try FusedActivation(options.fusedActivationFunction, op: op)
  case .mulOptions(let options): try FusedActivation(options.fusedActivationFunction, op: op)
  case .divOptions(let options): try FusedActivation(options.fusedActivationFunction, op: op)
  default: .none
  }
}

// MARK: - Per-element functions

/// ADD and SUB (and the input stage of SQUARED_DIFFERENCE): both inputs shifted left by
/// `leftShift` bits and rescaled to twice the larger input scale, then combined. The multipliers
/// are kept as ready vector lanes (``QuantizedMultiplierLanes``), built once at prepare rather
/// than for every eight elements.
struct CommonScaleInputs {
  let lhsZeroPoint: Int32
  let rhsZeroPoint: Int32
  let leftShift: Int32
  let lhsMultiplier: QuantizedMultiplierLanes
  let rhsMultiplier: QuantizedMultiplierLanes
  /// The multipliers the lanes hold (for the generated kernels).
  let multipliers: (lhs: QuantizedMultiplier, rhs: QuantizedMultiplier)
  /// The real value of one unit of the common scale, times 2^leftShift.
  let commonScale: Double

  init(lhs: QuantizedOperand, rhs: QuantizedOperand, leftShift: Int32, rounding: RoundingPolicy) {
    // TFLite forms 2·max in float and the ratios in double.
    commonScale = Double(2 * max(lhs.scale, rhs.scale))
    lhsZeroPoint = lhs.zeroPoint
    rhsZeroPoint = rhs.zeroPoint
    self.leftShift = leftShift
    multipliers = (
      QuantizedMultiplier(Double(lhs.scale) / commonScale, rounding: rounding),
      QuantizedMultiplier(Double(rhs.scale) / commonScale, rounding: rounding)
    )
    lhsMultiplier = QuantizedMultiplierLanes(repeating: multipliers.lhs, rounding: rounding)
    rhsMultiplier = QuantizedMultiplierLanes(repeating: multipliers.rhs, rounding: rounding)
  }

  /// The vector lanes of the quantized multiplier nearest to `real`.
  static func lanes(_ real: Double, rounding: RoundingPolicy) -> QuantizedMultiplierLanes {
    QuantizedMultiplierLanes(repeating: QuantizedMultiplier(real, rounding: rounding), rounding: rounding)
  }

  /// Both inputs on the common scale, eight lanes at once.
  @inline(__always)
  func scaled(_ a: SIMD8<Int32>, _ b: SIMD8<Int32>) -> (SIMD8<Int32>, SIMD8<Int32>) {
    (
      lhsMultiplier.apply((a &- lhsZeroPoint) &<< leftShift),
      rhsMultiplier.apply((b &- rhsZeroPoint) &<< leftShift)
    )
  }
}

/// ADD and SUB in the general path.
struct AddSubtractFunction: QuantizedBinaryFunction {
  let inputs: CommonScaleInputs
  let subtracts: Bool
  let outputMultiplier: QuantizedMultiplierLanes
  let outputZeroPoint: Int32
  let clamp: ClosedRange<Int32>
  @inline(__always)
  func callAsFunction(_ a: SIMD8<Int32>, _ b: SIMD8<Int32>) -> SIMD8<Int32> {
    let (left, right) = inputs.scaled(a, b)
    let sum = subtracts ? left &- right : left &+ right
    return (outputMultiplier.apply(sum) &+ outputZeroPoint).clamped(to: clamp)
  }
}

/// ADD and SUB on int16 with power-of-two scales: the input with the finer scale is shifted
/// right (rounding) onto the output scale.
struct PowerOfTwoAddSubtractFunction: QuantizedBinaryFunction {
  let lhsShift: Int
  let rhsShift: Int
  let subtracts: Bool
  let clamp: ClosedRange<Int32>
  @inline(__always)
  func callAsFunction(_ a: SIMD8<Int32>, _ b: SIMD8<Int32>) -> SIMD8<Int32> {
    let left = FixedPoint.roundingDivideByPowerOfTwo(a, lhsShift)
    let right = FixedPoint.roundingDivideByPowerOfTwo(b, rhsShift)
    return (subtracts ? left &- right : left &+ right).clamped(to: clamp)
  }
}

/// MUL: the product of the offset inputs rescaled to the output.
struct MultiplyFunction: QuantizedBinaryFunction {
  let lhsZeroPoint: Int32
  let rhsZeroPoint: Int32
  let multiplier: QuantizedMultiplierLanes
  let outputZeroPoint: Int32
  let clamp: ClosedRange<Int32>
  @inline(__always)
  func callAsFunction(_ a: SIMD8<Int32>, _ b: SIMD8<Int32>) -> SIMD8<Int32> {
    let product = (a &- lhsZeroPoint) &* (b &- rhsZeroPoint)
    return (multiplier.apply(product) &+ outputZeroPoint).clamped(to: clamp)
  }
}

/// DIV: the offset numerator times a Q0 reciprocal of the offset divisor (both negated for a
/// negative divisor), normalized by the numerator's headroom, then rescaled by the output
/// multiplier with the exponent the normalizations leave, as TFLite's reference kernel does.
struct DivideFunction: QuantizedBinaryFunction {
  let lhsZeroPoint: Int32
  let rhsZeroPoint: Int32
  let multiplier: QuantizedMultiplier
  let outputZeroPoint: Int32
  let rounding: RoundingPolicy
  let clamp: ClosedRange<Int32>

  @inline(__always)
  func callAsFunction(_ a: SIMD8<Int32>, _ b: SIMD8<Int32>) -> SIMD8<Int32> {
    var result = SIMD8<Int32>()
    for lane in 0..<8 { result[lane] = quotient(a[lane], b[lane]) }
    return result
  }

  /// The output for raw inputs `a` and `b` (a divisor equal to its zero point gives a meaningless
  /// value; the kernel rejects such inputs before running).
  @inline(__always)
  func quotient(_ a: Int32, _ b: Int32) -> Int32 {
    var numerator = a &- lhsZeroPoint
    var divisor = b &- rhsZeroPoint
    if divisor < 0 {
      numerator = 0 &- numerator
      divisor = 0 &- divisor
    }
    let (reciprocal, reciprocalExponent) = FixedPoint.reciprocal(divisor, integerBits: 31)
    let headroom = FixedPoint.countLeadingSignBits(numerator)
    let unscaled = QuantizedMultiplier(multiplier: reciprocal, shift: headroom).apply(numerator, rounding: rounding)
    let rescale = QuantizedMultiplier(
      multiplier: multiplier.multiplier, shift: multiplier.shift &- reciprocalExponent &- headroom)
    let value = outputZeroPoint &+ rescale.applyAsSmallerThanOne(unscaled, rounding: rounding)
    return min(max(value, clamp.lowerBound), clamp.upperBound)
  }
}

/// SQUARED_DIFFERENCE (int8): the difference on the common scale (7 extra bits), squared.
struct SquaredDifferenceFunction: QuantizedBinaryFunction {
  let inputs: CommonScaleInputs
  let outputMultiplier: QuantizedMultiplierLanes
  let outputZeroPoint: Int32
  let range: ClosedRange<Int32>
  @inline(__always)
  func callAsFunction(_ a: SIMD8<Int32>, _ b: SIMD8<Int32>) -> SIMD8<Int32> {
    let (left, right) = inputs.scaled(a, b)
    let difference = left &- right
    return (outputMultiplier.apply(difference &* difference) &+ outputZeroPoint)
      .clamped(to: range)
  }
}

/// MAXIMUM or MINIMUM of the raw values (TFLite compares raw values whatever the scales).
struct ExtremumFunction: QuantizedBinaryFunction {
  let takesMaximum: Bool
  @inline(__always)
  func callAsFunction(_ a: SIMD8<Int32>, _ b: SIMD8<Int32>) -> SIMD8<Int32> {
    takesMaximum ? pointwiseMax(a, b) : pointwiseMin(a, b)
  }
}

/// PRELU: non-negative inputs rescaled, negative ones multiplied by the offset alpha first.
struct PreluFunction: QuantizedBinaryFunction {
  let inputZeroPoint: Int32
  let alphaZeroPoint: Int32
  let outputZeroPoint: Int32
  let identity: QuantizedMultiplier
  let alphaMultiplier: QuantizedMultiplier
  let rounding: RoundingPolicy
  let range: ClosedRange<Int32>
  @inline(__always)
  func callAsFunction(_ a: SIMD8<Int32>, _ b: SIMD8<Int32>) -> SIMD8<Int32> {
    let value = a &- inputZeroPoint
    let positive = identity.apply(value, rounding: rounding)
    let negative = alphaMultiplier.apply(value &* (b &- alphaZeroPoint), rounding: rounding)
    return (positive.replacing(with: negative, whereNegative: value) &+ outputZeroPoint).clamped(to: range)
  }
}

// MARK: - Definitions

/// ADD or SUB.
protocol AddSubtractKind {
  static var operatorName: String { get }
  static var subtracts: Bool { get }
  /// Whether the options ask for the int16 power-of-two path.
  static func requestsPowerOfTwoPath(_ options: BuiltinOptions) -> Bool
}

/// ADD.
enum QuantizedAddition: AddSubtractKind {
  static let operatorName = "ADD"
  static let subtracts = false
  static func requestsPowerOfTwoPath(_ options: BuiltinOptions) -> Bool {
    if case .addOptions(let add) = options { return add.potScaleInt16 }
    return AddOptions().potScaleInt16
  }
}

/// SUB.
enum QuantizedSubtraction: AddSubtractKind {
  static let operatorName = "SUB"
  static let subtracts = true
  static func requestsPowerOfTwoPath(_ options: BuiltinOptions) -> Bool {
    if case .subOptions(let sub) = options { return sub.potScaleInt16 }
    return false
  }
}

/// ADD and SUB on int8, uint8 and int16.
struct IntegerAddSubtractDefinition<Kind: AddSubtractKind>: IntegerBinaryDefinition {
  static var operatorName: String { Kind.operatorName }
  /// Smaller chunks than the other operators': the residual sums of squeeze-excite networks
  /// (14×14×112 and 28×28×40 int8) ran on one thread in one cheap chunk, 15–25 µs after the
  /// split convolutions that wrote their inputs on both cores.
  static var minimumChunk: Int { quantizedAddSubtractChunk }
  private let type: ElementType
  private let activation: FusedActivation
  private let powerOfTwoRequested: Bool

  init(node: Node, lhs: RuntimeTensor, rhs: RuntimeTensor, output: RuntimeTensor) throws {
    type = try requireCommonQuantizedType([lhs, rhs, output], output: output, [.int8, .uint8, .int16], op: Self.operatorName)
    activation = try fusedActivation(of: node, op: Self.operatorName)
    powerOfTwoRequested = Kind.requestsPowerOfTwoPath(node.options)
  }

  func prepare(
    lhs: RuntimeTensor, rhs: RuntimeTensor, output: RuntimeTensor, rounding: RoundingPolicy, elementCount: Int
  ) throws -> QuantizedBinaryMap {
    let symmetric = type == .int16
    let left = try QuantizedOperand(lhs, op: Self.operatorName, symmetric: symmetric)
    let right = try QuantizedOperand(rhs, op: Self.operatorName, symmetric: symmetric)
    let result = try QuantizedOperand(output, op: Self.operatorName, symmetric: symmetric)
    let clamp = result.activationRange(activation)
    if symmetric && powerOfTwoRequested {
      let exponents = [left.scale, right.scale, result.scale].map(FixedPoint.checkedLog2)
      if exponents.allSatisfy(\.isPowerOfTwo) {
        let lhsShift = exponents[0].log2 - exponents[2].log2
        let rhsShift = exponents[1].log2 - exponents[2].log2
        guard lhsShift <= 0, rhsShift <= 0, lhsShift == 0 || rhsShift == 0 else {
          throw KernelError.invalid(
            "\(Self.operatorName): with power-of-two int16 scales one input must have the output's scale and the other a finer one")
        }
        let function = PowerOfTwoAddSubtractFunction(
          lhsShift: -lhsShift, rhsShift: -rhsShift, subtracts: Kind.subtracts, clamp: clamp)
        return try QuantizedBinaryMap(function, lhs: type, rhs: type, elementCount: elementCount)
      }
    }
    let leftShift: Int32 = symmetric ? 15 : 20
    let inputs = CommonScaleInputs(lhs: left, rhs: right, leftShift: leftShift, rounding: rounding)
    let outputReal = inputs.commonScale / Double(Float(Int32(1) << leftShift) * result.scale)
    let outputMultiplier = QuantizedMultiplier(outputReal, rounding: rounding)
    let function = AddSubtractFunction(
      inputs: inputs, subtracts: Kind.subtracts,
      outputMultiplier: QuantizedMultiplierLanes(repeating: outputMultiplier, rounding: rounding),
      outputZeroPoint: result.zeroPoint, clamp: clamp)
    let generated = symmetric ? nil : QuantizedBinaryConstants(
      subtracts: Kind.subtracts, lhsZeroPoint: left.zeroPoint, rhsZeroPoint: right.zeroPoint, leftShift: leftShift,
      lhsMultiplier: inputs.multipliers.lhs, rhsMultiplier: inputs.multipliers.rhs, outputMultiplier: outputMultiplier,
      outputZeroPoint: result.zeroPoint, clamp: clamp, rounding: rounding)
    return try QuantizedBinaryMap(
      function, lhs: type, rhs: type, elementCount: elementCount, generated: generated)
  }
}

/// MUL on int8, uint8 and int16.
struct IntegerMultiplyDefinition: IntegerBinaryDefinition {
  static let operatorName = "MUL"
  private let type: ElementType
  private let activation: FusedActivation

  init(node: Node, lhs: RuntimeTensor, rhs: RuntimeTensor, output: RuntimeTensor) throws {
    type = try requireCommonQuantizedType([lhs, rhs, output], output: output, [.int8, .uint8, .int16], op: Self.operatorName)
    activation = try fusedActivation(of: node, op: Self.operatorName)
  }

  func prepare(
    lhs: RuntimeTensor, rhs: RuntimeTensor, output: RuntimeTensor, rounding: RoundingPolicy, elementCount: Int
  ) throws -> QuantizedBinaryMap {
    let symmetric = type == .int16
    let left = try QuantizedOperand(lhs, op: Self.operatorName, symmetric: symmetric)
    let right = try QuantizedOperand(rhs, op: Self.operatorName, symmetric: symmetric)
    let result = try QuantizedOperand(output, op: Self.operatorName, symmetric: symmetric)
    // The ratio is formed in float, as TFLite does.
    let multiplier = QuantizedMultiplier(Double(left.scale * right.scale / result.scale), rounding: rounding)
    let clamp = result.activationRange(activation)
    let function = MultiplyFunction(
      lhsZeroPoint: left.zeroPoint, rhsZeroPoint: right.zeroPoint,
      multiplier: QuantizedMultiplierLanes(repeating: multiplier, rounding: rounding), outputZeroPoint: result.zeroPoint,
      clamp: clamp)
    let generated = symmetric ? nil : QuantizedBinaryConstants(
      multiplyingWith: left.zeroPoint, right.zeroPoint, multiplier: multiplier, outputZeroPoint: result.zeroPoint,
      clamp: clamp, rounding: rounding)
    return try QuantizedBinaryMap(
      function, lhs: type, rhs: type, elementCount: elementCount, generated: generated)
  }
}

/// DIV on int8, uint8 and int16.
struct IntegerDivideDefinition: IntegerBinaryDefinition {
  static let operatorName = "DIV"
  private let type: ElementType
  private let activation: FusedActivation

  init(node: Node, lhs: RuntimeTensor, rhs: RuntimeTensor, output: RuntimeTensor) throws {
    type = try requireCommonQuantizedType([lhs, rhs, output], output: output, [.int8, .uint8, .int16], op: Self.operatorName)
    activation = try fusedActivation(of: node, op: Self.operatorName)
  }

  func prepare(
    lhs: RuntimeTensor, rhs: RuntimeTensor, output: RuntimeTensor, rounding: RoundingPolicy, elementCount: Int
  ) throws -> QuantizedBinaryMap {
    let left = try QuantizedOperand(lhs, op: Self.operatorName)
    let right = try QuantizedOperand(rhs, op: Self.operatorName)
    let result = try QuantizedOperand(output, op: Self.operatorName)
    // The ratio is formed in float, as TFLite does.
    let real = Double(left.scale / (right.scale * result.scale))
    let function = DivideFunction(
      lhsZeroPoint: left.zeroPoint, rhsZeroPoint: right.zeroPoint, multiplier: QuantizedMultiplier(real, rounding: rounding),
      outputZeroPoint: result.zeroPoint, rounding: rounding, clamp: result.activationRange(activation))
    return try QuantizedBinaryMap(function, lhs: type, rhs: type, elementCount: elementCount)
  }

  func rhsCondition(rhs: RuntimeTensor) throws -> QuantizedInputCondition? {
    let divisor = try QuantizedOperand(rhs, op: Self.operatorName)
    return QuantizedInputCondition(
      relation: .differentFrom, value: divisor.zeroPoint,
      requirement: "a divisor equals the zero point \(divisor.zeroPoint) (division by zero)")
  }
}

/// SQUARED_DIFFERENCE on int8.
struct IntegerSquaredDifferenceDefinition: IntegerBinaryDefinition {
  static let operatorName = "SQUARED_DIFFERENCE"

  init(node: Node, lhs: RuntimeTensor, rhs: RuntimeTensor, output: RuntimeTensor) throws {
    _ = try requireCommonQuantizedType([lhs, rhs, output], output: output, [.int8], op: Self.operatorName)
  }

  func prepare(
    lhs: RuntimeTensor, rhs: RuntimeTensor, output: RuntimeTensor, rounding: RoundingPolicy, elementCount: Int
  ) throws -> QuantizedBinaryMap {
    let left = try QuantizedOperand(lhs, op: Self.operatorName)
    let right = try QuantizedOperand(rhs, op: Self.operatorName)
    let result = try QuantizedOperand(output, op: Self.operatorName)
    let leftShift: Int32 = 7
    let inputs = CommonScaleInputs(lhs: left, rhs: right, leftShift: leftShift, rounding: rounding)
    let outputReal = inputs.commonScale * inputs.commonScale / Double(Float(Int32(1) << (2 * leftShift)) * result.scale)
    let function = SquaredDifferenceFunction(
      inputs: inputs, outputMultiplier: CommonScaleInputs.lanes(outputReal, rounding: rounding),
      outputZeroPoint: result.zeroPoint, range: result.range)
    return try QuantizedBinaryMap(function, lhs: .int8, rhs: .int8, elementCount: elementCount)
  }
}

/// MAXIMUM or MINIMUM.
protocol QuantizedExtremumKind {
  static var operatorName: String { get }
  static var takesMaximum: Bool { get }
}

/// MAXIMUM.
enum QuantizedMaximum: QuantizedExtremumKind {
  static let operatorName = "MAXIMUM"
  static let takesMaximum = true
}

/// MINIMUM.
enum QuantizedMinimum: QuantizedExtremumKind {
  static let operatorName = "MINIMUM"
  static let takesMaximum = false
}

/// MAXIMUM and MINIMUM on int8, uint8 and int16: raw comparisons, as TFLite does.
struct IntegerExtremumDefinition<Kind: QuantizedExtremumKind>: IntegerBinaryDefinition {
  static var operatorName: String { Kind.operatorName }
  private let type: ElementType

  init(node: Node, lhs: RuntimeTensor, rhs: RuntimeTensor, output: RuntimeTensor) throws {
    type = output.type
    guard [lhs, rhs].allSatisfy({ $0.type == type }), [.int8, .uint8, .int16].contains(type) else {
      throw KernelError.unsupported("\(Self.operatorName) on \(lhs.type.name) and \(rhs.type.name) in the quantized kernels")
    }
  }

  func prepare(
    lhs: RuntimeTensor, rhs: RuntimeTensor, output: RuntimeTensor, rounding: RoundingPolicy, elementCount: Int
  ) throws -> QuantizedBinaryMap {
    // A comparison is cheaper than a table look-up, so the extremes never tabulate.
    try QuantizedBinaryMap(ExtremumFunction(takesMaximum: Kind.takesMaximum), lhs: type, rhs: type, elementCount: 0)
  }
}

/// PRELU on int8, uint8, and int16 inputs with int8 alphas.
struct IntegerPreluDefinition: IntegerBinaryDefinition {
  static let operatorName = "PRELU"
  static let outputKeepsFirstShape = true
  private let type: ElementType

  init(node: Node, lhs: RuntimeTensor, rhs: RuntimeTensor, output: RuntimeTensor) throws {
    let accepted: [(ElementType, ElementType)] = [(.int8, .int8), (.uint8, .uint8), (.int16, .int8)]
    guard output.type == lhs.type, accepted.contains(where: { $0 == (lhs.type, rhs.type) }) else {
      throw KernelError.unsupported(
        "\(Self.operatorName) on \(lhs.type.name) with \(rhs.type.name) alphas in the quantized kernels")
    }
    type = lhs.type
  }

  func prepare(
    lhs: RuntimeTensor, rhs: RuntimeTensor, output: RuntimeTensor, rounding: RoundingPolicy, elementCount: Int
  ) throws -> QuantizedBinaryMap {
    let input = try QuantizedOperand(lhs, op: Self.operatorName)
    let alpha = try QuantizedOperand(rhs, op: Self.operatorName)
    let result = try QuantizedOperand(output, op: Self.operatorName)
    // Both ratios are formed in float, as TFLite does.
    let function = PreluFunction(
      inputZeroPoint: input.zeroPoint, alphaZeroPoint: alpha.zeroPoint, outputZeroPoint: result.zeroPoint,
      identity: QuantizedMultiplier(Double(input.scale / result.scale), rounding: rounding),
      alphaMultiplier: QuantizedMultiplier(Double(input.scale * alpha.scale / result.scale), rounding: rounding),
      rounding: rounding, range: result.range)
    return try QuantizedBinaryMap(function, lhs: type, rhs: rhs.type, elementCount: elementCount)
  }
}
