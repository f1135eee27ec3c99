import TFLiteFormat
import TFLiteLinearAlgebra

// Validation of quantization parameters, shared by every quantized kernel: a model with missing
// or zero scales, a zero point outside its type, a per-axis dimension out of range or mismatched
// scale counts gets a thrown error naming the tensor when it is prepared, never a wrong answer.

extension ElementType {
  /// The raw values of an integer type quantized kernels use (nil for other types).
  var quantizedRange: ClosedRange<Int32>? {
    switch self {
    case .int4: -8...7
    case .int8: Int32(Int8.min)...Int32(Int8.max)
    case .uint8: Int32(UInt8.min)...Int32(UInt8.max)
    case .int16: Int32(Int16.min)...Int32(Int16.max)
    case .int32: Int32.min...Int32.max
    default: nil
    }
  }
}

/// Checks of quantization parameters.
enum QuantizationValidation {
  /// Throws unless `tensor` carries usable quantization parameters: at least one scale, every
  /// scale finite and positive, one zero point or one per scale, every zero point inside the
  /// tensor type's range and, for per-axis parameters, an axis inside the tensor's rank whose
  /// size equals the number of scales.
  static func validate(_ tensor: RuntimeTensor, op: String) throws {
    guard let quantization = tensor.quantization, !quantization.scales.isEmpty else {
      throw KernelError.invalid("\(op): tensor \(describe(tensor)) has no quantization scale")
    }
    if let bad = quantization.scales.first(where: { !($0.isFinite && $0 > 0) }) {
      throw KernelError.invalid("\(op): tensor \(describe(tensor)) has scale \(bad); scales must be finite and positive")
    }
    let scaleCount = quantization.scales.count
    let zeroPointCount = quantization.zeroPoints.count
    guard zeroPointCount == 1 || zeroPointCount == scaleCount else {
      throw KernelError.invalid(
        "\(op): tensor \(describe(tensor)) has \(scaleCount) scales but \(zeroPointCount) zero points")
    }
    if let range = tensor.type.quantizedRange,
      let bad = quantization.zeroPoints.first(where: { $0 < Int(range.lowerBound) || $0 > Int(range.upperBound) })
    {
      throw KernelError.invalid(
        "\(op): tensor \(describe(tensor)) has zero point \(bad), outside the \(tensor.type.name) range \(range)")
    }
    if scaleCount > 1 {
      let axis = quantization.axis
      guard axis >= 0, axis < tensor.shape.count else {
        throw KernelError.invalid(
          "\(op): tensor \(describe(tensor)) is quantized along axis \(axis), outside its rank \(tensor.shape.count)")
      }
      guard tensor.shape[axis] == scaleCount else {
        throw KernelError.invalid(
          "\(op): tensor \(describe(tensor)) has \(scaleCount) scales for the \(tensor.shape[axis]) entries of axis \(axis)")
      }
    }
  }

  /// `name TYPE[shape]`, quoting the name.
  static func describe(_ tensor: RuntimeTensor) -> String {
    "'\(tensor.name)' (\(tensor.type.name)\(tensor.shape))"
  }
}

/// The per-tensor quantization of one operand of an integer kernel: its element type, scale and
/// zero point, validated.
struct QuantizedOperand: Sendable, Hashable {
  /// The element type.
  let type: ElementType
  /// The scale: real = scale · (raw − zeroPoint).
  let scale: Float
  /// The zero point, inside the type's range.
  let zeroPoint: Int32
  /// The raw values of the type.
  let range: ClosedRange<Int32>

  /// Reads and validates the per-tensor quantization of `tensor` for operator `op`; with
  /// `symmetric`, the zero point must be 0 (TFLite's 16-bit activations).
  init(_ tensor: RuntimeTensor, op: String, symmetric: Bool = false) throws {
    try QuantizationValidation.validate(tensor, op: op)
    guard let quantization = tensor.quantization, let range = tensor.type.quantizedRange else {
      throw KernelError.invalid("\(op): tensor \(QuantizationValidation.describe(tensor)) is not a quantized integer tensor")
    }
    guard quantization.scales.count == 1 else {
      throw KernelError.invalid(
        "\(op): tensor \(QuantizationValidation.describe(tensor)) is quantized per axis; \(op) needs one scale")
    }
    let zeroPoint = Int32(clamping: quantization.zeroPoint)
    if symmetric && zeroPoint != 0 {
      throw KernelError.invalid(
        "\(op): \(tensor.type.name) tensor \(QuantizationValidation.describe(tensor)) must have zero point 0, got \(zeroPoint)")
    }
    self.type = tensor.type
    self.scale = quantization.scale
    self.zeroPoint = zeroPoint
    self.range = range
  }

  /// The clamping range of this (output) operand under a fused activation.
  func activationRange(_ activation: FusedActivation) -> ClosedRange<Int32> {
    FixedPoint.activationRange(activation, scale: scale, zeroPoint: Int(zeroPoint), typeRange: range)
  }
}

extension FusedActivation {
  /// The clamp of a schema fused activation; TANH and SIGN_BIT have no quantized clamp.
  init(_ activation: ActivationFunctionType, op: String) throws {
    switch activation {
    case .none: self = .none
    case .relu: self = .relu
    case .reluN1To1: self = .reluN1To1
    case .relu6: self = .relu6
    default: throw KernelError.unsupported("\(op) with fused activation \(activation.name) on quantized tensors")
    }
  }
}
