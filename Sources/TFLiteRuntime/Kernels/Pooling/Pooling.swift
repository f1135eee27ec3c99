import TFLiteFormat
import TFLiteLinearAlgebra

/// The reduction of a 2-D pooling window.
enum PoolingKind: Equatable {
  /// AVERAGE_POOL_2D: mean of the in-bounds elements.
  case average
  /// MAX_POOL_2D.
  case max
  /// L2_POOL_2D: square root of the mean of squares of the in-bounds elements.
  case l2
}

/// Shape of a 2-D pooling: NHWC input and output with the same channels.
struct PoolingShape: Equatable {
  /// N.
  let batch: Int
  /// Channels.
  let channels: Int
  /// Vertical geometry (dilation 1).
  let height: WindowAxis
  /// Horizontal geometry (dilation 1).
  let width: WindowAxis
}

/// The float32 2-D pools, vectorised over channels. Padding never counts: the average and L2
/// divide by the number of in-bounds elements, as TFLite's reference kernels do.
enum FloatPooling {
  /// Computes the pool.
  static func run(
    _ kind: PoolingKind, _ shape: PoolingShape, input: UnsafePointer<Float>, activation: FloatClampRange,
    output: UnsafeMutablePointer<Float>, threadCount: Int
  ) {
    switch kind {
    case .max: run(MaximumPooling.self, shape, input: input, activation: activation, output: output, threadCount: threadCount)
    case .average: run(AveragePooling.self, shape, input: input, activation: activation, output: output, threadCount: threadCount)
    case .l2: run(L2Pooling.self, shape, input: input, activation: activation, output: output, threadCount: threadCount)
    }
  }

  /// The pool of `Reduction`, specialized for it: the reduction is chosen once, not per element,
  /// and the windows of the interior columns (all taps inside the input) take no division.
  private static func run<Reduction: PoolingReduction>(
    _: Reduction.Type, _ shape: PoolingShape, input: UnsafePointer<Float>, activation: FloatClampRange,
    output: UnsafeMutablePointer<Float>, threadCount: Int
  ) {
    let workPerRow = ChannelWindowRows.work(
      shape.width.outputSize, shape.channels, shape.height.filterSize, shape.width.filterSize)
    let interior = shape.width.interior
    let allColumns = (first: 0, end: shape.width.filterSize)
    ChannelWindowRows.forEachRow(
      rows: shape.batch * shape.height.outputSize, workPerRow: workPerRow, threadCount: threadCount
    ) { row in
      let y = row % shape.height.outputSize
      let image = row / shape.height.outputSize
      let tapsY = shape.height.validTaps(y)
      for x in 0..<shape.width.outputSize {
        let pixel = PoolingPixel<Reduction>(
          shape: shape, activation: activation,
          input: input + image * shape.height.inputSize * shape.width.inputSize * shape.channels,
          output: output + (row * shape.width.outputSize + x) * shape.channels,
          originY: shape.height.inputOrigin(y), tapsY: tapsY,
          originX: shape.width.inputOrigin(x), tapsX: interior.contains(x) ? allColumns : shape.width.validTaps(x))
        forEachChannelBlock(channels: shape.channels, pixel)
      }
    }
  }
}

/// How a pool combines its window: a start value, a lane-wise combination, a final step over the
/// number of in-bounds elements.
private protocol PoolingReduction {
  /// The value the window's combination starts from.
  static var start: Float { get }
  /// `result` combined with one element.
  static func combine<Vector: ChannelVector>(_ result: Vector, _ value: Vector) -> Vector
  /// The pool's value from the combination of `count` elements.
  static func finish<Vector: ChannelVector>(_ result: Vector, count: Int) -> Vector
}

/// MAX_POOL_2D: the largest element (TFLite's lowest float to start).
private enum MaximumPooling: PoolingReduction {
  static var start: Float { -.greatestFiniteMagnitude }
  @inline(__always)
  static func combine<Vector: ChannelVector>(_ result: Vector, _ value: Vector) -> Vector { result.maximum(value) }
  @inline(__always)
  static func finish<Vector: ChannelVector>(_ result: Vector, count: Int) -> Vector { result }
}

/// AVERAGE_POOL_2D: the sum over the count.
private enum AveragePooling: PoolingReduction {
  static var start: Float { 0 }
  @inline(__always)
  static func combine<Vector: ChannelVector>(_ result: Vector, _ value: Vector) -> Vector { result + value }
  @inline(__always)
  static func finish<Vector: ChannelVector>(_ result: Vector, count: Int) -> Vector {
    result / Vector(repeating: Float(count))
  }
}

/// L2_POOL_2D: the square root of the mean of squares.
private enum L2Pooling: PoolingReduction {
  static var start: Float { 0 }
  @inline(__always)
  static func combine<Vector: ChannelVector>(_ result: Vector, _ value: Vector) -> Vector {
    var sum = result
    sum.multiplyAdd(value, value)
    return sum
  }
  @inline(__always)
  static func finish<Vector: ChannelVector>(_ result: Vector, count: Int) -> Vector {
    (result / Vector(repeating: Float(count))).squareRoot()
  }
}

/// One output pixel of a pool, for one block of channels.
private struct PoolingPixel<Reduction: PoolingReduction>: ChannelBlockOperation {
  let shape: PoolingShape
  let activation: FloatClampRange
  /// First element of the input image; first element of the output pixel.
  let input: UnsafePointer<Float>
  let output: UnsafeMutablePointer<Float>
  let originY: Int
  let tapsY: (first: Int, end: Int)
  let originX: Int
  let tapsX: (first: Int, end: Int)

  @inline(__always)
  func run<Vector: ChannelVector>(_ vector: Vector.Type, channel: Int) {
    // Wrapping index arithmetic: offsets stay inside the validated input tensor.
    let channels = shape.channels
    let rowStride = shape.width.inputSize &* channels
    let tapRows = tapsY.end &- tapsY.first
    let tapColumns = tapsX.end &- tapsX.first
    var row = input + ((originY &+ tapsY.first) &* rowStride &+ (originX &+ tapsX.first) &* channels &+ channel)
    var result = Vector(repeating: Reduction.start)
    for _ in 0..<tapRows {
      var source = row
      for _ in 0..<tapColumns {
        result = Reduction.combine(result, Vector.load(source))
        source += channels
      }
      row += rowStride
    }
    Reduction.finish(result, count: tapRows &* tapColumns).clamped(activation).store(to: output + channel)
  }
}

/// The float32 2-D pools: input `[N,H,W,C]` → output `[N,OH,OW,C]`.
class Pool2DKernel {
  private let kind: PoolingKind
  private let op: String
  private let input: RuntimeTensor
  private let output: RuntimeTensor
  private let options: Pool2DOptions
  private let activation: FloatClampRange
  private var shape: PoolingShape?

  init(node: Node, kind: PoolingKind, op: String) throws {
    self.kind = kind
    self.op = op
    (input, output) = try node.singleInputAndOutput()
    try FloatOperands.require([input, output], op: op)
    options = try FloatOperands.options(of: node, op: op, defaults: Pool2DOptions()) {
      if case .pool2DOptions(let options) = $0 { options } else { nil }
    }
    activation = try FloatClampRange(options.fusedActivationFunction, op: op)
  }

  func prepare(_ context: inout PrepareContext) throws {
    try FloatOperands.requireRank(input, 4, op: op, role: "input")
    let heightAxis = try WindowAxis(
      op: op, axis: "height", inputSize: input.shape[1], filterSize: Int(options.filterHeight),
      stride: options.strideH, dilation: 1, padding: options.padding)
    let widthAxis = try WindowAxis(
      op: op, axis: "width", inputSize: input.shape[2], filterSize: Int(options.filterWidth),
      stride: options.strideW, dilation: 1, padding: options.padding)
    output.shape = [input.shape[0], heightAxis.outputSize, widthAxis.outputSize, input.shape[3]]
    shape = PoolingShape(batch: input.shape[0], channels: input.shape[3], height: heightAxis, width: widthAxis)
  }

  func eval(_ context: EvalContext) throws {
    guard output.elementCount > 0 else { return }
    guard let shape else { throw KernelError.invalid("\(op) was not prepared") }
    FloatPooling.run(
      kind, shape, input: input.pointer(as: Float.self), activation: activation, output: output.pointer(as: Float.self),
      threadCount: context.threadCount)
  }
}

/// AVERAGE_POOL_2D (float32).
final class AveragePool2DKernel: Pool2DKernel, Kernel {
  required init(node: Node) throws { try super.init(node: node, kind: .average, op: "AVERAGE_POOL_2D") }
}

/// MAX_POOL_2D (float32).
final class MaxPool2DKernel: Pool2DKernel, Kernel {
  required init(node: Node) throws { try super.init(node: node, kind: .max, op: "MAX_POOL_2D") }
}

/// L2_POOL_2D (float32).
final class L2Pool2DKernel: Pool2DKernel, Kernel {
  required init(node: Node) throws { try super.init(node: node, kind: .l2, op: "L2_POOL_2D") }
}
