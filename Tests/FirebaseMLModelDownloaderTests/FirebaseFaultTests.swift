import Foundation
import XCTest

@testable import FirebaseMLModelDownloader

/// Every fault of the Firebase fixture and the error it must map to.
final class FirebaseFaultTests: DownloaderTestCase {
  private let conditions = ModelDownloadConditions()

  func testModelInfoStatusCodesMapToTheSDKsErrors() async throws {
    let fixture = try startFirebaseFixture()
    try await fixture.publish("digits", bytes: syntheticModel(size: 20_000, seed: 10))
    let downloader = firebaseDownloader(fixture, app: try makeFirebaseApp())
    let cases: [(status: Int, plainBody: Bool, expected: DownloadError)] = [
      (400, false, .invalidArgument),
      (401, false, .permissionDenied),
      (403, false, .permissionDenied),
      (404, false, .notFound),
      (429, false, .resourceExhausted),
      (500, false, .internalError(description: "Injected failure 500.")),
      (503, true, .internalError(description: "Model info retrieval failed with HTTP error code: 503")),
    ]
    for (status, plainBody, expected) in cases {
      try await fixture.inject("modelInfo", "status", ["status": status, "plainBody": plainBody])
      await assertFails(with: expected) {
        _ = try await downloader.getModel(name: "digits", downloadType: .latestModel, conditions: conditions)
      }
    }
    await assertFails(with: .notFound) {
      _ = try await downloader.getModel(name: "unpublished", downloadType: .latestModel, conditions: conditions)
    }
    let files = try await fixture.requests().filter { $0.path.hasPrefix("/files/") }
    XCTAssertTrue(files.isEmpty, "no failed model-info call leads to a download")
  }

  func testModelInfoHashProblems() async throws {
    let fixture = try startFirebaseFixture()
    try await fixture.publish("digits", bytes: syntheticModel(size: 20_000, seed: 11))
    let downloader = firebaseDownloader(fixture, app: try makeFirebaseApp())

    try await fixture.inject("modelInfo", "noEtag")
    let missing = await internalErrorDescription {
      _ = try await downloader.getModel(name: "digits", downloadType: .latestModel, conditions: conditions)
    }
    XCTAssertEqual(missing, "Model hash missing in model info server response.")

    let stored = try await downloader.getModel(name: "digits", downloadType: .latestModel, conditions: conditions)
    try await fixture.inject("modelInfo", "wrongEtag")
    let unexpected = await internalErrorDescription {
      _ = try await downloader.getModel(name: "digits", downloadType: .latestModel, conditions: conditions)
    }
    XCTAssertEqual(unexpected, "Unexpected model hash value.")
    try await fixture.inject("modelInfo", "noEtag")
    let missingOn304 = await internalErrorDescription {
      _ = try await downloader.getModel(name: "digits", downloadType: .latestModel, conditions: conditions)
    }
    XCTAssertEqual(missingOn304, "Model hash missing in model info server response.")
    let afterwards = try await downloader.getModel(name: "digits", downloadType: .localModel, conditions: conditions)
    XCTAssertEqual(afterwards, stored)
  }

  func testUnreachableModelInfoServerIsAnInternalErrorWithoutTheURL() async throws {
    let fixture = try startFirebaseFixture()
    let app = try makeFirebaseApp()
    let closedPort = URL(string: "http://127.0.0.1:9")!
    let downloader = ModelDownloader(
      source: .firebaseML(app: app, endpoints: FirebaseMLEndpoints(modelInfoBaseURL: closedPort, installationsBaseURL: fixture.baseURL)),
      settings: settings())

    let description = await internalErrorDescription {
      _ = try await downloader.getModel(name: "digits", downloadType: .latestModel, conditions: conditions)
    }

    XCTAssertEqual(description, "Failed to retrieve model info: could not connect to the server (Connection refused)")
  }

  func testFileDownloadStatusCodesMapToTheSDKsErrors() async throws {
    let fixture = try startFirebaseFixture()
    try await fixture.publish("digits", bytes: syntheticModel(size: 20_000, seed: 12))
    let downloader = firebaseDownloader(fixture, app: try makeFirebaseApp())
    let cases: [(status: Int, expected: DownloadError)] = [
      (400, .invalidArgument),
      (401, .permissionDenied),
      (403, .permissionDenied),
      (404, .notFound),
      (429, .resourceExhausted),
      (500, .internalError(description: "Model download failed with HTTP error code: 500")),
    ]
    for (status, expected) in cases {
      try await fixture.inject("download", "status", ["status": status])
      await assertFails(with: expected) {
        _ = try await downloader.getModel(name: "digits", downloadType: .latestModel, conditions: conditions)
      }
    }
    let list = try await downloader.listDownloadedModels()
    XCTAssertTrue(list.isEmpty)
  }

  func testAFailedUpdateKeepsThePreviousModel() async throws {
    let fixture = try startFirebaseFixture()
    let version1 = syntheticModel(size: 40_000, seed: 13)
    try await fixture.publish("digits", bytes: version1)
    let downloader = firebaseDownloader(fixture, app: try makeFirebaseApp())
    let stored = try await downloader.getModel(name: "digits", downloadType: .latestModel, conditions: conditions)
    try await fixture.publish("digits", bytes: syntheticModel(size: 50_000, seed: 14))

    for fault in ["html", "cut", "wrongEtag"] {
      if fault == "wrongEtag" {
        try await fixture.inject("modelInfo", fault)
      } else {
        try await fixture.inject("download", fault, ["bytes": 10_000])
      }
      do {
        _ = try await downloader.getModel(name: "digits", downloadType: .latestModel, conditions: conditions)
        XCTFail("\(fault) must fail")
      } catch {
        let local = try await downloader.getModel(name: "digits", downloadType: .localModel, conditions: conditions)
        XCTAssertEqual(local, stored, "after \(fault)")
        assertFile(local.path, holds: version1, "after \(fault)")
      }
    }
  }

  func testHTMLPageInsteadOfTheModelIsRejected() async throws {
    let fixture = try startFirebaseFixture()
    try await fixture.publish("digits", bytes: syntheticModel(size: 20_000, seed: 15))
    try await fixture.inject("download", "html")
    let downloader = firebaseDownloader(fixture, app: try makeFirebaseApp())

    let description = await internalErrorDescription {
      _ = try await downloader.getModel(name: "digits", downloadType: .latestModel, conditions: conditions)
    }

    XCTAssertTrue(description?.contains("HTML page instead of the model") == true, description ?? "")
  }

  func testBodyCutShortFailsAndTheNextCallResumes() async throws {
    let fixture = try startFirebaseFixture()
    let bytes = syntheticModel(size: 300_000, seed: 16)
    try await fixture.publish("digits", bytes: bytes)
    try await fixture.inject("download", "cut", ["bytes": 120_000])
    let downloader = firebaseDownloader(fixture, app: try makeFirebaseApp())

    await assertFails(with: .failedPrecondition) {
      _ = try await downloader.getModel(name: "digits", downloadType: .latestModel, conditions: conditions)
    }
    let model = try await downloader.getModel(name: "digits", downloadType: .latestModel, conditions: conditions)

    assertFile(model.path, holds: bytes)
    let files = try await fixture.requests().filter { $0.path.hasPrefix("/files/") }
    XCTAssertEqual(files.count, 2)
    XCTAssertNil(files.first?.headers["range"])
    XCTAssertEqual(files.last?.headers["range"], "bytes=120000-", "the second call resumes where the first stopped")
    XCTAssertEqual(files.last?.headers["if-range"], "\"file-\(String(SHA256.hexDigest(of: bytes).prefix(20)))\"")
  }

  func testStalledTransferTimesOutAndTheNextCallResumes() async throws {
    let fixture = try startFirebaseFixture()
    let bytes = syntheticModel(size: 200_000, seed: 17)
    try await fixture.publish("digits", bytes: bytes)
    try await fixture.inject("download", "stall", ["bytes": 50_000, "delay": 8])
    let downloader = firebaseDownloader(fixture, app: try makeFirebaseApp()) { $0.requestTimeout = 1 }

    let started = Date()
    await assertFails(with: .failedPrecondition) {
      _ = try await downloader.getModel(name: "digits", downloadType: .latestModel, conditions: conditions)
    }
    XCTAssertLessThan(Date().timeIntervalSince(started), 6, "the 1 s idle timeout fired, not the server's close after 8 s")
    let model = try await downloader.getModel(name: "digits", downloadType: .latestModel, conditions: conditions)

    assertFile(model.path, holds: bytes)
    let files = try await fixture.requests().filter { $0.path.hasPrefix("/files/") }
    XCTAssertEqual(files.last?.headers["range"], "bytes=50000-")
  }

  func testWrongHashIsRejectedAndNothingIsKept() async throws {
    let fixture = try startFirebaseFixture()
    try await fixture.publish("digits", bytes: syntheticModel(size: 30_000, seed: 18))
    try await fixture.inject("modelInfo", "wrongEtag")
    let downloader = firebaseDownloader(fixture, app: try makeFirebaseApp())

    let description = await internalErrorDescription {
      _ = try await downloader.getModel(name: "digits", downloadType: .latestModel, conditions: conditions)
    }

    XCTAssertTrue(description?.contains("does not match the expected \(String(repeating: "f", count: 64))") == true, description ?? "")
    let leftovers = try FileManager.default.contentsOfDirectory(atPath: storageDirectory.path).filter { !$0.hasSuffix("@@lock") && !$0.hasPrefix(".installation") }
    XCTAssertEqual(leftovers, [], "neither the model nor a partial file is kept")
  }

  func testExpiredDownloadURLIsRenewedOnce() async throws {
    let fixture = try startFirebaseFixture()
    let bytes = syntheticModel(size: 30_000, seed: 19)
    try await fixture.publish("digits", bytes: bytes)
    try await fixture.inject("modelInfo", "expired")
    let downloader = firebaseDownloader(fixture, app: try makeFirebaseApp())

    let model = try await downloader.getModel(name: "digits", downloadType: .latestModel, conditions: conditions)

    assertFile(model.path, holds: bytes)
    let requests = try await fixture.requests()
    XCTAssertEqual(requests.filter { $0.path.hasSuffix(":download") }.count, 2)
    XCTAssertEqual(requests.filter { $0.query["expired"] == "1" }.count, 1)

    try await fixture.publish("digits", bytes: syntheticModel(size: 30_000, seed: 20))
    try await fixture.inject("modelInfo", "expired", ["times": 2])
    let description = await internalErrorDescription {
      _ = try await downloader.getModel(name: "digits", downloadType: .latestModel, conditions: conditions)
    }
    XCTAssertEqual(description, "Unable to update expired model info.")
  }

  func testServerCannotMakeTheClientWriteMoreThanDeclared() async throws {
    let fixture = try startFirebaseFixture()
    let bytes = syntheticModel(size: 100_000, seed: 21)
    try await fixture.publish("digits", bytes: bytes)
    try await fixture.inject("download", "oversize", ["bytes": 5_000_000])
    let downloader = firebaseDownloader(fixture, app: try makeFirebaseApp())

    let description = await internalErrorDescription {
      _ = try await downloader.getModel(name: "digits", downloadType: .latestModel, conditions: conditions)
    }

    XCTAssertEqual(description, "The server sent more than the declared 100000 bytes.")
    for name in try FileManager.default.contentsOfDirectory(atPath: storageDirectory.path) {
      let size = FileSystem.regularFileSize(atPath: storageDirectory.appendingPathComponent(name).path) ?? 0
      XCTAssertLessThanOrEqual(size, 100_000, name)
    }
  }

  func testDeclaredSizeAboveTheLimitIsRefusedBeforeDownloading() async throws {
    let fixture = try startFirebaseFixture()
    try await fixture.publish("digits", bytes: syntheticModel(size: 100_000, seed: 22))
    let downloader = firebaseDownloader(fixture, app: try makeFirebaseApp()) { $0.maximumModelSize = 50_000 }

    let description = await internalErrorDescription {
      _ = try await downloader.getModel(name: "digits", downloadType: .latestModel, conditions: conditions)
    }

    XCTAssertEqual(
      description,
      "The source declares a model of 100000 bytes, more than the limit of 50000 bytes (ModelDownloaderSettings.maximumModelSize).")
    let files = try await fixture.requests().filter { $0.path.hasPrefix("/files/") }
    XCTAssertTrue(files.isEmpty)
  }
}
