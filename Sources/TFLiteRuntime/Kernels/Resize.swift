// RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR on NHWC tensors. Source coordinates are

import TFLiteFormat
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

// MARK: - Kernels

extension KernelRegistry {
  /// RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR.
  // Written once by its initializer and only read afterwards.
  nonisolated(unsafe) static let resize: [String: any Kernel.Type] = [
    "RESIZE_BILINEAR": ResizeBilinearKernel.self, "RESIZE_NEAREST_NEIGHBOR": ResizeNearestNeighborKernel.self,
  ]
}

/// The operands and coordinate options shared by the two resize kernels.
private struct ResizeOperands {
  let input: RuntimeTensor
  let size: RuntimeTensor
  let output: RuntimeTensor
  let alignCorners: Bool
  let halfPixelCenters: Bool

  init(node: Node, op: String, alignCorners: Bool, halfPixelCenters: Bool) throws {
    try node.expect(inputs: 2, outputs: 1)
    input = try node.input(0)
    size = try node.input(1)
    output = try node.output(0)
    try requireSameType([input, output], op: op)
    guard !(alignCorners && halfPixelCenters) else {
      throw KernelError.invalid("\(op): align_corners and half_pixel_centers cannot both be set")
    }
    self.alignCorners = alignCorners
    self.halfPixelCenters = halfPixelCenters
  }

  /// Sets the output shape from the constant size operand and returns (height, width).
  func resolveOutput(op: String) throws -> (height: Int, width: Int) {
    let requested = try constantIntegers(size, op: op, operand: "size")
    output.shape = try resizedShape(inputShape: input.shape, size: requested, op: op)
    return (requested[0], requested[1])
  }
}

/// RESIZE_BILINEAR of float32 tensors; rows are spread over the threads.
final class ResizeBilinearKernel: Kernel {
  private static let opName = "RESIZE_BILINEAR"
  private let operands: ResizeOperands
  private var plan: BilinearResize?

  init(node: Node) throws {
    guard case .resizeBilinearOptions(let options) = node.options else {
      throw KernelError.invalid("RESIZE_BILINEAR: missing options")
    }
    operands = try ResizeOperands(
      node: node, op: Self.opName, alignCorners: options.alignCorners, halfPixelCenters: options.halfPixelCenters)
    guard operands.input.type == .float32 else {
      throw KernelError.unsupported("RESIZE_BILINEAR: \(operands.input.type.name) tensors")
    }
  }

  func prepare(_ context: inout PrepareContext) throws {
    let (height, width) = try operands.resolveOutput(op: Self.opName)
    plan = BilinearResize(
      inputShape: operands.input.shape, outputHeight: height, outputWidth: width,
      alignCorners: operands.alignCorners, halfPixelCenters: operands.halfPixelCenters)
  }

  func eval(_ context: EvalContext) throws {
    guard let plan else { throw KernelError.invalid("RESIZE_BILINEAR: eval before prepare") }
    let (source, destination) = try evalPointers(operands.input, operands.output, op: Self.opName)
    let input = source.assumingMemoryBound(to: Float.self)
    let output = destination.assumingMemoryBound(to: Float.self)
    let rows = plan.batches * plan.rowTaps.count
    let chunks = min(rows, context.threadCount * 4)
    context.parallelFor(chunks) { chunk in
      plan.run(from: input, to: output, rows: (rows * chunk / chunks)..<(rows * (chunk + 1) / chunks))
    }
  }
}

/// RESIZE_NEAREST_NEIGHBOR of any element type.
final class ResizeNearestNeighborKernel: Kernel {
  private static let opName = "RESIZE_NEAREST_NEIGHBOR"
  private let operands: ResizeOperands
  private let elementSize: Int
  private var plan: NearestNeighborResize?

  init(node: Node) throws {
    guard case .resizeNearestNeighborOptions(let options) = node.options else {
      throw KernelError.invalid("RESIZE_NEAREST_NEIGHBOR: missing options")
    }
    operands = try ResizeOperands(
      node: node, op: Self.opName, alignCorners: options.alignCorners, halfPixelCenters: options.halfPixelCenters)
    elementSize = try movableElementSize(operands.input, op: Self.opName)
  }

  func prepare(_ context: inout PrepareContext) throws {
    let (height, width) = try operands.resolveOutput(op: Self.opName)
    plan = NearestNeighborResize(
      inputShape: operands.input.shape, outputHeight: height, outputWidth: width,
      alignCorners: operands.alignCorners, halfPixelCenters: operands.halfPixelCenters)
  }

  func eval(_ context: EvalContext) throws {
    guard let plan else { throw KernelError.invalid("RESIZE_NEAREST_NEIGHBOR: eval before prepare") }
    let (source, destination) = try evalPointers(operands.input, operands.output, op: Self.opName)
    plan.run(from: source, to: destination, elementSize: elementSize)
  }
}
