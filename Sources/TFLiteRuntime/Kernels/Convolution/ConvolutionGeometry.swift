// The geometry of the windowed operators (convolutions, pools, MediaPipe's transposed
// convolution): one spatial axis (`WindowAxis`, by TFLite's padding rules) and the shape checks
// of CONV_2D and DEPTHWISE_CONV_2D, whatever their element types.

import TFLiteFormat

/// One spatial axis of a windowed op (convolution, pooling): output size and leading padding by
/// TFLite's rules (`ComputeOutSize` / `ComputePaddingWithOffset`: odd total padding goes after).
struct WindowAxis: Equatable {
  /// Input extent.
  let inputSize: Int
  /// Filter (window) extent before dilation.
  let filterSize: Int
  /// Step between output positions.
  let stride: Int
  /// Spacing between filter taps.
  let dilation: Int
  /// Output extent.
  let outputSize: Int
  /// Padding before the first input element.
  let paddingBefore: Int

  /// Computes the output size and padding; nil when the parameters are not positive or the
  /// window does not fit (VALID with a filter larger than the input).
  init?(inputSize: Int, filterSize: Int, stride: Int, dilation: Int, samePadding: Bool) {
    guard inputSize >= 0, filterSize > 0, stride > 0, dilation > 0 else { return nil }
    let (span, spanOverflow) = (filterSize - 1).multipliedReportingOverflow(by: dilation)
    guard !spanOverflow, span < Int.max - inputSize - stride else { return nil }
    let effectiveFilter = span + 1
    let output = samePadding ? (inputSize + stride - 1) / stride : (inputSize + stride - effectiveFilter) / stride
    guard output >= 0 else { return nil }
    self.inputSize = inputSize
    self.filterSize = filterSize
    self.stride = stride
    self.dilation = dilation
    outputSize = output
    let total = max(0, (output - 1) * stride + effectiveFilter - inputSize)
    paddingBefore = total / 2
  }

  /// The axis of a VALID window over the input with `before` and `after` elements of zeros added
  /// (a zero PAD folded into the window op, see `OperatorFusion`): the taps in that padding are
  /// the ones `validTaps` leaves out. nil when a parameter is not positive, a padding is negative
  /// or the window does not fit the padded extent.
  init?(inputSize: Int, filterSize: Int, stride: Int, dilation: Int, paddingBefore before: Int, paddingAfter after: Int) {
    guard before >= 0, after >= 0, inputSize >= 0 else { return nil }
    let (partial, firstOverflow) = inputSize.addingReportingOverflow(before)
    let (padded, secondOverflow) = partial.addingReportingOverflow(after)
    guard !firstOverflow, !secondOverflow,
      let window = WindowAxis(
        inputSize: padded, filterSize: filterSize, stride: stride, dilation: dilation, samePadding: false)
    else { return nil }
    self.inputSize = inputSize
    self.filterSize = filterSize
    self.stride = stride
    self.dilation = dilation
    outputSize = window.outputSize
    paddingBefore = before
  }

  /// First input coordinate read by output position `output` (may be negative: padding).
  /// Wrapping arithmetic: for outputs of a validated axis the value is bounded by the input size.
  @inline(__always)
  func inputOrigin(_ output: Int) -> Int { output &* stride &- paddingBefore }

  /// Taps `first ..< end` of output position `output` that land inside the input.
  @inline(__always)
  func validTaps(_ output: Int) -> (first: Int, end: Int) {
    let origin = inputOrigin(output)
    // Without dilation the taps are input positions themselves: no divisions (im2col asks per row).
    if dilation == 1 {
      let end = max(0, min(filterSize, inputSize &- origin))
      return (min(max(0, 0 &- origin), end), end)
    }
    // Smallest tap with origin + tap*dilation >= 0, and first tap with origin + tap*dilation >= inputSize.
    let first = origin >= 0 ? 0 : (-origin + dilation - 1) / dilation
    let end = origin >= inputSize ? 0 : min(filterSize, (inputSize - origin + dilation - 1) / dilation)
    return (min(first, end), end)
  }

  /// Output positions whose every tap is inside the input (`start ..< end`, possibly empty).
  var interior: Range<Int> {
    let start = min(outputSize, (paddingBefore + stride - 1) / stride)
    // Last tap of position o is o*stride - padding + (filter-1)*dilation <= inputSize - 1.
    let limit = inputSize - 1 + paddingBefore - (filterSize - 1) * dilation
    let end = limit < 0 ? 0 : min(outputSize, limit / stride + 1)
    return start..<max(start, end)
  }
}

extension WindowAxis {
  /// The axis of a windowed op, or `KernelError.invalid` naming the op when it has no valid output.
  init(
    op: String, axis: String, inputSize: Int, filterSize: Int, stride: Int32, dilation: Int32, padding: Padding
  ) throws {
    guard padding == .same || padding == .valid else {
      throw KernelError.invalid("\(op) has unknown padding \(padding.rawValue)")
    }
    guard
      let value = WindowAxis(
        inputSize: inputSize, filterSize: filterSize, stride: Int(stride), dilation: Int(dilation),
        samePadding: padding == .same)
    else {
      throw KernelError.invalid(
        "\(op) \(axis): input \(inputSize), filter \(filterSize), stride \(stride), dilation \(dilation), padding \(padding.name) give no valid output")
    }
    self = value
  }
}

extension WindowAxis {
  /// One axis of MediaPipe's Convolution2DTransposeBias, described like a TRANSPOSE_CONV axis
  /// (`inputSize` is the transposed convolution's output extent, `outputSize` its input extent).
  /// The full extent `stride·(size-1) + kernel` is cropped by `kernel - (size-1) mod stride - 1`
  /// (at least 0) with SAME padding, half of it (rounded down) before the first element.
  init(transposedConvolutionBiasOf size: Int, kernel: Int, stride: Int, samePadding: Bool, op: String) throws {
    guard size > 0, kernel > 0 else {
      throw KernelError.invalid("\(op) needs a positive input extent and kernel, got \(size) and \(kernel)")
    }
    let (scaled, scaleOverflow) = (size - 1).multipliedReportingOverflow(by: stride)
    let (full, addOverflow) = scaled.addingReportingOverflow(kernel)
    guard !scaleOverflow, !addOverflow else {
      throw KernelError.invalid("\(op) output extent of input \(size), kernel \(kernel), stride \(stride) overflows")
    }
    let crop = samePadding ? max(0, kernel - (size - 1) % stride - 1) : 0
    inputSize = full - crop
    filterSize = kernel
    self.stride = stride
    dilation = 1
    outputSize = size
    paddingBefore = crop / 2
  }
}

/// Shape of a CONV_2D: NHWC input, OHWI filter (`[out, h, w, in / groups]`), NHWC output.
struct ConvolutionShape: Equatable {
  /// N.
  let batch: Int
  /// Input channels (all groups).
  let inputChannels: Int
  /// Filter input channels: channels of one group.
  let groupInputChannels: Int
  /// Output channels (all groups).
  let outputChannels: Int
  /// Vertical geometry.
  let height: WindowAxis
  /// Horizontal geometry.
  let width: WindowAxis

  /// Number of groups (`inputChannels / groupInputChannels`).
  var groups: Int { inputChannels / groupInputChannels }
  /// Output channels of one group: N of each GEMM.
  var groupOutputChannels: Int { outputChannels / groups }
  /// Rows of each GEMM: every output pixel.
  var gemmRows: Int { batch * height.outputSize * width.outputSize }
  /// Depth of each GEMM: one filter of a group.
  var gemmDepth: Int { height.filterSize * width.filterSize * groupInputChannels }
  /// True for a 1×1 stride-1 filter without padding: the input itself is the left-hand matrix.
  var readsInputInPlace: Bool {
    height.filterSize == 1 && width.filterSize == 1 && height.stride == 1 && width.stride == 1
      && height.paddingBefore == 0 && width.paddingBefore == 0
  }
}

/// Zeros added around the height and width of an NHWC input (a PAD folded into the window op that
/// reads it).
struct SpatialPadding: Equatable {
  /// Rows added above and below.
  let top: Int, bottom: Int
  /// Columns added left and right.
  let left: Int, right: Int
}

/// Shape of a DEPTHWISE_CONV_2D: NHWC input, filter `[1, h, w, in * multiplier]`, NHWC output.
struct DepthwiseShape: Equatable {
  /// N.
  let batch: Int
  /// Input channels.
  let inputChannels: Int
  /// Output channels per input channel.
  let multiplier: Int
  /// Vertical geometry.
  let height: WindowAxis
  /// Horizontal geometry.
  let width: WindowAxis

  /// Output channels: output channel `c` reads input channel `c / multiplier`.
  var outputChannels: Int { inputChannels * multiplier }
}

extension WindowAxis {
  /// The height and width axes of a 2-D window over NHWC `input` with an `[_, KH, KW, _]` filter.
  static func spatialAxes(
    op: String, input: RuntimeTensor, filter: RuntimeTensor, strides: (Int32, Int32), dilations: (Int32, Int32),
    padding: Padding
  ) throws -> (height: WindowAxis, width: WindowAxis) {
    (
      try WindowAxis(
        op: op, axis: "height", inputSize: input.shape[1], filterSize: filter.shape[1], stride: strides.0,
        dilation: dilations.0, padding: padding),
      try WindowAxis(
        op: op, axis: "width", inputSize: input.shape[2], filterSize: filter.shape[2], stride: strides.1,
        dilation: dilations.1, padding: padding)
    )
  }
}

extension ConvolutionShape {
  /// Checks a CONV_2D node's input `[N, H, W, C]`, filter `[O, KH, KW, C / groups]` and optional
  /// bias `[O]`, and computes its geometry; throws `invalid` for operands that do not fit.
  init(conv2DInput input: RuntimeTensor, filter: RuntimeTensor, bias: RuntimeTensor?, options: Conv2DOptions, op: String)
    throws
  {
    try FloatOperands.requireRank(input, 4, op: op, role: "input")
    try FloatOperands.requireRank(filter, 4, op: op, role: "filter")
    let channels = input.shape[3]
    let (outputChannels, filterChannels) = (filter.shape[0], filter.shape[3])
    guard filterChannels > 0, channels > 0, channels % filterChannels == 0 else {
      throw KernelError.invalid("\(op) filter input channels \(filterChannels) do not divide the input's \(channels)")
    }
    let groups = channels / filterChannels
    guard outputChannels % groups == 0 else {
      throw KernelError.invalid("\(op) output channels \(outputChannels) are not a multiple of the \(groups) groups")
    }
    try FloatOperands.requireBias(bias, count: outputChannels, op: op)
    let (height, width) = try WindowAxis.spatialAxes(
      op: op, input: input, filter: filter, strides: (options.strideH, options.strideW),
      dilations: (options.dilationHFactor, options.dilationWFactor), padding: options.padding)
    self.init(
      batch: input.shape[0], inputChannels: channels, groupInputChannels: filterChannels,
      outputChannels: outputChannels, height: height, width: width)
    _ = try FloatOperands.checkedCount(outputShape, "\(op) output")
  }

  /// The output shape `[N, OH, OW, O]`.
  var outputShape: [Int] { [batch, height.outputSize, width.outputSize, outputChannels] }

  /// Splits GEMM rows (output pixels) `rowStart ..< rowStart + rowCount` into runs within one
  /// output row and calls `body(image, y, firstX, count, row)` for each: pixels
  /// `firstX ..< firstX + count` of output row `y` of image `image`, the first of them GEMM row
  /// `rowStart + row`. The im2col gathers walk their blocks this way. The first run's position
  /// comes from divisions, the next runs' by counting rows.
  @inline(__always)
  func forEachOutputRowRun(
    rowStart: Int, rowCount: Int, _ body: (_ image: Int, _ y: Int, _ firstX: Int, _ count: Int, _ row: Int) -> Void
  ) {
    let outputWidth = width.outputSize
    let outputHeight = height.outputSize
    let imagePixels = outputHeight &* outputWidth
    var image = rowStart / imagePixels
    var y = rowStart % imagePixels / outputWidth
    var x = rowStart % outputWidth
    var row = 0
    while row < rowCount {
      let count = min(outputWidth &- x, rowCount &- row)
      body(image, y, x, count, row)
      row &+= count
      x = 0
      y &+= 1
      if y == outputHeight {
        y = 0
        image &+= 1
      }
    }
  }
}

extension DepthwiseShape {
  /// Checks a DEPTHWISE_CONV_2D node's input `[N, H, W, C]`, filter `[1, KH, KW, C · multiplier]`
  /// and optional bias, and computes its geometry; throws `invalid` for operands that do not fit.
  init(
    depthwiseInput input: RuntimeTensor, filter: RuntimeTensor, bias: RuntimeTensor?, options: DepthwiseConv2DOptions,
    op: String
  ) throws {
    try FloatOperands.requireRank(input, 4, op: op, role: "input")
    try FloatOperands.requireRank(filter, 4, op: op, role: "filter")
    let channels = input.shape[3]
    let outputChannels = filter.shape[3]
    guard filter.shape[0] == 1, channels > 0, outputChannels > 0, outputChannels % channels == 0 else {
      throw KernelError.invalid("\(op) filter \(filter.shape) does not fit input channels \(channels)")
    }
    try FloatOperands.requireBias(bias, count: outputChannels, op: op)
    let (height, width) = try WindowAxis.spatialAxes(
      op: op, input: input, filter: filter, strides: (options.strideH, options.strideW),
      dilations: (options.dilationHFactor, options.dilationWFactor), padding: options.padding)
    self.init(
      batch: input.shape[0], inputChannels: channels, multiplier: outputChannels / channels, height: height,
      width: width)
    _ = try FloatOperands.checkedCount(outputShape, "\(op) output")
  }

  /// The output shape `[N, OH, OW, C · multiplier]`.
  var outputShape: [Int] { [batch, height.outputSize, width.outputSize, outputChannels] }
}
