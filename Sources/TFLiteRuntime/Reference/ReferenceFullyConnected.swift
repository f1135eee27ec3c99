// FULLY_CONNECTED, as TFLite's reference kernels compute it (`reference/fully_connected.h`,
// `integer_ops/fully_connected.h`).
//
// Weights [U, D] (one row of D values per output unit), optional bias [U]. The input is read as
// rows of D values: any shape whose element count is a multiple of D (with D = 0, an input whose
// last dimension is 0, each output being the bias alone). Output (r, u) is the sum
// over d of input(r, d) · weights(u, d), then bias, then the fused activation. The output shape is
// [rows, U], or, with `keep_num_dims`, the input's shape with its last dimension (which must be D)
// replaced by U.
//
// The integer form uses ``Reference/Accumulation/fullyConnected``: LiteRT 2.3's reference kernel
// rescales a 32-bit sum with one rounding (see `ReferenceArithmetic.swift`).
import TFLiteLinearAlgebra


extension Reference {
  /// FULLY_CONNECTED's rows of `depth` values and output shape for an input and weights of these
  /// shapes: the input is read as rows of the weights' depth D (any shape whose element count is a
  /// multiple of D; with the last dimension equal to D, an empty depth too).
  static func fullyConnectedShapes(input: [Int], weights: [Int], keepNumDims: Bool) throws -> (
    rows: Int, output: [Int]
  ) {
    guard weights.count == 2 else { throw Error("FULLY_CONNECTED weights must have rank 2, got \(weights)") }
    let (units, depth) = (weights[0], weights[1])
    let rows: Int
    if input.last == depth {
      rows = try elementCount(Array(input.dropLast()))
    } else {
      let count = try elementCount(input)
      guard depth > 0, count % depth == 0 else {
        throw Error("FULLY_CONNECTED input \(input) cannot be read as rows of \(depth) values")
      }
      rows = count / depth
    }
    guard !keepNumDims else {
      guard input.last == depth else {
        throw Error("FULLY_CONNECTED with keep_num_dims needs the input's last dimension to be \(depth), got \(input)")
      }
      return (rows, input.dropLast() + [units])
    }
    return (rows, [rows, units])
  }

  /// FULLY_CONNECTED's output shape: [rows, U], or with `keepNumDims` the input's shape with its last dimension U.
  public static func fullyConnectedOutputShape(input: [Int], weights: [Int], keepNumDims: Bool) throws -> [Int] {
    try fullyConnectedShapes(input: input, weights: weights, keepNumDims: keepNumDims).output
  }

  /// Float FULLY_CONNECTED (see the file header).
  public static func fullyConnected(
    input: Tensor<Float>, weights: Tensor<Float>, bias: [Float]?, keepNumDims: Bool, activation: FusedActivation,
    into destination: Destination<Float> = .newTensor
  ) throws -> Tensor<Float> {
    try fullyConnected(
      input: input, weights: weights, keepNumDims: keepNumDims,
      arithmetic: FloatArithmetic(bias: bias.map(Tensor.init(vector:)), activation: activation), into: destination)
  }

  /// Integer FULLY_CONNECTED: int8 input with int8 (per-tensor or per-channel) weights, uint8 with
  /// uint8, int16 with int8.
  public static func fullyConnected<
    Raw: FixedWidthInteger & Sendable & BitwiseCopyable, Weight: FixedWidthInteger & Sendable
  >(
    input: Tensor<Raw>, weights: Tensor<Weight>, bias: [Int64]?, keepNumDims: Bool, quantization: WeightedQuantization,
    into destination: Destination<Raw> = .newTensor
  ) throws -> Tensor<Raw> {
    guard weights.shape.count == 2 else {
      throw Error("FULLY_CONNECTED weights must have rank 2, got \(weights.shape)")
    }
    let arithmetic = try QuantizedArithmetic<Raw, Weight>(quantization, bias: bias, outputChannels: weights.shape[0])
    return try fullyConnected(
      input: input, weights: weights, keepNumDims: keepNumDims, arithmetic: arithmetic, into: destination)
  }

  /// FULLY_CONNECTED with any arithmetic: one dot product per row and unit.
  public static func fullyConnected<Arithmetic: WeightedArithmetic>(
    input: Tensor<Arithmetic.Input>, weights: Tensor<Arithmetic.Weight>, keepNumDims: Bool, arithmetic: Arithmetic,
    into destination: Destination<Arithmetic.Output> = .newTensor
  ) throws -> Tensor<Arithmetic.Output> {
    let (rows, outputShape) = try fullyConnectedShapes(
      input: input.shape, weights: weights.shape, keepNumDims: keepNumDims)
    let (units, depth) = (weights.shape[0], weights.shape[1])
    try arithmetic.check(outputChannels: units)
    let output = try destination.tensor(shape: outputShape)
    for row in 0..<rows {
      for unit in 0..<units {
        var sum = arithmetic.zero
        for d in 0..<depth {
          sum = arithmetic.accumulate(
            sum, input.values[row * depth + d], weights.values[unit * depth + d], channel: unit)
        }
        output[row * units + unit] = arithmetic.finish(sum, channel: unit)
      }
    }
    return output.finished
  }
}
