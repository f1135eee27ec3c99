// Netpbm binary images (the Netpbm format specification): P5 (PGM, gray) and P6 (PPM, RGB), with
// a maximum sample value of 1–65535. Samples above 255 (two bytes, big-endian) and any maximum
// other than 255 are scaled to 0–255 as round(value × 255 / maximum), the scaling Netpbm tools use.
// Comments (`#` to the end of a line) may appear between header fields.

/// PGM/PPM reading and writing.
public enum PPM {
  /// Decodes a P5 or P6 file to a 1- or 3-channel image.
  public static func decode(_ bytes: [UInt8], limits: ImageDecodingLimits = ImageDecodingLimits()) throws(ImageError)
    -> Image
  {
    func malformed(_ message: String, _ offset: Int?) -> ImageError {
      .malformed(format: "PPM", message: message, offset: offset)
    }
    guard bytes.count >= 2, bytes[0] == UInt8(ascii: "P"), bytes[1] == UInt8(ascii: "5") || bytes[1] == UInt8(ascii: "6")
    else { throw malformed("the file does not start with P5 or P6", 0) }
    let channels = bytes[1] == UInt8(ascii: "5") ? 1 : 3
    var offset = 2
    /// The next decimal header field, after whitespace and comments.
    func field(_ name: String) throws(ImageError) -> Int {
      while offset < bytes.count {
        if bytes[offset] == UInt8(ascii: "#") {
          while offset < bytes.count && bytes[offset] != 0x0A { offset += 1 }
        } else if [0x20, 0x09, 0x0A, 0x0D, 0x0B, 0x0C].contains(bytes[offset]) {
          offset += 1
        } else {
          break
        }
      }
      var value = 0
      let start = offset
      while offset < bytes.count, (0x30...0x39).contains(bytes[offset]) {
        value = value * 10 + Int(bytes[offset] - 0x30)
        guard value <= 0x7FFF_FFFF else { throw malformed("the \(name) has too many digits", start) }
        offset += 1
      }
      guard offset > start else { throw malformed("the header has no \(name)", start) }
      return value
    }
    let width = try field("width"), height = try field("height"), maximum = try field("maximum value")
    guard width > 0, height > 0 else { throw malformed("size \(width)×\(height) is not positive", nil) }
    guard (1...65535).contains(maximum) else { throw malformed("maximum value \(maximum) is not 1–65535", nil) }
    try limits.check(width: width, height: height)
    guard offset < bytes.count else { throw malformed("the header has no whitespace before the samples", offset) }
    offset += 1  // exactly one whitespace byte ends the header
    let count = width * height * channels
    let sampleBytes = maximum > 255 ? 2 : 1
    guard bytes.count - offset >= count * sampleBytes else {
      throw malformed("\(count * sampleBytes) sample bytes needed, \(bytes.count - offset) present", bytes.count)
    }
    let pixels = (0..<count).map { index -> UInt8 in
      let value =
        sampleBytes == 2
        ? Int(bytes[offset + 2 * index]) << 8 | Int(bytes[offset + 2 * index + 1]) : Int(bytes[offset + index])
      return UInt8((min(value, maximum) * 255 + maximum / 2) / maximum)
    }
    return try Image(width: width, height: height, channels: channels, pixels: pixels)
  }

  /// A P5 (1 channel) or P6 (3 channels) file of `image` with maximum value 255; images with alpha
  /// (2 or 4 channels) are written without it.
  public static func encode(_ image: Image) -> [UInt8] {
    let hasColor = image.channels >= 3
    var file = Array("\(hasColor ? "P6" : "P5")\n\(image.width) \(image.height)\n255\n".utf8)
    let kept = hasColor ? 3 : 1
    file.reserveCapacity(file.count + image.width * image.height * kept)
    for pixel in 0..<(image.width * image.height) {
      file += image.pixels[(pixel * image.channels)..<(pixel * image.channels + kept)]
    }
    return file
  }
}
