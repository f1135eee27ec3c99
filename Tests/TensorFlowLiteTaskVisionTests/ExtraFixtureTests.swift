// The fixtures of Scripts/make_taskvision_extra_fixtures.py: a classifier whose output is
// [1, 1, 1, N] (a 1×1 convolution and softmax without flattening), driven by its metadata, against
// LiteRT's scores on the test scene (TestModels/taskvision/expected_extra.json).
import Foundation
import TFLiteImage
import TensorFlowLiteTaskVision
import Testing

@Suite struct FourDimensionalClassifierTests {
  /// LiteRT's classes for the scene, best first.
  static func expectedClasses() throws -> [TaskVisionFixtures.ExpectedClass] {
    struct Entry: Decodable { var classes: [TaskVisionFixtures.ExpectedClass] }
    struct File: Decodable { var classifier_1x1xN: Entry }
    let data = try Data(contentsOf: TaskVisionFixtures.directory.appendingPathComponent("expected_extra.json"))
    return try JSONDecoder().decode(File.self, from: data).classifier_1x1xN.classes
  }

  @Test func classifiesLikeLiteRT() throws {
    var options = ImageClassifierOptions(modelPath: TaskVisionFixtures.path("classifier_1x1xN.tflite"))
    options.classificationOptions.maxResults = 4
    let result = try ImageClassifier.classifier(options: options).classify(mlImage: MLImage(image: TaskVisionFixtures.scene()))
    let expected = try Self.expectedClasses().prefix(4)
    #expect(result.classifications.count == 1)
    let categories = result.classifications[0].categories
    #expect(categories.map(\.index) == expected.map(\.index))
    #expect(categories.map(\.label) == expected.map(\.label))
    for (category, reference) in zip(categories, expected) {
      #expect(abs(category.score - reference.score) <= 1e-5, "\(category.label ?? "?"): \(category.score) vs \(reference.score)")
    }
  }
}
