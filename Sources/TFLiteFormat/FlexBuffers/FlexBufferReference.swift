/// A verified, read-only view of one FlexBuffers value.
///
/// `init` verifies the whole buffer once (every offset, width, length and type code reachable from
/// the root); accessors then read without further checks. Accessors that do not match the value's
/// type return nil. Reading is zero-copy except where a Swift `String` or array is returned.
///
/// ```swift
/// let options = try FlexBufferReference(customOptionsBytes)
/// let maxDetections = options["max_detections"]?.asInt
/// ```
public struct FlexBufferReference: @unchecked Sendable {
  // @unchecked: it only reads bytes that never change while `owner` (or the caller) keeps them alive.
  let buffer: UnsafeRawBufferPointer
  let owner: AnyObject?
  /// Where the inline value, or the offset to the value, sits.
  let slot: Int
  /// The byte width of the slot, given by the parent.
  let slotWidth: Int
  /// The byte width of the value behind the offset (size field, elements or indirect scalar).
  let targetWidth: Int
  /// The value's type.
  public let type: FlexBufferType

  /// Verifies `buffer` and returns its root value. The bytes must stay valid and unchanged while
  /// any reference derived from the result is used; pass the object that owns them as `owner` to
  /// have every derived reference keep it alive.
  public init(_ buffer: UnsafeRawBufferPointer, owner: AnyObject? = nil) throws {
    var verifier = FlexBufferVerifier(buffer)
    let root = try verifier.verifyRoot()
    self.init(buffer: buffer, owner: owner, slot: root.slot, slotWidth: root.width, packedType: root.packedType)
  }

  /// Copies `bytes`, verifies them and returns the root value; derived references keep the copy alive.
  public init(_ bytes: [UInt8]) throws {
    let storage = FlexBufferStorage(copying: bytes)
    try self.init(UnsafeRawBufferPointer(storage.bytes), owner: storage)
  }

  /// A reference to a slot whose packed type byte the verifier accepted.
  init(buffer: UnsafeRawBufferPointer, owner: AnyObject?, slot: Int, slotWidth: Int, packedType: UInt8) {
    self.init(
      buffer: buffer, owner: owner, slot: slot, slotWidth: slotWidth, targetWidth: 1 << Int(packedType & 3),
      type: FlexBufferType(rawValue: packedType >> 2) ?? .null)
  }

  /// A reference with every field given.
  init(buffer: UnsafeRawBufferPointer, owner: AnyObject?, slot: Int, slotWidth: Int, targetWidth: Int, type: FlexBufferType) {
    self.buffer = buffer
    self.owner = owner
    self.slot = slot
    self.slotWidth = slotWidth
    self.targetWidth = targetWidth
    self.type = type
  }

  /// Where the value behind the slot's offset starts (only for types that are not inline).
  var target: Int { slot - Int(buffer.flexUnsigned(at: slot, width: slotWidth)) }

  /// Whether the value is null.
  public var isNull: Bool { type == .null }

  /// The value of an int or uint (inline or indirect) as `Int64`; nil for other types and for
  /// unsigned values above `Int64.max`.
  public var asInt64: Int64? {
    switch type {
    case .int: return buffer.flexSigned(at: slot, width: slotWidth)
    case .indirectInt: return buffer.flexSigned(at: target, width: targetWidth)
    case .uint, .indirectUInt: return asUInt64.flatMap { Int64(exactly: $0) }
    default: return nil
    }
  }

  /// The value of an int or uint (inline or indirect) as `UInt64`; nil for other types and for
  /// negative values.
  public var asUInt64: UInt64? {
    switch type {
    case .uint: return buffer.flexUnsigned(at: slot, width: slotWidth)
    case .indirectUInt: return buffer.flexUnsigned(at: target, width: targetWidth)
    case .int, .indirectInt: return asInt64.flatMap { UInt64(exactly: $0) }
    default: return nil
    }
  }

  /// The value of an int or uint as `Int`; nil for other types and values `Int` cannot hold.
  public var asInt: Int? { asInt64.flatMap { Int(exactly: $0) } }

  /// The value of a float (inline or indirect, 16/32/64-bit), or of an int or uint converted to
  /// the nearest `Double`; nil for other types.
  public var asDouble: Double? {
    switch type {
    case .float: return buffer.flexFloat(at: slot, width: slotWidth)
    case .indirectFloat: return buffer.flexFloat(at: target, width: targetWidth)
    case .int, .indirectInt: return asInt64.map { Double($0) }
    case .uint, .indirectUInt: return asUInt64.map { Double($0) }
    default: return nil
    }
  }

  /// The value of a bool, or whether an int or uint is non-zero (as TFLite reads flags); nil for
  /// other types.
  public var asBool: Bool? {
    switch type {
    case .bool: return buffer.flexUnsigned(at: slot, width: slotWidth) != 0
    case .int, .indirectInt, .uint, .indirectUInt: return asUInt64 != 0
    default: return nil
    }
  }

  /// The text of a string or key (invalid UTF-8 is repaired with U+FFFD); nil for other types.
  public var asString: String? {
    switch type {
    case .string: return String(decoding: sizedBytes, as: UTF8.self)
    case .key: return String(decoding: FlexBufferKeys.keyBytes(in: buffer, at: target), as: UTF8.self)
    default: return nil
    }
  }

  /// A copy of the bytes of a blob; nil for other types.
  public var asBlob: [UInt8]? { type == .blob ? Array(sizedBytes) : nil }

  /// The elements of a vector, typed vector, fixed-length typed vector or map (its values); nil
  /// for other types.
  public var asVector: FlexBufferVector? {
    switch type {
    case .vector, .map:
      return FlexBufferVector(
        buffer: buffer, owner: owner, start: target, count: sizeBeforeTarget, width: targetWidth,
        elementTypes: .perElement)
    default:
      if let elementType = type.typedVectorElementType {
        return FlexBufferVector(
          buffer: buffer, owner: owner, start: target, count: sizeBeforeTarget, width: targetWidth,
          elementTypes: .uniform(elementType))
      }
      if let layout = type.fixedVectorLayout {
        return FlexBufferVector(
          buffer: buffer, owner: owner, start: target, count: layout.count, width: targetWidth,
          elementTypes: .uniform(layout.elementType))
      }
      return nil
    }
  }

  /// The map; nil for other types.
  public var asMap: FlexBufferMap? {
    guard type == .map, let values = asVector else { return nil }
    let keysOffsetSlot = values.start - 3 * values.width
    let keysWidth = Int(buffer.flexUnsigned(at: values.start - 2 * values.width, width: values.width))
    let keysStart = keysOffsetSlot - Int(buffer.flexUnsigned(at: keysOffsetSlot, width: values.width))
    return FlexBufferMap(values: values, keysStart: keysStart, keysWidth: keysWidth)
  }

  /// The value stored under `key` when this is a map; nil when it is not a map or has no such key.
  public subscript(key: String) -> FlexBufferReference? { asMap?[key] }

  /// Element `index` when this is any kind of vector or a map; nil when it is not or the index is
  /// out of range.
  public subscript(index: Int) -> FlexBufferReference? { asVector?.element(at: index) }

  /// The size field just before the target, of `targetWidth` bytes.
  private var sizeBeforeTarget: Int {
    let start = target
    return Int(buffer.flexUnsigned(at: start - targetWidth, width: targetWidth))
  }

  /// The bytes of a string (without its NUL) or blob.
  private var sizedBytes: Slice<UnsafeRawBufferPointer> {
    let start = target
    return buffer[start..<(start + sizeBeforeTarget)]
  }
}

/// A private copy of FlexBuffer bytes that references made from an array keep alive.
final class FlexBufferStorage {
  /// The copied bytes.
  let bytes: UnsafeMutableRawBufferPointer

  /// Copies `source` into freshly allocated memory.
  init(copying source: [UInt8]) {
    bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: source.count, alignment: 8)
    bytes.copyBytes(from: source)
  }

  deinit { bytes.deallocate() }
}
