import Foundation
import XCTest

@testable import FirebaseMLModelDownloader

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The store never serves the wrong bytes: installs killed at every step, files damaged on disk,
/// links planted in the folder, leftovers of failed requests.
final class StoreIntegrityTests: DownloaderTestCase {
  private let conditions = ModelDownloadConditions()

  /// Points inside ``ModelStore/install(_:record:in:)`` where the tool can be made to stop.
  private let installPausePoints = ["verified", "file-renamed", "record-temporary-written", "record-committed", "leftovers-removed"]

  /// Counts index publications, giving each a distinct modification time.
  private var publications = 0

  /// Writes `file` as the model `name` of the site, with its index. nginx's ETag is the
  /// modification second and the size, and indexes of equal-size versions have equal sizes, so
  /// each publication gets its own modification time.
  private func publish(_ name: String, file: String, in root: URL) throws -> StaticModelIndex {
    let index = try StaticModelIndex(describingModelAtPath: root.appendingPathComponent(file).path, name: name)
    let indexURL = root.appendingPathComponent("\(name).json")
    try Data(index.jsonText.utf8).write(to: indexURL)
    publications += 1
    try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: 1_700_000_000 + Double(publications))], ofItemAtPath: indexURL.path)
    return index
  }

  /// Model files (not records, locks or partial downloads) in the storage folder.
  private func storedModelFiles() throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: storageDirectory.path).filter { $0.hasPrefix("fbml_model") }
  }

  func testToolKilledAtEveryInstallStepLeavesOneCompleteVersionAndARollbackIsServedExactly() async throws {
    let root = try makeDirectory("site")
    // Two retrained versions of one model: same size, different bytes.
    let version1 = try writeValidModel(to: root.appendingPathComponent("mobilenet-1.tflite"), payload: 300_000, seed: 1)
    let version2 = try writeValidModel(to: root.appendingPathComponent("mobilenet-2.tflite"), payload: 300_000, seed: 2)
    XCTAssertEqual(version1.count, version2.count)
    let nginx = try startNginx(root: root)
    let downloader = ModelDownloader(
      source: .staticHosting(baseURL: nginx.baseURL), settings: settings { $0.modelValidator = ModelDownloaderSettings.verifyTensorFlowLiteModel })

    for point in installPausePoints {
      try? FileManager.default.removeItem(at: storageDirectory)
      let index1 = try publish("mobilenet", file: "mobilenet-1.tflite", in: root)
      let old = try await downloader.getModel(name: "mobilenet", downloadType: .latestModel, conditions: conditions)
      let index2 = try publish("mobilenet", file: "mobilenet-2.tflite", in: root)

      let tool = try ToolProcess(
        ["download", "mobilenet", "--index", nginx.baseURL.absoluteString, "--storage", storageDirectory.path],
        environment: ["TFLITE_DOWNLOADER_PAUSE_AT": point])
      XCTAssertTrue(tool.waitForError(containing: "paused at \(point)"), "\(point): \(tool.standardError)")
      tool.killNow()

      // Whatever the store holds now is one complete version with its own record.
      let afterKill = try await downloader.getModel(name: "mobilenet", downloadType: .localModel, conditions: conditions)
      let expected = afterKill.hash == index1.sha256 ? version1 : version2
      XCTAssertTrue([index1.sha256, index2.sha256].contains(afterKill.hash), point)
      assertFile(afterKill.path, holds: expected, "killed at \(point)")
      let committed = ["record-committed", "leftovers-removed"].contains(point)
      XCTAssertEqual(afterKill.hash, committed ? index2.sha256 : index1.sha256, "killed at \(point)")
      if !committed { XCTAssertEqual(afterKill.path, old.path, point) }

      // The publisher rolls back to version 1: it must be served byte for byte.
      _ = try publish("mobilenet", file: "mobilenet-1.tflite", in: root)
      let rolledBack = try await downloader.getModel(name: "mobilenet", downloadType: .latestModel, conditions: conditions)
      XCTAssertEqual(rolledBack.hash, index1.sha256, point)
      assertFile(rolledBack.path, holds: version1, "rollback after a kill at \(point)")
      XCTAssertEqual(try storedModelFiles(), [URL(fileURLWithPath: rolledBack.path).lastPathComponent], "leftovers removed after \(point)")
    }
  }

  func testChangedBytesOnDiskAreDownloadedAgainNotServed() async throws {
    let root = try makeDirectory("site")
    let bytes = syntheticModel(size: 1_000_000, seed: 90)
    try Data(bytes).write(to: root.appendingPathComponent("m.tflite"))
    _ = try publish("mobilenet", file: "m.tflite", in: root)
    let nginx = try startNginx(root: root)
    let downloader = ModelDownloader(source: .staticHosting(baseURL: nginx.baseURL), settings: settings())
    let fileRequests = { nginx.accessLog().filter { $0.hasPrefix("GET /m.tflite 200") }.count }

    // A byte in the fingerprinted head of the file.
    let model = try await downloader.getModel(name: "mobilenet", downloadType: .latestModel, conditions: conditions)
    try flipByte(at: 1000, of: model.path)
    let repaired = try await downloader.getModel(name: "mobilenet", downloadType: .localModel, conditions: conditions)
    assertFile(repaired.path, holds: bytes, "a damaged head is repaired")
    XCTAssertEqual(fileRequests(), 2)
    XCTAssertTrue(log.lines.contains { $0.contains("stored model mobilenet is damaged") }, log.lines.joined(separator: "\n"))

    // Same size, other bytes (a retrained model copied over the file) with `latest`.
    try Data(syntheticModel(size: 1_000_000, seed: 91)).write(to: URL(fileURLWithPath: repaired.path))
    let replaced = try await downloader.getModel(name: "mobilenet", downloadType: .latestModel, conditions: conditions)
    assertFile(replaced.path, holds: bytes, "a replaced file is repaired")
    XCTAssertEqual(fileRequests(), 3)

    // A byte between the fingerprint's samples is caught by the full re-hash setting.
    let thorough = ModelDownloader(
      source: .staticHosting(baseURL: nginx.baseURL), settings: settings { $0.verifiesStoredModelsCompletely = true })
    try flipByte(at: 500_000 + 4096 * 3 + 7, of: replaced.path)
    let rehashed = try await thorough.getModel(name: "mobilenet", downloadType: .localModel, conditions: conditions)
    assertFile(rehashed.path, holds: bytes, "the full re-hash finds one flipped byte")
    XCTAssertEqual(fileRequests(), 4)
  }

  /// Inverts one byte of the file at `path` in place.
  private func flipByte(at offset: Int, of path: String) throws {
    let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
    defer { try? handle.close() }
    try handle.seek(toOffset: UInt64(offset))
    let byte = try XCTUnwrap(handle.readData(ofLength: 1).first)
    try handle.seek(toOffset: UInt64(offset))
    handle.write(Data([~byte]))
  }

  func testLinkPlantedAtThePartialDownloadIsNeverWrittenThrough() async throws {
    let root = try makeDirectory("site")
    let bytes = syntheticModel(size: 400_000, seed: 92)
    try Data(bytes).write(to: root.appendingPathComponent("m.tflite"))
    let index = try publish("mobilenet", file: "m.tflite", in: root)
    let nginx = try startNginx(root: root)
    let store = ModelStore(directory: storageDirectory.path, namespace: FirebaseApp.defaultAppName)
    let folder = try store.open()
    let files = store.files(for: "mobilenet")
    let victim = temporaryDirectory.appendingPathComponent("victim.txt")
    let victimBytes = Array(syntheticModel(size: 10_000, seed: 93).prefix(10_000))
    try Data(victimBytes).write(to: victim)
    // A resumable-looking partial download that is a link to a file outside the store.
    try FileManager.default.createSymbolicLink(atPath: folder.path(of: files.partial), withDestinationPath: victim.path)
    try store.savePartialState(PartialDownloadState(hash: index.sha256, size: index.size, sha256: index.sha256, validator: nil), for: files, in: folder)

    let model = try await ModelDownloader(source: .staticHosting(baseURL: nginx.baseURL), settings: settings())
      .getModel(name: "mobilenet", downloadType: .latestModel, conditions: conditions)

    assertFile(model.path, holds: bytes)
    assertFile(victim.path, holds: victimBytes, "the link's target is untouched")
  }

  func testFailedRequestsLeaveNoEmptyPartialFile() async throws {
    let root = try makeDirectory("site")
    let index = StaticModelIndex(name: "mobilenet", url: "missing.tflite", sha256: String(repeating: "c", count: 64), size: 5000)
    try Data(index.jsonText.utf8).write(to: root.appendingPathComponent("mobilenet.json"))
    let nginx = try startNginx(root: root)

    await assertFails(with: .notFound) {
      _ = try await ModelDownloader(source: .staticHosting(baseURL: self.nginx(nginx)), settings: self.settings())
        .getModel(name: "mobilenet", downloadType: .latestModel, conditions: self.conditions)
    }
    let partials = try FileManager.default.contentsOfDirectory(atPath: storageDirectory.path).filter { $0.contains("partial") }
    XCTAssertEqual(partials, [], "no 0-byte partial file is left")
  }

  /// The base URL of `nginx` (keeps the autoclosure above free of captures of a local).
  private func nginx(_ fixture: NginxFixture) -> URL { fixture.baseURL }

  func testLocalIndexCannotNameAFileOutsideItsFolder() async throws {
    let outside = try makeDirectory("outside")
    let folder = try makeDirectory("models")
    let secret = syntheticModel(size: 20_000, seed: 94)
    try Data(secret).write(to: outside.appendingPathComponent("secret.tflite"))
    let target = outside.appendingPathComponent("secret.tflite").path
    for (name, url) in [("dotdot", "../outside/secret.tflite"), ("absolute", "file://" + target), ("link", "link.tflite")] {
      var index = try StaticModelIndex(describingModelAtPath: target, name: name)
      index.url = url
      try Data(index.jsonText.utf8).write(to: folder.appendingPathComponent("\(name).json"))
    }
    try FileManager.default.createSymbolicLink(atPath: folder.appendingPathComponent("link.tflite").path, withDestinationPath: target)
    let downloader = ModelDownloader(source: .localDirectory(folder), settings: settings())

    for name in ["dotdot", "absolute", "link"] {
      let description = await internalErrorDescription {
        _ = try await downloader.getModel(name: name, downloadType: .latestModel, conditions: self.conditions)
      }
      XCTAssertTrue(description?.contains("outside its folder") == true, "\(name): \(description ?? "no error")")
    }
  }
}

/// A storage folder the process cannot write: stored models are still served.
final class ReadOnlyStoreTests: DownloaderTestCase {
  /// Runs the tool with `arguments` as a user who cannot write the store: the current user when it
  /// is not root (the folder is made read-only), else `nobody` through util-linux's `setpriv`.
  private func runUnprivileged(_ arguments: [String]) throws -> (status: Int32, output: String, error: String) {
    let process = Process()
    let tool = try tfliteToolURL().path
    if getuid() == 0 {
      process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
      process.arguments = ["--reuid=65534", "--regid=65534", "--clear-groups", tool] + arguments
    } else {
      process.executableURL = URL(fileURLWithPath: tool)
      process.arguments = arguments
    }
    let output = Pipe()
    let error = Pipe()
    process.standardOutput = output
    process.standardError = error
    try process.run()
    let outputData = output.fileHandleForReading.readDataToEndOfFile()
    let errorData = error.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: outputData, as: UTF8.self), String(decoding: errorData, as: UTF8.self))
  }

  /// Makes the storage folder and its files readable by everyone and writable by no one.
  private func makeStorageReadOnly() throws {
    for entry in try FileManager.default.contentsOfDirectory(atPath: storageDirectory.path) {
      try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: storageDirectory.appendingPathComponent(entry).path)
    }
    try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: storageDirectory.path)
  }

  override func tearDown() async throws {
    try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: storageDirectory.path)
    try await super.tearDown()
  }

  func testReadOnlyStoreServesLocalAndUnchangedLatestAndExplainsAChange() async throws {
    let root = try makeDirectory("site")
    let bytes = syntheticModel(size: 50_000, seed: 110)
    try Data(bytes).write(to: root.appendingPathComponent("m.tflite"))
    let index = try StaticModelIndex(describingModelAtPath: root.appendingPathComponent("m.tflite").path, name: "m")
    try Data(index.jsonText.utf8).write(to: root.appendingPathComponent("m.json"))
    try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: temporaryDirectory.path)
    let nginx = try startNginx(root: root)
    let model = try await ModelDownloader(source: .staticHosting(baseURL: nginx.baseURL), settings: settings())
      .getModel(name: "m", downloadType: .latestModel, conditions: ModelDownloadConditions())
    try makeStorageReadOnly()
    let common = ["download", "m", "--index", nginx.baseURL.absoluteString, "--storage", storageDirectory.path]

    let local = try runUnprivileged(common + ["--type", "local"])
    XCTAssertEqual(local.status, 0, local.error)
    XCTAssertEqual(local.output.split(separator: "\n").last.map(String.init), model.path)
    let latest = try runUnprivileged(common + ["--type", "latest"])
    XCTAssertEqual(latest.status, 0, latest.error)
    XCTAssertEqual(latest.output.split(separator: "\n").last.map(String.init), model.path)
    XCTAssertTrue(nginx.accessLog().last?.hasPrefix("GET /m.json 304") == true, nginx.accessLog().joined(separator: "\n"))

    // A new version cannot be installed: a clear error, and the stored model stays.
    let newer = syntheticModel(size: 60_000, seed: 111)
    try Data(newer).write(to: root.appendingPathComponent("m.tflite"))
    let newIndex = try StaticModelIndex(describingModelAtPath: root.appendingPathComponent("m.tflite").path, name: "m")
    try Data(newIndex.jsonText.utf8).write(to: root.appendingPathComponent("m.json"))
    // nginx's ETag is modification second plus size; both indexes have the same size.
    try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: 1_700_000_000)], ofItemAtPath: root.appendingPathComponent("m.json").path)
    let changed = try runUnprivileged(common + ["--type", "latest"])
    XCTAssertEqual(changed.status, 1, changed.output)
    XCTAssertTrue(changed.error.contains("Permission denied") || changed.error.contains("Read-only"), changed.error)
    assertFile(model.path, holds: bytes)
  }
}
