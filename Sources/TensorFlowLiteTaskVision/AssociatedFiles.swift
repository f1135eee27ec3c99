// The associated files of a model: TFLite Support metadata names label, calibration and other
// files (`AssociatedFile`), and the MetadataPopulator appends them to the .tflite file as a ZIP
// archive. This reads that archive (stored and deflated entries, CRC-checked, names that climb out
// of the archive refused, by TFLiteImage's ZIPArchive) and parses label files: one label per line,
// "\r\n" accepted, trailing empty lines ignored.

import TFLiteImage

/// The files in the ZIP archive appended to a model, by name.
public struct ModelAssociatedFiles: Sendable {
  /// The largest associated file read (labels and calibration files are small; this stops a lying
  /// header from unpacking gigabytes).
  public static let maximumFileSize = 64 << 20

  /// The archive, or nil when the model has none.
  private let archive: ZIPArchive?

  /// Reads the archive at the end of `modelBytes`; a model without one has no files. A model with a
  /// broken archive throws.
  public init(modelBytes: [UInt8]) throws(TaskVisionError) {
    guard Self.hasEndOfCentralDirectory(modelBytes) else {
      archive = nil
      return
    }
    do {
      archive = try ZIPArchive(bytes: modelBytes)
    } catch {
      throw TaskVisionError("the ZIP archive of associated files appended to the model is broken: \(error)")
    }
  }

  /// The names of the files, in archive order.
  public var names: [String] { archive?.entries.map(\.name) ?? [] }

  /// The bytes of the file `name`; throws when the model has no such file or it cannot be unpacked.
  public func contents(of name: String) throws(TaskVisionError) -> [UInt8] {
    guard let archive, let entry = archive.entry(named: name) else {
      throw TaskVisionError("the model has no associated file \"\(name)\" (it has: \(names.isEmpty ? "none" : names.joined(separator: ", ")))")
    }
    do {
      return try archive.contents(of: entry, maximumSize: Self.maximumFileSize)
    } catch {
      throw TaskVisionError("associated file \"\(name)\": \(error)")
    }
  }

  /// The lines of the text file `name`, as ``labelLines(_:)`` splits them.
  public func lines(of name: String) throws(TaskVisionError) -> [String] {
    Self.labelLines(try contents(of: name))
  }

  /// One string per line of UTF-8 `bytes`; a "\r" before "\n" is dropped, and so are trailing empty lines.
  public static func labelLines(_ bytes: [UInt8]) -> [String] {
    var lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map { line in
      String(decoding: line.last == UInt8(ascii: "\r") ? line.dropLast() : line, as: UTF8.self)
    }
    while lines.last?.isEmpty == true { lines.removeLast() }
    return lines
  }

  /// Whether `bytes` end with a ZIP end-of-central-directory record (its signature, and a comment
  /// length that reaches the last byte), the test ZIPArchive applies.
  private static func hasEndOfCentralDirectory(_ bytes: [UInt8]) -> Bool {
    guard bytes.count >= 22 else { return false }
    let signature: [UInt8] = [0x50, 0x4B, 0x05, 0x06]
    var candidate = bytes.count - 22
    while candidate >= max(0, bytes.count - 22 - 65535) {
      let commentLength = Int(bytes[candidate + 20]) | Int(bytes[candidate + 21]) << 8
      if bytes[candidate..<(candidate + 4)].elementsEqual(signature), candidate + 22 + commentLength == bytes.count {
        return true
      }
      candidate -= 1
    }
    return false
  }
}
