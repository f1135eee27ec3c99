// TFLite Support model metadata: the `TFLITE_METADATA` buffer of a model, a FlatBuffer of
// metadata_schema.fbs (identifier "M001") that names the model, describes each input and output
// tensor (image or bounding-box content, normalization, score calibration and thresholds,
// statistics, label files) and lists associated files, which are packed in a ZIP archive appended
// to the model. Reading verifies the buffer first, so malformed metadata throws
// ``ModelFormatError`` instead of crashing. Union members this reader does not model (tokenizers,
// audio) are kept as their type code.

/// The metadata that TFLite Support tooling embeds in a model (root table `ModelMetadata`).
public struct ModelMetadata: Hashable, Sendable {
  /// Name of the model.
  public var name: String?
  /// What the model does.
  public var description: String?
  /// The model creator's version string.
  public var version: String?
  /// The person or organisation who created the model.
  public var author: String?
  /// Licenses that apply to the model.
  public var license: String?
  /// Oldest metadata parser version that understands every populated field.
  public var minParserVersion: String?
  /// Metadata per subgraph; the first is the main subgraph.
  public var subgraphs: [SubGraphMetadata]
  /// Files associated with the whole model.
  public var associatedFiles: [AssociatedFile]

  /// Name of the model metadata entry that holds this FlatBuffer.
  public static let metadataName = "TFLITE_METADATA"

  /// Verifies and decodes a metadata FlatBuffer.
  public init(bytes: UnsafeRawBufferPointer, options: VerificationOptions = VerificationOptions(allowsUnknownUnionTypes: true)) throws {
    var verifier = FlatBufferVerifier(bytes: bytes, schema: .tfliteMetadata, options: options)
    let root = try verifier.verifyRoot()
    name = root.string(0)
    description = root.string(1)
    version = root.string(2)
    subgraphs = root.tables(3).map(SubGraphMetadata.init)
    author = root.string(4)
    license = root.string(5)
    associatedFiles = root.tables(6).map(AssociatedFile.init)
    minParserVersion = root.string(7)
  }
}

/// Metadata of one subgraph: its input and output tensors in `SubGraph.inputs`/`outputs` order.
public struct SubGraphMetadata: Hashable, Sendable {
  /// Name of the subgraph.
  public var name: String?
  /// What the subgraph does.
  public var description: String?
  /// One entry per subgraph input.
  public var inputTensors: [TensorMetadata]
  /// One entry per subgraph output.
  public var outputTensors: [TensorMetadata]
  /// Files associated with the subgraph.
  public var associatedFiles: [AssociatedFile]
  /// Processing that applies to all inputs together (tokenizers).
  public var inputProcessUnits: [ProcessUnit]
  /// Processing that applies to all outputs together.
  public var outputProcessUnits: [ProcessUnit]
  /// Named groups of input tensors.
  public var inputTensorGroups: [TensorGroup]
  /// Named groups of output tensors (for example a detector's location/category/score/count set).
  public var outputTensorGroups: [TensorGroup]

  init(_ table: FlatBufferTable) {
    name = table.string(0)
    description = table.string(1)
    inputTensors = table.tables(2).map(TensorMetadata.init)
    outputTensors = table.tables(3).map(TensorMetadata.init)
    associatedFiles = table.tables(4).map(AssociatedFile.init)
    inputProcessUnits = table.tables(5).map(ProcessUnit.init)
    outputProcessUnits = table.tables(6).map(ProcessUnit.init)
    inputTensorGroups = table.tables(7).map(TensorGroup.init)
    outputTensorGroups = table.tables(8).map(TensorGroup.init)
  }
}

/// Metadata of one input or output tensor.
public struct TensorMetadata: Hashable, Sendable {
  /// Name of the tensor as the metadata gives it (may differ from the graph's tensor name).
  public var name: String?
  /// What the tensor holds.
  public var description: String?
  /// One name per dimension.
  public var dimensionNames: [String]
  /// What kind of content the tensor holds, and over which dimensions.
  public var content: Content?
  /// Out-of-graph processing: normalization for inputs, calibration and thresholds for outputs.
  public var processUnits: [ProcessUnit]
  /// Per-channel value statistics.
  public var stats: Stats?
  /// Files associated with the tensor (label files, calibration parameters).
  public var associatedFiles: [AssociatedFile]

  init(_ table: FlatBufferTable) {
    name = table.string(0)
    description = table.string(1)
    dimensionNames = table.strings(2)
    content = table.table(3).map(Content.init)
    processUnits = table.tables(4).map(ProcessUnit.init)
    stats = table.table(5).map(Stats.init)
    associatedFiles = table.tables(6).map(AssociatedFile.init)
  }

  /// The normalization options among ``processUnits``, if any.
  public var normalization: NormalizationOptions? {
    processUnits.lazy.compactMap { if case .normalization(let options) = $0 { options } else { nil } }.first
  }

  /// The score calibration options among ``processUnits``, if any.
  public var scoreCalibration: ScoreCalibrationOptions? {
    processUnits.lazy.compactMap { if case .scoreCalibration(let options) = $0 { options } else { nil } }.first
  }

  /// The recommended score threshold among ``processUnits``, if any.
  public var scoreThreshold: Float? {
    processUnits.lazy.compactMap { if case .scoreThresholding(let threshold) = $0 { threshold } else { nil } }.first
  }
}

/// A file that belongs with the model, stored by `name` in the ZIP appended to it.
public struct AssociatedFile: Hashable, Sendable {
  /// What an associated file holds (schema enum `AssociatedFileType`).
  public enum FileType: Int8, Hashable, Sendable {
    /// Unknown or unspecified.
    case unknown = 0
    /// Human-readable descriptions.
    case descriptions = 1
    /// Labels, one per line, naming the positions along a tensor axis (classifier scores).
    case tensorAxisLabels = 2
    /// Labels, one per line, that tensor values index into (detector classes).
    case tensorValueLabels = 3
    /// Sigmoid score-calibration parameters, one CSV line per axis position.
    case tensorAxisScoreCalibration = 4
    /// A vocabulary for text models.
    case vocabulary = 5
    /// A ScaNN index file for embedding search.
    case scannIndexFile = 6
  }

  /// File name inside the appended ZIP.
  public var name: String?
  /// What the file is.
  public var description: String?
  /// How the file is used; codes this reader does not know read as `.unknown`.
  public var type: FileType
  /// Language of the file's labels (ISO 639-1, optionally with a region: "en", "en-US").
  public var locale: String?

  init(_ table: FlatBufferTable) {
    name = table.string(0)
    description = table.string(1)
    type = FileType(rawValue: table.scalar(2, default: Int8(0))) ?? .unknown
    locale = table.string(3)
  }
}

/// What a tensor holds (schema table `Content`).
public struct Content: Hashable, Sendable {
  /// The content's kind and its properties.
  public var properties: ContentProperties?
  /// The dimensions the content spans (`min...max`); nil means all but the batch axis.
  public var range: ClosedRange<Int32>?

  init(_ table: FlatBufferTable) {
    properties = ContentProperties(typeCode: table.scalar(0, default: UInt8(0)), table: table.table(1))
    range = table.table(2).map { range in
      let lower: Int32 = range.scalar(0, default: 0)
      return lower...max(lower, range.scalar(1, default: 0))
    }
  }
}

/// The kind of a tensor's content (schema union `ContentProperties`).
public enum ContentProperties: Hashable, Sendable {
  /// Generic features.
  case feature
  /// An image.
  case image(ImageProperties)
  /// Bounding boxes.
  case boundingBox(BoundingBoxProperties)
  /// A member this reader does not model (audio, or newer); `typeCode` is the union type code.
  case other(typeCode: UInt8)

  init?(typeCode: UInt8, table: FlatBufferTable?) {
    guard typeCode != 0 else { return nil }
    let table = table ?? .empty
    switch typeCode {
    case 1: self = .feature
    case 2: self = .image(ImageProperties(table))
    case 3: self = .boundingBox(BoundingBoxProperties(table))
    default: self = .other(typeCode: typeCode)
    }
  }
}

/// Properties of an image tensor.
public struct ImageProperties: Hashable, Sendable {
  /// Colour space of an image (schema enum `ColorSpaceType`).
  public enum ColorSpace: Int8, Hashable, Sendable {
    /// Unspecified.
    case unknown = 0
    /// Red, green, blue.
    case rgb = 1
    /// One luminance channel.
    case grayscale = 2
  }

  /// The colour space the model expects.
  public var colorSpace: ColorSpace
  /// Default width for tensors with dynamic shape.
  public var defaultWidth: UInt32?
  /// Default height for tensors with dynamic shape.
  public var defaultHeight: UInt32?

  init(_ table: FlatBufferTable) {
    colorSpace = ColorSpace(rawValue: table.scalar(0, default: Int8(0))) ?? .unknown
    let size = table.table(1)
    defaultWidth = size?.scalar(0, default: UInt32(0))
    defaultHeight = size?.scalar(1, default: UInt32(0))
  }
}

/// How a tensor encodes bounding boxes.
public struct BoundingBoxProperties: Hashable, Sendable {
  /// How four numbers describe a box (schema enum `BoundingBoxType`).
  public enum BoxType: Int8, Hashable, Sendable {
    /// Unspecified.
    case unknown = 0
    /// left, top, right, bottom.
    case boundaries = 1
    /// upper-left x, upper-left y, width, height.
    case upperLeft = 2
    /// centre x, centre y, width, height.
    case center = 3
  }

  /// Units of box coordinates (schema enum `CoordinateType`).
  public enum CoordinateType: Int8, Hashable, Sendable {
    /// Fractions of the image size, 0 to 1.
    case ratio = 0
    /// Pixels.
    case pixel = 1
  }

  /// Where each of the type's four values sits in the stored box; empty means the default order.
  public var index: [UInt32]
  /// How the four values describe the box.
  public var type: BoxType
  /// The units of the values.
  public var coordinateType: CoordinateType

  init(_ table: FlatBufferTable) {
    index = table.scalars(0)
    type = BoxType(rawValue: table.scalar(1, default: Int8(0))) ?? .unknown
    coordinateType = CoordinateType(rawValue: table.scalar(2, default: Int8(0))) ?? .ratio
  }
}

/// One out-of-graph processing step (schema table `ProcessUnit` and union `ProcessUnitOptions`).
public enum ProcessUnit: Hashable, Sendable {
  /// Normalize inputs by `(x - mean) / std`.
  case normalization(NormalizationOptions)
  /// Calibrate output scores with per-class sigmoids.
  case scoreCalibration(ScoreCalibrationOptions)
  /// Drop results scoring below this global threshold.
  case scoreThresholding(globalScoreThreshold: Float)
  /// A step this reader does not model (tokenizers, or newer); `typeCode` is the union type code.
  case other(typeCode: UInt8)

  init(_ table: FlatBufferTable) {
    let typeCode: UInt8 = table.scalar(0, default: 0)
    let options = table.table(1) ?? .empty
    switch typeCode {
    case 1: self = .normalization(NormalizationOptions(mean: options.scalars(0), std: options.scalars(1)))
    case 2:
      let transformation = ScoreCalibrationOptions.Transformation(rawValue: options.scalar(0, default: Int8(0))) ?? .identity
      self = .scoreCalibration(ScoreCalibrationOptions(transformation: transformation, defaultScore: options.scalar(1, default: 0)))
    case 3: self = .scoreThresholding(globalScoreThreshold: options.scalar(0, default: 0))
    default: self = .other(typeCode: typeCode)
    }
  }
}

/// Per-channel normalization parameters; a single value applies to every channel.
public struct NormalizationOptions: Hashable, Sendable {
  /// Per-channel mean.
  public var mean: [Float]
  /// Per-channel standard deviation.
  public var std: [Float]

  /// Creates options from per-channel means and standard deviations.
  public init(mean: [Float], std: [Float]) {
    self.mean = mean
    self.std = std
  }
}

/// Sigmoid score calibration: `scale / (1 + exp(-(slope * g(x) + offset)))` per class, with
/// parameters from the tensor's `tensorAxisScoreCalibration` file.
public struct ScoreCalibrationOptions: Hashable, Sendable {
  /// The transform `g` applied to raw scores first (schema enum `ScoreTransformationType`).
  public enum Transformation: Int8, Hashable, Sendable {
    /// g(x) = x.
    case identity = 0
    /// g(x) = log(x).
    case log = 1
    /// g(x) = log(x) - log(1 - x).
    case inverseLogistic = 2
  }

  /// The transform applied before the sigmoid.
  public var transformation: Transformation
  /// The score given below a class's minimum score, or to classes without parameters.
  public var defaultScore: Float

  /// Creates options from a transform and a default score.
  public init(transformation: Transformation, defaultScore: Float) {
    self.transformation = transformation
    self.defaultScore = defaultScore
  }
}

/// Per-channel value statistics of a tensor.
public struct Stats: Hashable, Sendable {
  /// Per-channel maxima.
  public var max: [Float]
  /// Per-channel minima.
  public var min: [Float]

  init(_ table: FlatBufferTable) {
    max = table.scalars(0)
    min = table.scalars(1)
  }
}

/// A named group of tensors (by metadata tensor name).
public struct TensorGroup: Hashable, Sendable {
  /// Name of the group.
  public var name: String?
  /// Names of the tensors in the group.
  public var tensorNames: [String]

  init(_ table: FlatBufferTable) {
    name = table.string(0)
    tensorNames = table.strings(1)
  }
}

extension TFLiteModel {
  /// The model's TFLite Support metadata, or nil when it has no `TFLITE_METADATA` entry.
  public func modelMetadata() throws -> ModelMetadata? {
    try metadata(named: ModelMetadata.metadataName).map { try ModelMetadata(bytes: $0) }
  }
}
