import XCTest

@testable import TFLiteFormat

/// One test per structural rule of the FlatBuffer verifier.
final class FlatBufferVerifierTests: XCTestCase {
  private let sample = SampleModel()

  /// Position of the root table in `bytes`.
  private func rootPosition(_ bytes: [UInt8]) -> Int { readUInt32(bytes, at: 0) }

  /// Position of the root table's vtable in `bytes`.
  private func rootVtable(_ bytes: [UInt8]) -> Int {
    let root = rootPosition(bytes)
    return root - Int(Int32(truncatingIfNeeded: readUInt32(bytes, at: root)))
  }

  func testSampleModelIsAccepted() throws {
    XCTAssertNoThrow(try TFLiteModel(bytes: sample.bytes()))
  }

  func testEmptyInputIsRejected() {
    assertRejects([], containing: "empty", offset: 0)
  }

  func testInputShorterThanAHeaderIsRejected() {
    assertRejects([8, 0, 0, 0, 0], containing: "too short", offset: 0)
  }

  func testForeignFileIdentifierIsRejected() {
    var bytes = sample.bytes()
    bytes.replaceSubrange(4..<8, with: Array("TFL2".utf8))
    assertRejects(bytes, containing: "'TFL2' is not 'TFL3'", offset: 4)
  }

  func testFileWithoutIdentifierIsAccepted() throws {
    let model = try TFLiteModel(bytes: sample.bytes(identifier: nil))
    XCTAssertEqual(model.model.description, "sample")
  }

  func testRootOffsetPastTheEndIsRejected() {
    var bytes = sample.bytes()
    patch(&bytes, at: 0, UInt32(bytes.count + 100))
    assertRejects(bytes, containing: "root table offset", offset: 0)
  }

  func testRootOffsetNearTwoToThe32IsRejected() {
    var bytes = sample.bytes()
    patch(&bytes, at: 0, UInt32.max - 3)
    assertRejects(bytes, containing: "outside", offset: 0)
  }

  func testOffsetPointingAtItselfIsRejected() {
    var bytes = sample.bytes()
    patch(&bytes, at: 0, UInt32(0))
    assertRejects(bytes, containing: "points back at itself", offset: 0)
  }

  func testVtableOutsideTheBufferIsRejected() {
    var bytes = sample.bytes()
    let root = rootPosition(bytes)
    patch(&bytes, at: root, Int32.min)
    assertRejects(bytes, containing: "Model: vtable offset", offset: root)
  }

  func testOddVtableSizeIsRejected() {
    var bytes = sample.bytes()
    let vtable = rootVtable(bytes)
    patch(&bytes, at: vtable, UInt16(5))
    assertRejects(bytes, containing: "vtable size 5", offset: vtable)
  }

  func testVtablePastTheEndIsRejected() {
    var bytes = sample.bytes()
    let vtable = rootVtable(bytes)
    patch(&bytes, at: vtable, UInt16(0xFFFE))
    assertRejects(bytes, containing: "Model vtable", offset: vtable)
  }

  func testTableSizeBelowFourIsRejected() {
    var bytes = sample.bytes()
    let vtable = rootVtable(bytes)
    patch(&bytes, at: vtable + 2, UInt16(2))
    assertRejects(bytes, containing: "table size 2", offset: vtable + 2)
  }

  func testFieldOutsideItsTableIsRejected() {
    var bytes = sample.bytes()
    let vtable = rootVtable(bytes)
    patch(&bytes, at: vtable + 4, UInt16(0x7FF0))  // Model.version
    assertRejects(bytes, containing: "Model.version: field at table offset 32752", offset: vtable + 4)
  }

  func testStringWithoutTerminatorIsRejected() throws {
    var bytes = sample.bytes()
    let text = try XCTUnwrap(position(of: Array("sample".utf8) + [0], in: bytes))
    bytes[text + 6] = UInt8(ascii: "!")
    assertRejects(bytes, containing: "Model.description: string of 6 bytes is not NUL-terminated", offset: text + 6)
  }

  func testStringLengthNearTwoToThe32IsRejected() throws {
    var bytes = sample.bytes()
    let text = try XCTUnwrap(position(of: Array("sample".utf8) + [0], in: bytes))
    patch(&bytes, at: text - 4, UInt32.max - 1)
    assertRejects(bytes, containing: "Model.description: string of 4294967294 bytes", offset: text)
  }

  func testVectorLengthNearTwoToThe32IsRejected() throws {
    var bytes = sample.bytes()
    let data = try XCTUnwrap(position(of: littleEndianBytes(of: Float(1.5).bitPattern), in: bytes))
    patch(&bytes, at: data - 4, UInt32.max)
    assertRejects(bytes, containing: "Buffer.data: vector of 4294967295 elements", offset: data)
  }

  func testTableVectorElementOutsideTheBufferIsRejected() {
    sample.subgraph.set("tensors", .vector([littleEndianBytes(of: UInt32(1 << 30))]))
    assertRejects(sample.bytes(), containing: "SubGraph.tensors[0] offset")
  }

  func testUnknownUnionTypeIsRejected() {
    sample.operation.set("builtin_options_type", .uint8(250))
    assertRejects(sample.bytes(), containing: "Operator.builtin_options_type: union BuiltinOptions has no member with type code 250")
  }

  func testUnknownUnionTypeDecodesWhenAllowed() throws {
    sample.operation.set("builtin_options_type", .uint8(250))
    let model = try TFLiteModel(bytes: sample.bytes(), options: VerificationOptions(allowsUnknownUnionTypes: true))
    XCTAssertEqual(model.model.subgraphs[0].operators[0].builtinOptions, .unknown(type: 250))
    XCTAssertEqual(model.model.subgraphs[0].operators[0].builtinOptions.typeName, "UNKNOWN(250)")
  }

  func testUnionValueIsIgnoredWhenItsTypeIsNone() throws {
    // With type NONE the verifier skips the value, so decoding must not follow this garbage offset.
    sample.operation.set("builtin_options_type", .uint8(0))
    sample.operation.set("builtin_options", .inline(littleEndianBytes(of: UInt32(0x7FFF_FFF0))))
    let model = try TFLiteModel(bytes: sample.bytes())
    XCTAssertEqual(model.model.subgraphs[0].operators[0].builtinOptions, BuiltinOptions.none)
  }

  func testNestingDeeperThanTheLimitIsRejected() {
    assertRejects(
      sample.bytes(), containing: "nest more than 2 levels", options: VerificationOptions(maxNestingDepth: 2))
  }

  func testSharedTablesBeyondTheTableBudgetAreRejected() {
    // 300 subgraph offsets to one subgraph with 300 offsets to one tensor: 90,000 table visits from ~3 KB.
    sample.subgraph.set("tensors", .tables(Array(repeating: sample.tensors[0], count: 300)))
    sample.root.set("subgraphs", .tables(Array(repeating: sample.subgraph, count: 300)))
    assertRejects(sample.bytes(), containing: "more than 4096 tables visited")
  }

  func testSharedDataBeyondTheApparentSizeBudgetIsRejected() {
    // 40 tensors sharing one 100 KB name appear to hold 4 MB.
    sample.tensors[0].set("name", .string(String(repeating: "n", count: 100_000)))
    sample.subgraph.set("tensors", .tables(Array(repeating: sample.tensors[0], count: 40)))
    assertRejects(sample.bytes(), containing: "refusing a possible decompression bomb")
  }

  func testStructFieldsAndStructVectorsAreVerifiedAndRead() throws {
    let layout = SchemaLayout(
      tables: [
        TableLayout(name: "Shape", fields: [
          FieldLayout(name: "origin", id: 0, kind: .structure(size: 8, alignment: 4)),
          FieldLayout(name: "points", id: 1, kind: .structVector(size: 8, alignment: 4)),
        ])
      ],
      unions: [], rootTable: 0, fileIdentifier: nil)
    let point: (Int32, Int32) -> [UInt8] = { littleEndianBytes(of: $0) + littleEndianBytes(of: $1) }
    let root = TestTable(custom: "Shape", [(0, .inline(point(7, -8))), (1, .vector([point(1, 2), point(3, 4)]))])
    let bytes = TestFlatBufferBuilder.build(root, identifier: nil)
    try bytes.withUnsafeBytes { buffer in
      var verifier = FlatBufferVerifier(bytes: buffer, schema: layout, options: VerificationOptions())
      let table = try verifier.verifyRoot()
      let points = table.structures(1, size: 8).map { [$0.scalar(at: 0) as Int32, $0.nested(at: 4).scalar(at: 0)] }
      XCTAssertEqual(points, [[1, 2], [3, 4]])
      XCTAssertEqual(table.fieldPosition(0).map { Int32.load(from: buffer, at: $0 + 4) }, -8)
    }
    var truncatedStruct = bytes
    let vtable = readUInt32(bytes, at: 0) - Int(Int32(truncatingIfNeeded: readUInt32(bytes, at: readUInt32(bytes, at: 0))))
    patch(&truncatedStruct, at: vtable + 4, UInt16(12))  // the 8-byte struct would end 4 bytes past the 16-byte table
    try truncatedStruct.withUnsafeBytes { buffer in
      var verifier = FlatBufferVerifier(bytes: buffer, schema: layout, options: VerificationOptions())
      XCTAssertThrowsError(try verifier.verifyRoot()) { error in
        XCTAssertTrue("\(error)".contains("Shape.origin: field at table offset 12 (8 bytes) lies outside the 16-byte table"), "\(error)")
      }
    }
  }
}
