// Errors of the ML Kit face: `NSError`s in one domain with Google's canonical status codes, as
// ML Kit reported them. Every failure of `ModelManager`, `ModelInterpreter`, `ModelInputs`,
// `ModelInputOutputOptions` and `ModelOutputs` is one of these; the message says what was wrong.
import Foundation

import enum FirebaseMLModelDownloader.DownloadError
import enum FirebaseMLModelDownloader.DownloadedModelError

/// The error domain of every error this module reports.
public let MachineLearningErrorDomain = "com.google.firebaseml"

/// The codes of errors in ``MachineLearningErrorDomain`` (Google's canonical status codes, as ML Kit used).
public enum MachineLearningErrorDomainCode: Int, Sendable {
  /// Something not covered by another code.
  case unknown = 2
  /// A bad argument: a format, an input, an index or a model file that cannot be used.
  case invalidArgument = 3
  /// A model that does not exist: a missing local file, or a model unknown to the source.
  case notFound = 5
  /// The source refused access to the model.
  case permissionDenied = 7
  /// Not enough space, or the source is rate-limiting requests.
  case resourceExhausted = 8
  /// The operation needs something first: a remote model not downloaded yet, or a transfer that failed.
  case failedPrecondition = 9
  /// The runtime failed while running the model.
  case `internal` = 13
}

/// Builds the errors of this module.
enum MachineLearningError {
  /// An error with `code` and `message` as its localized description.
  static func make(_ code: MachineLearningErrorDomainCode, _ message: String, underlying: (any Error)? = nil) -> NSError {
    var userInfo: [String: Any] = [NSLocalizedDescriptionKey: message]
    if let underlying { userInfo[NSUnderlyingErrorKey] = underlying as NSError }
    return NSError(domain: MachineLearningErrorDomain, code: code.rawValue, userInfo: userInfo)
  }

  /// An ``MachineLearningErrorDomainCode/invalidArgument`` error.
  static func invalidArgument(_ message: String) -> NSError { make(.invalidArgument, message) }

  /// The error for a failed download of `modelName`.
  static func download(_ error: DownloadError, modelName: String) -> NSError {
    let code: MachineLearningErrorDomainCode
    switch error {
    case .notFound: code = .notFound
    case .permissionDenied: code = .permissionDenied
    case .failedPrecondition: code = .failedPrecondition
    case .resourceExhausted, .notEnoughSpace: code = .resourceExhausted
    case .invalidArgument, .emptyModelName: code = .invalidArgument
    case .internalError: code = .internal
    }
    return make(code, "Downloading model '\(modelName)' failed: \(error)", underlying: error)
  }

  /// The error for a failed deletion of `modelName`.
  static func deletion(_ error: DownloadedModelError, modelName: String) -> NSError {
    switch error {
    case .notFound: return make(.notFound, "No downloaded model is named '\(modelName)'.", underlying: error)
    case .fileIOError, .internalError: return make(.internal, "Deleting model '\(modelName)' failed: \(error)", underlying: error)
    }
  }
}
