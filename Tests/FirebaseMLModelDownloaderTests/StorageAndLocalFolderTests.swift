import Foundation
import XCTest

@testable import FirebaseMLModelDownloader

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Local folders as a source, listing and deleting stored models, locks, SHA-256, the default validator.
final class StorageAndLocalFolderTests: DownloaderTestCase {
  private let conditions = ModelDownloadConditions()

  private func folderDownloader(_ folder: URL, _ adjust: (inout ModelDownloaderSettings) -> Void = { _ in }) -> ModelDownloader {
    ModelDownloader(source: .localDirectory(folder), settings: settings(adjust))
  }

  func testPlainModelFileIsCopiedAndChangesAreNoticed() async throws {
    let folder = try makeDirectory("models")
    let version1 = syntheticModel(size: 40_000, seed: 50)
    let version2 = syntheticModel(size: 40_000, seed: 51)
    try Data(version1).write(to: folder.appendingPathComponent("digits.tflite"))
    let downloader = folderDownloader(folder)

    let first = try await downloader.getModel(name: "digits", downloadType: .latestModel, conditions: conditions)
    XCTAssertEqual(first.hash, SHA256.hexDigest(of: version1))
    assertFile(first.path, holds: version1)
    XCTAssertNotEqual(first.path, folder.appendingPathComponent("digits.tflite").path, "the model is copied into storage")
    let unchanged = try await downloader.getModel(name: "digits", downloadType: .latestModel, conditions: conditions)
    XCTAssertEqual(unchanged, first)

    try Data(version2).write(to: folder.appendingPathComponent("digits.tflite"))
    let second = try await downloader.getModel(name: "digits", downloadType: .latestModel, conditions: conditions)

    XCTAssertEqual(second.hash, SHA256.hexDigest(of: version2))
    XCTAssertNotEqual(second.path, first.path, "each version gets its own file")
    XCTAssertFalse(FileManager.default.fileExists(atPath: first.path), "the replaced version is removed")
    assertFile(second.path, holds: version2)
    await assertFails(with: .notFound) {
      _ = try await downloader.getModel(name: "absent", downloadType: .latestModel, conditions: conditions)
    }
  }

  func testIndexInAFolderNamesTheFileAndIsVerified() async throws {
    let folder = try makeDirectory("mirror")
    let bytes = syntheticModel(size: 30_000, seed: 52)
    try FileManager.default.createDirectory(at: folder.appendingPathComponent("blobs"), withIntermediateDirectories: true)
    try Data(bytes).write(to: folder.appendingPathComponent("blobs/abc.bin"))
    let index = try StaticModelIndex(describingModelAtPath: folder.appendingPathComponent("blobs/abc.bin").path, name: "digits", url: "blobs/abc.bin")
    try Data(index.jsonText.utf8).write(to: folder.appendingPathComponent("digits.json"))
    var lying = index
    lying.name = "lying"
    lying.sha256 = String(repeating: "a", count: 64)
    try Data(lying.jsonText.utf8).write(to: folder.appendingPathComponent("lying.json"))
    let downloader = folderDownloader(folder)

    let model = try await downloader.getModel(name: "digits", downloadType: .latestModel, conditions: conditions)
    let description = await internalErrorDescription {
      _ = try await downloader.getModel(name: "lying", downloadType: .latestModel, conditions: conditions)
    }

    XCTAssertEqual(model.hash, index.sha256)
    assertFile(model.path, holds: bytes)
    XCTAssertTrue(description?.contains("does not match the expected aaaa") == true, description ?? "")
  }

  func testIndexJSONTextIsTheDocumentedFormat() throws {
    let index = StaticModelIndex(name: "mobilenet", url: "https://cdn.example.com/m/v2.tflite", sha256: String(repeating: "b", count: 64), size: 12345)
    XCTAssertEqual(
      index.jsonText,
      "{\"name\": \"mobilenet\", \"url\": \"https://cdn.example.com/m/v2.tflite\", \"sha256\": \"\(String(repeating: "b", count: 64))\", \"size\": 12345}\n")
    let parsed = try StaticModelIndex.parse(Array(index.jsonText.utf8), expectedName: "mobilenet", maximumSize: 1 << 30)
    XCTAssertEqual(parsed, index)
    let quoted = StaticModelIndex(name: "q", url: "a \"b\".tflite", sha256: "", size: 1)
    XCTAssertTrue(quoted.jsonText.contains(#""url": "a \"b\".tflite""#), quoted.jsonText)
  }

  func testListAndDeleteWorkAcrossDownloaderInstances() async throws {
    let folder = try makeDirectory("models")
    for (seed, name) in ["alpha", "beta"].enumerated() {
      try Data(syntheticModel(size: 10_000, seed: UInt64(60 + seed))).write(to: folder.appendingPathComponent("\(name).tflite"))
    }
    let downloader = folderDownloader(folder)
    let alpha = try await downloader.getModel(name: "alpha", downloadType: .latestModel, conditions: conditions)
    let beta = try await downloader.getModel(name: "beta", downloadType: .latestModel, conditions: conditions)
    // Files that are not models of this namespace are left out of the list.
    try Data([1, 2, 3]).write(to: storageDirectory.appendingPathComponent("fbml_model@@otherapp@@gamma.tflite"))
    try Data([1, 2, 3]).write(to: storageDirectory.appendingPathComponent("notes.txt"))

    let restarted = folderDownloader(folder)
    let listed = try await restarted.listDownloadedModels()
    XCTAssertEqual(listed, [alpha, beta])

    try await restarted.deleteDownloadedModel(name: "alpha")
    let afterDelete = try await folderDownloader(folder).listDownloadedModels()
    XCTAssertEqual(afterDelete, [beta])
    XCTAssertFalse(FileManager.default.fileExists(atPath: alpha.path))
    do {
      try await restarted.deleteDownloadedModel(name: "alpha")
      XCTFail("deleting twice must fail")
    } catch DownloadedModelError.notFound {
    } catch {
      XCTFail("expected notFound, got \(error)")
    }
  }

  func testCallbackListAndDeleteFollowTheSDKsThreading() async throws {
    let folder = try makeDirectory("models")
    try Data(syntheticModel(size: 10_000, seed: 62)).write(to: folder.appendingPathComponent("alpha.tflite"))
    let downloader = folderDownloader(folder)
    let alpha = try await downloader.getModel(name: "alpha", downloadType: .latestModel, conditions: conditions)
    var listedSynchronously: Set<CustomModel>?

    downloader.listDownloadedModels { result in listedSynchronously = try? result.get() }
    XCTAssertEqual(listedSynchronously, [alpha], "success is reported on the caller's thread")

    let deleted: Bool = await withCheckedContinuation { continuation in
      downloader.deleteDownloadedModel(name: "alpha") { result in
        continuation.resume(returning: (try? result.get()) != nil)
      }
    }
    XCTAssertTrue(deleted)
    let missing: Bool = await withCheckedContinuation { continuation in
      downloader.deleteDownloadedModel(name: "../alpha") { result in
        if case .failure(.notFound) = result { continuation.resume(returning: true) } else { continuation.resume(returning: false) }
      }
    }
    XCTAssertTrue(missing)
  }

  func testModelWhoseFileVanishedIsNotLocal() async throws {
    let folder = try makeDirectory("models")
    let bytes = syntheticModel(size: 10_000, seed: 63)
    try Data(bytes).write(to: folder.appendingPathComponent("alpha.tflite"))
    let downloader = folderDownloader(folder)
    let alpha = try await downloader.getModel(name: "alpha", downloadType: .localModel, conditions: conditions)
    try FileManager.default.removeItem(atPath: alpha.path)

    let listed = try await downloader.listDownloadedModels()
    let again = try await downloader.getModel(name: "alpha", downloadType: .localModel, conditions: conditions)

    XCTAssertTrue(listed.isEmpty)
    assertFile(again.path, holds: bytes)
  }

  func testDefaultValidatorAcceptsARealModel() async throws {
    let folder = try makeDirectory("models")
    let path = folder.appendingPathComponent("real.tflite").path
    let generator = Process()
    configurePython(generator, script: "make_tflite_model.py", arguments: [path, "20000", "5"])
    try generator.run()
    generator.waitUntilExit()
    XCTAssertEqual(generator.terminationStatus, 0)
    let downloader = folderDownloader(folder) { $0.modelValidator = ModelDownloaderSettings.verifyTensorFlowLiteModel }

    let model = try await downloader.getModel(name: "real", downloadType: .latestModel, conditions: conditions)

    XCTAssertGreaterThan(model.size, 20_000)
    assertFile(model.path, holds: Array(try Data(contentsOf: URL(fileURLWithPath: path))))
  }

  func testDefaultValidatorRejectsAFileThatIsNotAModel() async throws {
    let folder = try makeDirectory("models")
    try Data("<!DOCTYPE html><html><body>Sign in</body></html>".utf8).write(to: folder.appendingPathComponent("page.tflite"))
    let downloader = folderDownloader(folder) { $0.modelValidator = ModelDownloaderSettings.verifyTensorFlowLiteModel }

    let description = await internalErrorDescription {
      _ = try await downloader.getModel(name: "page", downloadType: .latestModel, conditions: conditions)
    }

    XCTAssertTrue(description?.hasPrefix("Downloaded file is not a valid TensorFlow Lite model: ") == true, description ?? "")
    let listed = try await downloader.listDownloadedModels()
    XCTAssertTrue(listed.isEmpty)
  }

  func testStorageDefaultsToTheXDGDataDirectory() throws {
    #if canImport(Darwin)
      let directory = try XCTUnwrap(ModelDownloaderSettings.defaultStorageDirectory())
      XCTAssertTrue(directory.path.hasSuffix("/com.firebase.FirebaseMLModelDownloader"), directory.path)
    #else
      let previous = ProcessInfo.processInfo.environment["XDG_DATA_HOME"]
      defer {
        if let previous { setenv("XDG_DATA_HOME", previous, 1) } else { unsetenv("XDG_DATA_HOME") }
      }
      setenv("XDG_DATA_HOME", "/srv/data", 1)
      XCTAssertEqual(ModelDownloaderSettings.defaultStorageDirectory()?.path, "/srv/data/com.firebase.FirebaseMLModelDownloader")
      setenv("XDG_DATA_HOME", "relative/ignored", 1)
      let home = ProcessInfo.processInfo.environment["HOME"] ?? "?"
      XCTAssertEqual(ModelDownloaderSettings.defaultStorageDirectory()?.path, "\(home)/.local/share/com.firebase.FirebaseMLModelDownloader")
    #endif
  }

  func testFileLockIsExclusiveAcrossOpens() async throws {
    let folder = try DirectoryHandle(path: temporaryDirectory.path)
    let acquired = try await FileLock.acquire(name: "test.lock", in: folder) { _ in }
    let first = try XCTUnwrap(acquired)
    let acquiredSecond = Locked(false)
    let reportedHolders = Locked<[Int32?]>([])
    let waiter = Task {
      let second = try await FileLock.acquire(name: "test.lock", in: folder) { holder in reportedHolders.withLock { $0.append(holder) } }
      acquiredSecond.withLock { $0 = true }
      second?.release()
    }
    try await Task.sleep(nanoseconds: 1_500_000_000)
    XCTAssertFalse(acquiredSecond.withLock { $0 }, "the second lock waits")
    first.release()
    try await waiter.value
    XCTAssertTrue(acquiredSecond.withLock { $0 })
    let holders = reportedHolders.withLock { $0 }
    XCTAssertFalse(holders.isEmpty, "the waiter reports whom it waits for")
    XCTAssertTrue(holders.allSatisfy { $0 == getpid() }, "the holder wrote its process ID: \(holders)")
  }

  func testFullDiskIsReportedAsOutOfSpace() throws {
    let file = OutputFile(descriptor: open("/dev/full", O_WRONLY), path: "/dev/full")
    defer { file.close() }
    XCTAssertThrowsError(try [UInt8](repeating: 1, count: 4096).withUnsafeBytes { try file.write($0) }) { error in
      XCTAssertTrue((error as? FileSystemFailure)?.isOutOfSpace == true, "\(error)")
    }
  }
}

/// SHA-256 against the FIPS 180-4 / NIST example vectors and the system's `sha256sum`.
final class SHA256Tests: XCTestCase {
  func testKnownVectors() {
    XCTAssertEqual(SHA256.hexDigest(of: []), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    XCTAssertEqual(SHA256.hexDigest(of: Array("abc".utf8)), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    XCTAssertEqual(
      SHA256.hexDigest(of: Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)),
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    XCTAssertEqual(
      SHA256.hexDigest(
        of: Array("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu".utf8)),
      "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1")
    XCTAssertEqual(
      SHA256.hexDigest(of: [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)),
      "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
  }

  func testPiecewiseUpdatesMatchOneShot() {
    let message = syntheticModel(size: 1000, seed: 70)
    let expected = SHA256.hexDigest(of: message)
    for split in [1, 55, 56, 63, 64, 65, 127, 128, 999] {
      var hasher = SHA256()
      var offset = 0
      while offset < message.count {
        let end = min(offset + split, message.count)
        hasher.update(Array(message[offset..<end]))
        offset = end
      }
      XCTAssertEqual(hasher.finalizeHex(), expected, "pieces of \(split) bytes")
    }
  }

  func testMatchesSha256sum() throws {
    let bytes = syntheticModel(size: 200_003, seed: 71)
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("sha-\(UUID().uuidString)").path
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    defer { try? FileManager.default.removeItem(atPath: path) }
    let process = Process()
    let output = Pipe()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["sha256sum", path]
    process.standardOutput = output
    try process.run()
    let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()

    XCTAssertEqual(text.split(separator: " ").first.map(String.init), try FileDigest(ofFileAtPath: path).sha256)
  }
}
