// PNG decoding (ISO/IEC 15948, the W3C PNG specification): every colour type (gray, RGB,
// palette, gray + alpha, RGBA) at every bit depth it allows (1, 2, 4, 8, 16), palette and `tRNS`
// transparency, Adam7 interlacing. Every chunk's CRC-32 and the zlib stream's Adler-32 are
// checked; unknown critical chunks are refused, ancillary ones (gamma, colour profiles, text,
// EXIF) are skipped, so the samples come out exactly as stored (no gamma or colour correction).
//
// Output channels: gray 1, gray + alpha 2, RGB and palette 3, RGBA 4; a `tRNS` chunk adds an
// alpha channel (gray → gray + alpha, RGB and palette → RGBA) that is 0 where a pixel equals the
// transparent colour (or the palette entry's alpha) and opaque elsewhere. 8-bit samples: depths
// below 8 are scaled to 0–255 by an exact integer factor (1-bit × 255, 2-bit × 85, 4-bit × 17),
// 16-bit samples keep their high byte. 16-bit samples (`decodeSixteenBit`): every depth scaled to
// 0–65535 exactly (× 65535 / (2^depth − 1)); palette colours, being 8-bit, × 257.

/// PNG decoding and encoding.
public enum PNG {
  /// The eight bytes every PNG file starts with.
  public static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

  /// Decodes a PNG file to 8-bit samples (see the file header for the channel layout).
  public static func decode(_ bytes: [UInt8], limits: ImageDecodingLimits = ImageDecodingLimits()) throws(ImageError)
    -> Image
  {
    let (header, samples) = try decodeSamples(bytes, limits: limits, as: UInt8.self)
    return try Image(width: header.width, height: header.height, channels: header.outputChannels, pixels: samples)
  }

  /// Decodes a PNG file to 16-bit samples, every bit depth scaled to the full 0–65535 range.
  public static func decodeSixteenBit(_ bytes: [UInt8], limits: ImageDecodingLimits = ImageDecodingLimits())
    throws(ImageError) -> SixteenBitImage
  {
    let (header, samples) = try decodeSamples(bytes, limits: limits, as: UInt16.self)
    return try SixteenBitImage(width: header.width, height: header.height, channels: header.outputChannels, samples: samples)
  }

  /// Parses the chunks, inflates and unfilters the image data and converts it to `Sample`s.
  static func decodeSamples<Sample: FixedWidthInteger & UnsignedInteger>(
    _ bytes: [UInt8], limits: ImageDecodingLimits, as: Sample.Type
  ) throws(ImageError) -> (PNGHeader, [Sample]) {
    try bytes.withBuffer { (buffer) throws(ImageError) in
      let file = try PNGChunks(UnsafeRawBufferPointer(buffer), limits: limits)
      let header = file.header
      func inflated<Result>(_ inflate: (UnsafeRawBufferPointer) throws(ImageError) -> (Result, Int)) throws(ImageError) -> Result {
        let (result, count) = try file.imageData.withBuffer { (data) throws(ImageError) in
          do throws(ImageError) {
            return try inflate(UnsafeRawBufferPointer(data))
          } catch {
            if case .malformed(_, let message, _) = error {
              throw ImageError.malformed(format: "PNG", message: "IDAT data: \(message)", offset: nil)
            }
            throw error
          }
        }
        guard count == header.filteredByteCount else {
          throw ImageError.malformed(
            format: "PNG", message: "the image data ends early: \(count) of \(header.filteredByteCount) bytes", offset: nil)
        }
        return result
      }
      if Sample.self == UInt8.self, header.bitDepth == 8, !header.isInterlaced, header.colorType != 3,
        header.outputChannels == header.fileChannels
      {
        // The rows are the pixels once unfiltered: inflate straight into the result and close
        // up the filter bytes, so no second image-sized buffer exists.
        let pass = header.passes[0]
        var pixels = [UInt8](repeating: 0, count: header.filteredByteCount)
        try pixels.withMutableBuffer { (output) throws(ImageError) in
          try inflated { (data) throws(ImageError) in ((), try Inflate.decompressZlib(data, into: output)) }
          let rows = output.baseAddress!
          try unfilterPass(rows, pass: pass, header: header)
          for row in 0..<pass.height {
            let source = rows + row * (pass.rowBytes + 1) + 1, target = rows + row * pass.rowBytes
            for index in 0..<pass.rowBytes { target[index] = source[index] }  // moves left: safe front to back
          }
        }
        pixels.removeLast(pass.height)
        return (header, unsafeBitCast(pixels, to: [Sample].self))  // Sample is UInt8 here
      }
      let filtered = try inflated { (data) throws(ImageError) in
        let output = try Inflate.decompressZlib(data, maximumSize: header.filteredByteCount, expectedSize: header.filteredByteCount)
        return (output, output.count)
      }
      var offset = 0
      for pass in header.passes {
        try unfilterPass(filtered.pointer + offset, pass: pass, header: header)
        offset += pass.byteCount
      }
      let converter = PixelConverter<Sample>(file: file)
      let samples = [Sample](unsafeUninitializedCapacity: header.width * header.height * header.outputChannels) {
        output, initialized in
        var offset = 0
        for pass in header.passes {
          converter.convert(rows: filtered.pointer + offset, pass: pass, into: output.baseAddress!)
          offset += pass.byteCount
        }
        initialized = output.count
      }
      try converter.checkPaletteIndices()
      return (header, samples)
    } as (PNGHeader, [Sample])
  }

  /// Reverses the per-row filters of one pass in place (each row: a filter byte, then the row).
  private static func unfilterPass(_ rows: UnsafeMutablePointer<UInt8>, pass: PNGPass, header: PNGHeader)
    throws(ImageError)
  {
    let stride = pass.rowBytes
    let pixelBytes = max(1, header.bitsPerPixel / 8)
    var previous: UnsafeMutablePointer<UInt8>? = nil
    for row in 0..<pass.height {
      let start = rows + row * (stride + 1)
      let line = start + 1
      switch start[0] {
      case 0: break
      case 1:
        for index in pixelBytes..<max(pixelBytes, stride) { line[index] &+= line[index - pixelBytes] }
      case 2:
        if let previous { for index in 0..<stride { line[index] &+= previous[index] } }
      case 3:
        if let previous {
          for index in 0..<min(pixelBytes, stride) { line[index] &+= previous[index] >> 1 }
          for index in pixelBytes..<max(pixelBytes, stride) {
            line[index] &+= UInt8((UInt16(line[index - pixelBytes]) + UInt16(previous[index])) >> 1)
          }
        } else {
          for index in pixelBytes..<max(pixelBytes, stride) { line[index] &+= line[index - pixelBytes] >> 1 }
        }
      case 4:
        if let previous {
          for index in 0..<min(pixelBytes, stride) { line[index] &+= previous[index] }
          for index in pixelBytes..<max(pixelBytes, stride) {
            line[index] &+= paethPredictor(line[index - pixelBytes], previous[index], previous[index - pixelBytes])
          }
        } else {
          // With a zero row above, Paeth predicts the left neighbour.
          for index in pixelBytes..<max(pixelBytes, stride) { line[index] &+= line[index - pixelBytes] }
        }
      default:
        throw ImageError.malformed(format: "PNG", message: "row \(row) has filter type \(start[0]) (0–4 exist)", offset: nil)
      }
      previous = line
    }
  }

  /// The Paeth predictor: whichever of left, above and upper-left is closest to left + above − upper-left.
  @inline(__always)
  static func paethPredictor(_ left: UInt8, _ above: UInt8, _ upperLeft: UInt8) -> UInt8 {
    let a = Int16(left), b = Int16(above), c = Int16(upperLeft)
    let distanceToLeft = abs(b - c)
    let distanceToAbove = abs(a - c)
    let distanceToUpperLeft = abs(a + b - 2 * c)
    if distanceToLeft <= distanceToAbove && distanceToLeft <= distanceToUpperLeft { return left }
    return distanceToAbove <= distanceToUpperLeft ? above : upperLeft
  }
}

/// An image with 16-bit samples, laid out like ``Image``.
public typealias SixteenBitImage = SampleImage<UInt16>

/// The IHDR fields and the sizes derived from them.
struct PNGHeader {
  let width: Int
  let height: Int
  let bitDepth: Int
  /// 0 gray, 2 RGB, 3 palette, 4 gray + alpha, 6 RGBA.
  let colorType: Int
  let isInterlaced: Bool
  /// Samples per pixel in the file (palette: 1 index).
  let fileChannels: Int
  /// Channels of the decoded image (set once `tRNS` is known).
  var outputChannels: Int
  var bitsPerPixel: Int { bitDepth * fileChannels }

  /// The passes of the image data: one, or the seven of Adam7 (empty passes included).
  var passes: [PNGPass] {
    let layout: [(x: Int, y: Int, xStep: Int, yStep: Int)] =
      isInterlaced
      ? [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]
      : [(0, 0, 1, 1)]
    return layout.map { pass in
      let columns = (width - pass.x + pass.xStep - 1) / pass.xStep
      let rows = (height - pass.y + pass.yStep - 1) / pass.yStep
      let rowBytes = (columns * bitsPerPixel + 7) / 8
      return PNGPass(
        x: pass.x, y: pass.y, xStep: pass.xStep, yStep: pass.yStep, width: columns, height: columns == 0 ? 0 : rows,
        rowBytes: rowBytes)
    }
  }

  /// Bytes of the inflated image data: each non-empty pass row's filter byte and samples.
  var filteredByteCount: Int { passes.reduce(0) { $0 + $1.byteCount } }
}

/// One pass of the image data: the pixels at (`x` + i·`xStep`, `y` + j·`yStep`).
struct PNGPass {
  let x: Int, y: Int, xStep: Int, yStep: Int
  /// Pixels per row and rows of the pass.
  let width: Int, height: Int
  /// Bytes of one row without its filter byte.
  let rowBytes: Int
  var byteCount: Int { height * (rowBytes + 1) }
}

/// The chunks of a PNG file that decoding needs, with their CRCs checked.
struct PNGChunks {
  let header: PNGHeader
  /// Palette colours, three bytes each.
  var palette: [UInt8] = []
  /// Alpha of the first palette entries (the rest are opaque).
  var paletteAlpha: [UInt8] = []
  /// The transparent gray value or RGB colour of a `tRNS` chunk, at the file's bit depth.
  var transparentColor: [UInt16]? = nil
  /// The IDAT chunks' data, concatenated.
  var imageData: [UInt8] = []

  init(_ bytes: UnsafeRawBufferPointer, limits: ImageDecodingLimits) throws(ImageError) {
    func malformed(_ message: String, _ offset: Int?) -> ImageError {
      .malformed(format: "PNG", message: message, offset: offset)
    }
    guard bytes.count >= 8, PNG.signature.indices.allSatisfy({ bytes[$0] == PNG.signature[$0] }) else {
      throw malformed("the file does not start with the PNG signature", 0)
    }
    var offset = 8
    var parsedHeader: PNGHeader? = nil
    var sawImageData = false
    var sawEnd = false
    while !sawEnd {
      guard offset + 8 <= bytes.count else { throw malformed("the file ends before the IEND chunk", bytes.count) }
      let length = Int(readBigEndian32(bytes, offset))
      let type = (0..<4).map { bytes[offset + 4 + $0] }
      let name = String(decoding: type, as: UTF8.self)
      guard type.allSatisfy({ (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) }) else {
        throw malformed("chunk type bytes \(type) are not letters", offset + 4)
      }
      guard length <= 0x7FFF_FFFF, offset + 12 + length <= bytes.count else {
        throw malformed("chunk \(name) of \(length) bytes runs past the end of the file", offset)
      }
      let data = UnsafeRawBufferPointer(rebasing: bytes[(offset + 8)..<(offset + 8 + length)])
      let stored = readBigEndian32(bytes, offset + 8 + length)
      let computed = CRC32.checksum(UnsafeRawBufferPointer(rebasing: bytes[(offset + 4)..<(offset + 8 + length)]))
      guard stored == computed else {
        throw malformed("chunk \(name) has CRC \(hex(stored)), its bytes give \(hex(computed))", offset + 8 + length)
      }
      if parsedHeader == nil && name != "IHDR" { throw malformed("the first chunk is \(name), not IHDR", offset) }
      switch name {
      case "IHDR":
        guard parsedHeader == nil else { throw malformed("a second IHDR chunk", offset) }
        parsedHeader = try Self.parseHeader(data, at: offset, limits: limits)
      case "PLTE":
        guard length % 3 == 0, (3...768).contains(length) else {
          throw malformed("PLTE has \(length) bytes (a multiple of 3, 3–768)", offset)
        }
        guard !sawImageData else { throw malformed("PLTE comes after the image data", offset) }
        palette = Array(data)
      case "tRNS":
        guard !sawImageData else { throw malformed("tRNS comes after the image data", offset) }
        switch parsedHeader!.colorType {
        case 0, 2: transparentColor = try Self.transparentColor(data, at: offset, colorType: parsedHeader!.colorType)
        case 3: paletteAlpha = Array(data)
        default: break  // Images with an alpha channel have no use for tRNS; decoders ignore it.
        }
      case "IDAT":
        sawImageData = true
        imageData.append(contentsOf: data)
      case "IEND": sawEnd = true
      default:
        // Bit 5 of the first letter clear (upper case) marks a chunk a decoder must understand.
        guard type[0] & 0x20 != 0 else {
          throw ImageError.unsupported(format: "PNG", message: "critical chunk \(name) is not part of PNG 1.2")
        }
      }
      offset += 12 + length
    }
    guard var header = parsedHeader else { throw malformed("no IHDR chunk", 8) }
    guard sawImageData else { throw malformed("the file has no IDAT chunk", nil) }
    if header.colorType == 3 {
      guard !palette.isEmpty else { throw malformed("a palette image has no PLTE chunk", nil) }
      guard paletteAlpha.count <= palette.count / 3 else {
        throw malformed("tRNS has \(paletteAlpha.count) entries for a palette of \(palette.count / 3)", nil)
      }
    }
    let hasTransparency = transparentColor != nil || !paletteAlpha.isEmpty
    header.outputChannels = [0: 1, 2: 3, 3: 3, 4: 2, 6: 4][header.colorType]! + (hasTransparency ? 1 : 0)
    self.header = header
  }

  private static func parseHeader(_ data: UnsafeRawBufferPointer, at offset: Int, limits: ImageDecodingLimits)
    throws(ImageError) -> PNGHeader
  {
    guard data.count == 13 else {
      throw ImageError.malformed(format: "PNG", message: "IHDR has \(data.count) bytes, not 13", offset: offset)
    }
    let width = Int(readBigEndian32(data, 0)), height = Int(readBigEndian32(data, 4))
    let bitDepth = Int(data[8]), colorType = Int(data[9])
    guard (1...0x7FFF_FFFF).contains(width), (1...0x7FFF_FFFF).contains(height) else {
      throw ImageError.malformed(format: "PNG", message: "IHDR size \(width)×\(height) is not positive and at most 2^31 − 1", offset: offset)
    }
    let allowedDepths: [Int: [Int]] = [0: [1, 2, 4, 8, 16], 2: [8, 16], 3: [1, 2, 4, 8], 4: [8, 16], 6: [8, 16]]
    guard let depths = allowedDepths[colorType], depths.contains(bitDepth) else {
      throw ImageError.malformed(format: "PNG", message: "colour type \(colorType) with bit depth \(bitDepth) is not allowed", offset: offset)
    }
    guard data[10] == 0, data[11] == 0, data[12] <= 1 else {
      throw ImageError.malformed(
        format: "PNG", message: "compression \(data[10]), filter \(data[11]), interlace \(data[12]) (0, 0 and 0 or 1 exist)",
        offset: offset)
    }
    try limits.check(width: width, height: height)
    let channels = [0: 1, 2: 3, 3: 1, 4: 2, 6: 4][colorType]!
    return PNGHeader(
      width: width, height: height, bitDepth: bitDepth, colorType: colorType, isInterlaced: data[12] == 1,
      fileChannels: channels, outputChannels: channels)
  }

  /// The transparent gray value (colour type 0) or RGB colour (type 2) of a `tRNS` chunk.
  private static func transparentColor(_ data: UnsafeRawBufferPointer, at offset: Int, colorType: Int)
    throws(ImageError) -> [UInt16]
  {
    let count = colorType == 0 ? 1 : 3
    guard data.count == 2 * count else {
      throw ImageError.malformed(
        format: "PNG", message: "tRNS for colour type \(colorType) has \(data.count) bytes, not \(2 * count)", offset: offset)
    }
    return (0..<count).map { UInt16(data[2 * $0]) << 8 | UInt16(data[2 * $0 + 1]) }
  }
}

/// Big-endian 32-bit value at `offset`.
@inline(__always)
func readBigEndian32(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> UInt32 {
  UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 8 | UInt32(bytes[offset + 3])
}

/// Turns unfiltered rows into output samples of type `Sample` (8 or 16 bits).
struct PixelConverter<Sample: FixedWidthInteger & UnsignedInteger> {
  let header: PNGHeader
  /// Output value of each raw sample value 0–255 at the file's depth (depths 1–8).
  let scaled: [Sample]
  /// Palette entries as output samples, `outputChannels` each (alpha appended when present).
  let paletteSamples: [Sample]
  let transparentColor: [UInt16]?
  /// Set when a palette index beyond the palette was seen.
  private let badIndex = BadIndexFlag()

  init(file: PNGChunks) {
    header = file.header
    transparentColor = file.transparentColor
    let depth = header.bitDepth
    let maximum = Int(Sample.max)
    scaled = (0..<256).map { value in
      depth >= 8 ? Sample(truncatingIfNeeded: value * maximum / 255) : Sample(truncatingIfNeeded: min(value, (1 << depth) - 1) * maximum / ((1 << depth) - 1))
    }
    var entries: [Sample] = []
    if header.colorType == 3 {
      let widen = maximum / 255
      for index in 0..<(file.palette.count / 3) {
        for channel in 0..<3 { entries.append(Sample(truncatingIfNeeded: Int(file.palette[3 * index + channel]) * widen)) }
        if header.outputChannels == 4 {
          let alpha = index < file.paletteAlpha.count ? Int(file.paletteAlpha[index]) : 255
          entries.append(Sample(truncatingIfNeeded: alpha * widen))
        }
      }
    }
    paletteSamples = entries
  }

  /// Throws when `convert` met a palette index the palette does not have.
  func checkPaletteIndices() throws(ImageError) {
    if let index = badIndex.index {
      throw ImageError.malformed(format: "PNG", message: "palette index \(index) is past the \(paletteSamples.count / header.outputChannels)-colour palette", offset: nil)
    }
  }

  /// Writes the pixels of `pass` (unfiltered rows, each after its filter byte) into the image.
  func convert(rows: UnsafeMutablePointer<UInt8>, pass: PNGPass, into output: UnsafeMutablePointer<Sample>) {
    let channels = header.outputChannels
    let fileChannels = header.fileChannels
    let depth = header.bitDepth
    let isDirect = depth == 8 && channels == fileChannels && header.colorType != 3 && Sample.bitWidth == 8
      && !header.isInterlaced
    var raw = [UInt16](repeating: 0, count: pass.width * fileChannels)
    for row in 0..<pass.height {
      let line = rows + row * (pass.rowBytes + 1) + 1
      let outputRow = output + ((pass.y + row * pass.yStep) * header.width) * channels
      if isDirect {
        UnsafeMutableRawPointer(outputRow).copyMemory(from: line, byteCount: pass.rowBytes)
        continue
      }
      unpack(line, count: raw.count, depth: depth, into: &raw)
      raw.withUnsafeBufferPointer { raw in
        for column in 0..<pass.width {
          let pixel = outputRow + (pass.x + column * pass.xStep) * channels
          writePixel(raw.baseAddress! + column * fileChannels, to: pixel)
        }
      }
    }
  }

  /// The raw sample values of one row (`count` samples of `depth` bits, most significant first).
  private func unpack(_ line: UnsafeMutablePointer<UInt8>, count: Int, depth: Int, into raw: inout [UInt16]) {
    switch depth {
    case 16: for index in 0..<count { raw[index] = UInt16(line[2 * index]) << 8 | UInt16(line[2 * index + 1]) }
    case 8: for index in 0..<count { raw[index] = UInt16(line[index]) }
    default:
      let perByte = 8 / depth
      let mask = UInt16((1 << depth) - 1)
      for index in 0..<count {
        let shift = 8 - depth * (index % perByte + 1)
        raw[index] = UInt16(line[index / perByte]) >> UInt16(shift) & mask
      }
    }
  }

  @inline(__always)
  private func sample(_ value: UInt16) -> Sample {
    if header.bitDepth == 16 { return Sample(truncatingIfNeeded: Sample.bitWidth == 8 ? value >> 8 : value) }
    return scaled[Int(value)]
  }

  @inline(__always)
  private func writePixel(_ raw: UnsafePointer<UInt16>, to pixel: UnsafeMutablePointer<Sample>) {
    let channels = header.outputChannels
    if header.colorType == 3 {
      let index = Int(raw[0])
      guard (index + 1) * channels <= paletteSamples.count else {
        badIndex.index = index
        for channel in 0..<channels { pixel[channel] = 0 }
        return
      }
      for channel in 0..<channels { pixel[channel] = paletteSamples[index * channels + channel] }
      return
    }
    let fileChannels = header.fileChannels
    for channel in 0..<fileChannels { pixel[channel] = sample(raw[channel]) }
    if let transparentColor {
      let isTransparent = (0..<fileChannels).allSatisfy { raw[$0] == transparentColor[$0] }
      pixel[fileChannels] = isTransparent ? 0 : Sample.max
    }
  }
}

/// Where ``PixelConverter`` notes a palette index out of range (checked after the conversion).
private final class BadIndexFlag {
  var index: Int? = nil
}
