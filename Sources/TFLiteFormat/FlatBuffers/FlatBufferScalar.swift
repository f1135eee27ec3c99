/// A fixed-size value stored little-endian in a FlatBuffer, loaded without any alignment requirement.
protocol FlatBufferScalar {
  /// Reads the value at byte `position` of `bytes`; the caller guarantees the bytes are in range.
  static func load(from bytes: UnsafeRawBufferPointer, at position: Int) -> Self
}

extension FlatBufferScalar where Self: FixedWidthInteger {
  @inline(__always)
  static func load(from bytes: UnsafeRawBufferPointer, at position: Int) -> Self {
    Self(littleEndian: bytes.loadUnaligned(fromByteOffset: position, as: Self.self))
  }
}

extension Int8: FlatBufferScalar {}
extension UInt8: FlatBufferScalar {}
extension Int16: FlatBufferScalar {}
extension UInt16: FlatBufferScalar {}
extension Int32: FlatBufferScalar {}
extension UInt32: FlatBufferScalar {}
extension Int64: FlatBufferScalar {}
extension UInt64: FlatBufferScalar {}

extension Float: FlatBufferScalar {
  @inline(__always)
  static func load(from bytes: UnsafeRawBufferPointer, at position: Int) -> Float {
    Float(bitPattern: UInt32.load(from: bytes, at: position))
  }
}

extension Double: FlatBufferScalar {
  @inline(__always)
  static func load(from bytes: UnsafeRawBufferPointer, at position: Int) -> Double {
    Double(bitPattern: UInt64.load(from: bytes, at: position))
  }
}

extension Bool: FlatBufferScalar {
  @inline(__always)
  static func load(from bytes: UnsafeRawBufferPointer, at position: Int) -> Bool {
    UInt8.load(from: bytes, at: position) != 0
  }
}
