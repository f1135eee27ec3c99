/// A table inside bytes that ``FlatBufferVerifier`` has accepted; reads do no further checks.
///
/// Every position is a byte offset from the start of `bytes`. Field `id` has its vtable entry at
/// `4 + 2 * id`; an entry past the vtable's end or equal to zero means the field is absent.
struct FlatBufferTable {
  /// The whole buffer.
  let bytes: UnsafeRawBufferPointer
  /// Where the table starts (its signed offset to the vtable).
  let position: Int
  /// Where the table's vtable starts.
  let vtable: Int
  /// Size of the vtable in bytes; 0 for ``empty``.
  let vtableSize: Int

  /// A table with no fields, so that every field reads as its default.
  static var empty: FlatBufferTable {
    FlatBufferTable(
      bytes: UnsafeRawBufferPointer(start: nil, count: 0), position: 0, vtable: 0, vtableSize: 0)
  }

  /// A view of the table at `position`, whose vtable was verified.
  init(bytes: UnsafeRawBufferPointer, position: Int) {
    let vtable = position - Int(Int32.load(from: bytes, at: position))
    self.init(bytes: bytes, position: position, vtable: vtable, vtableSize: Int(UInt16.load(from: bytes, at: vtable)))
  }

  private init(bytes: UnsafeRawBufferPointer, position: Int, vtable: Int, vtableSize: Int) {
    self.bytes = bytes
    self.position = position
    self.vtable = vtable
    self.vtableSize = vtableSize
  }

  /// Where field `id` is stored, or nil when the table does not hold it.
  @inline(__always)
  func fieldPosition(_ id: Int) -> Int? {
    let entry = 4 + 2 * id
    guard entry + 2 <= vtableSize else { return nil }
    let offset = Int(UInt16.load(from: bytes, at: vtable + entry))
    return offset == 0 ? nil : position + offset
  }

  /// The position an unsigned offset stored at `position` points to.
  @inline(__always)
  private func target(ofOffsetAt position: Int) -> Int {
    position + Int(UInt32.load(from: bytes, at: position))
  }

  /// Scalar field `id`, or `defaultValue` when absent.
  func scalar<T: FlatBufferScalar>(_ id: Int, default defaultValue: T) -> T {
    fieldPosition(id).map { T.load(from: bytes, at: $0) } ?? defaultValue
  }

  /// String field `id` (invalid UTF-8 is repaired), or nil when absent.
  func string(_ id: Int) -> String? {
    fieldPosition(id).map { string(at: target(ofOffsetAt: $0)) }
  }

  /// Sub-table field `id`, or nil when absent.
  func table(_ id: Int) -> FlatBufferTable? {
    fieldPosition(id).map { FlatBufferTable(bytes: bytes, position: target(ofOffsetAt: $0)) }
  }

  /// Start of the elements and element count of vector field `id`, or nil when absent.
  private func vector(_ id: Int) -> (start: Int, count: Int)? {
    fieldPosition(id).map {
      let header = target(ofOffsetAt: $0)
      return (header + 4, Int(UInt32.load(from: bytes, at: header)))
    }
  }

  /// Vector-of-scalars field `id`, empty when absent.
  func scalars<T: FlatBufferScalar>(_ id: Int, as type: T.Type = T.self) -> [T] {
    guard let (start, count) = vector(id) else { return [] }
    let size = MemoryLayout<T>.size
    return (0..<count).map { T.load(from: bytes, at: start + $0 * size) }
  }

  /// Vector-of-strings field `id`, empty when absent.
  func strings(_ id: Int) -> [String] {
    guard let (start, count) = vector(id) else { return [] }
    return (0..<count).map { string(at: target(ofOffsetAt: start + 4 * $0)) }
  }

  /// Vector-of-tables field `id`, empty when absent.
  func tables(_ id: Int) -> [FlatBufferTable] {
    guard let (start, count) = vector(id) else { return [] }
    return (0..<count).map { FlatBufferTable(bytes: bytes, position: target(ofOffsetAt: start + 4 * $0)) }
  }

  /// Vector-of-structs field `id` whose structs are `size` bytes each, empty when absent.
  func structures(_ id: Int, size: Int) -> [FlatBufferStruct] {
    guard let (start, count) = vector(id) else { return [] }
    return (0..<count).map { FlatBufferStruct(bytes: bytes, position: start + $0 * size) }
  }

  /// Where the elements of byte-vector field `id` lie in the buffer, or nil when absent.
  func byteRange(_ id: Int) -> ByteRange? {
    vector(id).map { ByteRange(offset: $0.start, count: $0.count) }
  }

  /// The string whose length prefix is at `position`.
  private func string(at position: Int) -> String {
    let count = Int(UInt32.load(from: bytes, at: position))
    return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[(position + 4)..<(position + 4 + count)]), as: UTF8.self)
  }
}

/// A struct stored inline in verified bytes.
struct FlatBufferStruct {
  /// The whole buffer.
  let bytes: UnsafeRawBufferPointer
  /// Where the struct starts.
  let position: Int

  /// The scalar `offset` bytes into the struct.
  func scalar<T: FlatBufferScalar>(at offset: Int) -> T {
    T.load(from: bytes, at: position + offset)
  }

  /// The struct nested `offset` bytes into this one.
  func nested(at offset: Int) -> FlatBufferStruct {
    FlatBufferStruct(bytes: bytes, position: position + offset)
  }
}
