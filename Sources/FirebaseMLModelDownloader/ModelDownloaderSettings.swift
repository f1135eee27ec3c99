import Dispatch
import Foundation
import TFLiteFormat

/// Where a ``ModelDownloader`` gets models from.
public enum ModelSource: Sendable {
  /// Firebase ML model hosting of the project `app` is configured for, reached at `endpoints`.
  case firebaseML(app: FirebaseApp, endpoints: FirebaseMLEndpoints = .production)
  /// Static hosting: model `N` is described by the index `baseURL/N.json` (see the README).
  case staticHosting(baseURL: URL)
  /// A local folder holding `N.json` indexes with their files, or plain `N.tflite` files.
  case localDirectory(URL)
  /// Cloud Storage for Firebase (or any Google Cloud Storage bucket): model `N` is the object
  /// `objectPrefix + "N.tflite"` of `bucket`, read through the Firebase Storage REST API; its
  /// `generation` is the version. See ``ModelDownloaderSettings/cloudStorageAuthorization``.
  case cloudStorage(bucket: String, objectPrefix: String = "")
}

/// Base URLs of the two Google services behind Firebase ML; override them for emulators, mirrors or tests.
public struct FirebaseMLEndpoints: Sendable, Hashable {
  /// Base of the model-info call (`…/v1beta2/projects/P/models/N:download`).
  public var modelInfoBaseURL: URL
  /// Base of the Firebase Installations API (`…/v1/projects/P/installations/`).
  public var installationsBaseURL: URL

  /// Creates endpoints from two base URLs.
  public init(modelInfoBaseURL: URL, installationsBaseURL: URL) {
    self.modelInfoBaseURL = modelInfoBaseURL
    self.installationsBaseURL = installationsBaseURL
  }

  /// Google's production servers.
  public static var production: FirebaseMLEndpoints {
    FirebaseMLEndpoints(
      modelInfoBaseURL: httpsRoot(host: "firebaseml.googleapis.com"),
      installationsBaseURL: httpsRoot(host: "firebaseinstallations.googleapis.com"))
  }

  /// `https://host` for a constant, valid host name.
  private static func httpsRoot(host: String) -> URL {
    var components = URLComponents()
    components.scheme = "https"
    components.host = host
    return components.url ?? URL(fileURLWithPath: "/")
  }
}

/// The dispatch queue that runs completion and progress handlers of the callback API.
public enum ModelDownloaderCallbackQueue: Sendable {
  /// `DispatchQueue.main`, as the Firebase SDK does. Handlers run only while something drains the
  /// main queue (an app's run loop, `dispatchMain()`); a command-line program that blocks its main
  /// thread waiting for the completion would deadlock.
  case main
  /// A serial queue private to this library: handlers run in order, off the main thread, and a
  /// program that blocks its main thread still receives them.
  case privateSerial
  /// A queue of your choosing (make it serial to keep progress updates in order).
  case custom(DispatchQueue)

  /// `.main` on Apple platforms (what Firebase apps expect), `.privateSerial` elsewhere (Linux
  /// programs seldom drain the main queue).
  public static var platformDefault: ModelDownloaderCallbackQueue {
    #if canImport(Darwin)
      return .main
    #else
      return .privateSerial
    #endif
  }

  /// The serial queue behind ``privateSerial``.
  private static let privateQueue = DispatchQueue(label: "FirebaseMLModelDownloader.callbacks")

  /// The queue to dispatch on.
  var dispatchQueue: DispatchQueue {
    switch self {
    case .main: return .main
    case .privateSerial: return Self.privateQueue
    case .custom(let queue): return queue
    }
  }
}

/// Everything about a ``ModelDownloader`` besides its source.
public struct ModelDownloaderSettings: Sendable {
  /// Folder holding the models; nil means the platform default: Application Support (caches on
  /// tvOS) on Apple platforms, `$XDG_DATA_HOME` or `~/.local/share` on Linux, each followed by
  /// `com.firebase.FirebaseMLModelDownloader`.
  public var storageDirectory: URL?
  /// Separates the models of different apps or sources sharing one folder; a Firebase source
  /// uses its app's name instead.
  public var storageNamespace: String
  /// Where callbacks of the completion-handler API run.
  public var callbackQueue: ModelDownloaderCallbackQueue
  /// Allows plain `http://` to hosts other than loopback (never needed for loopback).
  public var allowsInsecureHTTP: Bool
  /// Largest model accepted, in bytes; a source declaring more is refused before any download,
  /// and no source can make the downloader write more than it declared.
  public var maximumModelSize: Int64
  /// Seconds without any data after which a request fails.
  public var requestTimeout: TimeInterval
  /// Seconds a whole transfer may take.
  public var resourceTimeout: TimeInterval
  /// Checks that the downloaded file at the given path is a usable model; throwing rejects it.
  /// Defaults to the verifier of `TFLiteFormat`.
  public var modelValidator: @Sendable (String) throws -> Void
  /// Receives diagnostic messages (never containing API keys or tokens); nil discards them.
  public var logHandler: (@Sendable (String) -> Void)?
  /// Seconds to wait before retrying a Firebase Installations request that failed with HTTP 500.
  public var installationsRetryDelay: TimeInterval
  /// Whether serving a stored model re-hashes its whole file against the SHA-256 recorded at
  /// install. Off, every serve checks the file's size and a cheap fingerprint (about 200 KB read);
  /// either way a mismatch is repaired by downloading the model again, never served.
  public var verifiesStoredModelsCompletely: Bool = false
  /// Receives status changes a person may want to see, such as waiting for another process that
  /// holds the model's lock; called on an arbitrary thread. Nil ignores them.
  public var statusHandler: (@Sendable (ModelDownloaderStatus) -> Void)? = nil
  /// Base URL of the Firebase Storage REST API used by ``ModelSource/cloudStorage(bucket:objectPrefix:)``;
  /// override it for the Storage emulator, a mirror or tests.
  public var cloudStorageBaseURL: URL = URL(string: "https://firebasestorage.googleapis.com") ?? URL(fileURLWithPath: "/")
  /// `Authorization` header value sent to Cloud Storage (for example `Firebase <Firebase Auth ID
  /// token>` or `Bearer <OAuth token>`); nil for public-read objects. Never logged.
  public var cloudStorageAuthorization: String? = nil

  /// Creates settings; every parameter has a sensible default.
  public init(
    storageDirectory: URL? = nil,
    storageNamespace: String = FirebaseApp.defaultAppName,
    callbackQueue: ModelDownloaderCallbackQueue = .platformDefault,
    allowsInsecureHTTP: Bool = false,
    maximumModelSize: Int64 = 4 << 30,
    requestTimeout: TimeInterval = 60,
    resourceTimeout: TimeInterval = 600,
    modelValidator: @escaping @Sendable (String) throws -> Void = ModelDownloaderSettings.verifyTensorFlowLiteModel,
    logHandler: (@Sendable (String) -> Void)? = nil,
    installationsRetryDelay: TimeInterval = 1
  ) {
    self.storageDirectory = storageDirectory
    self.storageNamespace = storageNamespace
    self.callbackQueue = callbackQueue
    self.allowsInsecureHTTP = allowsInsecureHTTP
    self.maximumModelSize = maximumModelSize
    self.requestTimeout = requestTimeout
    self.resourceTimeout = resourceTimeout
    self.modelValidator = modelValidator
    self.logHandler = logHandler
    self.installationsRetryDelay = installationsRetryDelay
  }

  /// The default ``modelValidator``: opens the file with `TFLiteFormat`'s verifying reader.
  @Sendable public static func verifyTensorFlowLiteModel(atPath path: String) throws {
    _ = try TFLiteModel(contentsOfFile: path)
  }

  /// The folder used when ``storageDirectory`` is nil, or nil when the platform gives none.
  static func defaultStorageDirectory() -> URL? {
    let folderName = "com.firebase.FirebaseMLModelDownloader"
    #if canImport(Darwin)
      #if os(tvOS)
        let base = FileManager.default.urls(for: .cachesDirectory, in: .userDomainMask).first
      #else
        let base = FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first
      #endif
      return base?.appendingPathComponent(folderName, isDirectory: true)
    #else
      let environment = ProcessInfo.processInfo.environment
      if let dataHome = environment["XDG_DATA_HOME"], dataHome.hasPrefix("/") {
        return URL(fileURLWithPath: dataHome, isDirectory: true).appendingPathComponent(folderName, isDirectory: true)
      }
      guard let home = environment["HOME"], home.hasPrefix("/") else { return nil }
      return URL(fileURLWithPath: home, isDirectory: true)
        .appendingPathComponent(".local/share", isDirectory: true)
        .appendingPathComponent(folderName, isDirectory: true)
    #endif
  }
}
