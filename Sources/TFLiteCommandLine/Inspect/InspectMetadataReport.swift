import TFLiteFormat
import TensorFlowLiteTaskVision

/// The TFLite Support metadata (`TFLITE_METADATA`) part of `tflite inspect`, as text lines and as
/// the `tflite_metadata` JSON object (README.md, "tflite inspect --json"). Metadata that fails
/// verification is reported as an error, not a failure of the whole inspection. Associated files
/// are looked up in the ZIP appended to the model and their lines counted (labels per file).
struct InspectMetadataReport {
  /// The decoded metadata, nil when the model has none.
  let metadata: ModelMetadata?
  /// Why the metadata could not be read, when it could not.
  let failure: String?
  /// Lines of each associated file found in the appended ZIP (trailing empty lines not counted).
  let lineCounts: [String: Int]
  /// Why the appended ZIP could not be read, when it could not.
  let archiveFailure: String?

  /// Reads the metadata of `file` and its associated files, keeping failures as text.
  init(file: TFLiteModel) {
    do {
      metadata = try file.modelMetadata()
      failure = nil
    } catch {
      metadata = nil
      failure = "\(error)"
    }
    var lineCounts: [String: Int] = [:]
    var archiveFailure: String?
    if let metadata {
      let subgraphFiles = metadata.subgraphs.flatMap { subgraph in
        subgraph.associatedFiles + (subgraph.inputTensors + subgraph.outputTensors).flatMap(\.associatedFiles)
      }
      let names = (metadata.associatedFiles + subgraphFiles).compactMap(\.name)
      if !names.isEmpty {
        do {
          let archive = try ModelAssociatedFiles(modelBytes: [UInt8](file.bytes))
          for name in names where archive.names.contains(name) { lineCounts[name] = try archive.lines(of: name).count }
        } catch {
          archiveFailure = "\(error)"
        }
      }
    }
    self.lineCounts = lineCounts
    self.archiveFailure = archiveFailure
  }

  // MARK: JSON

  /// The `tflite_metadata` value: null without metadata, `{"error": …}` when unreadable.
  func json() -> JSONValue {
    if let failure { return .object([("error", .string(failure))]) }
    guard let metadata else { return .null }
    return .object([
      ("name", .string(metadata.name)),
      ("description", .string(metadata.description)),
      ("version", .string(metadata.version)),
      ("author", .string(metadata.author)),
      ("license", .string(metadata.license)),
      ("min_parser_version", .string(metadata.minParserVersion)),
      ("associated_files", .array(metadata.associatedFiles.map(json))),
      ("subgraphs", .array(metadata.subgraphs.map(json))),
    ])
  }

  private func json(_ subgraph: SubGraphMetadata) -> JSONValue {
    .object([
      ("name", .string(subgraph.name)),
      ("description", .string(subgraph.description)),
      ("inputs", .array(subgraph.inputTensors.map(json))),
      ("outputs", .array(subgraph.outputTensors.map(json))),
      ("associated_files", .array(subgraph.associatedFiles.map(json))),
      ("input_tensor_groups", .array(subgraph.inputTensorGroups.map(json))),
      ("output_tensor_groups", .array(subgraph.outputTensorGroups.map(json))),
    ])
  }

  private func json(_ group: TensorGroup) -> JSONValue {
    .object([("name", .string(group.name)), ("tensor_names", .array(group.tensorNames.map { .string($0) }))])
  }

  private func json(_ tensor: TensorMetadata) -> JSONValue {
    .object([
      ("name", .string(tensor.name)),
      ("description", .string(tensor.description)),
      ("dimension_names", .array(tensor.dimensionNames.map { .string($0) })),
      ("content", tensor.content.map(json) ?? .null),
      ("process_units", .array(tensor.processUnits.map(json))),
      ("stats", tensor.stats.map { .object([("min", floats($0.min)), ("max", floats($0.max))]) } ?? .null),
      ("associated_files", .array(tensor.associatedFiles.map(json))),
    ])
  }

  private func json(_ content: Content) -> JSONValue {
    var members: [(String, JSONValue)] = []
    switch content.properties {
    case nil: members.append(("kind", .null))
    case .feature?: members.append(("kind", .string("feature")))
    case .image(let image)?:
      members += [
        ("kind", .string("image")), ("color_space", .string(Self.name(of: image.colorSpace))),
        ("default_width", image.defaultWidth.map { .int($0) } ?? .null),
        ("default_height", image.defaultHeight.map { .int($0) } ?? .null),
      ]
    case .boundingBox(let boxes)?:
      members += [
        ("kind", .string("bounding_box")), ("box_type", .string(Self.name(of: boxes.type))),
        ("coordinate_type", .string(boxes.coordinateType == .ratio ? "RATIO" : "PIXEL")), ("index", .ints(boxes.index)),
      ]
    case .other(let typeCode)?: members += [("kind", .string("other")), ("type_code", .int(typeCode))]
    }
    members.append(("range", content.range.map { .ints([$0.lowerBound, $0.upperBound]) } ?? .null))
    return .object(members)
  }

  private func json(_ unit: ProcessUnit) -> JSONValue {
    switch unit {
    case .normalization(let options):
      return .object([("type", .string("normalization")), ("mean", floats(options.mean)), ("std", floats(options.std))])
    case .scoreCalibration(let options):
      return .object([
        ("type", .string("score_calibration")), ("score_transformation", .string(Self.name(of: options.transformation))),
        ("default_score", .float(options.defaultScore)),
      ])
    case .scoreThresholding(let threshold):
      return .object([("type", .string("score_thresholding")), ("global_score_threshold", .float(threshold))])
    case .other(let typeCode):
      return .object([("type", .string("other")), ("type_code", .int(typeCode))])
    }
  }

  private func json(_ file: AssociatedFile) -> JSONValue {
    .object([
      ("name", .string(file.name)), ("description", .string(file.description)),
      ("type", .string(Self.name(of: file.type))), ("locale", .string(file.locale)),
      ("line_count", file.name.flatMap { lineCounts[$0] }.map { .int($0) } ?? .null),
    ])
  }

  private func floats(_ values: [Float]) -> JSONValue { .array(values.map { .float($0) }) }

  // MARK: Text

  /// The text section: a summary of each tensor's content, processing and files.
  func lines() -> [String] {
    if let failure { return ["tflite metadata: unreadable (\(failure))"] }
    guard let metadata else { return ["tflite metadata: (none)"] }
    var lines = ["tflite metadata: \(metadata.name ?? "(unnamed)")" + (metadata.version.map { " version \($0)" } ?? "")]
    for (label, value) in [("description", metadata.description), ("author", metadata.author), ("license", metadata.license), ("min parser", metadata.minParserVersion)] {
      if let value { lines.append("  \(label): \(value)") }
    }
    lines += metadata.associatedFiles.map { "  file " + describe($0) }
    if let archiveFailure { lines.append("  associated files unreadable: \(archiveFailure)") }
    for (index, subgraph) in metadata.subgraphs.enumerated() {
      lines.append("  subgraph \(index)" + (subgraph.name.map { " \"\($0)\"" } ?? "") + ":")
      for (title, tensors) in [("input", subgraph.inputTensors), ("output", subgraph.outputTensors)] {
        for (position, tensor) in tensors.enumerated() {
          lines.append("    \(title) \(position) \"\(tensor.name ?? "")\"" + (tensor.content.map { ": " + describe($0) } ?? ""))
          lines += tensor.processUnits.map { "      " + describe($0) }
          if let stats = tensor.stats { lines.append("      stats min \(stats.min) max \(stats.max)") }
          lines += tensor.associatedFiles.map { "      file " + describe($0) }
        }
      }
      for group in subgraph.inputTensorGroups + subgraph.outputTensorGroups {
        lines.append("    group \"\(group.name ?? "")\": \(group.tensorNames.joined(separator: ", "))")
      }
    }
    return lines
  }

  private func describe(_ content: Content) -> String {
    let range = content.range.map { " over dimensions \($0.lowerBound)...\($0.upperBound)" } ?? ""
    switch content.properties {
    case nil: return "no content kind" + range
    case .feature?: return "feature" + range
    case .image(let image)?:
      let size = image.defaultWidth.map { w in " \(w)x\(image.defaultHeight ?? 0)" } ?? ""
      return "image \(Self.name(of: image.colorSpace))\(size)" + range
    case .boundingBox(let boxes)?:
      let order = boxes.index.isEmpty ? "" : " index \(boxes.index)"
      return "bounding boxes \(Self.name(of: boxes.type)) \(boxes.coordinateType == .ratio ? "RATIO" : "PIXEL")\(order)" + range
    case .other(let typeCode)?: return "content type \(typeCode)" + range
    }
  }

  private func describe(_ unit: ProcessUnit) -> String {
    switch unit {
    case .normalization(let options): return "normalize mean \(options.mean) std \(options.std)"
    case .scoreCalibration(let options):
      return "score calibration \(Self.name(of: options.transformation)), default score \(options.defaultScore)"
    case .scoreThresholding(let threshold): return "score threshold \(threshold)"
    case .other(let typeCode): return "process unit type \(typeCode)"
    }
  }

  private func describe(_ file: AssociatedFile) -> String {
    let count = file.name.flatMap { lineCounts[$0] }.map { " (\($0) line\($0 == 1 ? "" : "s"))" } ?? " (not in the model's ZIP)"
    return "\(file.name ?? "(unnamed)") \(Self.name(of: file.type))" + (file.locale.map { " locale \($0)" } ?? "") + count
  }

  // MARK: Schema names

  private static func name(of type: AssociatedFile.FileType) -> String {
    switch type {
    case .unknown: "UNKNOWN"
    case .descriptions: "DESCRIPTIONS"
    case .tensorAxisLabels: "TENSOR_AXIS_LABELS"
    case .tensorValueLabels: "TENSOR_VALUE_LABELS"
    case .tensorAxisScoreCalibration: "TENSOR_AXIS_SCORE_CALIBRATION"
    case .vocabulary: "VOCABULARY"
    case .scannIndexFile: "SCANN_INDEX_FILE"
    }
  }

  private static func name(of space: ImageProperties.ColorSpace) -> String {
    switch space {
    case .unknown: "UNKNOWN"
    case .rgb: "RGB"
    case .grayscale: "GRAYSCALE"
    }
  }

  private static func name(of type: BoundingBoxProperties.BoxType) -> String {
    switch type {
    case .unknown: "UNKNOWN"
    case .boundaries: "BOUNDARIES"
    case .upperLeft: "UPPER_LEFT"
    case .center: "CENTER"
    }
  }

  private static func name(of transformation: ScoreCalibrationOptions.Transformation) -> String {
    switch transformation {
    case .identity: "IDENTITY"
    case .log: "LOG"
    case .inverseLogistic: "INVERSE_LOGISTIC"
    }
  }
}
