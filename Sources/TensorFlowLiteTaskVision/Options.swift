// Options of the Task API with the Task Library for iOS's names (TFLBaseOptions,
// TFLClassificationOptions, TFLObjectDetectorOptions, TFLImageClassifierOptions), plus what a model
// without metadata needs: explicit labels, normalization and the way the image is fitted.

import TFLiteFormat
import TFLiteImage

/// Where the model is and how it runs.
public struct BaseOptions: Sendable {
  /// The model file.
  public struct ModelFile: Sendable {
    /// Path of the `.tflite` file.
    public var filePath: String?

    /// A model file at `filePath`.
    public init(filePath: String? = nil) {
      self.filePath = filePath
    }
  }

  /// CPU settings.
  public struct CPUSettings: Sendable {
    /// Threads the kernels may use (default 1).
    public var numThreads: Int = 1

    /// One thread.
    public init() {}
  }

  /// Compute settings.
  public struct ComputeSettings: Sendable {
    /// CPU settings.
    public var cpuSettings = CPUSettings()

    /// Default settings.
    public init() {}
  }

  /// The model file.
  public var modelFile = ModelFile()
  /// Compute settings.
  public var computeSettings = ComputeSettings()

  /// Options for the model at `filePath`.
  public init(filePath: String? = nil) {
    modelFile.filePath = filePath
  }
}

/// Which classes are reported and how they are named.
public struct ClassificationOptions: Sendable {
  /// Only classes whose label is in this list are reported (empty: no restriction).
  public var labelAllowList: [String] = []
  /// Classes whose label is in this list are dropped. Giving both lists is an error.
  public var labelDenyList: [String] = []
  /// Locale of the display names (matched against the label files' `locale`; default "en").
  public var displayNamesLocale: String = "en"
  /// Results scoring below this are dropped; nil uses the metadata's `ScoreThresholdingOptions`
  /// (or keeps everything when it has none).
  public var scoreThreshold: Float?
  /// At most this many results; a negative value means all. Zero is an error.
  public var maxResults: Int = -1

  /// The Task Library's spelling of ``displayNamesLocale`` (`TFLClassificationOptions.displayNamesLocal`).
  public var displayNamesLocal: String {
    get { displayNamesLocale }
    set { displayNamesLocale = newValue }
  }

  /// Default options: every class, no threshold beyond the metadata's, English display names.
  public init() {}
}

/// Options that replace or complete what a model's metadata would say.
public struct ModelInputOptions: Sendable {
  /// Class names by index; replaces the metadata's (or the bundle's) label file.
  public var labels: [String]?
  /// `(x − mean) / std` for float inputs (and int8 inputs before quantizing); replaces the metadata's.
  public var normalization: NormalizationOptions?
  /// How the image is brought to the input size (default: stretched, as the Task Library does).
  public var imageFit: ImageFit = .stretch

  /// No overrides.
  public init() {}
}

/// Options of an ``ObjectDetector``.
public struct ObjectDetectorOptions: Sendable {
  /// The model and its compute settings.
  public var baseOptions: BaseOptions
  /// Threshold, label lists, locale and result count.
  public var classificationOptions = ClassificationOptions()
  /// Labels, normalization and image fit for models without metadata.
  public var inputOptions = ModelInputOptions()

  /// Options for the detector at `modelPath`: a `.tflite` file, or an AutoML Vision Edge bundle
  /// (a folder holding `model.tflite`, `dict.txt` and `tflite_metadata.json`, or the
  /// `model.tflite` of such a folder).
  public init(modelPath: String) {
    baseOptions = BaseOptions(filePath: modelPath)
  }
}

/// Options of an ``ImageClassifier``.
public struct ImageClassifierOptions: Sendable {
  /// The model and its compute settings.
  public var baseOptions: BaseOptions
  /// Threshold, label lists, locale and result count.
  public var classificationOptions = ClassificationOptions()
  /// Labels, normalization and image fit for models without metadata.
  public var inputOptions = ModelInputOptions()

  /// Options for the classifier at `modelPath`.
  public init(modelPath: String) {
    baseOptions = BaseOptions(filePath: modelPath)
  }
}
