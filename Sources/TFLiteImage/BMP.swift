// Windows bitmaps (BMP; Microsoft's BITMAPINFOHEADER family, little-endian): a 14-byte file header
// ("BM", size, pixel-data offset), then a DIB header of 12 (OS/2 core), 40 (INFO), 52, 56, 108
// (V4) or 124 (V5) bytes, an optional palette and the pixel rows, each padded to four bytes,
// bottom row first unless the height is negative.
// Read: 1-, 4- and 8-bit palettes (to RGB; an index past the palette is black), 16-bit (5-5-5, or
// any masks with BI_BITFIELDS), 24-bit BGR and 32-bit (BGRX with BI_RGB, any masks with
// BI_BITFIELDS / BI_ALPHABITFIELDS; a non-zero alpha mask gives RGBA). A field of n bits becomes
// v × 255 / (2ⁿ − 1) rounded down, as Pillow unpacks 5-5-5 and 5-6-5: the pixels equal Pillow's.
// RLE and embedded JPEG/PNG compression are refused.
// Write: gray as 8-bit with a gray palette, RGB as 24-bit (both as Pillow writes them, byte for
// byte), images with alpha as 32-bit BI_BITFIELDS BGRA in a V4 header.

/// BMP reading and writing.
public enum BMP {
  /// Decodes a BMP file to a 3-channel (RGB) or, when it has an alpha mask, 4-channel image.
  public static func decode(_ bytes: [UInt8], limits: ImageDecodingLimits = ImageDecodingLimits()) throws(ImageError)
    -> Image
  {
    let header = try BMPHeader(bytes)
    try limits.check(width: header.width, height: header.height)
    let (strideBits, overflow) = header.width.multipliedReportingOverflow(by: header.bitsPerPixel)
    let stride = (strideBits + 31) / 32 * 4
    let (dataSize, sizeOverflow) = stride.multipliedReportingOverflow(by: header.height)
    guard !overflow, !sizeOverflow, header.pixelOffset <= bytes.count, bytes.count - header.pixelOffset >= dataSize else {
      throw BMPHeader.malformed("the pixel rows need \(dataSize) bytes from offset \(header.pixelOffset), the file has \(bytes.count)", bytes.count)
    }
    let channels = header.masks?.alpha.isPresent == true ? 4 : 3
    var pixels = [UInt8](repeating: 0, count: header.width * header.height * channels)
    bytes.withUnsafeBufferPointer { file in
      pixels.withUnsafeMutableBufferPointer { output in
        for fileRow in 0..<header.height {
          let row = header.isTopDown ? fileRow : header.height - 1 - fileRow
          let source = header.pixelOffset + fileRow * stride
          var target = row * header.width * channels
          for column in 0..<header.width {
            header.readPixel(file, rowStart: source, column: column, into: output, at: target, channels: channels)
            target += channels
          }
        }
      }
    }
    return try Image(width: header.width, height: header.height, channels: channels, pixels: pixels)
  }

  /// A BMP file of `image`: 8-bit gray palette for 1 channel, 24-bit for 3, 32-bit BGRA with
  /// bit-field masks for 2 and 4 (gray + alpha is written as RGBA).
  public static func encode(_ image: Image) -> [UInt8] {
    let bitsPerPixel = [1: 8, 3: 24][image.channels] ?? 32
    let rowLength = (image.width * bitsPerPixel + 31) / 32 * 4
    let headerSize = bitsPerPixel == 32 ? 108 : 40
    let paletteSize = bitsPerPixel == 8 ? 256 * 4 : 0
    let offset = 14 + headerSize + paletteSize
    var file: [UInt8] = []
    file.reserveCapacity(offset + rowLength * image.height)
    func append32(_ value: Int) { file += (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
    func append16(_ value: Int) { file += [UInt8(truncatingIfNeeded: value), UInt8(truncatingIfNeeded: value >> 8)] }
    file += Array("BM".utf8)
    append32(offset + rowLength * image.height)
    append32(0)
    append32(offset)
    append32(headerSize)
    append32(image.width)
    append32(image.height)
    append16(1)
    append16(bitsPerPixel)
    append32(bitsPerPixel == 32 ? 3 : 0)  // BI_BITFIELDS or BI_RGB
    append32(rowLength * image.height)
    append32(3780)  // 96 dots per inch, in dots per metre, as Pillow writes by default
    append32(3780)
    append32(paletteSize / 4)
    append32(paletteSize / 4)
    if bitsPerPixel == 32 {
      [0x00FF_0000, 0x0000_FF00, 0x0000_00FF, Int(0xFF00_0000)].forEach(append32)
      append32(0x7352_4742)  // "sRGB" colour space
      file += [UInt8](repeating: 0, count: 48)  // end points and gamma, unused with sRGB
    }
    for level in 0..<(paletteSize / 4) { file += [UInt8(level), UInt8(level), UInt8(level), 0] }
    let padding = [UInt8](repeating: 0, count: rowLength - image.width * bitsPerPixel / 8)
    for row in stride(from: image.height - 1, through: 0, by: -1) {
      for column in 0..<image.width {
        let start = (row * image.width + column) * image.channels
        let pixel = image.pixels
        switch image.channels {
        case 1: file.append(pixel[start])
        case 2: file += [pixel[start], pixel[start], pixel[start], pixel[start + 1]]
        case 3: file += [pixel[start + 2], pixel[start + 1], pixel[start]]
        default: file += [pixel[start + 2], pixel[start + 1], pixel[start], pixel[start + 3]]
        }
      }
      file += padding
    }
    return file
  }
}

/// One colour field of a 16- or 32-bit pixel: where it sits and how wide it is.
struct BMPChannelMask: Equatable {
  /// The field's lowest bit.
  let shift: Int
  /// The field's width in bits (0 when the channel is absent).
  let width: Int

  /// Whether the pixel has this field.
  var isPresent: Bool { width > 0 }

  /// The field of `mask`; throws when its set bits are not contiguous.
  init(_ mask: UInt32) throws(ImageError) {
    shift = mask == 0 ? 0 : mask.trailingZeroBitCount
    width = (mask >> UInt32(shift)).nonzeroBitCount
    guard mask == 0 || (mask >> UInt32(shift)) & ((mask >> UInt32(shift)) &+ 1) == 0 else {
      throw BMPHeader.malformed("the colour mask 0x\(String(mask, radix: 16)) has gaps", nil)
    }
  }

  /// The 8-bit value of this field in `pixel`: field × 255 / field maximum, rounded down.
  func value(in pixel: UInt32) -> UInt8 {
    guard width > 0 else { return 0 }
    let maximum = (UInt64(1) << UInt64(width)) - 1
    let field = UInt64(pixel >> UInt32(shift)) & maximum
    return UInt8(field * 255 / maximum)
  }
}

/// The red, green, blue and alpha fields of a 16- or 32-bit BMP pixel.
struct BMPMasks {
  let red: BMPChannelMask, green: BMPChannelMask, blue: BMPChannelMask, alpha: BMPChannelMask
}

/// What the file and DIB headers say: size, depth, row order, palette and masks.
struct BMPHeader {
  let width: Int
  let height: Int
  let isTopDown: Bool
  let bitsPerPixel: Int
  let pixelOffset: Int
  /// RGB entries, for 1-, 4- and 8-bit files.
  let palette: [(UInt8, UInt8, UInt8)]
  /// The colour fields, for 16- and 32-bit files.
  let masks: BMPMasks?

  static func malformed(_ message: String, _ offset: Int?) -> ImageError {
    .malformed(format: "BMP", message: message, offset: offset)
  }

  init(_ bytes: [UInt8]) throws(ImageError) {
    func unsigned(_ offset: Int, _ size: Int) throws(ImageError) -> UInt32 {
      guard offset + size <= bytes.count else { throw Self.malformed("the header ends early", bytes.count) }
      return (0..<size).reduce(UInt32(0)) { $0 | UInt32(bytes[offset + $1]) << UInt32(8 * $1) }
    }
    guard bytes.count >= 2, bytes[0] == UInt8(ascii: "B"), bytes[1] == UInt8(ascii: "M") else {
      throw Self.malformed("the file does not start with BM", 0)
    }
    pixelOffset = Int(try unsigned(10, 4))
    let headerSize = Int(try unsigned(14, 4))
    let compression: UInt32
    let colorsUsed: Int
    let signedHeight: Int
    if headerSize == 12 {
      width = Int(try unsigned(18, 2))
      signedHeight = Int(try unsigned(20, 2))
      bitsPerPixel = Int(try unsigned(24, 2))
      compression = 0
      colorsUsed = 0
    } else if [40, 52, 56, 108, 124].contains(headerSize) {
      width = Int(Int32(bitPattern: try unsigned(18, 4)))
      signedHeight = Int(Int32(bitPattern: try unsigned(22, 4)))
      bitsPerPixel = Int(try unsigned(28, 2))
      compression = try unsigned(30, 4)
      colorsUsed = Int(try unsigned(46, 4))
    } else {
      throw Self.malformed("unknown DIB header size \(headerSize)", 14)
    }
    isTopDown = signedHeight < 0
    height = abs(signedHeight)
    guard width > 0, height > 0 else { throw Self.malformed("size \(width)×\(signedHeight) is not positive", 18) }
    guard [1, 4, 8, 16, 24, 32].contains(bitsPerPixel) else {
      throw Self.malformed("\(bitsPerPixel) bits per pixel (expected 1, 4, 8, 16, 24 or 32)", 28)
    }
    var tableStart = 14 + headerSize
    switch compression {
    case 0:
      masks = bitsPerPixel == 16
        ? BMPMasks(red: try BMPChannelMask(0x7C00), green: try BMPChannelMask(0x3E0), blue: try BMPChannelMask(0x1F),
                   alpha: try BMPChannelMask(0))
        : bitsPerPixel == 32
        ? BMPMasks(red: try BMPChannelMask(0xFF_0000), green: try BMPChannelMask(0xFF00), blue: try BMPChannelMask(0xFF),
                   alpha: try BMPChannelMask(0)) : nil
    case 3, 6:
      guard bitsPerPixel == 16 || bitsPerPixel == 32 else {
        throw Self.malformed("bit-field masks with \(bitsPerPixel) bits per pixel", 30)
      }
      let hasAlpha = compression == 6 || headerSize >= 56
      masks = BMPMasks(red: try BMPChannelMask(try unsigned(54, 4)), green: try BMPChannelMask(try unsigned(58, 4)),
                       blue: try BMPChannelMask(try unsigned(62, 4)),
                       alpha: try BMPChannelMask(hasAlpha ? try unsigned(66, 4) : 0))
      if headerSize == 40 { tableStart += compression == 6 ? 16 : 12 }
    case 1, 2: throw ImageError.unsupported(format: "BMP", message: "RLE-compressed bitmaps")
    case 4, 5: throw ImageError.unsupported(format: "BMP", message: "bitmaps holding an embedded JPEG or PNG")
    default: throw Self.malformed("unknown compression \(compression)", 30)
    }
    if bitsPerPixel <= 8 {
      let entrySize = headerSize == 12 ? 3 : 4
      let count = colorsUsed == 0 ? 1 << bitsPerPixel : colorsUsed
      guard count <= 1 << bitsPerPixel, tableStart + count * entrySize <= bytes.count else {
        throw Self.malformed("a palette of \(count) entries does not fit", tableStart)
      }
      palette = (0..<count).map { index in
        let entry = tableStart + index * entrySize
        return (bytes[entry + 2], bytes[entry + 1], bytes[entry])
      }
    } else {
      palette = []
    }
  }

  /// Writes the RGB(A) samples of pixel `column` of the row starting at `rowStart` to `output[target...]`.
  func readPixel(
    _ file: UnsafeBufferPointer<UInt8>, rowStart: Int, column: Int, into output: UnsafeMutableBufferPointer<UInt8>,
    at target: Int, channels: Int
  ) {
    switch bitsPerPixel {
    case 1, 4, 8:
      let bitPosition = column * bitsPerPixel
      let byte = Int(file[rowStart + bitPosition / 8])
      let index = byte >> (8 - bitsPerPixel - bitPosition % 8) & ((1 << bitsPerPixel) - 1)
      let (red, green, blue) = index < palette.count ? palette[index] : (0, 0, 0)
      (output[target], output[target + 1], output[target + 2]) = (red, green, blue)
    case 24:
      let source = rowStart + column * 3
      (output[target], output[target + 1], output[target + 2]) = (file[source + 2], file[source + 1], file[source])
    default:
      guard let masks else { return }
      let size = bitsPerPixel / 8
      let source = rowStart + column * size
      let pixel = (0..<size).reduce(UInt32(0)) { $0 | UInt32(file[source + $1]) << UInt32(8 * $1) }
      output[target] = masks.red.value(in: pixel)
      output[target + 1] = masks.green.value(in: pixel)
      output[target + 2] = masks.blue.value(in: pixel)
      if channels == 4 { output[target + 3] = masks.alpha.value(in: pixel) }
    }
  }
}
