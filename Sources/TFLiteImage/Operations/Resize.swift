// Cropping and resizing as TensorFlow's `tf.image.resize` does them (TF 2, half-pixel centres):
// output pixel x samples the input at (x + 0.5) · in/out − 0.5.
// - bilinear: the four neighbours, weighted in Float32 in TensorFlow's order (interpolate along x
//   in the top and bottom rows, then along y), edges clamped; the result is a ``FloatImage``.
// - bilinear with antialias (`antialias=True`, TensorFlow's ScaleAndTranslate op with its triangle
//   kernel): output pixel x is centred on input position (x + 0.5) · in/out; when shrinking, the
//   triangle is stretched by in/out so every input pixel contributes. Each output index gets the
//   input indices inside the kernel's radius, weights 1 − |distance| normalized to sum to one
//   (so the edges renormalize instead of clamping); the image is filtered first along y into a
//   Float32 buffer, then along x, accumulating in span order as TensorFlow does: equal bit for bit.
// - nearest: the input pixel floor((x + 0.5) · in/out), clamped to the last pixel; samples are
//   copied, so the result stays 8-bit.

/// An image with Float32 samples, laid out like ``Image`` (the form models take after resizing and normalizing).
public typealias FloatImage = SampleImage<Float>

extension Image {
  /// The `width × height` rectangle whose top-left pixel is (`x`, `y`); throws when it is empty or
  /// does not lie inside the image.
  public func cropped(x: Int, y: Int, width: Int, height: Int) throws(ImageError) -> Image {
    guard width > 0, height > 0, x >= 0, y >= 0, x <= self.width - width, y <= self.height - height else {
      throw ImageError.invalidDimensions("crop \(width)×\(height) at (\(x), \(y)) is outside the \(self.width)×\(self.height) image")
    }
    var pixels: [UInt8] = []
    pixels.reserveCapacity(width * height * channels)
    for row in y..<(y + height) {
      let start = (row * self.width + x) * channels
      pixels += self.pixels[start..<(start + width * channels)]
    }
    return try Image(width: width, height: height, channels: channels, pixels: pixels)
  }

  /// Bilinear resize to `width × height`, as `tf.image.resize(image, [height, width], "bilinear")`.
  public func resizedBilinear(width: Int, height: Int) throws(ImageError) -> FloatImage {
    guard width > 0, height > 0 else { throw ImageError.invalidDimensions("resize to \(width)×\(height)") }
    let columns = Self.interpolationWeights(output: width, input: self.width)
    let rows = Self.interpolationWeights(output: height, input: self.height)
    let channels = self.channels
    var samples = [Float](repeating: 0, count: width * height * channels)
    pixels.withUnsafeBufferPointer { input in
      samples.withUnsafeMutableBufferPointer { output in
        for (row, vertical) in rows.enumerated() {
          let top = vertical.lower * self.width * channels, bottom = vertical.upper * self.width * channels
          for (column, horizontal) in columns.enumerated() {
            let left = horizontal.lower * channels, right = horizontal.upper * channels
            for channel in 0..<channels {
              let topLeft = Float(input[top + left + channel]), topRight = Float(input[top + right + channel])
              let bottomLeft = Float(input[bottom + left + channel]), bottomRight = Float(input[bottom + right + channel])
              let upper = topLeft + (topRight - topLeft) * horizontal.fraction
              let lower = bottomLeft + (bottomRight - bottomLeft) * horizontal.fraction
              output[(row * width + column) * channels + channel] = upper + (lower - upper) * vertical.fraction
            }
          }
        }
      }
    }
    return try FloatImage(width: width, height: height, channels: channels, samples: samples)
  }

  /// Bilinear resize to `width × height` with antialiasing when shrinking, as
  /// `tf.image.resize(image, [height, width], "bilinear", antialias=True)`.
  public func resizedBilinearAntialiased(width: Int, height: Int) throws(ImageError) -> FloatImage {
    guard width > 0, height > 0 else { throw ImageError.invalidDimensions("resize to \(width)×\(height)") }
    let columns = Self.triangleSpans(output: width, input: self.width)
    let rows = Self.triangleSpans(output: height, input: self.height)
    let channels = self.channels
    let inputRowLength = self.width * channels
    // Along y: every output row is a weighted sum of input rows.
    var filteredRows = [Float](repeating: 0, count: height * inputRowLength)
    pixels.withUnsafeBufferPointer { input in
      filteredRows.withUnsafeMutableBufferPointer { output in
        for (row, span) in rows.enumerated() {
          for (offset, weight) in span.weights.enumerated() {
            let source = (span.start + offset) * inputRowLength
            for index in 0..<inputRowLength { output[row * inputRowLength + index] += weight * Float(input[source + index]) }
          }
        }
      }
    }
    // Along x: every filtered row becomes `width` pixels.
    var samples = [Float](repeating: 0, count: height * width * channels)
    filteredRows.withUnsafeBufferPointer { input in
      samples.withUnsafeMutableBufferPointer { output in
        for row in 0..<height {
          for (column, span) in columns.enumerated() {
            let target = (row * width + column) * channels
            for (offset, weight) in span.weights.enumerated() {
              let source = row * inputRowLength + (span.start + offset) * channels
              for channel in 0..<channels { output[target + channel] += weight * input[source + channel] }
            }
          }
        }
      }
    }
    return try FloatImage(width: width, height: height, channels: channels, samples: samples)
  }

  /// Nearest-neighbour resize to `width × height`, as `tf.image.resize(image, [height, width], "nearest")`.
  public func resizedNearest(width: Int, height: Int) throws(ImageError) -> Image {
    guard width > 0, height > 0 else { throw ImageError.invalidDimensions("resize to \(width)×\(height)") }
    func source(_ index: Int, output: Int, input: Int) -> Int {
      let scale = Float(input) / Float(output)
      return min(Int((Float(index) + 0.5) * scale), input - 1)
    }
    let columns = (0..<width).map { source($0, output: width, input: self.width) }
    var pixels: [UInt8] = []
    pixels.reserveCapacity(width * height * channels)
    for row in 0..<height {
      let sourceRow = source(row, output: height, input: self.height) * self.width
      for column in columns {
        let start = (sourceRow + column) * channels
        pixels += self.pixels[start..<(start + channels)]
      }
    }
    return try Image(width: width, height: height, channels: channels, pixels: pixels)
  }

  /// The input indices one output index of an antialiased resize blends, and their weights.
  private struct ResamplingSpan {
    /// The first input index.
    let start: Int
    /// One normalized weight per input index from `start` on.
    let weights: [Float]
  }

  /// For each output index, the span of a triangle kernel centred on (index + 0.5) · in/out and
  /// stretched by in/out when shrinking, in Float32 as TensorFlow's ScaleAndTranslate computes it
  /// (its scale is out/in in Float32 and the inverse is taken in Double, then rounded).
  private static func triangleSpans(output: Int, input: Int) -> [ResamplingSpan] {
    let scale = Float(output) / Float(input)
    let inverseScale = Float(1.0 / Double(scale))
    let kernelScale = max(inverseScale, 1)
    let inverseKernelScale = 1 / kernelScale
    return (0..<output).map { index in
      let sample = (Float(index) + 0.5) * inverseScale
      let first = min(max(Int((sample - kernelScale - 0.5).rounded(.up)), 0), input - 1)
      let end = min(max(Int((sample + kernelScale - 0.5).rounded(.down)), 0), input - 1) + 1
      let raw = (first..<end).map { source -> Float in
        let distance = abs((Float(source) + 0.5 - sample) * inverseKernelScale)
        return distance < 1 ? 1 - distance : 0
      }
      let total = raw.reduce(0, +)
      guard abs(total) >= 1000 * Float.leastNormalMagnitude else {
        return ResamplingSpan(start: first, weights: raw.map { _ in 0 })
      }
      let inverseTotal = 1 / total
      return ResamplingSpan(start: first, weights: raw.map { $0 * inverseTotal })
    }
  }

  /// For each output index: the two input indices to blend and the weight of the second,
  /// computed in Float32 as TensorFlow's half-pixel scaler does.
  private static func interpolationWeights(output: Int, input: Int) -> [(lower: Int, upper: Int, fraction: Float)] {
    let scale = Float(input) / Float(output)
    return (0..<output).map { index in
      let position = (Float(index) + 0.5) * scale - 0.5
      let floorPosition = position.rounded(.down)
      return (max(Int(floorPosition), 0), min(Int(position.rounded(.up)), input - 1), position - floorPosition)
    }
  }
}
