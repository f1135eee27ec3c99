// Runs the guides' snippets once against TestModels (the folder given as the first argument),
// with models served from a local folder through ModelManager's one-line configuration, and
// prints what an app would show. Exits with status 1 when a step fails.
import Firebase

/// The steps, outside the main actor (results arrive on the callback queue).
enum GuideRun {
  /// Runs both guides; returns whether every step worked.
  static func run(testModels: URL) -> Bool {
    let work = FileManager.default.temporaryDirectory.appendingPathComponent("guide-consumer-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: work) }
    let source = work.appendingPathComponent("source")
    do {
      try FileManager.default.createDirectory(at: source, withIntermediateDirectories: true)
      try FileManager.default.copyItem(
        at: testModels.appendingPathComponent("networks/mobilenet_mini_float.tflite"), to: source.appendingPathComponent("digits.tflite"))
      try FileManager.default.copyItem(
        at: testModels.appendingPathComponent("detection/ssd_mini_f32.tflite"), to: source.appendingPathComponent("ssd.tflite"))
      try Data((0..<10).map { "class\($0)" }.joined(separator: "\n").utf8).write(to: work.appendingPathComponent("dict.txt"))
    } catch {
      print("setup failed: \(error)")
      return false
    }
    ModelManager.configure(source: .localDirectory(source), settings: ModelDownloaderSettings(storageDirectory: work.appendingPathComponent("storage")))

    let guide = CustomModelGuide(resourceDirectory: testModels.path, remoteModelName: "digits")
    let (remoteModel, progress) = guide.startDownload()
    guard waitUntilFinished(progress), let localModel = guide.makeLocalModel(), let options = guide.options() else {
      print("custom model guide: download or setup failed")
      return false
    }
    let interpreter = guide.makeInterpreter(remoteModel: remoteModel, localModel: localModel)
    let bitmap = SkipFirstBitmap(width: 32, height: 32, rgb: [Float](repeating: 0.5, count: 32 * 32 * 3))
    guard let inputs = guide.inputs(from: bitmap, side: 32) else { return false }
    let done = DispatchSemaphore(value: 0)
    let classified = ClassificationBox()
    guide.classify(with: interpreter, inputs: inputs, ioOptions: options) { top5 in
      classified.top5 = top5
      done.signal()
    }
    done.wait()
    guard let top5 = classified.top5, top5.count == 5 else {
      print("custom model guide: classification failed")
      return false
    }
    print("custom model guide, top 5: \(top5.map { "\($0.label) \($0.probability)" })")

    let automl = AutoMLGuide(resourceDirectory: work.path, remoteModelName: "ssd", maxDetections: 10)
    guard waitUntilFinished(automl.startDownload()) else { return false }
    do {
      let objects = try automl.detect(inputData: Data(count: 32 * 32 * 3 * 4))
      print("AutoML guide: \(objects?.count ?? -1) objects above 0.66")
      return objects != nil
    } catch {
      print("AutoML guide failed: \(error)")
      return false
    }
  }

  /// Waits up to 30 s for `progress` to finish.
  static func waitUntilFinished(_ progress: Progress) -> Bool {
    for _ in 0..<1500 where !progress.isFinished { Thread.sleep(forTimeInterval: 0.02) }
    return progress.isFinished
  }
}

/// Carries the classification out of its completion.
final class ClassificationBox: @unchecked Sendable {  // written before the semaphore is signalled
  var top5: [(label: String, probability: Float)]?
}

let testModels = URL(fileURLWithPath: CommandLine.arguments.dropFirst().first ?? "TestModels")
exit(GuideRun.run(testModels: testModels) ? 0 : 1)
