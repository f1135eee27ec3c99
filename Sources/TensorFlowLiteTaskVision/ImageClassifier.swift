// ImageClassifier: every output of shape [1, N] or [1, 1, 1, N] is a classification head whose
// classes are named by its TENSOR_AXIS_LABELS files (or the options' labels). Scores are the
// dequantized output values, calibrated when the metadata says so; classes scoring below the
// threshold (options, else metadata) or excluded by the allow/deny lists are dropped, the rest are
// sorted by score (ties: lower index first) and cut to `maxResults`.

import TFLiteFormat
import TFLiteImage

/// Classifies images with a model whose outputs are per-class scores.
public final class ImageClassifier {
  /// The options it was made with.
  public let options: ImageClassifierOptions
  private let model: VisionModel
  /// Per head: labels, calibration, threshold, name.
  private let heads: [Head]

  private struct Head {
    var labels: LabelMap?
    var calibration: ScoreCalibration?
    var scoreThreshold: Float?
    var name: String?
  }

  /// A classifier for `options.baseOptions.modelFile.filePath`.
  public static func classifier(options: ImageClassifierOptions) throws -> ImageClassifier {
    try ImageClassifier(options: options)
  }

  /// A classifier for `options.baseOptions.modelFile.filePath`; throws a ``TaskVisionError`` when the
  /// model's outputs are not class scores or its metadata disagrees with them.
  public init(options: ImageClassifierOptions) throws(TaskVisionError) {
    try options.classificationOptions.validate()
    guard let path = options.baseOptions.modelFile.filePath else { throw TaskVisionError("no model path in baseOptions.modelFile") }
    self.options = options
    model = try VisionModel(
      path: path, threads: options.baseOptions.computeSettings.cpuSettings.numThreads, inputOptions: options.inputOptions)
    let model = self.model
    heads = try (0..<model.interpreter.outputTensorCount).map { position throws(TaskVisionError) in
      let metadata = model.outputMetadata.indices.contains(position) ? model.outputMetadata[position] : nil
      var labels = options.inputOptions.labels.map { LabelMap(labels: $0, displayNames: nil) }
      if labels == nil, let metadata {
        labels = try LabelMap.fromMetadata(
          metadata, type: .tensorAxisLabels, locale: options.classificationOptions.displayNamesLocale, files: model.files)
      }
      return Head(
        labels: labels,
        calibration: try metadata.map { tensor throws(TaskVisionError) in try ScoreCalibration.fromMetadata(tensor, files: model.files) } ?? nil,
        scoreThreshold: options.classificationOptions.scoreThreshold ?? metadata?.scoreThreshold, name: metadata?.name)
    }
  }

  /// Classifies `mlImage`: one ``Classifications`` per output.
  public func classify(mlImage: MLImage) throws(TaskVisionError) -> ClassificationResult {
    try model.run(mlImage.image)
    let classification = options.classificationOptions
    let results = try heads.enumerated().map { position, head throws(TaskVisionError) in
      let (scores, shape, name) = try model.output(position)
      guard shape.first == 1, shape.dropFirst().dropLast().allSatisfy({ $0 == 1 }), [2, 4].contains(shape.count) else {
        throw TaskVisionError("output \(position) (\(name)) has shape \(shape); a classifier's outputs are [1, N] or [1, 1, 1, N]")
      }
      if let labels = head.labels?.labels, labels.count != scores.count {
        throw TaskVisionError("output \(position) (\(name)) has \(scores.count) classes but its label file has \(labels.count) lines")
      }
      var categories = scores.enumerated().compactMap { index, raw -> ClassificationCategory? in
        let score = head.calibration?.calibrate(raw, classIndex: index) ?? raw
        if let threshold = head.scoreThreshold, score < threshold { return nil }
        let names = head.labels?.names(of: index) ?? (label: nil, displayName: nil)
        guard classification.admits(label: names.label) else { return nil }
        return ClassificationCategory(index: index, score: score, label: names.label, displayName: names.displayName)
      }
      categories.sort { ($0.score, $1.index) > ($1.score, $0.index) }
      if classification.maxResults > 0 { categories = Array(categories.prefix(classification.maxResults)) }
      return Classifications(headIndex: position, headName: head.name, categories: categories)
    }
    return ClassificationResult(classifications: results)
  }
}
