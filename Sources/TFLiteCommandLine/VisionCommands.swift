// `tflite detect` and `tflite classify`: the TensorFlowLiteTaskVision API on image files. Models are
// driven by their metadata, an AutoML Vision Edge bundle (detect), or the options below. Text output
// lists each image's results; `--json` prints one JSON object per image on its own line (JSON
// Lines); `--output` draws the results (boxes, labels, scores in the built-in bitmap font) and
// writes a PNG.

import Foundation
import TFLiteFormat
import TFLiteImage
import TensorFlowLiteTaskVision

/// Options shared by the vision commands, and what they build.
enum VisionOptions {
  /// Options every vision command takes.
  static let common: [OptionSpecification] = [
    .option("labels", value: "FILE", help: "Class names, one per line (replaces the metadata's or the bundle's)."),
    .option("threshold", value: "T", help: "Drop results scoring below T (default: the metadata's threshold, else none)."),
    .option("locale", value: "L", help: "Locale of display names from the metadata's label files (default en)."),
  ] + preparation + [
    .option("threads", value: "N", help: "Threads the kernels may use (default 1)."),
    .flag("json", help: "Print one JSON object per image, one per line."),
  ]

  /// Options that say how an image becomes the model input (also taken by `tflite run --image`).
  static let preparation: [OptionSpecification] = [
    .option("mean", value: "M[,M,M]", help: "Normalization mean for float inputs (replaces the metadata's)."),
    .option("std", value: "S[,S,S]", help: "Normalization standard deviation for float inputs."),
    .option("fit", value: "stretch|crop|letterbox", help: "How images are brought to the input size (default stretch)."),
  ]

  /// The Task API options the command line asks for.
  static func parse(
    _ arguments: ParsedArguments, maxResults: Int
  ) throws -> (BaseOptions.CPUSettings, ClassificationOptions, ModelInputOptions) {
    var cpu = BaseOptions.CPUSettings()
    cpu.numThreads = try arguments.integer("threads", default: 1, in: 1...256)
    var classification = ClassificationOptions()
    classification.maxResults = maxResults
    if let threshold = arguments.value("threshold") {
      guard let value = Float(threshold), value.isFinite else { throw UsageError("--threshold wants a number, got '\(threshold)'") }
      classification.scoreThreshold = value
    }
    if let locale = arguments.value("locale") { classification.displayNamesLocale = locale }
    return (cpu, classification, try inputOptions(arguments))
  }

  /// The input options (`--labels`, `--mean`/`--std`, `--fit`) the command line asks for.
  static func inputOptions(_ arguments: ParsedArguments) throws -> ModelInputOptions {
    var input = ModelInputOptions()
    if let file = arguments.value("labels") {
      guard let data = FileManager.default.contents(atPath: file) else { throw CommandFailure("cannot read the labels file \(file)") }
      input.labels = ModelAssociatedFiles.labelLines([UInt8](data))
    }
    switch (arguments.value("mean"), arguments.value("std")) {
    case (nil, nil): break
    case (let mean?, let std?): input.normalization = NormalizationOptions(mean: try numbers(mean, "mean"), std: try numbers(std, "std"))
    default: throw UsageError("--mean and --std go together")
    }
    switch arguments.value("fit") ?? "stretch" {
    case "stretch": input.imageFit = .stretch
    case "crop": input.imageFit = .centerCrop
    case "letterbox": input.imageFit = .letterbox(fill: 0)
    case let other: throw UsageError("--fit wants stretch, crop or letterbox, got '\(other)'")
    }
    return input
  }

  /// Comma-separated finite numbers.
  private static func numbers(_ text: String, _ option: String) throws -> [Float] {
    let values = text.split(separator: ",").map { Float($0.trimmingCharacters(in: .whitespaces)) }
    guard !values.isEmpty, let numbers = values as? [Float], numbers.allSatisfy(\.isFinite) else {
      throw UsageError("--\(option) wants one or three comma-separated numbers, got '\(text)'")
    }
    return numbers
  }

  /// The decoded image file at `path`.
  static func image(at path: String) throws -> MLImage {
    guard let data = FileManager.default.contents(atPath: path) else { throw CommandFailure("cannot read \(path)") }
    return try MLImage(encodedBytes: [UInt8](data))
  }

  /// Where the drawing of image `path` goes: `output` itself for one image, `output/<name>.png` for several.
  static func drawingPath(output: String, image path: String, imageCount: Int) throws -> String {
    guard imageCount > 1 else { return output }
    try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true)
    let name = ((path as NSString).lastPathComponent as NSString).deletingPathExtension
    return (output as NSString).appendingPathComponent(name + ".png")
  }

  /// The name printed for a category: its label, with the display name when it differs.
  static func name(of category: ClassificationCategory) -> String {
    let label = category.label ?? "class \(category.index)"
    guard let displayName = category.displayName, displayName != label else { return label }
    return "\(label) (\(displayName))"
  }
}

/// `tflite detect MODEL_OR_BUNDLE IMAGE...`: runs an object detector and prints or draws its boxes.
enum DetectCommand: Subcommand {
  /// Name, options and help.
  static let specification = CommandSpecification(
    name: "detect",
    abstract: "Detect objects in images with a TFLite_Detection_PostProcess model or an AutoML Vision Edge bundle.",
    positionals: ["MODEL_OR_BUNDLE", "IMAGE..."],
    options: VisionOptions.common + [
      .option("max-results", value: "N", help: "Report at most N detections per image (default all)."),
      .option("output", value: "FILE.png", help: "Draw the boxes and write a PNG (a folder of PNGs for several images)."),
    ],
    discussion: """
      MODEL_OR_BUNDLE is a .tflite file or an AutoML Vision Edge export (a folder with model.tflite,
      dict.txt and tflite_metadata.json). Boxes are in pixels of the image: left, top, right, bottom.
      --json prints per image: {"image", "width", "height", "detections": [{"index", "label", "score",
      "box": {"left", "top", "right", "bottom"}}]}.
      """)

  /// Runs the command.
  static func run(_ arguments: ParsedArguments, output: inout any TextSink) throws -> Int32 {
    guard arguments.positionals.count >= 2 else { throw UsageError("detect wants a model (or bundle) and at least one image") }
    let (cpu, classification, input) = try VisionOptions.parse(
      arguments, maxResults: try arguments.integer("max-results", default: -1, in: 1...1_000_000))
    var options = ObjectDetectorOptions(modelPath: arguments.positionals[0])
    options.baseOptions.computeSettings.cpuSettings = cpu
    options.classificationOptions = classification
    options.inputOptions = input
    let detector = try ObjectDetector.detector(options: options)
    let images = Array(arguments.positionals.dropFirst())
    for path in images {
      let image = try VisionOptions.image(at: path)
      let detections = try detector.detect(mlImage: image).detections
      if arguments.flag("json") {
        output.write(json(path: path, image: image, detections: detections).renderedOnOneLine())
      } else {
        output.write("\(path) (\(image.width)×\(image.height)): \(detections.count) detection\(detections.count == 1 ? "" : "s")\n")
        for (rank, detection) in detections.enumerated() {
          let box = detection.boundingBox
          let category = detection.categories.first
          output.write(
            "  \(rank + 1). \(category.map(VisionOptions.name) ?? "?")  \(String(format: "%.3f", category?.score ?? 0))  "
              + "box \([box.minX, box.minY, box.maxX, box.maxY].map { String(format: "%.1f", Double($0)) }.joined(separator: ", "))\n")
        }
      }
      if let destination = arguments.value("output") {
        let file = try VisionOptions.drawingPath(output: destination, image: path, imageCount: images.count)
        try Data(PNG.encode(try annotated(image.image, detections: detections))).write(to: URL(fileURLWithPath: file))
        if !arguments.flag("json") { output.write("  drawn into \(file)\n") }
      }
    }
    return ExitCode.success
  }

  /// The JSON object of one image's detections.
  static func json(path: String, image: MLImage, detections: [Detection]) -> JSONValue {
    .object([
      ("image", .string(path)), ("width", .int(image.width)), ("height", .int(image.height)),
      (
        "detections",
        .array(
          detections.map { detection in
            let category = detection.categories.first
            let box = detection.boundingBox
            return .object([
              ("index", category.map { .int($0.index) } ?? .null), ("label", .string(category?.label)),
              ("score", category.map { .float($0.score) } ?? .null),
              (
                "box",
                .object([
                  ("left", .number(Double(box.minX))), ("top", .number(Double(box.minY))), ("right", .number(Double(box.maxX))),
                  ("bottom", .number(Double(box.maxY))),
                ])
              ),
            ])
          })
      ),
    ])
  }
}

/// `tflite classify MODEL IMAGE...`: runs an image classifier and prints its top classes.
enum ClassifyCommand: Subcommand {
  /// Name, options and help.
  static let specification = CommandSpecification(
    name: "classify",
    abstract: "Classify images with a model whose output is class scores ([1, N] or [1, 1, 1, N]).",
    positionals: ["MODEL", "IMAGE..."],
    options: VisionOptions.common + [
      .option("top", value: "K", help: "Report the K best classes per image (default 5)."),
    ],
    discussion: """
      --json prints per image: {"image", "width", "height", "classes": [{"index", "label", "score"}]}
      (the first output's classes, best first).
      """)

  /// Runs the command.
  static func run(_ arguments: ParsedArguments, output: inout any TextSink) throws -> Int32 {
    guard arguments.positionals.count >= 2 else { throw UsageError("classify wants a model and at least one image") }
    let (cpu, classification, input) = try VisionOptions.parse(
      arguments, maxResults: try arguments.integer("top", default: 5, in: 1...1_000_000))
    var options = ImageClassifierOptions(modelPath: arguments.positionals[0])
    options.baseOptions.computeSettings.cpuSettings = cpu
    options.classificationOptions = classification
    options.inputOptions = input
    let classifier = try ImageClassifier.classifier(options: options)
    for path in arguments.positionals.dropFirst() {
      let image = try VisionOptions.image(at: path)
      let heads = try classifier.classify(mlImage: image).classifications
      if arguments.flag("json") {
        let classes = heads.first?.categories ?? []
        output.write(
          JSONValue.object([
            ("image", .string(path)), ("width", .int(image.width)), ("height", .int(image.height)),
            (
              "classes",
              .array(classes.map { .object([("index", .int($0.index)), ("label", .string($0.label)), ("score", .float($0.score))]) })
            ),
          ]).renderedOnOneLine())
        continue
      }
      output.write("\(path) (\(image.width)×\(image.height)):\n")
      for head in heads {
        if heads.count > 1 { output.write("  output \(head.headIndex)\(head.headName.map { " (\($0))" } ?? ""):\n") }
        for (rank, category) in head.categories.enumerated() {
          output.write("  \(rank + 1). \(VisionOptions.name(of: category))  \(String(format: "%.4f", category.score))\n")
        }
      }
    }
    return ExitCode.success
  }
}
