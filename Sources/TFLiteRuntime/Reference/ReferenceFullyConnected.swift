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
  /// Float FULLY_CONNECTED (see the file header).
  public static func fullyConnected(
    input: Tensor<Float>, weights: Tensor<Float>, bias: [Float]?, keepNumDims: Bool, activation: FusedActivation
  ) throws -> Tensor<Float> {
    try fullyConnected(
      input: input, weights: weights, keepNumDims: keepNumDims,
      arithmetic: FloatArithmetic(bias: bias, activation: activation))
  }

  /// Integer FULLY_CONNECTED: int8 input with int8 (per-tensor or per-channel) weights, uint8 with
  /// uint8, int16 with int8.
  public static func fullyConnected<Raw: FixedWidthInteger & Sendable, Weight: FixedWidthInteger & Sendable>(
    input: Tensor<Raw>, weights: Tensor<Weight>, bias: [Int64]?, keepNumDims: Bool, quantization: WeightedQuantization
  ) throws -> Tensor<Raw> {
    guard weights.shape.count == 2 else {
      throw Error("FULLY_CONNECTED weights must have rank 2, got \(weights.shape)")
    }
    let arithmetic = try QuantizedArithmetic<Raw, Weight>(quantization, bias: bias, outputChannels: weights.shape[0])
    return try fullyConnected(input: input, weights: weights, keepNumDims: keepNumDims, arithmetic: arithmetic)
  }

  /// FULLY_CONNECTED with any arithmetic: one dot product per row and unit.
  public static func fullyConnected<Arithmetic: WeightedArithmetic>(
    input: Tensor<Arithmetic.Input>, weights: Tensor<Arithmetic.Weight>, keepNumDims: Bool, arithmetic: Arithmetic
  ) throws -> Tensor<Arithmetic.Output> {
    guard weights.shape.count == 2 else {
      throw Error("FULLY_CONNECTED weights must have rank 2, got \(weights.shape)")
    }
    let units = weights.shape[0]
    let depth = weights.shape[1]
    try arithmetic.check(outputChannels: units)
    // Rows of `depth` values: the leading dimensions when the last one is the depth (this also
    // reads an empty depth), otherwise the element count divided by the depth.
    let rows: Int
    if input.shape.last == depth {
      rows = try elementCount(Array(input.shape.dropLast()))
    } else {
      guard depth > 0, input.values.count % depth == 0 else {
        throw Error("FULLY_CONNECTED input \(input.shape) cannot be read as rows of \(depth) values")
      }
      rows = input.values.count / depth
    }
    let outputShape: [Int]
    if keepNumDims {
      guard input.shape.last == depth else {
        throw Error(
          "FULLY_CONNECTED with keep_num_dims needs the input's last dimension to be \(depth), got \(input.shape)")
      }
      outputShape = input.shape.dropLast() + [units]
    } else {
      outputShape = [rows, units]
    }
    var output: [Arithmetic.Output] = []
    output.reserveCapacity(try elementCount(outputShape))
    for row in 0..<rows {
      for unit in 0..<units {
        var sum = arithmetic.zero
        for d in 0..<depth {
          sum = arithmetic.accumulate(
            sum, input.values[row * depth + d], weights.values[unit * depth + d], channel: unit)
        }
        output.append(arithmetic.finish(sum, channel: unit))
      }
    }
    return try Tensor(shape: outputShape, values: output)
  }
}
