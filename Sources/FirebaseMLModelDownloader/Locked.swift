import Foundation

/// A value shared between threads, read and changed only while holding a lock.
final class Locked<Value>: @unchecked Sendable {  // every access to `value` goes through `lock`
  /// Serializes access to `value`.
  private let lock = NSLock()
  /// The protected value.
  private var value: Value

  /// Wraps `value`.
  init(_ value: Value) { self.value = value }

  /// Runs `body` with exclusive access to the value and returns its result.
  func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
    lock.lock()
    defer { lock.unlock() }
    return try body(&value)
  }
}

/// Carries a value the compiler cannot prove `Sendable` to the callback queue that calls it.
struct CallbackBox<Value>: @unchecked Sendable {  // user callbacks are only ever invoked on the chosen callback queue
  /// The wrapped callback or value.
  let value: Value
}
