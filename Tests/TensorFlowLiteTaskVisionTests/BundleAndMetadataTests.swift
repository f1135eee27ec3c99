import Foundation
import TFLiteFormat
import TFLiteImage
import Testing
@testable import TensorFlowLiteTaskVision

@Suite struct AssociatedFilesTests {
  @Test func readsTheZIPAppendedToAModel() throws {
    let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: TaskVisionFixtures.path("ssd_mini_metadata.tflite"))))
    let files = try ModelAssociatedFiles(modelBytes: bytes)
    #expect(files.names == ["labels.txt", "labels_fr.txt", "calibration.csv"])
    #expect(try files.lines(of: "labels.txt") == ["circle", "square", "triangle", "star", "ring"])
    #expect(try files.lines(of: "labels_fr.txt") == ["cercle", "carré", "triangle", "étoile", "anneau"])
    #expect(try files.lines(of: "calibration.csv")[2] == "")
    #expect(throws: TaskVisionError.self) { try files.contents(of: "missing.txt") }
  }

  @Test func modelWithoutArchiveHasNoFiles() throws {
    let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: TaskVisionFixtures.path("automl_bundle/model.tflite"))))
    #expect(try ModelAssociatedFiles(modelBytes: bytes).names.isEmpty)
  }

  @Test func labelLinesDropCarriageReturnsAndTrailingEmptyLines() {
    #expect(ModelAssociatedFiles.labelLines(Array("a\r\nb\n\nc\n\n\n".utf8)) == ["a", "b", "", "c"])
    #expect(ModelAssociatedFiles.labelLines([]) == [])
  }

  @Test func calibrationFollowsTheSigmoidFormula() throws {
    let calibration = try ScoreCalibration(
      options: ScoreCalibrationOptions(transformation: .inverseLogistic, defaultScore: 0.125),
      fileLines: ["2,1,0", "", "1,1,0,0.5"], fileName: "c.csv")
    // g(0.75) = log(3); 2 / (1 + exp(-log 3)) = 2 / (1 + 1/3) = 1.5.
    #expect(abs(calibration.calibrate(0.75, classIndex: 0) - 1.5) < 1e-6)
    #expect(calibration.calibrate(0.75, classIndex: 1) == 0.125)
    #expect(calibration.calibrate(0.25, classIndex: 2) == 0.125)
    #expect(calibration.calibrate(0.5, classIndex: 2) == 0.5)
    #expect(calibration.calibrate(0.5, classIndex: 9) == 0.125)
    for bad in ["1,2", "1,x,3", "1,2,3,4,5", "-1,1,1", "1,nan,1"] {
      #expect(throws: TaskVisionError.self) {
        try ScoreCalibration(options: ScoreCalibrationOptions(transformation: .identity, defaultScore: 0), fileLines: [bad], fileName: "c")
      }
    }
  }

  @Test func letterboxAndCenterCropBoxesMapBackToTheImage() throws {
    for (fit, point, expected) in [
      // 64×32 image letterboxed into 32×32: content 32×16 at top 8; the input's centre is the image's.
      (ImageFit.letterbox(fill: 0), (Float(0.5), Float(0.5)), (32.0, 16.0)),
      (ImageFit.letterbox(fill: 0), (Float(0), Float(0.25)), (0.0, 0.0)),
      // Centre crop of 64×32 to a square: x 16…48; the input's left edge is image x 16.
      (ImageFit.centerCrop, (Float(0), Float(1)), (16.0, 32.0)),
    ] {
      var options = ModelInputOptions()
      options.imageFit = fit
      let format = try ImageTensorFormat(shape: [1, 32, 32, 3], elementType: .uint8, metadata: nil, options: options)
      let mapped = format.imagePoint(x: point.0, y: point.1, imageWidth: 64, imageHeight: 32)
      #expect(mapped.x == expected.0 && mapped.y == expected.1, "\(fit): \(mapped)")
    }
  }
}

@Suite struct HostileMetadataTests {
  @Test func metadataThatDisagreesWithTheModelIsRefused() throws {
    for (name, message) in [
      ("box_index_repeats", "index [0, 0, 1, 2] is not a permutation"),
      ("two_means_for_rgb", "does not fit a 3-channel input"),
      ("zero_std", "std ≠ 0"),
      ("display_names_short", "labels.txt has 5 lines but labels_fr.txt (locale fr) has 2"),
      ("calibration_file_missing", "no associated file \"calibration.csv\""),
      ("calibration_line_bad", "calibration file calibration.csv, line 1"),
      ("no_zip", "no associated file \"labels.txt\" (it has: none)"),
    ] {
      var options = ObjectDetectorOptions(modelPath: TaskVisionFixtures.path("hostile/\(name).tflite"))
      options.classificationOptions.displayNamesLocale = "fr"
      do {
        _ = try ObjectDetector(options: options)
        Issue.record("\(name) was accepted")
      } catch {
        #expect(error.message.contains(message), "\(name): \(error)")
      }
    }
  }

  @Test func corruptedAppendedArchivesNeverCrash() throws {
    // Flip bytes of the ZIP at the end of the model (the last 700 bytes hold the archive): the
    // detector either loads (a flip in unused bytes) or throws (a TaskVisionError, by its typed throws).
    let original = [UInt8](try Data(contentsOf: URL(fileURLWithPath: TaskVisionFixtures.path("ssd_mini_metadata.tflite"))))
    let folder = try TaskVisionFixtures.temporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    var refused = 0
    for trial in 0..<40 {
      // Deterministic spread of positions and flip patterns over the archive's bytes.
      var bytes = original
      for flip in 0..<3 {
        let position = original.count - 1 - (trial * 173 + flip * 251) % 700
        bytes[position] ^= UInt8(1 + (trial * 37 + flip * 91) % 255)
      }
      if trial % 4 == 0 { bytes.removeLast(1 + trial * 13 % 699) }
      let file = folder.appendingPathComponent("fuzz.tflite")
      try Data(bytes).write(to: file)
      do {
        _ = try ObjectDetector(options: ObjectDetectorOptions(modelPath: file.path))
      } catch {
        refused += 1
      }
    }
    #expect(refused > 0)
  }
}

@Suite struct AutoMLBundleTests {
  static let goodMetadata = """
    {"inferenceType": "FLOAT", "inputShape": [1, 32, 32, 3], "inputTensor": "x", "maxDetections": 10,
     "outputTensorRepresentation": ["bounding_boxes", "class_labels", "class_confidences", "num_of_boxes"],
     "outputTensors": ["TFLite_Detection_PostProcess", "TFLite_Detection_PostProcess:1",
                       "TFLite_Detection_PostProcess:2", "TFLite_Detection_PostProcess:3"]}
    """

  /// A bundle folder with the fixture model and the given files; returns its path.
  func bundle(metadata: String = goodMetadata, labels: String? = "a\nb\n\n") throws -> String {
    let folder = try TaskVisionFixtures.temporaryFolder()
    try FileManager.default.copyItem(
      atPath: TaskVisionFixtures.path("automl_bundle/model.tflite"), toPath: folder.appendingPathComponent("model.tflite").path)
    try Data(metadata.utf8).write(to: folder.appendingPathComponent("tflite_metadata.json"))
    if let labels { try Data(labels.utf8).write(to: folder.appendingPathComponent("dict.txt")) }
    return folder.path
  }

  func detectorError(_ path: String) -> String? {
    var options = ObjectDetectorOptions(modelPath: path)
    options.inputOptions.normalization = NormalizationOptions(mean: [0], std: [255])
    do {
      _ = try ObjectDetector(options: options)
      return nil
    } catch {
      return "\(error)"
    }
  }

  @Test func readsTheKeysAndLabels() throws {
    let bundle = try #require(try AutoMLBundle(path: try bundle()))
    #expect(bundle.labels == ["a", "b"])
    #expect(bundle.inputShape == [1, 32, 32, 3])
    #expect(bundle.inferenceType == "FLOAT")
    #expect(bundle.outputTensorNames["class_confidences"] == "TFLite_Detection_PostProcess:2")
    #expect(detectorError(bundle.modelPath) == nil)
  }

  @Test func aLoneModelIsNotABundle() throws {
    #expect(try AutoMLBundle(path: TaskVisionFixtures.path("ssd_mini_metadata.tflite")) == nil)
  }

  @Test func swappedOutputsFollowTheRepresentation() throws {
    // Declaring scores and classes the other way round makes class values of scores: every class index is 0.
    let swapped = Self.goodMetadata.replacingOccurrences(of: "\"class_labels\", \"class_confidences\"", with: "\"class_confidences\", \"class_labels\"")
    var options = ObjectDetectorOptions(modelPath: try bundle(metadata: swapped))
    options.inputOptions.normalization = NormalizationOptions(mean: [0], std: [255])
    let detections = try ObjectDetector(options: options).detect(mlImage: MLImage(image: TaskVisionFixtures.scene())).detections
    #expect(!detections.isEmpty)
    #expect(detections.allSatisfy { $0.categories[0].index == 0 })
  }

  @Test func hostileBundlesThrowDescriptiveErrors() throws {
    let cases: [(String, String?, String)] = [
      ("not json", "a\n", "not JSON"),
      (String(repeating: "[", count: 500_000), "a\n", "not JSON"),
      ("[1, 2]", "a\n", "not a JSON object"),
      (#"{"inputShape": "big"}"#, "a\n", "inputShape in tflite_metadata.json is not a list of whole numbers"),
      (#"{"inputShape": [1, 2.5, 3, 3]}"#, "a\n", "not a list of whole numbers"),
      (#"{"inputShape": [1, 99999999999, 3, 3]}"#, "a\n", "not a list of whole numbers"),
      (#"{"inputShape": [1, 0, 3, 3]}"#, "a\n", "positive sizes"),
      (#"{"inputShape": [1, 64, 64, 3]}"#, "a\n", "disagrees with the model's input [1, 32, 32, 3]"),
      (#"{"maxDetections": 7}"#, "a\n", "maxDetections 7 disagrees"),
      (#"{"maxDetections": -1}"#, "a\n", "not positive"),
      (#"{"inputTensor": "image"}"#, "a\n", "inputTensor \"image\" disagrees"),
      (#"{"outputTensorRepresentation": ["boxes"], "outputTensors": ["x"]}"#, "a\n", "unknown output representation"),
      (#"{"outputTensorRepresentation": ["bounding_boxes"]}"#, "a\n", "must both be given"),
      (
        #"{"outputTensorRepresentation": ["bounding_boxes", "class_labels", "class_confidences", "num_of_boxes"], "outputTensors": ["a", "b", "c", "d"]}"#,
        "a\n", "is not among the model's outputs"
      ),
      (Self.goodMetadata, nil, "dict.txt is missing"),
    ]
    for (metadata, labels, message) in cases {
      let error = detectorError(try bundle(metadata: metadata, labels: labels))
      #expect(error?.contains(message) == true, "\(metadata): \(error ?? "no error")")
    }
  }

  @Test func oversizedLabelFileIsRefusedBeforeReading() throws {
    let path = try bundle()
    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path).appendingPathComponent("dict.txt"))
    try handle.truncate(atOffset: UInt64(AutoMLBundle.maximumLabelsSize + 1))
    try handle.close()
    #expect(detectorError(path)?.contains("more than \(AutoMLBundle.maximumLabelsSize)") == true)
  }
}
