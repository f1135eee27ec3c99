// JPEG decoding (ITU T.81 / JFIF / Adobe APP14 / EXIF), written to give the same pixels as
// Pillow, which decodes with libjpeg-turbo's defaults: integer "islow" IDCT (JPEGIDCT.swift),
// fancy (triangle-filter) chroma upsampling rather than merged upsampling, and libjpeg's
// fixed-point YCbCr→RGB tables (JPEGColor.swift).
//
// Decoded: baseline and extended sequential (SOF0, SOF1) and progressive (SOF2) Huffman-coded
// 8-bit frames with 1 (gray), 3 (YCbCr or RGB) or 4 (CMYK or YCCK) components, any sampling
// factors 1–4 that divide the largest ones, restart intervals. Refused with
// `ImageError.unsupported`: arithmetic coding, lossless and hierarchical frames, 12/16-bit
// samples, heights given by DNL. Progressive scans must come in a valid order (each scan
// refines exactly the bits the previous scans left: T.81 G.1.1.1.2); libjpeg only warns about
// a bad order, this decoder throws.
//
// The colour space is chosen as libjpeg chooses it (a JFIF APP0 means YCbCr; otherwise an Adobe
// APP14 transform flag; otherwise component identifiers 'R','G','B' mean RGB). Output is gray
// (1 channel) for one component and RGB (3 channels) otherwise; CMYK is converted to RGB as
// Pillow's `convert("RGB")` does on the image it decodes (Adobe-inverted CMYK).
//
// Structure: `JPEGDecoder.decode` walks the markers; `JPEGDecoding` holds the tables, the output
// and the coefficients of a progressive frame; scans are decoded in JPEGScan.swift and their
// samples turned into pixels by `JPEGPixelWriter` (JPEGColor.swift); orientation (EXIF tag 0x0112)
// is applied by JPEGOrientation.swift unless the options keep the stored orientation.
//
// Memory: the output is allocated once the frame header is read and written in place. A
// sequential frame whose first scan holds every component (the usual baseline file) is converted
// while it is decoded: each row of MCUs goes into a ring of three MCU rows per component (the rows
// fancy upsampling needs above and below), and the output rows of the MCU row before it are
// written. Sequential frames with one scan per component keep whole sample planes until the end.
// Progressive frames keep every coefficient (2 bytes per sample) until the last scan, then run the
// inverse DCT one MCU row at a time into the same kind of ring.

/// How to decode a JPEG.
public struct JPEGDecodingOptions: Sendable, Equatable {
  /// Limits checked before any pixel memory is allocated.
  public var limits: ImageDecodingLimits
  /// Whether to rotate/flip the pixels as the EXIF orientation tag says (as Pillow's
  /// `ImageOps.exif_transpose` does); `false` keeps the stored orientation.
  public var appliesOrientation: Bool

  /// Options with the default limits that apply the EXIF orientation.
  public init(limits: ImageDecodingLimits = ImageDecodingLimits(), appliesOrientation: Bool = true) {
    self.limits = limits
    self.appliesOrientation = appliesOrientation
  }
}

/// A hand-written JPEG decoder; see `decode(_:options:)`.
public enum JPEGDecoder {
  /// Whether `bytes` start with the JPEG start-of-image marker followed by another marker.
  public static func isJPEG(_ bytes: [UInt8]) -> Bool {
    bytes.count >= 3 && bytes[0] == 0xFF && bytes[1] == 0xD8 && bytes[2] == 0xFF
  }

  /// Decodes a JPEG file to 8-bit gray (1 channel) or RGB (3 channels) pixels; throws an
  /// `ImageError` naming the problem for malformed, truncated, unsupported or too large files.
  public static func decode(_ bytes: [UInt8], options: JPEGDecodingOptions = JPEGDecodingOptions()) throws(ImageError)
    -> Image
  {
    let decoded: (image: Image, orientation: Int)
    do {
      decoded = try bytes.withUnsafeBufferPointer { buffer in
        let decoding = JPEGDecoding(bytes: buffer, limits: options.limits)
        return try decoding.run()
      }
    } catch let error as ImageError {
      throw error
    } catch {
      throw ImageError.malformed(format: "JPEG", message: "\(error)", offset: nil)
    }
    guard options.appliesOrientation else { return decoded.image }
    return decoded.image.applyingEXIFOrientation(decoded.orientation)
  }
}

extension Image {
  /// Decodes a JPEG file (see `JPEGDecoder.decode`).
  public init(jpeg bytes: [UInt8], options: JPEGDecodingOptions = JPEGDecodingOptions()) throws(ImageError) {
    self = try JPEGDecoder.decode(bytes, options: options)
  }
}

/// The natural (row-major) index of each zig-zag position of a block.
let jpegZigZagToNatural: [Int] = [
  0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5, 12, 19, 26, 33, 40, 48, 41, 34, 27, 20, 13, 6, 7, 14, 21,
  28, 35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51, 58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61,
  54, 47, 55, 62, 63,
]

/// The state of one decode: tables, frame, sample planes and progressive coefficients.
final class JPEGDecoding {
  /// The whole file.
  let bytes: UnsafeBufferPointer<UInt8>
  /// The pixel-count limit.
  let limits: ImageDecodingLimits
  /// Quantization tables in natural order, by table number.
  var quantizationTables: [[Int32]?] = [nil, nil, nil, nil]
  /// DC Huffman tables by table number.
  var dcTables: [JPEGHuffmanTable?] = [nil, nil, nil, nil]
  /// AC Huffman tables by table number.
  var acTables: [JPEGHuffmanTable?] = [nil, nil, nil, nil]
  /// MCUs between restart markers (0: none).
  var restartInterval = 0
  /// The frame, once its SOF has been read.
  var frame: JPEGFrame?
  /// The output pixels (`width × height × channels`), while the data after the frame header is read.
  var output: UnsafeMutablePointer<UInt8>?
  /// Where decoded samples go and how they become pixels; made by the first scan (sequential) or
  /// after the last one (progressive).
  var writer: JPEGPixelWriter?
  /// Progressive frames: the coefficients of every block per component, 64 per block in natural order.
  var coefficients: [UnsafeMutableBufferPointer<Int16>] = []
  /// Progressive frames: per component and coefficient, the lowest bit decoded so far (-1: none).
  var decodedBits: [[Int8]] = []
  /// Whether each component has appeared in a scan.
  var componentScanned: [Bool] = []
  /// Whether a JFIF APP0 came before the first scan.
  var sawJFIF = false
  /// The Adobe APP14 transform flag, if such a segment came before the first scan.
  var adobeTransform: Int?
  /// The EXIF orientation (1...8; 1 when absent).
  var orientation = 1
  /// Whether a scan has been read (later APPn segments do not change the header's meaning).
  var sawScan = false

  init(bytes: UnsafeBufferPointer<UInt8>, limits: ImageDecodingLimits) {
    self.bytes = bytes
    self.limits = limits
  }

  deinit {
    for block in coefficients { block.deallocate() }
  }

  func malformed(_ message: String, at offset: Int?) -> ImageError {
    .malformed(format: "JPEG", message: message, offset: offset)
  }

  /// Reads the two bytes at `position` as a big-endian number.
  func readUInt16(at position: Int) throws(ImageError) -> Int {
    guard position + 2 <= bytes.count else { throw malformed("file ends inside a segment", at: position) }
    return Int(bytes[position]) << 8 | Int(bytes[position + 1])
  }

  /// Walks the markers from SOI to EOI and returns the decoded image and its EXIF orientation.
  func run() throws(ImageError) -> (image: Image, orientation: Int) {
    guard bytes.count >= 2, bytes[0] == 0xFF, bytes[1] == 0xD8 else {
      throw malformed("no start-of-image marker", at: 0)
    }
    let afterFrame = try readSegments(from: 2, stoppingAfterFrame: true)
    guard let frame else { throw malformed("no frame header", at: nil) }
    let channels = frame.components.count == 1 ? 1 : 3
    let sampleCount = frame.width * frame.height * channels
    var failure: ImageError?
    let pixels = [UInt8](unsafeUninitializedCapacity: sampleCount) { buffer, initialized in
      output = buffer.baseAddress
      defer {
        output = nil
        writer = nil
      }
      do throws(ImageError) {
        _ = try readSegments(from: afterFrame, stoppingAfterFrame: false)
        initialized = sampleCount
      } catch {
        failure = error
      }
    }
    if let failure { throw failure }
    return (try Image(width: frame.width, height: frame.height, channels: channels, pixels: pixels), orientation)
  }

  /// Reads segments from `start`: up to and including the frame header (returning the position
  /// after it) or, after it, up to EOI, where the image is finished.
  func readSegments(from start: Int, stoppingAfterFrame: Bool) throws(ImageError) -> Int {
    var position = start
    var afterScan = false
    while true {
      let (marker, markerOffset) = try nextMarker(from: position, skippingGarbage: afterScan)
      position = markerOffset + 2
      afterScan = false
      switch marker {
      case 0xD9:  // EOI
        guard !stoppingAfterFrame else { throw malformed("end of image before any frame", at: nil) }
        try finish()
        return position
      case 0xD0...0xD7:
        throw malformed("restart marker outside a scan", at: markerOffset)
      case 0x01:  // TEM has no length
        continue
      default:
        break
      }
      let length = try readUInt16(at: position)
      guard length >= 2, position + length <= bytes.count else {
        throw malformed("segment length \(length) runs past the end of the file", at: position)
      }
      let body = position + 2
      let segment = UnsafeBufferPointer(rebasing: bytes[body..<(position + length)])
      position += length
      switch marker {
      case 0xC0, 0xC1, 0xC2:
        guard frame == nil else { throw malformed("second frame header", at: markerOffset) }
        try startFrame(JPEGFrame(segment: ArraySlice(segment), isProgressive: marker == 0xC2, limits: limits, offset: body))
        if stoppingAfterFrame { return position }
      case 0xC3, 0xC5, 0xC6, 0xC7:
        throw ImageError.unsupported(format: "JPEG", message: "lossless or hierarchical frame (SOF\(marker - 0xC0))")
      case 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF, 0xCC:
        throw ImageError.unsupported(format: "JPEG", message: "arithmetic coding")
      case 0xC4:
        try readHuffmanTables(segment, offset: body)
      case 0xDB:
        try readQuantizationTables(segment, offset: body)
      case 0xDD:
        guard segment.count == 2 else { throw malformed("restart interval segment of \(segment.count) bytes", at: body) }
        restartInterval = Int(segment[0]) << 8 | Int(segment[1])
      case 0xDA:
        position = try decodeScan(header: segment, headerOffset: body, dataStart: position)
        sawScan = true
        afterScan = true
      case 0xDC:
        throw ImageError.unsupported(format: "JPEG", message: "DNL marker")
      case 0xE0 where !sawScan:
        sawJFIF = sawJFIF || (segment.count >= 14 && segment.starts(with: [0x4A, 0x46, 0x49, 0x46, 0x00]))
      case 0xE1 where !sawScan:
        if orientation == 1, segment.count > 6, segment.starts(with: [0x45, 0x78, 0x69, 0x66, 0x00, 0x00]) {
          orientation = exifOrientation(tiff: UnsafeBufferPointer(rebasing: segment[6...]))
        }
      case 0xEE where !sawScan:
        if segment.count >= 12, segment.starts(with: [0x41, 0x64, 0x6F, 0x62, 0x65]) {
          adobeTransform = Int(segment[11])
        }
      default:
        break  // other APPn, COM and segments this decoder does not need
      }
    }
  }

  /// Finds the marker at `position` (after any 0xFF fill bytes). After a scan, bytes before
  /// the marker are skipped as libjpeg skips them; elsewhere a marker must follow directly.
  func nextMarker(from start: Int, skippingGarbage: Bool) throws(ImageError) -> (marker: UInt8, offset: Int) {
    var position = start
    while true {
      guard position + 1 < bytes.count else {
        throw malformed("file ends before the end-of-image marker", at: position)
      }
      if bytes[position] == 0xFF {
        let next = bytes[position + 1]
        if next == 0xFF {
          position += 1
          continue
        }
        if next != 0x00 { return (next, position) }
      }
      guard skippingGarbage else {
        throw malformed("expected a marker, found byte \(bytes[position])", at: position)
      }
      position += 1
    }
  }

  /// Records `newFrame` and, for a progressive frame, allocates its coefficient buffers.
  func startFrame(_ newFrame: JPEGFrame) throws(ImageError) {
    frame = newFrame
    componentScanned = Array(repeating: false, count: newFrame.components.count)
    guard newFrame.isProgressive else { return }
    for component in newFrame.components {
      let buffer = UnsafeMutableBufferPointer<Int16>.allocate(capacity: component.paddedBlocksPerRow * component.paddedBlockRows * 64)
      buffer.initialize(repeating: 0)
      coefficients.append(buffer)
      decodedBits.append(Array(repeating: -1, count: 64))
    }
  }

  /// Reads a DHT segment (one or more tables).
  func readHuffmanTables(_ segment: UnsafeBufferPointer<UInt8>, offset: Int) throws(ImageError) {
    var position = 0
    while position < segment.count {
      guard position + 17 <= segment.count else { throw malformed("Huffman table header cut short", at: offset + position) }
      let tableClass = Int(segment[position] >> 4)
      let tableNumber = Int(segment[position] & 15)
      guard tableClass <= 1, tableNumber < 4 else {
        throw malformed("Huffman table class \(tableClass) number \(tableNumber)", at: offset + position)
      }
      let counts = (1...16).map { Int(segment[position + $0]) }
      let symbolCount = counts.reduce(0, +)
      guard symbolCount <= 256 else {
        throw malformed("Huffman table of \(symbolCount) codes (at most 256)", at: offset + position)
      }
      let symbolStart = position + 17
      guard symbolStart + symbolCount <= segment.count else {
        throw malformed("Huffman table symbols cut short", at: offset + position)
      }
      let table = try JPEGHuffmanTable(
        counts: counts, symbols: Array(segment[symbolStart..<(symbolStart + symbolCount)]), isDC: tableClass == 0,
        offset: offset + position)
      if tableClass == 0 { dcTables[tableNumber] = table } else { acTables[tableNumber] = table }
      position = symbolStart + symbolCount
    }
  }

  /// Reads a DQT segment (one or more 8- or 16-bit tables, stored zig-zag).
  func readQuantizationTables(_ segment: UnsafeBufferPointer<UInt8>, offset: Int) throws(ImageError) {
    var position = 0
    while position < segment.count {
      let precision = Int(segment[position] >> 4)
      let tableNumber = Int(segment[position] & 15)
      guard precision <= 1, tableNumber < 4 else {
        throw malformed("quantization table precision \(precision) number \(tableNumber)", at: offset + position)
      }
      let entryBytes = precision + 1
      guard position + 1 + 64 * entryBytes <= segment.count else {
        throw malformed("quantization table cut short", at: offset + position)
      }
      var table = [Int32](repeating: 0, count: 64)
      for zigZagIndex in 0..<64 {
        let entry = position + 1 + zigZagIndex * entryBytes
        let value = precision == 0 ? Int32(segment[entry]) : Int32(segment[entry]) << 8 | Int32(segment[entry + 1])
        table[jpegZigZagToNatural[zigZagIndex]] = value
      }
      quantizationTables[tableNumber] = table
      position += 1 + 64 * entryBytes
    }
  }

  /// After EOI: checks every component was decoded, inverse-transforms a progressive frame's
  /// coefficients one MCU row at a time, and writes the output rows not written yet.
  func finish() throws(ImageError) {
    guard let frame else { throw malformed("end of image before any frame", at: nil) }
    if let missing = componentScanned.firstIndex(of: false) {
      throw malformed("component \(frame.components[missing].identifier) appears in no scan", at: nil)
    }
    if frame.isProgressive {
      let writer = try makeWriter(frame: frame, streaming: true)
      let tables = try frame.components.map { component throws(ImageError) in
        guard let table = quantizationTables[component.quantizationTable] else {
          throw malformed("quantization table \(component.quantizationTable) is not defined", at: nil)
        }
        return table
      }
      for unit in 0..<writer.unitCount {
        for (index, component) in frame.components.enumerated() {
          let blockRowsPerUnit = writer.unitSampleRows[index] / 8
          let blocks = coefficients[index].baseAddress!
          let rows = writer.samples[index]
          tables[index].withUnsafeBufferPointer { table in
            let firstBlockRow = unit * blockRowsPerUnit
            let endBlockRow = max(firstBlockRow, min(firstBlockRow + blockRowsPerUnit, component.blockRows))
            for blockRow in firstBlockRow..<endBlockRow {
              let outputRow = rows.row(blockRow * 8)
              for blockColumn in 0..<component.blocksPerRow {
                inverseDCT(
                  coefficients: blocks + (blockRow * component.paddedBlocksPerRow + blockColumn) * 64,
                  quantization: table.baseAddress!, output: outputRow + blockColumn * 8, stride: rows.stride)
              }
            }
          }
        }
        writer.samplesDecoded(throughUnit: unit)
      }
    }
    writer?.writeRemainingRows()
  }

  /// The writer for `frame` into `output`: with rings of three units of sample rows per component
  /// when `streaming`, whole planes otherwise.
  func makeWriter(frame: JPEGFrame, streaming: Bool) throws(ImageError) -> JPEGPixelWriter {
    guard let output else { throw malformed("image data outside the decode", at: nil) }
    let made = JPEGPixelWriter(frame: frame, colorSpace: colorSpace(of: frame), output: output, streaming: streaming)
    writer = made
    return made
  }
}
