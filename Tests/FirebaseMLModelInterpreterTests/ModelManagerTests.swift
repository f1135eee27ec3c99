import Foundation
import XCTest

import FirebaseMLModelInterpreter

/// `ModelManager` over a local-folder source: notifications, progress in bytes, the file shared
/// with `ModelDownloader`, failures that keep the previous model, deletion, and remote interpreters.
final class ModelManagerTests: ModelInterpreterTestCase {
  let modelFile = "networks/mobilenet_mini_float.tflite"

  /// Options and inputs of the float network for its reference input.
  func referenceRun() throws -> (ModelInputs, ModelInputOutputOptions, expected: [Float]) {
    let options = ModelInputOutputOptions()
    try options.setInputFormat(index: 0, type: .float32, dimensions: [1, 32, 32, 3])
    try options.setOutputFormat(index: 0, type: .float32, dimensions: [1, 10])
    let inputs = ModelInputs()
    try inputs.addInput(TestModels.data("networks/mobilenet_mini_float.input_0.npy"))
    return (inputs, options, try TestModels.array("networks/mobilenet_mini_float.output_0.npy").floatValues())
  }

  func testDownloadPostsSuccessWithByteProgressAndSharesTheDownloadersFile() async throws {
    try publish(modelFile, as: "digits")
    let fileSize = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: TestModels.path(modelFile))[.size] as? Int)
    let manager = ModelManager(modelDownloader: makeDownloader())
    let model = CustomRemoteModel(name: "digits")
    XCTAssertFalse(manager.isModelDownloaded(model))
    let (notification, progress) = await download(model, with: manager)
    XCTAssertEqual(notification.name, .firebaseMLModelDownloadDidSucceed)
    XCTAssertNil(notification.userInfo?[ModelDownloadUserInfoKey.error.rawValue])
    XCTAssertTrue(progress.isFinished)
    XCTAssertEqual(progress.fractionCompleted, 1)
    XCTAssertEqual(progress.totalUnitCount, Int64(fileSize))
    XCTAssertEqual(progress.completedUnitCount, Int64(fileSize))
    XCTAssertTrue(manager.isModelDownloaded(model))

    var path: String?
    manager.getLatestModelFilePath(model) { filePath, error in
      XCTAssertNil(error)
      path = filePath
    }
    let downloadedPath = try XCTUnwrap(path, "the path is given before getLatestModelFilePath returns")
    XCTAssertEqual(FileManager.default.contents(atPath: downloadedPath), FileManager.default.contents(atPath: TestModels.path(modelFile)))

    // A ModelDownloader with the same source and storage sees the same file, without downloading.
    let other = makeDownloader()
    let listed = try await other.listDownloadedModels()
    XCTAssertEqual(listed.map(\.path), [downloadedPath])
    let local = try await other.getModel(name: "digits", downloadType: .localModel, conditions: ModelDownloadConditions())
    XCTAssertEqual(local.path, downloadedPath)

    // Downloading again when nothing changed still succeeds and finishes.
    let (again, progressAgain) = await download(model, with: manager)
    XCTAssertEqual(again.name, .firebaseMLModelDownloadDidSucceed)
    XCTAssertTrue(progressAgain.isFinished)
  }

  func testOneLineConfigurationServesRemoteInterpretersAfterDownload() async throws {
    try publish(modelFile, as: "digits")
    ModelManager.configure(source: .localDirectory(sourceDirectory), settings: settings)
    let model = CustomRemoteModel(name: "digits")
    let interpreter = ModelInterpreter.modelInterpreter(remoteModel: model)
    let (inputs, options, expected) = try referenceRun()
    let message = await runExpectingError(interpreter, inputs, options, .failedPrecondition)
    XCTAssertTrue(message.contains("not been downloaded"), message)
    var missingPathError: Error?
    ModelManager.modelManager().getLatestModelFilePath(model) { _, error in missingPathError = error }
    XCTAssertEqual((missingPathError as NSError?)?.code, MachineLearningErrorDomainCode.failedPrecondition.rawValue)

    let (notification, _) = await download(model, with: ModelManager.modelManager())
    XCTAssertEqual(notification.name, .firebaseMLModelDownloadDidSucceed)
    let result = await run(interpreter, inputs, options)
    let output = try XCTUnwrap(try result.outputs?.output(index: 0) as? [[Float]], "\(result.error as Any)")
    for (have, want) in zip(output[0], expected) { XCTAssertEqual(have, want, accuracy: 1e-5) }
  }

  func testFailedHashKeepsThePreviousModelAndPostsTheError() async throws {
    try publish(modelFile, as: "digits")
    let manager = ModelManager(modelDownloader: makeDownloader())
    let model = CustomRemoteModel(name: "digits")
    _ = await download(model, with: manager)
    var firstPath: String?
    manager.getLatestModelFilePath(model) { path, _ in firstPath = path }

    // The source now announces another file with a SHA-256 that does not match it.
    let other = "networks/mobilenet_mini_uint8.tflite"
    try FileManager.default.copyItem(atPath: TestModels.path(other), toPath: sourceDirectory.appendingPathComponent("digits-v2.tflite").path)
    let size = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: TestModels.path(other))[.size] as? Int)
    let index = #"{"name": "digits", "url": "digits-v2.tflite", "sha256": "\#(String(repeating: "0", count: 64))", "size": \#(size)}"#
    try Data(index.utf8).write(to: sourceDirectory.appendingPathComponent("digits.json"))

    let (notification, progress) = await download(model, with: manager)
    XCTAssertEqual(notification.name, .firebaseMLModelDownloadDidFail)
    let error = try XCTUnwrap(notification.userInfo?[ModelDownloadUserInfoKey.error.rawValue] as? NSError)
    XCTAssertEqual(error.domain, MachineLearningErrorDomain)
    XCTAssertFalse(progress.isFinished)
    XCTAssertTrue(manager.isModelDownloaded(model))
    manager.getLatestModelFilePath(model) { path, _ in XCTAssertEqual(path, firstPath) }
    XCTAssertEqual(FileManager.default.contents(atPath: try XCTUnwrap(firstPath)), FileManager.default.contents(atPath: TestModels.path(modelFile)))

    ModelManager.configure(modelDownloader: manager.modelDownloader)
    let (inputs, options, expected) = try referenceRun()
    let result = await run(ModelInterpreter.modelInterpreter(remoteModel: model), inputs, options)
    let output = try XCTUnwrap(try result.outputs?.output(index: 0) as? [[Float]], "\(result.error as Any)")
    for (have, want) in zip(output[0], expected) { XCTAssertEqual(have, want, accuracy: 1e-5) }
  }

  func testUnknownModelPostsNotFound() async throws {
    let manager = ModelManager(modelDownloader: makeDownloader())
    let (notification, _) = await download(CustomRemoteModel(name: "nothing-here"), with: manager)
    XCTAssertEqual(notification.name, .firebaseMLModelDownloadDidFail)
    let error = notification.userInfo?[ModelDownloadUserInfoKey.error.rawValue] as? NSError
    XCTAssertEqual(error?.code, MachineLearningErrorDomainCode.notFound.rawValue)
  }

  func testDeleteDownloadedModel() async throws {
    try publish(modelFile, as: "digits")
    let manager = ModelManager(modelDownloader: makeDownloader())
    let model = CustomRemoteModel(name: "digits")
    _ = await download(model, with: manager)
    let first = await delete(model, with: manager)
    XCTAssertNil(first)
    XCTAssertFalse(manager.isModelDownloaded(model))
    let second = await delete(model, with: manager)
    XCTAssertEqual(second?.code, MachineLearningErrorDomainCode.notFound.rawValue)
  }

  func testConditionsAreOneTypeWithTheDownloaders() {
    let conditions: FirebaseMLModelDownloader.ModelDownloadConditions =
      FirebaseMLModelInterpreter.ModelDownloadConditions(allowsCellularAccess: false, allowsBackgroundDownloading: true)
    XCTAssertFalse(conditions.allowsCellularAccess)
    XCTAssertTrue(conditions.allowsBackgroundDownloading)
    XCTAssertTrue(ModelDownloadConditions().allowsCellularAccess)
    XCTAssertFalse(ModelDownloadConditions().allowsBackgroundDownloading)
  }

  /// Deletes `model` and waits for the completion's error.
  func delete(_ model: RemoteModel, with manager: ModelManager) async -> NSError? {
    await withCheckedContinuation { (continuation: CheckedContinuation<NSError?, Never>) in
      manager.deleteDownloadedModel(model) { error in continuation.resume(returning: error.map { $0 as NSError }) }
    }
  }
}
