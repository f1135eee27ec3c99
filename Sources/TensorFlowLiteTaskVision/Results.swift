// Result types of the Task API, named as TensorFlow Lite's Task Library for iOS names them
// (TFLCategory → ClassificationCategory, TFLDetection, TFLDetectionResult, TFLClassifications,
// TFLClassificationResult). Boxes are CGRects in pixels of the image passed in (origin = left/top).

import Foundation

/// One class of a classification or detection.
public struct ClassificationCategory: Equatable, Sendable {
  /// The class index (position along the classifier's output axis, or the detector's class value).
  public let index: Int
  /// The score, calibrated when the metadata asks for it.
  public let score: Float
  /// The class name from the label file without locale (or the AutoML `dict.txt`, or the given labels).
  public let label: String?
  /// The class name in `displayNamesLocale`, from the label file with that locale.
  public let displayName: String?

  /// A category with the given fields.
  public init(index: Int, score: Float, label: String?, displayName: String?) {
    self.index = index
    self.score = score
    self.label = label
    self.displayName = displayName
  }
}

/// One detected object.
public struct Detection: Equatable, Sendable {
  /// The box in pixels of the input image: `origin` is the left/top corner.
  public let boundingBox: CGRect
  /// The object's classes, best first (one for `TFLite_Detection_PostProcess` detectors).
  public let categories: [ClassificationCategory]

  /// A detection with the given box and categories.
  public init(boundingBox: CGRect, categories: [ClassificationCategory]) {
    self.boundingBox = boundingBox
    self.categories = categories
  }
}

/// What ``ObjectDetector/detect(mlImage:)`` found, in the model's output order.
public struct DetectionResult: Equatable, Sendable {
  /// The detections kept by the score threshold, label lists and `maxResults`.
  public let detections: [Detection]
}

/// The classes of one classifier output (a "head").
public struct Classifications: Equatable, Sendable {
  /// The output's position among the model's outputs.
  public let headIndex: Int
  /// The output's name from the metadata, if any.
  public let headName: String?
  /// The kept classes, highest score first (ties: lower index first).
  public let categories: [ClassificationCategory]
}

/// What ``ImageClassifier/classify(mlImage:)`` found.
public struct ClassificationResult: Equatable, Sendable {
  /// One entry per classifier output.
  public let classifications: [Classifications]
}
