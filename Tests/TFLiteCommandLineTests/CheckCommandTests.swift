import Foundation
import TFLiteCommandLine
import XCTest

/// `tflite check` (exit codes 0 / 1 / 2, text and JSON) and what `tflite inspect` shows of the 2026
/// fixtures in `TestModels/format3d` (written by `Scripts/make_format_3d_fixtures.py`, whose
/// definitions give every expected value here).
final class CheckCommandTests: CommandTestCase {
  private static let testModels = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("TestModels")

  private func model(_ name: String) -> String { Self.testModels.appendingPathComponent(name).path }

  private func json(_ text: String) throws -> [String: Any] {
    try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
  }

  func testSupportedModelExitsZero() throws {
    let (code, output) = run("check", model("networks/mobilenet_mini_int8.tflite"))
    XCTAssertEqual(code, 0, output.standardError)
    XCTAssertTrue(output.standardOutput.hasSuffix(": this runtime can run every operator\n"), output.standardOutput)
    let (jsonCode, jsonOutput) = run("check", model("format3d/external_fc.tflite"), "--json")
    XCTAssertEqual(jsonCode, 0, jsonOutput.standardError)
    let document = try json(jsonOutput.standardOutput)
    XCTAssertEqual(document["format"] as? String, "tflite-check")
    XCTAssertEqual(document["format_version"] as? Int, 1)
    XCTAssertEqual(document["supported"] as? Bool, true)
    XCTAssertTrue(document["error"] is NSNull)
    XCTAssertEqual((document["unsupported"] as? [Any])?.count, 0)
  }

  func testUnsupportedTypesExitOneAndAreListed() throws {
    let (code, output) = run("check", model("format3d/types_2026.tflite"))
    XCTAssertEqual(code, 1)
    let lines = output.standardOutput.split(separator: "\n")
    XCTAssertTrue(lines.first?.hasSuffix(": 4 operators this runtime cannot run:") ?? false, output.standardOutput)
    for (node, type) in ["INT2", "UINT4", "FLOAT8_E4M3FN", "FLOAT8_E5M2"].enumerated() {
      XCTAssertTrue(lines.contains { $0.hasPrefix("  node \(node): DEQUANTIZE v1: input 0 ") && $0.contains("type \(type),") }, type)
    }
    let (_, jsonOutput) = run("check", model("format3d/quantization_2026.tflite"), "--json")
    let document = try json(jsonOutput.standardOutput)
    XCTAssertEqual(document["supported"] as? Bool, false)
    let entries = try XCTUnwrap(document["unsupported"] as? [[String: Any]])
    XCTAssertEqual(entries.map { $0["op"] as? String }, ["FULLY_CONNECTED", "FULLY_CONNECTED"])
    XCTAssertEqual(entries.map { $0["node"] as? Int }, [0, 1])
    XCTAssertEqual(entries.map { $0["subgraph"] as? Int }, [0, 0])
    XCTAssertEqual(entries.map { $0["version"] as? Int }, [1, 1])
    XCTAssertTrue((entries[0]["reason"] as? String)?.contains("blockwise quantization (block size 4") ?? false)
    XCTAssertTrue((entries[1]["reason"] as? String)?.contains("multi-axis quantization (axes [0, 1]") ?? false)
  }

  func testUnreadableModelsExitTwoWithTheReason() throws {
    let (code, output) = run("check", model("format3d/external_escape.tflite"))
    XCTAssertEqual(code, 2)
    XCTAssertTrue(output.standardError.contains("climbs out with '..'"), output.standardError)
    let (jsonCode, jsonOutput) = run("check", model("format3d/external_missing_file.tflite"), "--json")
    XCTAssertEqual(jsonCode, 2)
    let document = try json(jsonOutput.standardOutput)
    XCTAssertTrue(document["supported"] is NSNull)
    XCTAssertTrue((document["error"] as? String)?.contains("missing_weights.bin") ?? false, "\(document)")
    XCTAssertEqual(run("check", path("absent.tflite")).code, 2)
  }

  func testInspectShowsTypesQuantizationDetailsAndExternalBuffers() throws {
    let (_, types) = run("inspect", model("format3d/types_2026.tflite"), "--tensors")
    for line in ["T#0 int2 INT2 [4]", "T#2 uint4 UINT4 [4]", "T#4 float8_e4m3fn FLOAT8_E4M3FN [4]", "T#6 float8_e5m2 FLOAT8_E5M2 [4]"] {
      XCTAssertTrue(types.standardOutput.contains(line), line)
    }
    let (_, quantization) = run("inspect", model("format3d/quantization_2026.tflite"), "--tensors")
    XCTAssertTrue(quantization.standardOutput.contains(
      "T#1 blockwise_weights INT4 [2, 8]  blockwise: block size 4, block shape [1, 4], scales T#2, zero points none"))
    XCTAssertTrue(quantization.standardOutput.contains(
      "T#4 multi_axis_weights INT4 [2, 8]  multi-axis on axes [0, 1]: block size 0, scales T#2, zero points none"))
    let (_, external) = run("inspect", model("format3d/external_fc.tflite"), "--tensors")
    XCTAssertTrue(external.standardOutput.contains("    #0 external_fc_weights.bin: 2 buffers, 140 bytes"))
    XCTAssertTrue(external.standardOutput.contains(
      "T#1 weights FLOAT32 [3, 4]  external #1 in external_fc_weights.bin at 64, 48 bytes (unpacked)\n"))
  }

  func testInspectJSONHasDetailsExternalBuffersAndCustomOptions() throws {
    let quantization = try json(run("inspect", model("format3d/quantization_2026.tflite"), "--json").output.standardOutput)
    let tensors = try XCTUnwrap(((quantization["subgraphs"] as? [[String: Any]])?.first)?["tensors"] as? [[String: Any]])
    let blockwise = try XCTUnwrap((tensors[1]["quantization"] as? [String: Any])?["details"] as? [String: Any])
    XCTAssertEqual(blockwise["type"] as? String, "BlockwiseQuantization")
    XCTAssertEqual(blockwise["block_size"] as? Int, 4)
    XCTAssertEqual(blockwise["block_shape"] as? [Int], [1, 4])
    XCTAssertEqual(blockwise["scales"] as? Int, 2)
    XCTAssertEqual(blockwise["zero_points"] as? Int, -1)
    let multiAxis = try XCTUnwrap((tensors[4]["quantization"] as? [String: Any])?["details"] as? [String: Any])
    XCTAssertEqual(multiAxis["quantized_dimensions"] as? [Int], [0, 1])
    XCTAssertTrue((tensors[2]["quantization"] ?? 0) is NSNull)

    let external = try json(run("inspect", model("format3d/external_fc.tflite"), "--json").output.standardOutput)
    let groups = try XCTUnwrap(external["external_buffer_groups"] as? [[String: Any]])
    XCTAssertEqual(groups.map { $0["name"] as? String }, ["external_fc_weights.bin"])
    XCTAssertEqual(groups.map { $0["file_size"] as? Int }, [140])
    let weights = try XCTUnwrap(((external["subgraphs"] as? [[String: Any]])?.first?["tensors"] as? [[String: Any]])?[1])
    XCTAssertEqual(weights["data_bytes"] as? Int, 48)
    let buffer = try XCTUnwrap(weights["external_buffer"] as? [String: Any])
    XCTAssertEqual(buffer["offset"] as? Int, 64)
    XCTAssertEqual(buffer["length"] as? Int, 48)
    XCTAssertEqual(buffer["packing"] as? String, "unpacked")

    let custom = try json(run("inspect", model("format3d/custom_decode.tflite"), "--json").output.standardOutput)
    let manifest = try json(String(decoding: try Data(contentsOf: Self.testModels.appendingPathComponent("format3d/manifest.json")), as: UTF8.self))
    let decode = try XCTUnwrap(((custom["subgraphs"] as? [[String: Any]])?.first?["operators"] as? [[String: Any]])?.first)
    XCTAssertEqual(decode["op"] as? String, "DECODE")
    XCTAssertEqual(decode["custom_options"] as? NSDictionary, manifest["decode_options"] as? NSDictionary)
  }
}
