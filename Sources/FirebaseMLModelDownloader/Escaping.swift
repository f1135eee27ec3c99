/// Text from servers and files (model names in indexes, JSON error messages, headers) made safe
/// for terminals and logs: control characters (C0, DEL, C1), and the Unicode line and paragraph
/// separators and bidirectional controls become visible escapes (`\x1b`, `\n`, `\u{202e}`), and a
/// backslash is doubled, so a hostile server can neither move the cursor, clear the screen, add
/// lines nor reorder text.
func displayable(_ text: String) -> String {
  var result = ""
  result.unicodeScalars.reserveCapacity(text.unicodeScalars.count)
  for scalar in text.unicodeScalars {
    switch scalar.value {
    case 0x0A: result += "\\n"
    case 0x0D: result += "\\r"
    case 0x09: result += "\\t"
    case 0x5C: result += "\\\\"
    case 0x00..<0x20, 0x7F..<0xA0: result += "\\x" + hexDigits(scalar.value, width: 2)
    case 0x2028, 0x2029, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069:
      result += "\\u{" + hexDigits(scalar.value, width: 4) + "}"
    default: result.unicodeScalars.append(scalar)
    }
  }
  return result
}

/// `value` in lowercase hexadecimal, zero-padded to `width` digits.
private func hexDigits(_ value: UInt32, width: Int) -> String {
  let digits = String(value, radix: 16)
  return String(repeating: "0", count: max(0, width - digits.count)) + digits
}
