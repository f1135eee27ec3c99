/// The type of a FlexBuffers value: the upper six bits of a packed type byte.
public enum FlexBufferType: UInt8, Sendable, CaseIterable {
  /// No value.
  case null = 0
  /// A signed integer stored inline.
  case int = 1
  /// An unsigned integer stored inline.
  case uint = 2
  /// A floating-point number stored inline.
  case float = 3
  /// A NUL-terminated string without a size field (map keys).
  case key = 4
  /// A sized, NUL-terminated UTF-8 string.
  case string = 5
  /// A signed integer stored behind an offset.
  case indirectInt = 6
  /// An unsigned integer stored behind an offset.
  case indirectUInt = 7
  /// A floating-point number stored behind an offset.
  case indirectFloat = 8
  /// A map: a vector of values with a sorted vector of keys.
  case map = 9
  /// A vector whose elements each carry their own type byte.
  case vector = 10
  /// A vector of signed integers.
  case vectorInt = 11
  /// A vector of unsigned integers.
  case vectorUInt = 12
  /// A vector of floating-point numbers.
  case vectorFloat = 13
  /// A vector of keys.
  case vectorKey = 14
  /// A vector of strings in the deprecated encoding; its elements read as keys.
  case vectorStringDeprecated = 15
  /// Two signed integers.
  case vectorInt2 = 16
  /// Two unsigned integers.
  case vectorUInt2 = 17
  /// Two floating-point numbers.
  case vectorFloat2 = 18
  /// Three signed integers.
  case vectorInt3 = 19
  /// Three unsigned integers.
  case vectorUInt3 = 20
  /// Three floating-point numbers.
  case vectorFloat3 = 21
  /// Four signed integers.
  case vectorInt4 = 22
  /// Four unsigned integers.
  case vectorUInt4 = 23
  /// Four floating-point numbers.
  case vectorFloat4 = 24
  /// A sized run of raw bytes.
  case blob = 25
  /// A boolean stored inline.
  case bool = 26
  /// A vector of booleans.
  case vectorBool = 36

  /// Whether the value sits in its slot rather than behind an offset.
  public var isInline: Bool {
    switch self {
    case .null, .int, .uint, .float, .bool: return true
    default: return false
    }
  }

  /// The element type of a typed vector (`vectorInt` … `vectorStringDeprecated`, `vectorBool`), else nil.
  /// Deprecated string vectors yield `key`, the way their elements are read.
  public var typedVectorElementType: FlexBufferType? {
    switch self {
    case .vectorInt: return .int
    case .vectorUInt: return .uint
    case .vectorFloat: return .float
    case .vectorKey, .vectorStringDeprecated: return .key
    case .vectorBool: return .bool
    default: return nil
    }
  }

  /// The element type and length of a fixed-length typed vector (2, 3 or 4 elements), else nil.
  public var fixedVectorLayout: (elementType: FlexBufferType, count: Int)? {
    guard rawValue >= FlexBufferType.vectorInt2.rawValue, rawValue <= FlexBufferType.vectorFloat4.rawValue else {
      return nil
    }
    let index = Int(rawValue - FlexBufferType.vectorInt2.rawValue)
    let elementType: FlexBufferType = index % 3 == 0 ? .int : (index % 3 == 1 ? .uint : .float)
    return (elementType, index / 3 + 2)
  }
}
