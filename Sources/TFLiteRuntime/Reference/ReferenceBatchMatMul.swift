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
  /// The checked shapes of a BATCH_MATMUL: the matrix sizes, the broadcast batch and the output shape.
  struct MatMulShapes {
    /// M: rows of each output matrix.
    let rows: Int
    /// K: the length of each dot product.
    let depth: Int
    /// N: columns of each output matrix.
    let columns: Int
    /// The broadcast of the two operands' batch dimensions (all but the last two).
    let batches: Broadcast
    /// The output shape, [..., M, N].
    var output: [Int] { batches.shape + [rows, columns] }

    /// The shapes of `lhs` times `rhs`, each stored transposed when its flag says so.
    init(lhs: [Int], rhs: [Int], adjX: Bool, adjY: Bool) throws {
      guard lhs.count >= 2, rhs.count >= 2 else {
        throw Error("BATCH_MATMUL operands need rank 2 or more, got \(lhs) and \(rhs)")
      }
      // lhs is M × K (stored K × M with adj_x), rhs K × N (stored N × K with adj_y).
      let (lhsRows, lhsColumns) = (lhs[lhs.count - 2], lhs[lhs.count - 1])
      let (rhsRows, rhsColumns) = (rhs[rhs.count - 2], rhs[rhs.count - 1])
      (rows, depth) = adjX ? (lhsColumns, lhsRows) : (lhsRows, lhsColumns)
      let rhsDepth: Int
      (rhsDepth, columns) = adjY ? (rhsColumns, rhsRows) : (rhsRows, rhsColumns)
      guard depth == rhsDepth else {
        throw Error(
          "BATCH_MATMUL of \(lhs) by \(rhs) (adj_x \(adjX), adj_y \(adjY)): depths \(depth) and \(rhsDepth) differ")
      }
      batches = try Broadcast(Array(lhs.dropLast(2)), Array(rhs.dropLast(2)))
    }
  }

  /// BATCH_MATMUL's output shape for operands of these shapes.
  public static func batchMatMulOutputShape(lhs: [Int], rhs: [Int], adjX: Bool, adjY: Bool) throws -> [Int] {
    try MatMulShapes(lhs: lhs, rhs: rhs, adjX: adjX, adjY: adjY).output
  }

  /// Float BATCH_MATMUL (see the file header).
  public static func batchMatMul(
    lhs: Tensor<Float>, rhs: Tensor<Float>, adjX: Bool, adjY: Bool, into destination: Destination<Float> = .newTensor
  ) throws -> Tensor<Float> {
    try batchMatMul(
      lhs: lhs, rhs: rhs, adjX: adjX, adjY: adjY,
      arithmetic: FloatArithmetic(bias: nil as Tensor<Float>?, range: (-.infinity, .infinity)), into: destination)
  }

  /// Integer BATCH_MATMUL: int8 × int8 → int8 or int16 × int16 → int16, per-tensor quantization.
  public static func batchMatMul<Raw: FixedWidthInteger & Sendable & BitwiseCopyable>(
    lhs: Tensor<Raw>, rhs: Tensor<Raw>, adjX: Bool, adjY: Bool, lhsQuantization: QuantizationParameters,
    rhsQuantization: QuantizationParameters, output: QuantizationParameters,
    rounding: RoundingPolicy = .doubleRounding, into destination: Destination<Raw> = .newTensor
  ) throws -> Tensor<Raw> {
    // The right operand plays the weights' part, with one "channel" (per-tensor quantization).
    let quantization = WeightedQuantization(
      input: lhsQuantization,
      weights: ChannelQuantization(scales: [rhsQuantization.scale], zeroPoints: [rhsQuantization.zeroPoint]),
      output: output, activation: .none, accumulation: Raw.bitWidth == 16 ? .int64 : .int32(rounding),
      rounding: rounding)
    let arithmetic = try QuantizedArithmetic<Raw, Raw>(quantization, bias: nil, outputChannels: 1)
    return try batchMatMul(lhs: lhs, rhs: rhs, adjX: adjX, adjY: adjY, arithmetic: arithmetic, into: destination)
  }

  /// BATCH_MATMUL with any arithmetic whose parameters hold for every output element (channel 0).
  public static func batchMatMul<Arithmetic: WeightedArithmetic>(
    lhs: Tensor<Arithmetic.Input>, rhs: Tensor<Arithmetic.Weight>, adjX: Bool, adjY: Bool, arithmetic: Arithmetic,
    into destination: Destination<Arithmetic.Output> = .newTensor
  ) throws -> Tensor<Arithmetic.Output> {
    try arithmetic.check(outputChannels: 1)
    let shapes = try MatMulShapes(lhs: lhs.shape, rhs: rhs.shape, adjX: adjX, adjY: adjY)
    let (rows, depth, columns) = (shapes.rows, shapes.depth, shapes.columns)
    /// Element (i, k) of the left matrix starting at `base`.
    func left(_ base: Int, _ i: Int, _ k: Int) -> Arithmetic.Input {
      lhs.values[base + (adjX ? k * rows + i : i * depth + k)]
    }
    /// Element (k, j) of the right matrix starting at `base`.
    func right(_ base: Int, _ k: Int, _ j: Int) -> Arithmetic.Weight {
      rhs.values[base + (adjY ? j * depth + k : k * columns + j)]
    }
    let output = try destination.tensor(shape: shapes.output)
    for batch in 0..<(try elementCount(shapes.batches.shape)) {
      // Which stored matrix of each operand this output matrix reads (size-1 batch dimensions repeat).
      let (lhsMatrix, rhsMatrix) = shapes.batches.inputIndices(of: batch)
      let lhsBase = lhsMatrix * rows * depth
      let rhsBase = rhsMatrix * depth * columns
      for i in 0..<rows {
        for j in 0..<columns {
          var sum = arithmetic.zero
          for k in 0..<depth {
            sum = arithmetic.accumulate(sum, left(lhsBase, i, k), right(rhsBase, k, j), channel: 0)
          }
          output[(batch * rows + i) * columns + j] = arithmetic.finish(sum, channel: 0)
        }
      }
    }
    return output.finished
  }
}
