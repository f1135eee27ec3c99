/// The fields of an `.npy` header: the Python dictionary literal
/// `{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }`.
struct NumPyHeader: Equatable {
  /// The most dimensions accepted (NumPy's own limit).
  static let maximumDimensions = 64

  var elementType: NumPyElementType
  var shape: [Int]

  /// Parses the header text `bytes`; `baseOffset` is where it starts in the file, for errors.
  init(parsing bytes: ArraySlice<UInt8>, baseOffset: Int) throws {
    var parser = PythonLiteralParser(bytes: bytes, baseOffset: baseOffset)
    let fields = try parser.parseHeaderDictionary()
    var descriptor: PythonLiteral?
    var fortranOrder: PythonLiteral?
    var shapeLiteral: PythonLiteral?
    for (key, value) in fields {
      switch key {
      case "descr" where descriptor == nil: descriptor = value
      case "fortran_order" where fortranOrder == nil: fortranOrder = value
      case "shape" where shapeLiteral == nil: shapeLiteral = value
      case "descr", "fortran_order", "shape": throw NumPyError(message: "header repeats the key '\(key)'", offset: baseOffset)
      default: throw NumPyError(message: "header has the unexpected key '\(key)'", offset: baseOffset)
      }
    }
    guard let descriptor, let fortranOrder, let shapeLiteral else {
      throw NumPyError(message: "header must have the keys 'descr', 'fortran_order' and 'shape'", offset: baseOffset)
    }
    switch descriptor {
    case .string(let text): elementType = try NumPyElementType(descriptor: text)
    case .sequence: throw NumPyError(message: "structured dtypes (a list in 'descr') are not supported", offset: baseOffset)
    default: throw NumPyError(message: "'descr' must be a string", offset: baseOffset)
    }
    guard case .sequence(let dimensions, isTuple: true) = shapeLiteral else {
      throw NumPyError(message: "'shape' must be a tuple of integers", offset: baseOffset)
    }
    shape = try dimensions.map { dimension in
      guard case .integer(let size) = dimension, size >= 0 else {
        throw NumPyError(message: "'shape' must hold non-negative integers", offset: baseOffset)
      }
      return size
    }
    guard shape.count <= Self.maximumDimensions else {
      throw NumPyError(message: "\(shape.count) dimensions exceed the limit of \(Self.maximumDimensions)", offset: baseOffset)
    }
    guard case .bool(let isFortranOrder) = fortranOrder else {
      throw NumPyError(message: "'fortran_order' must be True or False", offset: baseOffset)
    }
    // With at most one dimension both orders lay the data out the same way.
    guard !isFortranOrder || shape.count <= 1 else {
      throw NumPyError(
        message: "Fortran-order (column-major) arrays are not supported; save with numpy.ascontiguousarray", offset: baseOffset)
    }
  }

  /// A header for `elementType` and `shape`.
  init(elementType: NumPyElementType, shape: [Int]) {
    self.elementType = elementType
    self.shape = shape
  }

  /// The dictionary text NumPy writes, including the spaces it leaves so the first dimension can
  /// grow to 21 digits in place (the caller adds alignment padding and the newline).
  var dictionaryText: String {
    let shapeText: String
    switch shape.count {
    case 0: shapeText = "()"
    case 1: shapeText = "(\(shape[0]),)"
    default: shapeText = "(" + shape.map(String.init).joined(separator: ", ") + ")"
    }
    let growthSpaces = shape.first.map { max(0, 21 - String($0).count) } ?? 0
    return "{'descr': '\(elementType.descriptor)', 'fortran_order': False, 'shape': \(shapeText), }"
      + String(repeating: " ", count: growthSpaces)
  }
}

/// The subset of Python literals that `.npy` headers use.
enum PythonLiteral: Equatable {
  case string(String)
  case bool(Bool)
  case none
  case integer(Int)
  case sequence([PythonLiteral], isTuple: Bool)
}

/// A strict parser for an `.npy` header: one dictionary with string keys, whose values are
/// strings, `True`/`False`/`None`, integers (an `L` suffix from Python 2 allowed), and tuples or
/// lists of those; only whitespace may follow it.
struct PythonLiteralParser {
  /// The deepest nesting of tuples and lists accepted.
  private static let maximumNesting = 8

  private let bytes: ArraySlice<UInt8>
  private let baseOffset: Int
  private var position: Int

  init(bytes: ArraySlice<UInt8>, baseOffset: Int) {
    self.bytes = bytes
    self.baseOffset = baseOffset
    position = bytes.startIndex
  }

  /// Parses the whole header: a dictionary followed only by whitespace.
  mutating func parseHeaderDictionary() throws -> [(String, PythonLiteral)] {
    skipWhitespace()
    try expect(UInt8(ascii: "{"), "the header must start with '{'")
    var entries: [(String, PythonLiteral)] = []
    while true {
      skipWhitespace()
      if peek == UInt8(ascii: "}") { break }
      guard case .string(let key) = try parseValue(depth: 0) else { throw error("dictionary keys must be strings") }
      skipWhitespace()
      try expect(UInt8(ascii: ":"), "expected ':' after a dictionary key")
      entries.append((key, try parseValue(depth: 0)))
      skipWhitespace()
      if peek == UInt8(ascii: ",") { position += 1 } else if peek != UInt8(ascii: "}") {
        throw error("expected ',' or '}' in the header dictionary")
      }
    }
    position += 1
    skipWhitespace()
    guard position == bytes.endIndex else { throw error("unexpected text after the header dictionary") }
    return entries
  }

  private mutating func parseValue(depth: Int) throws -> PythonLiteral {
    skipWhitespace()
    guard let byte = peek else { throw error("the header ends in the middle of a value") }
    switch byte {
    case UInt8(ascii: "'"), UInt8(ascii: "\""): return .string(try parseString(quote: byte))
    case UInt8(ascii: "("): return try parseSequence(closing: UInt8(ascii: ")"), depth: depth)
    case UInt8(ascii: "["): return try parseSequence(closing: UInt8(ascii: "]"), depth: depth)
    case UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .integer(try parseInteger())
    default:
      for (word, value) in [("True", PythonLiteral.bool(true)), ("False", .bool(false)), ("None", .none)]
      where bytes[position...].starts(with: word.utf8) {
        position += word.utf8.count
        return value
      }
      throw error("unexpected character '\(Unicode.Scalar(byte))' in the header")
    }
  }

  private mutating func parseString(quote: UInt8) throws -> String {
    position += 1
    let start = position
    while let byte = peek, byte != quote {
      guard byte != UInt8(ascii: "\\") else { throw error("escape sequences are not supported in header strings") }
      position += 1
    }
    guard peek == quote else { throw error("unterminated string in the header") }
    position += 1
    return String(decoding: bytes[start..<(position - 1)], as: UTF8.self)
  }

  private mutating func parseInteger() throws -> Int {
    let start = position
    var isNegative = false
    if let sign = peek, sign == UInt8(ascii: "-") || sign == UInt8(ascii: "+") {
      isNegative = sign == UInt8(ascii: "-")
      position += 1
    }
    var value = 0
    var digitCount = 0
    while let byte = peek, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) {
      let (scaled, overflowA) = value.multipliedReportingOverflow(by: 10)
      let (sum, overflowB) = scaled.addingReportingOverflow(Int(byte - UInt8(ascii: "0")))
      guard !overflowA, !overflowB else {
        position = start
        throw error("integer too large in the header")
      }
      value = sum
      digitCount += 1
      position += 1
    }
    guard digitCount > 0 else { throw error("expected digits in the header") }
    if let suffix = peek, suffix == UInt8(ascii: "L") || suffix == UInt8(ascii: "l") { position += 1 }
    return isNegative ? -value : value
  }

  private mutating func parseSequence(closing: UInt8, depth: Int) throws -> PythonLiteral {
    guard depth < Self.maximumNesting else { throw error("tuples or lists nested too deeply in the header") }
    position += 1
    var items: [PythonLiteral] = []
    var commaCount = 0
    while true {
      skipWhitespace()
      if peek == closing { break }
      items.append(try parseValue(depth: depth + 1))
      skipWhitespace()
      if peek == UInt8(ascii: ",") {
        position += 1
        commaCount += 1
      } else if peek != closing {
        throw error("expected ',' or '\(Unicode.Scalar(closing))' in the header")
      }
    }
    position += 1
    let isTuple = closing == UInt8(ascii: ")")
    // As in Python, `(5)` is the number 5 in parentheses; only `(5,)` is a one-element tuple.
    if isTuple, items.count == 1, commaCount == 0 { return items[0] }
    return .sequence(items, isTuple: isTuple)
  }

  private var peek: UInt8? { position < bytes.endIndex ? bytes[position] : nil }

  private mutating func skipWhitespace() {
    while let byte = peek, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { position += 1 }
  }

  private mutating func expect(_ byte: UInt8, _ message: String) throws {
    guard peek == byte else { throw error(message) }
    position += 1
  }

  private func error(_ message: String) -> NumPyError {
    NumPyError(message: message, offset: baseOffset + (position - bytes.startIndex))
  }
}
