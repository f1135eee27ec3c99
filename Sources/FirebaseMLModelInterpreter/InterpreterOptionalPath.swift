// Firebase's AutoML guide passes the `String?` it filled from `getLatestModelFilePath` straight to
// `Interpreter(modelPath:)`; this overload lets that code compile unchanged.
import Foundation
import TensorFlowLite

extension Interpreter {
  /// Creates an interpreter for the model at `modelPath`, which may be nil.
  ///
  /// - Throws: ``InterpreterError/failedToLoadModel`` when `modelPath` is nil; otherwise as
  ///   `init(modelPath:options:delegates:)` with a `String`.
  public convenience init(modelPath: String?, options: Options? = nil, delegates: [Delegate]? = nil) throws {
    guard let modelPath else { throw InterpreterError.failedToLoadModel }
    try self.init(modelPath: modelPath, options: options, delegates: delegates)
  }
}
