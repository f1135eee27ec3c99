import XCTest

@testable import TFLiteFormat

/// Asserts that loading `bytes` throws a ``ModelFormatError`` whose message contains `text`
/// (and whose offset is `offset`, when given).
func assertRejects(
  _ bytes: [UInt8], containing text: String, offset: Int? = nil, options: VerificationOptions = VerificationOptions(),
  file: StaticString = #filePath, line: UInt = #line
) {
  XCTAssertThrowsError(try TFLiteModel(bytes: bytes, options: options), file: file, line: line) { error in
    guard let error = error as? ModelFormatError else {
      return XCTFail("expected a ModelFormatError, got \(error)", file: file, line: line)
    }
    XCTAssertTrue(error.message.contains(text), "message '\(error.message)' lacks '\(text)'", file: file, line: line)
    if let offset { XCTAssertEqual(error.offset, offset, "offset of '\(error.message)'", file: file, line: line) }
  }
}

/// Reads the little-endian `UInt32` at `position`.
func readUInt32(_ bytes: [UInt8], at position: Int) -> Int {
  (0..<4).reduce(0) { $0 | Int(bytes[position + $1]) << (8 * $1) }
}

/// Overwrites the bytes at `position` with `value`'s little-endian bytes.
func patch<T: FixedWidthInteger>(_ bytes: inout [UInt8], at position: Int, _ value: T) {
  bytes.replaceSubrange(position..<(position + MemoryLayout<T>.size), with: littleEndianBytes(of: value))
}

/// Position of the first occurrence of `pattern` in `bytes`.
func position(of pattern: [UInt8], in bytes: [UInt8]) -> Int? {
  guard pattern.count <= bytes.count else { return nil }
  return (0...(bytes.count - pattern.count)).first { Array(bytes[$0..<($0 + pattern.count)]) == pattern }
}
