import XCTest

@testable import TFLiteFormat

/// One test per schema-level rule checked after the FlatBuffer is verified.
final class ModelValidationTests: XCTestCase {
  private let sample = SampleModel()

  func testOtherSchemaVersionsAreRejected() {
    sample.root.set("version", .uint32(2))
    assertRejects(sample.bytes(), containing: "Model.version is 2")
  }

  func testModelWithoutSubgraphsIsRejected() {
    sample.root.set("subgraphs", .tables([]))
    sample.root.set("signature_defs", .tables([]))
    assertRejects(sample.bytes(), containing: "Model.subgraphs is empty")
  }

  func testOperatorTensorIndexOutOfRangeIsRejected() {
    sample.operation.set("inputs", .int32s([0, 7]))
    assertRejects(sample.bytes(), containing: "Model.subgraphs[0].operators[0].inputs[1] is 7, but the model has 3 tensors")
  }

  func testAbsentOptionalOperandIsAccepted() throws {
    sample.operation.set("inputs", .int32s([0, -1]))
    let model = try TFLiteModel(bytes: sample.bytes())
    XCTAssertEqual(model.model.subgraphs[0].operators[0].inputs, [0, -1])
  }

  func testNegativeIndexOtherThanMinusOneIsRejected() {
    sample.operation.set("outputs", .int32s([-2]))
    assertRejects(sample.bytes(), containing: "operators[0].outputs[0] is -2")
  }

  func testSubgraphInputOutOfRangeIsRejected() {
    sample.subgraph.set("inputs", .int32s([3]))
    assertRejects(sample.bytes(), containing: "Model.subgraphs[0].inputs[0] is 3")
  }

  func testOpcodeIndexOutOfRangeIsRejected() {
    sample.operation.set("opcode_index", .uint32(1))
    assertRejects(sample.bytes(), containing: "operators[0].opcode_index is 1, but the model has 1 operator codes")
  }

  func testTensorBufferIndexOutOfRangeIsRejected() {
    sample.tensors[2].set("buffer", .uint32(3))
    assertRejects(sample.bytes(), containing: "Model.subgraphs[0].tensors[2].buffer is 3, but the model has 3 buffers")
  }

  func testControlFlowSubgraphIndexOutOfRangeIsRejected() {
    sample.operation.set("builtin_options_type", .uint8(93))  // WhileOptions
    sample.operation.set("builtin_options", .table(TestTable("WhileOptions", [("cond_subgraph_index", .int32(0)), ("body_subgraph_index", .int32(4))])))
    assertRejects(sample.bytes(), containing: "operators[0].builtin_options.body_subgraph_index is 4, but the model has 1 subgraphs")
  }

  func testSignatureTensorIndexOutOfRangeIsRejected() {
    let signature = TestTable("SignatureDef", [
      ("inputs", .tables([TestTable("TensorMap", [("name", .string("x")), ("tensor_index", .uint32(9))])])),
      ("subgraph_index", .uint32(0)),
    ])
    sample.root.set("signature_defs", .tables([signature]))
    assertRejects(sample.bytes(), containing: "Model.signature_defs[0].inputs[0].tensor_index is 9")
  }

  func testMetadataBufferIndexOutOfRangeIsRejected() {
    sample.root.set("metadata", .tables([TestTable("Metadata", [("name", .string("m")), ("buffer", .uint32(40))])]))
    assertRejects(sample.bytes(), containing: "Model.metadata[0].buffer is 40")
  }

  func testCustomOperatorWithoutCustomCodeIsRejected() {
    sample.operatorCode.set("builtin_code", .int32(32))
    assertRejects(sample.bytes(), containing: "Model.operator_codes[0] is CUSTOM but has no custom_code")
  }

  func testNegativeDimensionIsRejected() {
    sample.tensors[0].set("shape", .int32s([1, -3]))
    assertRejects(sample.bytes(), containing: "tensors[0].shape [1, -3] has the negative dimension -3")
  }

  func testShapeSignatureBelowMinusOneIsRejected() {
    sample.tensors[0].set("shape_signature", .int32s([-5, 2]))
    assertRejects(sample.bytes(), containing: "tensors[0].shape_signature [-5, 2] has dimension -5")
  }

  func testShapeWhoseElementCountOverflowsIsRejected() {
    sample.tensors[0].set("shape", .int32s([Int32.max, Int32.max, Int32.max]))
    assertRejects(sample.bytes(), containing: "has more elements than this platform can count")
  }

  func testConstantDataOfTheWrongSizeIsRejected() throws {
    sample.buffers[1].set("data", .byteVector([1, 2, 3, 4, 5, 6]))
    let bytes = sample.bytes()
    let data = try XCTUnwrap(position(of: [6, 0, 0, 0, 1, 2, 3, 4, 5, 6], in: bytes)) + 4
    assertRejects(bytes, containing: "tensors[1] (constant, FLOAT32 [1, 2]) needs 8 bytes of data but buffer 1 holds 6", offset: data)
  }

  func testPackedAndUnpackedInt4DataAreAccepted() throws {
    sample.tensors[1].set("type", .int8(17)).set("shape", .int32s([1, 3]))
    for size in [2, 3] {
      sample.buffers[1].set("data", .byteVector(Array(repeating: 0x21, count: size)))
      XCTAssertEqual(try TFLiteModel(bytes: sample.bytes()).data(ofBuffer: 1).count, size)
    }
    sample.buffers[1].set("data", .byteVector([1, 2, 3, 4, 5]))
    assertRejects(sample.bytes(), containing: "INT4 [1, 3]) needs 2 bytes of data but buffer 1 holds 5")
  }

  func testStringSparseAndUnknownTypesSkipTheSizeCheck() throws {
    sample.tensors[1].set("type", .int8(5))  // STRING: variable-length elements
    XCTAssertNoThrow(try TFLiteModel(bytes: sample.bytes()))
    sample.tensors[1].set("type", .int8(99))
    let model = try TFLiteModel(bytes: sample.bytes())
    XCTAssertEqual(model.model.subgraphs[0].tensors[1].type.name, "UNKNOWN(99)")
    sample.tensors[1].set("type", .int8(0)).set("sparsity", .table(TestTable("SparsityParameters", [("traversal_order", .int32s([0, 1]))])))
    sample.buffers[1].set("data", .byteVector([1, 2, 3]))
    XCTAssertEqual(try TFLiteModel(bytes: sample.bytes()).model.subgraphs[0].tensors[1].sparsity?.traversalOrder, [0, 1])
  }

  func testDataStoredAfterTheFlatBufferIsReadThroughOffsetAndSize() throws {
    sample.buffers[1].set("data", .byteVector([])).set("offset", .uint64(0)).set("size", .uint64(8))
    let flatBufferSize = sample.bytes().count
    sample.buffers[1].set("offset", .uint64(UInt64(flatBufferSize)))
    let constant = littleEndianBytes(of: Float(3).bitPattern) + littleEndianBytes(of: Float(4).bitPattern)
    let model = try TFLiteModel(bytes: sample.bytes() + constant)
    XCTAssertEqual(model.dataRange(ofBuffer: 1), ByteRange(offset: flatBufferSize, count: 8))
    XCTAssertEqual(Array(model.tensorData(model.model.subgraphs[0].tensors[1])), constant)
  }

  func testDataRangeBeyondTheFileIsRejected() {
    sample.buffers[1].set("data", .byteVector([])).set("offset", .uint64(UInt64.max - 2)).set("size", .uint64(8))
    assertRejects(sample.bytes(), containing: "Model.buffers[1]: offset 18446744073709551613 + size 8 lies beyond the end")
    sample.buffers[1].set("offset", .uint64(100)).set("size", .uint64(1 << 40))
    assertRejects(sample.bytes(), containing: "Model.buffers[1]: offset 100 + size 1099511627776 lies beyond the end", offset: 100)
  }

  func testLargeCustomOptionsBeyondTheFileAreRejected() {
    sample.operation.set("large_custom_options_offset", .uint64(64)).set("large_custom_options_size", .uint64(1 << 20))
    assertRejects(sample.bytes(), containing: "operators[0].large_custom_options: offset 64 + size 1048576", offset: 64)
  }
}
