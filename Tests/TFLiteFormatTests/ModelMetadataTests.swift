import Foundation
import XCTest

@testable import TFLiteFormat

/// The TFLite Support metadata reader against `TestModels/metadata/`, whose metadata
/// `Scripts/make_metadata_fixtures.py` wrote field by field with the `flatbuffers` package; the
/// expected values are the ones that script wrote.
final class ModelMetadataTests: XCTestCase {
  private func model(_ name: String) throws -> TFLiteModel {
    try TFLiteModel(contentsOfFile: TestModelFiles.directory.appendingPathComponent("metadata/\(name)").path)
  }

  func testModelLevelFields() throws {
    let metadata = try XCTUnwrap(try model("detector_with_metadata.tflite").modelMetadata())
    XCTAssertEqual(metadata.name, "Metadata fixture detector")
    XCTAssertEqual(metadata.description, "Detects cats and dogs.")
    XCTAssertEqual(metadata.version, "v3")
    XCTAssertEqual(metadata.author, "SwiftTFLite tests")
    XCTAssertEqual(metadata.license, "Apache-2.0")
    XCTAssertEqual(metadata.minParserVersion, "1.2.0")
    XCTAssertEqual(metadata.associatedFiles.map(\.name), ["readme.txt"])
    XCTAssertEqual(metadata.associatedFiles.first?.type, .descriptions)
    XCTAssertEqual(metadata.subgraphs.count, 1)
    XCTAssertEqual(metadata.subgraphs.first?.name, "main")
  }

  func testInputImageNormalizationAndStats() throws {
    let subgraph = try XCTUnwrap(try model("detector_with_metadata.tflite").modelMetadata()?.subgraphs.first)
    XCTAssertEqual(subgraph.inputTensors.count, 1)
    let input = subgraph.inputTensors[0]
    XCTAssertEqual(input.name, "image")
    XCTAssertEqual(input.description, "Input image to be detected.")
    guard case .image(let image)? = input.content?.properties else {
      return XCTFail("input content is \(String(describing: input.content)), not an image")
    }
    XCTAssertEqual(image.colorSpace, .rgb)
    XCTAssertEqual(image.defaultWidth, 8)
    XCTAssertEqual(image.defaultHeight, 8)
    XCTAssertNil(input.content?.range)
    XCTAssertEqual(input.normalization, NormalizationOptions(mean: [127.5], std: [127.5]))
    XCTAssertEqual(input.stats?.max, [255])
    XCTAssertEqual(input.stats?.min, [0])
  }

  func testOutputBoxesLabelsCalibrationThresholdAndGroups() throws {
    let subgraph = try XCTUnwrap(try model("detector_with_metadata.tflite").modelMetadata()?.subgraphs.first)
    XCTAssertEqual(subgraph.outputTensors.map(\.name), ["location", "category", "score", "number of detections"])
    let location = subgraph.outputTensors[0]
    XCTAssertEqual(location.dimensionNames, ["batch", "box", "coordinate"])
    guard case .boundingBox(let boxes)? = location.content?.properties else {
      return XCTFail("location content is \(String(describing: location.content)), not boxes")
    }
    XCTAssertEqual(boxes.index, [1, 0, 3, 2])
    XCTAssertEqual(boxes.type, .boundaries)
    XCTAssertEqual(boxes.coordinateType, .ratio)
    XCTAssertEqual(location.content?.range, 2...2)

    let category = subgraph.outputTensors[1]
    XCTAssertEqual(category.content?.properties, .feature)
    XCTAssertEqual(category.associatedFiles.map(\.name), ["labels.txt", "labels_fr.txt"])
    XCTAssertEqual(category.associatedFiles.map(\.type), [.tensorValueLabels, .tensorValueLabels])
    XCTAssertEqual(category.associatedFiles.map(\.locale), [nil, "fr"])
    XCTAssertEqual(category.associatedFiles[1].description, "Étiquettes en français.")

    let score = subgraph.outputTensors[2]
    XCTAssertEqual(score.scoreCalibration, ScoreCalibrationOptions(transformation: .inverseLogistic, defaultScore: 0.25))
    XCTAssertEqual(score.scoreThreshold, 0.5)
    XCTAssertNil(subgraph.outputTensors[3].content)

    XCTAssertTrue(subgraph.inputTensorGroups.isEmpty)
    XCTAssertEqual(subgraph.outputTensorGroups.map(\.name), ["detection_result"])
    XCTAssertEqual(subgraph.outputTensorGroups.first?.tensorNames, ["location", "category", "score"])
  }

  func testModelWithoutMetadataHasNone() throws {
    XCTAssertNil(try model("../detection/detection_postprocess_f32_regular.tflite").modelMetadata())
  }

  func testTruncatedMetadataThrowsInsteadOfCrashing() throws {
    let loaded = try model("detector_with_bad_metadata.tflite")
    XCTAssertThrowsError(try loaded.modelMetadata()) { error in
      XCTAssertTrue(error is ModelFormatError, "\(error)")
    }
  }

  func testEveryTruncationOfTheMetadataThrowsOrDecodes() throws {
    let loaded = try model("detector_with_metadata.tflite")
    let bytes = Array(try XCTUnwrap(loaded.metadata(named: ModelMetadata.metadataName)))
    for length in 0..<bytes.count {
      _ = try? bytes.prefix(length).withUnsafeBytes { try ModelMetadata(bytes: $0) }
    }
    for position in stride(from: 0, to: bytes.count, by: 3) {
      var corrupted = bytes
      corrupted[position] ^= 0xA5
      _ = try? corrupted.withUnsafeBytes { try ModelMetadata(bytes: $0) }
    }
    XCTAssertNoThrow(try bytes.withUnsafeBytes { try ModelMetadata(bytes: $0) })
  }

  func testIdentifierOtherThanM001IsRejected() throws {
    let loaded = try model("detector_with_metadata.tflite")
    var bytes = Array(try XCTUnwrap(loaded.metadata(named: ModelMetadata.metadataName)))
    bytes.replaceSubrange(4..<8, with: Array("TFL3".utf8))
    XCTAssertThrowsError(try bytes.withUnsafeBytes { try ModelMetadata(bytes: $0) })
  }
}
