extension FlexBufferReference: CustomStringConvertible {
  /// The value as compact JSON, such as `{"max_detections": 10, "use_regular_nms": false}`.
  /// Map entries keep their stored (sorted) key order, so the text is stable. Blobs become arrays
  /// of byte values; 16- and 32-bit floats print their shortest exact form at that precision;
  /// non-finite floats become the strings `"NaN"`, `"Infinity"` and `"-Infinity"`.
  public var description: String {
    var text = ""
    appendJSON(to: &text)
    return text
  }

  /// Appends the JSON text of this value to `text`.
  private func appendJSON(to text: inout String) {
    switch type {
    case .null:
      text += "null"
    case .bool:
      text += asBool == true ? "true" : "false"
    case .int, .indirectInt:
      text += String(asInt64 ?? 0)
    case .uint, .indirectUInt:
      text += String(asUInt64 ?? 0)
    case .float, .indirectFloat:
      text += Self.jsonNumber(asDouble ?? 0, width: type == .float ? slotWidth : targetWidth)
    case .key, .string:
      Self.appendJSONString(asString ?? "", to: &text)
    case .blob:
      Self.appendList(asBlob ?? [], to: &text) { byte, text in text += String(byte) }
    case .map:
      Self.appendList(asMap.map(Array.init) ?? [], brackets: ("{", "}"), to: &text) { entry, text in
        Self.appendJSONString(entry.key, to: &text)
        text += ": "
        entry.value.appendJSON(to: &text)
      }
    default:
      Self.appendList(asVector.map(Array.init) ?? [], to: &text) { element, text in element.appendJSON(to: &text) }
    }
  }

  /// Appends the elements between `brackets`, separated by `, `, rendering each with `appendElement`.
  private static func appendList<Element>(
    _ elements: [Element], brackets: (open: String, close: String) = ("[", "]"), to text: inout String,
    appendElement: (Element, inout String) -> Void
  ) {
    text += brackets.open
    for (index, element) in elements.enumerated() {
      if index > 0 { text += ", " }
      appendElement(element, &text)
    }
    text += brackets.close
  }

  /// A float stored in `width` bytes as a JSON number (or a quoted name when not finite).
  private static func jsonNumber(_ value: Double, width: Int) -> String {
    if value.isNaN { return "\"NaN\"" }
    if value.isInfinite { return value > 0 ? "\"Infinity\"" : "\"-Infinity\"" }
    return width < 8 ? Float(value).description : value.description
  }

  /// Appends `string` as a quoted JSON string with the required escapes.
  private static func appendJSONString(_ string: String, to text: inout String) {
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
      default:
        text.unicodeScalars.append(scalar)
      }
    }
    text += "\""
  }
}
