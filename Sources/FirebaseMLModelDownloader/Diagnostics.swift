import Foundation

/// Remembers secrets (API key, installation tokens) and blanks them out of any text that leaves
/// the library (error descriptions and log messages), which it also makes safe for terminals.
final class SecretRedactor: Sendable {
  /// Secrets seen so far.
  private let secrets = Locked<Set<String>>([])

  /// Creates a redactor knowing no secret.
  init() {}

  /// Adds `secret` to the set to hide.
  func register(_ secret: String) {
    guard !secret.isEmpty else { return }
    secrets.withLock { _ = $0.insert(secret) }
  }

  /// `text` with every known secret replaced by `<redacted>`, and control characters escaped
  /// (``displayable(_:)``): messages may quote servers, and end up on terminals and in logs.
  func redact(_ text: String) -> String {
    let known = secrets.withLock { $0 }
    return displayable(known.reduce(text) { $0.replacingOccurrences(of: $1, with: "<redacted>") })
  }

  /// `error` with secrets removed from its description when it carries one.
  func redact(_ error: DownloadError) -> DownloadError {
    guard case .internalError(let description) = error else { return error }
    return .internalError(description: redact(description))
  }
}

/// Sends diagnostic messages, stripped of secrets, to the settings' log handler.
struct DownloaderLog: Sendable {
  /// Where messages go; nil drops them.
  let handler: (@Sendable (String) -> Void)?
  /// Hides secrets.
  let redactor: SecretRedactor

  /// Logs `message` (only built when a handler exists).
  func callAsFunction(_ message: @autoclosure () -> String) {
    guard let handler else { return }
    handler(redactor.redact(message()))
  }
}
