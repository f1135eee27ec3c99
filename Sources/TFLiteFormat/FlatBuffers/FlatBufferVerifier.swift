/// Limits the FlatBuffer verifier enforces while it checks a model.
public struct VerificationOptions: Hashable, Sendable {
  /// How deeply tables may nest inside each other (the root is depth 1).
  public var maxNestingDepth: Int
  /// How many table visits verification may make; nil means one per 4 bytes of input, at least 4096.
  ///
  /// Each distinct table takes at least 4 bytes, so only files whose offsets share sub-tables
  /// (a "zip bomb" shape that makes decoding explode) can exceed the default.
  public var maxTableCount: Int?
  /// How many bytes of tables, vectors and strings verification may visit, counting shared
  /// objects once per reference; nil means twice the input size plus 1 MiB.
  public var maxApparentSize: Int?
  /// When true, a union type code the schema does not know decodes as `.unknown(type:)` (and its
  /// table is skipped) instead of failing verification.
  public var allowsUnknownUnionTypes: Bool

  /// Creates options; the defaults suit any file a TFLite converter writes.
  public init(
    maxNestingDepth: Int = 64, maxTableCount: Int? = nil, maxApparentSize: Int? = nil,
    allowsUnknownUnionTypes: Bool = false
  ) {
    self.maxNestingDepth = maxNestingDepth
    self.maxTableCount = maxTableCount
    self.maxApparentSize = maxApparentSize
    self.allowsUnknownUnionTypes = allowsUnknownUnionTypes
  }
}

/// Checks, once, that every offset, length and vtable reachable from a FlatBuffer's root stays
/// inside the buffer and matches the schema, so that ``FlatBufferTable`` may read without checks.
///
/// All position arithmetic reports overflow instead of trapping. Loads are unaligned, so the
/// verifier does not require FlatBuffers' alignment. Offsets (`uoffset`) point strictly forward,
/// which rules out cycles; an offset of zero, which would point at itself, is rejected.
struct FlatBufferVerifier {
  /// The bytes being checked.
  let bytes: UnsafeRawBufferPointer
  /// The schema the bytes must follow.
  let schema: SchemaLayout
  private let options: VerificationOptions
  private let maxTableCount: Int
  private let maxApparentSize: Int
  private var tableCount = 0
  private var apparentSize = 0
  private var depth = 0

  /// Prepares to verify `bytes` against `schema`.
  init(bytes: UnsafeRawBufferPointer, schema: SchemaLayout, options: VerificationOptions) {
    self.bytes = bytes
    self.schema = schema
    self.options = options
    maxTableCount = options.maxTableCount ?? max(4096, bytes.count / 4)
    let doubled = bytes.count.multipliedReportingOverflow(by: 2)
    let budget = doubled.partialValue.addingReportingOverflow(1 << 20)
    maxApparentSize = options.maxApparentSize ?? (doubled.overflow || budget.overflow ? Int.max : budget.partialValue)
  }

  /// Verifies the whole buffer and returns a view of its root table.
  ///
  /// The buffer starts with the root offset, optionally followed by a four-character file
  /// identifier. When the schema declares one (`TFL3`), bytes 4–7 must either equal it, or not look
  /// like an identifier at all (four ASCII letters or digits), since TFLite accepts files written
  /// without one.
  mutating func verifyRoot() throws -> FlatBufferTable {
    guard bytes.count >= 8 else {
      throw ModelFormatError(
        message: bytes.isEmpty ? "the file is empty" : "the file is too short (\(bytes.count) bytes) to be a FlatBuffer",
        offset: 0)
    }
    if let expected = schema.fileIdentifier {
      let found = (4..<8).map { UInt8.load(from: bytes, at: $0) }
      let isIdentifierLike = found.allSatisfy { (48...57).contains($0) || (65...90).contains($0) || (97...122).contains($0) }
      if isIdentifierLike && found != Array(expected.utf8) {
        throw ModelFormatError(
          message: "file identifier '\(String(decoding: found, as: UTF8.self))' is not '\(expected)'; this is not a TFLite model",
          offset: 4)
      }
    }
    let root = try target(ofOffsetAt: 0, what: "root table offset")
    try verifyTable(at: root, layout: schema.rootTable)
    return FlatBufferTable(bytes: bytes, position: root)
  }

  /// Throws when `count` bytes at `position` do not lie inside the buffer.
  private func requireRange(_ position: Int, _ count: Int, _ what: @autoclosure () -> String) throws {
    let end = position.addingReportingOverflow(count)
    guard position >= 0, count >= 0, !end.overflow, end.partialValue <= bytes.count else {
      throw ModelFormatError(
        message: "\(what()) (\(count) bytes) runs past the end of the \(bytes.count)-byte buffer", offset: position)
    }
  }

  /// Follows the unsigned offset stored at `position` and returns where it points.
  private func target(ofOffsetAt position: Int, what: @autoclosure () -> String) throws -> Int {
    try requireRange(position, 4, what())
    let offset = try loadUInt32(at: position, what())
    guard offset != 0 else { throw ModelFormatError(message: "\(what()) is 0: it points back at itself", offset: position) }
    let target = position.addingReportingOverflow(offset)
    guard !target.overflow, target.partialValue < bytes.count else {
      throw ModelFormatError(
        message: "\(what()) \(offset) points outside the \(bytes.count)-byte buffer", offset: position)
    }
    return target.partialValue
  }

  /// Counts `size` more bytes against the apparent-size budget.
  private mutating func addApparentSize(_ size: Int, at position: Int) throws {
    let total = apparentSize.addingReportingOverflow(size)
    guard !total.overflow, total.partialValue <= maxApparentSize else {
      throw ModelFormatError(
        message: "the objects reachable from the root add up to more than \(maxApparentSize) bytes "
          + "(offsets share data too often; refusing a possible decompression bomb)",
        offset: position)
    }
    apparentSize = total.partialValue
  }

  /// Verifies the table at `position`, which must follow `schema.tables[layoutIndex]`.
  private mutating func verifyTable(at position: Int, layout layoutIndex: Int) throws {
    let layout = schema.tables[layoutIndex]
    depth += 1
    defer { depth -= 1 }
    guard depth <= options.maxNestingDepth else {
      throw ModelFormatError(
        message: "\(layout.name): tables nest more than \(options.maxNestingDepth) levels deep", offset: position)
    }
    tableCount += 1
    guard tableCount <= maxTableCount else {
      throw ModelFormatError(
        message: "\(layout.name): more than \(maxTableCount) tables visited (shared sub-tables; refusing a possible decompression bomb)",
        offset: position)
    }
    try requireRange(position, 4, "\(layout.name) table")
    let vtableDistance = Int(Int32.load(from: bytes, at: position))
    let vtable = position.subtractingReportingOverflow(vtableDistance)
    guard !vtable.overflow, vtable.partialValue >= 0, vtable.partialValue <= bytes.count - 4 else {
      throw ModelFormatError(
        message: "\(layout.name): vtable offset \(vtableDistance) points outside the buffer", offset: position)
    }
    let vtableStart = vtable.partialValue
    let vtableSize = Int(UInt16.load(from: bytes, at: vtableStart))
    let tableSize = Int(UInt16.load(from: bytes, at: vtableStart + 2))
    guard vtableSize >= 4, vtableSize % 2 == 0 else {
      throw ModelFormatError(
        message: "\(layout.name): vtable size \(vtableSize) must be even and at least 4", offset: vtableStart)
    }
    try requireRange(vtableStart, vtableSize, "\(layout.name) vtable")
    guard tableSize >= 4 else {
      throw ModelFormatError(message: "\(layout.name): table size \(tableSize) is below 4", offset: vtableStart + 2)
    }
    try requireRange(position, tableSize, "\(layout.name) table")
    try addApparentSize(tableSize, at: position)

    for field in layout.fields {
      let entry = 4 + 2 * field.id
      guard entry + 2 <= vtableSize else { continue }
      let fieldOffset = Int(UInt16.load(from: bytes, at: vtableStart + entry))
      guard fieldOffset != 0 else { continue }
      guard fieldOffset >= 4, fieldOffset + field.kind.inlineSize <= tableSize else {
        throw ModelFormatError(
          message: "\(layout.name).\(field.name): field at table offset \(fieldOffset) (\(field.kind.inlineSize) bytes) "
            + "lies outside the \(tableSize)-byte table",
          offset: vtableStart + entry)
      }
      try verifyField(
        field, named: "\(layout.name).\(field.name)", at: position + fieldOffset, table: (position, vtableStart, vtableSize))
    }
  }

  /// Verifies what the field at `position` refers to.
  private mutating func verifyField(
    _ field: FieldLayout, named name: @autoclosure () -> String, at position: Int,
    table: (position: Int, vtable: Int, vtableSize: Int)
  ) throws {
    switch field.kind {
    case .scalar, .structure:
      return
    case .unionType(let unionIndex):
      let type = Int(UInt8.load(from: bytes, at: position))
      let union = schema.unions[unionIndex]
      guard options.allowsUnknownUnionTypes || type <= union.memberTables.count else {
        throw ModelFormatError(
          message: "\(name()): union \(union.name) has no member with type code \(type) (it knows 1...\(union.memberTables.count))",
          offset: position)
      }
    case .string:
      try verifyString(at: try target(ofOffsetAt: position, what: "\(name()) offset"), named: name())
    case .table(let layout):
      try verifyTable(at: try target(ofOffsetAt: position, what: "\(name()) offset"), layout: layout)
    case .scalarVector(let elementSize), .structVector(let elementSize, _):
      _ = try verifyVector(at: position, elementSize: elementSize, named: name())
    case .stringVector:
      let (start, count) = try verifyVector(at: position, elementSize: 4, named: name())
      for index in 0..<count {
        let element = start + 4 * index
        try verifyString(at: try target(ofOffsetAt: element, what: "\(name())[\(index)] offset"), named: "\(name())[\(index)]")
      }
    case .tableVector(let layout):
      let (start, count) = try verifyVector(at: position, elementSize: 4, named: name())
      for index in 0..<count {
        try verifyTable(at: try target(ofOffsetAt: start + 4 * index, what: "\(name())[\(index)] offset"), layout: layout)
      }
    case .unionValue(let unionIndex, let typeFieldID):
      let typeEntry = 4 + 2 * typeFieldID
      var type = 0
      if typeEntry + 2 <= table.vtableSize {
        let typeOffset = Int(UInt16.load(from: bytes, at: table.vtable + typeEntry))
        if typeOffset != 0 { type = Int(UInt8.load(from: bytes, at: table.position + typeOffset)) }
      }
      let members = schema.unions[unionIndex].memberTables
      guard type >= 1, type <= members.count else { return }
      try verifyTable(at: try target(ofOffsetAt: position, what: "\(name()) offset"), layout: members[type - 1])
    }
  }

  /// Reads the 32-bit length or offset at `position` as an `Int`, even where `Int` has 32 bits.
  private func loadUInt32(at position: Int, _ what: @autoclosure () -> String) throws -> Int {
    let value = UInt32.load(from: bytes, at: position)
    guard let result = Int(exactly: value) else {
      throw ModelFormatError(message: "\(what()) \(value) does not fit this platform's integers", offset: position)
    }
    return result
  }

  /// Verifies the vector whose offset is stored at `position` and returns its elements' start and count.
  private mutating func verifyVector(at position: Int, elementSize: Int, named name: @autoclosure () -> String) throws -> (start: Int, count: Int) {
    let header = try target(ofOffsetAt: position, what: "\(name()) offset")
    try requireRange(header, 4, "\(name()) vector length")
    let count = try loadUInt32(at: header, "\(name()) vector length")
    let size = count.multipliedReportingOverflow(by: elementSize)
    guard !size.overflow else {
      throw ModelFormatError(message: "\(name()): vector of \(count) elements is too large", offset: header)
    }
    try requireRange(header + 4, size.partialValue, "\(name()): vector of \(count) elements")
    try addApparentSize(4 + size.partialValue, at: header)
    return (header + 4, count)
  }

  /// Verifies the string whose length prefix is at `position`: in bounds and NUL-terminated.
  private mutating func verifyString(at position: Int, named name: @autoclosure () -> String) throws {
    try requireRange(position, 4, "\(name()) string length")
    let count = try loadUInt32(at: position, "\(name()) string length")
    try requireRange(position + 4, count + 1, "\(name()): string of \(count) bytes plus its terminator")
    guard UInt8.load(from: bytes, at: position + 4 + count) == 0 else {
      throw ModelFormatError(message: "\(name()): string of \(count) bytes is not NUL-terminated", offset: position + 4 + count)
    }
    try addApparentSize(count + 5, at: position)
  }
}
