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
