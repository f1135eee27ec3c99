/// JSON text pieces shared by the writers that build JSON without Foundation (the FlexBuffer
/// descriptions here and the command line's `JSONValue`).
package enum JSONText {
  /// Appends `string` as a quoted JSON string: `"` and `\` escaped, line feed, carriage return and
  /// tab as `\n`, `\r` and `\t`, the other control characters as `\u00XX`.
  package static func appendQuoted(_ string: String, to text: inout String) {
    text += "\""
    text += string.replacingScalars { scalar in
      switch scalar {
      case "\"": return "\\\""
      case "\\": return "\\\\"
      case "\n": return "\\n"
      case "\r": return "\\r"
      case "\t": return "\\t"
      case _ where scalar.value < 0x20:
        let hex = String(scalar.value, radix: 16)
        return "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
      default: return nil
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

extension String {
  /// This text with each Unicode scalar for which `replacement` gives a string replaced by it
  /// (the escaping of the JSON, markup and DOT writers).
  package func replacingScalars(_ replacement: (Unicode.Scalar) -> String?) -> String {
    var replaced = ""
    replaced.reserveCapacity(utf8.count)
    for scalar in unicodeScalars {
      if let text = replacement(scalar) { replaced += text } else { replaced.unicodeScalars.append(scalar) }
    }
    return replaced
  }
}
