// Models whose outputs declare a type (FLOAT32, the schema default) and shape ([]) that LiteRT's
// prepare step does not trust: the runtime adopts the type and shape LiteRT gives those outputs and
// computes LiteRT's values. The models and LiteRT's outputs come from
// `Scripts/make_adoption_models.py` (TestModels/adoption).

import Foundation
import TFLiteFormat
import XCTest

@testable import TFLiteRuntime

final class AdoptionTests: XCTestCase {
  /// `TestModels/adoption/manifest.json`.
  private struct Manifest: Decodable {
    struct Output: Decodable {
      var file: String
      /// NumPy's name of LiteRT's output type (`uint8`, `int32`, `bool`, ...).
      var type: String
      var shape: [Int]
    }
    struct Case: Decodable {
      var name: String
      var file: String
      /// "adopts" when LiteRT adopts the output type, "keeps" when it keeps the declared FLOAT32.
      var litert: String
      var inputs: [String]
      var outputs: [Output]
    }
    var cases: [Case]
  }

  private func manifest() throws -> Manifest {
    let url = TestModelManifest.directory.appendingPathComponent("adoption/manifest.json")
    return try JSONDecoder().decode(Manifest.self, from: Data(contentsOf: url))
  }

  private func runner(_ file: String) throws -> ModelRunner {
    try ModelRunner(model: try TFLiteModel(contentsOfFile: TestModelManifest.directory.appendingPathComponent(file).path))
  }

  /// The runtime element type NumPy's type name stands for.
  private func elementType(_ numpyName: String) -> ElementType? {
    ["uint8": .uint8, "int8": .int8, "int32": .int32, "bool": .bool, "float32": .float32][numpyName]
  }

  /// Every case LiteRT runs by adopting the output's type: the output has LiteRT's type and shape
  /// (not the declared FLOAT32 and []) and LiteRT's bytes.
  func testAdoptedOutputsHaveLiteRTsTypeShapeAndValues() throws {
    let cases = try manifest().cases.filter { $0.litert == "adopts" }
    XCTAssertEqual(cases.count, 16)
    for entry in cases {
      let executor = try runner(entry.file).primary
      try executor.allocateTensors()
      for (tensor, file) in zip(executor.inputs, entry.inputs) {
        let array = try TestModelManifest.array(file)
        XCTAssertEqual(tensor.byteCount, array.bytes.count, entry.name)
        let data = try XCTUnwrap(tensor.data, entry.name)
        array.bytes.withUnsafeBytes { data.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
      }
      try executor.invoke()
      XCTAssertEqual(executor.outputs.count, entry.outputs.count, entry.name)
      for (tensor, expected) in zip(executor.outputs, entry.outputs) {
        XCTAssertEqual(tensor.type, elementType(expected.type), "\(entry.name): output type")
        XCTAssertEqual(tensor.shape, expected.shape, "\(entry.name): output shape")
        let bytes = [UInt8](UnsafeRawBufferPointer(start: tensor.data, count: tensor.byteCount))
        XCTAssertEqual(bytes, try TestModelManifest.array(expected.file).bytes, "\(entry.name): output values")
      }
    }
  }

  /// MUL keeps its declared FLOAT32 output in LiteRT (which then reads its integer inputs as
  /// floats): the runtime refuses such a model when it is built, naming the operator and types.
  func testMultiplyWithADeclaredFloatOutputIsRefusedWithAReason() throws {
    let entry = try XCTUnwrap(try manifest().cases.first { $0.litert == "keeps" })
    XCTAssertThrowsError(try runner(entry.file)) { error in
      let message = "\(error)"
      XCTAssertTrue(message.contains("MUL"), message)
      XCTAssertTrue(message.contains("UINT8") && message.contains("FLOAT32"), message)
    }
  }

  /// The adoption list is LiteRT's: types flow from input to output in execution order, and an
  /// operator LiteRT does not adopt for (MUL) keeps the declared type.
  func testPreparedOutputTypesFollowExecutionOrder() throws {
    let chain = try runner("adoption/add_then_maximum_uint8_declared_float.tflite")
    let graph = chain.model.model.subgraphs[0]
    XCTAssertEqual(graph.tensors[2].type, .float32)
    XCTAssertEqual(graph.tensors[3].type, .float32)
    let adopted = TensorLowering.preparedOutputTypes(of: graph, model: chain.model)
    XCTAssertEqual(adopted, graph.tensors.indices.map { [2, 3].contains($0) ? TensorType.uint8 : nil })
    let multiply = try TFLiteModel(
      contentsOfFile: TestModelManifest.directory.appendingPathComponent("adoption/mul_uint8_declared_float.tflite").path)
    let multiplyGraph = multiply.model.subgraphs[0]
    XCTAssertEqual(
      TensorLowering.preparedOutputTypes(of: multiplyGraph, model: multiply),
      [TensorType?](repeating: nil, count: multiplyGraph.tensors.count))
  }
}
