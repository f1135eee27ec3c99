/// Batch dimensions of a BATCH_MATMUL after numpy broadcasting, flattened to index lists.
struct BatchBroadcast: Equatable {
  /// Broadcast batch shape of the output.
  let shape: [Int]
  /// For each output batch (row-major over `shape`), the left operand's batch index.
  let lhsIndices: [Int]
  /// For each output batch, the right operand's batch index.
  let rhsIndices: [Int]

  /// Broadcasts the batch dimensions (all but the last two) of both operands; nil if they do not broadcast.
  init?(lhsBatch: [Int], rhsBatch: [Int]) {
    let rank = max(lhsBatch.count, rhsBatch.count)
    let lhs = [Int](repeating: 1, count: rank - lhsBatch.count) + lhsBatch
    let rhs = [Int](repeating: 1, count: rank - rhsBatch.count) + rhsBatch
    var shape: [Int] = []
    for (l, r) in zip(lhs, rhs) {
      guard l == r || l == 1 || r == 1 else { return nil }
      shape.append(l == 1 ? r : l)
    }
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
