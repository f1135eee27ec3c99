// A small FlexBuffers encoder used only by the tests, written from the format description
// (children before parents, backward offsets, parent-chosen widths, root at the end).

import TFLiteFormat

/// A value the test encoder can write.
indirect enum FlexValue {
  case null
  case bool(Bool)
  case int(Int64)
  case uint(UInt64)
  /// A float needing at least `width` bytes (2 = half, 4 = float, 8 = double).
  case float(Double, width: Int)
  case indirectInt(Int64, width: Int)
  case indirectUInt(UInt64, width: Int)
  case indirectFloat(Double, width: Int)
  case key(String)
  case string(String)
  case blob([UInt8])
  case vector([FlexValue])
  /// A typed vector; `elementType` is `.int`, `.uint`, `.float`, `.key` or `.bool`.
  case typedVector(FlexBufferType, [FlexValue])
  /// A fixed-length typed vector of 2, 3 or 4 `.int`, `.uint` or `.float` elements.
  case fixedVector(FlexBufferType, [FlexValue])
  /// A typed vector in the deprecated string encoding (offsets to sized strings).
  case deprecatedStringVector([String])
  /// A map; the encoder sorts the entries by key bytes.
  case map([(String, FlexValue)])
}

/// Writes `FlexValue`s front to back, choosing for each container the smallest width (at least
/// `minimumWidth`) that holds its size, inline values and offsets.
struct FlexBufferTestEncoder {
  private(set) var bytes: [UInt8] = []
  let minimumWidth: Int

  /// Encodes `value` as the root of a new buffer.
  static func encode(_ value: FlexValue, minimumWidth: Int = 1) -> [UInt8] {
    var encoder = FlexBufferTestEncoder(minimumWidth: minimumWidth)
    let root = encoder.write(value)
    let width = encoder.appendSlots([root], prefix: [], sizeField: nil)
    encoder.bytes.append(root.packedType(slotWidth: width))
    encoder.bytes.append(UInt8(width))
    return encoder.bytes
  }

  /// How a written value is stored in its parent's slot.
  struct Slot {
    var type: FlexBufferType
    /// The value for inline types.
    var inline: FlexValue = .null
    /// Where the value starts, for types stored behind an offset.
    var target: Int? = nil
    /// The width of the value behind the offset.
    var targetWidth = 1

    func packedType(slotWidth: Int) -> UInt8 {
      type.rawValue << 2 | UInt8((target == nil ? slotWidth : targetWidth).trailingZeroBitCount)
    }
  }

  /// Writes the parts of `value` that live before its parent and returns its slot.
  mutating func write(_ value: FlexValue) -> Slot {
    switch value {
    case .null: return Slot(type: .null)
    case .bool: return Slot(type: .bool, inline: value)
    case .int: return Slot(type: .int, inline: value)
    case .uint: return Slot(type: .uint, inline: value)
    case .float: return Slot(type: .float, inline: value)
    case .indirectInt(let number, let width):
      return writeIndirect(.int(number), type: .indirectInt, width: width)
    case .indirectUInt(let number, let width):
      return writeIndirect(.uint(number), type: .indirectUInt, width: width)
    case .indirectFloat(let number, let width):
      return writeIndirect(.float(number, width: width), type: .indirectFloat, width: width)
    case .key(let text):
      return Slot(type: .key, target: writeKey(text))
    case .string(let text):
      return writeSized(Array(text.utf8), terminator: [0], type: .string)
    case .blob(let data):
      return writeSized(data, terminator: [], type: .blob)
    case .vector(let elements):
      let slots = elements.map { write($0) }
      return finishVector(slots, type: .vector, typeBytes: true)
    case .typedVector(let elementType, let elements):
      let slots = elements.map { write($0) }
      return finishVector(slots, type: typedVectorType(elementType), typeBytes: false)
    case .fixedVector(let elementType, let elements):
      let slots = elements.map { write($0) }
      let offset = elementType == .int ? 0 : (elementType == .uint ? 1 : 2)
      let type = FlexBufferType(rawValue: UInt8(16 + 3 * (elements.count - 2) + offset)) ?? .null
      let width = appendSlots(slots, prefix: [], sizeField: nil)
      return Slot(type: type, target: bytes.count - slots.count * width, targetWidth: width)
    case .deprecatedStringVector(let strings):
      let slots = strings.map { writeSized(Array($0.utf8), terminator: [0], type: .string) }
      return finishVector(slots, type: .vectorStringDeprecated, typeBytes: false)
    case .map(let entries):
      let sorted = entries.sorted { $0.0.utf8.lexicographicallyPrecedes($1.0.utf8) }
      let keySlots = sorted.map { Slot(type: .key, target: writeKey($0.0)) }
      let keys = finishVector(keySlots, type: .vectorKey, typeBytes: false)
      let valueSlots = sorted.map { write($0.1) }
      let keysWidthSlot = Slot(type: .uint, inline: .uint(UInt64(keys.targetWidth)))
      let width = appendSlots(
        valueSlots, prefix: [keys, keysWidthSlot], sizeField: valueSlots.count, typeBytes: true)
      return Slot(type: .map, target: bytes.count - valueSlots.count * (width + 1), targetWidth: width)
    }
  }

  private func typedVectorType(_ elementType: FlexBufferType) -> FlexBufferType {
    switch elementType {
    case .int: return .vectorInt
    case .uint: return .vectorUInt
    case .float: return .vectorFloat
    case .key: return .vectorKey
    default: return .vectorBool
    }
  }

  private mutating func finishVector(_ slots: [Slot], type: FlexBufferType, typeBytes: Bool) -> Slot {
    let width = appendSlots(slots, prefix: [], sizeField: slots.count, typeBytes: typeBytes)
    let start = bytes.count - slots.count * (typeBytes ? width + 1 : width)
    return Slot(type: type, target: start, targetWidth: width)
  }

  private mutating func writeIndirect(_ inline: FlexValue, type: FlexBufferType, width: Int) -> Slot {
    let start = aligned(bytes.count, to: width)
    bytes += Array(repeating: 0, count: start - bytes.count)
    bytes += Self.encodeInline(inline, width: width) ?? []
    return Slot(type: type, target: start, targetWidth: width)
  }

  private mutating func writeKey(_ text: String) -> Int {
    let start = bytes.count
    bytes += Array(text.utf8) + [0]
    return start
  }

  private mutating func writeSized(_ data: [UInt8], terminator: [UInt8], type: FlexBufferType) -> Slot {
    var width = minimumWidth
    while Self.encodeInline(.uint(UInt64(data.count)), width: width) == nil { width *= 2 }
    let sizeStart = aligned(bytes.count, to: width)
    bytes += Array(repeating: 0, count: sizeStart - bytes.count)
    bytes += Self.encodeInline(.uint(UInt64(data.count)), width: width) ?? []
    let start = bytes.count
    bytes += data + terminator
    return Slot(type: type, target: start, targetWidth: width)
  }

  /// Appends the prefix slots, the optional size field, the slots and (optionally) their type
  /// bytes at the smallest width that fits everything; returns that width.
  @discardableResult
  mutating func appendSlots(_ slots: [Slot], prefix: [Slot], sizeField: Int?, typeBytes: Bool = false) -> Int {
    let sizeSlots = sizeField.map { [Slot(type: .uint, inline: .uint(UInt64($0)))] } ?? []
    let all = prefix + sizeSlots + slots
    var width = minimumWidth
    while true {
      let start = aligned(bytes.count, to: width)
      let encoded = all.enumerated().map { index, slot in encode(slot, at: start + index * width, width: width) }
      if encoded.allSatisfy({ $0 != nil }) {
        bytes += Array(repeating: 0, count: start - bytes.count)
        bytes += encoded.flatMap { $0 ?? [] }
        if typeBytes { bytes += slots.map { $0.packedType(slotWidth: width) } }
        return width
      }
      width *= 2
    }
  }

  /// The bytes of `slot` stored at `position` with `width` bytes, or nil when it does not fit.
  private func encode(_ slot: Slot, at position: Int, width: Int) -> [UInt8]? {
    guard let target = slot.target else { return Self.encodeInline(slot.inline, width: width) }
    return Self.encodeInline(.uint(UInt64(position - target)), width: width)
  }

  /// The little-endian bytes of an inline value in `width` bytes, or nil when it does not fit.
  static func encodeInline(_ value: FlexValue, width: Int) -> [UInt8]? {
    let bits: UInt64
    switch value {
    case .null: bits = 0
    case .bool(let flag): bits = flag ? 1 : 0
    case .int(let number):
      let shift = UInt64(64 - 8 * width)
      guard (number << shift) >> shift == number else { return nil }
      bits = UInt64(bitPattern: number)
    case .uint(let number):
      guard width == 8 || number >> UInt64(8 * width) == 0 else { return nil }
      bits = number
    case .float(let number, let minimum):
      guard width >= minimum else { return nil }
      switch width {
      case 2: bits = UInt64(HalfPrecision.bits(from: Float(number)))
      case 4: bits = UInt64(Float(number).bitPattern)
      default: bits = number.bitPattern
      }
    default: return nil
    }
    return (0..<width).map { UInt8(truncatingIfNeeded: bits >> UInt64(8 * $0)) }
  }

  private func aligned(_ position: Int, to width: Int) -> Int {
    (position + width - 1) / width * width
  }
}
