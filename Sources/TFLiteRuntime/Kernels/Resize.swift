// RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR on NHWC tensors. Source coordinates are
// computed once per output row and column at prepare time.

/// How output positions map to input positions along one resized axis.
struct ResizeAxis {
  /// Input extent.
  let inputSize: Int
  /// Output extent.
  let outputSize: Int
  /// Input step per output step, as TFLite computes it in float.
  let scale: Float

  /// The scale rule shared by both resize ops: with `alignCorners` the corner pixels line up.
  init(inputSize: Int, outputSize: Int, alignCorners: Bool) {
    self.inputSize = inputSize
    self.outputSize = outputSize
    scale =
      alignCorners && outputSize > 1
      ? Float(inputSize - 1) / Float(outputSize - 1) : Float(inputSize) / Float(outputSize)
  }

  /// The input index nearest-neighbour resizing reads for output index `position`.
  func nearestIndex(_ position: Int, alignCorners: Bool, halfPixelCenters: Bool) -> Int {
    let scaled = (Float(position) + (halfPixelCenters ? 0.5 : 0)) * scale
    let rounded = alignCorners ? scaled.rounded(.toNearestOrAwayFromZero) : scaled.rounded(.down)
    let index = min(Int(rounded), inputSize - 1)
    return halfPixelCenters ? max(0, index) : index
  }

  /// The two input indices bilinear resizing blends for output index `position`, and the weight of the upper one.
  func bilinearSpan(_ position: Int, halfPixelCenters: Bool) -> (lower: Int, upper: Int, weight: Float) {
    let scaled = halfPixelCenters ? (Float(position) + 0.5) * scale - 0.5 : Float(position) * scale
    let lower = max(Int(scaled.rounded(.down)), 0)
    let upper = min(Int(scaled.rounded(.up)), inputSize - 1)
    return (lower, upper, scaled - Float(lower))
  }
}

/// Validates the NHWC input and requested size of a resize and returns the output shape.
func resizedShape(inputShape: [Int], size: [Int], op: String) throws -> [Int] {
  guard inputShape.count == 4 else { throw KernelError.invalid("\(op): input must be 4-D NHWC, got \(inputShape)") }
  guard size.count == 2, size[0] > 0, size[1] > 0, size[0] <= Int(Int32.max), size[1] <= Int(Int32.max) else {
    throw KernelError.invalid("\(op): size must be two positive values, got \(size)")
  }
  let shape = [inputShape[0], size[0], size[1], inputShape[3]]
  _ = try checkedElementCount(shape, op: op)
  return shape
}

/// Nearest-neighbour resize of any element type: each output pixel copies one input pixel's channels.
struct NearestNeighborResize {
  /// Batch, input height, input width and channel count.
  let batches: Int, inputHeight: Int, inputWidth: Int, channels: Int
  /// Input row read by each output row.
  let sourceRows: [Int]
  /// Input column read by each output column.
  let sourceColumns: [Int]

  /// Plans the resize of an NHWC `inputShape` to `outputHeight × outputWidth`.
  init(inputShape: [Int], outputHeight: Int, outputWidth: Int, alignCorners: Bool, halfPixelCenters: Bool) {
    batches = inputShape[0]
    inputHeight = inputShape[1]
    inputWidth = inputShape[2]
    channels = inputShape[3]
    let rows = ResizeAxis(inputSize: inputHeight, outputSize: outputHeight, alignCorners: alignCorners)
    let columns = ResizeAxis(inputSize: inputWidth, outputSize: outputWidth, alignCorners: alignCorners)
    sourceRows = (0..<outputHeight).map { rows.nearestIndex($0, alignCorners: alignCorners, halfPixelCenters: halfPixelCenters) }
    sourceColumns = (0..<outputWidth).map {
      columns.nearestIndex($0, alignCorners: alignCorners, halfPixelCenters: halfPixelCenters)
    }
  }

  /// Writes the resized tensor.
  func run(from source: UnsafeRawPointer, to destination: UnsafeMutableRawPointer, elementSize: Int) {
    let pixelBytes = channels &* elementSize
    let rowBytes = inputWidth &* pixelBytes
    var output = destination
    sourceRows.withUnsafeBufferPointer { rows in
      sourceColumns.withUnsafeBufferPointer { columns in
        for batch in 0..<batches {
          let image = source + batch &* inputHeight &* rowBytes
          for row in rows {
            let inputRow = image + row &* rowBytes
            for column in columns {
              output.copyMemory(from: inputRow + column &* pixelBytes, byteCount: pixelBytes)
              output += pixelBytes
            }
          }
        }
      }
    }
  }
}

/// The blend of two input positions that produces one output position of a bilinear resize.
struct BilinearTap {
  /// First input index.
  var lower: Int
  /// Second input index (equal to `lower` at the borders).
  var upper: Int
  /// Weight of `upper`; `lower` gets `1 - weight`.
  var weight: Float
}

/// Bilinear resize of float32 NHWC tensors, with TFLite's coordinate rules.
/// Quantized variants reuse the taps with their own fixed-point blend.
struct BilinearResize {
  /// Batch, input height, input width and channel count.
  let batches: Int, inputHeight: Int, inputWidth: Int, channels: Int
  /// Taps of each output row.
  let rowTaps: [BilinearTap]
  /// Taps of each output column.
  let columnTaps: [BilinearTap]

  /// Plans the resize of an NHWC `inputShape` to `outputHeight × outputWidth`.
  init(inputShape: [Int], outputHeight: Int, outputWidth: Int, alignCorners: Bool, halfPixelCenters: Bool) {
    batches = inputShape[0]
    inputHeight = inputShape[1]
    inputWidth = inputShape[2]
    channels = inputShape[3]
    func taps(_ axis: ResizeAxis) -> [BilinearTap] {
      (0..<axis.outputSize).map {
        let span = axis.bilinearSpan($0, halfPixelCenters: halfPixelCenters)
        return BilinearTap(lower: span.lower, upper: span.upper, weight: span.weight)
      }
    }
    rowTaps = taps(ResizeAxis(inputSize: inputHeight, outputSize: outputHeight, alignCorners: alignCorners))
    columnTaps = taps(ResizeAxis(inputSize: inputWidth, outputSize: outputWidth, alignCorners: alignCorners))
  }

  /// Writes output rows `rows` (counted over batch × output height) of the resized float tensor.
  func run(from source: UnsafePointer<Float>, to destination: UnsafeMutablePointer<Float>, rows: Range<Int>) {
    let outputHeight = rowTaps.count
    let outputWidth = columnTaps.count
    let rowStride = inputWidth &* channels
    rowTaps.withUnsafeBufferPointer { rowTaps in
      columnTaps.withUnsafeBufferPointer { columnTaps in
        for outputRow in rows {
          let batch = outputRow / outputHeight
          let tap = rowTaps[outputRow - batch &* outputHeight]
          let image = source + batch &* inputHeight &* rowStride
          let top = image + tap.lower &* rowStride
          let bottom = image + tap.upper &* rowStride
          let lowerWeight = 1 - tap.weight
          var output = destination + outputRow &* outputWidth &* channels
          for column in columnTaps {
            let leftWeight = 1 - column.weight
            let topLeft = top + column.lower &* channels, topRight = top + column.upper &* channels
            let bottomLeft = bottom + column.lower &* channels, bottomRight = bottom + column.upper &* channels
            for channel in 0..<channels {
              output[channel] =
                topLeft[channel] * lowerWeight * leftWeight + bottomLeft[channel] * tap.weight * leftWeight
                + topRight[channel] * lowerWeight * column.weight + bottomRight[channel] * tap.weight * column.weight
            }
            output += channels
          }
        }
      }
    }
  }
}
