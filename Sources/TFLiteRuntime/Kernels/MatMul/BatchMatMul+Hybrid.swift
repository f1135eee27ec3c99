// Hybrid BATCH_MATMUL: float left-hand side, constant int8 right-hand side. As LiteRT's BUILTIN_REF
// kernel does, every row of K left-hand values is quantized (symmetric, or asymmetric with the
// `asymmetric_quantize_inputs` option), multiplied with the int8 columns in int32, and scaled by
// row scale · weight scale (per output column with per-channel weights); the row's zero point is
// taken out with the column sums in float. There is no bias and no activation. With two or more
// batch dimensions above 1, LiteRT's kernel indexes the rows' parameters by the sum of the batch
// offsets and so mixes rows up; this kernel gives every row its own parameters.

import TFLiteFormat

/// BATCH_MATMUL of float `lhs [..., M, K]` (`[..., K, M]` with adj_x) and constant int8
/// `rhs [..., K, N]` (`[..., N, K]` with adj_y); the batch dimensions broadcast.
final class HybridBatchMatMulKernel: Kernel {
  private static let op = "BATCH_MATMUL"
  private let operands: HybridOperands
  private var lhs: RuntimeTensor { operands.input }
  private var output: RuntimeTensor { operands.output }
  private let adjX: Bool
  private let adjY: Bool
  private let quantization: HybridInputQuantization
  private var geometry: BatchMatMulShape?
  private var weights: HybridWeights?
  private var quantizedInput: HybridInputScratch?
  /// Offset of the left-hand matrices transposed to `[M, K]` in scratch (with adj_x).
  private var transposedOffset: Int?

  init(node: Node) throws {
    operands = try HybridOperands(node, op: Self.op, weightTypes: [.int8], biasAllowed: false)
    let options = try FloatOperands.options(of: node, op: Self.op, defaults: BatchMatMulOptions()) {
      if case .batchMatMulOptions(let options) = $0 { options } else { nil }
    }
    (adjX, adjY) = (options.adjX, options.adjY)
    quantization = options.asymmetricQuantizeInputs ? .asymmetric : .symmetric
  }

  func prepare(_ context: inout PrepareContext) throws {
    let rhs = operands.weights
    let geometry = try BatchMatMulShape(op: Self.op, lhs: lhs.shape, rhs: rhs.shape, adjX: adjX, adjY: adjY)
    let (columns, depth) = (geometry.columns, geometry.depth)
    // The weights are read as one row of K values per output column.
    let layout = HybridWeightLayout(
      matrices: geometry.rhsMatrixCount, rows: columns, columns: depth, matrixStride: depth * columns,
      rowStride: adjY ? depth : 1, columnStride: adjY ? 1 : columns)
    weights = try HybridWeights.reusing(
      weights, rhs, op: Self.op, layout: layout, channels: columns, channelAxis: rhs.shape.count - (adjY ? 2 : 1))
    var scratch = ScratchLayout()
    quantizedInput = HybridInputScratch(
      runs: geometry.lhsMatrixCount * geometry.rows, runLength: depth, scratch: &scratch)
    transposedOffset = adjX ? scratch.reserve(floats: lhs.elementCount) : nil
    context.requestScratch(bytes: scratch.byteCount)
    self.geometry = geometry
    output.shape = geometry.outputShape
  }

  func eval(_ context: EvalContext) throws {
    guard output.elementCount > 0 else { return }
    guard let geometry, let broadcast = geometry.broadcast, let weights, let quantizedInput,
      let scratch = context.scratch
    else {
      throw KernelError.invalid("\(Self.op) was not prepared")
    }
    let (rows, columns, depth) = (geometry.rows, geometry.columns, geometry.depth)
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
