import TFLiteFormat

/// The element types the runtime can hold in a tensor, mapped from the schema's `TensorType`.
public enum ElementType: Sendable, Hashable, CaseIterable {
  case float32, float16, float64, bfloat16
  case int4, int8, uint8, int16, uint16, int32, uint32, int64, uint64
  case bool, string, complex64, complex128
  /// Handles of resource variables and variant values (held as 32-bit ids).
  case resource, variant

  /// Bytes one element occupies in memory (`int4` is stored one value per byte once unpacked;
  /// `string` tensors have no fixed element size and report 0).
  public var byteCount: Int {
    switch self {
    case .bool, .int4, .int8, .uint8: 1
    case .float16, .bfloat16, .int16, .uint16: 2
    case .float32, .int32, .uint32, .resource, .variant: 4
    case .float64, .int64, .uint64, .complex64: 8
    case .complex128: 16
    case .string: 0
    }
  }

  /// The schema's spelling of the type (`FLOAT32`, `INT8`, …).
  public var name: String {
    switch self {
    case .float32: "FLOAT32"
    case .float16: "FLOAT16"
    case .float64: "FLOAT64"
    case .bfloat16: "BFLOAT16"
    case .int4: "INT4"
    case .int8: "INT8"
    case .uint8: "UINT8"
    case .int16: "INT16"
    case .uint16: "UINT16"
    case .int32: "INT32"
    case .uint32: "UINT32"
    case .int64: "INT64"
    case .uint64: "UINT64"
    case .bool: "BOOL"
    case .string: "STRING"
    case .complex64: "COMPLEX64"
    case .complex128: "COMPLEX128"
    case .resource: "RESOURCE"
    case .variant: "VARIANT"
    }
  }

  /// The element type of the schema's `type`, or nil for a type the runtime does not hold
  /// (INT2, UINT4, the 8-bit floats and values the schema does not know).
  public init?(_ type: TensorType) {
    switch type {
    case .float32: self = .float32
    case .float16: self = .float16
    case .float64: self = .float64
    case .bfloat16: self = .bfloat16
    case .int4: self = .int4
    case .int8: self = .int8
    case .uint8: self = .uint8
    case .int16: self = .int16
    case .uint16: self = .uint16
    case .int32: self = .int32
    case .uint32: self = .uint32
    case .int64: self = .int64
    case .uint64: self = .uint64
    case .bool: self = .bool
    case .string: self = .string
    case .complex64: self = .complex64
    case .complex128: self = .complex128
    case .resource: self = .resource
    case .variant: self = .variant
    default: return nil
    }
  }
}
