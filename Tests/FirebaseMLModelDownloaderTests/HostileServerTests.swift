import Foundation
import XCTest

@testable import FirebaseMLModelDownloader

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Errors that say what happened, deadlines that hold, waiting without spinning, and server text
/// that cannot reach a terminal raw; against `hostile_server.py` on loopback.
final class HostileServerTests: DownloaderTestCase {
  private let conditions = ModelDownloadConditions()

  /// A site folder holding model `m` (`m.tflite` and its index `m.json`) of `size` bytes.
  private func site(size: Int = 20_000) throws -> (root: URL, bytes: [UInt8]) {
    let root = try makeDirectory("site")
    let bytes = syntheticModel(size: size, seed: 100)
    try Data(bytes).write(to: root.appendingPathComponent("m.tflite"))
    let index = try StaticModelIndex(describingModelAtPath: root.appendingPathComponent("m.tflite").path, name: "m", url: "/files/m.tflite")
    try Data(index.jsonText.utf8).write(to: root.appendingPathComponent("m.json"))
    return (root, bytes)
  }

  private func downloader(_ base: URL, path: String, _ adjust: (inout ModelDownloaderSettings) -> Void = { _ in }) -> ModelDownloader {
    ModelDownloader(source: .staticHosting(baseURL: base.appendingPathComponent(path)), settings: settings(adjust))
  }

  func testRedirectLoopAndTooManyRedirectsAreNamed() async throws {
    let base = try startHostileServer(root: try site().root)
    let loop = await internalErrorDescription {
      _ = try await downloader(base, path: "loop/a").getModel(name: "m", downloadType: .latestModel, conditions: conditions)
    }
    XCTAssertTrue(loop?.contains("redirect loop") == true, loop ?? "")
    let chain = await internalErrorDescription {
      _ = try await downloader(base, path: "chain/0").getModel(name: "m", downloadType: .latestModel, conditions: conditions)
    }
    XCTAssertTrue(chain?.contains("too many redirects (more than 10)") == true, chain ?? "")
  }

  func testIPv6LoopbackURLWorks() async throws {
    let (root, bytes) = try site()
    let base = try startHostileServer(root: root, ipv6: true)
    XCTAssertTrue(base.absoluteString.hasPrefix("http://[::1]:"))
    let model = try await downloader(base, path: "files").getModel(name: "m", downloadType: .latestModel, conditions: conditions)
    assertFile(model.path, holds: bytes)
  }

  func testChunkedBodyIsDecoded() async throws {
    let (root, bytes) = try site(size: 25_500)
    let base = try startHostileServer(root: root)
    let model = try await downloader(base, path: "chunked").getModel(name: "m", downloadType: .latestModel, conditions: conditions)
    assertFile(model.path, holds: bytes)
  }

  func testCompressedBodyIsNamedNotCalledASizeMismatch() async throws {
    let base = try startHostileServer(root: try site().root)
    let description = await internalErrorDescription {
      _ = try await downloader(base, path: "gzip").getModel(name: "m", downloadType: .latestModel, conditions: conditions)
    }
    XCTAssertTrue(description?.contains("Content-Encoding: gzip although the request asked for identity") == true, description ?? "")
  }

  func testNotModifiedWithoutAConditionIsAnError() async throws {
    let (root, bytes) = try site()
    // A stored model without an index ETag (from a folder), then a server answering 304 to anything.
    let plain = try makeDirectory("plain")
    try Data(bytes).write(to: plain.appendingPathComponent("m.tflite"))
    _ = try await ModelDownloader(source: .localDirectory(plain), settings: settings())
      .getModel(name: "m", downloadType: .latestModel, conditions: conditions)
    let base = try startHostileServer(root: root)
    let description = await internalErrorDescription {
      _ = try await downloader(base, path: "always304").getModel(name: "m", downloadType: .latestModel, conditions: conditions)
    }
    XCTAssertTrue(description?.contains("304 Not Modified to a request without a condition") == true, description ?? "")
  }

  func testServerTextIsEscapedInErrorsAndLogs() async throws {
    let base = try startHostileServer(root: try site().root)
    let description = await internalErrorDescription {
      _ = try await downloader(base, path: "hostile").getModel(name: "m", downloadType: .latestModel, conditions: conditions)
    }
    XCTAssertEqual(description, "\\x1b[2J\\x1b[Hdone: model installed\\nfake line")
    XCTAssertEqual(displayable("a\u{7}b\r\u{202E}c\\"), "a\\x07b\\r\\u{202e}c\\\\")
    // An index naming another model, with escape codes in the name.
    let folder = try makeDirectory("hostile-index")
    let index = StaticModelIndex(name: "\u{1b}]0;pwned\u{7}x", url: "m.tflite", sha256: String(repeating: "a", count: 64), size: 10)
    try Data(index.jsonText.utf8).write(to: folder.appendingPathComponent("m.json"))
    let named = await internalErrorDescription {
      _ = try await ModelDownloader(source: .localDirectory(folder), settings: settings())
        .getModel(name: "m", downloadType: .latestModel, conditions: conditions)
    }
    XCTAssertEqual(named, "Model index names model '\\x1b]0;pwned\\x07x', expected 'm'.")
    XCTAssertFalse(log.lines.joined().unicodeScalars.contains { $0.value < 0x20 }, "no control characters in the log")
  }

  func testStallTimeoutAndDeadlineHoldAndTheLockIsReleased() async throws {
    let base = try startHostileServer(root: try site().root)
    let stalled = downloader(base, path: "stall") { $0.requestTimeout = 1; $0.resourceTimeout = 30 }
    let started = Date()
    await assertFails(with: .failedPrecondition) {
      _ = try await stalled.getModel(name: "m", downloadType: .latestModel, conditions: conditions)
    }
    XCTAssertLessThan(Date().timeIntervalSince(started), 5, "the 1 s stall timeout ends the transfer")
    XCTAssertTrue(log.lines.contains { $0.contains("the server sent nothing for 1 s") }, log.lines.joined(separator: "\n"))

    // One byte every 0.2 s never stalls for 1 s, but the whole transfer may take only 2 s.
    let dripping = downloader(base, path: "drip") { $0.requestTimeout = 1; $0.resourceTimeout = 2 }
    let dripStart = Date()
    await assertFails(with: .failedPrecondition) {
      _ = try await dripping.getModel(name: "m", downloadType: .latestModel, conditions: conditions)
    }
    let elapsed = Date().timeIntervalSince(dripStart)
    XCTAssertGreaterThanOrEqual(elapsed, 2)
    XCTAssertLessThan(elapsed, 6, "the 2 s deadline ends the transfer")
    XCTAssertTrue(log.lines.contains { $0.contains("deadline of 2 s") }, log.lines.joined(separator: "\n"))

    // The model's lock was released: a good source gets it at once.
    let folder = try ModelStore(directory: storageDirectory.path, namespace: FirebaseApp.defaultAppName).open()
    let lock = try await FileLock.acquire(name: ModelStore(directory: storageDirectory.path, namespace: FirebaseApp.defaultAppName).files(for: "m").lock, in: folder) { _ in
      XCTFail("the lock is still held")
    }
    lock?.release()
  }

  func testToolWaitingForAStalledServerUsesNoCPUAndGivesUpAtItsTimeout() throws {
    let base = try startHostileServer(root: try site(size: 2_000_000).root)
    let tool = try ToolProcess([
      "download", "m", "--index", base.appendingPathComponent("stall").absoluteString, "--storage", storageDirectory.path,
      "--timeout", "4", "--deadline", "60",
    ])
    Thread.sleep(forTimeInterval: 1)
    #if os(Linux)
      let before = try cpuSeconds(of: tool.process.processIdentifier)
      Thread.sleep(forTimeInterval: 2)
      let used = try cpuSeconds(of: tool.process.processIdentifier) - before
      XCTAssertLessThanOrEqual(used / 2, 0.05, "CPU while stalled: \(used / 2 * 100) % of a core")
    #endif
    tool.process.waitUntilExit()
    XCTAssertEqual(tool.process.terminationStatus, 1, tool.standardError)
    XCTAssertTrue(tool.standardError.contains("transfer failed"), tool.standardError)
  }

  func testToolWaitingForAnotherProcessSaysWhichOne() throws {
    let (root, _) = try site(size: 2_000_000)
    let nginx = try startNginx(root: root, slowRate: "200k")
    let index = StaticModelIndex(name: "m", url: "m.tflite", sha256: try StaticModelIndex(describingModelAtPath: root.appendingPathComponent("m.tflite").path).sha256, size: 2_000_000)
    try Data(index.jsonText.utf8).write(to: root.appendingPathComponent("m.json"))
    let arguments = ["download", "m", "--index", nginx.baseURL.appendingPathComponent("slow").absoluteString, "--storage", storageDirectory.path]
    let first = try ToolProcess(arguments)
    let partial = storageDirectory.path + "/" + ModelStore(directory: storageDirectory.path, namespace: FirebaseApp.defaultAppName).files(for: "m").partial
    let deadline = Date().addingTimeInterval(10)
    while (FileSystem.regularFileSize(atPath: partial) ?? 0) == 0 && Date() < deadline { usleep(20_000) }
    let second = try ToolProcess(arguments)
    XCTAssertTrue(
      second.waitForError(containing: "waiting for PID \(first.process.processIdentifier), which holds the lock of model m (its download:"),
      second.standardError)
    first.killNow()
    second.killNow()
  }

  /// User plus system CPU seconds of process `pid` (Linux `/proc`).
  private func cpuSeconds(of pid: Int32) throws -> Double {
    let text = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
    let fields = text[text.index(after: try XCTUnwrap(text.lastIndex(of: ")")))...].split(separator: " ")
    // After the command name: state is field 3; utime and stime are fields 14 and 15.
    let ticks = Double(fields[11])! + Double(fields[12])!
    return ticks / Double(sysconf(Int32(_SC_CLK_TCK)))
  }
}
