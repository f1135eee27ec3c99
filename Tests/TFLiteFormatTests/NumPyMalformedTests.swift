import TFLiteFormat
import XCTest

/// Damaged or hostile `.npy` bytes must give a descriptive thrown error, never a crash.
final class NumPyMalformedTests: XCTestCase {
  /// An `.npy` file with the given header text (unpadded), format version and data bytes.
  private func npy(_ header: String, version: UInt8 = 1, data: [UInt8] = []) -> [UInt8] {
    let text = Array(header.utf8)
    let lengthField: [UInt8] =
      version == 1
      ? [UInt8(text.count & 0xFF), UInt8(text.count >> 8)]
      : (0..<4).map { UInt8(truncatingIfNeeded: text.count >> (8 * $0)) }
    let magic: [UInt8] = [0x93] + Array("NUMPY".utf8) + [version, 0]
    return magic + lengthField + text + data
  }

  /// Asserts that parsing `bytes` throws a `NumPyError` containing `fragment` (at `offset` if given).
  private func assertRejected(
    _ bytes: [UInt8], _ fragment: String, at offset: Int? = nil, file: StaticString = #filePath, line: UInt = #line
  ) {
    XCTAssertThrowsError(try NumPyArray(parsing: bytes), file: file, line: line) { error in
      guard let npyError = error as? NumPyError else { return XCTFail("unexpected \(error)", file: file, line: line) }
      XCTAssertTrue(npyError.message.contains(fragment), "\(npyError)", file: file, line: line)
      if let offset { XCTAssertEqual(npyError.offset, offset, "\(npyError)", file: file, line: line) }
    }
  }

  private let validHeader = "{'descr': '<i2', 'fortran_order': False, 'shape': (2,), }\n"

  func testAcceptedHeaderVariations() throws {
    let data: [UInt8] = [1, 0, 2, 0]
    let headers = [
      validHeader,
      "{\"shape\": (2L,), \"fortran_order\": False, \"descr\": \"<i2\"}",
      "  {'descr':'<i2','fortran_order':True,'shape':(2,)}  \t\r\n",
      "{'descr': '<i2', 'fortran_order': False, 'shape': (+2,)}",
    ]
    for header in headers {
      let array = try NumPyArray(parsing: npy(header, data: data))
      XCTAssertEqual(try array.values(as: Int16.self), [1, 2], header)
    }
    let matrix = try NumPyArray(parsing: npy("{'descr': '|u1', 'fortran_order': False, 'shape': (1, 2), }", data: [5, 6]))
    XCTAssertEqual(matrix.shape, [1, 2])
    let oneByteOrders = ["<u1", ">u1", "=u1", "|u1"]
    for descriptor in oneByteOrders {
      let array = try NumPyArray(parsing: npy("{'descr': '\(descriptor)', 'fortran_order': False, 'shape': (), }", data: [3]))
      XCTAssertEqual(try array.values(as: UInt8.self), [3], descriptor)
    }
  }

  func testFraming() {
    assertRejected([], "not an .npy file", at: 0)
    assertRejected(Array("NUMPY123456".utf8), "not an .npy file", at: 0)
    assertRejected([0x93] + Array("NUMPY".utf8) + [4, 0, 0, 0], "unsupported .npy format version 4.0", at: 6)
    assertRejected([0x93] + Array("NUMPY".utf8) + [1, 1, 0, 0], "unsupported .npy format version 1.1", at: 6)
    assertRejected([0x93] + Array("NUMPY".utf8) + [1, 0, 5], "ends inside the header length field", at: 8)
    assertRejected([0x93] + Array("NUMPY".utf8) + [2, 0, 5, 0, 0], "ends inside the header length field", at: 8)
    assertRejected([0x93] + Array("NUMPY".utf8) + [1, 0, 0xFF, 0xFF, 0x7B], "header of 65535 bytes runs past the end", at: 8)
    assertRejected([0x93] + Array("NUMPY".utf8) + [2, 0, 0xFF, 0xFF, 0xFF, 0xFF], "header of 4294967295 bytes", at: 8)
  }

  func testDataSize() {
    assertRejected(npy(validHeader, data: [1, 0, 2]), "truncated: shape (2,) of <i2 needs 4 data bytes, only 3 follow", at: 68)
    assertRejected(npy(validHeader, data: [1, 0, 2, 0, 9]), "1 unexpected bytes after the array data", at: 72)
    assertRejected(
      npy("{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904, 4), }"), "more bytes than can be addressed")
    assertRejected(
      npy("{'descr': '<f8', 'fortran_order': False, 'shape': (1000000, 1000000, 1000000), }"), "truncated")
    assertRejected(npy("{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999,), }"), "integer too large", at: 61)
  }

  func testDictionaryStructure() {
    assertRejected(npy("['descr']"), "the header must start with '{'", at: 10)
    assertRejected(npy("{'descr': '<i2', 'fortran_order': False}"), "must have the keys 'descr', 'fortran_order' and 'shape'")
    assertRejected(npy("{'descr': '<i2', 'fortran_order': False, 'shape': (2,), 'extra': 1}"), "unexpected key 'extra'")
    assertRejected(npy("{'descr': '<i2', 'descr': '<i2', 'fortran_order': False, 'shape': (2,)}"), "repeats the key 'descr'")
    assertRejected(npy("{1: '<i2'}"), "dictionary keys must be strings")
    assertRejected(npy("{'descr' '<i2'}"), "expected ':' after a dictionary key", at: 19)
    assertRejected(npy("{'descr': '<i2' 'shape': (2,)}"), "expected ',' or '}'")
    assertRejected(npy(validHeader + "x"), "unexpected text after the header dictionary", at: 68)
    assertRejected(npy("{'descr': '<i2', 'fortran_order': False, 'shape': (2,"), "the header ends in the middle of a value")
    assertRejected(npy("{'descr': '<i2"), "unterminated string", at: 24)
    assertRejected(npy("{'descr': '<i\\x32'}"), "escape sequences are not supported")
    assertRejected(npy("{'descr': '<i2', 'fortran_order': Flase, 'shape': (2,)}"), "unexpected character 'F'")
    assertRejected(npy("{'descr': '<i2', 'fortran_order': False, 'shape': (2 3)}"), "expected ',' or ')'")
    assertRejected(npy("{'descr': '<i2', 'fortran_order': False, 'shape': (-,)}"), "expected digits")
    let deep = String(repeating: "(", count: 20) + String(repeating: ")", count: 20)
    assertRejected(npy("{'descr': \(deep)}"), "nested too deeply")
  }

  func testFieldValues() {
    assertRejected(npy("{'descr': '<i2', 'fortran_order': False, 'shape': (2), }"), "'shape' must be a tuple of integers")
    assertRejected(npy("{'descr': '<i2', 'fortran_order': False, 'shape': [2], }"), "'shape' must be a tuple of integers")
    assertRejected(npy("{'descr': '<i2', 'fortran_order': False, 'shape': (-2,), }"), "non-negative integers")
    assertRejected(npy("{'descr': '<i2', 'fortran_order': False, 'shape': ('2',), }"), "non-negative integers")
    assertRejected(npy("{'descr': '<i2', 'fortran_order': 0, 'shape': (2,), }"), "'fortran_order' must be True or False")
    assertRejected(npy("{'descr': 2, 'fortran_order': False, 'shape': (2,), }"), "'descr' must be a string")
    assertRejected(npy("{'descr': '>i2', 'fortran_order': False, 'shape': (2,), }"), "big-endian dtype '>i2'")
    assertRejected(npy("{'descr': '=i2', 'fortran_order': False, 'shape': (2,), }"), "native-order dtype '=i2'")
    assertRejected(npy("{'descr': '|i2', 'fortran_order': False, 'shape': (2,), }"), "byte-order-less dtype '|i2'")
    assertRejected(npy("{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }"), "unsupported dtype '<c8'")
    assertRejected(npy("{'descr': 'f4', 'fortran_order': False, 'shape': (2,), }"), "unsupported dtype 'f4'")
    assertRejected(npy("{'descr': '', 'fortran_order': False, 'shape': (2,), }"), "unsupported dtype ''")
    assertRejected(npy("{'descr': [('x', '<f4')], 'fortran_order': False, 'shape': (2,), }"), "structured dtypes")
    assertRejected(npy("{'descr': '<i2', 'fortran_order': True, 'shape': (2, 2), }"), "Fortran-order")
    let dimensions = [String](repeating: "1", count: 65).joined(separator: ", ")
    assertRejected(npy("{'descr': '<i2', 'fortran_order': False, 'shape': (\(dimensions)), }"), "65 dimensions exceed the limit")
  }

  func testVersionTwoAndThreeHeadersAreParsedTheSameWay() throws {
    for version: UInt8 in [2, 3] {
      let array = try NumPyArray(parsing: npy(validHeader, version: version, data: [1, 0, 2, 0]))
      XCTAssertEqual(try array.values(as: Int16.self), [1, 2])
    }
  }

  func testTruncationsAndSeededMutationsOfNumPyFilesAreReadOrRejected() {
    let seeds = [
      NumPyFixtures.float32File, NumPyFixtures.boolFile, NumPyFixtures.int64File, NumPyFixtures.version2File,
      NumPyFixtures.version3File, NumPyFixtures.scalarFile, NumPyFixtures.emptyFile, NumPyFixtures.float16File,
    ]
    var generator = SeededGenerator(seed: 0x4E50_59)
    var outcomes = (read: 0, rejected: 0)
    func attempt(_ bytes: [UInt8]) {
      do {
        let array = try NumPyArray(parsing: bytes)
        XCTAssertEqual(array.bytes.count, array.elementCount * array.elementType.byteCount)
        outcomes.read += 1
      } catch {
        XCTAssertTrue(error is NumPyError, "\(error)")
        outcomes.rejected += 1
      }
    }
    for seed in seeds {
      for length in 0..<seed.count { attempt(Array(seed.prefix(length))) }
      for _ in 0..<400 {
        var bytes = seed
        let index = Int.random(in: 0..<min(bytes.count, 140), using: &generator)
        bytes[index] = UInt8.random(in: 0...255, using: &generator)
        attempt(bytes)
      }
    }
    XCTAssertGreaterThan(outcomes.rejected, 1000)
    XCTAssertGreaterThan(outcomes.read, 100)
  }
}
