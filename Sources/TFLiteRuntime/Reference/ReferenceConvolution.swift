// CONV_2D and DEPTHWISE_CONV_2D, as TFLite's reference kernels compute them
// (`kernels/internal/reference/conv.h`, `depthwiseconv_float.h`, `integer_ops/conv.h`,
// `integer_ops/depthwise_conv.h`).
//
// CONV_2D: input [N, H, W, C], filter [O, KH, KW, C / groups] (OHWI), optional bias [O], output
// [N, OH, OW, O]. Output (n, y, x, o) is the sum over filter taps (ky, kx) and the channels of o's
// group of input(n, y·stride − pad + ky·dilation, x·…, group·C/groups + c) · filter(o, ky, kx, c),
// taps outside the input adding nothing; then bias, then the fused activation. With groups = 1 (the
// usual case) every output channel reads every input channel.
//
// DEPTHWISE_CONV_2D: filter [1, KH, KW, C · M] with M the depth multiplier; output channel
// o = c · M + m reads input channel c only, through filter column o.
//
// The float and integer forms share these loops; ``Reference/WeightedArithmetic`` holds the
// difference (see `ReferenceArithmetic.swift`).
import TFLiteLinearAlgebra


extension Reference {
  /// The checked shapes of a CONV_2D or DEPTHWISE_CONV_2D and where its window reads.
  struct ConvolutionShapes {
    /// The input, NHWC.
    let input: ImageShape
    /// The filter: OHWI for CONV_2D, [1, KH, KW, C · M] for DEPTHWISE_CONV_2D.
    let filter: ImageShape
    /// The output, NHWC.
    let output: ImageShape
    /// The window along the height.
    let rows: Axis
    /// The window along the width.
    let columns: Axis

    /// The shapes of a convolution of `input` by `filter` with `outputChannels` output channels.
    init(input: ImageShape, filter: ImageShape, outputChannels: Int, window: WindowParameters) throws {
      (rows, columns) = try window.axes(
        height: input.height, width: input.width, filterHeight: filter.height, filterWidth: filter.width)
      self.input = input
      self.filter = filter
      output = ImageShape(
        batch: input.batch, height: rows.outputSize, width: columns.outputSize, channels: outputChannels)
    }

    /// CONV_2D's shapes: the filter's depth must divide the input's (groups), and the groups the output channels.
    init(conv2D input: [Int], filter: [Int], window: WindowParameters) throws {
      let inputShape = try Reference.imageShape(input, "CONV_2D input")
      // The filter is OHWI: "batch" is the output channel count, "channels" the input channels per group.
      let filterShape = try Reference.imageShape(filter, "CONV_2D filter")
      let groupDepth = filterShape.channels
      guard groupDepth > 0, inputShape.channels > 0, inputShape.channels % groupDepth == 0 else {
        throw Error(
          "CONV_2D input has \(inputShape.channels) channels, not a positive multiple of the filter's \(groupDepth)")
      }
      let groups = inputShape.channels / groupDepth
      guard filterShape.batch % groups == 0 else {
        throw Error("CONV_2D has \(filterShape.batch) output channels for \(groups) groups")
      }
      try self.init(input: inputShape, filter: filterShape, outputChannels: filterShape.batch, window: window)
    }

    /// DEPTHWISE_CONV_2D's shapes: the filter's last dimension is a multiple of the input's channels.
    init(depthwise input: [Int], filter: [Int], window: WindowParameters) throws {
      let inputShape = try Reference.imageShape(input, "DEPTHWISE_CONV_2D input")
      // The filter is [1, KH, KW, C · M]: its last dimension is the output channel.
      let filterShape = try Reference.imageShape(filter, "DEPTHWISE_CONV_2D filter")
      guard filterShape.batch == 1, inputShape.channels > 0, filterShape.channels % inputShape.channels == 0 else {
        throw Error(
          "DEPTHWISE_CONV_2D filter \(filter) must be [1, KH, KW, C·M] for an input of \(inputShape.channels) channels")
      }
      try self.init(input: inputShape, filter: filterShape, outputChannels: filterShape.channels, window: window)
    }
  }

  /// CONV_2D's output shape for an `input` and a `filter` of these shapes (what `prepare` computes).
  public static func conv2DOutputShape(input: [Int], filter: [Int], window: WindowParameters) throws -> [Int] {
    try ConvolutionShapes(conv2D: input, filter: filter, window: window).output.dimensions
  }

  /// DEPTHWISE_CONV_2D's output shape for an `input` and a `filter` of these shapes.
  public static func depthwiseConv2DOutputShape(input: [Int], filter: [Int], window: WindowParameters) throws -> [Int] {
    try ConvolutionShapes(depthwise: input, filter: filter, window: window).output.dimensions
  }

  /// Float CONV_2D (see the file header).
  public static func conv2D(
    input: Tensor<Float>, filter: Tensor<Float>, bias: [Float]?, window: WindowParameters, activation: FusedActivation,
    into destination: Destination<Float> = .newTensor
  ) throws -> Tensor<Float> {
    try conv2D(
      input: input, filter: filter, window: window,
      arithmetic: FloatArithmetic(bias: bias.map(Tensor.init(vector:)), activation: activation), into: destination)
  }

  /// Integer CONV_2D: int8 input with int8 (per-channel) weights, uint8 with uint8 weights, int16 with int8 weights.
  public static func conv2D<
    Raw: FixedWidthInteger & Sendable & BitwiseCopyable, Weight: FixedWidthInteger & Sendable
  >(
    input: Tensor<Raw>, filter: Tensor<Weight>, bias: [Int64]?, window: WindowParameters,
    quantization: WeightedQuantization, into destination: Destination<Raw> = .newTensor
  ) throws -> Tensor<Raw> {
    let outputChannels = try filter.imageShape("filter").batch
    let arithmetic = try QuantizedArithmetic<Raw, Weight>(quantization, bias: bias, outputChannels: outputChannels)
    return try conv2D(input: input, filter: filter, window: window, arithmetic: arithmetic, into: destination)
  }

  /// CONV_2D with any arithmetic: the seven loops.
  public static func conv2D<Arithmetic: WeightedArithmetic>(
    input: Tensor<Arithmetic.Input>, filter: Tensor<Arithmetic.Weight>, window: WindowParameters,
    arithmetic: Arithmetic, into destination: Destination<Arithmetic.Output> = .newTensor
  ) throws -> Tensor<Arithmetic.Output> {
    let shapes = try ConvolutionShapes(conv2D: input.shape, filter: filter.shape, window: window)
    let (inputShape, filterShape, outputShape) = (shapes.input, shapes.filter, shapes.output)
    let groupDepth = filterShape.channels
    let outputsPerGroup = outputShape.channels / (inputShape.channels / groupDepth)
    try arithmetic.check(outputChannels: outputShape.channels)
    let output = try destination.tensor(shape: outputShape.dimensions)
    for n in 0..<outputShape.batch {
      for y in 0..<outputShape.height {
        for x in 0..<outputShape.width {
          for o in 0..<outputShape.channels {
            // The input channels this output channel's group reads start here.
            let firstInputChannel = (o / outputsPerGroup) * groupDepth
            var sum = arithmetic.zero
            for ky in 0..<filterShape.height {
              let inputY = shapes.rows.inputPosition(output: y, tap: ky)
              guard shapes.rows.contains(inputY) else { continue }
              for kx in 0..<filterShape.width {
                let inputX = shapes.columns.inputPosition(output: x, tap: kx)
                guard shapes.columns.contains(inputX) else { continue }
                for c in 0..<groupDepth {
                  let value = input.values[inputShape.index(n, inputY, inputX, firstInputChannel + c)]
                  let weight = filter.values[filterShape.index(o, ky, kx, c)]
                  sum = arithmetic.accumulate(sum, value, weight, channel: o)
                }
              }
            }
            output[outputShape.index(n, y, x, o)] = arithmetic.finish(sum, channel: o)
          }
        }
      }
    }
    return output.finished
  }

  /// Float DEPTHWISE_CONV_2D (see the file header).
  public static func depthwiseConv2D(
    input: Tensor<Float>, filter: Tensor<Float>, bias: [Float]?, window: WindowParameters, activation: FusedActivation,
    into destination: Destination<Float> = .newTensor
  ) throws -> Tensor<Float> {
    try depthwiseConv2D(
      input: input, filter: filter, window: window,
      arithmetic: FloatArithmetic(bias: bias.map(Tensor.init(vector:)), activation: activation), into: destination)
  }

  /// Integer DEPTHWISE_CONV_2D: int8 input with int8 (per-channel) weights, uint8 with uint8, int16 with int8.
  public static func depthwiseConv2D<
    Raw: FixedWidthInteger & Sendable & BitwiseCopyable, Weight: FixedWidthInteger & Sendable
  >(
    input: Tensor<Raw>, filter: Tensor<Weight>, bias: [Int64]?, window: WindowParameters,
    quantization: WeightedQuantization, into destination: Destination<Raw> = .newTensor
  ) throws -> Tensor<Raw> {
    let outputChannels = try filter.imageShape("filter").channels
    let arithmetic = try QuantizedArithmetic<Raw, Weight>(quantization, bias: bias, outputChannels: outputChannels)
    return try depthwiseConv2D(input: input, filter: filter, window: window, arithmetic: arithmetic, into: destination)
  }

  /// DEPTHWISE_CONV_2D with any arithmetic.
  public static func depthwiseConv2D<Arithmetic: WeightedArithmetic>(
    input: Tensor<Arithmetic.Input>, filter: Tensor<Arithmetic.Weight>, window: WindowParameters,
    arithmetic: Arithmetic, into destination: Destination<Arithmetic.Output> = .newTensor
  ) throws -> Tensor<Arithmetic.Output> {
    let shapes = try ConvolutionShapes(depthwise: input.shape, filter: filter.shape, window: window)
    let (inputShape, filterShape, outputShape) = (shapes.input, shapes.filter, shapes.output)
    let multiplier = outputShape.channels / inputShape.channels
    try arithmetic.check(outputChannels: outputShape.channels)
    let output = try destination.tensor(shape: outputShape.dimensions)
    for n in 0..<outputShape.batch {
      for y in 0..<outputShape.height {
        for x in 0..<outputShape.width {
          for c in 0..<inputShape.channels {
            for m in 0..<multiplier {
              let o = c * multiplier + m
              var sum = arithmetic.zero
              for ky in 0..<filterShape.height {
                let inputY = shapes.rows.inputPosition(output: y, tap: ky)
                guard shapes.rows.contains(inputY) else { continue }
                for kx in 0..<filterShape.width {
                  let inputX = shapes.columns.inputPosition(output: x, tap: kx)
                  guard shapes.columns.contains(inputX) else { continue }
                  let value = input.values[inputShape.index(n, inputY, inputX, c)]
                  let weight = filter.values[filterShape.index(0, ky, kx, o)]
                  sum = arithmetic.accumulate(sum, value, weight, channel: o)
                }
              }
              output[outputShape.index(n, y, x, o)] = arithmetic.finish(sum, channel: o)
            }
          }
        }
      }
    }
    return output.finished
  }
}
