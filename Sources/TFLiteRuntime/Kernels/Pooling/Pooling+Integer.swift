// Quantized AVERAGE_POOL_2D and MAX_POOL_2D (int8, uint8, int16), bit-exact with LiteRT's
// reference kernels: the input and output share their quantization, so the pools work on raw
// values. The average sums the in-bounds taps in int32 and divides rounding half away from zero;
// both clamp to the fused activation's quantized range. The average takes eight channels at a
// time in Int32 lanes; the maximum sixteen in the element's own lanes (bytes for int8 and uint8:
// the maximum of raw values needs no widening), starting from the clamp's lower bound.

import TFLiteFormat
import TFLiteLinearAlgebra

/// One output row of a quantized pool, for every channel.
private struct IntegerPoolingRow<Element: QuantizedInteger> {
  let kind: PoolingKind
  let shape: PoolingShape
  let clamp: ClosedRange<Int32>

  /// Computes output row `row` (image-major) from `input` into `output`.
  func run(row: Int, input: UnsafePointer<Element>, output: UnsafeMutablePointer<Element>) {
    let y = row % shape.height.outputSize
    let image = row / shape.height.outputSize
    let channels = shape.channels
    let rowStride = shape.width.inputSize * channels
    let imageStart = input + image * shape.height.inputSize * rowStride
    let originY = shape.height.inputOrigin(y)
    let tapsY = shape.height.validTaps(y)
    for x in 0..<shape.width.outputSize {
      let originX = shape.width.inputOrigin(x)
      let tapsX = shape.width.validTaps(x)
      let first = imageStart + (originY + tapsY.first) * rowStride + (originX + tapsX.first) * channels
      let tapRows = tapsY.end - tapsY.first
      let tapColumns = tapsX.end - tapsX.first
      let count = Int32(tapRows * tapColumns)
      let destination = output + (row * shape.width.outputSize + x) * channels
      var channel = 0
      if kind == .max {
        channel = maximumBlocks(first: first, tapRows: tapRows, tapColumns: tapColumns, rowStride: rowStride, into: destination)
      }
      while kind == .average && channel + 8 <= channels {
        var sum = SIMD8<Int32>()
        for ky in 0..<tapRows {
          for kx in 0..<tapColumns { sum &+= Element.loadWidened(first + ky * rowStride + kx * channels + channel) }
        }
        Element.storeNarrowed(roundedQuotient(sum, count).clamped(to: clamp), to: destination + channel)
        channel += 8
      }
      for tail in channel..<channels {
        var accumulator: Int32 = kind == .max ? Int32(Element.min) : 0
        for ky in 0..<tapRows {
          for kx in 0..<tapColumns {
            let value = Int32(truncatingIfNeeded: first[ky * rowStride + kx * channels + tail])
            accumulator = kind == .max ? max(accumulator, value) : accumulator &+ value
          }
        }
        if kind == .average {
          accumulator = (accumulator > 0 ? accumulator &+ count / 2 : accumulator &- count / 2) / count
        }
        destination[tail] = Element(truncatingIfNeeded: min(max(accumulator, clamp.lowerBound), clamp.upperBound))
      }
    }
  }

  /// The clamped maximum over the window whose first in-bounds tap is `first` for every whole
  /// block of 16 channels, into `destination`; returns the first channel it left.
  @inline(__always)
  private func maximumBlocks(
    first: UnsafePointer<Element>, tapRows: Int, tapColumns: Int, rowStride: Int, into destination: UnsafeMutablePointer<Element>
  ) -> Int {
    let channels = shape.channels
    // The clamp's bounds lie inside the element's range (the output has the input's type).
    let lower = SIMD16<Element>(repeating: Element(truncatingIfNeeded: clamp.lowerBound))
    let upper = SIMD16<Element>(repeating: Element(truncatingIfNeeded: clamp.upperBound))
    var channel = 0
    while channel &+ 16 <= channels {
      var accumulator = lower
      for ky in 0..<tapRows {
        let tapRow = first + (ky &* rowStride &+ channel)
        for kx in 0..<tapColumns {
          accumulator = pointwiseMax(
            accumulator, UnsafeRawPointer(tapRow + kx &* channels).loadUnaligned(as: SIMD16<Element>.self))
        }
      }
      UnsafeMutableRawPointer(destination + channel).storeBytes(
        of: pointwiseMin(accumulator, upper), as: SIMD16<Element>.self)
      channel &+= 16
    }
    return channel
  }
}

/// `sum / count` rounded half away from zero, as TFLite's integer average pools divide (`count`
/// is positive). The divisions go lane by lane: the generic SIMD division is far slower.
@inline(__always)
private func roundedQuotient(_ sum: SIMD8<Int32>, _ count: Int32) -> SIMD8<Int32> {
  let half = SIMD8<Int32>(repeating: count / 2)
  let dividend = sum &+ half.replacing(with: 0 &- half, whereNegative: sum &- 1)
  var quotient = SIMD8<Int32>()
  for lane in 0..<8 { quotient[lane] = dividend[lane] / count }
  return quotient
}

/// Runs the rows of a pool on the available threads.
private struct TypedIntegerPooling<Element: QuantizedInteger> {
  let row: IntegerPoolingRow<Element>
  func run(input: UnsafeRawPointer, output: UnsafeMutableRawPointer, threadCount: Int) {
    let shape = row.shape
    let source = input.assumingMemoryBound(to: Element.self)
    let destination = output.assumingMemoryBound(to: Element.self)
    ChannelWindowRows.forEachRow(
      rows: shape.batch * shape.height.outputSize,
      workPerRow: ChannelWindowRows.work(
        shape.width.outputSize, shape.channels, shape.height.filterSize, shape.width.filterSize),
      threadCount: threadCount
    ) { index in
      row.run(row: index, input: source, output: destination)
    }
  }
}

/// Builds the typed pool (a closure formed where the element type is concrete).
private struct IntegerPoolingFactory: QuantizedTypeVisitor {
  let kind: PoolingKind
  let shape: PoolingShape
  let clamp: ClosedRange<Int32>
  func visit<Element: QuantizedInteger>(_ type: Element.Type) throws
    -> (UnsafeRawPointer, UnsafeMutableRawPointer, Int) -> Void
  {
    let pooling = TypedIntegerPooling(row: IntegerPoolingRow<Element>(kind: kind, shape: shape, clamp: clamp))
    return { pooling.run(input: $0, output: $1, threadCount: $2) }
  }
}

/// The quantized 2-D pools: input `[N,H,W,C]` → output `[N,OH,OW,C]` of the same type.
class IntegerPool2DKernel {
  private let kind: PoolingKind
  private let op: String
  private let input: RuntimeTensor
  private let output: RuntimeTensor
  private let options: Pool2DOptions
  private let activation: FusedActivation
  /// The typed pool: input, output, thread count.
  private var runner: ((UnsafeRawPointer, UnsafeMutableRawPointer, Int) -> Void)?

  init(node: Node, kind: PoolingKind, op: String) throws {
    self.kind = kind
    self.op = op
    (input, output) = try node.singleInputAndOutput()
    guard input.type == output.type, [.int8, .uint8, .int16].contains(input.type) else {
      throw KernelError.unsupported("\(op) from \(input.type.name) to \(output.type.name) in the quantized kernels")
    }
    options = try FloatOperands.options(of: node, op: op, defaults: Pool2DOptions()) {
      if case .pool2DOptions(let options) = $0 { options } else { nil }
    }
    activation = try FusedActivation(options.fusedActivationFunction, op: op)
  }

  func prepare(_ context: inout PrepareContext) throws {
    try FloatOperands.requireRank(input, 4, op: op, role: "input")
    _ = try QuantizedOperand(input, op: op)
    let result = try QuantizedOperand(output, op: op)
    let heightAxis = try WindowAxis(
      op: op, axis: "height", inputSize: input.shape[1], filterSize: Int(options.filterHeight),
      stride: options.strideH, dilation: 1, padding: options.padding)
    let widthAxis = try WindowAxis(
      op: op, axis: "width", inputSize: input.shape[2], filterSize: Int(options.filterWidth),
      stride: options.strideW, dilation: 1, padding: options.padding)
    for axis in [heightAxis, widthAxis] {
      let emptyWindow = (0..<axis.outputSize).contains { position in
        let taps = axis.validTaps(position)
        return taps.end <= taps.first
      }
      if emptyWindow { throw KernelError.invalid("\(op): a pooling window of \(input.summary) covers no input element") }
    }
    output.shape = [input.shape[0], heightAxis.outputSize, widthAxis.outputSize, input.shape[3]]
    let shape = PoolingShape(batch: input.shape[0], channels: input.shape[3], height: heightAxis, width: widthAxis)
    runner = try input.type.visitQuantized(
      IntegerPoolingFactory(kind: kind, shape: shape, clamp: result.activationRange(activation)))
  }

  func eval(_ context: EvalContext) throws {
    guard output.elementCount > 0 else { return }
    guard let runner else { throw KernelError.invalid("\(op) was not prepared") }
    runner(try tensorData(input), try tensorData(output), context.threadCount)
  }
}

/// AVERAGE_POOL_2D on quantized tensors.
final class IntegerAveragePool2DKernel: IntegerPool2DKernel, Kernel {
  required init(node: Node) throws { try super.init(node: node, kind: .average, op: "AVERAGE_POOL_2D") }
}

/// MAX_POOL_2D on quantized tensors.
final class IntegerMaxPool2DKernel: IntegerPool2DKernel, Kernel {
  required init(node: Node) throws { try super.init(node: node, kind: .max, op: "MAX_POOL_2D") }
}
