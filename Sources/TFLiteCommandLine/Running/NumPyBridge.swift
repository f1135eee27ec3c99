import TFLiteFormat
import TFLiteRuntime

extension HostArray {
  /// Reads the `.npy` file at `path`.
  init(numPyFile path: String) throws {
    let array: NumPyArray
    do {
      array = try NumPyArray(contentsOfFile: path)
    } catch {
      throw CommandFailure("cannot read \(path): \(error)")
    }
    self.init(type: ElementType(array.elementType), shape: array.shape, bytes: array.bytes, origin: path)
  }

  /// Writes the values as an `.npy` file at `path` (INT4 values, held one per byte, as int8).
  func writeNumPy(to path: String) throws {
    guard let elementType = NumPyElementType(type) else {
      throw CommandFailure("cannot write \(type.name) values to \(path): .npy files have no such type")
    }
    try NumPyArray(elementType: elementType, shape: shape, bytes: bytes).write(toFile: path)
  }
}

extension ElementType {
  /// The runtime type of `.npy` elements of `type`.
  init(_ type: NumPyElementType) {
    switch type {
    case .float16: self = .float16
    case .float32: self = .float32
    case .float64: self = .float64
    case .int8: self = .int8
    case .uint8: self = .uint8
    case .int16: self = .int16
    case .uint16: self = .uint16
    case .int32: self = .int32
    case .uint32: self = .uint32
    case .int64: self = .int64
    case .uint64: self = .uint64
    case .bool: self = .bool
    }
  }
}

extension NumPyElementType {
  /// The `.npy` type holding elements of runtime type `type`, nil when `.npy` has none.
  init?(_ type: ElementType) {
    switch type {
    case .float16: self = .float16
    case .float32: self = .float32
    case .float64: self = .float64
    case .int4, .int8: self = .int8
    case .uint8: self = .uint8
    case .int16: self = .int16
    case .uint16: self = .uint16
    case .int32: self = .int32
    case .uint32: self = .uint32
    case .int64: self = .int64
    case .uint64: self = .uint64
    case .bool: self = .bool
    case .bfloat16, .string, .complex64, .complex128, .resource, .variant: return nil
    }
  }
}
