import Dispatch
import FirebaseMLModelDownloader
import Foundation

/// `tflite download NAME (--index BASE_URL | --gcs-bucket B | --firebase-project P --api-key K --app-id A | --from-dir DIR)`:
/// fetches a model into local storage and prints its path as the last line of standard output.
enum DownloadCommand: Subcommand {
  /// Name, options and help.
  static let specification = CommandSpecification(
    name: "download",
    abstract: "Download a model from static hosting, Cloud Storage, Firebase ML or a folder into local storage.",
    positionals: ["NAME"],
    options: [
      .option("index", value: "BASE_URL", help: "static hosting: the model's index is BASE_URL/NAME.json"),
      .option("from-dir", value: "DIR", help: "a local folder holding NAME.json (and its file) or NAME.tflite"),
      .option("gcs-bucket", value: "BUCKET", help: "Cloud Storage for Firebase: the model is the object PREFIX + NAME.tflite"),
      .option("prefix", value: "PREFIX", help: "Cloud Storage: prefix of the object name (e.g. models/)"),
      .option("gcs-auth", value: "VALUE", help: "Cloud Storage: Authorization header value, e.g. 'Firebase ID_TOKEN'"),
      .option("gcs-url", value: "URL", help: "Cloud Storage: base URL of the Firebase Storage REST API (emulators, tests)"),
      .option("firebase-project", value: "PROJECT_ID", help: "Firebase ML: the project ID (with --api-key and --app-id)"),
      .option("api-key", value: "KEY", help: "Firebase ML: the API key"),
      .option("app-id", value: "GOOGLE_APP_ID", help: "Firebase ML: the app ID registered with Firebase Installations"),
      .option("google-service-info", value: "PLIST", help: "Firebase ML: read project, key and app ID from a GoogleService-Info.plist"),
      .option("firebase-ml-url", value: "URL", help: "Firebase ML: base URL of the model-info API (emulators, mirrors)"),
      .option("installations-url", value: "URL", help: "Firebase ML: base URL of the Installations API"),
      .option("type", value: "local|background|latest", help: "which model to return (default: latest)"),
      .option("storage", value: "DIR", help: "model storage folder (default: $XDG_DATA_HOME or ~/.local/share)"),
      .option("timeout", value: "SECONDS", help: "fail when no data arrives for this long (default: 60)"),
      .option("deadline", value: "SECONDS", help: "fail when one transfer takes longer than this in all (default: 600)"),
      .flag("verify-stored", help: "re-hash the whole stored model before using it (default: size and fingerprint)"),
      .option("max-size", value: "BYTES", help: "refuse models larger than this (default: 4 GiB)"),
      .flag("allow-http", help: "allow plain http:// to hosts other than loopback"),
      .flag("verbose", help: "print diagnostics to standard error"),
    ],
    discussion: """
      Exactly one source: --index, --from-dir, --gcs-bucket, or Firebase ML (--firebase-project,
      --api-key and --app-id, or --google-service-info). The model is verified (size, SHA-256, TFLite format),
      installed atomically, and its path is printed as the last line. An interrupted download
      resumes on the next run. With --type background the stored model's path is printed at once
      and the update finishes before the command exits, for the next run to use.
      """)

  /// Runs the command with the `TFLiteFormat` verifier.
  static func run(_ arguments: ParsedArguments, output: inout any TextSink) throws -> Int32 {
    try run(arguments, output: &output, modelValidator: ModelDownloaderSettings.verifyTensorFlowLiteModel)
  }

  /// Runs the command, checking downloaded files with `modelValidator`.
  static func run(
    _ arguments: ParsedArguments, output: inout any TextSink, modelValidator: @escaping @Sendable (String) throws -> Void
  ) throws -> Int32 {
    let name = try arguments.singlePositional("NAME")
    let downloadType = try self.downloadType(arguments.value("type") ?? "latest")
    var settings = ModelDownloaderSettings(
      storageDirectory: try storageDirectory(arguments), callbackQueue: .privateSerial,
      allowsInsecureHTTP: arguments.flag("allow-http"), modelValidator: modelValidator)
    if let text = arguments.value("gcs-url") { settings.cloudStorageBaseURL = try absoluteURL(text, option: "gcs-url") }
    settings.cloudStorageAuthorization = arguments.value("gcs-auth")
    settings.requestTimeout = try arguments.number("timeout", default: settings.requestTimeout)
    settings.resourceTimeout = try arguments.number("deadline", default: settings.resourceTimeout)
    settings.verifiesStoredModelsCompletely = arguments.flag("verify-stored")
    settings.statusHandler = { status in
      switch status {
      case .waitingForLock(let model, let processID, let bytesOnDisk, let totalBytes):
        let holder = processID.map { "PID \($0)" } ?? "another process"
        var line = "tflite download: waiting for \(holder), which holds the lock of model \(model)"
        if let bytesOnDisk, let totalBytes, totalBytes > 0 {
          line += String(format: " (its download: %.1f of %.1f MB)", Double(bytesOnDisk) / 1e6, Double(totalBytes) / 1e6)
        }
        FileHandle.standardError.write(Data((line + "\n").utf8))
      }
    }
    settings.maximumModelSize = Int64(
      try arguments.integer("max-size", default: Int(clamping: settings.maximumModelSize), in: 1...Int.max))
    if arguments.flag("verbose") {
      settings.logHandler = { message in FileHandle.standardError.write(Data("tflite download: \(message)\n".utf8)) }
    }
    let downloader = ModelDownloader(source: try source(arguments), settings: settings)
    let progressBar = output.isTerminal ? ProgressBar() : nil
    let conditions = ModelDownloadConditions()
    let model = try waitFor {
      let model = try await downloader.getModel(name: name, downloadType: downloadType, conditions: conditions) {
        progressBar?.show($0)
      }
      if downloadType == .localModelUpdateInBackground {
        // Joins the background update (downloads of one model are shared) so it completes before exit.
        _ = try? await downloader.getModel(name: name, downloadType: .latestModel, conditions: conditions)
      }
      return model
    }
    progressBar?.finish()
    output.write(model.path + "\n")
    return ExitCode.success
  }

  /// The download type spelled `text`.
  private static func downloadType(_ text: String) throws -> ModelDownloadType {
    switch text {
    case "local": return .localModel
    case "background": return .localModelUpdateInBackground
    case "latest": return .latestModel
    default: throw UsageError("'--type' must be local, background or latest, got '\(text)'")
    }
  }

  /// The one source the options name.
  private static func source(_ arguments: ParsedArguments) throws -> ModelSource {
    let firebaseOptions = ["firebase-project", "api-key", "app-id", "google-service-info"].filter { arguments.value($0) != nil }
    let given = [arguments.value("index") != nil, arguments.value("from-dir") != nil, arguments.value("gcs-bucket") != nil, !firebaseOptions.isEmpty]
      .filter { $0 }
    guard given.count == 1 else {
      throw UsageError("give exactly one source: --index BASE_URL, --from-dir DIR, --gcs-bucket BUCKET, or the Firebase ML options")
    }
    if let bucket = arguments.value("gcs-bucket") {
      return .cloudStorage(bucket: bucket, objectPrefix: arguments.value("prefix") ?? "")
    }
    if let index = arguments.value("index") {
      guard let url = URL(string: index), url.scheme != nil else { throw UsageError("'--index' needs an absolute URL, got '\(index)'") }
      return .staticHosting(baseURL: url)
    }
    if let directory = arguments.value("from-dir") {
      return .localDirectory(URL(fileURLWithPath: directory, isDirectory: true))
    }
    return .firebaseML(app: try firebaseApp(arguments), endpoints: try firebaseEndpoints(arguments))
  }

  /// The default Firebase app, configured from the plist or the three options.
  private static func firebaseApp(_ arguments: ParsedArguments) throws -> FirebaseApp {
    let options: FirebaseOptions
    if let plist = arguments.value("google-service-info") {
      guard let fromFile = FirebaseOptions(contentsOfFile: plist) else {
        throw UsageError("could not read GOOGLE_APP_ID from '\(plist)'")
      }
      options = fromFile
    } else {
      guard let project = arguments.value("firebase-project"), let apiKey = arguments.value("api-key"),
        let appID = arguments.value("app-id")
      else { throw UsageError("Firebase ML needs --firebase-project, --api-key and --app-id") }
      options = FirebaseOptions(googleAppID: appID, gcmSenderID: "")
      options.projectID = project
      options.apiKey = apiKey
    }
    if FirebaseApp.app() == nil { FirebaseApp.configure(options: options) }
    guard let app = FirebaseApp.app() else { throw UsageError("could not configure the Firebase app") }
    return app
  }

  /// Production endpoints, or the overrides.
  private static func firebaseEndpoints(_ arguments: ParsedArguments) throws -> FirebaseMLEndpoints {
    var endpoints = FirebaseMLEndpoints.production
    if let text = arguments.value("firebase-ml-url") { endpoints.modelInfoBaseURL = try absoluteURL(text, option: "firebase-ml-url") }
    if let text = arguments.value("installations-url") { endpoints.installationsBaseURL = try absoluteURL(text, option: "installations-url") }
    return endpoints
  }

  /// `text` as an absolute URL.
  private static func absoluteURL(_ text: String, option: String) throws -> URL {
    guard let url = URL(string: text), url.scheme != nil else { throw UsageError("'--\(option)' needs an absolute URL, got '\(text)'") }
    return url
  }
}

/// The `--storage` folder, if given.
func storageDirectory(_ arguments: ParsedArguments) throws -> URL? {
  arguments.value("storage").map { URL(fileURLWithPath: $0, isDirectory: true) }
}

/// Runs `operation` on the concurrency pool and blocks the calling thread until it finishes.
/// Safe on the main thread of a command-line program: nothing the operation needs runs there.
func waitFor<Value: Sendable>(_ operation: @escaping @Sendable () async throws -> Value) throws -> Value {
  let outcome = BlockingOutcome<Value>()
  let finished = DispatchSemaphore(value: 0)
  Task.detached {
    do {
      outcome.result = .success(try await operation())
    } catch {
      outcome.result = .failure(error)
    }
    finished.signal()
  }
  finished.wait()
  guard let result = outcome.result else { throw CancellationError() }
  return try result.get()
}

/// The result slot of ``waitFor(_:)``.
private final class BlockingOutcome<Value: Sendable>: @unchecked Sendable {  // written once before the semaphore is signalled, read after the wait
  /// The operation's result.
  var result: Result<Value, any Error>?
}

/// A one-line progress bar on standard error, redrawn in place.
final class ProgressBar: @unchecked Sendable {  // `drawn` is guarded by `lock`
  /// Characters of the bar itself.
  private let width = 30
  /// Guards `drawn`.
  private let lock = NSLock()
  /// Whether a bar is on screen.
  private var drawn = false

  /// Draws `progress`.
  func show(_ progress: ModelDownloadProgress) {
    let fraction = Double(progress.fraction)
    let filled = min(width, max(0, Int(fraction * Double(width))))
    let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
    let percent = String(format: "%3d", Int(fraction * 100))
    let line = "\r[\(bar)] \(percent)%  \(megabytes(progress.bytesReceived)) / \(megabytes(progress.totalBytes)) MB"
    lock.withLock { drawn = true }
    FileHandle.standardError.write(Data(line.utf8))
  }

  /// Ends the bar's line, if one was drawn.
  func finish() {
    if lock.withLock({ drawn }) { FileHandle.standardError.write(Data("\n".utf8)) }
  }

  /// `bytes` in megabytes with one decimal.
  private func megabytes(_ bytes: Int64) -> String { String(format: "%.1f", Double(bytes) / 1_000_000) }
}
