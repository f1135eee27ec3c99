import Foundation
import XCTest

@testable import FirebaseMLModelDownloader

/// Static hosting served by Debian's nginx: the index format, conditional requests, range resumes.
final class StaticHostingTests: DownloaderTestCase {
  private let conditions = ModelDownloadConditions()

  /// Writes `bytes` as `file` in `root` and an index `name.json` pointing at it (`url` defaults to the file name).
  @discardableResult
  private func host(
    _ name: String, bytes: [UInt8], file: String, in root: URL, url: String? = nil, sha256: String? = nil, size: Int64? = nil
  ) throws -> StaticModelIndex {
    let fileURL = root.appendingPathComponent(file)
    try FileManager.default.createDirectory(at: fileURL.deletingLastPathComponent(), withIntermediateDirectories: true)
    try Data(bytes).write(to: fileURL)
    var index = try StaticModelIndex(describingModelAtPath: fileURL.path, name: name, url: url ?? file)
    if let sha256 { index.sha256 = sha256 }
    if let size { index.size = size }
    try Data(index.jsonText.utf8).write(to: root.appendingPathComponent("\(name).json"))
    return index
  }

  private func staticDownloader(_ baseURL: URL, _ adjust: (inout ModelDownloaderSettings) -> Void = { _ in }) -> ModelDownloader {
    ModelDownloader(source: .staticHosting(baseURL: baseURL), settings: settings(adjust))
  }

  func testDownloadThenConditionalIndexRequestGets304() async throws {
    let root = try makeDirectory("site")
    let bytes = syntheticModel(size: 150_000, seed: 40)
    let index = try host("mobilenet", bytes: bytes, file: "files/mobilenet-v1.tflite", in: root)
    let nginx = try startNginx(root: root)
    let downloader = staticDownloader(nginx.baseURL)

    let model = try await downloader.getModel(name: "mobilenet", downloadType: .latestModel, conditions: conditions)
    let again = try await downloader.getModel(name: "mobilenet", downloadType: .latestModel, conditions: conditions)

    XCTAssertEqual(model.hash, index.sha256)
    XCTAssertEqual(model.hash, SHA256.hexDigest(of: bytes))
    XCTAssertEqual(model.size, bytes.count)
    assertFile(model.path, holds: bytes)
    XCTAssertEqual(again, model)
    let log = nginx.accessLog()
    XCTAssertEqual(log.count, 3, log.joined(separator: "\n"))
    XCTAssertTrue(log[0].hasPrefix("GET /mobilenet.json 200"), log[0])
    XCTAssertTrue(log[1].hasPrefix("GET /files/mobilenet-v1.tflite 200"), log[1])
    XCTAssertTrue(log[2].hasPrefix("GET /mobilenet.json 304"), log[2])
    XCTAssertFalse(log[2].contains("if_none_match=\"-\""), "the stored index ETag is sent")
  }

  func testRealModelFromTestModelsPassesTheDefaultVerifier() async throws {
    let testModels = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent().appendingPathComponent("TestModels/networks")
    let original = testModels.appendingPathComponent("mobilenet_mini_float.tflite")
    let bytes = Array(try Data(contentsOf: original))
    let root = try makeDirectory("site")
    try host("mobilenet", bytes: bytes, file: "mobilenet_mini_float.tflite", in: root)
    let nginx = try startNginx(root: root)
    let downloader = staticDownloader(nginx.baseURL) { $0.modelValidator = ModelDownloaderSettings.verifyTensorFlowLiteModel }

    let model = try await downloader.getModel(name: "mobilenet", downloadType: .latestModel, conditions: conditions)

    assertFile(model.path, holds: bytes)
    XCTAssertEqual(model.hash, SHA256.hexDigest(of: bytes))
  }

  func testNewVersionIsDownloadedAndBackgroundUpdateIsSeenNextTime() async throws {
    let root = try makeDirectory("site")
    let version1 = syntheticModel(size: 80_000, seed: 41)
    let version2 = syntheticModel(size: 90_000, seed: 42)
    try host("mobilenet", bytes: version1, file: "v1/mobilenet.tflite", in: root)
    let nginx = try startNginx(root: root)
    let downloader = staticDownloader(nginx.baseURL)
    let first = try await downloader.getModel(name: "mobilenet", downloadType: .latestModel, conditions: conditions)
    // A different index length: nginx's ETag is modification second plus size.
    let index2 = try host("mobilenet", bytes: version2, file: "v2/mobilenet-new.tflite", in: root)

    let immediate = try await downloader.getModel(name: "mobilenet", downloadType: .localModelUpdateInBackground, conditions: conditions)
    XCTAssertEqual(immediate, first)
    // The record is committed first, the replaced file removed right after.
    let updated = try await waitUntil {
      try await downloader.listDownloadedModels().first?.hash == index2.sha256 && !FileManager.default.fileExists(atPath: first.path)
    }

    XCTAssertTrue(updated)
    let next = try await downloader.getModel(name: "mobilenet", downloadType: .localModel, conditions: conditions)
    XCTAssertNotEqual(next.path, first.path, "each version gets its own file")
    XCTAssertFalse(FileManager.default.fileExists(atPath: first.path), "the replaced version is removed")
    assertFile(next.path, holds: version2)
  }

  func testAbsoluteFileURLAndBaseURLWithoutTrailingSlash() async throws {
    let root = try makeDirectory("site")
    let bytes = syntheticModel(size: 20_000, seed: 43)
    let nginx = try startNginx(root: root)
    try host("tiny", bytes: bytes, file: "elsewhere/tiny.tflite", in: root.appendingPathComponent("models"),
      url: nginx.baseURL.appendingPathComponent("models/elsewhere/tiny.tflite").absoluteString)
    let downloader = staticDownloader(nginx.baseURL.appendingPathComponent("models"))

    let model = try await downloader.getModel(name: "tiny", downloadType: .latestModel, conditions: conditions)

    assertFile(model.path, holds: bytes)
  }

  func testIndexProblemsMapToErrors() async throws {
    let root = try makeDirectory("site")
    let bytes = syntheticModel(size: 20_000, seed: 44)
    try host("wrongname", bytes: bytes, file: "a.tflite", in: root)
    try Data(#"{"name": "wrongname-really", "url": "a.tflite", "sha256": "00", "size": 1}"#.utf8)
      .write(to: root.appendingPathComponent("wrongname.json"))
    try Data("<html>not json</html>".utf8).write(to: root.appendingPathComponent("garbage.json"))
    try host("badhash", bytes: bytes, file: "b.tflite", in: root, sha256: String(repeating: "0", count: 64))
    try host("badsize", bytes: bytes, file: "c.tflite", in: root, size: 30_000)
    try host("missingfile", bytes: bytes, file: "d.tflite", in: root, url: "nowhere.tflite")
    try host("insecure", bytes: bytes, file: "e.tflite", in: root, url: "http://example.com/e.tflite")
    try host("scheme", bytes: bytes, file: "f.tflite", in: root, url: "file:///etc/passwd")
    let nginx = try startNginx(root: root)
    let downloader = staticDownloader(nginx.baseURL)

    await assertFails(with: .notFound) {
      _ = try await downloader.getModel(name: "absent", downloadType: .latestModel, conditions: conditions)
    }
    await assertFails(with: .notFound) {
      _ = try await downloader.getModel(name: "missingfile", downloadType: .latestModel, conditions: conditions)
    }
    let expectations: [(String, String)] = [
      ("wrongname", "Model index names model 'wrongname-really', expected 'wrongname'."),
      ("garbage", "Failed to parse model index: not a JSON object."),
      ("badhash", "does not match the expected 0000"),
      ("badsize", "The server announced 20000 bytes, but the source declared 30000."),
      ("insecure", "refusing plain HTTP URL http://example.com/e.tflite"),
      ("scheme", "refusing URL"),
    ]
    for (name, expected) in expectations {
      let description = await internalErrorDescription {
        _ = try await downloader.getModel(name: name, downloadType: .latestModel, conditions: conditions)
      }
      XCTAssertTrue(description?.contains(expected) == true, "\(name): \(description ?? "nil")")
    }
    XCTAssertFalse(nginx.accessLog().contains { $0.contains("/etc/passwd") })
  }

  func testForbiddenAndRateLimitedIndexes() async throws {
    let root = try makeDirectory("site")
    let nginx = try startNginx(root: root)
    await assertFails(with: .permissionDenied) {
      _ = try await self.staticDownloader(nginx.baseURL.appendingPathComponent("forbidden"))
        .getModel(name: "any", downloadType: .latestModel, conditions: ModelDownloadConditions())
    }
    await assertFails(with: .resourceExhausted) {
      _ = try await self.staticDownloader(nginx.baseURL.appendingPathComponent("busy"))
        .getModel(name: "any", downloadType: .latestModel, conditions: ModelDownloadConditions())
    }
  }

  func testRedirectsAreFollowedOnlyWhereThePolicyAllows() async throws {
    let root = try makeDirectory("site")
    let bytes = syntheticModel(size: 20_000, seed: 49)
    try host("tiny", bytes: bytes, file: "tiny.tflite", in: root)
    let nginx = try startNginx(root: root)

    let model = try await staticDownloader(nginx.baseURL.appendingPathComponent("redirected"))
      .getModel(name: "tiny", downloadType: .latestModel, conditions: conditions)
    let description = await internalErrorDescription {
      _ = try await self.staticDownloader(nginx.baseURL.appendingPathComponent("moved"))
        .getModel(name: "tiny", downloadType: .latestModel, conditions: ModelDownloadConditions())
    }

    assertFile(model.path, holds: bytes)
    XCTAssertTrue(nginx.accessLog().contains { $0.hasPrefix("GET /redirected/tiny.json 302") })
    XCTAssertTrue(description?.hasPrefix("refusing plain HTTP URL http://192.0.2.1/moved:") == true, description ?? "")
  }

  func testPlainHTTPToAnotherHostIsRefusedUnlessAllowed() async throws {
    let remote = URL(string: "http://192.0.2.1/models")!
    let description = await internalErrorDescription {
      _ = try await self.staticDownloader(remote).getModel(name: "any", downloadType: .latestModel, conditions: ModelDownloadConditions())
    }
    XCTAssertEqual(
      description,
      "refusing plain HTTP URL http://192.0.2.1/models/any.json: only loopback hosts may use http:// unless ModelDownloaderSettings.allowsInsecureHTTP is set")
    let policy = URLPolicy(allowsInsecureHTTP: false)
    XCTAssertNoThrow(try policy.check(URL(string: "https://example.com/a")!))
    XCTAssertNoThrow(try policy.check(URL(string: "http://127.0.0.1:8080/a")!))
    XCTAssertNoThrow(try policy.check(URL(string: "http://localhost/a")!))
    XCTAssertNoThrow(try policy.check(URL(string: "http://[::1]:8080/a")!))
    XCTAssertThrowsError(try policy.check(URL(string: "http://127.0.0.1.example.com/a")!))
    XCTAssertThrowsError(try policy.check(URL(string: "ftp://example.com/a")!))
    XCTAssertNoThrow(try URLPolicy(allowsInsecureHTTP: true).check(URL(string: "http://example.com/a")!))
  }

  func testCancelledDownloadKeepsTheOldModelAndResumesWithARangeRequest() async throws {
    let root = try makeDirectory("site")
    let version1 = syntheticModel(size: 30_000, seed: 45)
    let version2 = syntheticModel(size: 1_000_000, seed: 46)
    try host("mobilenet", bytes: version1, file: "v1.tflite", in: root)
    let nginx = try startNginx(root: root, slowRate: "200k")
    let old = try await staticDownloader(nginx.baseURL).getModel(name: "mobilenet", downloadType: .latestModel, conditions: conditions)
    try host("mobilenet", bytes: version2, file: "v2.tflite", in: root)
    let slow = staticDownloader(nginx.baseURL.appendingPathComponent("slow"))
    let partialPath = storageDirectory.path + "/" + ModelStore(directory: storageDirectory.path, namespace: FirebaseApp.defaultAppName).files(for: "mobilenet").partial

    let interrupted = Task { try await slow.getModel(name: "mobilenet", downloadType: .latestModel, conditions: ModelDownloadConditions()) }
    let started = await waitUntil { (FileSystem.regularFileSize(atPath: partialPath) ?? 0) > 100_000 }
    XCTAssertTrue(started)
    interrupted.cancel()
    do {
      _ = try await interrupted.value
      XCTFail("the cancelled download must not finish")
    } catch {
      XCTAssertTrue(error is CancellationError, "\(error)")
    }

    let stillOld = try await slow.getModel(name: "mobilenet", downloadType: .localModel, conditions: conditions)
    XCTAssertEqual(stillOld, old)
    assertFile(stillOld.path, holds: version1)
    let kept = try XCTUnwrap(FileSystem.regularFileSize(atPath: partialPath))
    XCTAssertGreaterThan(kept, 100_000)

    let resumed = try await staticDownloader(nginx.baseURL).getModel(name: "mobilenet", downloadType: .latestModel, conditions: conditions)
    assertFile(resumed.path, holds: version2)
    let last = try XCTUnwrap(nginx.accessLog().last)
    XCTAssertTrue(last.hasPrefix("GET /v2.tflite 206 range=\"bytes="), last)
    let rangeStart = last.range(of: "range=\"bytes=").map { last[$0.upperBound...].prefix { $0.isNumber } }
    let resumedAt = try XCTUnwrap(rangeStart.flatMap { Int64($0) })
    XCTAssertGreaterThanOrEqual(resumedAt, kept, "the transfer went on from the kept bytes")
    XCTAssertTrue(last.hasSuffix("sent=\(1_000_000 - resumedAt)"), last)
    XCTAssertFalse(last.contains("if_range=\"-\""), "If-Range carries the validator: \(last)")
  }

  func testCorruptPartialFileIsDetectedAndTheDownloadStartsOver() async throws {
    let root = try makeDirectory("site")
    let bytes = syntheticModel(size: 200_000, seed: 47)
    let index = try host("mobilenet", bytes: bytes, file: "m.tflite", in: root)
    let nginx = try startNginx(root: root)
    let storage = ModelStore(directory: storageDirectory.path, namespace: FirebaseApp.defaultAppName)
    let folder = try storage.open()
    let files = storage.files(for: "mobilenet")
    try Data(syntheticModel(size: 50_000, seed: 48)).write(to: URL(fileURLWithPath: folder.path(of: files.partial)))
    try storage.savePartialState(
      PartialDownloadState(hash: index.sha256, size: index.size, sha256: index.sha256, validator: nil), for: files, in: folder)

    let model = try await staticDownloader(nginx.baseURL).getModel(name: "mobilenet", downloadType: .latestModel, conditions: conditions)

    assertFile(model.path, holds: bytes)
    let fileRequests = nginx.accessLog().filter { $0.hasPrefix("GET /m.tflite") }
    XCTAssertEqual(fileRequests.count, 2, fileRequests.joined(separator: "\n"))
    XCTAssertTrue(fileRequests.first?.hasPrefix("GET /m.tflite 206 range=\"bytes=50000-\"") == true, fileRequests.first ?? "")
    XCTAssertTrue(fileRequests.last?.hasPrefix("GET /m.tflite 200 range=\"-\"") == true, fileRequests.last ?? "")
  }
}
