import TFLiteFormat
import TFLiteLinearAlgebra

/// DEPTHWISE_CONV_2D in float32, vectorised over channels.
///
/// With a multiplier above 1 the input is first expanded (each channel repeated `multiplier` times)
/// into scratch, so the one channel-aligned loop serves every case.
enum FloatDepthwiseConvolution {
  /// Scratch bytes `run` needs (the expanded input when `multiplier > 1`).
  static func scratchBytes(_ shape: DepthwiseShape) -> Int {
    guard shape.multiplier > 1 else { return 0 }
    return shape.batch * shape.height.inputSize * shape.width.inputSize * shape.outputChannels
      * MemoryLayout<Float>.stride
  }

  /// Computes the convolution. `bias` has `outputChannels` values or is nil. Whole 16-channel
  /// blocks run on `generatedKernels` when given (by default those this thread may use, see
  /// `GeneratedDepthwiseKernels`), the other channels on Swift SIMD code whose multiply-adds are
  /// fused when `usesFusedMultiplyAdd` (by default when this build has hardware FMA, see
  /// `FusedMultiplyAdd`).
  static func run(
    _ shape: DepthwiseShape, input: UnsafePointer<Float>, filter: UnsafePointer<Float>, bias: UnsafePointer<Float>?,
    activation: FloatClampRange, output: UnsafeMutablePointer<Float>, threadCount: Int,
    scratch: UnsafeMutableRawPointer?, usesFusedMultiplyAdd: Bool = FusedMultiplyAdd.isHardware,
    generatedKernels: GeneratedDepthwiseKernels? = GeneratedDepthwiseKernels.current
  ) {
    var source = input
    if shape.multiplier > 1, let scratch {
      let expanded = scratch.assumingMemoryBound(to: Float.self)
      let pixels = shape.batch * shape.height.inputSize * shape.width.inputSize
      for pixel in 0..<pixels {
        let from = input + pixel * shape.inputChannels
        var to = expanded + pixel * shape.outputChannels
        for channel in 0..<shape.inputChannels {
          to.update(repeating: from[channel], count: shape.multiplier)
          to += shape.multiplier
        }
      }
      source = UnsafePointer(expanded)
    }
    let workPerRow = ChannelWindowRows.work(
      shape.width.outputSize, shape.outputChannels, shape.height.filterSize, shape.width.filterSize)
    ChannelWindowRows.forEachRow(
      rows: shape.batch * shape.height.outputSize, workPerRow: workPerRow, threadCount: threadCount
    ) { row in
      var swiftChannels = 0
      if let generatedKernels {
        GeneratedDepthwiseRow(
          shape: shape, row: row, input: source, filter: filter, bias: bias, activation: activation, output: output,
          kernels: generatedKernels
        ).run()
        swiftChannels = GeneratedDepthwiseRow.channelsCovered(shape)
      }
      if usesFusedMultiplyAdd {
        forEachChannelBlock(
          channels: shape.outputChannels, startingAt: swiftChannels,
          DepthwiseRow<FusedArithmetic>(
            shape: shape, row: row, input: source, filter: filter, bias: bias, activation: activation, output: output))
      } else {
        forEachChannelBlock(
          channels: shape.outputChannels, startingAt: swiftChannels,
          DepthwiseRow<SeparateArithmetic>(
            shape: shape, row: row, input: source, filter: filter, bias: bias, activation: activation, output: output))
      }
    }
  }
}

/// One output row of a float depthwise convolution on the generated kernels, for every whole
/// block of 16 channels: the interior pixels (every filter column inside the input) in one call per
/// block, each edge pixel in a call of its own with only its valid filter columns. Filter rows
/// outside the input are left out of the tap table, so no tap reads outside the input. An interior
/// covering a whole 3×3 (or, on AVX-512, 5×5) filter runs on the kernel that keeps the filter's
/// weights in registers; it sums in the same order, so the results are the same bits.
private struct GeneratedDepthwiseRow {
  let shape: DepthwiseShape
  let filter: UnsafePointer<Float>
  let bias: UnsafePointer<Float>?
  let activation: FloatClampRange
  let kernels: GeneratedDepthwiseKernels
  /// First input element of the image, first output element of the row.
  let image: UnsafePointer<Float>
  let outputRow: UnsafeMutablePointer<Float>
  /// The valid filter rows and the input row of the first.
  let firstTapY: Int
  let endTapY: Int
  let firstInputY: Int

  /// The channels the generated kernels compute: whole blocks of 16.
  static func channelsCovered(_ shape: DepthwiseShape) -> Int {
    shape.outputChannels / DepthwiseKernelGenerator.blockChannels * DepthwiseKernelGenerator.blockChannels
  }

  init(
    shape: DepthwiseShape, row: Int, input: UnsafePointer<Float>, filter: UnsafePointer<Float>,
    bias: UnsafePointer<Float>?, activation: FloatClampRange, output: UnsafeMutablePointer<Float>,
    kernels: GeneratedDepthwiseKernels
  ) {
    self.shape = shape
    self.filter = filter
    self.bias = bias
    self.activation = activation
    self.kernels = kernels
    let y = row % shape.height.outputSize
    image = input + (row / shape.height.outputSize) * shape.height.inputSize * shape.width.inputSize * shape.outputChannels
    outputRow = output + row * shape.width.outputSize * shape.outputChannels
    (firstTapY, endTapY) = shape.height.validTaps(y)
    firstInputY = shape.height.inputOrigin(y) + firstTapY * shape.height.dilation
  }

  func run() {
    let width = shape.width
    withUnsafeTemporaryAllocation(of: Int.self, capacity: 2 * shape.height.filterSize * width.filterSize) { buffer in
      guard let taps = buffer.baseAddress else { return }
      let interior = width.interior
      if !interior.isEmpty {
        let tapCount = fillTaps(taps, firstX: 0, endX: width.filterSize)
        let wholeSquare =
          width.filterSize == shape.height.filterSize && endTapY - firstTapY == width.filterSize
          ? DepthwiseKernelGenerator.ElementKind.squareFilter(width.filterSize) : nil
        let kind = wholeSquare.flatMap { kernels.has($0) ? $0 : nil } ?? .float
        convolve(x: interior.lowerBound, count: interior.count, firstX: 0, taps: taps, tapCount: tapCount, kind: kind)
      }
      for edge in [0..<interior.lowerBound, interior.upperBound..<width.outputSize] {
        for x in edge {
          let (firstX, endX) = width.validTaps(x)
          let tapCount = fillTaps(taps, firstX: firstX, endX: endX)
          convolve(x: x, count: 1, firstX: firstX, taps: taps, tapCount: tapCount, kind: .float)
        }
      }
    }
  }

  /// Fills `taps` with the (input, weight) byte offsets of filter columns `firstX ..< endX` of the
  /// valid filter rows, inputs counted from the first of them; returns their count.
  private func fillTaps(_ taps: UnsafeMutablePointer<Int>, firstX: Int, endX: Int) -> Int {
    let channelBytes = shape.outputChannels * MemoryLayout<Float>.stride
    let width = shape.width
    var count = 0
    for ky in firstTapY..<endTapY {
      for kx in firstX..<endX {
        let inputPixel = (ky - firstTapY) * shape.height.dilation * width.inputSize + (kx - firstX) * width.dilation
        taps[2 * count] = inputPixel * channelBytes
        taps[2 * count + 1] = (ky * width.filterSize + kx) * channelBytes
        count += 1
      }
    }
    return count
  }

  /// Output pixels `x ..< x + count`, whose first tap column is `firstX`, block by block, on the
  /// `kind` kernel.
  private func convolve(
    x: Int, count: Int, firstX: Int, taps: UnsafePointer<Int>, tapCount: Int, kind: DepthwiseKernelGenerator.ElementKind
  ) {
    let channels = shape.outputChannels
    let width = shape.width
    let floatBytes = MemoryLayout<Float>.stride
    // Never dereferenced when there are no taps (the first valid row may then lie outside the input).
    let firstInput = image + (firstInputY &* width.inputSize &+ width.inputOrigin(x) &+ firstX &* width.dilation) &* channels
    for channel in stride(from: 0, to: Self.channelsCovered(shape), by: DepthwiseKernelGenerator.blockChannels) {
      var arguments = DepthwiseKernelArguments(
        input: UnsafeRawPointer(firstInput + channel), inputPixelBytes: width.stride * channels * floatBytes, taps: taps,
        tapCount: tapCount, weights: UnsafeRawPointer(filter + channel),
        start: bias.map { UnsafeRawPointer($0 + channel) } ?? kernels.zeros,
        output: UnsafeMutableRawPointer(outputRow + x * channels + channel), outputPixelBytes: channels * floatBytes,
        pixelCount: count, lower: activation.lower, upper: activation.upper)
      kernels.run(kind, &arguments)
    }
  }
}

/// The four output pixels a Swift depthwise route sums together: `first` and the next three,
/// `step` elements apart. A group past the row's end (`count` real pixels, 1 to 4) repeats its last
/// real pixel, so the loads stay inside the row; callers store only the real ones.
@inline(__always)
func fourPixels<Element>(from first: UnsafePointer<Element>, count: Int, step: Int) -> (
  UnsafePointer<Element>, UnsafePointer<Element>, UnsafePointer<Element>, UnsafePointer<Element>
) {
  (first, first + min(1, count &- 1) &* step, first + min(2, count &- 1) &* step, first + min(3, count &- 1) &* step)
}

/// Work split of the channel-vectorised window kernels: items of whole output rows.
enum ChannelWindowRows {
  /// Multiply-adds (or window reads) below which a work item is not worth handing to another thread.
  static let minimumItemWork = 100_000

  /// The product of `factors`, saturating at `Int.max` (pool windows come from options and may be huge).
  static func work(_ factors: Int...) -> Int {
    factors.reduce(1) { total, factor in
      let (product, overflow) = total.multipliedReportingOverflow(by: max(factor, 0))
      return overflow ? Int.max : product
    }
  }

  /// Calls `body(row)` for every output row in `0..<rows`: about 8 items per thread of rows dealt
  /// evenly (a multiple of the thread count, see `ParallelWork.balancedItemCount`), each at least
  /// `minimumItemWork` of `workPerRow`, all rows inline when single-threaded or small.
  static func forEachRow(rows: Int, workPerRow: Int, threadCount: Int, _ body: (Int) -> Void) {
    let affordable = min(rows, work(rows, workPerRow) / minimumItemWork)
    // Fewer rows than items wanted, each worth its own item: one row per item (rows cannot be halved).
    let itemCount =
      threadCount > 1 && affordable == rows && rows < 8 * threadCount
      ? rows : ParallelWork.balancedItemCount(wanted: 8 * threadCount, affordable: affordable, threadCount: threadCount)
    ParallelWork.run(itemCount: rows == 0 ? 0 : itemCount, threadCount: threadCount) { item, _ in
      for row in item * rows / itemCount..<(item + 1) * rows / itemCount { body(row) }
    }
  }
}

/// One output row of a depthwise convolution, for one block of channels.
private struct DepthwiseRow<Arithmetic: MultiplyAddForm>: ChannelBlockOperation {
  let shape: DepthwiseShape
  let filter: UnsafePointer<Float>
  let bias: UnsafePointer<Float>?
  let activation: FloatClampRange
  /// First input element of the image, first output element of the row.
  let image: UnsafePointer<Float>
  let outputRow: UnsafeMutablePointer<Float>
  let originY: Int
  let firstTapY: Int
  let endTapY: Int

  init(
    shape: DepthwiseShape, row: Int, input: UnsafePointer<Float>, filter: UnsafePointer<Float>,
    bias: UnsafePointer<Float>?, activation: FloatClampRange, output: UnsafeMutablePointer<Float>
  ) {
    self.shape = shape
    self.filter = filter
    self.bias = bias
    self.activation = activation
    let y = row % shape.height.outputSize
    let imageIndex = row / shape.height.outputSize
    image = input + imageIndex * shape.height.inputSize * shape.width.inputSize * shape.outputChannels
    outputRow = output + row * shape.width.outputSize * shape.outputChannels
    originY = shape.height.inputOrigin(y)
    (firstTapY, endTapY) = shape.height.validTaps(y)
  }

  func run<Vector: ChannelVector>(_ vector: Vector.Type, channel: Int) {
    // Index arithmetic wraps (&+, &*): every offset stays inside tensors whose sizes `prepare`
    // validated, and overflow checks in these loops cost more than the float work with AVX-512.
    let channels = shape.outputChannels
    let width = shape.width
    let filterWidth = width.filterSize
    let channelBias = bias.map { Vector.load($0 + channel) } ?? Vector(repeating: 0)
    let interior = width.interior
    let pixelStride = width.stride &* channels
    let tapStride = width.dilation &* channels
    let rowStride = width.inputSize &* channels
    let tapRowStride = shape.height.dilation &* rowStride
    let filterRowStride = filterWidth &* channels
    let tapRows = endTapY &- firstTapY
    let firstInputRow = image + channel + (originY &+ firstTapY &* shape.height.dilation) &* rowStride
    let firstFilterRow = filter + channel + firstTapY &* filterRowStride

    /// Sums the taps `firstX ..< endX` of the `rows` valid filter rows for one pixel (`pairs` false)
    /// or for two pixels `pixelStride` apart sharing each filter load (`pairs` true), then stores them.
    @inline(__always)
    func convolve(_ x: Int, firstX: Int, endX: Int, rows: Int, pairs: Bool) {
      var sum0 = Vector(repeating: 0)
      var sum1 = sum0
      var inputRow = firstInputRow + (width.inputOrigin(x) &+ firstX &* width.dilation) &* channels
      var filterRow = firstFilterRow + firstX &* channels
      for _ in 0..<rows {
        var source = inputRow
        var weights = filterRow
        for _ in firstX..<endX {
          let w = Vector.load(weights)
          Arithmetic.multiplyAdd(&sum0, Vector.load(source), w)
          if pairs { Arithmetic.multiplyAdd(&sum1, Vector.load(source + pixelStride), w) }
          source += tapStride
          weights += channels
        }
        inputRow += tapRowStride
        filterRow += filterRowStride
      }
      let out = outputRow + (x &* channels &+ channel)
      (sum0 + channelBias).clamped(activation).store(to: out)
      if pairs { (sum1 + channelBias).clamped(activation).store(to: out + channels) }
    }

    for x in 0..<interior.lowerBound {
      let taps = width.validTaps(x)
      convolve(x, firstX: taps.first, endX: taps.end, rows: tapRows, pairs: false)
    }
    var x = interior.lowerBound
    if tapRows == 3 && filterWidth == 3 {
      // A whole 3×3 window: the nine filter vectors stay in registers across the row.
      let w0 = Vector.load(firstFilterRow)
      let w1 = Vector.load(firstFilterRow + channels)
      let w2 = Vector.load(firstFilterRow + 2 &* channels)
      let w3 = Vector.load(firstFilterRow + filterRowStride)
      let w4 = Vector.load(firstFilterRow + (filterRowStride &+ channels))
      let w5 = Vector.load(firstFilterRow + (filterRowStride &+ 2 &* channels))
      let w6 = Vector.load(firstFilterRow + 2 &* filterRowStride)
      let w7 = Vector.load(firstFilterRow + (2 &* filterRowStride &+ channels))
      let w8 = Vector.load(firstFilterRow + (2 &* filterRowStride &+ 2 &* channels))
      var top = firstInputRow + width.inputOrigin(x) &* channels
      var out = outputRow + (x &* channels &+ channel)
      while x < interior.upperBound {
        let middle = top + tapRowStride
        let bottom = middle + tapRowStride
        var sum = Vector(repeating: 0)
        Arithmetic.multiplyAdd(&sum, Vector.load(top), w0)
        Arithmetic.multiplyAdd(&sum, Vector.load(top + tapStride), w1)
        Arithmetic.multiplyAdd(&sum, Vector.load(top + 2 &* tapStride), w2)
        Arithmetic.multiplyAdd(&sum, Vector.load(middle), w3)
        Arithmetic.multiplyAdd(&sum, Vector.load(middle + tapStride), w4)
        Arithmetic.multiplyAdd(&sum, Vector.load(middle + 2 &* tapStride), w5)
        Arithmetic.multiplyAdd(&sum, Vector.load(bottom), w6)
        Arithmetic.multiplyAdd(&sum, Vector.load(bottom + tapStride), w7)
        Arithmetic.multiplyAdd(&sum, Vector.load(bottom + 2 &* tapStride), w8)
        (sum + channelBias).clamped(activation).store(to: out)
        top += pixelStride
        out += channels
        x &+= 1
      }
    }
    // Other interiors: two pixels share each filter load. (Four would save more loads with
    // AVX-512, but their eight SIMD16 accumulators spill on the baseline SSE2 target.)
    while x &+ 2 <= interior.upperBound {
      convolve(x, firstX: 0, endX: filterWidth, rows: tapRows, pairs: true)
      x &+= 2
    }
    if x < interior.upperBound { convolve(x, firstX: 0, endX: filterWidth, rows: tapRows, pairs: false) }
    for x in interior.upperBound..<width.outputSize {
      let taps = width.validTaps(x)
      convolve(x, firstX: taps.first, endX: taps.end, rows: tapRows, pairs: false)
    }
  }
}

/// DEPTHWISE_CONV_2D (float32): inputs `input [N,H,W,C]`, `filter [1,KH,KW,C·multiplier]`, optional bias.
/// The multiplier is taken from the shapes (TFLite checks the option against them).
final class DepthwiseConv2DKernel: Kernel {
  private let operands: WeightedOperands
  private var input: RuntimeTensor { operands.input }
  private var filter: RuntimeTensor { operands.weights }
  private var bias: RuntimeTensor? { operands.bias }
  private var output: RuntimeTensor { operands.output }
  private let options: DepthwiseConv2DOptions
  private let activation: FloatClampRange
  /// The geometry once prepared.
  private(set) var shape: DepthwiseShape?

  init(node: Node) throws {
    operands = try WeightedOperands(node, op: "DEPTHWISE_CONV_2D")
    options = try FloatOperands.options(of: node, op: "DEPTHWISE_CONV_2D", defaults: DepthwiseConv2DOptions()) {
      if case .depthwiseConv2DOptions(let options) = $0 { options } else { nil }
    }
    activation = try FloatClampRange(options.fusedActivationFunction, op: "DEPTHWISE_CONV_2D")
  }

  func prepare(_ context: inout PrepareContext) throws {
    let op = "DEPTHWISE_CONV_2D"
    try FloatOperands.requireRank(input, 4, op: op, role: "input")
    try FloatOperands.requireRank(filter, 4, op: op, role: "filter")
    let (batch, height, width, channels) = (input.shape[0], input.shape[1], input.shape[2], input.shape[3])
    let outputChannels = filter.shape[3]
    guard filter.shape[0] == 1, channels > 0, outputChannels % channels == 0, outputChannels > 0 else {
      throw KernelError.invalid("\(op) filter \(filter.shape) does not fit input channels \(channels)")
    }
    try FloatOperands.requireBias(bias, count: outputChannels, op: op)
    let heightAxis = try WindowAxis(
      op: op, axis: "height", inputSize: height, filterSize: filter.shape[1], stride: options.strideH,
      dilation: options.dilationHFactor, padding: options.padding)
    let widthAxis = try WindowAxis(
      op: op, axis: "width", inputSize: width, filterSize: filter.shape[2], stride: options.strideW,
      dilation: options.dilationWFactor, padding: options.padding)
    let outputShape = [batch, heightAxis.outputSize, widthAxis.outputSize, outputChannels]
    _ = try FloatOperands.checkedCount(outputShape, "\(op) output")
    let shape = DepthwiseShape(
      batch: batch, inputChannels: channels, multiplier: outputChannels / channels, height: heightAxis, width: widthAxis)
    if shape.multiplier > 1 {
      _ = try FloatOperands.checkedCount([batch, height, width, outputChannels, 4], "\(op) expanded input")
    }
    output.shape = outputShape
    context.requestScratch(bytes: FloatDepthwiseConvolution.scratchBytes(shape))
    self.shape = shape
  }

  var kernelDescription: String? { shape.map { KernelDescription.depthwise(channels: $0.outputChannels) } }

  func eval(_ context: EvalContext) throws {
    guard output.elementCount > 0 else { return }
    guard let shape else { throw KernelError.invalid("DEPTHWISE_CONV_2D was not prepared") }
    FloatDepthwiseConvolution.run(
      shape, input: input.pointer(as: Float.self), filter: filter.pointer(as: Float.self),
      bias: bias.map { UnsafePointer($0.pointer(as: Float.self)) }, activation: activation,
      output: output.pointer(as: Float.self), threadCount: context.threadCount, scratch: context.scratch)
  }
}
