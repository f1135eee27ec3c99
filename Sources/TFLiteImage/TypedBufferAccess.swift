// Buffer access for closures that throw `ImageError`. Swift 6.0's standard library declares
// `withUnsafeBufferPointer` and `withUnsafeMutableBufferPointer` `rethrows`, which widens a typed
// error to `any Error` (later toolchains forward the closure's error type); these forward it on
// every toolchain the package supports.

extension Array {
  /// `withUnsafeBufferPointer(_:)` whose body's `ImageError` reaches the caller as `ImageError`.
  func withBuffer<Result>(
    _ body: (UnsafeBufferPointer<Element>) throws(ImageError) -> Result
  ) throws(ImageError) -> Result {
    let outcome = withUnsafeBufferPointer { (buffer) -> Swift.Result<Result, ImageError> in
      Swift.Result { () throws(ImageError) in try body(buffer) }
    }
    return try outcome.get()
  }

  /// `withUnsafeMutableBufferPointer(_:)` whose body's `ImageError` reaches the caller as
  /// `ImageError`.
  mutating func withMutableBuffer<Result>(
    _ body: (UnsafeMutableBufferPointer<Element>) throws(ImageError) -> Result
  ) throws(ImageError) -> Result {
    let outcome = withUnsafeMutableBufferPointer { (buffer) -> Swift.Result<Result, ImageError> in
      Swift.Result { () throws(ImageError) in try body(buffer) }
    }
    return try outcome.get()
  }
}
