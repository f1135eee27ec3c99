/// Why FlexBuffers bytes were rejected, with the byte offset (from the start of the FlexBuffer)
/// where the problem lies.
public struct FlexBufferError: Error, CustomStringConvertible, Sendable, Equatable {
  /// What is wrong.
  public var message: String
  /// The byte offset inside the FlexBuffer where the problem was found.
  public var offset: Int

  /// Creates an error.
  public init(message: String, offset: Int) {
    self.message = message
    self.offset = offset
  }

  /// A readable description including the offset.
  public var description: String { "FlexBuffer: \(message) (at byte \(offset))" }
}
