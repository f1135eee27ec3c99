/// Checks every offset, width, length and type code reachable from the root of a FlexBuffer
/// before any accessor reads it, so that the accessors of `FlexBufferReference` can load
/// without further checks.
///
/// Targets already verified with the same packed type are remembered, so shared values (pooled
/// keys, shared key vectors) cost one check each; a work budget proportional to the buffer size
/// bounds what crafted offsets can make the walk revisit, and a depth limit stops cycles.
struct FlexBufferVerifier {
  /// The deepest container nesting accepted.
  static let maximumDepth = 64

  private let buffer: UnsafeRawBufferPointer
  private var remainingWork: Int
  private var verifiedTargets: Set<UInt64> = []

  /// A verifier for `buffer`, with a work budget proportional to its size.
  init(_ buffer: UnsafeRawBufferPointer) {
    self.buffer = buffer
    let (scaled, overflow) = buffer.count.multipliedReportingOverflow(by: 8)
    remainingWork = overflow ? Int.max : scaled + 1024
  }

  /// Verifies the whole buffer and returns where its root value sits.
  mutating func verifyRoot() throws -> (slot: Int, width: Int, packedType: UInt8) {
    guard buffer.count >= 3 else {
      throw FlexBufferError(message: "a FlexBuffer needs at least 3 bytes, found \(buffer.count)", offset: 0)
    }
    let widthOffset = buffer.count - 1
    let width = Int(buffer[widthOffset])
    guard [1, 2, 4, 8].contains(width) else {
      throw FlexBufferError(message: "root byte width \(width) is not 1, 2, 4 or 8", offset: widthOffset)
    }
    guard buffer.count >= width + 2 else {
      throw FlexBufferError(message: "root value of \(width) bytes does not fit before the root type", offset: 0)
    }
    let slot = buffer.count - 2 - width
    let packedType = buffer[buffer.count - 2]
    try verifyReference(slot: slot, slotWidth: width, packedType: packedType, depth: 0)
    return (slot, width, packedType)
  }

  /// Verifies the value whose slot (inline value or offset) of `slotWidth` bytes at `slot` is
  /// already known to lie inside the buffer.
  private mutating func verifyReference(slot: Int, slotWidth: Int, packedType: UInt8, depth: Int) throws {
    try spend(1, at: slot)
    guard let type = FlexBufferType(rawValue: packedType >> 2) else {
      throw FlexBufferError(message: "unknown type code \(packedType >> 2)", offset: slot)
    }
    if type.isInline {
      if type == .float { try checkFloatWidth(slotWidth, at: slot) }
      return
    }
    let target = try resolveOffset(at: slot, width: slotWidth)
    let memoKey = Self.memoKey(target, tag: packedType)
    if verifiedTargets.contains(memoKey) { return }
    try verifyTarget(target, type: type, width: 1 << Int(packedType & 3), depth: depth)
    verifiedTargets.insert(memoKey)
  }

  /// Verifies the value of `type` that starts at `target`, with byte width `width` for its size
  /// field, elements or indirect scalar.
  private mutating func verifyTarget(_ target: Int, type: FlexBufferType, width: Int, depth: Int) throws {
    switch type {
    case .key:
      try verifyKey(at: target)
    case .string:
      let length = try sizeField(before: target, width: width)
      guard length < buffer.count - target else {
        throw FlexBufferError(message: "string of \(length) bytes runs past the end of the buffer", offset: target)
      }
      guard buffer[target + length] == 0 else {
        throw FlexBufferError(message: "string of \(length) bytes is not NUL-terminated", offset: target + length)
      }
    case .blob:
      let length = try sizeField(before: target, width: width)
      guard length <= buffer.count - target else {
        throw FlexBufferError(message: "blob of \(length) bytes runs past the end of the buffer", offset: target)
      }
    case .indirectInt, .indirectUInt, .indirectFloat:
      guard width <= buffer.count - target else {
        throw FlexBufferError(message: "indirect \(width)-byte scalar runs past the end of the buffer", offset: target)
      }
      if type == .indirectFloat { try checkFloatWidth(width, at: target) }
    case .vector:
      try checkDepth(depth, at: target)
      try verifyUntypedElements(at: target, count: sizeField(before: target, width: width), width: width, depth: depth)
    case .map:
      try checkDepth(depth, at: target)
      try verifyMap(at: target, width: width, depth: depth)
    default:
      if let elementType = type.typedVectorElementType {
        try verifyTypedElements(at: target, count: sizeField(before: target, width: width), width: width, elementType: elementType)
      } else if let layout = type.fixedVectorLayout {
        try verifyTypedElements(at: target, count: layout.count, width: width, elementType: layout.elementType)
      }
    }
  }

  /// Verifies a map: the keys-vector prefix, the keys (sorted, one per value) and the values.
  private mutating func verifyMap(at target: Int, width: Int, depth: Int) throws {
    guard target >= 3 * width else {
      throw FlexBufferError(message: "map prefix (keys offset, keys width, size) starts before the buffer", offset: target)
    }
    let keysOffsetSlot = target - 3 * width
    let keysWidth = Int(clamping: buffer.flexUnsigned(at: target - 2 * width, width: width))
    guard [1, 2, 4, 8].contains(keysWidth) else {
      throw FlexBufferError(message: "map keys byte width \(keysWidth) is not 1, 2, 4 or 8", offset: target - 2 * width)
    }
    let count = try sizeField(before: target, width: width)
    let keysTarget = try resolveOffset(at: keysOffsetSlot, width: width)
    let keysCount = try sizeField(before: keysTarget, width: keysWidth)
    guard keysCount == count else {
      throw FlexBufferError(message: "map has \(count) values but its keys vector has \(keysCount) keys", offset: target)
    }
    let keysMemoKey = Self.memoKey(keysTarget, tag: Self.sortedKeysTag | UInt8(keysWidth.trailingZeroBitCount))
    if !verifiedTargets.contains(keysMemoKey) {
      try verifyTypedElements(at: keysTarget, count: keysCount, width: keysWidth, elementType: .key)
      try verifyKeysSorted(at: keysTarget, count: keysCount, width: keysWidth)
      verifiedTargets.insert(keysMemoKey)
    }
    try verifyUntypedElements(at: target, count: count, width: width, depth: depth)
  }

  /// Verifies `count` elements of `width` bytes at `start`, followed by one type byte each.
  private mutating func verifyUntypedElements(at start: Int, count: Int, width: Int, depth: Int) throws {
    guard count <= (buffer.count - start) / (width + 1) else {
      throw FlexBufferError(message: "vector of \(count) elements of \(width) bytes plus type bytes runs past the end of the buffer", offset: start)
    }
    try spend(count, at: start)
    let typesStart = start + count * width
    for index in 0..<count {
      try verifyReference(slot: start + index * width, slotWidth: width, packedType: buffer[typesStart + index], depth: depth + 1)
    }
  }

  /// Verifies `count` elements of `width` bytes at `start` that all have type `elementType`.
  private mutating func verifyTypedElements(at start: Int, count: Int, width: Int, elementType: FlexBufferType) throws {
    guard count <= (buffer.count - start) / width else {
      throw FlexBufferError(message: "typed vector of \(count) elements of \(width) bytes runs past the end of the buffer", offset: start)
    }
    try spend(count, at: start)
    switch elementType {
    case .float:
      try checkFloatWidth(width, at: start)
    case .key:
      for index in 0..<count {
        let keyTarget = try resolveOffset(at: start + index * width, width: width)
        let memoKey = Self.memoKey(keyTarget, tag: FlexBufferType.key.rawValue << 2)
        if !verifiedTargets.contains(memoKey) {
          try verifyKey(at: keyTarget)
          verifiedTargets.insert(memoKey)
        }
      }
    default:
      return
    }
  }

  /// Checks that the keys of a map's keys vector are in ascending byte order, as lookups assume.
  private mutating func verifyKeysSorted(at start: Int, count: Int, width: Int) throws {
    guard count > 1 else { return }
    for index in 1..<count {
      let previous = FlexBufferKeys.keyStart(in: buffer, vectorStart: start, width: width, index: index - 1)
      let current = FlexBufferKeys.keyStart(in: buffer, vectorStart: start, width: width, index: index)
      let previousKey = FlexBufferKeys.keyBytes(in: buffer, at: previous)
      let currentKey = FlexBufferKeys.keyBytes(in: buffer, at: current)
      try spend(previousKey.count + currentKey.count, at: current)
      guard FlexBufferKeys.compare(previousKey, currentKey) <= 0 else {
        throw FlexBufferError(message: "map keys are not sorted: key \(index) sorts before key \(index - 1)", offset: current)
      }
    }
  }

  /// Checks that a key's NUL terminator lies inside the buffer.
  private mutating func verifyKey(at target: Int) throws {
    var position = target
    while position < buffer.count, buffer[position] != 0 { position += 1 }
    try spend(position - target, at: target)
    guard position < buffer.count else {
      throw FlexBufferError(message: "key is not NUL-terminated before the end of the buffer", offset: target)
    }
  }

  /// The target of the offset of `width` bytes at `slot`: it must point backwards inside the buffer,
  /// or be 0 (encoders write 0 when an empty vector or blob ends right where its parent's slot starts).
  private func resolveOffset(at slot: Int, width: Int) throws -> Int {
    let distance = buffer.flexUnsigned(at: slot, width: width)
    guard distance <= UInt64(slot) else {
      throw FlexBufferError(message: "offset \(distance) points before the start of the buffer", offset: slot)
    }
    return slot - Int(distance)
  }

  /// The size field of `width` bytes just before `target`, no larger than the buffer.
  private func sizeField(before target: Int, width: Int) throws -> Int {
    guard target >= width else {
      throw FlexBufferError(message: "size field starts before the buffer", offset: target)
    }
    let size = buffer.flexUnsigned(at: target - width, width: width)
    guard size <= UInt64(buffer.count) else {
      throw FlexBufferError(message: "size \(size) exceeds the buffer size \(buffer.count)", offset: target - width)
    }
    return Int(size)
  }

  /// A memo tag no packed type of a known type uses: keys vectors checked for sort order
  /// (the low 2 bits carry the keys width).
  private static let sortedKeysTag: UInt8 = 0xFC

  /// The memo entry for `target` checked as `tag` (a packed type byte, or `sortedKeysTag`).
  private static func memoKey(_ target: Int, tag: UInt8) -> UInt64 {
    UInt64(target) << 8 | UInt64(tag)
  }

  /// Rejects 8-bit floats, which have no defined encoding.
  private func checkFloatWidth(_ width: Int, at offset: Int) throws {
    guard width >= 2 else {
      throw FlexBufferError(message: "a float cannot be 1 byte wide", offset: offset)
    }
  }

  /// Rejects containers nested deeper than `maximumDepth` (which also ends cycles).
  private func checkDepth(_ depth: Int, at offset: Int) throws {
    guard depth < Self.maximumDepth else {
      throw FlexBufferError(message: "containers nested deeper than \(Self.maximumDepth) levels (or a cycle)", offset: offset)
    }
  }

  /// Takes `amount` units from the work budget, failing once it runs out.
  private mutating func spend(_ amount: Int, at offset: Int) throws {
    remainingWork -= amount
    guard remainingWork >= 0 else {
      throw FlexBufferError(message: "verification work exceeds the budget for a buffer of \(buffer.count) bytes (values shared too often)", offset: offset)
    }
  }
}
