/// The `.npy` format versions. They differ only in the size of the header-length field (2 bytes
/// in 1.0, 4 bytes in 2.0 and 3.0) and the header's text encoding (3.0 allows UTF-8).
public enum NumPyFormatVersion: UInt8, Sendable, CaseIterable {
  /// Version 1.0, what `numpy.save` writes for ordinary arrays.
  case version1 = 1
  /// Version 2.0.
  case version2 = 2
  /// Version 3.0.
  case version3 = 3
}

/// An array as stored in a NumPy `.npy` file: an element type, a shape (C order, row-major) and
/// the elements' little-endian bytes. This is how tensors are exchanged with Python.
///
/// ```swift
/// let input = try NumPyArray(contentsOfFile: "input.npy")
/// let pixels = try input.values(as: Float.self)
/// try NumPyArray(shape: [1, 10], values: scores).write(toFile: "scores.npy")
/// ```
public struct NumPyArray: Sendable, Equatable {
  /// The type of every element.
  public let elementType: NumPyElementType
  /// The size of each dimension; empty for a scalar (one element).
  public let shape: [Int]
  /// The elements in C order, each `elementType.byteCount` little-endian bytes.
  public let bytes: [UInt8]

  /// The number of elements: the product of `shape` (1 for a scalar).
  public var elementCount: Int { bytes.count / elementType.byteCount }

  /// An array of `elementType` and `shape` holding `bytes`, which must be exactly
  /// `elementCount × elementType.byteCount` long.
  public init(elementType: NumPyElementType, shape: [Int], bytes: [UInt8]) throws {
    let expected = try Self.dataByteCount(elementType: elementType, shape: shape)
    guard bytes.count == expected else {
      throw NumPyError(message: "shape \(Self.describe(shape)) of \(elementType.descriptor) needs \(expected) bytes, got \(bytes.count)")
    }
    self.elementType = elementType
    self.shape = shape
    self.bytes = bytes
  }

  /// An array of `shape` holding `values` (as many as the shape has elements).
  public init<Element: NumPyScalar>(shape: [Int], values: [Element]) throws {
    try Self.checkLayout(of: Element.self)
    try self.init(elementType: Element.numPyElementType, shape: shape, bytes: Self.littleEndianBytes(of: values))
  }

  /// A `float16` array of `shape` holding `values` rounded to half precision (ties to even).
  public init(shape: [Int], float16Values values: [Float]) throws {
    let bits = values.map(HalfPrecision.bits(from:))
    try self.init(elementType: .float16, shape: shape, bytes: Self.littleEndianBytes(of: bits))
  }

  /// The elements as `Element`, whose `.npy` type must be `elementType` exactly.
  public func values<Element: NumPyScalar>(as type: Element.Type = Element.self) throws -> [Element] {
    guard Element.numPyElementType == elementType else {
      throw NumPyError(message: "the array holds \(elementType.descriptor), not \(Element.numPyElementType.descriptor) (\(Element.self))")
    }
    return try storedValues(as: Element.self)
  }

  /// The elements of a `float16`, `float32` or `float64` array converted to `Float` (float64
  /// rounds to nearest).
  public func floatValues() throws -> [Float] {
    switch elementType {
    case .float16: return try storedValues(as: UInt16.self).map(HalfPrecision.float(fromBits:))
    case .float32: return try storedValues(as: Float.self)
    case .float64: return try storedValues(as: Double.self).map(Float.init)
    default: throw NumPyError(message: "the array holds \(elementType.descriptor), not floating-point numbers")
    }
  }

  /// Parses the contents of an `.npy` file (format version 1.0, 2.0 or 3.0).
  public init(parsing data: [UInt8]) throws {
    guard data.count >= 8, data.starts(with: Self.magic) else {
      throw NumPyError(message: "not an .npy file: it does not start with \\x93NUMPY", offset: 0)
    }
    guard let version = NumPyFormatVersion(rawValue: data[6]), data[7] == 0 else {
      throw NumPyError(message: "unsupported .npy format version \(data[6]).\(data[7]) (supported: 1.0, 2.0, 3.0)", offset: 6)
    }
    let lengthFieldSize = Self.headerLengthFieldSize(version)
    let headerStart = 8 + lengthFieldSize
    guard data.count >= headerStart else {
      throw NumPyError(message: "file ends inside the header length field", offset: 8)
    }
    let declaredLength = (0..<lengthFieldSize).reduce(UInt64(0)) { $0 | UInt64(data[8 + $1]) << UInt64(8 * $1) }
    guard declaredLength <= UInt64(data.count - headerStart) else {
      throw NumPyError(message: "header of \(declaredLength) bytes runs past the end of the file (\(data.count) bytes)", offset: 8)
    }
    let headerLength = Int(declaredLength)
    let header = try NumPyHeader(parsing: data[headerStart..<(headerStart + headerLength)], baseOffset: headerStart)
    let dataStart = headerStart + headerLength
    let expected = try Self.dataByteCount(elementType: header.elementType, shape: header.shape)
    let available = data.count - dataStart
    guard available >= expected else {
      throw NumPyError(
        message: "truncated: shape \(Self.describe(header.shape)) of \(header.elementType.descriptor) needs \(expected) data bytes, "
          + "only \(available) follow the header", offset: dataStart)
    }
    guard available == expected else {
      throw NumPyError(message: "\(available - expected) unexpected bytes after the array data", offset: dataStart + expected)
    }
    elementType = header.elementType
    shape = header.shape
    bytes = Array(data[dataStart...])
  }

  /// The `.npy` file bytes, laid out as `numpy.save` does: the header padded with spaces so that
  /// the data starts at a multiple of 64 bytes. Version 1.0 (the default) holds every header this
  /// type can describe; 2.0 and 3.0 are for readers that want them.
  public func serialized(version: NumPyFormatVersion = .version1) -> [UInt8] {
    let text = Array(NumPyHeader(elementType: elementType, shape: shape).dictionaryText.utf8)
    let lengthFieldSize = Self.headerLengthFieldSize(version)
    let padding = 64 - (8 + lengthFieldSize + text.count + 1) % 64
    let headerLength = text.count + padding + 1
    var file = Self.magic + [version.rawValue, 0]
    file += (0..<lengthFieldSize).map { UInt8(truncatingIfNeeded: headerLength >> (8 * $0)) }
    file += text
    file += [UInt8](repeating: UInt8(ascii: " "), count: padding)
    file.append(UInt8(ascii: "\n"))
    file += bytes
    return file
  }

  /// `\x93NUMPY`, the first six bytes of every `.npy` file.
  private static let magic: [UInt8] = [0x93] + Array("NUMPY".utf8)

  private static func headerLengthFieldSize(_ version: NumPyFormatVersion) -> Int {
    version == .version1 ? 2 : 4
  }

  /// The number of data bytes `shape` of `elementType` needs, or an error when the shape is
  /// invalid or the count does not fit in `Int`.
  private static func dataByteCount(elementType: NumPyElementType, shape: [Int]) throws -> Int {
    guard shape.count <= NumPyHeader.maximumDimensions else {
      throw NumPyError(message: "\(shape.count) dimensions exceed the limit of \(NumPyHeader.maximumDimensions)")
    }
    guard shape.allSatisfy({ $0 >= 0 }) else {
      throw NumPyError(message: "shape \(describe(shape)) has a negative dimension")
    }
    var total = elementType.byteCount
    for dimension in shape {
      let (product, overflow) = total.multipliedReportingOverflow(by: dimension)
      guard !overflow else {
        throw NumPyError(message: "shape \(describe(shape)) of \(elementType.descriptor) holds more bytes than can be addressed")
      }
      total = product
    }
    return total
  }

  /// Checks that `Element` has the size of its `.npy` element type, so bytes can be copied.
  private static func checkLayout<Element: NumPyScalar>(of type: Element.Type) throws {
    guard MemoryLayout<Element>.stride == Element.numPyElementType.byteCount else {
      throw NumPyError(message: "\(Element.self) is \(MemoryLayout<Element>.stride) bytes, not the \(Element.numPyElementType.byteCount) of \(Element.numPyElementType.descriptor)")
    }
  }

  /// The little-endian bytes of `values`.
  private static func littleEndianBytes<Element: NumPyScalar>(of values: [Element]) -> [UInt8] {
    var bytes = values.withUnsafeBytes { Array($0) }
    convertByteOrder(&bytes, elementWidth: MemoryLayout<Element>.stride)
    return bytes
  }

  /// The stored elements copied into `Element`s of the same width (booleans normalized to 0 or 1).
  private func storedValues<Element: NumPyScalar>(as type: Element.Type) throws -> [Element] {
    guard MemoryLayout<Element>.stride == elementType.byteCount else {
      throw NumPyError(message: "\(Element.self) does not match \(elementType.descriptor)")
    }
    var source = elementType == .bool ? bytes.map { $0 == 0 ? 0 : 1 } : bytes
    Self.convertByteOrder(&source, elementWidth: elementType.byteCount)
    let count = elementCount
    return [Element](unsafeUninitializedCapacity: count) { buffer, initializedCount in
      source.withUnsafeBytes { UnsafeMutableRawBufferPointer(buffer).copyMemory(from: $0) }
      initializedCount = count
    }
  }

  /// Swaps between little-endian file order and the host's order (nothing to do on
  /// little-endian hosts).
  private static func convertByteOrder(_ bytes: inout [UInt8], elementWidth: Int) {
    #if _endian(big)
      for start in stride(from: 0, to: bytes.count, by: elementWidth) {
        bytes[start..<(start + elementWidth)].reverse()
      }
    #endif
  }

  /// `(2, 3)`-style text for messages.
  private static func describe(_ shape: [Int]) -> String {
    "(" + shape.map(String.init).joined(separator: ", ") + (shape.count == 1 ? ",)" : ")")
  }
}
