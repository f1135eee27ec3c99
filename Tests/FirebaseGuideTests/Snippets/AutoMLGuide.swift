// The Swift snippets of Firebase's guide "Detect objects in images with an AutoML-trained model on
// Apple platforms": the model is downloaded with ML Kit's `ModelManager` and run with
// TensorFlowLiteSwift's `Interpreter`. Changes to the guide's text are marked `// Guide:`.
import Firebase
import TensorFlowLite

/// One detected object.
struct DetectedObject: Sendable {
  /// Its label from `dict.txt`.
  var label: String
  /// The model's confidence.
  var confidence: Float
  /// Top, left, bottom and right, normalized to the image.
  var box: [Float]
}

/// An app following the AutoML object-detection guide.
final class AutoMLGuide: Sendable {
  /// Folder standing for the app bundle (holds `dict.txt`). // Guide: `Bundle.main`
  let resourceDirectory: String
  /// The name the model was published under. // Guide: "your_remote_model"
  let remoteModelName: String
  /// The model's maximum detections (`tflite_metadata.json`; 40 by default). // Guide: 40
  let maxDetections: Int

  /// An app whose bundle is `resourceDirectory`.
  init(resourceDirectory: String, remoteModelName: String, maxDetections: Int) {
    self.resourceDirectory = resourceDirectory
    self.remoteModelName = remoteModelName
    self.maxDetections = maxDetections
  }

  /// The bundle the guide reads resources from.
  var bundle: Bundle { Bundle(path: resourceDirectory) ?? Bundle.main }

  /// "Configure a Firebase-hosted model source" and start the download.
  func startDownload() -> Progress {
    let remoteModel = CustomRemoteModel(
        name: remoteModelName  // The name you assigned in the Google Cloud console.
    )

    let downloadProgress = ModelManager.modelManager().download(
        remoteModel,
        conditions: ModelDownloadConditions(
            allowsCellularAccess: true,
            allowsBackgroundDownloading: true
        )
    )
    return downloadProgress
  }

  /// "Create an object detector from your model", run it on `inputData` and read the objects
  /// above the guide's confidence threshold; nil when the model is unavailable.
  func detect(inputData: Data) throws -> [DetectedObject]? {
    let remoteModel = CustomRemoteModel(name: remoteModelName)

    var modelPath: String?
    if ModelManager.modelManager().isModelDownloaded(remoteModel) {
        ModelManager.modelManager().getLatestModelFilePath(remoteModel) { path, error in
            guard error == nil else { return }
            guard let path = path else { return }
            modelPath = path
        }
    } else {
        modelPath = bundle.path(
            forResource: "model",
            ofType: "tflite"
        )
    }

    guard modelPath != nil else { return nil }
    let interpreter = try Interpreter(modelPath: modelPath)
    try interpreter.allocateTensors()

    try interpreter.copy(inputData, toInputAt: 0)
    try interpreter.invoke()

    var output = try interpreter.output(at: 0)
    let boundingBoxes =
        UnsafeMutableBufferPointer<Float32>.allocate(capacity: 4 * maxDetections)
    defer { boundingBoxes.deallocate() }  // Guide: not freed
    output.data.copyBytes(to: boundingBoxes)

    output = try interpreter.output(at: 1)
    let labels =
        UnsafeMutableBufferPointer<Float32>.allocate(capacity: maxDetections)
    defer { labels.deallocate() }
    output.data.copyBytes(to: labels)

    output = try interpreter.output(at: 2)
    let probabilities =
        UnsafeMutableBufferPointer<Float32>.allocate(capacity: maxDetections)
    defer { probabilities.deallocate() }
    output.data.copyBytes(to: probabilities)

    guard let labelPath = bundle.path(
        forResource: "dict",
        ofType: "txt"
    ) else { return nil }
    let fileContents = try? String(contentsOfFile: labelPath, encoding: .utf8)
    guard let labelText = fileContents?.components(separatedBy: "\n") else { return nil }

    var objects: [DetectedObject] = []
    for i in 0 ..< maxDetections {
        // Guide: `boundingBoxes[0 * i]` … `[3 * i]`, a slip its Objective-C twin does not make.
        let top = boundingBoxes[4 * i]
        let left = boundingBoxes[4 * i + 1]
        let bottom = boundingBoxes[4 * i + 2]
        let right = boundingBoxes[4 * i + 3]

        let labelIdx = Int(labels[i])
        let label = labelText[labelIdx]
        let confidence = probabilities[i]

        if confidence > 0.66 {
            print("Object found: \(label) (confidence: \(confidence))")
            print("  Top-left: (\(left),\(top))")
            print("  Bottom-right: (\(right),\(bottom))")
            objects.append(DetectedObject(label: label, confidence: confidence, box: [top, left, bottom, right]))
        }
    }
    return objects
  }
}
