// Conversions between ML Kit's input and output values and tensor bytes. Inputs: `Data` is taken
// as the elements' raw bytes (its count must be the declared byte count); nested arrays must have
// exactly the declared dimensions at every level, and each number must be representable in the
// declared type (integers: finite, integral and in range; float32: any number). Outputs: nested
// arrays of `NSNumber` made with the tensor's own element type.
import Foundation
import TensorFlowLite

/// Turns one input value into the bytes of a tensor of a declared format.
struct InputEncoder {
  /// The declared format.
  let format: TensorFormat
  /// Names the input in errors ("input 0").
  let what: String

  /// The tensor bytes of `value` (`Data` or nested arrays of numbers).
  func encode(_ value: Any) throws -> Data {
    if let data = value as? Data {
      guard data.count == format.byteCount else {
        throw MachineLearningError.invalidArgument(
          "\(what) has \(data.count) bytes, but its declared format \(format.description) needs \(format.byteCount).")
      }
      return data
    }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(format.byteCount)
    var path: [Int] = []
    try append(value, level: 0, path: &path, to: &bytes)
    return Data(bytes)
  }

  /// Appends the elements of `value`, the sub-array at `path` (depth `level`), to `bytes`.
  private func append(_ value: Any, level: Int, path: inout [Int], to bytes: inout [UInt8]) throws {
    let expected = format.dimensions[level]
    let isLeafLevel = level == format.dimensions.count - 1
    // Arrays of one number type are read without a cast per element.
    if isLeafLevel, let numbers = NumberValue.typedArray(value) {
      try checkCount(numbers.count, expected: expected, path: path)
      for (index, number) in numbers.enumerated() {
        try appendNumber(number, path: path + [index], to: &bytes)
      }
      return
    }
    guard let array = value as? [Any] else {
      throw MachineLearningError.invalidArgument(
        "\(what)\(subscriptText(path)) must be an array of \(expected) elements (declared \(format.description)), got \(type(of: value)).")
    }
    try checkCount(array.count, expected: expected, path: path)
    for (index, element) in array.enumerated() {
      path.append(index)
      if isLeafLevel {
        guard let number = NumberValue(element) else {
          throw MachineLearningError.invalidArgument("\(what)\(subscriptText(path)) is a \(type(of: element)), not a number.")
        }
        try appendNumber(number, path: path, to: &bytes)
      } else {
        try append(element, level: level + 1, path: &path, to: &bytes)
      }
      path.removeLast()
    }
  }

  /// Throws unless the array at `path` has the declared `expected` count.
  private func checkCount(_ count: Int, expected: Int, path: [Int]) throws {
    guard count == expected else {
      throw MachineLearningError.invalidArgument(
        "\(what)\(subscriptText(path)) has \(count) elements, but its declared format \(format.description) needs \(expected).")
    }
  }

  /// Appends one number in the declared type.
  private func appendNumber(_ number: NumberValue, path: @autoclosure () -> [Int], to bytes: inout [UInt8]) throws {
    func rejected() -> NSError {
      MachineLearningError.invalidArgument(
        "\(what)\(subscriptText(path())) is \(number), which is not a \(format.type.schemaName) value.")
    }
    func appendInteger<Integer: FixedWidthInteger>(_ type: Integer.Type) throws {
      guard let integer = number.integer(as: Integer.self) else { throw rejected() }
      appendLittleEndian(integer, to: &bytes)
    }
    switch format.type {
    case .float32: appendLittleEndian(number.floatValue.bitPattern, to: &bytes)
    case .uInt8: try appendInteger(UInt8.self)
    case .int32: try appendInteger(Int32.self)
    case .int64: try appendInteger(Int64.self)
    default: throw rejected()
    }
  }

  /// `[0][3]` for path `[0, 3]`.
  private func subscriptText(_ path: [Int]) -> String { path.map { "[\($0)]" }.joined() }
}

/// Appends the little-endian bytes of `value`.
private func appendLittleEndian<Value: FixedWidthInteger>(_ value: Value, to bytes: inout [UInt8]) {
  withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
}

/// A number taken from an input array, kept exact.
enum NumberValue: CustomStringConvertible {
  /// A signed integer.
  case signed(Int64)
  /// An unsigned integer above `Int64.max`.
  case unsigned(UInt64)
  /// A floating-point number.
  case floating(Double)

  /// Reads a Swift number or an `NSNumber` (a `Bool` bridges to one, as 0 or 1); nil for anything else.
  init?(_ value: Any) {
    if type(of: value) is NSNumber.Type, let number = value as? NSNumber {
      self.init(number)
      return
    }
    switch value {
    case let value as Int: self = .signed(Int64(value))
    case let value as Int8: self = .signed(Int64(value))
    case let value as Int16: self = .signed(Int64(value))
    case let value as Int32: self = .signed(Int64(value))
    case let value as Int64: self = .signed(value)
    case let value as UInt8: self = .signed(Int64(value))
    case let value as UInt16: self = .signed(Int64(value))
    case let value as UInt32: self = .signed(Int64(value))
    case let value as UInt: self = Int64(exactly: value).map(NumberValue.signed) ?? .unsigned(UInt64(value))
    case let value as UInt64: self = Int64(exactly: value).map(NumberValue.signed) ?? .unsigned(value)
    case let value as Float: self = .floating(Double(value))
    case let value as Double: self = .floating(value)
    case let value as NSNumber: self.init(value)
    default: return nil
    }
  }

  /// Reads an `NSNumber`, keeping integers exact.
  init(_ number: NSNumber) {
    let double = number.doubleValue
    self = double.rounded() == double && abs(double) < 0x1p63 ? .signed(number.int64Value) : .floating(double)
  }

  /// The numbers of `value` when it is an array of one common number type (`[Float]`, `[Double]`,
  /// `[Int]`, `[Int32]`, `[Int64]`, `[UInt8]`, `[NSNumber]`), nil otherwise.
  static func typedArray(_ value: Any) -> [NumberValue]? {
    switch ObjectIdentifier(type(of: value)) {
    case ObjectIdentifier([Float].self): (value as? [Float])?.map { .floating(Double($0)) }
    case ObjectIdentifier([Double].self): (value as? [Double])?.map { .floating($0) }
    case ObjectIdentifier([Int].self): (value as? [Int])?.map { .signed(Int64($0)) }
    case ObjectIdentifier([Int32].self): (value as? [Int32])?.map { .signed(Int64($0)) }
    case ObjectIdentifier([Int64].self): (value as? [Int64])?.map { .signed($0) }
    case ObjectIdentifier([UInt8].self): (value as? [UInt8])?.map { .signed(Int64($0)) }
    case ObjectIdentifier([NSNumber].self): (value as? [NSNumber])?.map { NumberValue($0) }
    default: nil
    }
  }

  /// The number as a float32 element (rounded to nearest).
  var floatValue: Float {
    switch self {
    case .signed(let value): Float(value)
    case .unsigned(let value): Float(value)
    case .floating(let value): Float(value)
    }
  }

  /// The number as an `Integer`, nil unless it is integral and in range (NaN never is).
  func integer<Integer: FixedWidthInteger>(as type: Integer.Type) -> Integer? {
    switch self {
    case .signed(let value): Integer(exactly: value)
    case .unsigned(let value): Integer(exactly: value)
    case .floating(let value): Integer(exactly: value)
    }
  }

  /// The number as written.
  var description: String {
    switch self {
    case .signed(let value): "\(value)"
    case .unsigned(let value): "\(value)"
    case .floating(let value): "\(value)"
    }
  }
}

/// Builds nested `NSNumber` arrays from a tensor.
enum OutputDecoder {
  /// Output `index` of `interpreter` as nested arrays shaped `dimensions` (their product must be
  /// the output's element count), with numbers of the output's `type`.
  static func nestedArray(of interpreter: Interpreter, output index: Int, type: Tensor.DataType, dimensions: [Int]) throws -> Any {
    switch type {
    case .float32: return try nested(interpreter, index, dimensions) { (value: Float) in NSNumber(value: value) }
    case .int32: return try nested(interpreter, index, dimensions) { (value: Int32) in NSNumber(value: value) }
    case .uInt8: return try nested(interpreter, index, dimensions) { (value: UInt8) in NSNumber(value: value) }
    case .int64: return try nested(interpreter, index, dimensions) { (value: Int64) in NSNumber(value: value) }
    default: throw MachineLearningError.invalidArgument("Output \(index) has type \(type.schemaName), which ModelElementType cannot express.")
    }
  }

  /// Reads the output as `Element`s and nests them.
  private static func nested<Element: TensorElement>(
    _ interpreter: Interpreter, _ index: Int, _ dimensions: [Int], _ number: (Element) -> NSNumber
  ) throws -> Any {
    try interpreter.withUnsafeOutputBuffer(at: index, as: Element.self) { buffer in
      nest(buffer, dimensions: dimensions[...], offset: 0, number)
    }
  }

  /// The sub-array of `buffer` starting at `offset` with `dimensions`.
  private static func nest<Element>(
    _ buffer: UnsafeBufferPointer<Element>, dimensions: ArraySlice<Int>, offset: Int, _ number: (Element) -> NSNumber
  ) -> Any {
    let count = dimensions[dimensions.startIndex]
    let inner = dimensions.dropFirst()
    if inner.isEmpty { return (0..<count).map { number(buffer[offset + $0]) } }
    let stride = inner.reduce(1, *)
    return (0..<count).map { nest(buffer, dimensions: inner, offset: offset + $0 * stride, number) }
  }
}
