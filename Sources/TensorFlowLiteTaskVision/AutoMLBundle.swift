// AutoML Vision Edge export bundles: `model.tflite`, `dict.txt` and `tflite_metadata.json` in one
// folder (or three files given one by one). `dict.txt` has one label per line, line k naming class
// k, with no background line; trailing empty lines are ignored. `tflite_metadata.json` keys:
// `inferenceType` (string), `inputShape` ([batch, height, width, channels]), `inputTensor` (the
// input's name), `maxDetections` (int), `outputTensorRepresentation` (which output is
// "bounding_boxes", "class_labels", "class_confidences", "num_of_boxes") and `outputTensors` (the
// output tensor names in the same order). Every key is optional; a key of the wrong type, an
// unknown representation, or a file above its size cap throws. Agreement with the model's tensors is
// checked when a detector is made from the bundle.

import Foundation

/// An AutoML Vision Edge export: the model path, its labels and its `tflite_metadata.json` keys.
public struct AutoMLBundle: Sendable, Equatable {
  /// The largest `tflite_metadata.json` read.
  public static let maximumMetadataSize = 1 << 20
  /// The largest `dict.txt` read.
  public static let maximumLabelsSize = 16 << 20
  /// The representation names of a detector's four outputs, in `TFLite_Detection_PostProcess` order.
  public static let detectorRepresentations = ["bounding_boxes", "class_labels", "class_confidences", "num_of_boxes"]

  /// Path of `model.tflite`.
  public let modelPath: String
  /// Class names, index k on line k.
  public let labels: [String]
  /// `inferenceType` (for example "QUANTIZED_UINT8").
  public let inferenceType: String?
  /// `inputShape`: [batch, height, width, channels].
  public let inputShape: [Int]?
  /// `inputTensor`: the name of the model's input.
  public let inputTensorName: String?
  /// `maxDetections`.
  public let maxDetections: Int?
  /// Output tensor names keyed by their representation (`bounding_boxes`, ...).
  public let outputTensorNames: [String: String]

  /// The bundle in `path`: a folder holding the three files, or the `model.tflite` of such a folder.
  /// Returns nil when `path` is a model file without `dict.txt` and `tflite_metadata.json` beside it.
  public init?(path: String) throws(TaskVisionError) {
    var isFolder: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
      throw TaskVisionError("\(path) does not exist")
    }
    let folder = isFolder.boolValue ? URL(fileURLWithPath: path) : URL(fileURLWithPath: path).deletingLastPathComponent()
    let model = isFolder.boolValue ? folder.appendingPathComponent("model.tflite").path : path
    let labels = folder.appendingPathComponent("dict.txt").path
    let metadata = folder.appendingPathComponent("tflite_metadata.json").path
    let hasBundleFiles = [labels, metadata].allSatisfy { FileManager.default.fileExists(atPath: $0) }
    guard hasBundleFiles || isFolder.boolValue else { return nil }
    try self.init(modelPath: model, labelsPath: labels, metadataPath: metadata)
  }

  /// The bundle made of the three files.
  public init(modelPath: String, labelsPath: String, metadataPath: String) throws(TaskVisionError) {
    guard FileManager.default.fileExists(atPath: modelPath) else {
      throw TaskVisionError("AutoML bundle: the model \(modelPath) does not exist")
    }
    let labelBytes = try Self.read(labelsPath, limit: Self.maximumLabelsSize)
    try self.init(
      modelPath: modelPath, labels: ModelAssociatedFiles.labelLines(labelBytes),
      metadataJSON: try Self.read(metadataPath, limit: Self.maximumMetadataSize))
  }

  /// A bundle from its model path, labels and the bytes of `tflite_metadata.json`.
  public init(modelPath: String, labels: [String], metadataJSON: [UInt8]) throws(TaskVisionError) {
    let parsed: Any
    do {
      parsed = try JSONSerialization.jsonObject(with: Data(metadataJSON))
    } catch {
      throw TaskVisionError("AutoML bundle: tflite_metadata.json is not JSON (\(error.localizedDescription))")
    }
    guard let keys = parsed as? [String: Any] else {
      throw TaskVisionError("AutoML bundle: tflite_metadata.json is not a JSON object")
    }
    self.modelPath = modelPath
    self.labels = labels
    inferenceType = try Self.value(keys, "inferenceType", as: String.self)
    inputTensorName = try Self.value(keys, "inputTensor", as: String.self)
    inputShape = try Self.integers(keys, "inputShape")
    if let shape = inputShape, shape.count != 4 || shape.contains(where: { $0 <= 0 }) {
      throw TaskVisionError("AutoML bundle: inputShape \(shape) is not [batch, height, width, channels] of positive sizes")
    }
    maxDetections = try Self.integers(keys, "maxDetections", single: true)?.first
    if let count = maxDetections, count <= 0 {
      throw TaskVisionError("AutoML bundle: maxDetections \(count) is not positive")
    }
    let representation = try Self.value(keys, "outputTensorRepresentation", as: [String].self)
    let names = try Self.value(keys, "outputTensors", as: [String].self)
    switch (representation, names) {
    case (nil, nil):
      outputTensorNames = [:]
    case (let representation?, let names?) where representation.count == names.count:
      for name in representation where !Self.detectorRepresentations.contains(name) {
        throw TaskVisionError(
          "AutoML bundle: unknown output representation \"\(name)\" (expected \(Self.detectorRepresentations.joined(separator: ", ")))")
      }
      guard Set(representation).count == representation.count else {
        throw TaskVisionError("AutoML bundle: outputTensorRepresentation \(representation) names an output twice")
      }
      outputTensorNames = Dictionary(uniqueKeysWithValues: zip(representation, names))
    default:
      throw TaskVisionError("AutoML bundle: outputTensorRepresentation and outputTensors must both be given, with one entry each per output")
    }
  }

  /// The file's bytes; throws when it is missing or larger than `limit`.
  private static func read(_ path: String, limit: Int) throws(TaskVisionError) -> [UInt8] {
    let name = URL(fileURLWithPath: path).lastPathComponent
    guard let attributes = try? FileManager.default.attributesOfItem(atPath: path) else {
      throw TaskVisionError("AutoML bundle: \(name) is missing (\(path))")
    }
    let size = (attributes[.size] as? NSNumber)?.intValue ?? 0
    guard size <= limit else { throw TaskVisionError("AutoML bundle: \(name) has \(size) bytes, more than \(limit)") }
    guard let data = FileManager.default.contents(atPath: path) else {
      throw TaskVisionError("AutoML bundle: cannot read \(path)")
    }
    return [UInt8](data)
  }

  /// `keys[key]` as `type`, nil when absent; throws when it has another type.
  private static func value<Value>(_ keys: [String: Any], _ key: String, as type: Value.Type) throws(TaskVisionError) -> Value? {
    guard let raw = keys[key], !(raw is NSNull) else { return nil }
    guard let value = raw as? Value else {
      throw TaskVisionError("AutoML bundle: \(key) in tflite_metadata.json has the wrong type (\(Swift.type(of: raw)))")
    }
    return value
  }

  /// `keys[key]` as whole numbers (a list, or one number when `single`), nil when absent; throws for
  /// anything else, fractions and values beyond 2^31.
  private static func integers(_ keys: [String: Any], _ key: String, single: Bool = false) throws(TaskVisionError) -> [Int]? {
    guard let raw = keys[key], !(raw is NSNull) else { return nil }
    let items: [Any]? = single ? [raw] : raw as? [Any]
    let numbers = items?.compactMap { item -> Int? in
      guard let number = item as? NSNumber, let value = Double(exactly: number.doubleValue),
        value.rounded() == value, abs(value) < 2_147_483_648
      else { return nil }
      return Int(value)
    }
    guard let numbers, numbers.count == items?.count else {
      throw TaskVisionError("AutoML bundle: \(key) in tflite_metadata.json is not \(single ? "a whole number" : "a list of whole numbers")")
    }
    return numbers
  }
}
