import Foundation
import XCTest

@testable import TFLiteFormat

/// Decoding verified models into the generated schema types, and loading them from files.
final class ModelDecodingTests: XCTestCase {
  private let sample = SampleModel()

  func testSampleModelDecodes() throws {
    let loaded = try TFLiteModel(bytes: sample.bytes())
    let model = loaded.model
    XCTAssertEqual(model.version, 3)
    XCTAssertEqual(model.description, "sample")
    XCTAssertEqual(model.operatorCodes.map(\.resolvedBuiltinCode), [.add])
    XCTAssertEqual(model.operatorCodes[0].version, 2)
    let subgraph = try XCTUnwrap(model.subgraphs.first)
    XCTAssertEqual(subgraph.name, "main")
    XCTAssertEqual(subgraph.tensors.map(\.name), ["input", "constant", "output"])
    XCTAssertEqual(subgraph.tensors.map(\.shape), [[1, 2], [1, 2], [1, 2]])
    XCTAssertEqual(subgraph.tensors.map(\.type), [.float32, .float32, .float32])
    XCTAssertEqual(subgraph.inputs, [0])
    XCTAssertEqual(subgraph.outputs, [2])
    let op = try XCTUnwrap(subgraph.operators.first)
    XCTAssertEqual(op.inputs, [0, 1])
    // pot_scale_int16 is absent from the file, so it takes its schema default, true.
    XCTAssertEqual(op.builtinOptions, .addOptions(AddOptions(fusedActivationFunction: .relu, potScaleInt16: true)))
    XCTAssertEqual(op.debugMetadataIndex, -1)
    XCTAssertEqual(model.signatureDefs.first?.signatureKey, "serving_default")
    XCTAssertEqual(model.signatureDefs.first?.outputs.first?.tensorIndex, 2)
    XCTAssertEqual(loaded.minRuntimeVersion, "1.14.0")
    let constant = loaded.tensorData(subgraph.tensors[1])
    XCTAssertEqual([0, 1].map { constant.loadUnaligned(fromByteOffset: 4 * $0, as: Float.self) }, [1.5, -2])
    XCTAssertTrue(loaded.tensorData(subgraph.tensors[0]).isEmpty)
    XCTAssertEqual(loaded.fileSize, sample.bytes().count)
  }

  func testUnionTypeWithoutItsTableDecodesWithDefaults() throws {
    sample.operation.fields.removeAll { $0.id == TestTable.fieldID("Operator", "builtin_options") }
    sample.operation.set("builtin_options_type", .uint8(1))
    let options = try TFLiteModel(bytes: sample.bytes()).model.subgraphs[0].operators[0].builtinOptions
    XCTAssertEqual(options, .conv2DOptions(Conv2DOptions()))
    XCTAssertEqual(Conv2DOptions().dilationWFactor, 1)
  }

  func testOptionsFieldsCarrySchemaNamesValuesAndDefaults() {
    let options = BuiltinOptions.conv2DOptions(Conv2DOptions(padding: .valid, strideW: 2, fusedActivationFunction: .relu6))
    XCTAssertEqual(options.typeName, "Conv2DOptions")
    XCTAssertEqual(options.typeCode, 1)
    let fields = Dictionary(uniqueKeysWithValues: options.fields.map { ($0.name, $0) })
    XCTAssertEqual(fields["padding"]?.value, .enumeration(name: "VALID", rawValue: 1))
    XCTAssertEqual(fields["stride_w"]?.value, .integer(2))
    XCTAssertEqual(fields["stride_w"]?.isDefault, false)
    XCTAssertEqual(fields["fused_activation_function"]?.value, .enumeration(name: "RELU6", rawValue: 3))
    XCTAssertEqual(fields["dilation_h_factor"]?.value, .integer(1))
    XCTAssertEqual(fields["dilation_h_factor"]?.isDefault, true)
    XCTAssertEqual(BuiltinOptions.none.fields, [])
  }

  func testCustomOptionsAreReturnedWithoutCopying() throws {
    sample.operatorCode.set("builtin_code", .int32(32)).set("deprecated_builtin_code", .int8(32)).set("custom_code", .string("MyOp"))
    sample.operation.set("builtin_options_type", .uint8(0)).set("custom_options", .byteVector([9, 8, 7]))
    let loaded = try TFLiteModel(bytes: sample.bytes())
    let op = loaded.model.subgraphs[0].operators[0]
    XCTAssertEqual(loaded.model.operatorCodes[0].customCode, "MyOp")
    XCTAssertEqual(Array(loaded.customOptions(of: op)), [9, 8, 7])
    let options = loaded.customOptions(of: op)
    XCTAssertEqual(options.baseAddress, loaded.bytes.baseAddress.map { $0 + (op.customOptions?.offset ?? -1) })
  }

  func testResolvedBuiltinCodeTakesTheLargerOfTheTwoFields() {
    XCTAssertEqual(OperatorCode(deprecatedBuiltinCode: 4).resolvedBuiltinCode, .depthwiseConv2d)
    XCTAssertEqual(OperatorCode(deprecatedBuiltinCode: 4, builtinCode: .depthwiseConv2d).resolvedBuiltinCode, .depthwiseConv2d)
    XCTAssertEqual(OperatorCode(deprecatedBuiltinCode: 127, builtinCode: .gelu).resolvedBuiltinCode, .gelu)
    XCTAssertEqual(OperatorCode(builtinCode: .conv2d).resolvedBuiltinCode, .conv2d)
  }

  func testEnumNamesFollowTheSchema() {
    XCTAssertEqual(BuiltinOperator.conv2d.rawValue, 3)
    XCTAssertEqual(BuiltinOperator.conv2d.name, "CONV_2D")
    XCTAssertEqual(BuiltinOperator.depthwiseConv2d.description, "DEPTHWISE_CONV_2D")
    XCTAssertEqual(BuiltinOperator(rawValue: 9999).name, "UNKNOWN(9999)")
    XCTAssertEqual(ActivationFunctionType.reluN1To1.name, "RELU_N1_TO_1")
    XCTAssertEqual(TensorType.float32.name, "FLOAT32")
    XCTAssertEqual(TensorType.allKnown.map(\.rawValue), (0..<Int8(TensorType.allKnown.count)).map { $0 })
    XCTAssertEqual(StablehloPrecisionConfig.default.name, "DEFAULT")
    XCTAssertEqual(BuiltinOperator.allKnown.count, Set(BuiltinOperator.allKnown.map(\.name)).count)
  }

  func testTensorTypeSizes() {
    XCTAssertEqual(TensorType.float32.elementByteCount, 4)
    XCTAssertEqual(TensorType.complex128.elementByteCount, 16)
    XCTAssertEqual(TensorType.int4.bitsPerElement, 4)
    XCTAssertNil(TensorType.int4.elementByteCount)
    XCTAssertNil(TensorType.string.bitsPerElement)
  }

  func testModelFileIsMappedAndOutlivesItsPath() throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("TFLiteFormatTests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let file = directory.appendingPathComponent("sample.tflite")
    try Data(sample.bytes()).write(to: file)
    let model = try TFLiteModel(contentsOfFile: file.path)
    try FileManager.default.removeItem(at: file)
    XCTAssertEqual(model.model.description, "sample")
    XCTAssertEqual(Array(model.bytes), sample.bytes())

    XCTAssertThrowsError(try TFLiteModel(contentsOfFile: directory.path)) { error in
      XCTAssertTrue("\(error)".contains("is a directory"), "\(error)")
    }
    XCTAssertThrowsError(try TFLiteModel(contentsOfFile: file.path)) { error in
      XCTAssertTrue("\(error)".contains("cannot open"), "\(error)")
    }
    let empty = directory.appendingPathComponent("empty.tflite")
    try Data().write(to: empty)
    XCTAssertThrowsError(try TFLiteModel(contentsOfFile: empty.path)) { error in
      XCTAssertTrue("\(error)".contains("is empty"), "\(error)")
    }
  }
}
