// Reading ZIP archives (PKWARE APPNOTE 6.3): the end-of-central-directory record, the central
// directory and local headers; stored (method 0) and deflated (method 8) entries, decompressed
// with this module's inflate and checked against their CRC-32 and sizes. TFLite metadata keeps a
// model's associated files (labels, vocabularies) in a ZIP appended to the .tflite file, so bytes
// before the archive are allowed: offsets are taken relative to where the central directory
// really is, as Python's zipfile does. ZIP64, encryption and other methods are refused. Entry
// names that climb out of their folder (`..` components, absolute paths, backslashes) and sizes
// that disagree between the headers and the data throw `ImageError.malformed(format: "ZIP", ...)`.

/// A ZIP archive in memory and the entries of its central directory.
public struct ZIPArchive: Sendable {
  /// One file in the archive, as the central directory describes it.
  public struct Entry: Sendable, Equatable {
    /// The name (a relative path with `/` separators).
    public let name: String
    /// 0 stored, 8 deflated.
    public let method: Int
    /// Bytes of the (compressed) data.
    public let compressedSize: Int
    /// Bytes of the file.
    public let uncompressedSize: Int
    /// CRC-32 of the file.
    public let crc32: UInt32
    /// Where the local header starts in the archive's bytes.
    let localHeaderOffset: Int
  }

  /// The bytes the archive was read from (possibly with other data before it).
  public let bytes: [UInt8]
  /// The entries, in central-directory order.
  public let entries: [Entry]

  /// Reads the central directory of the ZIP archive at the end of `bytes`.
  public init(bytes: [UInt8]) throws(ImageError) {
    self.bytes = bytes
    func le16(_ offset: Int) -> Int { Int(bytes[offset]) | Int(bytes[offset + 1]) << 8 }
    func le32(_ offset: Int) -> Int { le16(offset) | le16(offset + 2) << 16 }
    // The end record is 22 bytes plus a comment of up to 65535 bytes.
    var end = -1
    var candidate = bytes.count - 22
    while candidate >= max(0, bytes.count - 22 - 65535) {
      if bytes[candidate] == 0x50, bytes[candidate + 1] == 0x4B, bytes[candidate + 2] == 5, bytes[candidate + 3] == 6,
        candidate + 22 + le16(candidate + 20) == bytes.count
      {
        end = candidate
        break
      }
      candidate -= 1
    }
    guard end >= 0 else { throw Self.error("no end-of-central-directory record", nil) }
    let entryCount = le16(end + 10)
    let directorySize = le32(end + 12), directoryOffset = le32(end + 16)
    guard le16(end + 4) == 0, le16(end + 6) == 0, le16(end + 8) == entryCount else {
      throw ImageError.unsupported(format: "ZIP", message: "archives split over several disks")
    }
    guard entryCount != 0xFFFF, directoryOffset != 0xFFFF_FFFF else {
      throw ImageError.unsupported(format: "ZIP", message: "ZIP64 archives")
    }
    // Data before the archive (a model) shifts every offset by the same amount.
    let base = end - directorySize - directoryOffset
    guard base >= 0 else {
      throw Self.error("the central directory (\(directorySize) bytes at \(directoryOffset)) does not fit before its end record", end)
    }
    var offset = base + directoryOffset
    var entries: [Entry] = []
    for index in 0..<entryCount {
      guard offset + 46 <= end, le32(offset) == 0x0201_4B50 else {
        throw Self.error("central directory entry \(index) is missing or has a wrong signature", offset)
      }
      let flags = le16(offset + 8), method = le16(offset + 10)
      let nameLength = le16(offset + 28), extraLength = le16(offset + 30), commentLength = le16(offset + 32)
      guard offset + 46 + nameLength + extraLength + commentLength <= end else {
        throw Self.error("central directory entry \(index) runs past the directory", offset)
      }
      let name = String(decoding: bytes[(offset + 46)..<(offset + 46 + nameLength)], as: UTF8.self)
      try Self.checkName(name, at: offset)
      guard flags & 1 == 0 else { throw ImageError.unsupported(format: "ZIP", message: "entry \(name) is encrypted") }
      guard method == 0 || method == 8 else {
        throw ImageError.unsupported(format: "ZIP", message: "entry \(name) uses compression method \(method) (0 and 8 are read)")
      }
      let entry = Entry(
        name: name, method: method, compressedSize: le32(offset + 20), uncompressedSize: le32(offset + 24),
        crc32: UInt32(le32(offset + 16)), localHeaderOffset: base + le32(offset + 42))
      guard method == 8 || entry.compressedSize == entry.uncompressedSize else {
        throw Self.error("stored entry \(name) claims \(entry.compressedSize) bytes stored and \(entry.uncompressedSize) unpacked", offset)
      }
      entries.append(entry)
      offset += 46 + nameLength + extraLength + commentLength
    }
    self.entries = entries
  }

  /// The entry called `name`, or nil.
  public func entry(named name: String) -> Entry? { entries.first { $0.name == name } }

  /// The unpacked bytes of `entry`, checked against its sizes and CRC-32; throws when it would
  /// unpack to more than `maximumSize` bytes.
  public func contents(of entry: Entry, maximumSize: Int = 1 << 30) throws(ImageError) -> [UInt8] {
    guard entry.uncompressedSize <= maximumSize else {
      throw Self.error("entry \(entry.name) unpacks to \(entry.uncompressedSize) bytes, more than \(maximumSize)", nil)
    }
    let header = entry.localHeaderOffset
    guard header + 30 <= bytes.count, bytes[header] == 0x50, bytes[header + 1] == 0x4B, bytes[header + 2] == 3,
      bytes[header + 3] == 4
    else { throw Self.error("entry \(entry.name) has no local header at its offset", header) }
    let nameLength = Int(bytes[header + 26]) | Int(bytes[header + 27]) << 8
    let extraLength = Int(bytes[header + 28]) | Int(bytes[header + 29]) << 8
    let start = header + 30 + nameLength + extraLength
    guard start + entry.compressedSize <= bytes.count else {
      throw Self.error("entry \(entry.name)'s \(entry.compressedSize) bytes run past the end of the archive", start)
    }
    let data = Array(bytes[start..<(start + entry.compressedSize)])
    let output: [UInt8]
    if entry.method == 0 {
      output = data
    } else {
      do throws(ImageError) {
        let (inflated, _) = try Inflate.raw(data, maximumSize: entry.uncompressedSize, expectedSize: entry.uncompressedSize)
        output = inflated
      } catch {
        throw Self.error("entry \(entry.name): \(error)", start)
      }
    }
    guard output.count == entry.uncompressedSize else {
      throw Self.error("entry \(entry.name) unpacks to \(output.count) bytes, its header says \(entry.uncompressedSize)", start)
    }
    let crc = CRC32.checksum(output)
    guard crc == entry.crc32 else {
      throw Self.error("entry \(entry.name) has CRC-32 \(hex(crc)), its header says \(hex(entry.crc32))", start)
    }
    return output
  }

  /// Throws for names that are empty, absolute, use backslashes or have a `..` component.
  private static func checkName(_ name: String, at offset: Int) throws(ImageError) {
    let components = name.split(separator: "/", omittingEmptySubsequences: false)
    guard !name.isEmpty, !name.hasPrefix("/"), !name.contains("\\"), !name.contains(":"), !components.contains("..") else {
      throw error("entry name \"\(name)\" leaves the archive's folder", offset)
    }
  }

  private static func error(_ message: String, _ offset: Int?) -> ImageError {
    .malformed(format: "ZIP", message: message, offset: offset)
  }
}
