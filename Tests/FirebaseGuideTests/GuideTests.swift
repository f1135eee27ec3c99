import Foundation
import XCTest

import Firebase
import struct TFLiteFormat.NumPyArray

/// Runs the guides' snippets (`Snippets/`, compiled here in Swift 5 mode) against TestModels
/// models served from a local folder through `ModelManager.configure(source:settings:)`, and
/// checks their results against LiteRT's outputs and the demo images' labels.
final class GuideTests: XCTestCase {
  /// The `TestModels` folder.
  let testModels = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("TestModels")
  /// The test's folder: `source/` is the model source, `storage/` the download storage.
  var folder: URL!

  override func setUpWithError() throws {
    folder = FileManager.default.temporaryDirectory.appendingPathComponent("guide-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder.appendingPathComponent("source"), withIntermediateDirectories: true)
    // The one line that replaces Firebase ML for the unchanged guide code.
    ModelManager.configure(
      source: .localDirectory(folder.appendingPathComponent("source")),
      settings: ModelDownloaderSettings(storageDirectory: folder.appendingPathComponent("storage")))
  }

  override func tearDownWithError() throws {
    ModelManager.configure(modelDownloader: nil)
    try? FileManager.default.removeItem(at: folder)
  }

  /// Publishes the TestModels file `file` as model `name`.
  func publish(_ file: String, as name: String) throws {
    try FileManager.default.copyItem(
      at: testModels.appendingPathComponent(file), to: folder.appendingPathComponent("source/\(name).tflite"))
  }

  /// The `.npy` file `file` of TestModels.
  func array(_ file: String) throws -> NumPyArray {
    try NumPyArray(parsing: [UInt8](Data(contentsOf: testModels.appendingPathComponent(file))))
  }

  /// Waits until `progress` is finished.
  func waitUntilFinished(_ progress: Progress) {
    let finished = expectation(description: "download finished")
    let timer = DispatchSource.makeTimerSource()
    timer.schedule(deadline: .now(), repeating: .milliseconds(20))
    timer.setEventHandler { if progress.isFinished { timer.cancel(); finished.fulfill() } }
    timer.resume()
    wait(for: [finished], timeout: 30)
  }

  /// Runs the guide's classification and waits for the top five.
  func classify(_ guide: CustomModelGuide, _ interpreter: ModelInterpreter, _ inputs: ModelInputs?) throws -> [(label: String, probability: Float)] {
    let done = expectation(description: "classified")
    var top5: [(label: String, probability: Float)]?
    guide.classify(with: interpreter, inputs: try XCTUnwrap(inputs), ioOptions: try XCTUnwrap(guide.options())) { result in
      top5 = result
      done.fulfill()
    }
    wait(for: [done], timeout: 30)
    return try XCTUnwrap(top5)
  }

  func testCustomModelGuide() throws {
    try publish("networks/mobilenet_mini_float.tflite", as: "digits")
    let guide = CustomModelGuide(resourceDirectory: testModels.path, remoteModelName: "digits")
    XCTAssertNotNil(guide.guideOptions(), "the guide's formats are valid")

    let localModel = try XCTUnwrap(guide.makeLocalModel())
    let downloaded = expectation(description: "download notification")
    let observers = guide.observeDownloads(
      onSuccess: { model in if model.name == "digits" { downloaded.fulfill() } },
      onFailure: { model, error in XCTFail("download of \(model.name) failed: \(error as Any)") })
    defer { observers.forEach(NotificationCenter.default.removeObserver) }
    let (remoteModel, progress) = guide.startDownload()
    wait(for: [downloaded], timeout: 30)
    XCTAssertTrue(progress.isFinished)
    XCTAssertTrue(ModelManager.modelManager().isModelDownloaded(remoteModel))
    let interpreter = guide.makeInterpreter(remoteModel: remoteModel, localModel: localModel)

    // The reference input as the guide's bytes: LiteRT's output probabilities, in order.
    let input = try array("networks/mobilenet_mini_float.input_0.npy").floatValues()
    let expected = try array("networks/mobilenet_mini_float.output_0.npy").floatValues()
    let labels = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
    let reference = zip(labels, expected).sorted { $0.1 > $1.1 }.prefix(5)
    let referenceBitmap = SkipFirstBitmap(width: 32, height: 32, rgb: input)
    let top5 = try classify(guide, interpreter, guide.inputs(from: referenceBitmap, side: 32))
    XCTAssertEqual(top5.map(\.label), reference.map(\.0))
    for (have, want) in zip(top5, reference) { XCTAssertEqual(have.probability, want.1, accuracy: 0.02) }

    // The demo digits through the guide's pixel loop and as nested arrays: the right label first.
    for digit in [0, 3, 7] {
      let pixels = try array("networks/demo/digit_\(digit).npy").floatValues()
      let bitmap = SkipFirstBitmap(width: 32, height: 32, rgb: pixels)
      let fromData = try classify(guide, interpreter, guide.inputs(from: bitmap, side: 32))
      let fromArrays = try classify(guide, interpreter, guide.nestedInputs(from: bitmap, side: 32))
      XCTAssertEqual(fromData.first?.label, labels[digit])
      XCTAssertEqual(fromData.map(\.label), fromArrays.map(\.label))
      XCTAssertEqual(fromData.map(\.probability), fromArrays.map(\.probability))
    }

    // The bundled model serves when nothing was downloaded.
    let bundled = guide.makeInterpreter(remoteModel: CustomRemoteModel(name: "never-published"), localModel: localModel)
    let bundledTop5 = try classify(guide, bundled, guide.inputs(from: referenceBitmap, side: 32))
    XCTAssertEqual(bundledTop5.map(\.label), top5.map(\.label))
  }

  func testAutoMLObjectDetectionGuide() throws {
    try publish("detection/ssd_mini_f32.tflite", as: "ssd")
    let labels = (0..<10).map { "class\($0)" }
    try Data(labels.joined(separator: "\n").utf8).write(to: folder.appendingPathComponent("dict.txt"))
    let guide = AutoMLGuide(resourceDirectory: folder.path, remoteModelName: "ssd", maxDetections: 10)
    XCTAssertNil(try guide.detect(inputData: Data()), "no model before the download, and none bundled")

    waitUntilFinished(guide.startDownload())
    let input = Data(try array("detection/ssd_mini_f32.input_0.npy").bytes)
    let objects = try XCTUnwrap(try guide.detect(inputData: input))

    let boxes = try array("detection/ssd_mini_f32.output_0.npy").floatValues()
    let classes = try array("detection/ssd_mini_f32.output_1.npy").floatValues()
    let scores = try array("detection/ssd_mini_f32.output_2.npy").floatValues()
    let expected = scores.indices.filter { scores[$0] > 0.66 }
    XCTAssertEqual(objects.count, expected.count)
    for (object, index) in zip(objects, expected) {
      XCTAssertEqual(object.label, labels[Int(classes[index])])
      XCTAssertEqual(object.confidence, scores[index], accuracy: 4e-5)
      for (have, want) in zip(object.box, boxes[4 * index..<4 * index + 4]) { XCTAssertEqual(have, want, accuracy: 4e-5) }
    }
  }
}
