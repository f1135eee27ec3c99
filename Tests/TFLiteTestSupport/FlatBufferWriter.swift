/// A minimal FlatBuffers writer for building small `.tflite` files in tests.
///
/// The buffer is built back to front, as FlatBuffers are: every object is written before the
/// objects that refer to it. An object is identified by its distance from the end of the buffer.
public struct FlatBufferWriter {
  /// The bytes written so far: the tail of the finished buffer.
  private var bytes: [UInt8] = []
  /// The largest alignment any value needed.
  private var maximumAlignment = 1
  /// Field positions (distance from the end) of the table being built, by field id.
  private var fieldPositions: [Int: Int] = [:]
  /// Distance from the end where the current table's fields began.
  private var tableStart = 0

  /// Creates an empty writer.
  public init() {}

  /// The position of a written object: its distance from the end of the buffer.
  public typealias Offset = Int

  /// Pads so that after `additionalBytes` more bytes, the size is a multiple of `alignment`.
  private mutating func align(_ alignment: Int, additionalBytes: Int = 0) {
    maximumAlignment = max(maximumAlignment, alignment)
    let padding = (alignment - (bytes.count + additionalBytes) % alignment) % alignment
    bytes.insert(contentsOf: [UInt8](repeating: 0, count: padding), at: 0)
  }

  /// Prepends the little-endian bytes of `value`, aligned to its size.
  private mutating func prepend<Value: FixedWidthInteger>(_ value: Value) {
    align(MemoryLayout<Value>.size)
    bytes.insert(contentsOf: withUnsafeBytes(of: value.littleEndian) { [UInt8]($0) }, at: 0)
  }

  /// Prepends an offset to the object at `target`, relative to the offset's own position.
  private mutating func prependOffset(to target: Offset) {
    align(4)
    prepend(UInt32(bytes.count + 4 - target))
  }

  /// Writes a string.
  public mutating func string(_ text: String) -> Offset {
    let utf8 = Array(text.utf8)
    align(4, additionalBytes: utf8.count + 1)
    bytes.insert(contentsOf: utf8 + [0], at: 0)
    prepend(UInt32(utf8.count))
    return bytes.count
  }

  /// Writes a vector of integers, its elements aligned to `elementAlignment` (at least their size).
  public mutating func vector<Value: FixedWidthInteger>(_ values: [Value], elementAlignment: Int = 1) -> Offset {
    let size = MemoryLayout<Value>.size
    align(max(4, size, elementAlignment), additionalBytes: values.count * size)
    for value in values.reversed() { prepend(value) }
    prepend(UInt32(values.count))
    return bytes.count
  }

  /// Writes a vector of 32-bit floats.
  public mutating func vector(_ values: [Float]) -> Offset {
    vector(values.map(\.bitPattern))
  }

  /// Writes a vector of offsets to objects (tables or strings).
  public mutating func vector(offsets: [Offset]) -> Offset {
    align(4, additionalBytes: offsets.count * 4)
    for target in offsets.reversed() { prependOffset(to: target) }
    prepend(UInt32(offsets.count))
    return bytes.count
  }

  /// Builds a table: `fields` adds its fields with ``add(_:_:)`` and ``add(_:offset:)``.
  public mutating func table(_ fields: (inout FlatBufferWriter) -> Void) -> Offset {
    let savedPositions = fieldPositions
    let savedStart = tableStart
    fieldPositions = [:]
    tableStart = bytes.count
    fields(&self)
    prepend(Int32(0))  // Placeholder for the offset to the vtable.
    let table = bytes.count
    let fieldCount = (fieldPositions.keys.max() ?? -1) + 1
    var vtable = [UInt16(4 + 2 * fieldCount), UInt16(table - tableStart)]
    for field in 0..<fieldCount {
      vtable.append(fieldPositions[field].map { UInt16(table - $0) } ?? 0)
    }
    for entry in vtable.reversed() { prepend(entry) }
    let vtablePosition = bytes.count
    let placeholderIndex = bytes.count - table
    withUnsafeBytes(of: Int32(vtablePosition - table).littleEndian) { value in
      for (index, byte) in value.enumerated() { bytes[placeholderIndex + index] = byte }
    }
    fieldPositions = savedPositions
    tableStart = savedStart
    return table
  }

  /// Adds scalar field `id` to the table being built.
  public mutating func add<Value: FixedWidthInteger>(_ id: Int, _ value: Value) {
    prepend(value)
    fieldPositions[id] = bytes.count
  }

  /// Adds field `id` referring to the object at `target`.
  public mutating func add(_ id: Int, offset target: Offset) {
    prependOffset(to: target)
    fieldPositions[id] = bytes.count
  }

  /// Finishes the buffer with `root` as its root table and the 4-character `fileIdentifier`.
  public mutating func finish(root: Offset, fileIdentifier: String) -> [UInt8] {
    align(max(maximumAlignment, 4), additionalBytes: 8)
    bytes.insert(contentsOf: Array(fileIdentifier.utf8.prefix(4)), at: 0)
    prependOffset(to: root)
    return bytes
  }
}
