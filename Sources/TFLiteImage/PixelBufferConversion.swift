// Camera and video frame layouts (the CoreVideo pixel formats a CVPixelBuffer holds) converted to
// an `Image` from plain byte buffers and row strides, so the conversion runs and is tested on every
// platform; TensorFlowLiteTaskVision's `MLImage(pixelBuffer:)` only locks the buffer and passes
// its planes here.
//
// - 32BGRA, 32ARGB: RGB (alpha dropped, as the Task Library's GMLImage does for these formats).
// - 24RGB: RGB. OneComponent8: gray.
// - 420YpCbCr8BiPlanar (video or full range): plane 0 holds Y per pixel, plane 1 interleaved Cb, Cr
//   per 2×2 pixels (ceil(width / 2) pairs per row, ceil(height / 2) rows); each pixel takes the
//   chroma of its 2×2 block (no interpolation) and becomes RGB through the BT.601 matrix CoreImage
//   uses: full range R = Y + 1.402 Cr', G = Y − 0.344136 Cb' − 0.714136 Cr', B = Y + 1.772 Cb'; video
//   range first scales Y' = (Y − 16) × 255 / 219 and C' = (C − 128) × 255 / 224 (Cb' = Cb − 128
//   in full range). Computed in Float, rounded to nearest, clamped to 0...255.
//
// Rows may be padded (bytes per row above the pixels' bytes); a plane whose buffer is too short
// for its rows, or a wrong number of planes, throws `ImageError.invalidDimensions`.

/// A pixel layout of a camera or video frame (named after CoreVideo's `kCVPixelFormatType_*`).
public enum PixelBufferFormat: Sendable, Equatable, CaseIterable {
  /// `kCVPixelFormatType_32BGRA`: B, G, R, A bytes per pixel.
  case bgra32
  /// `kCVPixelFormatType_32ARGB`: A, R, G, B bytes per pixel.
  case argb32
  /// `kCVPixelFormatType_24RGB`: R, G, B bytes per pixel.
  case rgb24
  /// `kCVPixelFormatType_OneComponent8`: one gray byte per pixel.
  case gray8
  /// `kCVPixelFormatType_420YpCbCr8BiPlanarVideoRange`: Y plane (16...235) + interleaved CbCr plane (16...240).
  case yCbCr420BiPlanarVideoRange
  /// `kCVPixelFormatType_420YpCbCr8BiPlanarFullRange`: Y plane + interleaved CbCr plane, 0...255.
  case yCbCr420BiPlanarFullRange

  /// How many planes the format has.
  public var planeCount: Int {
    switch self {
    case .yCbCr420BiPlanarVideoRange, .yCbCr420BiPlanarFullRange: return 2
    default: return 1
    }
  }
}

/// One plane of a pixel buffer: its bytes and the distance between the starts of two rows.
public struct PixelBufferPlane {
  /// The plane's bytes, from its first row.
  public let bytes: UnsafeRawBufferPointer
  /// Bytes from one row to the next (at least the bytes of a row's pixels).
  public let bytesPerRow: Int

  /// A plane over `bytes` with rows `bytesPerRow` apart.
  public init(bytes: UnsafeRawBufferPointer, bytesPerRow: Int) {
    self.bytes = bytes
    self.bytesPerRow = bytesPerRow
  }
}

extension Image {
  /// Converts a `width × height` frame in `format` from its `planes` (see the file header): RGB for
  /// the colour formats, gray for `gray8`; throws when the planes do not hold such a frame.
  public init(pixelBufferFormat format: PixelBufferFormat, width: Int, height: Int, planes: [PixelBufferPlane])
    throws(ImageError)
  {
    guard width > 0, height > 0 else { throw ImageError.invalidDimensions("\(width)×\(height) pixel buffer") }
    guard planes.count == format.planeCount else {
      throw ImageError.invalidDimensions("\(format) has \(format.planeCount) plane(s), got \(planes.count)")
    }
    let chromaWidth = (width + 1) / 2, chromaHeight = (height + 1) / 2
    let planeSizes: [(rowBytes: Int, rows: Int)]
    switch format {
    case .bgra32, .argb32: planeSizes = [(width * 4, height)]
    case .rgb24: planeSizes = [(width * 3, height)]
    case .gray8: planeSizes = [(width, height)]
    case .yCbCr420BiPlanarVideoRange, .yCbCr420BiPlanarFullRange:
      planeSizes = [(width, height), (chromaWidth * 2, chromaHeight)]
    }
    for (index, (plane, size)) in zip(planes, planeSizes).enumerated() {
      let (needed, overflow) = plane.bytesPerRow.multipliedReportingOverflow(by: size.rows - 1)
      guard plane.bytesPerRow >= size.rowBytes, !overflow, needed <= plane.bytes.count - size.rowBytes else {
        throw ImageError.invalidDimensions(
          "plane \(index) of a \(width)×\(height) \(format) frame needs \(size.rows) rows of \(size.rowBytes) bytes, "
            + "got \(plane.bytes.count) bytes with \(plane.bytesPerRow) per row")
      }
    }
    let channels = format == .gray8 ? 1 : 3
    let pixels = [UInt8](unsafeUninitializedCapacity: width * height * channels) { output, initialized in
      for y in 0..<height {
        let row = planes[0].bytes.baseAddress! + y * planes[0].bytesPerRow
        let out = output.baseAddress! + y * width * channels
        switch format {
        case .gray8, .rgb24:
          out.update(from: row.assumingMemoryBound(to: UInt8.self), count: width * channels)
        case .bgra32, .argb32:
          Self.copyFourByteRow(row, into: out, width: width, redGreenBlueOffsets: format == .bgra32 ? (2, 1, 0) : (1, 2, 3))
        case .yCbCr420BiPlanarVideoRange, .yCbCr420BiPlanarFullRange:
          let chroma = planes[1].bytes.baseAddress! + (y / 2) * planes[1].bytesPerRow
          Self.convertYCbCrRow(
            luma: row, chroma: chroma, into: out, width: width, isVideoRange: format == .yCbCr420BiPlanarVideoRange)
        }
      }
      initialized = width * height * channels
    }
    try self.init(width: width, height: height, channels: channels, pixels: pixels)
  }

  /// Copies the R, G, B bytes (at `redGreenBlueOffsets` within each 4-byte pixel) of one row.
  private static func copyFourByteRow(
    _ row: UnsafeRawPointer, into out: UnsafeMutablePointer<UInt8>, width: Int,
    redGreenBlueOffsets offsets: (Int, Int, Int)
  ) {
    let input = row.assumingMemoryBound(to: UInt8.self)
    for x in 0..<width {
      out[3 * x] = input[4 * x + offsets.0]
      out[3 * x + 1] = input[4 * x + offsets.1]
      out[3 * x + 2] = input[4 * x + offsets.2]
    }
  }

  /// One row of BT.601 YCbCr 4:2:0 (interleaved CbCr, one pair per two pixels) to RGB.
  private static func convertYCbCrRow(
    luma: UnsafeRawPointer, chroma: UnsafeRawPointer, into out: UnsafeMutablePointer<UInt8>, width: Int,
    isVideoRange: Bool
  ) {
    let lumaBytes = luma.assumingMemoryBound(to: UInt8.self)
    let chromaBytes = chroma.assumingMemoryBound(to: UInt8.self)
    let (lumaOffset, lumaScale, chromaScale): (Float, Float, Float) =
      isVideoRange ? (16, 255 / 219, 255 / 224) : (0, 1, 1)
    @inline(__always) func clamped(_ value: Float) -> UInt8 {
      let rounded = (value + 0.5).rounded(.down)
      return rounded <= 0 ? 0 : rounded >= 255 ? 255 : UInt8(rounded)
    }
    for x in 0..<width {
      let yValue = (Float(lumaBytes[x]) - lumaOffset) * lumaScale
      let cb = (Float(chromaBytes[(x / 2) * 2]) - 128) * chromaScale
      let cr = (Float(chromaBytes[(x / 2) * 2 + 1]) - 128) * chromaScale
      out[3 * x] = clamped(yValue + 1.402 * cr)
      out[3 * x + 1] = clamped(yValue - 0.344136 * cb - 0.714136 * cr)
      out[3 * x + 2] = clamped(yValue + 1.772 * cb)
    }
  }
}
