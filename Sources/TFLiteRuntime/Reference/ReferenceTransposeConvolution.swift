// TRANSPOSE_CONV, as TFLite's reference kernels compute it (`reference/transpose_conv.h`,
// `integer_ops/transpose_conv.h`): the gradient of CONV_2D with respect to its input, used to
// upsample.
//
// Input [N, H, W, I], filter [O, KH, KW, I], the output shape [N, OH, OW, O] given by the model (its
// `output_shape` operand), optional bias [O]. Where CONV_2D gathers a window of inputs into one
// output, TRANSPOSE_CONV scatters: input (n, y, x, i) adds input · filter(o, ky, kx, i) to output
// (n, y·stride − pad + ky, x·stride − pad + kx, o) for every tap and output channel, contributions
// falling outside the output being dropped. The padding is the one CONV_2D would use to go from
// the output size back to the input size (computed with the *output* size as the window's input).
// Once every contribution is summed: bias, then the fused activation (integer: rescale, output
// zero point, clamp, as in `ReferenceArithmetic.swift`).
//
// LiteRT's signed integer kernels ignore the weights' zero points (they must be 0); the arithmetic
// here subtracts them, which is the same for the models LiteRT accepts.
import TFLiteLinearAlgebra


extension Reference {
  /// Throws unless TRANSPOSE_CONV's `input` and `filter` fit the `outputShape` the model gives (its
  /// `output_shape` operand), which is then the output's shape.
  public static func checkTransposeConv2DShapes(input: [Int], filter: [Int], outputShape: ImageShape) throws {
    let inputShape = try imageShape(input, "TRANSPOSE_CONV input")
    let filterShape = try imageShape(filter, "TRANSPOSE_CONV filter")
    guard filterShape.channels == inputShape.channels, filterShape.batch == outputShape.channels,
      outputShape.batch == inputShape.batch, outputShape.height >= 0, outputShape.width >= 0
    else {
      throw Error(
        "TRANSPOSE_CONV input \(input), filter \(filter) and output shape \(outputShape.dimensions) do not fit")
    }
  }

  /// Float TRANSPOSE_CONV (see the file header).
  public static func transposeConv2D(
    input: Tensor<Float>, filter: Tensor<Float>, bias: [Float]?, outputShape: ImageShape, window: WindowParameters,
    activation: FusedActivation, into destination: Destination<Float> = .newTensor
  ) throws -> Tensor<Float> {
    try transposeConv2D(
      input: input, filter: filter, outputShape: outputShape, window: window,
      arithmetic: FloatArithmetic(bias: bias.map(Tensor.init(vector:)), activation: activation), into: destination)
  }

  /// Integer TRANSPOSE_CONV: int8 input with int8 (per-channel) weights, uint8 with uint8, int16 with int8.
  public static func transposeConv2D<
    Raw: FixedWidthInteger & Sendable & BitwiseCopyable, Weight: FixedWidthInteger & Sendable
  >(
    input: Tensor<Raw>, filter: Tensor<Weight>, bias: [Int64]?, outputShape: ImageShape, window: WindowParameters,
    quantization: WeightedQuantization, into destination: Destination<Raw> = .newTensor
  ) throws -> Tensor<Raw> {
    let arithmetic = try QuantizedArithmetic<Raw, Weight>(
      quantization, bias: bias, outputChannels: outputShape.channels)
    return try transposeConv2D(
      input: input, filter: filter, outputShape: outputShape, window: window, arithmetic: arithmetic,
      into: destination)
  }

  /// TRANSPOSE_CONV with any arithmetic: scatter every input through the filter, then finish each sum.
  public static func transposeConv2D<Arithmetic: WeightedArithmetic>(
    input: Tensor<Arithmetic.Input>, filter: Tensor<Arithmetic.Weight>, outputShape: ImageShape,
    window: WindowParameters, arithmetic: Arithmetic, into destination: Destination<Arithmetic.Output> = .newTensor
  ) throws -> Tensor<Arithmetic.Output> {
    try checkTransposeConv2DShapes(input: input.shape, filter: filter.shape, outputShape: outputShape)
    let inputShape = try input.imageShape("TRANSPOSE_CONV input")
    let filterShape = try filter.imageShape("TRANSPOSE_CONV filter")
    guard window.dilationHeight == 1, window.dilationWidth == 1 else {
      throw Error("TRANSPOSE_CONV has no dilation")
    }
    try arithmetic.check(outputChannels: outputShape.channels)
    // The padding CONV_2D would use from the output back to the input.
    let (rows, columns) = try window.axes(
      height: outputShape.height, width: outputShape.width, filterHeight: filterShape.height,
      filterWidth: filterShape.width)
    let output = try destination.tensor(shape: outputShape.dimensions)
    // Every output element gathers contributions from several inputs: sum them first.
    var sums = [Arithmetic.Accumulator](repeating: arithmetic.zero, count: output.values.count)
    for n in 0..<inputShape.batch {
      for y in 0..<inputShape.height {
        for x in 0..<inputShape.width {
          for i in 0..<inputShape.channels {
            let value = input.values[inputShape.index(n, y, x, i)]
            for ky in 0..<filterShape.height {
              // The same formula as CONV_2D's, read the other way: input row y feeds output row outY.
              let outY = rows.inputPosition(output: y, tap: ky)
              guard rows.contains(outY) else { continue }
              for kx in 0..<filterShape.width {
                let outX = columns.inputPosition(output: x, tap: kx)
                guard columns.contains(outX) else { continue }
                for o in 0..<outputShape.channels {
                  let target = outputShape.index(n, outY, outX, o)
                  let weight = filter.values[filterShape.index(o, ky, kx, i)]
                  sums[target] = arithmetic.accumulate(sums[target], value, weight, channel: o)
                }
              }
            }
          }
        }
      }
    }
    for index in sums.indices {
      output[index] = arithmetic.finish(sums[index], channel: index % outputShape.channels)
    }
    return output.finished
  }
}
