import Foundation

/// A value shared between threads, read and changed only while holding a lock (also used by
/// FirebaseMLModelInterpreter).
package final class Locked<Value>: @unchecked Sendable {  // every access to `value` goes through `lock`
  /// Serializes access to `value`.
  private let lock = NSLock()
  /// The protected value.
  private var value: Value

  /// Wraps `value`.
  package init(_ value: Value) { self.value = value }

  /// Runs `body` with exclusive access to the value and returns its result.
  package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
    lock.lock()
    defer { lock.unlock() }
    return try body(&value)
  }
}

/// Carries a value the compiler cannot prove `Sendable` across a queue hop, such as a user
/// callback to the callback queue that calls it.
package struct SendableBox<Value>: @unchecked Sendable {  // values are used by one queue at a time
  /// The wrapped callback or value.
  package let value: Value

  /// Wraps `value`.
  package init(value: Value) { self.value = value }
}
