import FirebaseMLModelDownloader
import Foundation
import XCTest

@testable import TFLiteCommandLine

/// `tflite download` and `tflite models` on local folders (the network sources are tested in
/// FirebaseMLModelDownloaderTests against real servers).
final class DownloadCommandTests: XCTestCase {
  private var folder: URL!
  private var storage: URL!

  /// Accepts any file of at least 8 bytes whose bytes 4..<8 spell `TFL3` (the complete
  /// verifier is `TFLiteFormat`'s, tested there).
  private let acceptsTFL3 = { @Sendable (path: String) throws in
    guard let data = FileManager.default.contents(atPath: path), data.count >= 8, data[4..<8] == Data("TFL3".utf8) else {
      throw UsageError("not a TFL3 file")
    }
  }

  override func setUpWithError() throws {
    let base = FileManager.default.temporaryDirectory.appendingPathComponent("cli-download-\(UUID().uuidString)")
    folder = base.appendingPathComponent("models")
    storage = base.appendingPathComponent("storage")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
  }

  override func tearDownWithError() throws {
    try? FileManager.default.removeItem(at: folder.deletingLastPathComponent())
  }

  /// Model-like bytes: a root offset, `TFL3`, then `count` bytes of `fill`.
  private func modelBytes(_ count: Int, fill: UInt8) -> Data {
    Data([0x10, 0, 0, 0] + Array("TFL3".utf8) + [UInt8](repeating: fill, count: count))
  }

  /// Runs `tflite download` in-process with the TFL3 check as validator.
  private func download(_ arguments: [String]) throws -> (code: Int32, output: CapturedOutput) {
    var sink: any TextSink = CapturedOutput()
    let parsed = try DownloadCommand.specification.parse(arguments)
    let code = try DownloadCommand.run(parsed, output: &sink, modelValidator: acceptsTFL3)
    return (code, sink as? CapturedOutput ?? CapturedOutput())
  }

  /// Runs the whole tool in-process.
  private func tool(_ arguments: [String]) -> (code: Int32, output: CapturedOutput) {
    let capture = SharedCapture()
    let code = CommandLineTool.main(arguments: arguments, output: capture)
    return (code, capture.captured)
  }

  func testDownloadPrintsThePathAsTheLastLine() throws {
    let bytes = modelBytes(5000, fill: 7)
    try bytes.write(to: folder.appendingPathComponent("digits.tflite"))

    let (code, output) = try download(["digits", "--from-dir", folder.path, "--storage", storage.path])

    XCTAssertEqual(code, ExitCode.success)
    let path = try XCTUnwrap(output.standardOutput.split(separator: "\n").last.map(String.init))
    XCTAssertTrue(path.hasPrefix(storage.path + "/"), path)
    XCTAssertEqual(FileManager.default.contents(atPath: path), bytes)
  }

  func testIndexWrittenByModelsIndexIsUsableByDownload() throws {
    let bytes = modelBytes(3000, fill: 9)
    let file = folder.appendingPathComponent("blob-v7.bin")
    try bytes.write(to: file)
    var sink: any TextSink = CapturedOutput()

    let code = try ModelsCommand.run(
      try ModelsCommand.specification.parse(["index", file.path, "--name", "digits"]), output: &sink)

    XCTAssertEqual(code, ExitCode.success)
    let indexPath = folder.appendingPathComponent("digits.json").path
    XCTAssertEqual((sink as? CapturedOutput)?.standardOutput, indexPath + "\n")
    let json = try XCTUnwrap(FileManager.default.contents(atPath: indexPath))
    let fields = try XCTUnwrap(JSONSerialization.jsonObject(with: json) as? [String: Any])
    XCTAssertEqual(fields["name"] as? String, "digits")
    XCTAssertEqual(fields["url"] as? String, "blob-v7.bin")
    XCTAssertEqual(fields["size"] as? Int, bytes.count)
    XCTAssertEqual((fields["sha256"] as? String)?.count, 64)
    let (downloadCode, output) = try download(["digits", "--from-dir", folder.path, "--storage", storage.path])
    XCTAssertEqual(downloadCode, ExitCode.success)
    let path = try XCTUnwrap(output.standardOutput.split(separator: "\n").last.map(String.init))
    XCTAssertEqual(FileManager.default.contents(atPath: path), bytes)
  }

  func testListAndDelete() throws {
    try modelBytes(100, fill: 1).write(to: folder.appendingPathComponent("alpha.tflite"))
    try modelBytes(2000, fill: 2).write(to: folder.appendingPathComponent("beta.tflite"))
    _ = try download(["alpha", "--from-dir", folder.path, "--storage", storage.path])
    _ = try download(["beta", "--from-dir", folder.path, "--storage", storage.path])

    let listed = tool(["models", "list", "--storage", storage.path])
    XCTAssertEqual(listed.code, ExitCode.success)
    let lines = listed.output.standardOutput.split(separator: "\n")
    XCTAssertEqual(lines.count, 2)
    XCTAssertTrue(lines[0].hasPrefix("alpha   108  "), String(lines[0]))
    XCTAssertTrue(lines[1].hasPrefix("beta   2008  "), String(lines[1]))

    XCTAssertEqual(tool(["models", "delete", "alpha", "--storage", storage.path]).code, ExitCode.success)
    let afterDelete = tool(["models", "list", "--storage", storage.path]).output.standardOutput
    XCTAssertFalse(afterDelete.contains("alpha"))
    let again = tool(["models", "delete", "alpha", "--storage", storage.path])
    XCTAssertEqual(again.code, ExitCode.failure)
    XCTAssertTrue(again.output.standardError.contains("no downloaded model has that name"), again.output.standardError)
  }

  func testUsageErrorsAndFailuresHaveTheirExitCodes() throws {
    let noSource = tool(["download", "digits", "--storage", storage.path])
    XCTAssertEqual(noSource.code, ExitCode.usage)
    XCTAssertTrue(noSource.output.standardError.contains("give exactly one source"), noSource.output.standardError)
    let twoSources = tool(["download", "digits", "--from-dir", folder.path, "--index", "https://example.com/m/"])
    XCTAssertEqual(twoSources.code, ExitCode.usage)
    let badType = tool(["download", "digits", "--from-dir", folder.path, "--type", "newest"])
    XCTAssertEqual(badType.code, ExitCode.usage)
    let incompleteFirebase = tool(["download", "digits", "--firebase-project", "p", "--api-key", "k"])
    XCTAssertEqual(incompleteFirebase.code, ExitCode.usage)
    XCTAssertTrue(incompleteFirebase.output.standardError.contains("--app-id"), incompleteFirebase.output.standardError)

    let missing = tool(["download", "absent", "--from-dir", folder.path, "--storage", storage.path])
    XCTAssertEqual(missing.code, ExitCode.failure)
    XCTAssertEqual(missing.output.standardOutput, "")
    XCTAssertTrue(missing.output.standardError.contains("the model was not found at its source"), missing.output.standardError)

    try Data("<html>login</html>".utf8).write(to: folder.appendingPathComponent("page.tflite"))
    let rejected = tool(["download", "page", "--from-dir", folder.path, "--storage", storage.path])
    XCTAssertEqual(rejected.code, ExitCode.failure, "the real TFLite verifier rejects an HTML page")
    XCTAssertTrue(rejected.output.standardError.contains("not a valid TensorFlow Lite model"), rejected.output.standardError)
  }
}

/// A ``TextSink`` whose text stays readable after `CommandLineTool.main` consumed its copy.
private struct SharedCapture: TextSink {
  /// Shared storage for the text.
  final class Storage {
    /// Everything written.
    var captured = CapturedOutput()
  }

  /// The shared storage.
  let storage = Storage()
  /// Everything written so far.
  var captured: CapturedOutput { storage.captured }

  mutating func write(_ text: String) { storage.captured.write(text) }
  mutating func writeError(_ text: String) { storage.captured.writeError(text) }
  var isTerminal: Bool { false }
}
