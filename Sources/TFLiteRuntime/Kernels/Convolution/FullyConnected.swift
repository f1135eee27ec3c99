import TFLiteFormat
import TFLiteLinearAlgebra

/// FULLY_CONNECTED (float32, DEFAULT weights format): `input` of any rank is read as `[M, K]` with
/// `K = weights.shape[1]` and `M = input elements / K`; `weights [N, K]`; optional `bias [N]`.
/// The output is `[M, N]`, or with `keep_num_dims` the input's shape with its last dimension replaced by N.
final class FullyConnectedKernel: Kernel {
  /// A float GEMM.
  var kernelDescription: String? { KernelDescription.floatGEMM }

  private let operands: WeightedOperands
  private var input: RuntimeTensor { operands.input }
  private var weights: RuntimeTensor { operands.weights }
  private var bias: RuntimeTensor? { operands.bias }
  private var output: RuntimeTensor { operands.output }
  private let keepNumDims: Bool
  private let activation: FloatClampRange
  private var plan: GEMMPlan?
  // Written only by `prepare`, read by every `eval`: no run-time exclusivity check per read.
  @exclusivity(unchecked) private var packedWeights = PackedWeights()
  @exclusivity(unchecked) private var paddedBias = PaddedBias()
  private var gemmScratchOffset = 0

  init(node: Node) throws {
    operands = try WeightedOperands(node, op: "FULLY_CONNECTED")
    let options = try FloatOperands.options(of: node, op: "FULLY_CONNECTED", defaults: FullyConnectedOptions()) {
      if case .fullyConnectedOptions(let options) = $0 { options } else { nil }
    }
    guard options.weightsFormat == .default else {
      throw KernelError.unsupported("FULLY_CONNECTED with weights format \(options.weightsFormat.name)")
    }
    keepNumDims = options.keepNumDims
    activation = try FloatClampRange(options.fusedActivationFunction, op: "FULLY_CONNECTED")
  }

  func prepare(_ context: inout PrepareContext) throws {
    let shape = try FullyConnectedShape(input: input, weights: weights, bias: bias, keepNumDims: keepNumDims)
    let (rows, depth, units) = (shape.rows, shape.depth, shape.units)
    output.shape = shape.outputShape
    // Depth blocks keep a block of a weight panel in L1 while several row tiles reuse it. With one
    // tile of rows (batch 1: a matrix × vector product) nothing reuses it, and blocks would only
    // cut the weights' one sequential stream into 16 KiB pieces 64·depth bytes apart.
    let plan = GEMMPlan(
      rows: rows, columns: units, depth: depth, threadCount: context.threadCount, splitsDepth: rows > GEMMTile.rows)
    var scratch = ScratchLayout()
    try packedWeights.prepare(
      weights, count: 1, sourceStride: 0, layout: .columnMajor(depth: depth), depth: depth, columns: units,
      scratch: &scratch)
    context.releaseAfterCopying(weights)
    paddedBias.prepare(bias, groups: 1, columns: units, scratch: &scratch)
    gemmScratchOffset = scratch.reserve(
      bytes: plan.scratchBytes(leftOperandPacks: false, threadCount: context.threadCount))
    context.requestScratch(bytes: scratch.byteCount)
    self.plan = plan
  }

  func eval(_ context: EvalContext) throws {
    guard output.elementCount > 0 else { return }
    guard let plan, let scratch = context.scratch else { throw KernelError.invalid("FULLY_CONNECTED was not prepared") }
    let packed = try packedWeights.pointer(weights, scratch: scratch)
    let biasPointer = paddedBias.pointer(bias, scratch: scratch)
    FloatGEMM.multiply(
      plan: plan, lhs: RowMajorLeftOperand(base: UnsafePointer(input.pointer(as: Float.self)), rowStride: plan.depth),
      rhs: packed, output: output.pointer(as: Float.self), outputStride: plan.columns,
      epilogue: FloatEpilogue(bias: biasPointer, activation: activation), threadCount: context.threadCount,
      scratch: scratch + gemmScratchOffset)
  }
}

/// The geometry of a FULLY_CONNECTED node, whatever its element types: the input read as `rows`
/// rows of `depth` values, weights `[units, depth]`, an optional bias `[units]`, and the output
/// `[rows, units]` or, with `keep_num_dims`, the input's shape with its last dimension `units`.
struct FullyConnectedShape {
  /// Rows of the input (M).
  let rows: Int
  /// Values per row (K).
  let depth: Int
  /// Output channels (N).
  let units: Int
  /// The output's shape.
  let outputShape: [Int]

  /// Checks the operands' shapes; throws `invalid` for operands that do not fit.
  init(input: RuntimeTensor, weights: RuntimeTensor, bias: RuntimeTensor?, keepNumDims: Bool) throws {
    let op = "FULLY_CONNECTED"
    try FloatOperands.requireRank(weights, 2, op: op, role: "weights")
    (units, depth) = (weights.shape[0], weights.shape[1])
    guard depth > 0, input.elementCount % depth == 0 else {
      throw KernelError.invalid("\(op) input \(input.shape) cannot be read as rows of \(depth) values")
    }
    rows = input.elementCount / depth
    try FloatOperands.requireBias(bias, count: units, op: op)
    if keepNumDims {
      guard input.shape.last == depth else {
        throw KernelError.invalid(
          "\(op) with keep_num_dims needs the input's last dimension to be \(depth), got \(input.shape)")
      }
      outputShape = input.shape.dropLast() + [units]
    } else {
      outputShape = [rows, units]
    }
    _ = try FloatOperands.checkedCount(outputShape, "\(op) output")
  }
}
