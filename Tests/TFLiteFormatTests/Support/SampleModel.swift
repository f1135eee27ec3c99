@testable import TFLiteFormat

/// A small valid model built with ``TestFlatBufferBuilder``, whose parts tests change to break it.
///
/// Subgraph 0 computes `output = input + constant` with ADD (fused RELU) on FLOAT32 `[1, 2]`
/// tensors; buffer 1 holds the constant, buffer 2 the `min_runtime_version` metadata; a
/// `serving_default` signature names the input and output.
struct SampleModel {
  let root: TestTable
  let subgraph: TestTable
  let tensors: [TestTable]
  let operation: TestTable
  let operatorCode: TestTable
  let buffers: [TestTable]

  init() {
    buffers = [
      TestTable("Buffer"),
      TestTable("Buffer", [("data", .byteVector(littleEndianBytes(of: Float(1.5).bitPattern) + littleEndianBytes(of: Float(-2).bitPattern)))]),
      TestTable("Buffer", [("data", .byteVector(Array("1.14.0".utf8) + [0, 0]))]),
    ]
    tensors = ["input", "constant", "output"].enumerated().map { index, name in
      TestTable("Tensor", [
        ("shape", .int32s([1, 2])), ("type", .int8(0)), ("buffer", .uint32(index == 1 ? 1 : 0)), ("name", .string(name)),
      ])
    }
    operation = TestTable("Operator", [
      ("opcode_index", .uint32(0)), ("inputs", .int32s([0, 1])), ("outputs", .int32s([2])),
      ("builtin_options_type", .uint8(11)),
      ("builtin_options", .table(TestTable("AddOptions", [("fused_activation_function", .int8(1))]))),
    ])
    operatorCode = TestTable("OperatorCode", [("deprecated_builtin_code", .int8(0)), ("version", .int32(2))])
    subgraph = TestTable("SubGraph", [
      ("tensors", .tables(tensors)), ("inputs", .int32s([0])), ("outputs", .int32s([2])),
      ("operators", .tables([operation])), ("name", .string("main")),
    ])
    let signature = TestTable("SignatureDef", [
      ("inputs", .tables([TestTable("TensorMap", [("name", .string("x")), ("tensor_index", .uint32(0))])])),
      ("outputs", .tables([TestTable("TensorMap", [("name", .string("y")), ("tensor_index", .uint32(2))])])),
      ("signature_key", .string("serving_default")), ("subgraph_index", .uint32(0)),
    ])
    root = TestTable("Model", [
      ("version", .uint32(3)), ("operator_codes", .tables([operatorCode])), ("subgraphs", .tables([subgraph])),
      ("description", .string("sample")), ("buffers", .tables(buffers)),
      ("metadata", .tables([TestTable("Metadata", [("name", .string("min_runtime_version")), ("buffer", .uint32(2))])])),
      ("signature_defs", .tables([signature])),
    ])
  }

  /// The serialized model.
  func bytes(identifier: String? = "TFL3") -> [UInt8] {
    TestFlatBufferBuilder.build(root, identifier: identifier)
  }
}
