// Activations: RELU, RELU6, RELU_N1_TO_1, RELU_0_TO_1, LEAKY_RELU, PRELU, LOGISTIC, TANH,
// HARD_SWISH, GELU, ELU.
//
// Formulas as in TFLite's reference kernels: LEAKY_RELU is x > 0 ? x : αx, PRELU is
// x ≥ 0 ? x : αx with α broadcast, HARD_SWISH is x·min(6, max(0, x + 3))/6 (multiplied by 1/6
// here, within 1 ulp), ELU is x < 0 ? eˣ − 1 : x, GELU is ½x·erfc(−x/√2) or, approximated,
// ½x(1 + tanh(√(2/π)(x + 0.044715x³))).

import TFLiteFormat
import TFLiteLinearAlgebra

/// RELU-family clamp to a fixed range.
struct ClampOperation<Scalar: ArithmeticScalar>: UnaryLanewiseOperation {
  /// The output range.
  let range: ActivationRange<Scalar>

  @inline(__always)
  func callAsFunction(_ x: SIMD16<Scalar>) -> SIMD16<Scalar> { range.clamp(x) }
}

/// The output range of a RELU-family operator.
protocol ClampBounds {
  /// The TFLite operator name.
  static var operatorName: String { get }
  /// The range.
  static var range: ActivationRange<Float> { get }
}

/// RELU: max(x, 0).
enum Relu: ClampBounds {
  static let operatorName = "RELU"
  static var range: ActivationRange<Float> { ActivationRange(lower: 0, upper: .infinity) }
}

/// RELU6: min(max(x, 0), 6).
enum Relu6: ClampBounds {
  static let operatorName = "RELU6"
  static var range: ActivationRange<Float> { ActivationRange(lower: 0, upper: 6) }
}

/// RELU_N1_TO_1: min(max(x, −1), 1).
enum ReluMinusOneToOne: ClampBounds {
  static let operatorName = "RELU_N1_TO_1"
  static var range: ActivationRange<Float> { ActivationRange(lower: -1, upper: 1) }
}

/// RELU_0_TO_1: min(max(x, 0), 1).
enum ReluZeroToOne: ClampBounds {
  static let operatorName = "RELU_0_TO_1"
  static var range: ActivationRange<Float> { ActivationRange(lower: 0, upper: 1) }
}

/// The kernel definition of the RELU family on float tensors.
struct ClampDefinition<Bounds: ClampBounds>: UnaryKernelDefinition {
  init(node: Node, input: RuntimeTensor, output: RuntimeTensor) throws {
    _ = try commonElementType([input, output], allowed: [.float32], operatorName: Bounds.operatorName)
  }

  var minimumChunk: Int { cheapElementwiseChunk }

  func run(input: UnsafeRawPointer, output: UnsafeMutableRawPointer, range: Range<Int>) {
    UnaryDriver.run(ClampOperation(range: Bounds.range), input: input, output: output, range: range)
  }
}

/// The kernel definition of LEAKY_RELU.
struct LeakyReluDefinition: UnaryKernelDefinition {
  private let alpha: Float

  init(node: Node, input: RuntimeTensor, output: RuntimeTensor) throws {
    _ = try commonElementType([input, output], allowed: [.float32], operatorName: "LEAKY_RELU")
    guard case .leakyReluOptions(let options) = node.options else {
      throw KernelError.invalid("LEAKY_RELU needs LeakyReluOptions")
    }
    alpha = options.alpha
  }

  var minimumChunk: Int { cheapElementwiseChunk }

  func run(input: UnsafeRawPointer, output: UnsafeMutableRawPointer, range: Range<Int>) {
    UnaryDriver.run(LeakyReluOperation(alpha: alpha), input: input, output: output, range: range)
  }
}

/// The kernel definition of GELU (exact, or the tanh approximation when `approximate` is set).
struct GeluDefinition: UnaryKernelDefinition {
  private let approximate: Bool

  init(node: Node, input: RuntimeTensor, output: RuntimeTensor) throws {
    _ = try commonElementType([input, output], allowed: [.float32], operatorName: "GELU")
    if case .geluOptions(let options) = node.options {
      approximate = options.approximate
    } else {
      approximate = false
    }
  }

  var minimumChunk: Int { costlyElementwiseChunk }

  func run(input: UnsafeRawPointer, output: UnsafeMutableRawPointer, range: Range<Int>) {
    if approximate {
      UnaryDriver.run(FloatFunction<GeluTanhApproximation>(), input: input, output: output, range: range)
    } else {
      UnaryDriver.run(FloatFunction<GeluExact>(), input: input, output: output, range: range)
    }
  }
}

/// LEAKY_RELU: x > 0 ? x : alpha·x.
struct LeakyReluOperation: UnaryLanewiseOperation {
  /// Slope for non-positive inputs.
  let alpha: Float

  @inline(__always)
  func callAsFunction(_ x: SIMD16<Float>) -> SIMD16<Float> {
    (x * alpha).replacing(with: x, where: Float.isLess(SIMD16(repeating: 0), x))
  }
}

/// PRELU: x ≥ 0 ? x : alpha·x, with alpha a broadcast tensor.
struct PreluOperation: BinaryLanewiseOperation {
  @inline(__always)
  func callAsFunction(_ x: SIMD16<Float>, _ alpha: SIMD16<Float>) -> SIMD16<Float> {
    (x * alpha).replacing(with: x, where: Float.isLessOrEqual(SIMD16(repeating: 0), x))
  }
}

/// LOGISTIC: 1 / (1 + e^−x).
enum Logistic: FloatFunctionKind {
  static let operatorName = "LOGISTIC"
  @inline(__always)
  static func apply(_ x: SIMD16<Float>) -> SIMD16<Float> { VectorMath.logistic(x) }
}

/// TANH.
enum HyperbolicTangent: FloatFunctionKind {
  static let operatorName = "TANH"
  @inline(__always)
  static func apply(_ x: SIMD16<Float>) -> SIMD16<Float> { VectorMath.tanh(x) }
}

/// HARD_SWISH: x · relu6(x + 3) / 6, with the division by 6 as a product with 1/6 rounded to
/// float (within 1 ulp of LiteRT's quotient; a division takes 3–5 cycles per four lanes on the
/// SSE2 baseline where the product takes half of one).
enum HardSwish: FloatFunctionKind {
  static let operatorName = "HARD_SWISH"
  @inline(__always)
  static func apply(_ x: SIMD16<Float>) -> SIMD16<Float> {
    x * ActivationRange<Float>(lower: 0, upper: 6).clamp(x + 3) * (1 / 6)
  }
}

/// ELU: x < 0 ? e^x − 1 : x.
enum ExponentialLinearUnit: FloatFunctionKind {
  static let operatorName = "ELU"
  @inline(__always)
  static func apply(_ x: SIMD16<Float>) -> SIMD16<Float> {
    x.replacing(with: VectorMath.expMinusOne(x), where: Float.isLess(x, SIMD16(repeating: 0)))
  }
}

/// GELU without approximation: ½x · erfc(−x/√2).
enum GeluExact: FloatFunctionKind {
  static let operatorName = "GELU"
  @inline(__always)
  static func apply(_ x: SIMD16<Float>) -> SIMD16<Float> {
    0.5 * x * VectorMath.erfc(x * -Float(0.5).squareRoot())
  }
}

/// GELU with `approximate`: ½x · (1 + tanh(√(2/π) · (x + 0.044715x³))).
enum GeluTanhApproximation: FloatFunctionKind {
  static let operatorName = "GELU"
  /// √(2/π).
  private static let scale: Float = 0.797_884_560_8
  @inline(__always)
  static func apply(_ x: SIMD16<Float>) -> SIMD16<Float> {
    0.5 * x * (1 + VectorMath.tanh(scale * (x + 0.044715 * x * x * x)))
  }
}

/// LOGISTIC on float tensors: the generated AVX-512 kernel for whole 16-lane vectors where it
/// runs (`GeneratedLogisticKernels`), the Swift SIMD code otherwise and for the last lanes (the
/// two within 3 ulp of each other, see `LogisticKernelGenerator`).
final class LogisticKernel: Kernel {
  /// Output element i is computed from input element i.
  static var writesOutputInPlace: Bool { true }
  private let input: RuntimeTensor
  private let output: RuntimeTensor

  init(node: Node) throws {
    (input, output) = try node.singleInputAndOutput()
    _ = try commonElementType([input, output], allowed: [.float32], operatorName: Logistic.operatorName)
  }

  func prepare(_ context: inout PrepareContext) throws {
    output.shape = input.shape
  }

  func eval(_ context: EvalContext) throws {
    try runLogisticFamily(FloatFunction<Logistic>(), .logistic, input: input, output: output, context)
  }

  var kernelDescription: String? { logisticFamilyLevel }
}

/// x · logistic(x) (SiLU, swish) with the MUL's fused activation, for a node whose single input
/// is x: what LOGISTIC followed by MUL computes, in one pass (generated AVX-512 code where it runs,
/// as for `LogisticKernel`).
final class SigmoidLinearUnitKernel: Kernel {
  /// Output element i is computed from input element i.
  static var writesOutputInPlace: Bool { true }
  private let input: RuntimeTensor
  private let output: RuntimeTensor
  private let activation: ActivationRange<Float>

  init(node: Node) throws {
    (input, output) = try node.singleInputAndOutput()
    _ = try commonElementType([input, output], allowed: [.float32], operatorName: "MUL")
    activation = try ActivationRange<Float>(Multiplication.fusedActivation(in: node.options))
  }

  func prepare(_ context: inout PrepareContext) throws {
    output.shape = input.shape
  }

  func eval(_ context: EvalContext) throws {
    let clamps = activation.lower > -.infinity || activation.upper < .infinity
    try runLogisticFamily(
      SigmoidLinearUnit(activation: activation, clamps: clamps),
      clamps ? .clampedSigmoidLinearUnit : .sigmoidLinearUnit, input: input, output: output, context,
      bounds: activation)
  }

  var kernelDescription: String? { logisticFamilyLevel }
}

/// Where the logistic and SiLU kernels run now: `generated AVX-512F`, or the Swift level.
private var logisticFamilyLevel: String {
  GeneratedLogisticKernels.current.map { "generated \($0.isa)" } ?? KernelDescription.swiftLevel
}

/// Computes `operation` over the whole of `output` from `input`, split across threads: whole
/// 16-lane vectors on the generated `form` kernel when generated kernels run, the rest (or all)
/// with the Swift `operation` (within 3 ulp of the generated code). `bounds` clamp the clamped SiLU.
private func runLogisticFamily<Operation: UnaryLanewiseOperation>(
  _ operation: Operation, _ form: LogisticKernelGenerator.Form, input: RuntimeTensor, output: RuntimeTensor,
  _ context: EvalContext, bounds: ActivationRange<Float> = ActivationRange(lower: -.infinity, upper: .infinity)
) throws where Operation.Operand == Float, Operation.Result == Float {
  let source = try tensorData(input).assumingMemoryBound(to: Float.self)
  let destination = try tensorData(output).assumingMemoryBound(to: Float.self)
  // Read here, on the thread that runs the node: the switch is task-local.
  let generated = GeneratedLogisticKernels.current
  context.forEachChunk(of: output.elementCount, minimumChunk: costlyElementwiseChunk) { range in
    var swiftRange = range
    if let generated {
      let vectorCount = range.count / vectorLaneCount
      generated.run(
        form, input: source + range.lowerBound, output: destination + range.lowerBound, vectorCount: vectorCount,
        lower: bounds.lower, upper: bounds.upper)
      swiftRange = range.lowerBound + vectorCount * vectorLaneCount..<range.upperBound
    }
    UnaryDriver.run(operation, input: source, output: destination, range: swiftRange)
  }
}

/// x · logistic(x), clamped: the logistic rounded to float first, as the separate LOGISTIC writes it.
struct SigmoidLinearUnit: UnaryLanewiseOperation {
  /// The MUL's fused activation.
  let activation: ActivationRange<Float>
  /// False for an unbounded range (activation NONE), whose clamp changes nothing.
  let clamps: Bool

  @inline(__always)
  func callAsFunction(_ x: SIMD16<Float>) -> SIMD16<Float> {
    let product = x * VectorMath.logistic(x)
    return clamps ? activation.clamp(product) : product
  }
}
