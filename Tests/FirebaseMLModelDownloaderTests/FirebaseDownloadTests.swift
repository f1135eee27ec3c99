import Foundation
import XCTest

@testable import FirebaseMLModelDownloader

/// Download types, 304, background updates, progress and request details against the Firebase fixture.
final class FirebaseDownloadTests: DownloaderTestCase {
  private let conditions = ModelDownloadConditions()

  func testLatestModelDownloadsWithTheSDKsRequests() async throws {
    let fixture = try startFirebaseFixture()
    let bytes = syntheticModel(size: 200_000, seed: 1)
    let etag = try await fixture.publish("digits", bytes: bytes)
    let downloader = firebaseDownloader(fixture, app: try makeFirebaseApp())

    let model = try await downloader.getModel(name: "digits", downloadType: .latestModel, conditions: conditions)

    XCTAssertEqual(model.name, "digits")
    XCTAssertEqual(model.size, bytes.count)
    XCTAssertEqual(model.hash, etag)
    XCTAssertTrue(model.path.hasPrefix(storageDirectory.path + "/"), model.path)
    let fileName = URL(fileURLWithPath: model.path).lastPathComponent
    XCTAssertTrue(fileName.hasPrefix("fbml_model@@") && fileName.contains("@@digits@@") && fileName.hasSuffix(".tflite"), fileName)
    assertFile(model.path, holds: bytes)

    let requests = try await fixture.requests()
    let register = try XCTUnwrap(requests.first { $0.path.hasSuffix("/installations/") })
    XCTAssertEqual(register.method, "POST")
    XCTAssertEqual(register.path, "/v1/projects/\(FirebaseFixture.projectID)/installations/")
    XCTAssertEqual(register.headers["x-goog-api-key"], FirebaseFixture.apiKey)
    XCTAssertEqual(register.headers["x-ios-bundle-identifier"], "com.example.fixture")
    let info = try XCTUnwrap(requests.first { $0.path.hasSuffix(":download") })
    XCTAssertEqual(info.path, "/v1beta2/projects/\(FirebaseFixture.projectID)/models/digits:download")
    XCTAssertEqual(info.query["key"], FirebaseFixture.apiKey)
    XCTAssertEqual(info.headers["x-ios-bundle-identifier"], "com.example.fixture")
    XCTAssertTrue(info.headers["x-goog-firebase-installations-auth"]?.hasPrefix("fis-auth-") == true)
    XCTAssertNil(info.headers["if-none-match"])
    XCTAssertEqual(requests.filter { $0.path.hasPrefix("/files/") }.count, 1)
  }

  func testSecondLatestModelSendsTheHashAndGets304() async throws {
    let fixture = try startFirebaseFixture()
    let etag = try await fixture.publish("digits", bytes: syntheticModel(size: 50_000, seed: 2))
    let downloader = firebaseDownloader(fixture, app: try makeFirebaseApp())
    let first = try await downloader.getModel(name: "digits", downloadType: .latestModel, conditions: conditions)

    let second = try await downloader.getModel(name: "digits", downloadType: .latestModel, conditions: conditions)

    XCTAssertEqual(second, first)
    let requests = try await fixture.requests()
    let infos = requests.filter { $0.path.hasSuffix(":download") }
    XCTAssertEqual(infos.count, 2)
    XCTAssertEqual(infos.last?.headers["if-none-match"], etag)
    XCTAssertEqual(requests.filter { $0.path.hasPrefix("/files/") }.count, 1, "304 must not download the file")
    XCTAssertEqual(requests.filter { $0.path.hasSuffix("/installations/") }.count, 1, "the installation is reused")
  }

  func testLocalModelUsesTheStoredModelWithoutNetwork() async throws {
    let fixture = try startFirebaseFixture()
    try await fixture.publish("digits", bytes: syntheticModel(size: 50_000, seed: 3))
    let downloader = firebaseDownloader(fixture, app: try makeFirebaseApp())
    let downloaded = try await downloader.getModel(name: "digits", downloadType: .localModel, conditions: conditions)
    let requestsAfterDownload = try await fixture.requests().count

    let local = try await downloader.getModel(name: "digits", downloadType: .localModel, conditions: conditions)

    XCTAssertEqual(local, downloaded)
    let requestsAfterLocal = try await fixture.requests().count
    XCTAssertEqual(requestsAfterLocal, requestsAfterDownload)
  }

  func testBackgroundUpdateIsSeenByTheNextCall() async throws {
    let fixture = try startFirebaseFixture()
    let version1 = syntheticModel(size: 60_000, seed: 4)
    let version2 = syntheticModel(size: 70_000, seed: 5)
    let etag1 = try await fixture.publish("digits", bytes: version1)
    let downloader = firebaseDownloader(fixture, app: try makeFirebaseApp())
    let first = try await downloader.getModel(name: "digits", downloadType: .localModelUpdateInBackground, conditions: conditions)
    XCTAssertEqual(first.hash, etag1)
    let etag2 = try await fixture.publish("digits", bytes: version2)

    let immediate = try await downloader.getModel(name: "digits", downloadType: .localModelUpdateInBackground, conditions: conditions)
    XCTAssertEqual(immediate, first, "the stored model is returned at once")

    let updated = try await waitUntil {
      let models = try await downloader.listDownloadedModels()
      // The record is committed first, the replaced file removed right after.
      return models.first?.hash == etag2 && !FileManager.default.fileExists(atPath: first.path)
    }
    XCTAssertTrue(updated, "the background update finished")
    let next = try await downloader.getModel(name: "digits", downloadType: .localModel, conditions: conditions)
    XCTAssertEqual(next.hash, etag2)
    XCTAssertNotEqual(next.path, first.path, "each version gets its own file")
    XCTAssertFalse(FileManager.default.fileExists(atPath: first.path), "the replaced version is removed")
    assertFile(next.path, holds: version2)
  }

  func testCallbackAPIReportsProgressAndCompletesOnTheChosenQueue() async throws {
    let fixture = try startFirebaseFixture()
    let bytes = syntheticModel(size: 400_000, seed: 6)
    try await fixture.publish("digits", bytes: bytes)
    let queueKey = DispatchSpecificKey<String>()
    let queue = DispatchQueue(label: "test.callbacks")
    queue.setSpecific(key: queueKey, value: "callbacks")
    let downloader = firebaseDownloader(fixture, app: try makeFirebaseApp()) { $0.callbackQueue = .custom(queue) }
    let fractions = Locked<[Float]>([])
    let onQueue = Locked<[Bool]>([])

    let result: Result<CustomModel, DownloadError> = await withCheckedContinuation { continuation in
      downloader.getModel(
        name: "digits", downloadType: .latestModel, conditions: conditions,
        progressHandler: { fraction in
          fractions.withLock { $0.append(fraction) }
          onQueue.withLock { $0.append(DispatchQueue.getSpecific(key: queueKey) == "callbacks") }
        },
        completion: { result in
          onQueue.withLock { $0.append(DispatchQueue.getSpecific(key: queueKey) == "callbacks") }
          continuation.resume(returning: result)
        })
    }

    XCTAssertEqual(try result.get().size, bytes.count)
    let seen = fractions.withLock { $0 }
    XCTAssertGreaterThan(seen.count, 2)
    XCTAssertEqual(seen, seen.sorted(), "progress never goes back")
    XCTAssertEqual(seen.last, 1)
    XCTAssertTrue(onQueue.withLock { $0 }.allSatisfy { $0 }, "every callback ran on the chosen queue")
  }

  func testEventStreamYieldsProgressThenTheModel() async throws {
    let fixture = try startFirebaseFixture()
    let bytes = syntheticModel(size: 300_000, seed: 7)
    try await fixture.publish("digits", bytes: bytes)
    let downloader = firebaseDownloader(fixture, app: try makeFirebaseApp())

    var progress: [ModelDownloadProgress] = []
    var finished: CustomModel?
    for try await event in downloader.modelDownloadEvents(name: "digits", downloadType: .latestModel, conditions: conditions) {
      XCTAssertNil(finished, "nothing follows .finished")
      switch event {
      case .progress(let step): progress.append(step)
      case .finished(let model): finished = model
      }
    }

    XCTAssertEqual(finished?.size, bytes.count)
    XCTAssertEqual(progress.last, ModelDownloadProgress(bytesReceived: Int64(bytes.count), totalBytes: Int64(bytes.count)))
    XCTAssertEqual(progress.map(\.bytesReceived), progress.map(\.bytesReceived).sorted())
  }

  func testConcurrentRequestsShareOneDownload() async throws {
    let fixture = try startFirebaseFixture()
    let bytes = syntheticModel(size: 300_000, seed: 8)
    try await fixture.publish("digits", bytes: bytes)
    try await fixture.inject("download", "drip", ["chunk": 32768, "delay": 0.05])
    let downloader = firebaseDownloader(fixture, app: try makeFirebaseApp())
    let conditions = ModelDownloadConditions()
    let sawProgress = Locked<Set<Int>>([])

    async let first = downloader.getModel(name: "digits", downloadType: .latestModel, conditions: conditions) { _ in
      sawProgress.withLock { _ = $0.insert(1) }
    }
    async let second = downloader.getModel(name: "digits", downloadType: .latestModel, conditions: conditions) { _ in
      sawProgress.withLock { _ = $0.insert(2) }
    }
    let (a, b) = try await (first, second)

    XCTAssertEqual(a, b)
    assertFile(a.path, holds: bytes)
    let files = try await fixture.requests().filter { $0.path.hasPrefix("/files/") }
    XCTAssertEqual(files.count, 1, "one download for both requests")
    XCTAssertEqual(sawProgress.withLock { $0 }, [1, 2], "both progress handlers are called")
  }

  func testSlowDripCompletesWithManyProgressSteps() async throws {
    let fixture = try startFirebaseFixture()
    let bytes = syntheticModel(size: 256 * 1024, seed: 9)
    try await fixture.publish("digits", bytes: bytes)
    try await fixture.inject("download", "drip", ["chunk": 8192, "delay": 0.005])
    let downloader = firebaseDownloader(fixture, app: try makeFirebaseApp())
    let steps = Locked<Int>(0)

    let model = try await downloader.getModel(name: "digits", downloadType: .latestModel, conditions: conditions) { _ in
      steps.withLock { $0 += 1 }
    }

    assertFile(model.path, holds: bytes)
    XCTAssertGreaterThanOrEqual(steps.withLock { $0 }, 16)
  }
}
