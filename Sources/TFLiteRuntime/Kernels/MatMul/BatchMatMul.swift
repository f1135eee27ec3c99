import TFLiteFormat
import TFLiteLinearAlgebra

/// Batch dimensions of a BATCH_MATMUL after numpy broadcasting, flattened to index lists.
struct BatchBroadcast: Equatable {
  /// Broadcast batch shape of the output.
  let shape: [Int]
  /// For each output batch (row-major over `shape`), the left operand's batch index.
  let lhsIndices: [Int]
  /// For each output batch, the right operand's batch index.
  let rhsIndices: [Int]

  /// `batch` with leading 1s up to `rank` dimensions.
  private static func padded(_ batch: [Int], to rank: Int) -> [Int] {
    [Int](repeating: 1, count: rank - batch.count) + batch
  }

  /// The broadcast batch shape of two operands' batch dimensions, or nil if they do not broadcast.
  static func shape(lhsBatch: [Int], rhsBatch: [Int]) -> [Int]? {
    let rank = max(lhsBatch.count, rhsBatch.count)
    let (lhs, rhs) = (padded(lhsBatch, to: rank), padded(rhsBatch, to: rank))
    var shape: [Int] = []
    for (l, r) in zip(lhs, rhs) {
      guard l == r || l == 1 || r == 1 else { return nil }
      shape.append(l == 1 ? r : l)
    }
    return shape
  }

  /// Broadcasts the batch dimensions (all but the last two) of both operands; nil if they do not
  /// broadcast. Callers check first that the broadcast shape's element count is reasonable.
  init?(lhsBatch: [Int], rhsBatch: [Int]) {
    guard let shape = Self.shape(lhsBatch: lhsBatch, rhsBatch: rhsBatch) else { return nil }
    let rank = shape.count
    let (lhs, rhs) = (Self.padded(lhsBatch, to: rank), Self.padded(rhsBatch, to: rank))
    let total = shape.reduce(1, *)
    var lhsIndices: [Int] = []
    var rhsIndices: [Int] = []
    lhsIndices.reserveCapacity(total)
    rhsIndices.reserveCapacity(total)
    var coordinate = [Int](repeating: 0, count: rank)
    for _ in 0..<total {
      var lhsIndex = 0
      var rhsIndex = 0
      for axis in 0..<rank {
        lhsIndex = lhsIndex * lhs[axis] + (lhs[axis] == 1 ? 0 : coordinate[axis])
        rhsIndex = rhsIndex * rhs[axis] + (rhs[axis] == 1 ? 0 : coordinate[axis])
      }
      lhsIndices.append(lhsIndex)
      rhsIndices.append(rhsIndex)
      var axis = rank - 1
      while axis >= 0 {
        coordinate[axis] += 1
        if coordinate[axis] < shape[axis] { break }
        coordinate[axis] = 0
        axis -= 1
      }
    }
    self.shape = shape
    self.lhsIndices = lhsIndices
    self.rhsIndices = rhsIndices
  }
}

/// The geometry of a BATCH_MATMUL: `lhs [..., M, K]` (`[..., K, M]` with adj_x) times
/// `rhs [..., K, N]` (`[..., N, K]` with adj_y), the batch dimensions broadcast.
struct BatchMatMulShape {
  /// M: rows of every output matrix.
  let rows: Int
  /// K: the summed dimension.
  let depth: Int
  /// N: columns of every output matrix.
  let columns: Int
  /// Matrices stored in the left operand.
  let lhsMatrixCount: Int
  /// Matrices stored in the right operand.
  let rhsMatrixCount: Int
  /// The broadcast batch shape followed by `[M, N]`.
  let outputShape: [Int]
  /// The operands' matrix of every output matrix; nil when the output is empty (its batch index
  /// lists could be huge when M or N is 0).
  let broadcast: BatchBroadcast?

  /// Checks that the operand shapes multiply and broadcast, and that the batch index lists fit
  /// in `memory`'s limit; throws `invalid` otherwise.
  init(op: String, lhs: [Int], rhs: [Int], adjX: Bool, adjY: Bool, memory: PrepareContext? = nil) throws {
    guard lhs.count >= 2, rhs.count >= 2 else {
      throw KernelError.invalid("\(op) operands need rank 2 or more, got \(lhs) and \(rhs)")
    }
    let lhsLast = Array(lhs.suffix(2))
    let rhsLast = Array(rhs.suffix(2))
    (rows, depth) = adjX ? (lhsLast[1], lhsLast[0]) : (lhsLast[0], lhsLast[1])
    let rhsDepth: Int
    (rhsDepth, columns) = adjY ? (rhsLast[1], rhsLast[0]) : (rhsLast[0], rhsLast[1])
    guard depth == rhsDepth else {
      throw KernelError.invalid("\(op) inner dimensions differ: \(lhs) (adj_x \(adjX)) and \(rhs) (adj_y \(adjY))")
    }
    let lhsBatch = Array(lhs.dropLast(2))
    let rhsBatch = Array(rhs.dropLast(2))
    lhsMatrixCount = try FloatOperands.checkedCount(lhsBatch, "\(op) lhs batch")
    rhsMatrixCount = try FloatOperands.checkedCount(rhsBatch, "\(op) rhs batch")
    guard let batchShape = BatchBroadcast.shape(lhsBatch: lhsBatch, rhsBatch: rhsBatch) else {
      throw KernelError.invalid("\(op) batch dimensions \(lhsBatch) and \(rhsBatch) do not broadcast")
    }
    outputShape = batchShape + [rows, columns]
    let outputCount = try FloatOperands.checkedCount(outputShape, "\(op) output")
    let batchCount = try FloatOperands.checkedCount(batchShape, "\(op) batch")
    try memory?.requireMemory(count: batchCount, bytesEach: 2 * MemoryLayout<Int>.stride, for: "\(op) batch index lists")
    broadcast = outputCount > 0 ? BatchBroadcast(lhsBatch: lhsBatch, rhsBatch: rhsBatch) : nil
  }
}

/// BATCH_MATMUL in float32: for every broadcast batch, `out[M×N] = lhs[M×K] · rhs[K×N]`
/// (with `adjX` the stored lhs is K×M, with `adjY` the stored rhs is N×K).
enum FloatBatchMatMul {
  /// Layout of one stored right-hand matrix for `packRightHandSide`.
  static func rhsLayout(adjY: Bool, depth: Int, columns: Int) -> MatrixLayout {
    adjY ? .columnMajor(depth: depth) : .depthMajor(columns: columns)
  }

  /// Multiplies every batch; `rhs` holds the packed right-hand matrices by right-hand batch index.
  static func run(
    plan: GEMMPlan, broadcast: BatchBroadcast, lhs: UnsafePointer<Float>, adjX: Bool, rhs: UnsafePointer<Float>,
    output: UnsafeMutablePointer<Float>, threadCount: Int, scratch: UnsafeMutableRawPointer
  ) {
    let lhsMatrix = plan.rows * plan.depth
    let rhsMatrix = PanelPacking.packedCount(depth: plan.depth, columns: plan.columns)
    let outputMatrix = plan.rows * plan.columns
    let epilogue = FloatEpilogue(bias: nil, activation: nil)
    for batch in 0..<broadcast.lhsIndices.count {
      let lhsBase = lhs + broadcast.lhsIndices[batch] * lhsMatrix
      let rhsBase = rhs + broadcast.rhsIndices[batch] * rhsMatrix
      let outputBase = output + batch * outputMatrix
      if adjX {
        FloatGEMM.multiply(
          plan: plan, lhs: TransposedLeftOperand(base: lhsBase, depthStride: plan.rows), rhs: rhsBase,
          output: outputBase, outputStride: plan.columns, epilogue: epilogue, threadCount: threadCount,
          scratch: scratch)
      } else {
        FloatGEMM.multiply(
          plan: plan, lhs: RowMajorLeftOperand(base: lhsBase, rowStride: plan.depth), rhs: rhsBase,
          output: outputBase, outputStride: plan.columns, epilogue: epilogue, threadCount: threadCount,
          scratch: scratch)
      }
    }
  }
}

/// BATCH_MATMUL (float32): `lhs [..., M, K]` (`[..., K, M]` with adj_x) times `rhs [..., K, N]`
/// (`[..., N, K]` with adj_y); the batch dimensions broadcast. A constant rhs is packed once.
final class BatchMatMulKernel: Kernel {
  /// A float GEMM.
  var kernelDescription: String? { KernelDescription.floatGEMM }

  private let lhs: RuntimeTensor
  private let rhs: RuntimeTensor
  private let output: RuntimeTensor
  private let adjX: Bool
  private let adjY: Bool
  private var plan: GEMMPlan?
  private var broadcast: BatchBroadcast?
  private var packedRight = PackedWeights()
  private var gemmScratchOffset = 0

  init(node: Node) throws {
    (lhs, rhs, output) = try node.twoInputsAndOutput()
    try FloatOperands.require([lhs, rhs, output], op: "BATCH_MATMUL")
    let options = try FloatOperands.options(of: node, op: "BATCH_MATMUL", defaults: BatchMatMulOptions()) {
      if case .batchMatMulOptions(let options) = $0 { options } else { nil }
    }
    (adjX, adjY) = (options.adjX, options.adjY)
  }

  func prepare(_ context: inout PrepareContext) throws {
    let op = "BATCH_MATMUL"
    let shape = try BatchMatMulShape(op: op, lhs: lhs.shape, rhs: rhs.shape, adjX: adjX, adjY: adjY, memory: context)
    let (rows, depth, columns) = (shape.rows, shape.depth, shape.columns)
    output.shape = shape.outputShape
    let plan = GEMMPlan(rows: rows, columns: columns, depth: depth, threadCount: context.threadCount)
    var scratch = ScratchLayout()
    try packedRight.prepare(
      rhs, count: shape.rhsMatrixCount, sourceStride: depth * columns,
      layout: FloatBatchMatMul.rhsLayout(adjY: adjY, depth: depth, columns: columns), depth: depth, columns: columns,
      scratch: &scratch)
    context.releaseAfterCopying(rhs)
    gemmScratchOffset = scratch.reserve(bytes: plan.scratchBytes(leftOperandPacks: adjX, threadCount: context.threadCount))
    context.requestScratch(bytes: scratch.byteCount)
    self.plan = plan
    broadcast = shape.broadcast
  }

  func eval(_ context: EvalContext) throws {
    guard output.elementCount > 0 else { return }
    guard let plan, let broadcast, let scratch = context.scratch else {
      throw KernelError.invalid("BATCH_MATMUL was not prepared")
    }
    FloatBatchMatMul.run(
      plan: plan, broadcast: broadcast, lhs: lhs.pointer(as: Float.self), adjX: adjX,
      rhs: try packedRight.pointer(rhs, scratch: scratch), output: output.pointer(as: Float.self),
      threadCount: context.threadCount, scratch: scratch + gemmScratchOffset)
  }
}
