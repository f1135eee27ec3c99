import Foundation

/// Receives the runtime's detailed failure messages, as TensorFlow Lite's error reporter does:
/// printed as `TensorFlow Lite Error: <message>` when the interpreter was given options, written
/// to standard error otherwise, and kept as the last message either way.
final class ErrorReporter {
  /// True to print with the `TensorFlow Lite Error:` prefix on standard output.
  private let printsWithPrefix: Bool
  /// The most recent message.
  private(set) var lastMessage: String?

  /// Creates a reporter; `printsWithPrefix` is true when the interpreter has options.
  init(printsWithPrefix: Bool) { self.printsWithPrefix = printsWithPrefix }

  /// Keeps `message` as the last one and prints it.
  func report(_ message: String) {
    record(message)
    if printsWithPrefix {
      print(InterpreterError.tensorFlowLiteError(message).description)
    } else {
      FileHandle.standardError.write(Data((message + "\n").utf8))
    }
  }

  /// Keeps `message` as the last one without printing it (for failures upstream checks in Swift).
  func record(_ message: String) { lastMessage = message }
}
