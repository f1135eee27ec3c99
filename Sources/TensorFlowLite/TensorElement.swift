import Foundation

/// A Swift number type that is the element type of some tensors: `Float` for FLOAT32 tensors,
/// `UInt8` for UINT8, and so on. Used by the typed accessors (``Tensor/withUnsafeBufferPointer(as:_:)``,
/// `[Float](tensor)`, ``Interpreter/copy(values:toInputAt:)``).
public protocol TensorElement: BitwiseCopyable {
  /// The tensor element type this Swift type represents.
  static var tensorDataType: Tensor.DataType { get }
}

extension Float: TensorElement {
  /// FLOAT32.
  public static var tensorDataType: Tensor.DataType { .float32 }
}

extension Double: TensorElement {
  /// FLOAT64.
  public static var tensorDataType: Tensor.DataType { .float64 }
}

#if !((os(macOS) || targetEnvironment(macCatalyst)) && arch(x86_64))
  @available(macOS 11.0, iOS 14.0, tvOS 14.0, watchOS 7.0, *)
  extension Float16: TensorElement {
    /// FLOAT16.
    public static var tensorDataType: Tensor.DataType { .float16 }
  }
#endif

extension UInt8: TensorElement {
  /// UINT8.
  public static var tensorDataType: Tensor.DataType { .uInt8 }
}

extension Int8: TensorElement {
  /// INT8.
  public static var tensorDataType: Tensor.DataType { .int8 }
}

extension Int16: TensorElement {
  /// INT16.
  public static var tensorDataType: Tensor.DataType { .int16 }
}

extension Int32: TensorElement {
  /// INT32.
  public static var tensorDataType: Tensor.DataType { .int32 }
}

extension Int64: TensorElement {
  /// INT64.
  public static var tensorDataType: Tensor.DataType { .int64 }
}

extension Tensor {
  /// Calls `body` with the tensor's elements as `Element`s, without copying them.
  ///
  /// Throws ``InterpreterError/tensorFlowLiteError(_:)`` naming the tensor's type, shape and byte
  /// count when `Element` is not its element type (e.g. `Float` for a UINT8 tensor).
  public func withUnsafeBufferPointer<Element: TensorElement, Result>(
    as type: Element.Type, _ body: (UnsafeBufferPointer<Element>) throws -> Result
  ) throws -> Result {
    guard dataType == Element.tensorDataType else {
      throw InterpreterError.tensorFlowLiteError(
        "tensor '\(name)' (\(dataType.schemaName) \(shape), \(data.count) bytes) cannot be read as \(Element.self)")
    }
    return try data.withUnsafeBytes { bytes in
      let isAligned = Int(bitPattern: bytes.baseAddress) % MemoryLayout<Element>.alignment == 0
      guard isAligned else {
        // Small `Data` values may live at an unaligned address; read them through an aligned copy.
        let elements = [Element](unsafeUninitializedCapacity: bytes.count / MemoryLayout<Element>.stride) {
          buffer, count in
          count = buffer.count
          UnsafeMutableRawBufferPointer(buffer).copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[..<(count * MemoryLayout<Element>.stride)]))
        }
        return try elements.withUnsafeBufferPointer(body)
      }
      return try body(bytes.assumingMemoryBound(to: Element.self))
    }
  }
}

extension Array where Element: TensorElement {
  /// The elements of `tensor`: `try [Float](interpreter.output(at: 0))`.
  ///
  /// Throws ``InterpreterError/tensorFlowLiteError(_:)`` when `Element` is not the tensor's element type.
  public init(_ tensor: Tensor) throws {
    self = try tensor.withUnsafeBufferPointer(as: Element.self) { Array($0) }
  }

  /// The elements of `tensor` as `type`: `try Array(tensor, as: Float.self)`.
  ///
  /// Throws ``InterpreterError/tensorFlowLiteError(_:)`` when `type` is not the tensor's element type.
  public init(_ tensor: Tensor, as type: Element.Type) throws {
    try self.init(tensor)
  }
}
