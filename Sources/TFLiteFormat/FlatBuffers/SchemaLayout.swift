/// What the verifier needs to know about a schema: the fields of every table and the members of
/// every union, generated from `schema.fbs` by `Scripts/generate_schema.py`.
struct SchemaLayout: Sendable {
  /// Every table of the schema; fields refer to other tables by their index here.
  var tables: [TableLayout]
  /// Every union of the schema; fields refer to unions by their index here.
  var unions: [UnionLayout]
  /// Index in ``tables`` of the root table.
  var rootTable: Int
  /// The four-character file identifier the schema declares, if any.
  var fileIdentifier: String?
}

/// The verifiable fields of one table, deprecated ones included.
struct TableLayout: Sendable {
  /// The schema's name for the table, used in error messages.
  var name: String
  /// The fields, in no particular order.
  var fields: [FieldLayout]
}

/// One field of a table.
struct FieldLayout: Sendable {
  /// The schema's name for the field, used in error messages.
  var name: String
  /// The field's id: its vtable entry is at `4 + 2 * id`.
  var id: Int
  /// What the field holds.
  var kind: FieldKind
}

/// How a field is stored, and so how the verifier checks it.
enum FieldKind: Sendable {
  /// An inline scalar or enum of `size` bytes.
  case scalar(size: Int)
  /// An inline struct.
  case structure(size: Int, alignment: Int)
  /// An offset to a string.
  case string
  /// An offset to a table (index into ``SchemaLayout/tables``).
  case table(Int)
  /// An offset to a vector of scalars or enums of `elementSize` bytes each.
  case scalarVector(elementSize: Int)
  /// An offset to a vector of inline structs.
  case structVector(size: Int, alignment: Int)
  /// An offset to a vector of offsets to strings.
  case stringVector
  /// An offset to a vector of offsets to tables (index into ``SchemaLayout/tables``).
  case tableVector(Int)
  /// The one-byte type code of a union (index into ``SchemaLayout/unions``).
  case unionType(union: Int)
  /// The offset to a union's table; its type code is field `typeFieldID` of the same table.
  case unionValue(union: Int, typeFieldID: Int)

  /// Bytes the field occupies inside its table.
  var inlineSize: Int {
    switch self {
    case .scalar(let size), .structure(let size, _): return size
    case .unionType: return 1
    case .string, .table, .scalarVector, .structVector, .stringVector, .tableVector, .unionValue: return 4
    }
  }
}

/// The tables a union may hold.
struct UnionLayout: Sendable {
  /// The schema's name for the union, used in error messages.
  var name: String
  /// Table index (into ``SchemaLayout/tables``) of type codes 1, 2, 3…; type code 0 means none.
  var memberTables: [Int]
}
