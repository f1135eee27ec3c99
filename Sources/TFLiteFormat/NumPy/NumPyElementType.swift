/// The element types of `.npy` arrays that can be read and written: little-endian numbers and
/// booleans. The raw value is NumPy's type descriptor as written in the header.
public enum NumPyElementType: String, Sendable, CaseIterable {
  /// IEEE half precision (`numpy.float16`).
  case float16 = "<f2"
  /// IEEE single precision (`numpy.float32`).
  case float32 = "<f4"
  /// IEEE double precision (`numpy.float64`).
  case float64 = "<f8"
  /// Signed 8-bit integer.
  case int8 = "|i1"
  /// Unsigned 8-bit integer.
  case uint8 = "|u1"
  /// Signed 16-bit integer.
  case int16 = "<i2"
  /// Unsigned 16-bit integer.
  case uint16 = "<u2"
  /// Signed 32-bit integer.
  case int32 = "<i4"
  /// Unsigned 32-bit integer.
  case uint32 = "<u4"
  /// Signed 64-bit integer.
  case int64 = "<i8"
  /// Unsigned 64-bit integer.
  case uint64 = "<u8"
  /// Boolean stored as one byte, 0 or 1 (`numpy.bool_`).
  case bool = "|b1"

  /// The NumPy type descriptor, such as `<f4`.
  public var descriptor: String { rawValue }

  /// The size of one element in bytes.
  public var byteCount: Int {
    switch self {
    case .int8, .uint8, .bool: return 1
    case .float16, .int16, .uint16: return 2
    case .float32, .int32, .uint32: return 4
    case .float64, .int64, .uint64: return 8
    }
  }

  /// The element type a header descriptor names. One-byte types accept any byte-order mark
  /// (`|`, `<`, `>`, `=`); wider types must be little-endian (`<`).
  init(descriptor: String) throws {
    let order = descriptor.first
    let kindAndSize = descriptor.dropFirst()
    guard let type = Self.allCases.first(where: { $0.rawValue.dropFirst() == kindAndSize }), let order,
      "|<>=".contains(order)
    else {
      throw NumPyError(message: "unsupported dtype '\(descriptor)' (supported: \(Self.allCases.map(\.rawValue).joined(separator: ", ")))")
    }
    guard type.byteCount == 1 || order == "<" else {
      let problem = order == ">" ? "big-endian" : (order == "=" ? "native-order" : "byte-order-less")
      throw NumPyError(message: "\(problem) dtype '\(descriptor)' is not supported; save little-endian data ('<\(kindAndSize)')")
    }
    self = type
  }
}

/// Swift number types whose values an `.npy` array stores without conversion: `Float`, `Double`,
/// the fixed-width integers and `Bool`.
public protocol NumPyScalar: BitwiseCopyable {
  /// The `.npy` element type holding values of this Swift type.
  static var numPyElementType: NumPyElementType { get }
}

// Each conformance names the `.npy` element type with the same size and meaning.
extension Float: NumPyScalar { /** `float32` */ public static var numPyElementType: NumPyElementType { .float32 } }
extension Double: NumPyScalar { /** `float64` */ public static var numPyElementType: NumPyElementType { .float64 } }
extension Int8: NumPyScalar { /** `int8` */ public static var numPyElementType: NumPyElementType { .int8 } }
extension UInt8: NumPyScalar { /** `uint8` */ public static var numPyElementType: NumPyElementType { .uint8 } }
extension Int16: NumPyScalar { /** `int16` */ public static var numPyElementType: NumPyElementType { .int16 } }
extension UInt16: NumPyScalar { /** `uint16` */ public static var numPyElementType: NumPyElementType { .uint16 } }
extension Int32: NumPyScalar { /** `int32` */ public static var numPyElementType: NumPyElementType { .int32 } }
extension UInt32: NumPyScalar { /** `uint32` */ public static var numPyElementType: NumPyElementType { .uint32 } }
extension Int64: NumPyScalar { /** `int64` */ public static var numPyElementType: NumPyElementType { .int64 } }
extension UInt64: NumPyScalar { /** `uint64` */ public static var numPyElementType: NumPyElementType { .uint64 } }
extension Bool: NumPyScalar { /** `bool` */ public static var numPyElementType: NumPyElementType { .bool } }
