// Turning an image into a model input: channel order and gray conversion, fitting to the input
// size (stretch, centre crop, letterbox), normalization (x − mean) / std per channel, and writing
// the samples straight into a caller's buffer (an interpreter's input tensor) as Float32 or as
// quantized uint8/int8 with the tensor's scale and zero point, rounded as TFLite's QUANTIZE
// reference kernel does: round(x / scale) half away from zero, plus the zero point, clamped.
// Gray conversion uses ITU-R 601-2 luma in Pillow's fixed point:
// (R·19595 + G·38470 + B·7471 + 32768) >> 16, so it equals Pillow's `convert("L")`.

/// How an image is brought to a model's input size.
public enum ImageFit: Sendable, Equatable {
  /// Scale each axis independently to the target size (aspect ratio not kept).
  case stretch
  /// Crop the largest centred rectangle of the target's aspect ratio, then scale it.
  case centerCrop
  /// Scale to fit inside the target keeping the aspect ratio, centre it, and fill the rest with `fill`.
  case letterbox(fill: Float)
}

/// The element type of the tensor an image is written into.
public enum TensorEncoding: Sendable, Equatable {
  /// Float32 samples as they are.
  case float32
  /// uint8: round(x / scale) + zeroPoint, clamped to 0…255.
  case uint8(scale: Float, zeroPoint: Int)
  /// int8: round(x / scale) + zeroPoint, clamped to −128…127.
  case int8(scale: Float, zeroPoint: Int)

  /// Bytes per sample.
  public var byteCount: Int {
    if case .float32 = self { return 4 }
    return 1
  }
}

extension Image {
  /// The image with the order of its first three channels reversed (RGB ↔ BGR; alpha stays last).
  public func swappingRedAndBlue() throws(ImageError) -> Image {
    guard channels >= 3 else { throw ImageError.invalidDimensions("\(channels) channels have no red and blue") }
    var swapped = pixels
    for pixel in stride(from: 0, to: pixels.count, by: channels) { swapped.swapAt(pixel, pixel + 2) }
    return try Image(width: width, height: height, channels: channels, pixels: swapped)
  }

  /// One gray channel: gray images unchanged (alpha dropped), colour images by Pillow's luma.
  public func grayscale() throws(ImageError) -> Image {
    let gray: [UInt8] = (0..<(width * height)).map { pixel in
      let base = pixel * channels
      guard channels >= 3 else { return pixels[base] }
      let luma = UInt32(pixels[base]) * 19595 + UInt32(pixels[base + 1]) * 38470 + UInt32(pixels[base + 2]) * 7471 + 32768
      return UInt8(luma >> 16)
    }
    return try Image(width: width, height: height, channels: 1, pixels: gray)
  }

  /// The image brought to `width × height` by `fit` (bilinear sampling as ``resizedBilinear(width:height:)``).
  public func fitted(width: Int, height: Int, fit: ImageFit) throws(ImageError) -> FloatImage {
    switch fit {
    case .stretch:
      return try resizedBilinear(width: width, height: height)
    case .centerCrop:
      // The widest crop with the target's aspect ratio: compare width/height ratios in integers.
      let cropWidth = min(self.width, (self.height * width) / height)
      let cropHeight = min(self.height, (self.width * height) / width)
      let kept = try cropped(
        x: (self.width - max(cropWidth, 1)) / 2, y: (self.height - max(cropHeight, 1)) / 2, width: max(cropWidth, 1),
        height: max(cropHeight, 1))
      return try kept.resizedBilinear(width: width, height: height)
    case .letterbox(let fill):
      let scaledWidth: Int, scaledHeight: Int
      if self.width * height >= self.height * width {
        scaledWidth = width
        scaledHeight = max(1, (self.height * width + self.width / 2) / self.width)
      } else {
        scaledHeight = height
        scaledWidth = max(1, (self.width * height + self.height / 2) / self.height)
      }
      let scaled = try resizedBilinear(width: scaledWidth, height: scaledHeight)
      var samples = [Float](repeating: fill, count: width * height * channels)
      let left = (width - scaledWidth) / 2, top = (height - scaledHeight) / 2
      for row in 0..<scaledHeight {
        let destination = ((top + row) * width + left) * channels
        let source = row * scaledWidth * channels
        samples.replaceSubrange(
          destination..<(destination + scaledWidth * channels), with: scaled.samples[source..<(source + scaledWidth * channels)])
      }
      return try FloatImage(width: width, height: height, channels: channels, samples: samples)
    }
  }

  /// The samples as Float32 (0–255).
  public var floatImage: FloatImage {
    try! FloatImage(width: width, height: height, channels: channels, samples: pixels.map(Float.init))
  }
}

extension FloatImage {
  /// (x − mean[c]) / std[c] for every sample of channel c; a single mean or std applies to every channel.
  public func normalized(mean: [Float], std: [Float]) throws(ImageError) -> FloatImage {
    guard [1, channels].contains(mean.count), [1, channels].contains(std.count), !std.contains(0) else {
      throw ImageError.invalidDimensions("normalization needs 1 or \(channels) means and non-zero stds, got \(mean) and \(std)")
    }
    var result = samples
    for index in result.indices {
      let channel = index % channels
      result[index] = (result[index] - mean[mean.count == 1 ? 0 : channel]) / std[std.count == 1 ? 0 : channel]
    }
    return try FloatImage(width: width, height: height, channels: channels, samples: result)
  }

  /// Writes every sample into `buffer` (row by row, channels interleaved) as `encoding` says;
  /// throws unless the buffer holds exactly `samples.count` elements of that encoding.
  public func write(into buffer: UnsafeMutableRawBufferPointer, as encoding: TensorEncoding) throws(ImageError) {
    guard buffer.count == samples.count * encoding.byteCount else {
      throw ImageError.invalidDimensions(
        "\(samples.count) samples need \(samples.count * encoding.byteCount) bytes, the buffer has \(buffer.count)")
    }
    switch encoding {
    case .float32:
      for (index, value) in samples.enumerated() { buffer.storeBytes(of: value, toByteOffset: 4 * index, as: Float.self) }
    case .uint8(let scale, let zeroPoint):
      for (index, value) in samples.enumerated() {
        buffer[index] = UInt8(Self.quantize(value, scale: scale, zeroPoint: zeroPoint, range: 0...255))
      }
    case .int8(let scale, let zeroPoint):
      for (index, value) in samples.enumerated() {
        buffer[index] = UInt8(bitPattern: Int8(Self.quantize(value, scale: scale, zeroPoint: zeroPoint, range: -128...127)))
      }
    }
  }

  /// round(value / scale) (half away from zero) + zeroPoint, clamped to `range`; NaN gives the zero point.
  static func quantize(_ value: Float, scale: Float, zeroPoint: Int, range: ClosedRange<Int>) -> Int {
    let scaled = (value / scale).rounded(.toNearestOrAwayFromZero)
    guard !scaled.isNaN else { return min(max(zeroPoint, range.lowerBound), range.upperBound) }
    let clampedScaled = Int(max(min(scaled, 1e9), -1e9))
    return min(max(clampedScaled + zeroPoint, range.lowerBound), range.upperBound)
  }
}
