import TFLiteFormat

/// A JSON document under construction, written by ``rendered()`` without Foundation.
///
/// Object keys keep the order they were given, so output is stable. Numbers that are not finite
/// have no JSON spelling and are written as the strings `"NaN"`, `"Infinity"` and `"-Infinity"`.
indirect enum JSONValue: Sendable {
  /// `null`.
  case null
  /// `true` or `false`.
  case bool(Bool)
  /// An integer, written exactly.
  case integer(Int64)
  /// An unsigned integer, written exactly.
  case unsigned(UInt64)
  /// A floating-point number, written with the fewest digits that read back to the same value.
  case number(Double)
  /// A 32-bit float, written with the fewest digits that read back to the same `Float`.
  case float(Float)
  /// A string, escaped as JSON requires.
  case string(String)
  /// An array.
  case array([JSONValue])
  /// An object whose keys keep their order.
  case object([(String, JSONValue)])
  /// JSON text rendered elsewhere (a FlexBuffer's description), inserted as it is.
  case raw(String)

  /// A JSON string, or `null` when `text` is nil.
  static func string(_ text: String?) -> JSONValue { text.map { .string($0) } ?? .null }

  /// An integer of any width.
  static func int(_ value: some BinaryInteger) -> JSONValue {
    if let signed = Int64(exactly: value) { return .integer(signed) }
    return .unsigned(UInt64(truncatingIfNeeded: value))
  }

  /// An array of integers.
  static func ints<T: BinaryInteger>(_ values: [T]) -> JSONValue { .array(values.map { .int($0) }) }

  /// The document as indented text ending in a newline; arrays holding only scalars stay on one line.
  func rendered() -> String {
    var text = ""
    write(to: &text, indent: "")
    return text + "\n"
  }

  /// The value on one line followed by a newline (a JSON Lines record).
  func renderedOnOneLine() -> String {
    var text = ""
    write(to: &text, indent: nil)
    return text + "\n"
  }

  private var isScalar: Bool {
    switch self {
    case .array(let items): return items.isEmpty
    case .object(let members): return members.isEmpty
    default: return true
    }
  }

  /// Writes the value; a nil `indent` writes it on one line.
  private func write(to text: inout String, indent: String?) {
    switch self {
    case .null: text += "null"
    case .bool(let value): text += value ? "true" : "false"
    case .integer(let value): text += String(value)
    case .unsigned(let value): text += String(value)
    case .number(let value): text += Self.spell(value, shortest: "\(value)")
    case .float(let value): text += Self.spell(Double(value), shortest: "\(value)")
    case .string(let value): JSONText.appendQuoted(value, to: &text)
    case .raw(let json): text += json
    case .array(let items):
      guard let indent, !items.allSatisfy(\.isScalar) else {
        text += "["
        for (index, item) in items.enumerated() {
          if index > 0 { text += ", " }
          item.write(to: &text, indent: indent)
        }
        text += "]"
        return
      }
      let inner = indent + "  "
      text += "[\n"
      for (index, item) in items.enumerated() {
        text += inner
        item.write(to: &text, indent: inner)
        text += index + 1 < items.count ? ",\n" : "\n"
      }
      text += indent + "]"
    case .object(let members):
      guard !members.isEmpty else {
        text += "{}"
        return
      }
      let inner = indent.map { $0 + "  " }
      text += inner == nil ? "{" : "{\n"
      for (index, (key, value)) in members.enumerated() {
        text += inner ?? ""
        JSONText.appendQuoted(key, to: &text)
        text += ": "
        value.write(to: &text, indent: inner)
        if index + 1 < members.count { text += inner == nil ? ", " : ",\n" } else if inner != nil { text += "\n" }
      }
      text += indent.map { $0 + "}" } ?? "}"
    }
  }

  /// A finite number in JSON syntax (`shortest` is Swift's round-trip spelling; integral values lose
  /// their `.0`), or a string for NaN and infinities.
  private static func spell(_ value: Double, shortest: String) -> String {
    if let name = JSONText.nonFiniteName(value) { return name }
    if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
    return shortest
  }
}
