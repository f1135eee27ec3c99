// Image(pixelBufferFormat:width:height:planes:) on synthetic frames: the byte layouts of CoreVideo's
// formats with padded rows, and BT.601 YCbCr 4:2:0 against the forward transform (RGB → YCbCr as
// BT.601 defines it, rounded), which the conversion must invert to within rounding.
import TFLiteImage
import Testing

@Suite struct PixelBufferConversionTests {
  /// Converts the frame whose planes hold `planes` (each with its bytes per row).
  func convert(
    _ format: PixelBufferFormat, width: Int, height: Int, planes: [(bytes: [UInt8], bytesPerRow: Int)]
  ) throws -> Image {
    try planes.flatMap(\.bytes).withUnsafeBytes { joined in
      var start = 0
      var views: [PixelBufferPlane] = []
      for plane in planes {
        let bytes = UnsafeRawBufferPointer(rebasing: joined[start..<(start + plane.bytes.count)])
        views.append(PixelBufferPlane(bytes: bytes, bytesPerRow: plane.bytesPerRow))
        start += plane.bytes.count
      }
      return try Image(pixelBufferFormat: format, width: width, height: height, planes: views)
    }
  }

  /// `rows` of `rowBytes`, each followed by `padding` bytes of 0xEE.
  func padded(_ rows: [[UInt8]], padding: Int) -> [UInt8] {
    rows.flatMap { $0 + [UInt8](repeating: 0xEE, count: padding) }
  }

  @Test func fourByteFormatsDropAlphaAndPadding() throws {
    let pixels: [[UInt8]] = [[10, 20, 30], [40, 50, 60], [70, 80, 90], [100, 110, 120], [130, 140, 150], [160, 170, 180]]
    let bgra = padded([pixels[0..<3].flatMap { [$0[2], $0[1], $0[0], 255] }, pixels[3..<6].flatMap { [$0[2], $0[1], $0[0], 7] }], padding: 8)
    let argb = padded([pixels[0..<3].flatMap { [255, $0[0], $0[1], $0[2]] }, pixels[3..<6].flatMap { [7, $0[0], $0[1], $0[2]] }], padding: 4)
    for (format, bytes, stride) in [(PixelBufferFormat.bgra32, bgra, 20), (.argb32, argb, 16)] {
      let image = try convert(format, width: 3, height: 2, planes: [(bytes, stride)])
      #expect(image.channels == 3)
      #expect(image.pixels == pixels.flatMap { $0 }, "\(format)")
    }
  }

  @Test func rgbAndGrayKeepTheirBytes() throws {
    let rgb = try convert(.rgb24, width: 2, height: 2, planes: [(padded([[1, 2, 3, 4, 5, 6], [7, 8, 9, 10, 11, 12]], padding: 2), 8)])
    #expect(rgb.channels == 3 && rgb.pixels == Array(1...12))
    let gray = try convert(.gray8, width: 3, height: 2, planes: [(padded([[1, 2, 3], [4, 5, 6]], padding: 1), 4)])
    #expect(gray.channels == 1 && gray.pixels == Array(1...6))
  }

  /// BT.601 RGB → (Y, Cb, Cr), full or video range, rounded to bytes.
  func forward(_ rgb: [Double], videoRange: Bool) -> (UInt8, UInt8, UInt8) {
    let (r, g, b) = (rgb[0], rgb[1], rgb[2])
    let y = 0.299 * r + 0.587 * g + 0.114 * b
    let cb = (b - y) / 1.772
    let cr = (r - y) / 1.402
    func byte(_ value: Double) -> UInt8 { UInt8(max(0, min(255, value.rounded()))) }
    return videoRange
      ? (byte(16 + y * 219 / 255), byte(128 + cb * 224 / 255), byte(128 + cr * 224 / 255))
      : (byte(y), byte(128 + cb), byte(128 + cr))
  }

  @Test func biPlanarYCbCrInvertsBT601() throws {
    let colors: [[Double]] = [[255, 0, 0], [0, 255, 0], [0, 0, 255], [255, 255, 255], [0, 0, 0], [200, 120, 40], [30, 90, 160], [128, 128, 128]]
    for videoRange in [false, true] {
      // One colour per 2×2 block: a 2-pixel-high strip, 2 × colours wide, rows padded.
      let width = 2 * colors.count
      let encoded = colors.map { forward($0, videoRange: videoRange) }
      let lumaRow = encoded.flatMap { [$0.0, $0.0] }
      let chromaRow = encoded.flatMap { [$0.1, $0.2] }
      let image = try convert(
        videoRange ? .yCbCr420BiPlanarVideoRange : .yCbCr420BiPlanarFullRange, width: width, height: 2,
        planes: [(padded([lumaRow, lumaRow], padding: 3), width + 3), (padded([chromaRow], padding: 5), width + 5)])
      for (index, color) in colors.enumerated() {
        for (x, y) in [(2 * index, 0), (2 * index + 1, 1)] {
          let pixel = image.pixels[(y * width + x) * 3..<(y * width + x) * 3 + 3].map(Double.init)
          let error = zip(pixel, color).map { abs($0 - $1) }.max()!
          #expect(error <= 3, "range \(videoRange ? "video" : "full"): \(color) came back as \(pixel)")
        }
      }
    }
    // The range ends map exactly: video-range black (16) and white (235), full-range 0 and 255.
    let video = try convert(.yCbCr420BiPlanarVideoRange, width: 2, height: 1, planes: [([16, 235], 2), ([128, 128], 2)])
    #expect(video.pixels == [0, 0, 0, 255, 255, 255])
    let full = try convert(.yCbCr420BiPlanarFullRange, width: 2, height: 1, planes: [([0, 255], 2), ([128, 128], 2)])
    #expect(full.pixels == [0, 0, 0, 255, 255, 255])
  }

  @Test func oddSizesShareTheChromaOfTheirBlock() throws {
    // 3×3 pixels: chroma 2×2; only block (1, 1) (pixel 2, 2) has a red difference.
    let luma: [UInt8] = Array(repeating: 100, count: 9)
    let chroma: [UInt8] = [128, 128, 128, 128, 128, 128, 128, 228]
    let image = try convert(.yCbCr420BiPlanarFullRange, width: 3, height: 3, planes: [(luma, 3), (chroma, 4)])
    let reds = stride(from: 0, to: 27, by: 3).map { image.pixels[$0] }
    #expect(reds == [100, 100, 100, 100, 100, 100, 100, 100, 240])  // 100 + 1.402 × 100 = 240.2
  }

  @Test func badPlanesThrow() {
    let bytes = [UInt8](repeating: 0, count: 64)
    let cases: [(PixelBufferFormat, Int, Int, [(bytes: [UInt8], bytesPerRow: Int)], String)] = [
      (.bgra32, 4, 4, [(bytes, 12)], "per row"),
      (.bgra32, 4, 5, [(bytes, 16)], "needs 5 rows"),
      (.yCbCr420BiPlanarFullRange, 4, 4, [(bytes, 4)], "2 plane(s), got 1"),
      (.gray8, 2, 2, [(bytes, 2), (bytes, 2)], "1 plane(s), got 2"),
      (.yCbCr420BiPlanarVideoRange, 8, 8, [(bytes, 8), ([0, 0], 8)], "plane 1"),
      (.gray8, 0, 2, [(bytes, 2)], "0×2"),
    ]
    for (format, width, height, planes, message) in cases {
      #expect {
        _ = try convert(format, width: width, height: height, planes: planes)
      } throws: { error in
        "\(error)".contains(message)
      }
    }
  }
}
