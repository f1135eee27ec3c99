/// Why `.npy` bytes or a file were rejected, with the byte offset of the problem when one is known.
public struct NumPyError: Error, CustomStringConvertible, Sendable, Equatable {
  /// What is wrong.
  public var message: String
  /// The byte offset in the `.npy` data where the problem was found.
  public var offset: Int?

  /// Creates an error.
  public init(message: String, offset: Int? = nil) {
    self.message = message
    self.offset = offset
  }

  /// A readable description including the offset.
  public var description: String { "npy: " + (offset.map { "\(message) (at byte \($0))" } ?? message) }
}
