// RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR on NHWC tensors. Source coordinates are
// computed once per output row and column at prepare time. A float bilinear output is
// Σ corner · (row weight · column weight): each corner meets its product weight once, where
// LiteRT's reference multiplies by the two weights in turn, so the two may differ by 1 ulp.

import TFLiteFormat
import TFLiteLinearAlgebra

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
  guard inputShape[1] > 0, inputShape[2] > 0 else {
    throw KernelError.invalid("\(op): the input image \(inputShape) is empty, there is nothing to sample")
  }
  guard size.count == 2, size[0] > 0, size[1] > 0, size[0] <= Int(Int32.max), size[1] <= Int(Int32.max) else {
    throw KernelError.invalid("\(op): size must be two positive values, got \(size)")
  }
  let shape = [inputShape[0], size[0], size[1], inputShape[3]]
  _ = try checkedElementCount(shape, op: op)
  return shape
}

/// The extents of the NHWC tensor a resize reads.
struct ResizeSource {
  /// Batch, height, width and channel count.
  let batches: Int, height: Int, width: Int, channels: Int

  /// Reads the extents of a 4-D NHWC shape.
  init(shape: [Int]) {
    (batches, height, width, channels) = (shape[0], shape[1], shape[2], shape[3])
  }
}

/// Nearest-neighbour resize of any element type: each output pixel copies one input pixel's channels.
struct NearestNeighborResize {
  /// The input extents.
  let source: ResizeSource
  /// Input row read by each output row.
  let sourceRows: [Int]
  /// Input column read by each output column.
  let sourceColumns: [Int]

  /// Plans the resize of an NHWC `inputShape` to `outputHeight × outputWidth`.
  init(inputShape: [Int], outputHeight: Int, outputWidth: Int, alignCorners: Bool, halfPixelCenters: Bool) {
    source = ResizeSource(shape: inputShape)
    func indices(_ axis: ResizeAxis) -> [Int] {
      (0..<axis.outputSize).map { axis.nearestIndex($0, alignCorners: alignCorners, halfPixelCenters: halfPixelCenters) }
    }
    sourceRows = indices(ResizeAxis(inputSize: source.height, outputSize: outputHeight, alignCorners: alignCorners))
    sourceColumns = indices(ResizeAxis(inputSize: source.width, outputSize: outputWidth, alignCorners: alignCorners))
  }

  /// Writes the resized tensor. An output row that reads the same input row as the one above it
  /// is copied from that row in one piece.
  func run(from input: UnsafeRawPointer, to destination: UnsafeMutableRawPointer, elementSize: Int) {
    let pixelBytes = source.channels &* elementSize
    let rowBytes = source.width &* pixelBytes
    let outputRowBytes = sourceColumns.count &* pixelBytes
    var output = destination
    sourceRows.withUnsafeBufferPointer { rows in
      sourceColumns.withUnsafeBufferPointer { columns in
        for batch in 0..<source.batches {
          let image = input + batch &* source.height &* rowBytes
          for (position, row) in rows.enumerated() {
            if position > 0 && rows[position - 1] == row {
              output.copyMemory(from: output - outputRowBytes, byteCount: outputRowBytes)
            } else {
              let inputRow = image + row &* rowBytes
              for (offset, column) in columns.enumerated() {
                copyRun(from: inputRow + column &* pixelBytes, to: output + offset &* pixelBytes, byteCount: pixelBytes)
              }
            }
            output += outputRowBytes
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
  /// The input extents.
  let source: ResizeSource
  /// Taps of each output row.
  let rowTaps: [BilinearTap]
  /// Taps of each output column.
  let columnTaps: [BilinearTap]

  /// Plans the resize of an NHWC `inputShape` to `outputHeight × outputWidth`.
  init(inputShape: [Int], outputHeight: Int, outputWidth: Int, alignCorners: Bool, halfPixelCenters: Bool) {
    source = ResizeSource(shape: inputShape)
    func taps(_ axis: ResizeAxis) -> [BilinearTap] {
      (0..<axis.outputSize).map {
        let span = axis.bilinearSpan($0, halfPixelCenters: halfPixelCenters)
        return BilinearTap(lower: span.lower, upper: span.upper, weight: span.weight)
      }
    }
    rowTaps = taps(ResizeAxis(inputSize: source.height, outputSize: outputHeight, alignCorners: alignCorners))
    columnTaps = taps(ResizeAxis(inputSize: source.width, outputSize: outputWidth, alignCorners: alignCorners))
  }

  /// Writes output rows `rows` (counted over batch × output height) of the resized float tensor.
  func run(from input: UnsafePointer<Float>, to destination: UnsafeMutablePointer<Float>, rows: Range<Int>) {
    let (outputHeight, outputWidth, channels) = (rowTaps.count, columnTaps.count, source.channels)
    let rowStride = source.width &* channels
    rowTaps.withUnsafeBufferPointer { rowTaps in
      columnTaps.withUnsafeBufferPointer { columnTaps in
        for outputRow in rows {
          let batch = outputRow / outputHeight
          let tap = rowTaps[outputRow - batch &* outputHeight]
          let image = input + batch &* source.height &* rowStride
          let top = image + tap.lower &* rowStride
          let bottom = image + tap.upper &* rowStride
          let lowerWeight = 1 - tap.weight
          var output = destination + outputRow &* outputWidth &* channels
          for column in columnTaps {
            let leftWeight = 1 - column.weight
            let corners = (
              top + column.lower &* channels, top + column.upper &* channels,
              bottom + column.lower &* channels, bottom + column.upper &* channels
            )
            let weights = (
              lowerWeight * leftWeight, lowerWeight * column.weight, tap.weight * leftWeight, tap.weight * column.weight
            )
            blendPixel(into: output, channels: channels, corners: corners, weights: weights)
            output += channels
          }
        }
      }
    }
  }

  /// Eight floats from `pointer + offset`.
  @inline(__always)
  private static func load(_ pointer: UnsafePointer<Float>, _ offset: Int) -> SIMD8<Float> {
    UnsafeRawPointer(pointer + offset).loadUnaligned(as: SIMD8<Float>.self)
  }

  /// Writes `Σ weight · corner` over the channels of one output pixel, 8 channels per SIMD step.
  @inline(__always)
  private func blendPixel(
    into output: UnsafeMutablePointer<Float>, channels: Int,
    corners: (UnsafePointer<Float>, UnsafePointer<Float>, UnsafePointer<Float>, UnsafePointer<Float>),
    weights: (Float, Float, Float, Float)
  ) {
    let (topLeft, topRight, bottomLeft, bottomRight) = corners
    var channel = 0
    while channel &+ 8 <= channels {
      let value =
        Self.load(topLeft, channel) * weights.0 + Self.load(topRight, channel) * weights.1
        + Self.load(bottomLeft, channel) * weights.2 + Self.load(bottomRight, channel) * weights.3
      UnsafeMutableRawPointer(output + channel).storeBytes(of: value, as: SIMD8<Float>.self)
      channel &+= 8
    }
    while channel < channels {
      output[channel] =
        topLeft[channel] * weights.0 + topRight[channel] * weights.1 + bottomLeft[channel] * weights.2
        + bottomRight[channel] * weights.3
      channel &+= 1
    }
  }
}

// MARK: - Kernel

/// RESIZE_BILINEAR (float32; rows spread over the threads) and RESIZE_NEAREST_NEIGHBOR (any
/// element type), chosen by the node's operator. The size operand must be constant.
final class ResizeKernel: Kernel {
  /// The resize planned by the last `prepare`.
  private enum Plan {
    case bilinear(BilinearResize)
    case nearest(NearestNeighborResize)
  }

  private let op: String
  private let input: RuntimeTensor
  private let size: RuntimeTensor
  private let output: RuntimeTensor
  private let bilinear: Bool
  private let alignCorners: Bool
  private let halfPixelCenters: Bool
  private let elementSize: Int
  private var plan: Plan?

  init(node: Node) throws {
    op = node.opName
    let operands = try MovableOperands(node, inputs: 2, op: op)
    (input, output, elementSize) = (operands.input, operands.output, operands.elementSize)
    size = try node.input(1)
    switch node.options {
    case .resizeBilinearOptions(let options):
      (bilinear, alignCorners, halfPixelCenters) = (true, options.alignCorners, options.halfPixelCenters)
      guard input.type == .float32 else { throw KernelError.unsupported("\(op): \(input.type.name) tensors") }
    case .resizeNearestNeighborOptions(let options):
      (bilinear, alignCorners, halfPixelCenters) = (false, options.alignCorners, options.halfPixelCenters)
    default:
      throw KernelError.invalid("\(op): missing options")
    }
    guard !(alignCorners && halfPixelCenters) else {
      throw KernelError.invalid("\(op): align_corners and half_pixel_centers cannot both be set")
    }
  }

  func prepare(_ context: inout PrepareContext) throws {
    let requested = try constantIntegers(size, op: op, operand: "size")
    output.shape = try resizedShape(inputShape: input.shape, size: requested, op: op)
    let (height, width) = (requested[0], requested[1])
    plan =
      bilinear
      ? .bilinear(
        BilinearResize(
          inputShape: input.shape, outputHeight: height, outputWidth: width, alignCorners: alignCorners,
          halfPixelCenters: halfPixelCenters))
      : .nearest(
        NearestNeighborResize(
          inputShape: input.shape, outputHeight: height, outputWidth: width, alignCorners: alignCorners,
          halfPixelCenters: halfPixelCenters))
  }

  func eval(_ context: EvalContext) throws {
    guard let plan else { throw KernelError.invalid("\(op): eval before prepare") }
    let (source, destination) = try evalPointers(input, output, op: op)
    switch plan {
    case .nearest(let nearest):
      nearest.run(from: source, to: destination, elementSize: elementSize)
    case .bilinear(let bilinear):
      let input = source.assumingMemoryBound(to: Float.self)
      let output = destination.assumingMemoryBound(to: Float.self)
      let rows = bilinear.source.batches * bilinear.rowTaps.count
      let chunks = min(rows, context.threadCount * 4)
      context.parallelFor(chunks) { chunk in
        bilinear.run(from: input, to: output, rows: (rows * chunk / chunks)..<(rows * (chunk + 1) / chunks))
      }
    }
  }
}
