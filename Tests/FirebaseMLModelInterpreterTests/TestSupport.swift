import Foundation
import XCTest

import FirebaseMLModelInterpreter
import struct TFLiteFormat.NumPyArray

/// TestModels files and LiteRT's outputs for them.
enum TestModels {
  /// The `TestModels` folder of the repository.
  static let directory = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("TestModels")

  /// Absolute path of `file` (relative to `TestModels`).
  static func path(_ file: String) -> String { directory.appendingPathComponent(file).path }

  /// The `.npy` file `file`.
  static func array(_ file: String) throws -> NumPyArray {
    try NumPyArray(parsing: [UInt8](Data(contentsOf: directory.appendingPathComponent(file))))
  }

  /// The raw element bytes of the `.npy` file `file`.
  static func data(_ file: String) throws -> Data { Data(try array(file).bytes) }
}

/// Splits `values` into nested arrays shaped `dimensions` (row-major).
func nested<Element>(_ values: [Element], _ dimensions: [Int]) -> Any {
  guard dimensions.count > 1 else { return values }
  let stride = dimensions.dropFirst().reduce(1, *)
  return (0..<dimensions[0]).map { nested(Array(values[$0 * stride..<($0 + 1) * stride]), Array(dimensions.dropFirst())) }
}

/// Runs `interpreter` and waits for its completion.
func runInterpreter(
  _ interpreter: ModelInterpreter, _ inputs: ModelInputs, _ options: ModelInputOutputOptions
) async -> (outputs: ModelOutputs?, error: NSError?) {
  let box = ResultBox()
  await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
    interpreter.run(inputs: inputs, options: options) { outputs, error in
      box.outputs = outputs
      box.error = error.map { $0 as NSError }
      continuation.resume()
    }
  }
  return (box.outputs, box.error)
}

/// A test case with a temporary folder, a local model folder as the download source and a
/// storage folder of its own.
class ModelInterpreterTestCase: XCTestCase {
  /// The test's temporary folder.
  var temporaryDirectory: URL!
  /// The folder the model source serves.
  var sourceDirectory: URL { temporaryDirectory.appendingPathComponent("source") }
  /// Where downloaded models go.
  var storageDirectory: URL { temporaryDirectory.appendingPathComponent("storage") }

  override func setUp() async throws {
    temporaryDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("mlkit-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: sourceDirectory, withIntermediateDirectories: true)
  }

  override func tearDown() async throws {
    ModelManager.configure(modelDownloader: nil)
    try? FileManager.default.removeItem(at: temporaryDirectory)
  }

  /// Settings storing models in ``storageDirectory``.
  var settings: ModelDownloaderSettings { ModelDownloaderSettings(storageDirectory: storageDirectory) }

  /// A downloader serving ``sourceDirectory``.
  func makeDownloader() -> ModelDownloader {
    ModelDownloader(source: .localDirectory(sourceDirectory), settings: settings)
  }

  /// Puts the TestModels file `file` into the source folder as model `name`.
  func publish(_ file: String, as name: String) throws {
    let destination = sourceDirectory.appendingPathComponent("\(name).tflite")
    try? FileManager.default.removeItem(at: destination)
    try FileManager.default.copyItem(atPath: TestModels.path(file), toPath: destination.path)
  }

  /// Runs `interpreter` and waits for its completion.
  func run(
    _ interpreter: ModelInterpreter, _ inputs: ModelInputs, _ options: ModelInputOutputOptions
  ) async -> (outputs: ModelOutputs?, error: NSError?) {
    await runInterpreter(interpreter, inputs, options)
  }

  /// Runs `interpreter`, expecting an error with `code`; returns its message.
  @discardableResult
  func runExpectingError(
    _ interpreter: ModelInterpreter, _ inputs: ModelInputs, _ options: ModelInputOutputOptions,
    _ code: MachineLearningErrorDomainCode, file: StaticString = #filePath, line: UInt = #line
  ) async -> String {
    let result = await run(interpreter, inputs, options)
    XCTAssertNil(result.outputs, file: file, line: line)
    XCTAssertEqual(result.error?.domain, MachineLearningErrorDomain, file: file, line: line)
    XCTAssertEqual(result.error?.code, code.rawValue, "\(result.error as Any)", file: file, line: line)
    return result.error?.localizedDescription ?? ""
  }

  /// Downloads `model` with `manager`; returns the notification posted at the end and the progress.
  func download(_ model: RemoteModel, with manager: ModelManager) async -> (notification: Notification, progress: Progress) {
    let box = NotificationBox()
    var observers: [NSObjectProtocol] = []
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      for name in [Notification.Name.firebaseMLModelDownloadDidSucceed, .firebaseMLModelDownloadDidFail] {
        observers.append(
          NotificationCenter.default.addObserver(forName: name, object: nil, queue: nil) { notification in
            guard (notification.userInfo?[ModelDownloadUserInfoKey.remoteModel.rawValue] as? RemoteModel) === model,
              box.takeFirst(notification)
            else { return }
            continuation.resume()
          })
      }
      box.progress = manager.download(model, conditions: ModelDownloadConditions())
    }
    observers.forEach(NotificationCenter.default.removeObserver)
    return (box.first!, box.progress!)
  }
}

/// Carries a run's results out of its completion.
final class ResultBox: @unchecked Sendable {  // written once by the completion before the continuation resumes
  var outputs: ModelOutputs?
  var error: NSError?
}

/// Lets only the first download notification through, and keeps the download's progress.
final class NotificationBox: @unchecked Sendable {  // guarded by `lock`
  private let lock = NSLock()
  private var firstNotification: Notification?
  /// The first notification offered.
  var first: Notification? { lock.withLock { firstNotification } }
  private var storedProgress: Progress?
  /// The progress `download` returned.
  var progress: Progress? {
    get { lock.withLock { storedProgress } }
    set { lock.withLock { storedProgress = newValue } }
  }
  /// Whether `notification` is the first one offered.
  func takeFirst(_ notification: Notification) -> Bool {
    lock.withLock {
      guard firstNotification == nil else { return false }
      firstNotification = notification
      return true
    }
  }
}
