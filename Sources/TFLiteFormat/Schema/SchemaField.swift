/// One field of a decoded options table, under its schema name, for display (`tflite inspect`).
public struct SchemaField: Hashable, Sendable {
  /// The schema's field name (`stride_w`).
  public var name: String
  /// The field's value.
  public var value: SchemaValue
  /// True when the value equals the schema default (so a file may have left the field out).
  public var isDefault: Bool

  /// Creates a field description.
  public init(name: String, value: SchemaValue, isDefault: Bool) {
    self.name = name
    self.value = value
    self.isDefault = isDefault
  }
}

/// The value of a ``SchemaField``.
public indirect enum SchemaValue: Hashable, Sendable {
  /// A `bool` field.
  case bool(Bool)
  /// A signed integer field of any width.
  case integer(Int64)
  /// An unsigned integer field of any width.
  case unsigned(UInt64)
  /// A `float` or `double` field.
  case float(Double)
  /// An enum field: its schema name (`RELU6`, or `UNKNOWN(n)`) and stored value.
  case enumeration(name: String, rawValue: Int64)
  /// A string field; nil when absent.
  case string(String?)
  /// A byte vector left in the file; nil when absent.
  case bytes(ByteRange?)
  /// A vector of values.
  case vector([SchemaValue])
}
