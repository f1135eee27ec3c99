// The Swift snippets of Firebase's ML Kit guide "Use a TensorFlow Lite model for inference with
// ML Kit on iOS" (custom models, `pod 'Firebase/MLModelInterpreter', '6.25.0'`), as a class an app
// would hold. Compiled in Swift 5 mode by `swift test` and in Swift 5 and 6 modes by
// `Scripts/check_guide_consumer.sh`. Changes to the guide's text are marked `// Guide:`; they
// replace placeholders (model names, `Bundle.main`, the CGImage), not API calls.
import Firebase

/// One screen of an app following the guide.
final class CustomModelGuide: Sendable {
  /// Folder standing for the app bundle. // Guide: `Bundle.main`
  let resourceDirectory: String
  /// The name the model was published under. // Guide: "your_remote_model"
  let remoteModelName: String

  /// A screen whose bundle is `resourceDirectory`.
  init(resourceDirectory: String, remoteModelName: String) {
    self.resourceDirectory = resourceDirectory
    self.remoteModelName = remoteModelName
  }

  /// The bundle the guide reads resources from.
  var bundle: Bundle { Bundle(path: resourceDirectory) ?? Bundle.main }

  /// "Configure a Firebase-hosted model", then start the download.
  func startDownload() -> (CustomRemoteModel, Progress) {
    let remoteModel = CustomRemoteModel(
      name: remoteModelName  // The name you assigned in the Firebase console.
    )

    let downloadConditions = ModelDownloadConditions(
      allowsCellularAccess: true,
      allowsBackgroundDownloading: true
    )

    let downloadProgress = ModelManager.modelManager().download(
      remoteModel,
      conditions: downloadConditions
    )
    return (remoteModel, downloadProgress)
  }

  /// "Configure a local model".
  func makeLocalModel() -> CustomLocalModel? {
    guard let modelPath = bundle.path(
      forResource: "mobilenet_mini_float",  // Guide: "your_model"
      ofType: "tflite",
      inDirectory: "networks"  // Guide: "your_model_directory"
    ) else { /* Handle error. */ return nil }
    let localModel = CustomLocalModel(modelPath: modelPath)
    return localModel
  }

  /// "Create an interpreter from your model": the remote model once downloaded, else the bundled one.
  func makeInterpreter(remoteModel: CustomRemoteModel, localModel: CustomLocalModel) -> ModelInterpreter {
    var interpreter: ModelInterpreter
    if ModelManager.modelManager().isModelDownloaded(remoteModel) {
      interpreter = ModelInterpreter.modelInterpreter(remoteModel: remoteModel)
    } else {
      interpreter = ModelInterpreter.modelInterpreter(localModel: localModel)
    }
    return interpreter
  }

  /// The guide's download observers; `onSuccess` and `onFailure` stand for the app's reaction.
  func observeDownloads(
    onSuccess: @escaping @Sendable (RemoteModel) -> Void, onFailure: @escaping @Sendable (RemoteModel, NSError?) -> Void
  ) -> [NSObjectProtocol] {
    let succeeded = NotificationCenter.default.addObserver(
        forName: .firebaseMLModelDownloadDidSucceed,
        object: nil,
        queue: nil
    ) { [weak self] notification in
        guard let strongSelf = self,
            let userInfo = notification.userInfo,
            let model = userInfo[ModelDownloadUserInfoKey.remoteModel.rawValue]
                as? RemoteModel,
            model.name == strongSelf.remoteModelName  // Guide: "your_remote_model"
            else { return }
        // The model was downloaded and is available on the device
        onSuccess(model)
    }

    let failed = NotificationCenter.default.addObserver(
        forName: .firebaseMLModelDownloadDidFail,
        object: nil,
        queue: nil
    ) { [weak self] notification in
        guard let strongSelf = self,
            let userInfo = notification.userInfo,
            let model = userInfo[ModelDownloadUserInfoKey.remoteModel.rawValue]
                as? RemoteModel
            else { return }
        let error = userInfo[ModelDownloadUserInfoKey.error.rawValue]
        // ...
        _ = strongSelf
        onFailure(model, error as? NSError)
    }
    return [succeeded, failed]
  }

  /// "Specify the model's input and output", exactly as the guide writes it.
  func guideOptions() -> ModelInputOutputOptions? {
    let ioOptions = ModelInputOutputOptions()
    do {
        try ioOptions.setInputFormat(index: 0, type: .float32, dimensions: [1, 224, 224, 3])
        try ioOptions.setOutputFormat(index: 0, type: .float32, dimensions: [1, 1000])
    } catch let error as NSError {
        print("Failed to set input or output format with error: \(error.localizedDescription)")
        return nil  // Guide: (no return)
    }
    return ioOptions
  }

  /// The same for the TestModels network: [1, 32, 32, 3] images, 10 classes.
  func options() -> ModelInputOutputOptions? {
    let ioOptions = ModelInputOutputOptions()
    do {
        try ioOptions.setInputFormat(index: 0, type: .float32, dimensions: [1, 32, 32, 3])
        try ioOptions.setOutputFormat(index: 0, type: .float32, dimensions: [1, 10])
    } catch let error as NSError {
        print("Failed to set input or output format with error: \(error.localizedDescription)")
        return nil  // Guide: (no return)
    }
    return ioOptions
  }

  /// "Perform inference on input data": the guide's loop over a 32-bit-per-pixel bitmap whose
  /// first byte is unused (`CGImageAlphaInfo.noneSkipFirst`). // Guide: the bitmap comes from a
  /// `CGContext`, which Linux lacks; `context` has the same `width` and `data`.
  func inputs(from context: SkipFirstBitmap, side: Int) -> ModelInputs? {
    guard let imageData = context.data else { return nil }

    let inputs = ModelInputs()
    var inputData = Data()
    do {
      for row in 0 ..< side {  // Guide: 224
        for col in 0 ..< side {
          let offset = 4 * (row * context.width + col)
          // (Ignore offset 0, the unused alpha channel)
          let red = imageData.load(fromByteOffset: offset+1, as: UInt8.self)
          let green = imageData.load(fromByteOffset: offset+2, as: UInt8.self)
          let blue = imageData.load(fromByteOffset: offset+3, as: UInt8.self)

          // Normalize channel values to [0.0, 1.0]. This requirement varies
          // by model. For example, some models might require values to be
          // normalized to the range [-1.0, 1.0] instead, and others might
          // require fixed-point values or the original bytes.
          var normalizedRed = Float32(red) / 255.0
          var normalizedGreen = Float32(green) / 255.0
          var normalizedBlue = Float32(blue) / 255.0

          // Append normalized values to Data object in RGB order.
          let elementSize = MemoryLayout.size(ofValue: normalizedRed)
          var bytes = [UInt8](repeating: 0, count: elementSize)
          memcpy(&bytes, &normalizedRed, elementSize)
          inputData.append(&bytes, count: elementSize)
          memcpy(&bytes, &normalizedGreen, elementSize)
          inputData.append(&bytes, count: elementSize)
          memcpy(&bytes, &normalizedBlue, elementSize)
          inputData.append(&bytes, count: elementSize)
        }
      }
      try inputs.addInput(inputData)
    } catch let error {
      print("Failed to add input: \(error)")
    }
    return inputs
  }

  /// The same image as nested arrays of `Float32` ([1][row][col][channel]), which `addInput` also takes.
  func nestedInputs(from context: SkipFirstBitmap, side: Int) -> ModelInputs? {
    guard let imageData = context.data else { return nil }
    let pixels: [[[Float32]]] = (0 ..< side).map { row in
      (0 ..< side).map { col in
        let offset = 4 * (row * context.width + col)
        return (1...3).map { Float32(imageData.load(fromByteOffset: offset + $0, as: UInt8.self)) / 255.0 }
      }
    }
    let inputs = ModelInputs()
    do {
      try inputs.addInput([pixels])
    } catch let error {
      print("Failed to add input: \(error)")
    }
    return inputs
  }

  /// Runs the interpreter, reads the output as the guide does and gives the five most probable
  /// labels with their probabilities to `completion` (nil when anything failed).
  func classify(
    with interpreter: ModelInterpreter, inputs: ModelInputs, ioOptions: ModelInputOutputOptions,
    completion: @escaping ([(label: String, probability: Float)]?) -> Void
  ) {
    interpreter.run(inputs: inputs, options: ioOptions) { outputs, error in
        guard error == nil, let outputs = outputs else { completion(nil); return }
        // Process outputs
        // Get first and only output of inference with a batch size of 1
        let output = try? outputs.output(index: 0) as? [[NSNumber]]
        let probabilities = output?[0]  // Guide: `output??[0]`, Swift 4; since Swift 5 `try?` flattens the optionals

        guard let labelPath = self.bundle.path(forResource: "mobilenet_mini_labels", ofType: "txt", inDirectory: "networks")  // Guide: "retrained_labels"
        else { completion(nil); return }
        let fileContents = try? String(contentsOfFile: labelPath, encoding: .utf8)
        // Guide: `components(separatedBy: "\n")`; a file ending in a newline gives one more label than outputs.
        guard let labels = fileContents?.components(separatedBy: "\n").filter({ !$0.isEmpty }) else { completion(nil); return }

        for i in 0 ..< labels.count {
          if let probability = probabilities?[i] {
            print("\(labels[i]): \(probability)")
          }
        }

        let top5 = zip(labels, probabilities ?? []).sorted { $0.1.floatValue > $1.1.floatValue }.prefix(5)
        completion(top5.map { (label: $0.0, probability: $0.1.floatValue) })
    }
  }
}

/// A 32-bit-per-pixel bitmap with an unused first byte per pixel, standing for the guide's `CGContext`.
final class SkipFirstBitmap {
  /// Pixels per row.
  let width: Int
  /// Rows.
  let height: Int
  /// The pixel bytes.
  let data: UnsafeMutableRawPointer?

  /// A bitmap of `width` × `height` pixels whose RGB channels are `rgb` (row-major, 0…1).
  init(width: Int, height: Int, rgb: [Float]) {
    self.width = width
    self.height = height
    let bytes = UnsafeMutableRawPointer.allocate(byteCount: 4 * width * height, alignment: 4)
    for pixel in 0 ..< width * height {
      bytes.storeBytes(of: 0, toByteOffset: 4 * pixel, as: UInt8.self)
      for channel in 0 ..< 3 {
        let value = (rgb[3 * pixel + channel] * 255).rounded()
        bytes.storeBytes(of: UInt8(max(0, min(255, value))), toByteOffset: 4 * pixel + 1 + channel, as: UInt8.self)
      }
    }
    data = bytes
  }

  deinit { data?.deallocate() }
}
