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
  /// Float CONV_2D (see the file header).
  public static func conv2D(
    input: Tensor<Float>, filter: Tensor<Float>, bias: [Float]?, window: WindowParameters, activation: FusedActivation
  ) throws -> Tensor<Float> {
    try conv2D(
      input: input, filter: filter, window: window, arithmetic: FloatArithmetic(bias: bias, activation: activation))
  }

  /// Integer CONV_2D: int8 input with int8 (per-channel) weights, uint8 with uint8 weights, int16 with int8 weights.
  public static func conv2D<Raw: FixedWidthInteger & Sendable, Weight: FixedWidthInteger & Sendable>(
    input: Tensor<Raw>, filter: Tensor<Weight>, bias: [Int64]?, window: WindowParameters,
    quantization: WeightedQuantization
  ) throws -> Tensor<Raw> {
    let outputChannels = try filter.imageShape("filter").batch
    let arithmetic = try QuantizedArithmetic<Raw, Weight>(quantization, bias: bias, outputChannels: outputChannels)
    return try conv2D(input: input, filter: filter, window: window, arithmetic: arithmetic)
  }

  /// CONV_2D with any arithmetic: the seven loops.
  public static func conv2D<Arithmetic: WeightedArithmetic>(
    input: Tensor<Arithmetic.Input>, filter: Tensor<Arithmetic.Weight>, window: WindowParameters,
    arithmetic: Arithmetic
  ) throws -> Tensor<Arithmetic.Output> {
    let inputShape = try input.imageShape("CONV_2D input")
    // The filter is OHWI: "batch" is the output channel count, "channels" the input channels per group.
    let filterShape = try filter.imageShape("CONV_2D filter")
    let groupDepth = filterShape.channels
    guard groupDepth > 0, inputShape.channels % groupDepth == 0 else {
      throw Error("CONV_2D input has \(inputShape.channels) channels, not a multiple of the filter's \(groupDepth)")
    }
    let groups = inputShape.channels / groupDepth
    let outputChannels = filterShape.batch
    guard outputChannels % groups == 0 else {
      throw Error("CONV_2D has \(outputChannels) output channels for \(groups) groups")
    }
    let outputsPerGroup = outputChannels / groups
    try arithmetic.check(outputChannels: outputChannels)
    let (rows, columns) = try window.axes(
      height: inputShape.height, width: inputShape.width, filterHeight: filterShape.height,
      filterWidth: filterShape.width)
    let outputShape = ImageShape(
      batch: inputShape.batch, height: rows.outputSize, width: columns.outputSize, channels: outputChannels)
    var output: [Arithmetic.Output] = []
    output.reserveCapacity(try elementCount(outputShape.dimensions))
    // Output elements in row-major order: image, row, column, channel.
    for n in 0..<outputShape.batch {
      for y in 0..<outputShape.height {
        for x in 0..<outputShape.width {
          for o in 0..<outputChannels {
            // The input channels this output channel's group reads start here.
            let firstInputChannel = (o / outputsPerGroup) * groupDepth
            var sum = arithmetic.zero
            for ky in 0..<filterShape.height {
              let inputY = rows.inputPosition(output: y, tap: ky)
              guard rows.contains(inputY) else { continue }
              for kx in 0..<filterShape.width {
                let inputX = columns.inputPosition(output: x, tap: kx)
                guard columns.contains(inputX) else { continue }
                for c in 0..<groupDepth {
                  let value = input.values[inputShape.index(n, inputY, inputX, firstInputChannel + c)]
                  let weight = filter.values[filterShape.index(o, ky, kx, c)]
                  sum = arithmetic.accumulate(sum, value, weight, channel: o)
                }
              }
            }
            output.append(arithmetic.finish(sum, channel: o))
          }
        }
      }
    }
    return try Tensor(shape: outputShape.dimensions, values: output)
  }

  /// Float DEPTHWISE_CONV_2D (see the file header).
  public static func depthwiseConv2D(
    input: Tensor<Float>, filter: Tensor<Float>, bias: [Float]?, window: WindowParameters, activation: FusedActivation
  ) throws -> Tensor<Float> {
    try depthwiseConv2D(
      input: input, filter: filter, window: window, arithmetic: FloatArithmetic(bias: bias, activation: activation))
  }

  /// Integer DEPTHWISE_CONV_2D: int8 input with int8 (per-channel) weights, uint8 with uint8, int16 with int8.
  public static func depthwiseConv2D<Raw: FixedWidthInteger & Sendable, Weight: FixedWidthInteger & Sendable>(
    input: Tensor<Raw>, filter: Tensor<Weight>, bias: [Int64]?, window: WindowParameters,
    quantization: WeightedQuantization
  ) throws -> Tensor<Raw> {
    let outputChannels = try filter.imageShape("filter").channels
    let arithmetic = try QuantizedArithmetic<Raw, Weight>(quantization, bias: bias, outputChannels: outputChannels)
    return try depthwiseConv2D(input: input, filter: filter, window: window, arithmetic: arithmetic)
  }

  /// DEPTHWISE_CONV_2D with any arithmetic.
  public static func depthwiseConv2D<Arithmetic: WeightedArithmetic>(
    input: Tensor<Arithmetic.Input>, filter: Tensor<Arithmetic.Weight>, window: WindowParameters,
    arithmetic: Arithmetic
  ) throws -> Tensor<Arithmetic.Output> {
    let inputShape = try input.imageShape("DEPTHWISE_CONV_2D input")
    // The filter is [1, KH, KW, C · M]: its last dimension is the output channel.
    let filterShape = try filter.imageShape("DEPTHWISE_CONV_2D filter")
    let outputChannels = filterShape.channels
    guard filterShape.batch == 1, inputShape.channels > 0, outputChannels % inputShape.channels == 0 else {
      throw Error(
        "DEPTHWISE_CONV_2D filter \(filter.shape) must be [1, KH, KW, C·M] "
          + "for an input of \(inputShape.channels) channels"
      )
    }
    let multiplier = outputChannels / inputShape.channels
    try arithmetic.check(outputChannels: outputChannels)
    let (rows, columns) = try window.axes(
      height: inputShape.height, width: inputShape.width, filterHeight: filterShape.height,
      filterWidth: filterShape.width)
    let outputShape = ImageShape(
      batch: inputShape.batch, height: rows.outputSize, width: columns.outputSize, channels: outputChannels)
    var output: [Arithmetic.Output] = []
    output.reserveCapacity(try elementCount(outputShape.dimensions))
    for n in 0..<outputShape.batch {
      for y in 0..<outputShape.height {
        for x in 0..<outputShape.width {
          for c in 0..<inputShape.channels {
            for m in 0..<multiplier {
              let o = c * multiplier + m
              var sum = arithmetic.zero
              for ky in 0..<filterShape.height {
                let inputY = rows.inputPosition(output: y, tap: ky)
                guard rows.contains(inputY) else { continue }
                for kx in 0..<filterShape.width {
                  let inputX = columns.inputPosition(output: x, tap: kx)
                  guard columns.contains(inputX) else { continue }
                  let value = input.values[inputShape.index(n, inputY, inputX, c)]
                  let weight = filter.values[filterShape.index(0, ky, kx, o)]
                  sum = arithmetic.accumulate(sum, value, weight, channel: o)
                }
              }
              output.append(arithmetic.finish(sum, channel: o))
            }
          }
        }
      }
    }
    return try Tensor(shape: outputShape.dimensions, values: output)
  }
}
