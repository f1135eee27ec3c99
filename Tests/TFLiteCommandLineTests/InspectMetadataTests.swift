import Foundation
import XCTest

@testable import TFLiteCommandLine

/// `tflite inspect` shows TFLite Support metadata; the expected values are those
/// `Scripts/make_metadata_fixtures.py` wrote into `TestModels/metadata/`.
final class InspectMetadataTests: XCTestCase {
  private let metadataModels = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("TestModels/metadata")

  private func inspect(_ name: String, _ flags: [String] = []) -> (code: Int32, output: CapturedOutput) {
    let output = CapturedOutput()
    let code = CommandLineTool.main(arguments: ["inspect", metadataModels.appendingPathComponent(name).path] + flags, output: output)
    return (code, output)
  }

  func testJSONHasTheTFLiteMetadataObject() throws {
    let (code, output) = inspect("detector_with_metadata.tflite", ["--json"])
    XCTAssertEqual(code, 0, output.standardError)
    let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(output.standardOutput.utf8)) as? [String: Any])
    let metadata = try XCTUnwrap(json["tflite_metadata"] as? [String: Any])
    XCTAssertEqual(metadata["name"] as? String, "Metadata fixture detector")
    XCTAssertEqual(metadata["min_parser_version"] as? String, "1.2.0")
    let subgraph = try XCTUnwrap((metadata["subgraphs"] as? [[String: Any]])?.first)
    let input = try XCTUnwrap((subgraph["inputs"] as? [[String: Any]])?.first)
    let inputContent = try XCTUnwrap(input["content"] as? [String: Any])
    XCTAssertEqual(inputContent["kind"] as? String, "image")
    XCTAssertEqual(inputContent["color_space"] as? String, "RGB")
    let normalization = try XCTUnwrap((input["process_units"] as? [[String: Any]])?.first)
    XCTAssertEqual(normalization["type"] as? String, "normalization")
    XCTAssertEqual(normalization["mean"] as? [Double], [127.5])
    let outputs = try XCTUnwrap(subgraph["outputs"] as? [[String: Any]])
    let boxes = try XCTUnwrap(outputs.first?["content"] as? [String: Any])
    XCTAssertEqual(boxes["kind"] as? String, "bounding_box")
    XCTAssertEqual(boxes["index"] as? [Int], [1, 0, 3, 2])
    XCTAssertEqual(boxes["range"] as? [Int], [2, 2])
    let files = try XCTUnwrap(outputs[1]["associated_files"] as? [[String: Any]])
    XCTAssertEqual(files.map { $0["type"] as? String }, ["TENSOR_VALUE_LABELS", "TENSOR_VALUE_LABELS"])
    XCTAssertEqual(files[1]["locale"] as? String, "fr")
    // The generator's label files have 3 lines each ("background", "cat", "dog" and the French ones).
    XCTAssertEqual(files.map { $0["line_count"] as? Int }, [3, 3])
    let scoreUnits = try XCTUnwrap(outputs[2]["process_units"] as? [[String: Any]])
    XCTAssertEqual(scoreUnits.map { $0["type"] as? String }, ["score_calibration", "score_thresholding"])
    XCTAssertEqual(scoreUnits[1]["global_score_threshold"] as? Double, 0.5)
  }

  func testTextReportSummarizesTheMetadata() {
    let (code, output) = inspect("detector_with_metadata.tflite")
    XCTAssertEqual(code, 0, output.standardError)
    for expected in [
      "tflite metadata: Metadata fixture detector version v3",
      "input 0 \"image\": image RGB 8x8",
      "normalize mean [127.5] std [127.5]",
      "bounding boxes BOUNDARIES RATIO index [1, 0, 3, 2] over dimensions 2...2",
      "file labels_fr.txt TENSOR_VALUE_LABELS locale fr (3 lines)",
      "file readme.txt DESCRIPTIONS (1 line)",
      "score calibration INVERSE_LOGISTIC, default score 0.25",
      "score threshold 0.5",
      "group \"detection_result\": location, category, score",
    ] {
      XCTAssertTrue(output.standardOutput.contains(expected), "missing \(expected) in\n\(output.standardOutput)")
    }
  }

  func testUnreadableMetadataIsReportedNotFatal() throws {
    let (code, output) = inspect("detector_with_bad_metadata.tflite", ["--json"])
    XCTAssertEqual(code, 0, output.standardError)
    let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(output.standardOutput.utf8)) as? [String: Any])
    let metadata = try XCTUnwrap(json["tflite_metadata"] as? [String: Any])
    XCTAssertNotNil(metadata["error"] as? String)
    XCTAssertTrue(inspect("detector_with_bad_metadata.tflite").output.standardOutput.contains("tflite metadata: unreadable ("))
  }

  func testModelWithoutMetadataHasNull() throws {
    let output = CapturedOutput()
    let path = metadataModels.deletingLastPathComponent().appendingPathComponent("detection/detection_postprocess_f32_regular.tflite").path
    XCTAssertEqual(CommandLineTool.main(arguments: ["inspect", path, "--json"], output: output), 0)
    let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(output.standardOutput.utf8)) as? [String: Any])
    XCTAssertTrue(json["tflite_metadata"] is NSNull)
  }
}
