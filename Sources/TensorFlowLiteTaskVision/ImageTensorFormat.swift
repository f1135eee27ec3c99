// How an image becomes a model's image input, as the Task Library prepares it: the image is made
// RGB (gray repeated, alpha dropped) or gray (Pillow's luma) to match the input's channel count,
// brought to the input size (stretched by default) with TensorFlow's half-pixel bilinear resize,
// then
// - uint8 input: the resized values rounded half away from zero (the raw pixels; normalization
//   metadata is not applied to uint8 inputs, as in the Task Library);
// - int8 input: normalized, then quantized with the tensor's scale and zero point;
// - float32 input: normalized by (x − mean) / std from the options or the metadata, which are then
//   required (a float model without them is refused, as the Task Library refuses it).
// Points given as fractions of the input map back to image pixels through the same fit.

import TFLiteFormat
import TFLiteImage

/// The geometry, element type and normalization of a model's `[1, height, width, channels]` image input.
public struct ImageTensorFormat: Sendable, Equatable {
  /// The input's element type.
  public enum ElementType: Sendable, Equatable {
    /// Raw 0–255 pixels.
    case uint8
    /// Normalized values quantized with the tensor's parameters.
    case int8(scale: Float, zeroPoint: Int)
    /// Normalized values.
    case float32
  }

  /// Input width.
  public let width: Int
  /// Input height.
  public let height: Int
  /// Input channels (1 or 3).
  public let channels: Int
  /// The element type.
  public let elementType: ElementType
  /// `(x − mean) / std`, for float32 and int8 inputs.
  public let normalization: NormalizationOptions?
  /// How images are fitted to the input.
  public let fit: ImageFit

  /// The format of an input of `shape` and `elementType`, normalized as `options` (first) or
  /// `metadata` say; throws when the shape is not an image's or the normalization does not fit.
  public init(
    shape: [Int], elementType: ElementType, metadata: TensorMetadata?, options: ModelInputOptions
  ) throws(TaskVisionError) {
    guard shape.count == 4, shape[0] == 1, shape[1] > 0, shape[2] > 0, [1, 3].contains(shape[3]) else {
      throw TaskVisionError("not an image input: the shape is \(shape), expected [1, height, width, 1 or 3]")
    }
    (height, width, channels) = (shape[1], shape[2], shape[3])
    self.elementType = elementType
    fit = options.imageFit
    let normalization = options.normalization ?? metadata?.normalization
    if let normalization {
      guard [1, channels].contains(normalization.mean.count), [1, channels].contains(normalization.std.count),
        !normalization.std.contains(0), (normalization.mean + normalization.std).allSatisfy(\.isFinite)
      else {
        throw TaskVisionError(
          "normalization mean \(normalization.mean) / std \(normalization.std) does not fit a \(channels)-channel input (1 or \(channels) finite values, std ≠ 0)")
      }
    } else if elementType == .float32 {
      throw TaskVisionError("the model takes float input but neither its metadata nor the options give NormalizationOptions (mean and std)")
    }
    self.normalization = normalization
  }

  /// Bytes per input element.
  public var elementByteCount: Int { elementType == .float32 ? 4 : 1 }

  /// Writes `image`, prepared, into `buffer` (exactly `width × height × channels` elements).
  public func write(_ image: Image, into buffer: UnsafeMutableRawBufferPointer) throws(TaskVisionError) {
    do {
      let fitted = try image.matchingChannels(channels).fitted(width: width, height: height, fit: fit)
      switch elementType {
      case .uint8: try fitted.write(into: buffer, as: .uint8(scale: 1, zeroPoint: 0))
      case .int8(let scale, let zeroPoint): try normalized(fitted).write(into: buffer, as: .int8(scale: scale, zeroPoint: zeroPoint))
      case .float32: try normalized(fitted).write(into: buffer, as: .float32)
      }
    } catch {
      throw TaskVisionError("cannot prepare the image for the model input: \(error)")
    }
  }

  /// The input tensor's bytes for `image`.
  public func tensorBytes(for image: Image) throws(TaskVisionError) -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: width * height * channels * elementByteCount)
    let failure = bytes.withUnsafeMutableBytes { buffer -> TaskVisionError? in
      do throws(TaskVisionError) {
        try write(image, into: buffer)
        return nil
      } catch {
        return error
      }
    }
    if let failure { throw failure }
    return bytes
  }

  /// `image` normalized, when normalization is known.
  private func normalized(_ image: FloatImage) throws(ImageError) -> FloatImage {
    guard let normalization else { return image }
    return try image.normalized(mean: normalization.mean, std: normalization.std)
  }

  /// Maps a point given as fractions (`x`, `y`) of the input back to pixels of a
  /// `imageWidth × imageHeight` image, undoing the fit.
  public func imagePoint(x: Float, y: Float, imageWidth: Int, imageHeight: Int) -> (x: Double, y: Double) {
    let (x, y) = (Double(x), Double(y))
    switch fit {
    case .stretch:
      return (x * Double(imageWidth), y * Double(imageHeight))
    case .centerCrop:
      let cropWidth = max(1, min(imageWidth, (imageHeight * width) / height))
      let cropHeight = max(1, min(imageHeight, (imageWidth * height) / width))
      return (
        Double((imageWidth - cropWidth) / 2) + x * Double(cropWidth), Double((imageHeight - cropHeight) / 2) + y * Double(cropHeight)
      )
    case .letterbox:
      let scaledWidth: Int, scaledHeight: Int
      if imageWidth * height >= imageHeight * width {
        scaledWidth = width
        scaledHeight = max(1, (imageHeight * width + imageWidth / 2) / imageWidth)
      } else {
        scaledHeight = height
        scaledWidth = max(1, (imageWidth * height + imageHeight / 2) / imageHeight)
      }
      let left = Double((width - scaledWidth) / 2), top = Double((height - scaledHeight) / 2)
      return (
        (x * Double(width) - left) * Double(imageWidth) / Double(scaledWidth),
        (y * Double(height) - top) * Double(imageHeight) / Double(scaledHeight)
      )
    }
  }
}

extension Image {
  /// The image with `channels` channels: 3 gives RGB (gray repeated, alpha dropped), 1 gives gray.
  func matchingChannels(_ channels: Int) throws(ImageError) -> Image {
    if channels == 1 { return self.channels == 1 ? self : try grayscale() }
    if self.channels == 3 { return self }
    let colorChannels = self.channels >= 3 ? 3 : 1
    var rgb = [UInt8]()
    rgb.reserveCapacity(width * height * 3)
    for pixel in stride(from: 0, to: pixels.count, by: self.channels) {
      for channel in 0..<3 { rgb.append(pixels[pixel + (colorChannels == 3 ? channel : 0)]) }
    }
    return try Image(width: width, height: height, channels: 3, pixels: rgb)
  }
}
