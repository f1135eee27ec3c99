import Foundation
import TFLiteCommandLine
import TFLiteImage
import TensorFlowLiteTaskVision
import XCTest

/// `tflite detect`, `tflite classify` and `tflite run --image` on the fixtures of
/// `Scripts/make_taskvision_fixtures.py`; expected results are LiteRT's (TestModels/taskvision/expected.json).
final class VisionCommandTests: CommandTestCase {
  let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("TestModels/taskvision")

  func fixture(_ name: String) -> String { fixtures.appendingPathComponent(name).path }

  func expected(_ key: String) throws -> [[String: Any]] {
    let data = try Data(contentsOf: fixtures.appendingPathComponent("expected.json"))
    return try XCTUnwrap((try JSONSerialization.jsonObject(with: data) as? [String: Any])?[key] as? [[String: Any]])
  }

  /// Each line of `text` parsed as a JSON object.
  func jsonLines(_ text: String) throws -> [[String: Any]] {
    try text.split(separator: "\n").map { line in
      try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    }
  }

  func testDetectJSONMatchesLiteRT() throws {
    let (code, output) = run("detect", fixture("ssd_mini_metadata.tflite"), fixture("scene.png"), "--json")
    XCTAssertEqual(code, ExitCode.success, output.standardError)
    let objects = try jsonLines(output.standardOutput)
    XCTAssertEqual(objects.count, 1)
    XCTAssertEqual(objects[0].keys.sorted(), ["detections", "height", "image", "width"])
    XCTAssertEqual(objects[0]["image"] as? String, fixture("scene.png"))
    XCTAssertEqual(objects[0]["width"] as? Int, 96)
    XCTAssertEqual(objects[0]["height"] as? Int, 72)
    let detections = try XCTUnwrap(objects[0]["detections"] as? [[String: Any]])
    let reference = try expected("metadata_detector")
    XCTAssertEqual(detections.count, reference.count)
    for (detection, wanted) in zip(detections, reference) {
      XCTAssertEqual(detection.keys.sorted(), ["box", "index", "label", "score"])
      XCTAssertEqual(detection["index"] as? Int, wanted["index"] as? Int)
      XCTAssertEqual(detection["label"] as? String, wanted["label"] as? String)
      XCTAssertEqual(try XCTUnwrap(detection["score"] as? Double), try XCTUnwrap(wanted["score"] as? Double), accuracy: 1e-6)
      let box = try XCTUnwrap(detection["box"] as? [String: Double])
      let wantedBox = try XCTUnwrap(wanted["box"] as? [String: Double])
      XCTAssertEqual(box.keys.sorted(), ["bottom", "left", "right", "top"])
      for edge in ["left", "top", "right", "bottom"] {
        XCTAssertEqual(try XCTUnwrap(box[edge]), try XCTUnwrap(wantedBox[edge]), accuracy: 1e-3, edge)
      }
    }
  }

  func testDetectBundleWithOptionsPrintsText() throws {
    let (code, output) = run(
      "detect", fixture("automl_bundle"), fixture("scene.png"), "--mean", "0", "--std", "255", "--max-results", "2")
    XCTAssertEqual(code, ExitCode.success, output.standardError)
    let reference = try expected("bundle_detector")
    XCTAssertTrue(output.standardOutput.contains("(96×72): 2 detections"), output.standardOutput)
    let firstLabel = try XCTUnwrap(reference[0]["label"] as? String)
    let firstScore = String(format: "%.3f", try XCTUnwrap(reference[0]["score"] as? Double))
    XCTAssertTrue(output.standardOutput.contains("  1. \(firstLabel)  \(firstScore)  box "), output.standardOutput)
  }

  func testDetectShowsDisplayNamesOfTheRequestedLocale() throws {
    let (code, output) = run("detect", fixture("ssd_mini_metadata.tflite"), fixture("scene.png"), "--locale", "fr")
    XCTAssertEqual(code, ExitCode.success, output.standardError)
    let first = try XCTUnwrap(try expected("metadata_detector").first)
    let name = "\(try XCTUnwrap(first["label"] as? String)) (\(try XCTUnwrap(first["display_name"] as? String)))"
    XCTAssertTrue(output.standardOutput.contains("  1. \(name)  "), output.standardOutput)
  }

  func testDetectDrawsOnlyBoxColoursAndWhiteText() throws {
    let drawing = path("annotated.png")
    let (code, output) = run("detect", fixture("ssd_mini_metadata.tflite"), fixture("scene.png"), "--output", drawing)
    XCTAssertEqual(code, ExitCode.success, output.standardError)
    let scene = try decodeImage([UInt8](try Data(contentsOf: URL(fileURLWithPath: fixture("scene.png")))))
    let drawn = try decodeImage([UInt8](try Data(contentsOf: URL(fileURLWithPath: drawing))))
    XCTAssertEqual([drawn.width, drawn.height, drawn.channels], [96, 72, 3])
    let allowed = Set((annotationPalette + [(255, 255, 255)]).map { [$0.0, $0.1, $0.2] })
    var changed = 0
    for pixel in 0..<(96 * 72) {
      let before = Array(scene.pixels[(pixel * scene.channels)..<(pixel * scene.channels + 3)])
      let after = Array(drawn.pixels[(pixel * 3)..<(pixel * 3 + 3)])
      guard before != after else { continue }
      changed += 1
      XCTAssertTrue(allowed.contains(after), "pixel \(pixel) became \(after)")
    }
    XCTAssertGreaterThan(changed, 500)
  }

  func testDetectSeveralImagesWritesAFolder() throws {
    let second = path("second.png")
    try FileManager.default.copyItem(atPath: fixture("scene.png"), toPath: second)
    let folder = path("drawn")
    let (code, output) = run("detect", fixture("ssd_mini_metadata.tflite"), fixture("scene.png"), second, "--output", folder, "--json")
    XCTAssertEqual(code, ExitCode.success, output.standardError)
    XCTAssertEqual(try jsonLines(output.standardOutput).count, 2)
    XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder).sorted(), ["scene.png", "second.png"])
  }

  func testClassifyJSONMatchesLiteRT() throws {
    let (code, output) = run("classify", fixture("mobilenet_uint8_metadata.tflite"), fixture("scene.png"), "--top", "3", "--json")
    XCTAssertEqual(code, ExitCode.success, output.standardError)
    let object = try XCTUnwrap(try jsonLines(output.standardOutput).first)
    XCTAssertEqual(object.keys.sorted(), ["classes", "height", "image", "width"])
    let classes = try XCTUnwrap(object["classes"] as? [[String: Any]])
    let reference = try expected("metadata_classifier").prefix(3)
    XCTAssertEqual(classes.map { $0["index"] as? Int }, reference.map { $0["index"] as? Int })
    XCTAssertEqual(classes.map { $0["label"] as? String }, reference.map { $0["label"] as? String })
    XCTAssertEqual(classes.map { $0["score"] as? Double }, reference.map { $0["score"] as? Double })
  }

  func testClassifyFourDimensionalOutputMatchesLiteRT() throws {
    // classifier_1x1xN.tflite ends in a 1×1 convolution: its output is [1, 1, 1, 7].
    let (code, output) = run("classify", fixture("classifier_1x1xN.tflite"), fixture("scene.png"), "--top", "3", "--json")
    XCTAssertEqual(code, ExitCode.success, output.standardError)
    let object = try XCTUnwrap(try jsonLines(output.standardOutput).first)
    let classes = try XCTUnwrap(object["classes"] as? [[String: Any]])
    let data = try Data(contentsOf: fixtures.appendingPathComponent("expected_extra.json"))
    let entry = try XCTUnwrap((try JSONSerialization.jsonObject(with: data) as? [String: Any])?["classifier_1x1xN"] as? [String: Any])
    let reference = try XCTUnwrap(entry["classes"] as? [[String: Any]]).prefix(3)
    XCTAssertEqual(classes.map { $0["index"] as? Int }, reference.map { $0["index"] as? Int })
    XCTAssertEqual(classes.map { $0["label"] as? String }, reference.map { $0["label"] as? String })
    for (actual, expected) in zip(classes, reference) {
      XCTAssertEqual(try XCTUnwrap(actual["score"] as? Double), try XCTUnwrap(expected["score"] as? Double), accuracy: 1e-5)
    }
  }

  func testRunImageFeedsThePreparedInput() throws {
    let (code, output) = run("run", fixture("mobilenet_uint8_metadata.tflite"), "--image", fixture("scene.png"))
    XCTAssertEqual(code, ExitCode.success, output.standardError)
    let best = try XCTUnwrap(try expected("metadata_classifier").first)
    let index = try XCTUnwrap(best["index"] as? Int), score = try XCTUnwrap(best["score"] as? Double)
    XCTAssertTrue(output.standardOutput.contains("top-5: #\(index) \(String(format: "%g", score))"), output.standardOutput)
  }

  func testBadInputGivesErrors() throws {
    let float = fixtures.deletingLastPathComponent().appendingPathComponent("networks/mobilenet_mini_float.tflite").path
    for (arguments, message) in [
      (["run", float, "--image", fixture("scene.png")], "NormalizationOptions"),
      (["detect", fixture("ssd_mini_metadata.tflite"), fixture("expected.json")], "cannot decode the image"),
      (["detect", fixture("ssd_mini_metadata.tflite"), fixture("scene.png"), "--mean", "1"], "--mean and --std go together"),
      (["detect", fixture("ssd_mini_metadata.tflite"), fixture("scene.png"), "--fit", "zoom"], "--fit wants"),
      (["classify", fixture("ssd_mini_metadata.tflite"), fixture("scene.png")], "a classifier's outputs are"),
      (["detect", fixture("scene.png")], "at least one image"),
    ] {
      let output = CapturedOutput()
      XCTAssertNotEqual(CommandLineTool.main(arguments: arguments, output: output), ExitCode.success, "\(arguments)")
      XCTAssertTrue(output.standardError.contains(message), "\(arguments): \(output.standardError)")
    }
  }
}
