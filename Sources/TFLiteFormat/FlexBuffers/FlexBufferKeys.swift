/// Reading and ordering the NUL-terminated keys of a map's keys vector.
enum FlexBufferKeys {
  /// Where key `index` of the keys vector at `vectorStart` (offsets of `width` bytes) starts.
  static func keyStart(in buffer: UnsafeRawBufferPointer, vectorStart: Int, width: Int, index: Int) -> Int {
    let slot = vectorStart + index * width
    return slot - Int(buffer.flexUnsigned(at: slot, width: width))
  }

  /// The bytes of the key at `start`, without its NUL terminator.
  static func keyBytes(in buffer: UnsafeRawBufferPointer, at start: Int) -> Slice<UnsafeRawBufferPointer> {
    buffer[start...].prefix { $0 != 0 }
  }

  /// The byte-wise order of two keys (negative, zero or positive, as `strcmp`), and how many
  /// bytes were looked at.
  static func compare<Left: Sequence<UInt8>, Right: Sequence<UInt8>>(_ left: Left, _ right: Right) -> (order: Int, steps: Int) {
    var leftBytes = left.makeIterator()
    var rightBytes = right.makeIterator()
    var steps = 0
    while true {
      steps += 1
      switch (leftBytes.next(), rightBytes.next()) {
      case (nil, nil): return (0, steps)
      case (nil, _): return (-1, steps)
      case (_, nil): return (1, steps)
      case let (leftByte?, rightByte?):
        if leftByte != rightByte { return (leftByte < rightByte ? -1 : 1, steps) }
      }
    }
  }
}
