// A `.tflite` FlatBuffer decoded into an editable tree that follows the schema layout, and written
// back out. The fuzz tests edit the tree (shapes, options, operand indices, quantization, ...) to
// build models that load but carry hostile content, which byte-level mutation rarely reaches.

@testable import TFLiteFormat

/// One table of a model tree: its schema table and the fields present in the file.
struct TreeTable {
  /// Index of the table's layout in ``SchemaLayout/tflite``.
  var layout: Int
  /// The fields present, by field id.
  var fields: [Int: TreeValue]

  /// The table's layout.
  var tableLayout: TableLayout { SchemaLayout.tflite.tables[layout] }

  /// The id of the field called `name` (a schema field name such as `"shape"`).
  func fieldID(_ name: String) -> Int {
    guard let field = tableLayout.fields.first(where: { $0.name == name }) else {
      preconditionFailure("table \(tableLayout.name) has no field \(name)")
    }
    return field.id
  }

  /// The field called `name`, nil when absent; setting nil removes it.
  subscript(_ name: String) -> TreeValue? {
    get { fields[fieldID(name)] }
    set { fields[fieldID(name)] = newValue }
  }

  /// The tables of the table-vector field `name` (empty when absent).
  func tables(_ name: String) -> [TreeTable] {
    if case .tableVector(let tables) = self[name] { return tables }
    return []
  }

  /// The elements of the 32-bit integer vector field `name` (empty when absent).
  func int32s(_ name: String) -> [Int32] {
    guard case .scalarVector(let bytes, 4) = self[name] else { return [] }
    return stride(from: 0, to: bytes.count, by: 4).map { Int32(littleEndianBytes: bytes[$0..<($0 + 4)]) }
  }

  /// Sets field `name` to a vector of 32-bit integers.
  mutating func setInt32s(_ name: String, _ values: [Int32]) {
    self[name] = .scalarVector(values.flatMap(\.littleEndianBytes), elementSize: 4)
  }

  /// Edits element `index` of the table-vector field `name` in place.
  mutating func update(_ name: String, at index: Int, _ body: (inout TreeTable) -> Void) {
    guard case .tableVector(var tables) = self[name], tables.indices.contains(index) else { return }
    body(&tables[index])
    self[name] = .tableVector(tables)
  }

  /// The value of scalar field `name` read as a signed integer (0 when absent: every default
  /// the fuzzer relies on is 0).
  func integer(_ name: String) -> Int64 {
    guard case .scalar(let bytes) = self[name] else { return 0 }
    return Int64(littleEndianBytes: bytes[...])
  }
}

/// A field value of a model tree.
indirect enum TreeValue {
  /// An inline scalar or enum, little-endian.
  case scalar([UInt8])
  /// An inline struct.
  case structure([UInt8], alignment: Int)
  /// A string (without its terminator).
  case string([UInt8])
  /// A table.
  case table(TreeTable)
  /// A vector of scalars of `elementSize` bytes each.
  case scalarVector([UInt8], elementSize: Int)
  /// A vector of inline structs of `size` bytes each.
  case structVector([UInt8], size: Int, alignment: Int)
  /// A vector of strings.
  case stringVector([[UInt8]])
  /// A vector of tables.
  case tableVector([TreeTable])
}

extension FixedWidthInteger {
  /// Reads the little-endian value in `bytes` (sign-extended when shorter than the type).
  init(littleEndianBytes bytes: ArraySlice<UInt8>) {
    var value: Self = 0
    for (shift, byte) in bytes.enumerated() { value |= Self(truncatingIfNeeded: byte) << (8 * shift) }
    let bitCount = bytes.count * 8
    if Self.isSigned, bitCount < Self.bitWidth, let last = bytes.last, last & 0x80 != 0 {
      value |= ~0 << bitCount
    }
    self = value
  }

  /// The little-endian bytes of the value.
  var littleEndianBytes: [UInt8] { (0..<(Self.bitWidth / 8)).map { UInt8(truncatingIfNeeded: self >> ($0 * 8)) } }
}

/// Decodes and encodes model trees.
enum ModelTree {
  /// Decodes the `.tflite` bytes, which must already have loaded as a ``TFLiteModel`` (so every
  /// offset is known to be in range). Buffer data stored after the FlatBuffer becomes inline data.
  static func decode(_ bytes: [UInt8]) -> TreeTable {
    let layout = SchemaLayout.tflite
    var root = readTable(bytes, at: Int(UInt32(littleEndianBytes: bytes[0..<4])), layout: layout.rootTable)
    for (index, buffer) in root.tables("buffers").enumerated() where buffer.integer("offset") > 1 {
      let start = Int(buffer.integer("offset"))
      let data = Array(bytes[start..<(start + Int(buffer.integer("size")))])
      root.update("buffers", at: index) { buffer in
        buffer["offset"] = nil
        buffer["size"] = nil
        buffer["data"] = .scalarVector(data, elementSize: 1)
      }
    }
    return root
  }

  /// Writes `root` as `.tflite` bytes (file identifier `TFL3`), every object after the one
  /// that refers to it and buffer data 16-byte aligned.
  static func encode(_ root: TreeTable) -> [UInt8] {
    var writer = ForwardWriter()
    writer.bytes = [0, 0, 0, 0] + Array("TFL3".utf8)
    let position = writer.write(root)
    writer.patchOffset(at: 0, to: position)
    return writer.bytes
  }

  // MARK: Reading

  private static func u32(_ bytes: [UInt8], _ at: Int) -> Int { Int(UInt32(littleEndianBytes: bytes[at..<(at + 4)])) }

  private static func readTable(_ bytes: [UInt8], at table: Int, layout index: Int) -> TreeTable {
    let layout = SchemaLayout.tflite.tables[index]
    let vtable = table - Int(Int32(littleEndianBytes: bytes[table..<(table + 4)]))
    let vtableSize = Int(UInt16(littleEndianBytes: bytes[vtable..<(vtable + 2)]))
    func fieldPosition(_ id: Int) -> Int? {
      let entry = 4 + 2 * id
      guard entry + 2 <= vtableSize else { return nil }
      let offset = Int(UInt16(littleEndianBytes: bytes[(vtable + entry)..<(vtable + entry + 2)]))
      return offset == 0 ? nil : table + offset
    }
    var fields: [Int: TreeValue] = [:]
    for field in layout.fields {
      guard let position = fieldPosition(field.id) else { continue }
      let target = { position + u32(bytes, position) }
      switch field.kind {
      case .scalar(let size):
        fields[field.id] = .scalar(Array(bytes[position..<(position + size)]))
      case .unionType:
        fields[field.id] = .scalar([bytes[position]])
      case .structure(let size, let alignment):
        fields[field.id] = .structure(Array(bytes[position..<(position + size)]), alignment: alignment)
      case .string:
        let start = target()
        fields[field.id] = .string(Array(bytes[(start + 4)..<(start + 4 + u32(bytes, start))]))
      case .table(let child):
        fields[field.id] = .table(readTable(bytes, at: target(), layout: child))
      case .scalarVector(let elementSize):
        let start = target()
        let count = u32(bytes, start) * elementSize
        fields[field.id] = .scalarVector(Array(bytes[(start + 4)..<(start + 4 + count)]), elementSize: elementSize)
      case .structVector(let size, let alignment):
        let start = target()
        let count = u32(bytes, start) * size
        fields[field.id] = .structVector(
          Array(bytes[(start + 4)..<(start + 4 + count)]), size: size, alignment: alignment)
      case .stringVector:
        let start = target()
        fields[field.id] = .stringVector(
          (0..<u32(bytes, start)).map { element in
            let slot = start + 4 + 4 * element
            let string = slot + u32(bytes, slot)
            return Array(bytes[(string + 4)..<(string + 4 + u32(bytes, string))])
          })
      case .tableVector(let child):
        let start = target()
        fields[field.id] = .tableVector(
          (0..<u32(bytes, start)).map { element in
            let slot = start + 4 + 4 * element
            return readTable(bytes, at: slot + u32(bytes, slot), layout: child)
          })
      case .unionValue(let union, let typeFieldID):
        guard let typePosition = fieldPosition(typeFieldID), bytes[typePosition] > 0 else { continue }
        let members = SchemaLayout.tflite.unions[union].memberTables
        let code = Int(bytes[typePosition])
        guard code <= members.count else { continue }
        fields[field.id] = .table(readTable(bytes, at: target(), layout: members[code - 1]))
      }
    }
    return TreeTable(layout: index, fields: fields)
  }
}

/// Appends FlatBuffer objects front to back: a table's children follow it, so every `uoffset`
/// points forward as the format requires; vtables sit just before their table.
private struct ForwardWriter {
  var bytes: [UInt8] = []

  mutating func pad(to alignment: Int, after extra: Int = 0) {
    while (bytes.count + extra) % alignment != 0 { bytes.append(0) }
  }

  /// Stores at `slot` the forward offset to `target`.
  mutating func patchOffset(at slot: Int, to target: Int) {
    bytes.replaceSubrange(slot..<(slot + 4), with: UInt32(target - slot).littleEndianBytes)
  }

  /// Writes `table` and everything it refers to; returns the table's position.
  mutating func write(_ table: TreeTable) -> Int {
    let ids = table.fields.keys.sorted()
    let fieldCount = (ids.last ?? -1) + 1
    // Inline layout: the vtable offset, then the fields from the widest alignment down.
    func alignment(of value: TreeValue) -> Int {
      switch value {
      case .scalar(let bytes): return bytes.count
      case .structure(_, let alignment): return alignment
      default: return 4
      }
    }
    func inlineSize(of value: TreeValue) -> Int {
      switch value {
      case .scalar(let bytes), .structure(let bytes, _): return bytes.count
      default: return 4
      }
    }
    var fieldOffsets: [Int: Int] = [:]
    var inlineEnd = 4
    for id in ids.sorted(by: { alignment(of: table.fields[$0]!) > alignment(of: table.fields[$1]!) }) {
      let value = table.fields[id]!
      let align = alignment(of: value)
      inlineEnd = (inlineEnd + align - 1) / align * align
      fieldOffsets[id] = inlineEnd
      inlineEnd += inlineSize(of: value)
    }
    let vtableSize = 4 + 2 * fieldCount
    pad(to: 8, after: vtableSize)
    let vtable = bytes.count
    bytes += UInt16(vtableSize).littleEndianBytes + UInt16(inlineEnd).littleEndianBytes
    for id in 0..<fieldCount { bytes += UInt16(fieldOffsets[id] ?? 0).littleEndianBytes }
    let start = bytes.count
    bytes += [UInt8](repeating: 0, count: inlineEnd)
    bytes.replaceSubrange(start..<(start + 4), with: Int32(start - vtable).littleEndianBytes)
    var children: [(slot: Int, value: TreeValue)] = []
    for id in ids {
      let slot = start + fieldOffsets[id]!
      switch table.fields[id]! {
      case .scalar(let value), .structure(let value, _): bytes.replaceSubrange(slot..<(slot + value.count), with: value)
      case let value: children.append((slot, value))
      }
    }
    for (slot, value) in children { patchOffset(at: slot, to: write(value)) }
    return start
  }

  /// Writes the object `value` refers to (string, table or vector); returns its position.
  private mutating func write(_ value: TreeValue) -> Int {
    switch value {
    case .scalar, .structure:
      preconditionFailure("inline values have no object")
    case .table(let table):
      return write(table)
    case .string(let text):
      pad(to: 4)
      let start = bytes.count
      bytes += UInt32(text.count).littleEndianBytes + text + [0]
      return start
    case .scalarVector(let data, let elementSize):
      return writeVector(data, count: data.count / elementSize, alignment: max(elementSize, elementSize == 1 ? 16 : 4))
    case .structVector(let data, let size, let alignment):
      return writeVector(data, count: data.count / size, alignment: alignment)
    case .stringVector(let strings):
      return writeOffsetVector(strings.map { TreeValue.string($0) })
    case .tableVector(let tables):
      return writeOffsetVector(tables.map { TreeValue.table($0) })
    }
  }

  private mutating func writeVector(_ data: [UInt8], count: Int, alignment: Int) -> Int {
    pad(to: max(alignment, 4), after: 4)
    let start = bytes.count
    bytes += UInt32(count).littleEndianBytes + data
    return start
  }

  private mutating func writeOffsetVector(_ elements: [TreeValue]) -> Int {
    pad(to: 4)
    let start = bytes.count
    bytes += UInt32(elements.count).littleEndianBytes + [UInt8](repeating: 0, count: 4 * elements.count)
    for (index, element) in elements.enumerated() { patchOffset(at: start + 4 + 4 * index, to: write(element)) }
    return start
  }
}
