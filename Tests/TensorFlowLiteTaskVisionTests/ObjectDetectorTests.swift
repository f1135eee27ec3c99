import Foundation
import TFLiteFormat
import TFLiteImage
import Testing
@testable import TensorFlowLiteTaskVision

@Suite struct ObjectDetectorTests {
  /// Compares detections with LiteRT's results: same classes, labels and order, scores to 1e-6, boxes to 1e-3 px.
  func expectMatches(
    _ detections: [Detection], _ expected: [TaskVisionFixtures.ExpectedDetection], displayNames: Bool,
    sourceLocation: SourceLocation = #_sourceLocation
  ) {
    #expect(detections.count == expected.count, sourceLocation: sourceLocation)
    for (detection, reference) in zip(detections, expected) {
      let category = detection.categories[0]
      #expect(detection.categories.count == 1, sourceLocation: sourceLocation)
      #expect(category.index == reference.index, sourceLocation: sourceLocation)
      #expect(category.label == reference.label, sourceLocation: sourceLocation)
      #expect(category.displayName == (displayNames ? reference.display_name : nil), sourceLocation: sourceLocation)
      #expect(abs(category.score - reference.score) <= 1e-6, sourceLocation: sourceLocation)
      let box = detection.boundingBox
      for (actual, wanted) in [
        (box.minX, reference.box.left), (box.minY, reference.box.top), (box.maxX, reference.box.right),
        (box.maxY, reference.box.bottom),
      ] {
        #expect(abs(Double(actual) - wanted) <= 1e-3, "box \(box) vs \(reference.box)", sourceLocation: sourceLocation)
      }
    }
  }

  @Test func metadataDetectorMatchesLiteRT() throws {
    var options = ObjectDetectorOptions(modelPath: TaskVisionFixtures.path("ssd_mini_metadata.tflite"))
    options.classificationOptions.displayNamesLocale = "fr"
    let detector = try ObjectDetector.detector(options: options)
    let result = try detector.detect(mlImage: MLImage(image: TaskVisionFixtures.scene()))
    let expected = try TaskVisionFixtures.expected().metadata_detector
    #expect(!expected.isEmpty)
    expectMatches(result.detections, expected, displayNames: true)
    // Calibration and the metadata threshold 0.3 drop class 2 (no calibration line: default score 0.05).
    #expect(!result.detections.contains { $0.categories[0].index == 2 })
  }

  @Test func defaultLocaleHasNoDisplayNames() throws {
    let detector = try ObjectDetector(options: ObjectDetectorOptions(modelPath: TaskVisionFixtures.path("ssd_mini_metadata.tflite")))
    let result = try detector.detect(mlImage: MLImage(image: TaskVisionFixtures.scene()))
    expectMatches(result.detections, try TaskVisionFixtures.expected().metadata_detector, displayNames: false)
  }

  @Test func autoMLBundleFolderAndModelPathMatchLiteRT() throws {
    let expected = try TaskVisionFixtures.expected().bundle_detector
    for path in [TaskVisionFixtures.path("automl_bundle"), TaskVisionFixtures.path("automl_bundle/model.tflite")] {
      var options = ObjectDetectorOptions(modelPath: path)
      options.inputOptions.normalization = NormalizationOptions(mean: [0], std: [255])
      let detector = try ObjectDetector(options: options)
      #expect(detector.bundle?.labels == ["circle", "square", "triangle", "star", "ring"])
      #expect(detector.bundle?.maxDetections == 10)
      expectMatches(try detector.detect(mlImage: MLImage(image: TaskVisionFixtures.scene())).detections, expected, displayNames: false)
    }
  }

  @Test func quantizedAutoMLBundleMatchesLiteRT() throws {
    // uint8 input (raw pixels, no normalization needed), uint8 encodings and scores into the post-process op.
    let detector = try ObjectDetector(options: ObjectDetectorOptions(modelPath: TaskVisionFixtures.path("automl_uint8")))
    #expect(detector.bundle?.inferenceType == "QUANTIZED_UINT8")
    let expected = try TaskVisionFixtures.expected().uint8_bundle_detector
    #expect(!expected.isEmpty)
    expectMatches(try detector.detect(mlImage: MLImage(image: TaskVisionFixtures.scene())).detections, expected, displayNames: false)
  }

  @Test func classificationOptionsFilterDetections() throws {
    let expected = try TaskVisionFixtures.expected().metadata_detector
    let scene = MLImage(image: try TaskVisionFixtures.scene())
    func detect(_ change: (inout ClassificationOptions) -> Void) throws -> [Detection] {
      var options = ObjectDetectorOptions(modelPath: TaskVisionFixtures.path("ssd_mini_metadata.tflite"))
      change(&options.classificationOptions)
      return try ObjectDetector(options: options).detect(mlImage: scene).detections
    }
    #expect(try detect { $0.maxResults = 2 }.map(\.categories[0].index) == expected.prefix(2).map(\.index))
    #expect(try detect { $0.labelAllowList = ["star"] }.count == expected.filter { $0.label == "star" }.count)
    #expect(try detect { $0.labelDenyList = ["star"] }.count == expected.filter { $0.label != "star" }.count)
    #expect(try detect { $0.scoreThreshold = 0.8 }.count == expected.filter { $0.score >= 0.8 }.count)
    #expect(throws: TaskVisionError.self) { try detect { $0.labelAllowList = ["a"]; $0.labelDenyList = ["b"] } }
    #expect(throws: TaskVisionError.self) { try detect { $0.maxResults = 0 } }
  }

  @Test func floatModelWithoutNormalizationIsRefused() throws {
    #expect {
      try ObjectDetector(options: ObjectDetectorOptions(modelPath: TaskVisionFixtures.path("automl_bundle")))
    } throws: { error in
      "\(error)".contains("NormalizationOptions")
    }
  }

  @Test func classifierIsNotADetector() throws {
    #expect {
      try ObjectDetector(options: ObjectDetectorOptions(modelPath: TaskVisionFixtures.path("mobilenet_uint8_metadata.tflite")))
    } throws: { error in
      "\(error)".contains("not a detector")
    }
  }
}

@Suite struct ImageClassifierTests {
  @Test func metadataClassifierMatchesLiteRT() throws {
    let classifier = try ImageClassifier.classifier(
      options: ImageClassifierOptions(modelPath: TaskVisionFixtures.path("mobilenet_uint8_metadata.tflite")))
    let result = try classifier.classify(mlImage: MLImage(image: TaskVisionFixtures.scene()))
    let expected = try TaskVisionFixtures.expected().metadata_classifier
    #expect(result.classifications.count == 1)
    let categories = result.classifications[0].categories
    #expect(categories.map(\.index) == expected.map(\.index))
    #expect(categories.map(\.label) == expected.map(\.label))
    #expect(categories.map(\.score) == expected.map(\.score))
    #expect(result.classifications[0].headName == "probability")
  }

  @Test func int8ModelDrivenByOptionsMatchesLiteRT() throws {
    let path = TaskVisionFixtures.directory.deletingLastPathComponent().appendingPathComponent("networks/mobilenet_mini_int8.tflite").path
    var options = ImageClassifierOptions(modelPath: path)
    options.inputOptions.normalization = NormalizationOptions(mean: [0], std: [255])
    options.inputOptions.labels = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
    let categories = try ImageClassifier(options: options).classify(mlImage: MLImage(image: TaskVisionFixtures.scene()))
      .classifications[0].categories
    let expected = try TaskVisionFixtures.expected().int8_classifier
    #expect(categories.map(\.index) == expected.map(\.index))
    #expect(categories.map(\.label) == expected.map(\.label))
    #expect(categories.map(\.score) == expected.map(\.score))
  }

  @Test func maxResultsAndExplicitLabels() throws {
    var options = ImageClassifierOptions(modelPath: TaskVisionFixtures.path("mobilenet_uint8_metadata.tflite"))
    options.classificationOptions.maxResults = 3
    options.inputOptions.labels = (0..<10).map { "digit \($0)" }
    let categories = try ImageClassifier(options: options).classify(mlImage: MLImage(image: TaskVisionFixtures.scene()))
      .classifications[0].categories
    let expected = try TaskVisionFixtures.expected().metadata_classifier.prefix(3)
    #expect(categories.map(\.index) == expected.map(\.index))
    #expect(categories.map(\.label) == expected.map { "digit \($0.index)" })
  }

  @Test func labelCountMustMatchTheOutput() throws {
    var options = ImageClassifierOptions(modelPath: TaskVisionFixtures.path("mobilenet_uint8_metadata.tflite"))
    options.inputOptions.labels = ["only", "three", "labels"]
    #expect {
      try ImageClassifier(options: options).classify(mlImage: MLImage(image: TaskVisionFixtures.scene()))
    } throws: { error in
      "\(error)".contains("10 classes but its label file has 3 lines")
    }
  }

  @Test func grayAndAlphaImagesAreMadeRGB() throws {
    // A gray image and the same pixels as RGBA classify exactly as the RGB image with those values.
    let gray = try Image(width: 5, height: 4, channels: 1, pixels: (0..<20).map { UInt8($0 * 12) })
    let rgb = try Image(width: 5, height: 4, channels: 3, pixels: gray.pixels.flatMap { [$0, $0, $0] })
    let rgba = try Image(width: 5, height: 4, channels: 4, pixels: gray.pixels.flatMap { [$0, $0, $0, 7] })
    let classifier = try ImageClassifier(options: ImageClassifierOptions(modelPath: TaskVisionFixtures.path("mobilenet_uint8_metadata.tflite")))
    let reference = try classifier.classify(mlImage: MLImage(image: rgb))
    #expect(try classifier.classify(mlImage: MLImage(image: gray)) == reference)
    #expect(try classifier.classify(mlImage: MLImage(image: rgba)) == reference)
  }
}
