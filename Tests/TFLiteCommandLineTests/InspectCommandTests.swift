import Foundation
import XCTest

@testable import TFLiteCommandLine

/// `tflite inspect` on committed test models, checked against `TestModels/manifest.json`.
final class InspectCommandTests: XCTestCase {
  private let testModels = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("TestModels")

  /// Runs the tool and returns its exit code and output.
  private func run(_ arguments: [String]) -> (code: Int32, output: CapturedOutput) {
    let output = CapturedOutput()
    return (CommandLineTool.main(arguments: arguments, output: output), output)
  }

  /// The models listed in `TestModels/manifest.json`.
  private func manifestEntries() throws -> [[String: Any]] {
    let data = try Data(contentsOf: testModels.appendingPathComponent("manifest.json"))
    let manifest = try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    return try XCTUnwrap(manifest["models"] as? [[String: Any]])
  }

  /// The first manifest entry whose first operator has options and one of whose tensors is quantized.
  private func quantizedEntryWithOptions() throws -> [String: Any] {
    let entry = try manifestEntries().first { entry in
      let hasOptions = ((entry["ops"] as? [[String: Any]])?.first?["options"] as? [String: Any])?.isEmpty == false
      let isQuantized = (entry["tensors"] as? [[String: Any]])?.contains { $0["quantization"] is [String: Any] } ?? false
      return hasOptions && isQuantized
    }
    return try XCTUnwrap(entry, "no quantized model with options in the manifest")
  }

  func testJSONReportAgreesWithTheManifest() throws {
    let entry = try quantizedEntryWithOptions()
    let file = testModels.appendingPathComponent(try XCTUnwrap(entry["file"] as? String))
    let (code, output) = run(["inspect", file.path, "--json"])
    XCTAssertEqual(code, 0, output.standardError)
    let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(output.standardOutput.utf8)) as? [String: Any])
    XCTAssertEqual(json["version"] as? Int, 3)
    XCTAssertNotNil(json["description"])
    XCTAssertNotNil(json["signatures"] as? [Any])
    XCTAssertNotNil(json["metadata"] as? [Any])
    let subgraph = try XCTUnwrap((json["subgraphs"] as? [[String: Any]])?.first)
    XCTAssertEqual(subgraph["inputs"] as? [Int], (entry["inputs"] as? [[String: Any]])?.compactMap { $0["index"] as? Int })
    XCTAssertEqual(subgraph["outputs"] as? [Int], (entry["outputs"] as? [[String: Any]])?.compactMap { $0["index"] as? Int })

    let tensors = try XCTUnwrap(subgraph["tensors"] as? [[String: Any]])
    let expectedTensors = try XCTUnwrap(entry["tensors"] as? [[String: Any]])
    XCTAssertEqual(tensors.count, expectedTensors.count)
    for (tensor, expected) in zip(tensors, expectedTensors) {
      for key in ["index", "name", "type", "shape", "shape_signature"] {
        XCTAssertEqual(tensor[key] as? NSObject, expected[key] as? NSObject, "tensor \(expected["index"] ?? "?") \(key)")
      }
      XCTAssertNotNil(tensor["buffer"] as? Int)
      let quantization = tensor["quantization"] as? [String: Any]
      let expectedQuantization = expected["quantization"] as? [String: Any]
      XCTAssertEqual(quantization == nil, expectedQuantization == nil)
      XCTAssertEqual(quantization?["zero_point"] as? [Int], expectedQuantization?["zero_point"] as? [Int])
      XCTAssertEqual(quantization?["quantized_dimension"] as? Int, expectedQuantization?["quantized_dimension"] as? Int)
      XCTAssertEqual(
        (quantization?["scale"] as? [Double])?.map { Float($0) }, (expectedQuantization?["scale"] as? [Double])?.map { Float($0) })
    }

    let operation = try XCTUnwrap((subgraph["operators"] as? [[String: Any]])?.first)
    let expectedOperation = try XCTUnwrap((entry["ops"] as? [[String: Any]])?.first)
    XCTAssertEqual(operation["index"] as? Int, 0)
    XCTAssertEqual(operation["op"] as? String, expectedOperation["op"] as? String)
    XCTAssertEqual(operation["version"] as? Int, expectedOperation["version"] as? Int)
    XCTAssertNotNil(operation["inputs"] as? [Int])
    XCTAssertNotNil(operation["outputs"] as? [Int])
    let options = try XCTUnwrap(operation["options"] as? [String: Any])
    for (key, value) in try XCTUnwrap(expectedOperation["options"] as? [String: Any]) where !(value is NSNull) {
      guard let number = value as? NSNumber, !(options[key] is String) else { continue }  // enums: names here, numbers there
      XCTAssertEqual(options[key] as? NSNumber, number, "option \(key)")
    }
  }

  func testTextReportShowsGraphAndTensorsOnRequest() throws {
    let entry = try quantizedEntryWithOptions()
    let file = testModels.appendingPathComponent(try XCTUnwrap(entry["file"] as? String)).path
    let operation = try XCTUnwrap((entry["ops"] as? [[String: Any]])?.first?["op"] as? String)
    let constantName = try XCTUnwrap(
      (entry["tensors"] as? [[String: Any]])?.first { $0["constant"] as? Bool == true }?["name"] as? String)

    let (code, output) = run(["inspect", file])
    XCTAssertEqual(code, 0, output.standardError)
    XCTAssertTrue(output.standardOutput.contains("schema version:      3"), output.standardOutput)
    XCTAssertTrue(output.standardOutput.contains(" \(operation) v"), output.standardOutput)
    XCTAssertTrue(output.standardOutput.contains("operator histogram:"), output.standardOutput)
    XCTAssertFalse(output.standardOutput.contains("  tensors:"))

    let withTensors = run(["inspect", file, "--tensors"]).output.standardOutput
    XCTAssertTrue(withTensors.contains("  tensors:"), withTensors)
    XCTAssertTrue(withTensors.contains(" \(constantName) "), withTensors)
    XCTAssertTrue(withTensors.contains("real = "), withTensors)
  }

  func testMissingModelFailsWithItsPath() {
    let (code, output) = run(["inspect", "/no/such/model.tflite"])
    XCTAssertEqual(code, ExitCode.failure)
    XCTAssertTrue(output.standardError.contains("cannot open '/no/such/model.tflite'"), output.standardError)
  }

  func testMissingArgumentIsAUsageError() {
    let (code, output) = run(["inspect"])
    XCTAssertEqual(code, ExitCode.usage)
    XCTAssertTrue(output.standardError.contains("missing MODEL"), output.standardError)
  }
}
