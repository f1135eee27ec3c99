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
      JSONText.appendQuoted(asString ?? "", to: &text)
    case .blob:
      Self.appendList(asBlob ?? [], to: &text) { byte, text in text += String(byte) }
    case .map:
      Self.appendList(asMap.map(Array.init) ?? [], brackets: ("{", "}"), to: &text) { entry, text in
        JSONText.appendQuoted(entry.key, to: &text)
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
    if let name = JSONText.nonFiniteName(value) { return name }
    return width < 8 ? Float(value).description : value.description
  }
}
