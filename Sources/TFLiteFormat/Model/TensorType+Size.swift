extension TensorType {
  /// Bits per element for types of fixed element size (4 for `INT4`, 32 for `FLOAT32`); nil for
  /// `STRING` (variable length), `RESOURCE`, `VARIANT` and types this schema does not know.
  public var bitsPerElement: Int? {
    switch self {
    case .int2: return 2
    case .int4, .uint4: return 4
    case .bool, .int8, .uint8, .float8E4m3fn, .float8E5m2: return 8
    case .float16, .bfloat16, .int16, .uint16: return 16
    case .float32, .int32, .uint32: return 32
    case .float64, .int64, .uint64, .complex64: return 64
    case .complex128: return 128
    default: return nil
    }
  }

  /// Bytes per element for types with a whole number of bytes per element; nil otherwise
  /// (sub-byte types such as `INT4` pack several elements into a byte).
  public var elementByteCount: Int? {
    bitsPerElement.flatMap { $0 % 8 == 0 ? $0 / 8 : nil }
  }
}
