/// Reading and ordering the NUL-terminated keys of a map's keys vector.
enum FlexBufferKeys {
  /// Where key `index` of the keys vector at `vectorStart` (offsets of `width` bytes) starts.
  static func keyStart(in buffer: UnsafeRawBufferPointer, vectorStart: Int, width: Int, index: Int) -> Int {
    let slot = vectorStart + index * width
    return slot - Int(buffer.flexUnsigned(at: slot, width: width))
  }

  /// The bytes of the verified key at `start`, without its NUL terminator.
  static func keyBytes(in buffer: UnsafeRawBufferPointer, at start: Int) -> UnsafeRawBufferPointer {
    var end = start
    while buffer[end] != 0 { end += 1 }
    return UnsafeRawBufferPointer(rebasing: buffer[start..<end])
  }

  /// The byte-wise order of two keys: negative, zero or positive, as `strcmp`.
  static func compare(_ left: UnsafeRawBufferPointer, _ right: UnsafeRawBufferPointer) -> Int {
    for index in 0..<min(left.count, right.count) where left[index] != right[index] {
      return left[index] < right[index] ? -1 : 1
    }
    return left.count == right.count ? 0 : (left.count < right.count ? -1 : 1)
  }
}
