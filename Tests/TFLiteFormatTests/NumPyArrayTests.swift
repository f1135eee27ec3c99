import TFLiteFormat
import XCTest

final class NumPyArrayTests: XCTestCase {
  /// Serializes `array` in every format version and checks each parses back to it.
  private func assertRoundTrips(_ array: NumPyArray, file: StaticString = #filePath, line: UInt = #line) throws {
    for version in NumPyFormatVersion.allCases {
      let bytes = array.serialized(version: version)
      XCTAssertEqual(bytes[6], version.rawValue, file: file, line: line)
      let headerEnd = bytes.count - array.bytes.count
      XCTAssertEqual(headerEnd % 64, 0, "data must start at a multiple of 64", file: file, line: line)
      XCTAssertEqual(bytes[headerEnd - 1], UInt8(ascii: "\n"), file: file, line: line)
      XCTAssertEqual(try NumPyArray(parsing: bytes), array, "version \(version.rawValue)", file: file, line: line)
    }
  }

  func testRoundTripsOfEveryElementTypeInEveryVersion() throws {
    try assertRoundTrips(NumPyArray(shape: [2, 2], values: [Float(1.5), -0, .infinity, .leastNonzeroMagnitude]))
    try assertRoundTrips(NumPyArray(shape: [3], values: [Double.pi, -1e308, 0]))
    try assertRoundTrips(NumPyArray(shape: [1, 2, 2], values: [Int8.min, Int8.max, 0, -1]))
    try assertRoundTrips(NumPyArray(shape: [4], values: [UInt8.min, UInt8.max, 7, 128]))
    try assertRoundTrips(NumPyArray(shape: [2], values: [Int16.min, Int16.max]))
    try assertRoundTrips(NumPyArray(shape: [2], values: [UInt16.min, UInt16.max]))
    try assertRoundTrips(NumPyArray(shape: [2], values: [Int32.min, Int32.max]))
    try assertRoundTrips(NumPyArray(shape: [2], values: [UInt32.min, UInt32.max]))
    try assertRoundTrips(NumPyArray(shape: [2, 1], values: [Int64.min, Int64.max]))
    try assertRoundTrips(NumPyArray(shape: [2], values: [UInt64.min, UInt64.max]))
    try assertRoundTrips(NumPyArray(shape: [3], values: [true, false, true]))
    try assertRoundTrips(NumPyArray(shape: [2], float16Values: [0.5, -65504]))
    try assertRoundTrips(NumPyArray(shape: [], values: [Int32(7)]))
    try assertRoundTrips(NumPyArray(shape: [5, 0, 2], values: [Float]()))
    let manyDimensions = [Int](repeating: 1, count: 64)
    try assertRoundTrips(NumPyArray(shape: manyDimensions, values: [UInt8(9)]))
  }

  func testTypedValuesAndConversions() throws {
    let floats = try NumPyArray(shape: [2], values: [Float(0.25), 8])
    XCTAssertEqual(floats.elementType, .float32)
    XCTAssertEqual(floats.bytes, [0, 0, 0x80, 0x3E, 0, 0, 0, 0x41], "little-endian IEEE bytes")
    XCTAssertEqual(try floats.floatValues(), [0.25, 8])
    XCTAssertThrowsError(try floats.values(as: Int32.self)) { error in
      XCTAssertEqual("\(error)", "npy: the array holds <f4, not <i4 (Int32)")
    }
    XCTAssertEqual(try NumPyArray(shape: [2], values: [0.1, 2.0]).floatValues(), [0.1, 2])
    XCTAssertEqual(try NumPyArray(shape: [1], float16Values: [0.1]).floatValues(), [0.099975586])
    XCTAssertThrowsError(try NumPyArray(shape: [1], values: [Int8(1)]).floatValues())
  }

  func testBooleanBytesOtherThanZeroAndOneReadAsTrue() throws {
    let array = try NumPyArray(elementType: .bool, shape: [4], bytes: [0, 1, 2, 255])
    XCTAssertEqual(try array.values(as: Bool.self), [false, true, true, true])
  }

  func testInvalidConstructions() {
    XCTAssertThrowsError(try NumPyArray(shape: [2, 2], values: [Float(1)])) { error in
      XCTAssertEqual("\(error)", "npy: shape (2, 2) of <f4 needs 16 bytes, got 4")
    }
    XCTAssertThrowsError(try NumPyArray(elementType: .int16, shape: [3], bytes: [1, 2])) { error in
      XCTAssertEqual("\(error)", "npy: shape (3,) of <i2 needs 6 bytes, got 2")
    }
    XCTAssertThrowsError(try NumPyArray(elementType: .int8, shape: [-1], bytes: [])) { error in
      XCTAssertTrue("\(error)".contains("negative dimension"))
    }
    XCTAssertThrowsError(try NumPyArray(elementType: .int8, shape: [Int](repeating: 1, count: 65), bytes: [0])) { error in
      XCTAssertTrue("\(error)".contains("65 dimensions exceed the limit of 64"))
    }
    XCTAssertThrowsError(try NumPyArray(elementType: .float64, shape: [Int.max / 4, 4], bytes: [])) { error in
      XCTAssertTrue("\(error)".contains("more bytes than can be addressed"))
    }
  }

  func testHeaderLayoutMatchesNumPyConventions() throws {
    let bytes = try NumPyArray(shape: [2, 3], values: [Float](repeating: 0, count: 6)).serialized()
    let header = String(decoding: bytes[10..<128], as: UTF8.self)
    XCTAssertTrue(header.hasPrefix("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"))
    XCTAssertEqual(bytes.count, 128 + 24)
    XCTAssertEqual(Array(bytes[8..<10]), [118, 0])
  }

  func testElementTypeDescriptors() {
    XCTAssertEqual(NumPyElementType.allCases.map(\.descriptor), [
      "<f2", "<f4", "<f8", "|i1", "|u1", "<i2", "<u2", "<i4", "<u4", "<i8", "<u8", "|b1",
    ])
    XCTAssertEqual(NumPyElementType.allCases.map(\.byteCount), [2, 4, 8, 1, 1, 2, 2, 4, 4, 8, 8, 1])
  }
}
