// The format-sniffing entry point: `decodeImage(_:)` looks at a file's first bytes and hands it
// to the decoder of its format.

/// The file formats this module recognizes by their first bytes.
public enum ImageFormat: String, Sendable, CaseIterable {
  /// PNG (signature 89 50 4E 47 0D 0A 1A 0A).
  case png
  /// JPEG (FF D8 FF).
  case jpeg
  /// Netpbm binary gray (P5) or colour (P6).
  case ppm
  /// Windows bitmap ("BM").
  case bmp

  /// The format of `bytes`, judged by their first bytes, or nil.
  public init?(sniffing bytes: [UInt8]) {
    if bytes.starts(with: PNG.signature) {
      self = .png
    } else if bytes.starts(with: [0xFF, 0xD8, 0xFF]) {
      self = .jpeg
    } else if bytes.count >= 2, bytes[0] == UInt8(ascii: "P"), bytes[1] == UInt8(ascii: "5") || bytes[1] == UInt8(ascii: "6") {
      self = .ppm
    } else if bytes.starts(with: Array("BM".utf8)) {
      self = .bmp
    } else {
      return nil
    }
  }
}

/// Decodes a PNG, JPEG, BMP or PPM/PGM file, whichever `bytes` are, to 8-bit samples; throws
/// `ImageError.unknownFormat` for anything else. A JPEG's EXIF orientation is applied unless
/// `appliesOrientation` is false.
public func decodeImage(
  _ bytes: [UInt8], limits: ImageDecodingLimits = ImageDecodingLimits(), appliesOrientation: Bool = true
) throws(ImageError) -> Image {
  switch ImageFormat(sniffing: bytes) {
  case .png: return try PNG.decode(bytes, limits: limits)
  case .jpeg:
    return try JPEGDecoder.decode(bytes, options: JPEGDecodingOptions(limits: limits, appliesOrientation: appliesOrientation))
  case .ppm: return try PPM.decode(bytes, limits: limits)
  case .bmp: return try BMP.decode(bytes, limits: limits)
  case nil: throw ImageError.unknownFormat
  }
}
