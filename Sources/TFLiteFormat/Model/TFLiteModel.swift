// Temporary stub: the issue "Read every .tflite file" replaces this with the verified reader.

/// A verified `.tflite` model whose bytes it owns (memory-mapped file or in-memory copy).
public final class TFLiteModel: @unchecked Sendable {
  /// The model's bytes.
  public let bytes: [UInt8]

  /// Maps and verifies the model file at `path`.
  public convenience init(contentsOfFile path: String) throws {
    throw ModelFormatError(message: "reading files is not implemented yet: \(path)", offset: nil)
  }

  /// Verifies `bytes` and keeps a copy of them.
  public init(bytes: [UInt8]) throws {
    guard bytes.count >= 8 else { throw ModelFormatError(message: "file too short", offset: 0) }
    self.bytes = bytes
  }
}

/// Why a model file was rejected, with the byte offset where the problem lies when one is known.
public struct ModelFormatError: Error, CustomStringConvertible, Sendable {
  /// What is wrong.
  public var message: String
  /// The byte offset in the file where the problem was found.
  public var offset: Int?
  /// Creates an error.
  public init(message: String, offset: Int?) { self.message = message; self.offset = offset }
  /// A readable description including the offset.
  public var description: String { offset.map { "\(message) (at byte \($0))" } ?? message }
}
