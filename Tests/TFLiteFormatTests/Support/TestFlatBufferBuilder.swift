@testable import TFLiteFormat

/// A value to store in a test FlatBuffer.
indirect enum TestValue {
  /// Inline little-endian bytes of a scalar (see the helpers below).
  case inline([UInt8])
  /// A sub-table.
  case table(TestTable)
  /// A string.
  case string(String)
  /// A vector of inline elements, each given as its little-endian bytes.
  case vector([[UInt8]])
  /// A vector of offsets to tables.
  case tables([TestTable])
  /// A vector of offsets to strings.
  case strings([String])

  static func int8(_ value: Int8) -> TestValue { .inline(littleEndianBytes(of: value)) }
  static func uint8(_ value: UInt8) -> TestValue { .inline([value]) }
  static func int32(_ value: Int32) -> TestValue { .inline(littleEndianBytes(of: value)) }
  static func uint32(_ value: UInt32) -> TestValue { .inline(littleEndianBytes(of: value)) }
  static func uint64(_ value: UInt64) -> TestValue { .inline(littleEndianBytes(of: value)) }
  static func float(_ value: Float) -> TestValue { .inline(littleEndianBytes(of: value.bitPattern)) }
  static func bool(_ value: Bool) -> TestValue { .inline([value ? 1 : 0]) }
  static func int32s(_ values: [Int32]) -> TestValue { .vector(values.map { littleEndianBytes(of: $0) }) }
  static func int64s(_ values: [Int64]) -> TestValue { .vector(values.map { littleEndianBytes(of: $0) }) }
  static func floats(_ values: [Float]) -> TestValue { .vector(values.map { littleEndianBytes(of: $0.bitPattern) }) }
  static func byteVector(_ values: [UInt8]) -> TestValue { .vector(values.map { [$0] }) }
}

/// The little-endian bytes of an integer.
func littleEndianBytes<T: FixedWidthInteger>(of value: T) -> [UInt8] {
  (0..<MemoryLayout<T>.size).map { UInt8(truncatingIfNeeded: value.littleEndian >> (8 * $0)) }
}

/// A table to store in a test FlatBuffer: fields by schema name, resolved to ids through ``SchemaLayout/tflite``.
final class TestTable {
  let typeName: String
  var fields: [(id: Int, value: TestValue)] = []

  init(_ typeName: String, _ fields: [(String, TestValue)] = []) {
    self.typeName = typeName
    for (name, value) in fields { set(name, value) }
  }

  /// A table of a schema other than TFLite's, with fields given by id.
  init(custom typeName: String, _ fields: [(Int, TestValue)]) {
    self.typeName = typeName
    self.fields = fields.map { (id: $0.0, value: $0.1) }
  }

  /// Sets field `name` (a union's type field is `<name>_type`).
  @discardableResult
  func set(_ name: String, _ value: TestValue) -> TestTable {
    let id = TestTable.fieldID(typeName, name)
    fields.removeAll { $0.id == id }
    fields.append((id, value))
    return self
  }

  /// The id of field `field` of table `table` in the generated layout.
  static func fieldID(_ table: String, _ field: String) -> Int {
    guard let layout = SchemaLayout.tflite.tables.first(where: { $0.name == table }),
      let entry = layout.fields.first(where: { $0.name == field })
    else { preconditionFailure("no field \(table).\(field) in the schema layout") }
    return entry.id
  }
}

/// Serializes test tables front to back: each table's vtable, then the table, then what it refers
/// to, so every offset points forward as the format requires. Alignment is not kept; the reader
/// does not need it. A table instance referenced twice is written once (both offsets point to it),
/// which is how tests build shared, DAG-shaped buffers.
struct TestFlatBufferBuilder {
  private(set) var bytes: [UInt8] = []
  /// Where each table was written.
  private(set) var tablePositions: [ObjectIdentifier: Int] = [:]

  /// The buffer holding `root`, with `identifier` after the root offset when given.
  static func build(_ root: TestTable, identifier: String? = "TFL3") -> [UInt8] {
    var builder = TestFlatBufferBuilder()
    return builder.serialize(root, identifier: identifier)
  }

  /// Writes `root` and returns the buffer; ``tablePositions`` then tells where each table went.
  mutating func serialize(_ root: TestTable, identifier: String? = "TFL3") -> [UInt8] {
    bytes = [0, 0, 0, 0] + (identifier.map { Array($0.utf8) } ?? [])
    let rootPosition = write(root)
    patchOffset(at: 0, to: rootPosition)
    return bytes
  }

  private mutating func patchOffset(at position: Int, to target: Int) {
    bytes.replaceSubrange(position..<(position + 4), with: littleEndianBytes(of: UInt32(target - position)))
  }

  private func inlineSize(_ value: TestValue) -> Int {
    if case .inline(let data) = value { return data.count }
    return 4
  }

  /// Writes the table and its children and returns the table's position.
  private mutating func write(_ table: TestTable) -> Int {
    if let position = tablePositions[ObjectIdentifier(table)] { return position }
    let fields = table.fields.sorted { $0.id < $1.id }
    let vtableStart = bytes.count
    let vtableSize = 4 + 2 * ((fields.map(\.id).max() ?? -1) + 1)
    var tableSize = 4
    var fieldOffsets: [Int: Int] = [:]
    for field in fields {
      fieldOffsets[field.id] = tableSize
      tableSize += inlineSize(field.value)
    }
    var vtable = [UInt8](repeating: 0, count: vtableSize)
    vtable.replaceSubrange(0..<2, with: littleEndianBytes(of: UInt16(vtableSize)))
    vtable.replaceSubrange(2..<4, with: littleEndianBytes(of: UInt16(tableSize)))
    for (id, offset) in fieldOffsets {
      vtable.replaceSubrange((4 + 2 * id)..<(6 + 2 * id), with: littleEndianBytes(of: UInt16(offset)))
    }
    bytes += vtable
    let tableStart = bytes.count
    tablePositions[ObjectIdentifier(table)] = tableStart
    bytes += littleEndianBytes(of: Int32(tableStart - vtableStart))
    var pending: [(position: Int, value: TestValue)] = []
    for field in fields {
      if case .inline(let data) = field.value {
        bytes += data
      } else {
        pending.append((bytes.count, field.value))
        bytes += [0, 0, 0, 0]
      }
    }
    for (position, value) in pending {
      patchOffset(at: position, to: write(value))
    }
    return tableStart
  }

  /// Writes a non-inline value and returns where it starts.
  private mutating func write(_ value: TestValue) -> Int {
    switch value {
    case .inline:
      preconditionFailure("inline values are stored in their table")
    case .table(let table):
      return write(table)
    case .string(let text):
      let start = bytes.count
      bytes += littleEndianBytes(of: UInt32(text.utf8.count)) + Array(text.utf8) + [0]
      return start
    case .vector(let elements):
      let start = bytes.count
      bytes += littleEndianBytes(of: UInt32(elements.count)) + elements.flatMap { $0 }
      return start
    case .tables(let tables):
      return writeOffsetVector(tables.map(TestValue.table))
    case .strings(let texts):
      return writeOffsetVector(texts.map(TestValue.string))
    }
  }

  private mutating func writeOffsetVector(_ elements: [TestValue]) -> Int {
    let start = bytes.count
    bytes += littleEndianBytes(of: UInt32(elements.count))
    let slots = bytes.count
    bytes += [UInt8](repeating: 0, count: 4 * elements.count)
    for (index, element) in elements.enumerated() {
      patchOffset(at: slots + 4 * index, to: write(element))
    }
    return start
  }
}
