// The Task API's input image (the Task Library's GMLImage, `MLImage` in Swift): 8-bit pixels from
// TFLiteImage's decoders (any PNG, JPEG or PPM file, EXIF orientation applied), from an `Image`, or
// on Apple platforms from a CGImage, drawn into an RGBA bitmap by CoreGraphics, or from a
// CVPixelBuffer (32BGRA, 32ARGB, 24RGB, OneComponent8, 420YpCbCr8BiPlanar video and full range),
// whose planes are converted by TFLiteImage's platform-independent
// `Image(pixelBufferFormat:width:height:planes:)`.

import TFLiteImage

#if canImport(CoreGraphics)
  import CoreGraphics
#endif
#if canImport(CoreVideo)
  import CoreVideo
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

  #if canImport(CoreVideo)
    /// Converts a CVPixelBuffer in one of the formats of ``PixelBufferFormat`` (read-only lock);
    /// nil for other formats or when its base address cannot be read.
    public convenience init?(pixelBuffer: CVPixelBuffer) {
      let format: PixelBufferFormat
      switch CVPixelBufferGetPixelFormatType(pixelBuffer) {
      case kCVPixelFormatType_32BGRA: format = .bgra32
      case kCVPixelFormatType_32ARGB: format = .argb32
      case kCVPixelFormatType_24RGB: format = .rgb24
      case kCVPixelFormatType_OneComponent8: format = .gray8
      case kCVPixelFormatType_420YpCbCr8BiPlanarVideoRange: format = .yCbCr420BiPlanarVideoRange
      case kCVPixelFormatType_420YpCbCr8BiPlanarFullRange: format = .yCbCr420BiPlanarFullRange
      default: return nil
      }
      guard CVPixelBufferLockBaseAddress(pixelBuffer, .readOnly) == kCVReturnSuccess else { return nil }
      defer { CVPixelBufferUnlockBaseAddress(pixelBuffer, .readOnly) }
      var planes: [PixelBufferPlane] = []
      if format.planeCount == 1 {
        guard let base = CVPixelBufferGetBaseAddress(pixelBuffer) else { return nil }
        let bytesPerRow = CVPixelBufferGetBytesPerRow(pixelBuffer)
        let rows = CVPixelBufferGetHeight(pixelBuffer)
        planes.append(PixelBufferPlane(bytes: UnsafeRawBufferPointer(start: base, count: bytesPerRow * rows), bytesPerRow: bytesPerRow))
      } else {
        for plane in 0..<format.planeCount {
          guard let base = CVPixelBufferGetBaseAddressOfPlane(pixelBuffer, plane) else { return nil }
          let bytesPerRow = CVPixelBufferGetBytesPerRowOfPlane(pixelBuffer, plane)
          let rows = CVPixelBufferGetHeightOfPlane(pixelBuffer, plane)
          planes.append(PixelBufferPlane(bytes: UnsafeRawBufferPointer(start: base, count: bytesPerRow * rows), bytesPerRow: bytesPerRow))
        }
      }
      guard
        let image = try? Image(
          pixelBufferFormat: format, width: CVPixelBufferGetWidth(pixelBuffer), height: CVPixelBufferGetHeight(pixelBuffer),
          planes: planes)
      else { return nil }
      self.init(image: image)
    }
  #endif
}
