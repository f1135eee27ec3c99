/// A run of bytes inside a model file, kept as a position instead of a copy.
///
/// Constant tensor data and custom options stay in the (usually memory-mapped) file; resolve a
/// range with ``TFLiteModel/bytes(in:)`` to read it.
public struct ByteRange: Hashable, Sendable {
  /// Position of the first byte, counted from the start of the file.
  public var offset: Int
  /// Number of bytes.
  public var count: Int

  /// Creates a range of `count` bytes starting at `offset`.
  public init(offset: Int, count: Int) {
    self.offset = offset
    self.count = count
  }
}
