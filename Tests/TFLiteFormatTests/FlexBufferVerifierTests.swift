import TFLiteFormat
import XCTest

final class FlexBufferVerifierTests: XCTestCase {
  /// The spec's example map {bar: 14, foo: 13} with its root (see FlexBufferReaderTests).
  private let exampleMap: [UInt8] = [98, 97, 114, 0, 102, 111, 111, 0, 2, 9, 6, 2, 1, 2, 14, 13, 4, 4, 4, 36, 1]

  /// Asserts that verifying `bytes` throws an error whose message contains `fragment`, at `offset`.
  private func assertRejected(
    _ bytes: [UInt8], _ fragment: String, at offset: Int? = nil, file: StaticString = #filePath, line: UInt = #line
  ) {
    XCTAssertThrowsError(try FlexBufferReference(bytes), file: file, line: line) { error in
      guard let flexError = error as? FlexBufferError else {
        return XCTFail("unexpected error type \(error)", file: file, line: line)
      }
      XCTAssertTrue(flexError.message.contains(fragment), "\(flexError)", file: file, line: line)
      if let offset { XCTAssertEqual(flexError.offset, offset, "\(flexError)", file: file, line: line) }
      XCTAssertTrue(flexError.description.contains("at byte \(flexError.offset)"), file: file, line: line)
    }
  }

  /// `exampleMap` with byte `index` replaced by `value`.
  private func exampleMap(setting index: Int, to value: UInt8) -> [UInt8] {
    var bytes = exampleMap
    bytes[index] = value
    return bytes
  }

  func testRootFraming() {
    assertRejected([], "at least 3 bytes", at: 0)
    assertRejected([4, 1], "at least 3 bytes", at: 0)
    assertRejected([1, 4, 3], "root byte width 3", at: 2)
    assertRejected([1, 4, 0], "root byte width 0", at: 2)
    assertRejected([0, 4, 8], "does not fit", at: 0)
  }

  func testUnknownTypeCodes() {
    assertRejected([0, 27 << 2, 1], "unknown type code 27", at: 0)
    assertRejected([0, 35 << 2, 1], "unknown type code 35", at: 0)
    assertRejected([0, 63 << 2 | 3, 1], "unknown type code 63", at: 0)
    // An unknown type byte of a vector element.
    assertRejected([1, 0, 30 << 2, 2, 40, 1], "unknown type code 30", at: 1)
  }

  func testOffsets() {
    assertRejected([0, 5 << 2, 1], "size field starts before the buffer", at: 0)
    assertRejected([5, 5 << 2, 1], "points before the start", at: 0)
    assertRejected([0, 0, 0xFF, 0xFF, 10 << 2, 2], "points before the start", at: 2)
  }

  func testStrings() {
    assertRejected([2, 97, 98, 99, 3, 5 << 2, 1], "not NUL-terminated", at: 3)
    assertRejected([5, 97, 0, 2, 5 << 2, 1], "string of 5 bytes runs past the end", at: 1)
    assertRejected([200, 97, 0, 2, 5 << 2, 1], "size 200 exceeds the buffer size 6", at: 0)
    assertRejected([97, 98, 2, 4 << 2, 1], "key is not NUL-terminated", at: 0)
    // The size field of a 2-byte-wide string would start before the buffer.
    assertRejected([97, 0, 2, 5 << 2 | 1, 1], "size field starts before the buffer", at: 0)
  }

  func testBlobsVectorsAndSizes() {
    assertRejected([7, 1, 2, 3, 3, 25 << 2, 1], "blob of 7 bytes runs past", at: 1)
    assertRejected([4, 1, 2, 3, 3, 10 << 2, 1], "vector of 4 elements", at: 1)
    assertRejected([7, 1, 2, 3, 3, 11 << 2, 1], "typed vector of 7 elements", at: 1)
    assertRejected([0xFF, 0xFF, 0, 0, 2, 10 << 2 | 1, 1], "size 65535 exceeds", at: 0)
    assertRejected([1, 2, 3, 1, 22 << 2 | 3, 1], "typed vector of 4 elements of 8 bytes", at: 2)
    assertRejected([1, 2, 0, 2, 19 << 2 | 1, 1], "typed vector of 3 elements of 2 bytes", at: 1)
  }

  func testIndirectScalars() {
    assertRejected([1, 2, 3, 3, 6 << 2 | 3, 1], "indirect 8-byte scalar runs past", at: 0)
  }

  func testOneByteFloats() {
    assertRejected([0, 3 << 2, 1], "a float cannot be 1 byte wide", at: 0)
    assertRejected([0, 1, 8 << 2, 1], "a float cannot be 1 byte wide", at: 0)
    assertRejected([1, 0, 1, 13 << 2, 1], "a float cannot be 1 byte wide", at: 1)
    assertRejected([1, 0, 0, 2, 18 << 2, 1], "a float cannot be 1 byte wide", at: 1)
  }

  func testMaps() {
    XCTAssertNoThrow(try FlexBufferReference(exampleMap))
    assertRejected(exampleMap(setting: 12, to: 3), "keys byte width 3", at: 12)
    assertRejected(exampleMap(setting: 13, to: 1), "map has 1 values but its keys vector has 2 keys", at: 14)
    var unsorted = exampleMap
    unsorted[9] = 5  // first key → "foo"
    unsorted[10] = 10  // second key → "bar"
    assertRejected(unsorted, "map keys are not sorted", at: 0)
    assertRejected(exampleMap(setting: 11, to: 0), "map has 2 values but its keys vector has 6 keys", at: 14)
    assertRejected(exampleMap(setting: 9, to: 30), "points before the start", at: 9)
    assertRejected(exampleMap(setting: 7, to: 33), "key is not NUL-terminated", at: 4)
    // The map prefix would start before the buffer.
    assertRejected([2, 14, 13, 4, 4, 4, 9 << 2, 1], "map prefix", at: 1)
  }

  func testDuplicateKeysAreAccepted() throws {
    // Both key offsets point at "bar": sorted (not strictly), as encoders that keep duplicates write.
    var bytes = exampleMap
    bytes[10] = 10
    let root = try FlexBufferReference(bytes)
    XCTAssertEqual(root.asMap?.keys, ["bar", "bar"])
    XCTAssertNotNil(root["bar"]?.asInt)
  }

  func testNestingDepthLimit() throws {
    var value = FlexValue.int(1)
    for _ in 0..<64 { value = .vector([value]) }
    XCTAssertNoThrow(try FlexBufferReference(FlexBufferTestEncoder.encode(value)))
    value = .vector([value])
    assertRejected(FlexBufferTestEncoder.encode(value), "nested deeper than 64")
  }

  func testCyclesAreStoppedByTheDepthLimit() {
    // A vector whose second element points back at the vector itself.
    assertRejected([2, 0, 1, 4, 40, 4, 40, 1], "nested deeper than 64 levels (or a cycle)", at: 1)
    // A vector whose first element is a zero offset, so it is its own first element.
    assertRejected([1, 0, 40, 2, 40, 1], "nested deeper than 64 levels (or a cycle)", at: 1)
  }

  func testZeroOffsetToAnEmptyVectorIsAccepted() throws {
    // An empty vector (size 0) whose end is where the root slot starts.
    let root = try FlexBufferReference([0, 0, 10 << 2, 1])
    XCTAssertEqual(root.asVector?.count, 0)
  }

  func testOverlappingVectorsExhaustTheWorkBudget() {
    // 200 typed vectors of 200 elements that all overlap the same 400 bytes, each reached once.
    var bytes = [UInt8](repeating: 200, count: 400)
    bytes += [200, 0]  // size of the outer vector, 2 bytes wide
    let elementsStart = bytes.count
    for index in 0..<200 {
      let offset = UInt16(elementsStart + 2 * index - (1 + index))
      bytes += [UInt8(offset & 0xFF), UInt8(offset >> 8)]
    }
    bytes += [UInt8](repeating: 12 << 2, count: 200)
    let rootOffset = UInt16(bytes.count - elementsStart)
    bytes += [UInt8(rootOffset & 0xFF), UInt8(rootOffset >> 8), 10 << 2 | 1, 2]
    assertRejected(bytes, "exceeds the budget")
  }

  func testErrorDescriptionNamesTheOffset() {
    let error = FlexBufferError(message: "bad", offset: 7)
    XCTAssertEqual(error.description, "FlexBuffer: bad (at byte 7)")
  }
}
