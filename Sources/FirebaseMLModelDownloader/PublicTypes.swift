/// Which model ``ModelDownloader/getModel(name:downloadType:conditions:progressHandler:completion:)`` returns.
public enum ModelDownloadType: Sendable, Hashable {
  /// The model already on the device if there is one; otherwise the latest model from the source.
  case localModel
  /// The model already on the device if there is one, while the latest model is fetched in the
  /// background for the next call; otherwise the latest model from the source.
  case localModelUpdateInBackground
  /// Always asks the source; downloads only when the source has a different version.
  case latestModel
}

/// Conditions a download must respect. The same type serves `ModelDownloader` and ML Kit's
/// `ModelManager` (FirebaseMLModelInterpreter re-exports it).
public struct ModelDownloadConditions: Sendable, Hashable {
  /// Whether the download may use a cellular network (Apple platforms; no meaning on Linux).
  public let allowsCellularAccess: Bool
  /// Accepted for source compatibility with older SDK versions; downloads always run in the foreground.
  public let allowsBackgroundDownloading: Bool

  /// Creates download conditions.
  public init(allowsCellularAccess: Bool = true, allowsBackgroundDownloading: Bool = false) {
    self.allowsCellularAccess = allowsCellularAccess
    self.allowsBackgroundDownloading = allowsBackgroundDownloading
  }
}

/// A model stored on the device, ready for `Interpreter(modelPath: model.path)`.
public struct CustomModel: Sendable, Hashable {
  /// The model's name at its source.
  public let name: String
  /// The model file's size in bytes.
  public let size: Int
  /// Absolute file-system path of the model file.
  public let path: String
  /// The version identifier the source gave the model (the Firebase ETag, or the SHA-256 of
  /// the file for static hosting and local folders).
  public let hash: String

  /// Creates a description of a stored model.
  init(name: String, size: Int, path: String, hash: String) {
    self.name = name
    self.size = size
    self.path = path
    self.hash = hash
  }
}

/// Why ``ModelDownloader/getModel(name:downloadType:conditions:progressHandler:completion:)`` failed.
public enum DownloadError: Error, Equatable, Sendable {
  /// The source has no model of that name.
  case notFound
  /// The source refused access (wrong API key, API disabled, forbidden file).
  case permissionDenied
  /// The transfer itself failed (no connection, connection lost, timeout); a later call resumes it.
  case failedPrecondition
  /// The source is rate-limiting this client; try again later.
  case resourceExhausted
  /// The device has not enough free space for the model.
  case notEnoughSpace
  /// The request was malformed: an unusable model name, URL or source answer.
  case invalidArgument
  /// The model name was empty.
  case emptyModelName
  /// Anything else, described in words.
  case internalError(description: String)
}

/// Why listing or deleting stored models failed.
public enum DownloadedModelError: Error, Sendable {
  /// No stored model has that name.
  case notFound
  /// Reading or changing the storage folder failed.
  case fileIOError(description: String)
  /// Anything else, described in words.
  case internalError(description: String)
}

extension DownloadError: CustomStringConvertible {
  /// A sentence saying what went wrong.
  public var description: String {
    switch self {
    case .notFound: return "the model was not found at its source"
    case .permissionDenied: return "the source denied access to the model"
    case .failedPrecondition: return "the model transfer failed (connection lost, refused or timed out)"
    case .resourceExhausted: return "the source is rate-limiting requests; try again later"
    case .notEnoughSpace: return "not enough free space on the device for the model"
    case .invalidArgument: return "invalid argument (model name, URL or source answer)"
    case .emptyModelName: return "the model name is empty"
    case .internalError(let description): return description
    }
  }
}

extension DownloadedModelError: CustomStringConvertible {
  /// A sentence saying what went wrong.
  public var description: String {
    switch self {
    case .notFound: return "no downloaded model has that name"
    case .fileIOError(let description), .internalError(let description): return description
    }
  }
}

/// Something a ``ModelDownloader`` is doing that takes time, reported to
/// ``ModelDownloaderSettings/statusHandler``.
public enum ModelDownloaderStatus: Sendable, Hashable {
  /// Another process (with ID `processID`, when it wrote one) holds the lock of `model` and is
  /// downloading or deleting it; `bytesOnDisk` of `totalBytes` of its download exist so far.
  /// Reported about once a second while waiting.
  case waitingForLock(model: String, processID: Int32?, bytesOnDisk: Int64?, totalBytes: Int64?)
}
