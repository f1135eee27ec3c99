// The Task API's input image (the Task Library's GMLImage, `MLImage` in Swift): 8-bit pixels from
// TFLiteImage's decoders (any PNG, JPEG or PPM file, EXIF orientation applied), from an `Image`, or
// on Apple platforms from a CGImage, drawn into an RGBA bitmap by CoreGraphics.

import TFLiteImage

#if canImport(CoreGraphics)
  import CoreGraphics
#endif

/// An image to detect or classify.
public final class MLImage: Sendable {
  /// The pixels (gray, gray + alpha, RGB or RGBA).
  public let image: Image

  /// Width in pixels.
  public var width: Int { image.width }
  /// Height in pixels.
  public var height: Int { image.height }

  /// An image over `image`'s pixels.
  public init(image: Image) {
    self.image = image
  }

  /// Decodes a PNG, JPEG or PPM/PGM file's bytes (EXIF orientation applied).
  public convenience init(encodedBytes: [UInt8]) throws(TaskVisionError) {
    do {
      self.init(image: try decodeImage(encodedBytes))
    } catch {
      throw TaskVisionError("cannot decode the image: \(error)")
    }
  }

  #if canImport(CoreGraphics)
    /// Draws `cgImage` into an 8-bit RGBA bitmap; nil when CoreGraphics cannot.
    public convenience init?(cgImage: CGImage) {
      let width = cgImage.width, height = cgImage.height
      var pixels = [UInt8](repeating: 0, count: width * height * 4)
      let drawn = pixels.withUnsafeMutableBytes { buffer -> Bool in
        guard
          let context = CGContext(
            data: buffer.baseAddress, width: width, height: height, bitsPerComponent: 8, bytesPerRow: width * 4,
            space: CGColorSpaceCreateDeviceRGB(), bitmapInfo: CGImageAlphaInfo.premultipliedLast.rawValue)
        else { return false }
        context.draw(cgImage, in: CGRect(x: 0, y: 0, width: width, height: height))
        return true
      }
      guard drawn, let image = try? Image(width: width, height: height, channels: 4, pixels: pixels) else { return nil }
      self.init(image: image)
    }
  #endif
}
