import Foundation
import XCTest

@testable import TFLiteFormat

/// Every committed test model loads, and the reader agrees with `TestModels/manifest.json`, which
/// the generator wrote from TensorFlow's own reading of the same files.
final class TestModelsTests: XCTestCase {
  func testEveryTestModelLoads() throws {
    let files = TestModelFiles.models
    XCTAssertFalse(files.isEmpty, "no .tflite files under \(TestModelFiles.directory.path)")
    let badInput = try TestModelFiles.badInputModels()
    for file in files where !badInput.contains(file.resolvingSymlinksInPath().path) {
      XCTAssertNoThrow(try TFLiteModel(contentsOfFile: file.path), file.lastPathComponent)
    }
  }

  func testReaderAgreesWithTheManifest() throws {
    let entries = try XCTUnwrap(try TestModelFiles.manifest()["models"] as? [[String: Any]])
    XCTAssertFalse(entries.isEmpty, "the manifest lists no models")
    for entry in entries {
      let relativePath = try XCTUnwrap(entry["file"] as? String)
      let loaded = try TFLiteModel(contentsOfFile: TestModelFiles.directory.appendingPathComponent(relativePath).path)
      try check(loaded, against: entry, named: relativePath)
    }
  }

  func testLoadTimeOfTheLargestTestModel() throws {
    let sizes = try TestModelFiles.models.map { ($0, try FileManager.default.attributesOfItem(atPath: $0.path)[.size] as? Int ?? 0) }
    let (largest, size) = try XCTUnwrap(sizes.max { $0.1 < $1.1 })
    var best = Double.infinity
    for _ in 0..<5 {
      let start = DispatchTime.now().uptimeNanoseconds
      let model = try TFLiteModel(contentsOfFile: largest.path)
      best = min(best, Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
      XCTAssertEqual(model.fileSize, size)
    }
    print("load time of the largest test model \(largest.lastPathComponent) (\(size) bytes): \(best) ms (best of 5, this build)")
  }

  private func check(_ loaded: TFLiteModel, against entry: [String: Any], named name: String) throws {
    let subgraph = try XCTUnwrap(loaded.model.subgraphs.first, name)
    let tensors = try XCTUnwrap(entry["tensors"] as? [[String: Any]], name)
    XCTAssertEqual(tensors.count, subgraph.tensors.count, "\(name): tensor count")
    for expected in tensors {
      let index = try XCTUnwrap(expected["index"] as? Int, name)
      guard subgraph.tensors.indices.contains(index) else { return XCTFail("\(name): no tensor \(index)") }
      try check(subgraph.tensors[index], in: loaded, against: expected, named: "\(name) tensor \(index)")
    }
    for (key, actual) in [("inputs", subgraph.inputs), ("outputs", subgraph.outputs)] {
      let expected = try XCTUnwrap(entry[key] as? [[String: Any]], name).map { $0["index"] as? Int }
      XCTAssertEqual(expected, actual.map { Int($0) }, "\(name): \(key)")
    }
    let operations = try XCTUnwrap(entry["ops"] as? [[String: Any]], name)
    XCTAssertEqual(operations.count, subgraph.operators.count, "\(name): operator count")
    for (index, (expected, op)) in zip(operations, subgraph.operators).enumerated() {
      try check(op, in: loaded.model, against: expected, named: "\(name) operator \(index)")
    }
  }

  private func check(_ tensor: Tensor, in loaded: TFLiteModel, against expected: [String: Any], named name: String) throws {
    XCTAssertEqual(tensor.name, expected["name"] as? String, "\(name): name")
    XCTAssertEqual(tensor.type.name, expected["type"] as? String, "\(name): type")
    XCTAssertEqual(tensor.shape.map { Int($0) }, expected["shape"] as? [Int], "\(name): shape")
    let signature = tensor.shapeSignature.isEmpty ? tensor.shape : tensor.shapeSignature
    XCTAssertEqual(signature.map { Int($0) }, expected["shape_signature"] as? [Int], "\(name): shape_signature")
    XCTAssertEqual(!loaded.tensorData(tensor).isEmpty, try XCTUnwrap(expected["constant"] as? Bool, name), "\(name): constant")
    XCTAssertEqual(tensor.sparsity != nil, try XCTUnwrap(expected["sparse"] as? Bool, name), "\(name): sparse")
    let quantization = tensor.quantization.flatMap { $0.scale.isEmpty ? nil : $0 }
    guard let expectedQuantization = expected["quantization"] as? [String: Any] else {
      XCTAssertTrue(expected["quantization"] is NSNull, "\(name): quantization must be an object or null")
      XCTAssertNil(quantization, "\(name): quantization")
      return
    }
    let actual = try XCTUnwrap(quantization, "\(name): quantization missing")
    XCTAssertEqual(actual.scale, (expectedQuantization["scale"] as? [Double])?.map { Float($0) }, "\(name): scale")
    XCTAssertEqual(actual.zeroPoint, (expectedQuantization["zero_point"] as? [Int])?.map { Int64($0) }, "\(name): zero_point")
    XCTAssertEqual(Int(actual.quantizedDimension), expectedQuantization["quantized_dimension"] as? Int, "\(name): quantized_dimension")
  }

  private func check(_ op: Operator, in model: Model, against expected: [String: Any], named name: String) throws {
    let code = model.operatorCodes[Int(op.opcodeIndex)]
    let opName = code.resolvedBuiltinCode == .custom ? code.customCode : code.resolvedBuiltinCode.name
    XCTAssertEqual(opName, expected["op"] as? String, "\(name): op")
    XCTAssertEqual(Int(code.version), expected["version"] as? Int, "\(name): version")
    guard let optionsType = expected["options_type"] as? String else {
      XCTAssertEqual(op.builtinOptions, .none, "\(name): options")
      return
    }
    XCTAssertEqual(op.builtinOptions.typeName, optionsType, "\(name): options type")
    let fields = Dictionary(uniqueKeysWithValues: op.builtinOptions.fields.map { ($0.name, $0.value) })
    for (key, value) in try XCTUnwrap(expected["options"] as? [String: Any], name) {
      guard let actual = fields[key] else {
        // A field from a newer schema than ours is fine only when the file leaves it out.
        XCTAssertTrue(value is NSNull, "\(name): option \(key) = \(value) is unknown to this schema")
        continue
      }
      XCTAssertTrue(Self.matches(actual, value), "\(name): option \(key) is \(actual), manifest says \(value)")
    }
  }

  /// Whether a decoded option value equals the manifest's JSON value (enums by name or stored value).
  private static func matches(_ actual: SchemaValue, _ expected: Any) -> Bool {
    switch actual {
    case .bool(let value): return (expected as? Bool) == value
    case .integer(let value): return (expected as? NSNumber)?.int64Value == value
    case .unsigned(let value): return (expected as? NSNumber)?.uint64Value == value
    case .float(let value): return (expected as? NSNumber).map { Float($0.doubleValue) == Float(value) } ?? false
    case .enumeration(let name, let rawValue): return (expected as? String) == name || (expected as? NSNumber)?.int64Value == rawValue
    case .string(let value): return (expected as? String) == value || (value == nil && expected is NSNull)
    case .bytes(let range): return (range == nil && expected is NSNull) || (expected as? [Any])?.count == range?.count
    case .vector(let values):
      guard let list = expected as? [Any], list.count == values.count else { return false }
      return zip(values, list).allSatisfy { matches($0, $1) }
    }
  }
}
