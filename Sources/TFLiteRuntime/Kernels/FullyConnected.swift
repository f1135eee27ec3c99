/// FULLY_CONNECTED in float32: `output[M×N] = input[M×K] · weightsᵀ + bias`, weights `[N, K]`.
enum FloatFullyConnected {
  /// Packs `[units, depth]` weights into GEMM panels.
  static func packWeights(_ weights: UnsafePointer<Float>, units: Int, depth: Int) -> PackedMatrices<Float> {
    PackedMatrices(weights, sourceStride: 0, count: 1, layout: .columnMajor(depth: depth), depth: depth, columns: units)
  }

  /// Computes the product planned by `plan` (`rows × units`, depth K).
  static func run(
    plan: GEMMPlan, input: UnsafePointer<Float>, weights: UnsafePointer<Float>, bias: UnsafePointer<Float>?,
    activation: ActivationRange, output: UnsafeMutablePointer<Float>, threadCount: Int, scratch: UnsafeMutableRawPointer
  ) {
    FloatGEMM.multiply(
      plan: plan, lhs: RowMajorLeftOperand(base: input, rowStride: plan.depth), rhs: weights, output: output,
      outputStride: plan.columns, epilogue: FloatEpilogue(bias: bias, activation: activation),
      threadCount: threadCount, scratch: scratch)
  }
}
