import Foundation
import XCTest

@testable import FirebaseMLModelDownloader

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Folder of the fixture scripts.
let fixturesDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
  .appendingPathComponent("Fixtures")

/// Makes `process` run the fixture script `script` with `arguments`. Debian's interpreter starts
/// in a tenth of the time of version-manager shims; the scripts need only the standard library.
func configurePython(_ process: Process, script: String, arguments: [String]) {
  let systemPython = "/usr/bin/python3"
  let scriptPath = fixturesDirectory.appendingPathComponent(script).path
  if FileManager.default.isExecutableFile(atPath: systemPython) {
    process.executableURL = URL(fileURLWithPath: systemPython)
    process.arguments = [scriptPath] + arguments
  } else {
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["python3", scriptPath] + arguments
  }
}

/// Why a fixture could not be used.
struct FixtureError: Error, CustomStringConvertible {
  /// What went wrong.
  var description: String
}

/// A helper process (a Python script) that prints `KEY value` lines when ready and stops when
/// its standard input closes, so it never outlives the test process.
final class FixtureProcess {
  /// The running process.
  private let process = Process()
  /// Its standard input; closing it stops the fixture.
  private let input = Pipe()
  /// The `KEY value` lines it printed on start.
  private(set) var announcements: [String: String] = [:]

  /// Starts `python3 script arguments…` and waits (at most 15 s) until it printed every key of `expecting`.
  init(script: String, arguments: [String], expecting keys: [String]) throws {
    let output = Pipe()
    configurePython(process, script: script, arguments: arguments)
    process.standardInput = input
    process.standardOutput = output
    try process.run()
    let reader = output.fileHandleForReading
    let deadline = Date().addingTimeInterval(15)
    var buffer = Data()
    while !keys.allSatisfy({ announcements[$0] != nil }) {
      guard Date() < deadline, process.isRunning || !buffer.isEmpty else {
        stop()
        throw FixtureError(description: "\(script) did not start (exit status \(process.isRunning ? -1 : process.terminationStatus))")
      }
      let chunk = reader.availableData
      if chunk.isEmpty && !process.isRunning { buffer.removeAll() }
      buffer.append(chunk)
      while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
        let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
        buffer.removeSubrange(buffer.startIndex...newline)
        let parts = line.split(separator: " ", maxSplits: 1).map(String.init)
        if parts.count == 2 { announcements[parts[0]] = parts[1] }
      }
    }
  }

  /// Closes the fixture's standard input and waits (bounded) for it to exit.
  func stop() {
    try? input.fileHandleForWriting.close()
    let deadline = Date().addingTimeInterval(5)
    while process.isRunning && Date() < deadline { usleep(10_000) }
    if process.isRunning { process.terminate() }
  }
}

/// The Python test double of Firebase ML and Firebase Installations.
final class FirebaseFixture {
  /// Project ID the fixture accepts.
  static let projectID = "fixture-project"
  /// API key the fixture accepts.
  static let apiKey = "AIzaFixtureApiKey-0123456789"
  /// App ID the fixture accepts.
  static let appID = "1:123456789:ios:fixture"

  /// The server process.
  private let process: FixtureProcess
  /// `http://127.0.0.1:PORT`.
  let baseURL: URL
  /// Where published model files are written.
  let filesDirectory: URL

  /// Starts the server.
  init(filesDirectory: URL) throws {
    process = try FixtureProcess(script: "firebase_fixture_server.py", arguments: [], expecting: ["PORT"])
    guard let url = URL(string: "http://127.0.0.1:\(process.announcements["PORT"] ?? "0")") else {
      throw FixtureError(description: "bad fixture port")
    }
    baseURL = url
    self.filesDirectory = filesDirectory
  }

  /// Stops the server.
  func stop() { process.stop() }

  /// Both services at the fixture.
  var endpoints: FirebaseMLEndpoints { FirebaseMLEndpoints(modelInfoBaseURL: baseURL, installationsBaseURL: baseURL) }

  /// Publishes `bytes` as model `name` (replacing an earlier version) and returns its ETag.
  @discardableResult
  func publish(_ name: String, bytes: [UInt8], etag: String? = nil) async throws -> String {
    let path = filesDirectory.appendingPathComponent("\(name)-\(UUID().uuidString).tflite").path
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    var body: [String: Any] = ["name": name, "path": path]
    if let etag { body["etag"] = etag }
    let answer = try await control("model", body)
    return answer["etag"] as? String ?? ""
  }

  /// Queues a fault for the next request to `endpoint` (`register`, `refresh`, `modelInfo`, `download`).
  func inject(_ endpoint: String, _ kind: String, _ extra: [String: Any] = [:]) async throws {
    var body = extra
    body["endpoint"] = endpoint
    body["kind"] = kind
    _ = try await control("fault", body)
  }

  /// Changes server settings (`tokenExpiresIn`, `forgetInstallations`).
  func configure(_ settings: [String: Any]) async throws { _ = try await control("config", settings) }

  /// Every request the server received (control requests included).
  func requests() async throws -> [RecordedRequest] {
    let (data, _) = try await URLSession.shared.data(from: baseURL.appendingPathComponent("_control/requests"))
    let list = try JSONSerialization.jsonObject(with: data) as? [[String: Any]] ?? []
    return list.map(RecordedRequest.init).filter { !$0.path.hasPrefix("/_control") }
  }

  /// Sends a control request.
  private func control(_ what: String, _ body: [String: Any]) async throws -> [String: Any] {
    var request = URLRequest(url: baseURL.appendingPathComponent("_control/\(what)"))
    request.httpMethod = "POST"
    request.httpBody = try JSONSerialization.data(withJSONObject: body)
    let (data, response) = try await URLSession.shared.data(for: request)
    guard (response as? HTTPURLResponse)?.statusCode == 200 else { throw FixtureError(description: "control \(what) failed") }
    return try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
  }
}

/// One request seen by the Firebase fixture.
struct RecordedRequest {
  /// HTTP method.
  var method: String
  /// Path without query.
  var path: String
  /// Query parameters.
  var query: [String: String]
  /// Headers, lowercased names.
  var headers: [String: String]

  /// Reads the fixture's JSON form.
  init(_ json: [String: Any]) {
    method = json["method"] as? String ?? ""
    path = json["path"] as? String ?? ""
    query = json["query"] as? [String: String] ?? [:]
    headers = json["headers"] as? [String: String] ?? [:]
  }
}

/// Debian's nginx serving a folder on loopback.
final class NginxFixture {
  /// The runner process.
  private let process: FixtureProcess
  /// `http://127.0.0.1:PORT/`.
  let baseURL: URL
  /// The access log (one line per request: method, uri, status, range, if-range, if-none-match, bytes).
  let accessLogPath: String

  /// Starts nginx over `root`; `/slow/` serves the same files at `slowRate` (nginx `limit_rate`).
  init(root: URL, slowRate: String = "256k") throws {
    process = try FixtureProcess(script: "nginx_fixture.py", arguments: [root.path, slowRate], expecting: ["PORT", "ACCESS_LOG"])
    guard let url = URL(string: "http://127.0.0.1:\(process.announcements["PORT"] ?? "0")/") else {
      throw FixtureError(description: "bad nginx port")
    }
    baseURL = url
    accessLogPath = process.announcements["ACCESS_LOG"] ?? ""
  }

  /// Stops nginx.
  func stop() { process.stop() }

  /// The access log's lines so far (nginx writes each line when the request ends).
  func accessLog() -> [String] {
    (try? String(contentsOfFile: accessLogPath, encoding: .utf8))?.split(separator: "\n").map(String.init) ?? []
  }
}

/// The `tflite` executable that `swift build` / `swift test` put beside the test bundle.
func tfliteToolURL() throws -> URL {
  #if canImport(Darwin)
    let products = Bundle.allBundles.first { $0.bundlePath.hasSuffix(".xctest") }?.bundleURL.deletingLastPathComponent()
  #else
    let products: URL? = Bundle.main.bundleURL
  #endif
  guard let tool = products?.appendingPathComponent("tflite"), FileManager.default.isExecutableFile(atPath: tool.path) else {
    throw FixtureError(description: "the tflite executable is missing beside the tests: run `swift build` first")
  }
  return tool
}

/// Writes a valid `.tflite` file (one constant tensor of `payload` pseudo-random bytes from
/// `seed`) with the fixture generator; equal payloads give files of equal size.
func writeValidModel(to url: URL, payload: Int, seed: Int) throws -> [UInt8] {
  let process = Process()
  configurePython(process, script: "make_tflite_model.py", arguments: [url.path, String(payload), String(seed)])
  try process.run()
  process.waitUntilExit()
  guard process.terminationStatus == 0 else { throw FixtureError(description: "make_tflite_model.py failed") }
  return Array(try Data(contentsOf: url))
}

/// A `tflite` child process whose standard error is collected as it runs.
final class ToolProcess {
  /// The process.
  let process = Process()
  /// Standard error so far.
  private let errorText = Locked("")

  /// Starts `tflite arguments…` with `environment` added to this process's environment.
  init(_ arguments: [String], environment: [String: String] = [:]) throws {
    process.executableURL = try tfliteToolURL()
    process.arguments = arguments
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    process.standardOutput = FileHandle.nullDevice
    let pipe = Pipe()
    process.standardError = pipe
    let text = errorText
    pipe.fileHandleForReading.readabilityHandler = { handle in
      let chunk = handle.availableData
      if chunk.isEmpty { handle.readabilityHandler = nil }
      text.withLock { $0 += String(decoding: chunk, as: UTF8.self) }
    }
    try process.run()
  }

  deinit { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }

  /// Standard error so far.
  var standardError: String { errorText.withLock { $0 } }

  /// Waits (at most `timeout` seconds) until standard error contains `text`.
  func waitForError(containing text: String, timeout: TimeInterval = 20) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
      if standardError.contains(text) { return true }
      usleep(20_000)
    }
    return false
  }

  /// Kills the process with SIGKILL and waits for it.
  func killNow() {
    kill(process.processIdentifier, SIGKILL)
    process.waitUntilExit()
  }
}
