import Foundation
import XCTest

@testable import FirebaseMLModelDownloader

/// Another process (the `tflite` tool) downloading into the same storage folder, killed half-way.
final class CrossProcessTests: DownloaderTestCase {
  func testKilledDownloadInAnotherProcessKeepsTheOldModelAndIsResumedHere() async throws {
    let root = try makeDirectory("site")
    let version1 = syntheticModel(size: 30_000, seed: 80)
    let version2 = syntheticModel(size: 1_500_000, seed: 81)
    let write = { (bytes: [UInt8], file: String) in
      try Data(bytes).write(to: root.appendingPathComponent(file))
      let index = try StaticModelIndex(describingModelAtPath: root.appendingPathComponent(file).path, name: "mobilenet")
      try Data(index.jsonText.utf8).write(to: root.appendingPathComponent("mobilenet.json"))
    }
    try write(version1, "mobilenet-1.tflite")
    let nginx = try startNginx(root: root, slowRate: "300k")
    let downloader = ModelDownloader(source: .staticHosting(baseURL: nginx.baseURL), settings: settings())
    let conditions = ModelDownloadConditions()
    let old = try await downloader.getModel(name: "mobilenet", downloadType: .latestModel, conditions: conditions)
    try write(version2, "mobilenet-2.tflite")
    let files = ModelStore(directory: storageDirectory.path, namespace: FirebaseApp.defaultAppName).files(for: "mobilenet")
    let partialPath = storageDirectory.path + "/" + files.partial

    let other = Process()
    other.executableURL = try tfliteToolURL()
    other.arguments = ["download", "mobilenet", "--index", nginx.baseURL.appendingPathComponent("slow").absoluteString, "--storage", storageDirectory.path]
    other.standardOutput = FileHandle.nullDevice
    other.standardError = FileHandle.nullDevice
    try other.run()
    defer { if other.isRunning { other.terminate() } }
    let halfway = await waitUntil { (FileSystem.regularFileSize(atPath: partialPath) ?? 0) > 300_000 }
    XCTAssertTrue(halfway, "the other process is downloading")
    assertFile(old.path, holds: version1, "while the other process downloads")

    // This process asks for the same model: it must wait for the other process's lock.
    let fastPathRequests = { nginx.accessLog().filter { !$0.contains(" /slow/") }.count }
    let fastPathRequestsBefore = fastPathRequests()
    let here = Task { try await downloader.getModel(name: "mobilenet", downloadType: .latestModel, conditions: conditions) }
    try await Task.sleep(nanoseconds: 300_000_000)
    XCTAssertEqual(fastPathRequests(), fastPathRequestsBefore, "this process waits while the other holds the lock")
    kill(other.processIdentifier, SIGKILL)
    other.waitUntilExit()
    XCTAssertEqual(other.terminationReason, .uncaughtSignal)

    let new = try await here.value
    XCTAssertNotEqual(new.path, old.path)
    XCTAssertFalse(FileManager.default.fileExists(atPath: old.path), "the replaced version is removed")
    assertFile(new.path, holds: version2)
    let last = try XCTUnwrap(nginx.accessLog().last)
    XCTAssertTrue(last.hasPrefix("GET /mobilenet-2.tflite 206 range=\"bytes="), "resumed, not restarted: \(last)")
    XCTAssertFalse(FileManager.default.fileExists(atPath: partialPath))
  }
}
