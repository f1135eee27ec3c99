// ObjectDetector: a model ending in TFLite_Detection_PostProcess (outputs: boxes [1, N, 4], class
// values [1, N], scores [1, N], count [1]) turned into labelled boxes in image pixels.
// Which output is which: the metadata's output tensor names ("location", "category", "score",
// "number of detections") when all four are present, else an AutoML bundle's
// outputTensorRepresentation, else the op's own order. Boxes: the "location" tensor's
// BoundingBoxProperties (default: (top, left, bottom, right) as fractions of the input, as the op
// writes them). Labels: TENSOR_VALUE_LABELS files of "category", the bundle's dict.txt, or the
// options' labels. Scores: calibrated by the "score" tensor's metadata, kept when ≥ the threshold
// (options, else metadata); allow/deny lists by label, then the first `maxResults` in model order.

import Foundation
import TFLiteFormat
import TFLiteImage

/// Finds objects in images with a `TFLite_Detection_PostProcess` detector.
public final class ObjectDetector {
  /// The options it was made with.
  public let options: ObjectDetectorOptions
  /// The AutoML bundle the model came from, if any.
  public let bundle: AutoMLBundle?
  private let model: VisionModel
  /// Output positions of boxes, classes, scores and count.
  private let outputPositions: [Int]
  /// N: the detection slots of the box output [1, N, 4].
  private let slotCount: Int
  private let boxProperties: BoundingBoxProperties.Layout
  private let labels: LabelMap?
  private let calibration: ScoreCalibration?
  private let scoreThreshold: Float?

  /// A detector for `options.baseOptions.modelFile.filePath` (a model, or an AutoML bundle).
  public static func detector(options: ObjectDetectorOptions) throws -> ObjectDetector {
    try ObjectDetector(options: options)
  }

  /// A detector for `options.baseOptions.modelFile.filePath` (a model, or an AutoML bundle); throws
  /// a ``TaskVisionError`` when the model is not a detector or its metadata or bundle disagrees with it.
  public init(options: ObjectDetectorOptions) throws(TaskVisionError) {
    try options.classificationOptions.validate()
    guard let path = options.baseOptions.modelFile.filePath else { throw TaskVisionError("no model path in baseOptions.modelFile") }
    self.options = options
    let bundle = try AutoMLBundle(path: path)
    let model = try VisionModel(
      path: bundle?.modelPath ?? path, threads: options.baseOptions.computeSettings.cpuSettings.numThreads,
      inputOptions: options.inputOptions)
    (self.bundle, self.model) = (bundle, model)
    let outputCount = model.interpreter.outputTensorCount
    guard outputCount == 4 else {
      throw TaskVisionError("not a detector: TFLite_Detection_PostProcess models have 4 outputs, this one has \(outputCount)")
    }
    let names = try (0..<4).map { index throws(TaskVisionError) in try model.output(index).name }
    let metadataNames = model.outputMetadata.map(\.name)
    let byMetadata = ["location", "category", "score", "number of detections"].compactMap { metadataNames.firstIndex(of: $0) }
    let positions: [Int]
    if let bundle, !bundle.outputTensorNames.isEmpty {
      positions = try AutoMLBundle.detectorRepresentations.map { representation throws(TaskVisionError) in
        guard let name = bundle.outputTensorNames[representation], let position = names.firstIndex(of: name) else {
          throw TaskVisionError(
            "AutoML bundle: output \"\(bundle.outputTensorNames[representation] ?? representation)\" is not among the model's outputs \(names)")
        }
        return position
      }
    } else {
      positions = byMetadata.count == 4 ? byMetadata : [0, 1, 2, 3]
    }
    outputPositions = positions
    let shapes = try positions.map { position throws(TaskVisionError) in try model.output(position).shape }
    guard shapes[0].count == 3, shapes[0][0] == 1, shapes[0][2] == 4, shapes[1] == [1, shapes[0][1]], shapes[2] == shapes[1],
      shapes[3].reduce(1, *) == 1
    else {
      throw TaskVisionError(
        "not a TFLite_Detection_PostProcess detector: boxes, classes, scores and count have shapes \(shapes.map(\.description).joined(separator: ", ")) (expected [1, N, 4], [1, N], [1, N], [1])")
    }
    slotCount = shapes[0][1]
    /// The metadata of the output playing `role` (0 boxes, 1 classes, 2 scores).
    func metadataOf(_ role: Int) -> TensorMetadata? {
      model.outputMetadata.indices.contains(positions[role]) ? model.outputMetadata[positions[role]] : nil
    }
    if case .boundingBox(let properties)? = metadataOf(0)?.content?.properties {
      boxProperties = try properties.layout()
    } else {
      boxProperties = BoundingBoxProperties.Layout(index: [1, 0, 3, 2], type: .boundaries, coordinateType: .ratio)
    }
    var labels = options.inputOptions.labels.map { LabelMap(labels: $0, displayNames: nil) }
    if labels == nil, let category = metadataOf(1) {
      labels = try LabelMap.fromMetadata(
        category, type: .tensorValueLabels, locale: options.classificationOptions.displayNamesLocale, files: model.files)
    }
    self.labels = labels ?? bundle.map { LabelMap(labels: $0.labels, displayNames: nil) }
    let scoreMetadata = metadataOf(2)
    calibration = try scoreMetadata.map { tensor throws(TaskVisionError) in try ScoreCalibration.fromMetadata(tensor, files: model.files) } ?? nil
    scoreThreshold = options.classificationOptions.scoreThreshold ?? scoreMetadata?.scoreThreshold
    try checkAgainstBundle()
  }

  /// Throws when the bundle's input shape, input name or maximum detections disagree with the model.
  private func checkAgainstBundle() throws(TaskVisionError) {
    guard let bundle else { return }
    let modelShape = [1, model.format.height, model.format.width, model.format.channels]
    if let shape = bundle.inputShape, shape != modelShape {
      throw TaskVisionError("AutoML bundle: inputShape \(shape) disagrees with the model's input \(modelShape)")
    }
    if let name = bundle.inputTensorName, name != model.inputName {
      throw TaskVisionError("AutoML bundle: inputTensor \"\(name)\" disagrees with the model's input \"\(model.inputName)\"")
    }
    if let maxDetections = bundle.maxDetections, maxDetections != slotCount {
      throw TaskVisionError("AutoML bundle: maxDetections \(maxDetections) disagrees with the model's \(slotCount) detection slots")
    }
  }

  /// Detects objects in `mlImage`; boxes are in its pixels.
  public func detect(mlImage: MLImage) throws(TaskVisionError) -> DetectionResult {
    try model.run(mlImage.image)
    let (boxes, classes, scores, count) = (
      try model.output(outputPositions[0]).values, try model.output(outputPositions[1]).values,
      try model.output(outputPositions[2]).values, try model.output(outputPositions[3]).values
    )
    guard count[0].isFinite, count[0] >= 0 else { throw TaskVisionError("the model reports \(count[0]) detections") }
    let reported = min(Int(count[0]), slotCount)
    let classification = options.classificationOptions
    var detections: [Detection] = []
    for slot in 0..<reported where classification.maxResults < 0 || detections.count < classification.maxResults {
      guard classes[slot].isFinite, classes[slot] >= 0, classes[slot] < 1e9 else {
        throw TaskVisionError("detection \(slot) has class value \(classes[slot])")
      }
      let index = Int(classes[slot])
      let score = calibration?.calibrate(scores[slot], classIndex: index) ?? scores[slot]
      if let scoreThreshold, score < scoreThreshold { continue }
      let names = labels?.names(of: index) ?? (label: nil, displayName: nil)
      guard classification.admits(label: names.label) else { continue }
      let box = boxProperties.edges(Array(boxes[(4 * slot)..<(4 * slot + 4)]))
      let (scaleX, scaleY) = boxProperties.coordinateType == .pixel ? (Float(model.format.width), Float(model.format.height)) : (1, 1)
      let (left, top) = model.format.imagePoint(x: box.left / scaleX, y: box.top / scaleY, imageWidth: mlImage.width, imageHeight: mlImage.height)
      let (right, bottom) = model.format.imagePoint(
        x: box.right / scaleX, y: box.bottom / scaleY, imageWidth: mlImage.width, imageHeight: mlImage.height)
      detections.append(
        Detection(
          boundingBox: CGRect(x: left, y: top, width: right - left, height: bottom - top),
          categories: [ClassificationCategory(index: index, score: score, label: names.label, displayName: names.displayName)]))
    }
    return DetectionResult(detections: detections)
  }
}

extension BoundingBoxProperties {
  /// A checked box layout: where each of the type's four values sits.
  struct Layout: Sendable {
    var index: [Int]
    var type: BoxType
    var coordinateType: CoordinateType

    /// (left, top, right, bottom) of the four stored values.
    func edges(_ stored: [Float]) -> (left: Float, top: Float, right: Float, bottom: Float) {
      let values = index.map { stored[$0] }
      switch type {
      case .upperLeft: return (values[0], values[1], values[0] + values[2], values[1] + values[3])
      case .center:
        return (values[0] - values[2] / 2, values[1] - values[3] / 2, values[0] + values[2] / 2, values[1] + values[3] / 2)
      default: return (values[0], values[1], values[2], values[3])
      }
    }
  }

  /// The layout; throws unless `index` is empty (default order) or a permutation of 0…3.
  func layout() throws(TaskVisionError) -> Layout {
    let order = index.isEmpty ? [0, 1, 2, 3] : index.map { Int($0) }
    guard order.sorted() == [0, 1, 2, 3] else {
      throw TaskVisionError("bounding box metadata index \(index) is not a permutation of 0, 1, 2, 3")
    }
    return Layout(index: order, type: type == .unknown ? .boundaries : type, coordinateType: coordinateType)
  }
}
