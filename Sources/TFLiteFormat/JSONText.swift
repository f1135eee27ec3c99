/// JSON text pieces shared by the writers that build JSON without Foundation (the FlexBuffer
/// descriptions here and the command line's `JSONValue`).
package enum JSONText {
  /// Appends `string` as a quoted JSON string: `"` and `\` escaped, line feed, carriage return and
  /// tab as `\n`, `\r` and `\t`, the other control characters as `\u00XX`.
  package static func appendQuoted(_ string: String, to text: inout String) {
    text += "\""
    for scalar in string.unicodeScalars {
      switch scalar {
      case "\"": text += "\\\""
      case "\\": text += "\\\\"
      case "\n": text += "\\n"
      case "\r": text += "\\r"
      case "\t": text += "\\t"
      case _ where scalar.value < 0x20:
        let hex = String(scalar.value, radix: 16)
        text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
      default: text.unicodeScalars.append(scalar)
      }
    }
    text += "\""
  }

  /// The quoted string written for a number JSON cannot spell (`"NaN"`, `"Infinity"`,
  /// `"-Infinity"`); nil for a finite number.
  package static func nonFiniteName(_ value: Double) -> String? {
    if value.isNaN { return "\"NaN\"" }
    if value.isInfinite { return value > 0 ? "\"Infinity\"" : "\"-Infinity\"" }
    return nil
  }
}
