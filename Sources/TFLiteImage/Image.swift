/// An 8-bit image in memory: `height` rows of `width` pixels, top row first, each pixel
/// `channels` interleaved samples (1 gray, 2 gray + alpha, 3 RGB, 4 RGBA).
public struct Image: Sendable, Equatable {
  /// Pixels per row.
  public let width: Int
  /// Rows.
  public let height: Int
  /// Samples per pixel: 1 (gray), 2 (gray + alpha), 3 (RGB) or 4 (RGBA).
  public let channels: Int
  /// `height × width × channels` samples, row by row.
  public var pixels: [UInt8]

  /// An image over `pixels`; throws when the dimensions are not positive, `channels` is not
  /// 1–4, or the sample count is not `width × height × channels`.
  public init(width: Int, height: Int, channels: Int, pixels: [UInt8]) throws(ImageError) {
    _ = try Self.validatedSampleCount(width: width, height: height, channels: channels, count: pixels.count)
    self.width = width
    self.height = height
    self.channels = channels
    self.pixels = pixels
  }
}

/// An image whose samples are not 8-bit (``FloatImage``, ``SixteenBitImage``), laid out like
/// ``Image``: `height` rows of `width` pixels, each `channels` interleaved samples.
public struct SampleImage<Sample: Sendable & Equatable>: Sendable, Equatable {
  /// Pixels per row.
  public let width: Int
  /// Rows.
  public let height: Int
  /// Samples per pixel (1–4, as in ``Image``).
  public let channels: Int
  /// `height × width × channels` samples, row by row.
  public var samples: [Sample]

  /// An image over `samples`; throws when the sizes do not match as in ``Image/init(width:height:channels:pixels:)``.
  public init(width: Int, height: Int, channels: Int, samples: [Sample]) throws(ImageError) {
    _ = try Image.validatedSampleCount(width: width, height: height, channels: channels, count: samples.count)
    self.width = width
    self.height = height
    self.channels = channels
    self.samples = samples
  }
}

extension Image {
  /// `width × height × channels`; throws when the dimensions are not positive, `channels` is not
  /// 1–4, or `count` is not that product.
  static func validatedSampleCount(width: Int, height: Int, channels: Int, count: Int) throws(ImageError) -> Int {
    guard width > 0, height > 0 else {
      throw ImageError.invalidDimensions("\(width)×\(height) is not a positive size")
    }
    guard (1...4).contains(channels) else {
      throw ImageError.invalidDimensions("\(channels) channels (expected 1, 2, 3 or 4)")
    }
    let (area, areaOverflow) = width.multipliedReportingOverflow(by: height)
    let (expected, countOverflow) = area.multipliedReportingOverflow(by: channels)
    guard !areaOverflow, !countOverflow, expected == count else {
      throw ImageError.invalidDimensions(
        "\(width)×\(height)×\(channels) needs \(areaOverflow || countOverflow ? "more than Int.max" : String(expected)) samples, got \(count)")
    }
    return count
  }
}

/// Why an image could not be made, decoded or encoded.
public enum ImageError: Error, Equatable, Sendable, CustomStringConvertible {
  /// Sizes or channel counts that do not describe an image.
  case invalidDimensions(String)
  /// Bytes that break the rules of their format: `format` names it ("PNG", "JPEG", ...),
  /// `offset` is the byte position where the problem was found, when known.
  case malformed(format: String, message: String, offset: Int?)
  /// A valid file using a feature this library does not decode (for example arithmetic-coded JPEG).
  case unsupported(format: String, message: String)
  /// The image has more pixels than `ImageDecodingLimits.maximumPixelCount` allows.
  case tooLarge(width: Int, height: Int, limit: Int)
  /// The bytes are not in any format this library reads.
  case unknownFormat

  /// A sentence naming the problem.
  public var description: String {
    switch self {
    case .invalidDimensions(let message): return "invalid image dimensions: \(message)"
    case .malformed(let format, let message, let offset):
      return "malformed \(format): \(message)" + (offset.map { " (at byte \($0))" } ?? "")
    case .unsupported(let format, let message): return "unsupported \(format): \(message)"
    case .tooLarge(let width, let height, let limit):
      return "image of \(width)×\(height) pixels exceeds the limit of \(limit) pixels"
    case .unknownFormat: return "not a PNG, JPEG, BMP or PPM image"
    }
  }
}

/// Limits a decoder enforces before allocating, so a small hostile file cannot claim a huge image.
public struct ImageDecodingLimits: Sendable, Equatable {
  /// The largest `width × height` a decoder accepts (default 100 million pixels).
  public var maximumPixelCount: Int

  /// Limits with the given pixel-count cap.
  public init(maximumPixelCount: Int = 100_000_000) {
    self.maximumPixelCount = maximumPixelCount
  }

  /// Throws `ImageError.tooLarge` when a `width × height` image exceeds the limit.
  public func check(width: Int, height: Int) throws(ImageError) {
    let (area, overflow) = width.multipliedReportingOverflow(by: height)
    if overflow || area > maximumPixelCount {
      throw ImageError.tooLarge(width: width, height: height, limit: maximumPixelCount)
    }
  }
}
