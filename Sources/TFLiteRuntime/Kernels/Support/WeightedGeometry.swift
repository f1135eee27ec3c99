// Shape checks and geometry of CONV_2D and DEPTHWISE_CONV_2D, whatever their element types.

import TFLiteFormat

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
    guard filterChannels > 0, channels > 0, channels % filterChannels == 0,
      outputChannels % (channels / filterChannels) == 0
    else {
      throw KernelError.invalid("\(op) filter \(filter.shape) does not fit input \(input.shape)")
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
