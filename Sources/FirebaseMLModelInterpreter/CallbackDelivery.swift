// How this module hands results to user callbacks: on the queue a `ModelDownloaderCallbackQueue`
// names (the main queue on Apple platforms, a private serial queue on Linux, by default).
import Dispatch
import Foundation

extension ModelDownloaderCallbackQueue {
  /// The serial queue this module uses for ``ModelDownloaderCallbackQueue/privateSerial``.
  private static let interpreterCallbacks = DispatchQueue(label: "FirebaseMLModelInterpreter.callbacks")

  /// Runs `callback` on the queue this value names.
  func deliver(_ callback: @escaping () -> Void) {
    let box = SendableBox(value: callback)
    switch self {
    case .main: DispatchQueue.main.async { box.value() }
    case .privateSerial: Self.interpreterCallbacks.async { box.value() }
    case .custom(let queue): queue.async { box.value() }
    }
  }
}

/// Carries a value the compiler cannot prove `Sendable` across a queue hop.
struct SendableBox<Value>: @unchecked Sendable {  // values are used by one queue at a time
  /// The wrapped value.
  let value: Value
}

/// A value shared between threads, read and changed only while holding a lock.
final class Protected<Value>: @unchecked Sendable {  // every access to `value` goes through `lock`
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
