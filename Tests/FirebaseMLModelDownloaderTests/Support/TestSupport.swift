import Foundation
import XCTest

@testable import FirebaseMLModelDownloader

/// Model bytes for download tests: 4 bytes of root offset, the `TFL3` file identifier, then a
/// deterministic pseudo-random payload (distinct per seed).
func syntheticModel(size: Int, seed: UInt64) -> [UInt8] {
  var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
  var bytes: [UInt8] = [0x10, 0, 0, 0] + Array("TFL3".utf8)
  bytes.reserveCapacity(size)
  while bytes.count < size {
    state ^= state << 13
    state ^= state >> 7
    state ^= state << 17
    bytes.append(UInt8(truncatingIfNeeded: state))
  }
  return Array(bytes.prefix(size))
}

/// The file was rejected by ``identifierValidator``.
struct MissingFileIdentifier: Error, CustomStringConvertible {
  /// Explanation.
  var description: String { "bytes 4..<8 are not the TFL3 file identifier" }
}

/// A validator for pipeline tests: accepts files carrying the TFLite file identifier (the
/// complete format verifier is tested with `TFLiteFormat`, and once here on its own).
let identifierValidator: @Sendable (String) throws -> Void = { path in
  let bytes = try FileSystem.readFile(atPath: path, limit: 1 << 30)
  guard bytes.count >= 8, Array(bytes[4..<8]) == Array("TFL3".utf8) else { throw MissingFileIdentifier() }
}

/// Collects log messages.
final class LogCollector: Sendable {
  /// The messages.
  private let messages = Locked<[String]>([])
  /// The messages so far.
  var lines: [String] { messages.withLock { $0 } }
  /// A log handler appending here.
  var handler: @Sendable (String) -> Void { { [messages] line in messages.withLock { $0.append(line) } } }
}

/// A test case with a fresh temporary folder and fixtures stopped at the end.
class DownloaderTestCase: XCTestCase {
  /// The test's temporary folder.
  var temporaryDirectory: URL!
  /// Where downloaded models go.
  var storageDirectory: URL { temporaryDirectory.appendingPathComponent("storage") }
  /// Fixtures to stop in tearDown.
  private var stoppers: [() -> Void] = []
  /// Log messages of downloaders made by ``settings(_:)``.
  let log = LogCollector()

  override func setUp() async throws {
    temporaryDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("downloader-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: temporaryDirectory, withIntermediateDirectories: true)
  }

  override func tearDown() async throws {
    if testRun?.hasSucceeded == false {
      for line in log.lines { print("downloader log: \(line)") }
    }
    for stop in stoppers.reversed() { stop() }
    stoppers.removeAll()
    try? FileManager.default.removeItem(at: temporaryDirectory)
  }

  /// A folder inside the temporary folder.
  func makeDirectory(_ name: String) throws -> URL {
    let url = temporaryDirectory.appendingPathComponent(name)
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
  }

  /// Starts the Firebase fixture for this test.
  func startFirebaseFixture() throws -> FirebaseFixture {
    let fixture = try FirebaseFixture(filesDirectory: try makeDirectory("firebase-files"))
    stoppers.append(fixture.stop)
    return fixture
  }

  /// Starts nginx over `root` for this test.
  func startNginx(root: URL, slowRate: String = "256k") throws -> NginxFixture {
    let nginx = try NginxFixture(root: root, slowRate: slowRate)
    stoppers.append(nginx.stop)
    return nginx
  }

  /// Starts the misbehaving server over `root` for this test (on `::1` when `ipv6`); returns its base URL.
  func startHostileServer(root: URL, ipv6: Bool = false) throws -> URL {
    let server = try FixtureProcess(script: "hostile_server.py", arguments: [root.path] + (ipv6 ? ["ipv6"] : []), expecting: ["PORT"])
    stoppers.append(server.stop)
    let host = ipv6 ? "[::1]" : "127.0.0.1"
    guard let url = URL(string: "http://\(host):\(server.announcements["PORT"] ?? "0")/") else {
      throw FixtureError(description: "bad hostile server port")
    }
    return url
  }

  /// Starts the Cloud Storage test double over `root` (requiring `authorization` when given);
  /// returns its base URL.
  func startStorageFixture(root: URL, authorization: String? = nil) throws -> URL {
    let server = try FixtureProcess(
      script: "storage_fixture_server.py", arguments: [root.path] + (authorization.map { [$0] } ?? []), expecting: ["PORT"])
    stoppers.append(server.stop)
    guard let url = URL(string: "http://127.0.0.1:\(server.announcements["PORT"] ?? "0")") else {
      throw FixtureError(description: "bad storage fixture port")
    }
    return url
  }

  /// Settings with the test's storage, the identifier validator, the log collector and a
  /// private serial callback queue; `adjust` changes more.
  func settings(_ adjust: (inout ModelDownloaderSettings) -> Void = { _ in }) -> ModelDownloaderSettings {
    var settings = ModelDownloaderSettings(
      storageDirectory: storageDirectory, callbackQueue: .privateSerial, requestTimeout: 5, resourceTimeout: 30,
      modelValidator: identifierValidator, logHandler: log.handler, installationsRetryDelay: 0.05)
    adjust(&settings)
    return settings
  }

  /// A new Firebase app configured for the fixture (unique name per call).
  func makeFirebaseApp(projectID: String? = FirebaseFixture.projectID, apiKey: String? = FirebaseFixture.apiKey) throws -> FirebaseApp {
    let options = FirebaseOptions(googleAppID: FirebaseFixture.appID, gcmSenderID: "123456789")
    options.projectID = projectID
    options.apiKey = apiKey
    options.bundleID = "com.example.fixture"
    let name = "test-\(UUID().uuidString)"
    FirebaseApp.configure(name: name, options: options)
    return try XCTUnwrap(FirebaseApp.app(name: name))
  }

  /// A downloader of `app` talking to `fixture`.
  func firebaseDownloader(
    _ fixture: FirebaseFixture, app: FirebaseApp, _ adjust: (inout ModelDownloaderSettings) -> Void = { _ in }
  ) -> ModelDownloader {
    ModelDownloader(source: .firebaseML(app: app, endpoints: fixture.endpoints), settings: settings(adjust))
  }

  /// Asserts that the file at `path` holds exactly `bytes` (compared by size and SHA-256 to keep failures readable).
  func assertFile(_ path: String, holds bytes: [UInt8], _ message: String = "", file: StaticString = #filePath, line: UInt = #line) {
    guard let data = FileManager.default.contents(atPath: path) else {
      return XCTFail("no file at \(path) \(message)", file: file, line: line)
    }
    XCTAssertEqual(data.count, bytes.count, "size \(message)", file: file, line: line)
    XCTAssertEqual(SHA256.hexDigest(of: Array(data)), SHA256.hexDigest(of: bytes), "content \(message)", file: file, line: line)
  }

  /// Asserts that `operation` fails with `expected`.
  func assertFails(
    with expected: DownloadError, file: StaticString = #filePath, line: UInt = #line,
    _ operation: () async throws -> Void
  ) async {
    do {
      try await operation()
      XCTFail("expected \(expected), got success", file: file, line: line)
    } catch let error as DownloadError {
      XCTAssertEqual(error, expected, file: file, line: line)
    } catch {
      XCTFail("expected \(expected), got \(error)", file: file, line: line)
    }
  }

  /// The description of the `internalError` that `operation` fails with, or nil (and a failure) otherwise.
  func internalErrorDescription(
    file: StaticString = #filePath, line: UInt = #line, _ operation: () async throws -> Void
  ) async -> String? {
    do {
      try await operation()
      XCTFail("expected an internal error, got success", file: file, line: line)
    } catch DownloadError.internalError(let description) {
      return description
    } catch {
      XCTFail("expected an internal error, got \(error)", file: file, line: line)
    }
    return nil
  }

  /// Waits up to `timeout` seconds for `condition`.
  func waitUntil(timeout: TimeInterval = 10, _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
      if try await condition() { return true }
      try? await Task.sleep(nanoseconds: 20_000_000)
    }
    return try await condition()
  }
}
