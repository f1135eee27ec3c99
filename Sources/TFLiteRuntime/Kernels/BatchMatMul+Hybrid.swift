// Hybrid BATCH_MATMUL: float left-hand side, constant int8 right-hand side. As LiteRT's BUILTIN_REF
// kernel does, every row of K left-hand values is quantized (symmetric, or asymmetric with the
// `asymmetric_quantize_inputs` option), multiplied with the int8 columns in int32, and scaled by
// row scale · weight scale (per output column with per-channel weights); the row's zero point is
// taken out with the column sums in float. There is no bias and no activation.

import TFLiteFormat

/// BATCH_MATMUL of float `lhs [..., M, K]` (`[..., K, M]` with adj_x) and constant int8
/// `rhs [..., K, N]` (`[..., N, K]` with adj_y); the batch dimensions broadcast.
final class HybridBatchMatMulKernel: Kernel {
  private static let op = "BATCH_MATMUL"
  private let lhs: RuntimeTensor
  private let rhs: RuntimeTensor
  private let output: RuntimeTensor
  private let adjX: Bool
  private let adjY: Bool
  private let quantization: HybridInputQuantization
  private var broadcast: BatchBroadcast?
  private var weights: HybridWeights?
  private var quantizedInput: HybridInputScratch?
  /// Offset of the left-hand matrices transposed to `[M, K]` in scratch (with adj_x).
  private var transposedOffset: Int?
  private var rows = 0
  private var columns = 0

  init(node: Node) throws {
    try requireHybridOperands(node, op: Self.op, weightTypes: [.int8], biasAllowed: false)
    lhs = try node.input(0)
    rhs = try node.input(1)
    output = try node.output(0)
    let options = try FloatOperands.options(of: node, op: Self.op, defaults: BatchMatMulOptions()) {
      if case .batchMatMulOptions(let options) = $0 { options } else { nil }
    }
    (adjX, adjY) = (options.adjX, options.adjY)
    quantization = options.asymmetricQuantizeInputs ? .asymmetric : .symmetric
  }

  func prepare(_ context: inout PrepareContext) throws {
    let op = Self.op
    guard lhs.shape.count >= 2, rhs.shape.count >= 2 else {
      throw KernelError.invalid("\(op) operands need rank 2 or more, got \(lhs.shape) and \(rhs.shape)")
    }
    let lhsLast = Array(lhs.shape.suffix(2))
    let rhsLast = Array(rhs.shape.suffix(2))
    let (rows, depth) = adjX ? (lhsLast[1], lhsLast[0]) : (lhsLast[0], lhsLast[1])
    let (rhsDepth, columns) = adjY ? (rhsLast[1], rhsLast[0]) : (rhsLast[0], rhsLast[1])
    guard depth == rhsDepth else {
      throw KernelError.invalid("\(op) inner dimensions differ: \(lhs.shape) (adj_x \(adjX)) and \(rhs.shape) (adj_y \(adjY))")
    }
    let lhsBatch = Array(lhs.shape.dropLast(2))
    let rhsBatch = Array(rhs.shape.dropLast(2))
    let lhsCount = try FloatOperands.checkedCount(lhsBatch, "\(op) lhs batch")
    let rhsCount = try FloatOperands.checkedCount(rhsBatch, "\(op) rhs batch")
    guard let batchShape = BatchBroadcast.shape(lhsBatch: lhsBatch, rhsBatch: rhsBatch) else {
      throw KernelError.invalid("\(op) batch dimensions \(lhsBatch) and \(rhsBatch) do not broadcast")
    }
    let outputShape = batchShape + [rows, columns]
    let outputCount = try FloatOperands.checkedCount(outputShape, "\(op) output")
    // The weights are read as one row of K values per output column.
    let layout = HybridWeightLayout(
      matrices: rhsCount, rows: columns, columns: depth, matrixStride: depth * columns, rowStride: adjY ? depth : 1,
      columnStride: adjY ? 1 : columns)
    weights = try HybridWeights(
      rhs, op: op, layout: layout, channels: columns, channelAxis: rhs.shape.count - (adjY ? 2 : 1))
    var scratch = ScratchLayout()
    quantizedInput = HybridInputScratch(runs: lhsCount * rows, runLength: depth, scratch: &scratch)
    transposedOffset = adjX ? scratch.reserve(floats: lhs.elementCount) : nil
    context.requestScratch(bytes: scratch.byteCount)
    // An empty output needs no batch index lists (whose length could be huge when M or N is 0).
    broadcast = outputCount > 0 ? BatchBroadcast(lhsBatch: lhsBatch, rhsBatch: rhsBatch) : nil
    (self.rows, self.columns) = (rows, columns)
    output.shape = outputShape
  }

  func eval(_ context: EvalContext) throws {
    guard output.elementCount > 0 else { return }
    guard let broadcast, let weights, let quantizedInput, let scratch = context.scratch else {
      throw KernelError.invalid("\(Self.op) was not prepared")
    }
    let (rows, columns, depth) = (self.rows, self.columns, quantizedInput.runLength)
    var source = UnsafePointer(lhs.pointer(as: Float.self))
    if let transposedOffset {
      // LiteRT quantizes the rows of the transposed left-hand matrices.
      let transposed = (scratch + transposedOffset).assumingMemoryBound(to: Float.self)
      let matrixSize = rows * depth
      for matrix in 0..<(rows > 0 && depth > 0 ? lhs.elementCount / matrixSize : 0) {
        let from = source + matrix * matrixSize
        let to = transposed + matrix * matrixSize
        for row in 0..<rows {
          for k in 0..<depth { to[row &* depth &+ k] = from[k &* rows &+ row] }
        }
      }
      source = UnsafePointer(transposed)
    }
    let quantized = quantizedInput.quantize(source, as: quantization, scratch: scratch, context: context)
    let destination = output.pointer(as: Float.self)
    context.parallelFor(broadcast.lhsIndices.count * rows) { item in
      let batch = item / rows
      let run = broadcast.lhsIndices[batch] &* rows &+ item % rows
      let firstColumn = broadcast.rhsIndices[batch] &* columns
      let scale = quantized.scales[run]
      let zeroPoint = quantized.zeroPoints[run]
      let outputRow = destination + item &* columns
      HybridProducts.forEachDotProduct(
        weights: weights.values + firstColumn &* depth, depth: depth, rows: 0..<columns,
        input: quantized.values + run &* depth
      ) { column, sum in
        outputRow[column] = HybridRescale.batchMatMul(
          sum, rowSum: weights.rowSums[firstColumn &+ column], zeroPoint: zeroPoint, inputScale: scale,
          weightScale: weights.channelScales[column])
      }
    }
  }
}
