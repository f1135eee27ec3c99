// The one error type of the Task API: every refusal (a model that is not a detector or classifier,
// metadata or a bundle that disagrees with the model's tensors, hostile label or calibration files,
// invalid options) is thrown as a `TaskVisionError` whose message names the problem.

/// Why a Task API model, bundle, option set or image could not be used.
public struct TaskVisionError: Error, Equatable, Sendable, CustomStringConvertible {
  /// A sentence naming the problem.
  public let message: String

  /// An error with `message`.
  public init(_ message: String) {
    self.message = message
  }

  /// The message.
  public var description: String { message }
}
