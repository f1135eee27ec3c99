import Foundation
internal import TFLiteRuntime

/// An input or output tensor of an ``Interpreter``: its name, element type, shape, a copy of its
/// bytes and its quantization.
public struct Tensor: Equatable, Hashable {
  /// The tensor's name in the model graph.
  public let name: String
  /// The element type.
  public let dataType: DataType
  /// The shape.
  public let shape: Shape
  /// A copy of the tensor's bytes at the time it was read: changing it does not change the
  /// interpreter's tensor (use ``Interpreter/copy(_:toInputAt:)`` for that).
  public let data: Data
  /// The affine quantization of a quantized tensor, nil for a tensor that is not quantized.
  public let quantizationParameters: QuantizationParameters?

  /// Creates a tensor description (only the interpreter and tests build tensors).
  init(
    name: String, dataType: DataType, shape: Shape, data: Data,
    quantizationParameters: QuantizationParameters? = nil
  ) {
    self.name = name
    self.dataType = dataType
    self.shape = shape
    self.data = data
    self.quantizationParameters = quantizationParameters
  }
}

extension Tensor {
  /// The element type of a tensor.
  ///
  /// The cases are TensorFlowLiteSwift's plus ``int8``, so fully integer-quantized models (int8
  /// inputs and outputs) can be read and fed; upstream throws
  /// ``InterpreterError/invalidTensorDataType`` for those tensors. Types with no case here
  /// (strings, complex numbers, unsigned 16/32/64-bit, int4, bfloat16) still throw
  /// ``InterpreterError/invalidTensorDataType``. Code that switches over this enum exhaustively
  /// must handle `.int8` (or add a `default:`).
  public enum DataType: Equatable, Hashable {
    /// Boolean, one byte per element.
    case bool
    /// Unsigned 8-bit integer.
    case uInt8
    /// Signed 8-bit integer (not in upstream TensorFlowLiteSwift).
    case int8
    /// Signed 16-bit integer.
    case int16
    /// Signed 32-bit integer.
    case int32
    /// Signed 64-bit integer.
    case int64
    /// 16-bit half-precision floating point.
    case float16
    /// 32-bit single-precision floating point.
    case float32
    /// 64-bit double-precision floating point.
    case float64

    /// The data type of runtime element type `type`, nil when it has no case here.
    init?(_ type: ElementType) {
      switch type {
      case .bool: self = .bool
      case .uint8: self = .uInt8
      case .int8: self = .int8
      case .int16: self = .int16
      case .int32: self = .int32
      case .int64: self = .int64
      case .float16: self = .float16
      case .float32: self = .float32
      case .float64: self = .float64
      default: return nil
      }
    }

    /// Bytes one element occupies.
    public var byteCount: Int {
      switch self {
      case .bool, .uInt8, .int8: 1
      case .int16, .float16: 2
      case .int32, .float32: 4
      case .int64, .float64: 8
      }
    }

    /// The model format's spelling of the type (`FLOAT32`, `UINT8`, …), used in error messages.
    public var schemaName: String {
      switch self {
      case .bool: "BOOL"
      case .uInt8: "UINT8"
      case .int8: "INT8"
      case .int16: "INT16"
      case .int32: "INT32"
      case .int64: "INT64"
      case .float16: "FLOAT16"
      case .float32: "FLOAT32"
      case .float64: "FLOAT64"
      }
    }
  }

  /// The dimensions of a tensor.
  public struct Shape: Equatable, Hashable {
    /// The number of dimensions (0 for a scalar).
    public let rank: Int
    /// The size of each dimension.
    public let dimensions: [Int]

    /// Creates a shape with `dimensions`.
    public init(_ dimensions: [Int]) {
      self.rank = dimensions.count
      self.dimensions = dimensions
    }

    /// Creates a shape with the given dimensions: `Tensor.Shape(1, 224, 224, 3)`.
    public init(_ elements: Int...) {
      self.init(elements)
    }
  }
}

extension Tensor.Shape: ExpressibleByArrayLiteral {
  /// Creates a shape from an array literal: `let shape: Tensor.Shape = [1, 3]`.
  public init(arrayLiteral elements: Int...) {
    self.init(elements)
  }
}

extension Tensor.Shape: CustomStringConvertible {
  /// `[1, 224, 224, 3]`.
  public var description: String { "[\(dimensions.map(String.init).joined(separator: ", "))]" }
}

/// Affine quantization of a tensor: `real = scale * (quantized - zeroPoint)`.
///
/// ``scale`` and ``zeroPoint`` are TensorFlowLiteSwift's per-tensor parameters. A tensor quantized
/// per channel (one scale per slice along ``quantizedDimension``) also lists every channel's
/// parameters in ``scales`` and ``zeroPoints``; its ``scale`` and ``zeroPoint`` are channel 0's.
/// (Upstream reports no parameters at all for per-channel tensors.)
public struct QuantizationParameters: Equatable, Hashable {
  /// The scale (channel 0's for a per-channel tensor).
  public let scale: Float
  /// The zero point (channel 0's for a per-channel tensor).
  public let zeroPoint: Int
  /// Every scale: one for a per-tensor quantized tensor, one per channel otherwise.
  public let scales: [Float]
  /// Every zero point, as many as ``scales``.
  public let zeroPoints: [Int]
  /// The dimension the channels run along (0 for a per-tensor quantized tensor).
  public let quantizedDimension: Int

  /// Per-tensor parameters.
  init(scale: Float, zeroPoint: Int) {
    self.init(scales: [scale], zeroPoints: [zeroPoint], quantizedDimension: 0)
  }

  /// Per-tensor or per-channel parameters; `scales` must not be empty.
  init(scales: [Float], zeroPoints: [Int], quantizedDimension: Int) {
    self.scale = scales.first ?? 0
    self.zeroPoint = zeroPoints.first ?? 0
    self.scales = scales
    self.zeroPoints = zeroPoints
    self.quantizedDimension = quantizedDimension
  }

  /// True when each slice along ``quantizedDimension`` has its own scale.
  public var isPerChannel: Bool { scales.count > 1 }

  /// The parameters of runtime quantization `quantization`, nil when it carries no scale or a
  /// single zero scale (which TensorFlow Lite treats as "not quantized").
  init?(_ quantization: Quantization?) {
    guard let quantization, let first = quantization.scales.first else { return nil }
    guard quantization.scales.count > 1 || first != 0 else { return nil }
    let zeroPoints =
      quantization.zeroPoints.count == quantization.scales.count
      ? quantization.zeroPoints : Array(repeating: quantization.zeroPoints.first ?? 0, count: quantization.scales.count)
    self.init(scales: quantization.scales, zeroPoints: zeroPoints, quantizedDimension: quantization.axis)
  }
}
