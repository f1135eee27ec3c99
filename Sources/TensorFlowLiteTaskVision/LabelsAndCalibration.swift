// Labels and score calibration as TFLite Support metadata describes them.
// - Labels: the first associated file of the wanted type names the classes (`label`); the first file
//   of that type whose `locale` equals the requested locale gives `displayName`. Both must have the
//   same number of lines.
// - Sigmoid calibration: each line of the `TENSOR_AXIS_SCORE_CALIBRATION` file holds
//   `scale,slope,offset[,min_score]` for one class (an empty line: none). A raw score x becomes
//   scale / (1 + exp(−(slope · g(x) + offset))) with g the metadata's transform (identity, log, or
//   log(x) − log(1 − x)), computed in Double and rounded to Float; classes without parameters and
//   scores below min_score get the default score.

import Foundation
import TFLiteFormat

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Class names, and their display names in one locale.
struct LabelMap: Sendable {
  /// Names by class index.
  var labels: [String]
  /// Display names by class index, when a file in the requested locale exists.
  var displayNames: [String]?

  /// The label and display name of class `index`, nil outside the lists.
  func names(of index: Int) -> (label: String?, displayName: String?) {
    (labels.indices.contains(index) ? labels[index] : nil, displayNames.flatMap { $0.indices.contains(index) ? $0[index] : nil })
  }

  /// The labels of `tensor`'s first file of `type`, and display names from its file in `locale`;
  /// nil when the tensor has no such file.
  static func fromMetadata(
    _ tensor: TensorMetadata, type: AssociatedFile.FileType, locale: String, files: ModelAssociatedFiles
  ) throws(TaskVisionError) -> LabelMap? {
    let candidates = tensor.associatedFiles.filter { $0.type == type }
    guard let labelFile = candidates.first?.name else { return nil }
    let labels = try files.lines(of: labelFile)
    guard let displayFile = candidates.first(where: { $0.locale == locale })?.name else {
      return LabelMap(labels: labels, displayNames: nil)
    }
    let displayNames = try files.lines(of: displayFile)
    guard displayNames.count == labels.count else {
      throw TaskVisionError("label file \(labelFile) has \(labels.count) lines but \(displayFile) (locale \(locale)) has \(displayNames.count)")
    }
    return LabelMap(labels: labels, displayNames: displayNames)
  }
}

/// Per-class sigmoid calibration of scores.
struct ScoreCalibration: Sendable {
  /// One class's parameters.
  struct Sigmoid: Sendable {
    var scale: Double
    var slope: Double
    var offset: Double
    var minimumScore: Double?
  }

  /// The transform applied before the sigmoid.
  var transformation: ScoreCalibrationOptions.Transformation
  /// The score of classes without parameters and of scores below their minimum.
  var defaultScore: Float
  /// Parameters by class index (nil: the class has none).
  var sigmoids: [Sigmoid?]

  /// The calibration `options` describe, with parameters from the text of the calibration file.
  init(options: ScoreCalibrationOptions, fileLines: [String], fileName: String) throws(TaskVisionError) {
    transformation = options.transformation
    defaultScore = options.defaultScore
    sigmoids = []
    for (number, line) in fileLines.enumerated() {
      guard !line.trimmingCharacters(in: .whitespaces).isEmpty else {
        sigmoids.append(nil)
        continue
      }
      let values = line.split(separator: ",", omittingEmptySubsequences: false).map {
        Double($0.trimmingCharacters(in: .whitespaces))
      }
      guard [3, 4].contains(values.count), let parsed = values as? [Double], parsed.allSatisfy(\.isFinite), parsed[0] >= 0 else {
        throw TaskVisionError(
          "calibration file \(fileName), line \(number + 1): \"\(line.prefix(80))\" is not scale,slope,offset[,min_score] with finite numbers and scale ≥ 0")
      }
      sigmoids.append(Sigmoid(scale: parsed[0], slope: parsed[1], offset: parsed[2], minimumScore: parsed.count == 4 ? parsed[3] : nil))
    }
  }

  /// The calibrated score of raw score `score` for class `index`.
  func calibrate(_ score: Float, classIndex index: Int) -> Float {
    guard sigmoids.indices.contains(index), let sigmoid = sigmoids[index] else { return defaultScore }
    let x = Double(score)
    if let minimum = sigmoid.minimumScore, x < minimum { return defaultScore }
    let transformed: Double
    switch transformation {
    case .identity: transformed = x
    case .log: transformed = log(x)
    case .inverseLogistic: transformed = log(x) - log(1 - x)
    }
    let calibrated = sigmoid.scale / (1 + exp(-(sigmoid.slope * transformed + sigmoid.offset)))
    return calibrated.isNaN ? defaultScore : Float(calibrated)
  }

  /// The calibration of `tensor` (its `ScoreCalibrationOptions` and calibration file), or nil when it has none.
  static func fromMetadata(_ tensor: TensorMetadata, files: ModelAssociatedFiles) throws(TaskVisionError) -> ScoreCalibration? {
    guard let options = tensor.scoreCalibration else { return nil }
    guard let file = tensor.associatedFiles.first(where: { $0.type == .tensorAxisScoreCalibration })?.name else {
      throw TaskVisionError("tensor \(tensor.name ?? "?") asks for score calibration but has no TENSOR_AXIS_SCORE_CALIBRATION file")
    }
    return try ScoreCalibration(options: options, fileLines: try files.lines(of: file), fileName: file)
  }
}
