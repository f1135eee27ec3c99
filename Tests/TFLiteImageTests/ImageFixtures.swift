import Foundation
import TFLiteFormat

@testable import TFLiteImage

/// The shared seeded generator (SplitMix64), visible to every file of this test target.
typealias SeededGenerator = TFLiteFormat.SeededGenerator

/// The image corpus `Scripts/make_image_fixtures.py` writes into `TestModels/images/`.
enum ImageFixtures {
  /// `TestModels/images/` at the repository root.
  static let directory = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("TestModels/images")

  /// The bytes of `name` under `TestModels/images/`.
  static func bytes(_ name: String) throws -> [UInt8] {
    [UInt8](try Data(contentsOf: directory.appendingPathComponent(name)))
  }

  /// Names (without extension) of the PNG files in `TestModels/images/png/`, sorted.
  static var pngNames: [String] {
    let files = (try? FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("png").path)) ?? []
    return files.filter { $0.hasSuffix(".png") }.map { String($0.dropLast(4)) }.sorted()
  }

  /// The `.npy` file `name` under `TestModels/images/`, or nil when it does not exist.
  static func array(_ name: String) throws -> NumPyArray? {
    let path = directory.appendingPathComponent(name).path
    guard FileManager.default.fileExists(atPath: path) else { return nil }
    return try NumPyArray(contentsOfFile: path)
  }
}


/// Rewrites the CRC of every chunk of a PNG file so that edits inside chunks reach the decoder
/// past the CRC check; stops at the first chunk whose length runs past the end.
func refreshingChunkCRCs(_ png: [UInt8]) -> [UInt8] {
  var bytes = png
  var offset = 8
  while offset + 12 <= bytes.count {
    let length = Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
    guard length <= bytes.count - offset - 12 else { break }
    let crc = CRC32.checksum(Array(bytes[(offset + 4)..<(offset + 8 + length)]))
    for index in 0..<4 { bytes[offset + 8 + length + index] = UInt8(truncatingIfNeeded: crc >> (24 - 8 * index)) }
    offset += 12 + length
  }
  return bytes
}
