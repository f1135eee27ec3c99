// BATCH_MATMUL, as TFLite's reference kernel computes it (`reference/batch_matmul.h`): a matrix
// product for each matrix of a batch.
//
// lhs [..., M, K] and rhs [..., K, N] give output [..., M, N]; with `adj_x` the left matrices are
// stored transposed ([..., K, M]), with `adj_y` the right ones ([..., N, K]). The batch dimensions
// (all but the last two) broadcast against each other as ADD's shapes do (see
// `ReferenceGeometry.swift`). Output (b, i, j) is the sum over k of lhs(b, i, k) · rhs(b, k, j).
// There is no bias and no fused activation: float results are not clamped at all; integer results
// (int8 × int8, or int16 × int16 with zero points 0, both per tensor) are rescaled by
// lhs_scale · rhs_scale / output_scale and clamped to the output type (8-bit sums wrap in 32 bits
// and rescale with the rounding policy, 16-bit ones stay in 64 bits with the 64-bit rescale).
import TFLiteLinearAlgebra


extension Reference {
  /// Float BATCH_MATMUL (see the file header).
  public static func batchMatMul(lhs: Tensor<Float>, rhs: Tensor<Float>, adjX: Bool, adjY: Bool) throws -> Tensor<Float>
  {
    try batchMatMul(
      lhs: lhs, rhs: rhs, adjX: adjX, adjY: adjY,
      arithmetic: FloatArithmetic(bias: nil, range: (-.infinity, .infinity)))
  }

  /// Integer BATCH_MATMUL: int8 × int8 → int8 or int16 × int16 → int16, per-tensor quantization.
  public static func batchMatMul<Raw: FixedWidthInteger & Sendable>(
    lhs: Tensor<Raw>, rhs: Tensor<Raw>, adjX: Bool, adjY: Bool, lhsQuantization: QuantizationParameters,
    rhsQuantization: QuantizationParameters, output: QuantizationParameters,
    rounding: RoundingPolicy = .doubleRounding
  ) throws -> Tensor<Raw> {
    // The right operand plays the weights' part, with one "channel" (per-tensor quantization).
    let quantization = WeightedQuantization(
      input: lhsQuantization,
      weights: ChannelQuantization(scales: [rhsQuantization.scale], zeroPoints: [rhsQuantization.zeroPoint]),
      output: output, activation: .none, accumulation: Raw.bitWidth == 16 ? .int64 : .int32(rounding),
      rounding: rounding)
    let arithmetic = try QuantizedArithmetic<Raw, Raw>(quantization, bias: nil, outputChannels: 1)
    return try batchMatMul(lhs: lhs, rhs: rhs, adjX: adjX, adjY: adjY, arithmetic: arithmetic)
  }

  /// BATCH_MATMUL with any arithmetic whose parameters hold for every output element (channel 0).
  public static func batchMatMul<Arithmetic: WeightedArithmetic>(
    lhs: Tensor<Arithmetic.Input>, rhs: Tensor<Arithmetic.Weight>, adjX: Bool, adjY: Bool, arithmetic: Arithmetic
  ) throws -> Tensor<Arithmetic.Output> {
    try arithmetic.check(outputChannels: 1)
    guard lhs.shape.count >= 2, rhs.shape.count >= 2 else {
      throw Error("BATCH_MATMUL operands need rank 2 or more, got \(lhs.shape) and \(rhs.shape)")
    }
    // The matrix dimensions: lhs is M × K (stored K × M with adj_x), rhs K × N (stored N × K with adj_y).
    let lhsRows = lhs.shape[lhs.shape.count - 2]
    let lhsColumns = lhs.shape[lhs.shape.count - 1]
    let rhsRows = rhs.shape[rhs.shape.count - 2]
    let rhsColumns = rhs.shape[rhs.shape.count - 1]
    let (rows, depth) = adjX ? (lhsColumns, lhsRows) : (lhsRows, lhsColumns)
    let (rhsDepth, columns) = adjY ? (rhsColumns, rhsRows) : (rhsRows, rhsColumns)
    guard depth == rhsDepth else {
      throw Error(
        "BATCH_MATMUL of \(lhs.shape) by \(rhs.shape) (adj_x \(adjX), adj_y \(adjY)): "
          + "depths \(depth) and \(rhsDepth) differ"
      )
    }
    let batches = try Broadcast(Array(lhs.shape.dropLast(2)), Array(rhs.shape.dropLast(2)))
    /// Element (i, k) of the left matrix starting at `base`.
    func left(_ base: Int, _ i: Int, _ k: Int) -> Arithmetic.Input {
      lhs.values[base + (adjX ? k * rows + i : i * depth + k)]
    }
    /// Element (k, j) of the right matrix starting at `base`.
    func right(_ base: Int, _ k: Int, _ j: Int) -> Arithmetic.Weight {
      rhs.values[base + (adjY ? j * depth + k : k * columns + j)]
    }
    let outputShape = batches.shape + [rows, columns]
    var output: [Arithmetic.Output] = []
    output.reserveCapacity(try elementCount(outputShape))
    for batch in 0..<(try elementCount(batches.shape)) {
      // Which stored matrix of each operand this output matrix reads (size-1 batch dimensions repeat).
      let (lhsMatrix, rhsMatrix) = batches.inputIndices(of: batch)
      let lhsBase = lhsMatrix * rows * depth
      let rhsBase = rhsMatrix * depth * columns
      for i in 0..<rows {
        for j in 0..<columns {
          var sum = arithmetic.zero
          for k in 0..<depth {
            sum = arithmetic.accumulate(sum, left(lhsBase, i, k), right(rhsBase, k, j), channel: 0)
          }
          output.append(arithmetic.finish(sum, channel: 0))
        }
      }
    }
    return try Tensor(shape: outputShape, values: output)
  }
}
