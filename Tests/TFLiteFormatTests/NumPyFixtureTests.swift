import TFLiteFormat
import XCTest

/// Reads files NumPy wrote and writes byte-identical files (see Scripts/make_numpy_fixtures.py).
final class NumPyFixtureTests: XCTestCase {
  /// Parses `file`, checks its type, shape and values, and that writing the values gives NumPy's bytes.
  private func assertMatchesNumPy<Element: NumPyScalar & Equatable>(
    _ file: [UInt8], shape: [Int], values: [Element], file sourceFile: StaticString = #filePath, line: UInt = #line
  ) throws {
    let array = try NumPyArray(parsing: file)
    XCTAssertEqual(array.elementType, Element.numPyElementType, file: sourceFile, line: line)
    XCTAssertEqual(array.shape, shape, file: sourceFile, line: line)
    XCTAssertEqual(array.elementCount, values.count, file: sourceFile, line: line)
    XCTAssertEqual(try array.values(as: Element.self), values, file: sourceFile, line: line)
    XCTAssertEqual(array.serialized(), file, "re-serialized bytes differ from NumPy's", file: sourceFile, line: line)
    XCTAssertEqual(try NumPyArray(shape: shape, values: values), array, file: sourceFile, line: line)
  }

  func testEveryElementTypeMatchesNumPy() throws {
    try assertMatchesNumPy(NumPyFixtures.float32File, shape: NumPyFixtures.float32Shape, values: NumPyFixtures.float32Values)
    try assertMatchesNumPy(NumPyFixtures.float64File, shape: NumPyFixtures.float64Shape, values: NumPyFixtures.float64Values)
    try assertMatchesNumPy(NumPyFixtures.boolFile, shape: NumPyFixtures.boolShape, values: NumPyFixtures.boolValues)
    try assertMatchesNumPy(NumPyFixtures.int8File, shape: NumPyFixtures.int8Shape, values: NumPyFixtures.int8Values)
    try assertMatchesNumPy(NumPyFixtures.uint8File, shape: NumPyFixtures.uint8Shape, values: NumPyFixtures.uint8Values)
    try assertMatchesNumPy(NumPyFixtures.int16File, shape: NumPyFixtures.int16Shape, values: NumPyFixtures.int16Values)
    try assertMatchesNumPy(NumPyFixtures.uint16File, shape: NumPyFixtures.uint16Shape, values: NumPyFixtures.uint16Values)
    try assertMatchesNumPy(NumPyFixtures.int32File, shape: NumPyFixtures.int32Shape, values: NumPyFixtures.int32Values)
    try assertMatchesNumPy(NumPyFixtures.uint32File, shape: NumPyFixtures.uint32Shape, values: NumPyFixtures.uint32Values)
    try assertMatchesNumPy(NumPyFixtures.int64File, shape: NumPyFixtures.int64Shape, values: NumPyFixtures.int64Values)
    try assertMatchesNumPy(NumPyFixtures.uint64File, shape: NumPyFixtures.uint64Shape, values: NumPyFixtures.uint64Values)
  }

  func testSignedZeroesSurvive() throws {
    let floats = try NumPyArray(parsing: NumPyFixtures.float32File).values(as: Float.self)
    XCTAssertEqual(floats.map(\.bitPattern), NumPyFixtures.float32Values.map(\.bitPattern))
  }

  func testFloat16ReadingAndRoundingMatchNumPy() throws {
    let array = try NumPyArray(parsing: NumPyFixtures.float16File)
    XCTAssertEqual(array.elementType, .float16)
    XCTAssertEqual(array.shape, NumPyFixtures.float16Shape)
    XCTAssertEqual(try array.floatValues().map(\.bitPattern), NumPyFixtures.float16Widened.map(\.bitPattern))
    XCTAssertEqual(NumPyFixtures.float16SourceValues.map(HalfPrecision.bits(from:)), NumPyFixtures.float16Bits)
    XCTAssertEqual(
      NumPyFixtures.float16Bits.map { HalfPrecision.float(fromBits: $0).bitPattern }, NumPyFixtures.float16Widened.map(\.bitPattern))
    let written = try NumPyArray(shape: NumPyFixtures.float16Shape, float16Values: NumPyFixtures.float16SourceValues)
    XCTAssertEqual(written.serialized(), NumPyFixtures.float16File)
  }

  func testEveryHalfPrecisionBitPatternRoundTrips() {
    for bits in UInt16.min...UInt16.max {
      XCTAssertEqual(HalfPrecision.bits(from: HalfPrecision.float(fromBits: bits)), bits)
    }
  }

  func testFormatVersionsOneTwoAndThree() throws {
    let expected = try NumPyArray(shape: NumPyFixtures.versionSourceShape, values: NumPyFixtures.versionSourceValues)
    let files = [NumPyFixtures.version1File, NumPyFixtures.version2File, NumPyFixtures.version3File]
    for (version, file) in zip(NumPyFormatVersion.allCases, files) {
      XCTAssertEqual(file[6], version.rawValue)
      XCTAssertEqual(try NumPyArray(parsing: file), expected, "version \(version.rawValue)")
      XCTAssertEqual(expected.serialized(version: version), file, "version \(version.rawValue)")
    }
  }

  func testScalarAndEmptyArrays() throws {
    let scalar = try NumPyArray(parsing: NumPyFixtures.scalarFile)
    XCTAssertEqual(scalar.shape, [])
    XCTAssertEqual(scalar.elementCount, 1)
    XCTAssertEqual(try scalar.values(as: Float.self), [2.5])
    XCTAssertEqual(try NumPyArray(shape: [], values: [Float(2.5)]).serialized(), NumPyFixtures.scalarFile)
    let empty = try NumPyArray(parsing: NumPyFixtures.emptyFile)
    XCTAssertEqual(empty.shape, [0, 3])
    XCTAssertEqual(empty.elementType, .int32)
    XCTAssertEqual(try empty.values(as: Int32.self), [])
    XCTAssertEqual(try NumPyArray(shape: [0, 3], values: [Int32]()).serialized(), NumPyFixtures.emptyFile)
  }

  func testUnsupportedNumPyFilesAreRejectedWithReasons() {
    let cases: [([UInt8], String)] = [
      (NumPyFixtures.bigEndianFile, "big-endian dtype '>f4' is not supported"),
      (NumPyFixtures.fortranOrderFile, "Fortran-order (column-major) arrays are not supported"),
      (NumPyFixtures.unicodeFile, "unsupported dtype '<U2'"),
      (NumPyFixtures.structuredFile, "structured dtypes"),
    ]
    for (file, fragment) in cases {
      XCTAssertThrowsError(try NumPyArray(parsing: file)) { error in
        XCTAssertTrue("\(error)".contains(fragment), "\(error)")
      }
    }
  }
}
