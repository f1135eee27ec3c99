import Foundation
import XCTest

@testable import FirebaseMLModelDownloader

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// `ModelSource.cloudStorage` against a loopback double of the Firebase Storage REST API.
final class CloudStorageTests: DownloaderTestCase {
  private let conditions = ModelDownloadConditions()
  private let bucket = "demo-project.appspot.com"

  /// Writes `bytes` as object `models/NAME.tflite` of the bucket under `root`.
  private func upload(_ name: String, bytes: [UInt8], root: URL) throws {
    let folder = root.appendingPathComponent(bucket).appendingPathComponent("models")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    try Data(bytes).write(to: folder.appendingPathComponent("\(name).tflite"))
  }

  private func downloader(_ base: URL, _ adjust: (inout ModelDownloaderSettings) -> Void = { _ in }) -> ModelDownloader {
    ModelDownloader(source: .cloudStorage(bucket: bucket, objectPrefix: "models/"), settings: settings {
      $0.cloudStorageBaseURL = base
      adjust(&$0)
    })
  }

  /// Requests the fixture saw: path, query, Range and whether the Authorization matched.
  private func requests(_ base: URL) async throws -> [[String: Any]] {
    let (data, _) = try await URLSession.shared.data(from: base.appendingPathComponent("_requests"))
    return try JSONSerialization.jsonObject(with: data) as? [[String: Any]] ?? []
  }

  func testObjectIsDownloadedVerifiedAndKeptUntilItsGenerationChanges() async throws {
    let root = try makeDirectory("bucket-root")
    let version1 = syntheticModel(size: 40_000, seed: 120)
    try upload("digits", bytes: version1, root: root)
    let base = try startStorageFixture(root: root)
    let downloader = downloader(base)

    let first = try await downloader.getModel(name: "digits", downloadType: .latestModel, conditions: conditions)
    assertFile(first.path, holds: version1)
    let objectPath = root.appendingPathComponent("\(bucket)/models/digits.tflite").path
    let mtime = try XCTUnwrap(try FileManager.default.attributesOfItem(atPath: objectPath)[.modificationDate] as? Date)
    XCTAssertEqual(first.hash.count >= 16, true, "the generation (mtime in ns): \(first.hash)")
    XCTAssertEqual(Double(first.hash).map { ($0 / 1e9 - mtime.timeIntervalSince1970).magnitude < 1 }, true, first.hash)
    var seen = try await requests(base)
    XCTAssertEqual(seen.map { $0["path"] as? String }, Array(repeating: "/v0/b/\(bucket)/o/models%2Fdigits.tflite", count: 2), "the object name is one percent-encoded segment")
    XCTAssertEqual(seen.last?["query"] as? [String: String], ["alt": "media", "token": "token-1"])

    let unchanged = try await downloader.getModel(name: "digits", downloadType: .latestModel, conditions: conditions)
    XCTAssertEqual(unchanged, first)
    seen = try await requests(base)
    XCTAssertEqual(seen.count, 3, "only the metadata is read again")

    let version2 = syntheticModel(size: 40_000, seed: 121)
    try upload("digits", bytes: version2, root: root)
    try FileManager.default.setAttributes([.modificationDate: mtime.addingTimeInterval(5)], ofItemAtPath: objectPath)
    let second = try await downloader.getModel(name: "digits", downloadType: .latestModel, conditions: conditions)
    XCTAssertNotEqual(second.hash, first.hash)
    assertFile(second.path, holds: version2)
    await assertFails(with: .notFound) {
      _ = try await downloader.getModel(name: "absent", downloadType: .latestModel, conditions: self.conditions)
    }
  }

  func testWrongCRC32COrMD5IsRejectedAndNothingIsInstalled() async throws {
    let root = try makeDirectory("bucket-root")
    try upload("badcrc", bytes: syntheticModel(size: 20_000, seed: 122), root: root)
    try upload("badmd5", bytes: syntheticModel(size: 20_000, seed: 122), root: root)
    let base = try startStorageFixture(root: root)
    for (name, checksum) in [("badcrc", "CRC-32C"), ("badmd5", "MD5")] {
      let description = await internalErrorDescription {
        _ = try await downloader(base).getModel(name: name, downloadType: .latestModel, conditions: conditions)
      }
      XCTAssertTrue(description?.contains("Downloaded model's \(checksum)") == true, description ?? "")
    }
    let models = try await downloader(base).listDownloadedModels()
    XCTAssertTrue(models.isEmpty)
  }

  func testMD5MatchesTheRFC1321Vectors() {
    let vectors = [
      ("", "d41d8cd98f00b204e9800998ecf8427e"), ("abc", "900150983cd24fb0d6963f7d28e17f72"),
      ("message digest", "f96b697d7cb7938d525a2f31aaf161d0"),
      ("12345678901234567890123456789012345678901234567890123456789012345678901234567890", "57edf4a22be3c955ac49da2e2107b67a"),
    ]
    for (message, expected) in vectors {
      var md5 = MD5()
      Array(message.utf8).withUnsafeBytes { md5.update($0) }
      XCTAssertEqual(md5.finalize().map { String(format: "%02x", $0) }.joined(), expected, message)
    }
  }

  func testCRC32CMatchesTheStandardCheckValue() {
    var checksum = CRC32C()
    Array("123456789".utf8).withUnsafeBytes { checksum.update($0) }
    XCTAssertEqual(checksum.value, 0xE306_9283)
    var pieces = CRC32C()
    let bytes = syntheticModel(size: 1000, seed: 123)
    bytes[..<333].withUnsafeBytes { pieces.update($0) }
    bytes[333...].withUnsafeBytes { pieces.update($0) }
    var whole = CRC32C()
    bytes.withUnsafeBytes { whole.update($0) }
    XCTAssertEqual(pieces.value, whole.value)
  }

  func testAuthorizationIsSentAndNeverLoggedAndItsAbsenceIsPermissionDenied() async throws {
    let root = try makeDirectory("bucket-root")
    let bytes = syntheticModel(size: 20_000, seed: 124)
    try upload("digits", bytes: bytes, root: root)
    let secret = "Firebase eyJsecret-id-token"
    let base = try startStorageFixture(root: root, authorization: secret)

    await assertFails(with: .permissionDenied) {
      _ = try await self.downloader(base).getModel(name: "digits", downloadType: .latestModel, conditions: self.conditions)
    }
    let model = try await downloader(base) { $0.cloudStorageAuthorization = secret }
      .getModel(name: "digits", downloadType: .latestModel, conditions: conditions)
    assertFile(model.path, holds: bytes)
    let authorized = try await requests(base).suffix(2).map { $0["authorized"] as? Bool }
    XCTAssertEqual(authorized, [true, true], "metadata and media both carry the header")
    XCTAssertFalse(log.lines.contains { $0.contains("eyJsecret") }, log.lines.joined(separator: "\n"))
  }

  func testInterruptedDownloadResumesWithARangeRequest() async throws {
    let root = try makeDirectory("bucket-root")
    let bytes = syntheticModel(size: 60_000, seed: 125)
    try upload("digits", bytes: bytes, root: root)
    let base = try startStorageFixture(root: root)
    // The first 25,000 bytes are already on disk from an interrupted attempt at this generation.
    let store = ModelStore(directory: storageDirectory.path, namespace: FirebaseApp.defaultAppName)
    let folder = try store.open()
    let files = store.files(for: "digits")
    try Data(bytes[..<25_000]).write(to: URL(fileURLWithPath: folder.path(of: files.partial)))
    let metadataURL = try XCTUnwrap(URL(string: base.absoluteString + "/v0/b/\(bucket)/o/models%2Fdigits.tflite"))
    let metadata = try await URLSession.shared.data(from: metadataURL).0
    let stated = try XCTUnwrap(try JSONSerialization.jsonObject(with: metadata) as? [String: Any])
    try store.savePartialState(
      PartialDownloadState(hash: try XCTUnwrap(stated["generation"] as? String), size: 60_000, sha256: nil, validator: nil), for: files, in: folder)

    let model = try await downloader(base).getModel(name: "digits", downloadType: .latestModel, conditions: conditions)

    assertFile(model.path, holds: bytes)
    let lastRange = try await requests(base).last?["range"] as? String
    XCTAssertEqual(lastRange, "bytes=25000-")
  }

  func testToolDownloadsFromABucket() throws {
    let root = try makeDirectory("bucket-root")
    let folder = root.appendingPathComponent(bucket).appendingPathComponent("models")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    let bytes = try writeValidModel(to: folder.appendingPathComponent("digits.tflite"), payload: 30_000, seed: 7)
    let base = try startStorageFixture(root: root)
    let tool = try ToolProcess(
      ["download", "digits", "--gcs-bucket", bucket, "--prefix", "models/", "--gcs-url", base.absoluteString, "--storage", storageDirectory.path])
    tool.process.waitUntilExit()
    XCTAssertEqual(tool.process.terminationStatus, 0, tool.standardError)
    let stored = try XCTUnwrap(try FileManager.default.contentsOfDirectory(atPath: storageDirectory.path).first { $0.hasSuffix(".tflite") })
    assertFile(storageDirectory.appendingPathComponent(stored).path, holds: bytes)
  }
}
