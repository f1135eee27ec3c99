import TFLiteFormat

// SVDF (float32): a fully connected layer factored into `rank` pairs of feature and time filters.
// The state keeps, per batch row and filter, the last `memory` feature activations. Each step
// shifts every filter's memory one place towards the past, stores the new activation
// `weights_feature[f] · x` at the newest place, and computes
//   output[b, u] = act(Σ_{r < rank} weights_time[u·rank + r] · memory[b, u·rank + r] + bias[u]).

extension KernelRegistry {
  /// SVDF (float32).
  nonisolated(unsafe) static let svdf: [String: any Kernel.Type] = ["SVDF": SVDFKernel.self]
}

/// SVDF: input `[batch, inputs]`, feature weights `[filters, inputs]`, time weights
/// `[filters, memory]`, optional bias `[filters / rank]`, state `[batch, memory · filters]`
/// (variable); output `[batch, filters / rank]`.
final class SVDFKernel: Kernel {
  private static let op = "SVDF"
  private let input: RuntimeTensor
  private let featureWeights: RuntimeTensor
  private let timeWeights: RuntimeTensor
  private let bias: RuntimeTensor?
  private let state: RuntimeTensor
  private let output: RuntimeTensor
  private let rank: Int
  private let activation: RecurrentActivation
  private var batch = 0
  private var inputCount = 0
  private var filterCount = 0
  private var memorySize = 0

  init(node: Node) throws {
    try node.expect(inputs: 5, outputs: 1)
    let options = try FloatOperands.options(of: node, op: Self.op, defaults: SVDFOptions()) {
      if case .svdfOptions(let options) = $0 { options } else { nil }
    }
    input = try node.input(0)
    featureWeights = try node.input(1)
    timeWeights = try node.input(2)
    bias = node.optionalInput(3)
    state = try node.input(4)
    output = try node.output(0)
    let operands = [input, featureWeights, timeWeights, bias, state, output]
    if operands.contains(where: { $0?.type == .int8 || $0?.type == .uint8 || $0?.type == .int16 }) {
      throw KernelError.unsupported("SVDF with quantized operands (only FLOAT32 here)")
    }
    try FloatOperands.require(operands, op: Self.op)
    try FloatOperands.requireDense(operands, op: Self.op)
    guard options.rank > 0 else { throw KernelError.invalid("SVDF needs a positive rank, got \(options.rank)") }
    rank = Int(options.rank)
    activation = try RecurrentActivation(options.fusedActivationFunction, op: Self.op)
  }

  func prepare(_ context: inout PrepareContext) throws {
    try FloatOperands.requireRank(input, 2, op: Self.op, role: "input")
    try FloatOperands.requireRank(featureWeights, 2, op: Self.op, role: "feature weights")
    try FloatOperands.requireRank(timeWeights, 2, op: Self.op, role: "time weights")
    (batch, inputCount) = (input.shape[0], input.shape[1])
    (filterCount, memorySize) = (featureWeights.shape[0], timeWeights.shape[1])
    guard featureWeights.shape[1] == inputCount, timeWeights.shape[0] == filterCount, filterCount % rank == 0,
      memorySize > 0
    else {
      throw KernelError.invalid(
        "SVDF feature weights \(featureWeights.shape) and time weights \(timeWeights.shape) do not fit input \(input.shape) and rank \(rank)")
    }
    let unitCount = filterCount / rank
    if let bias, bias.shape != [unitCount] {
      throw KernelError.invalid("SVDF bias must be [\(unitCount)], got \(bias.shape)")
    }
    guard state.elementCount == batch * filterCount * memorySize else {
      throw KernelError.invalid("SVDF state \(state.shape) does not hold \(batch) rows of \(filterCount * memorySize) values")
    }
    output.shape = [batch, unitCount]
    context.requestScratch(bytes: batch * filterCount * MemoryLayout<Float>.stride)
  }

  func eval(_ context: EvalContext) throws {
    guard let scratch = context.scratch?.assumingMemoryBound(to: Float.self) else {
      throw KernelError.invalid("SVDF was not prepared")
    }
    let memory = state.pointer(as: Float.self)
    let total = batch * filterCount * memorySize
    // Overlapping ranges: the raw copy moves them like memmove.
    if total > 1 { UnsafeMutableRawPointer(memory).copyMemory(from: memory + 1, byteCount: (total - 1) * MemoryLayout<Float>.stride) }
    scratch.update(repeating: 0, count: batch * filterCount)
    RecurrentMath.multiplyAccumulate(
      matrix: featureWeights.pointer(as: Float.self), rows: filterCount, depth: inputCount,
      vectors: input.pointer(as: Float.self), vectorStride: inputCount, batch: batch, result: scratch,
      resultStride: filterCount)
    let time = timeWeights.pointer(as: Float.self)
    for row in 0..<batch * filterCount {
      let filterMemory = memory + row * memorySize
      filterMemory[memorySize - 1] = scratch[row]
      scratch[row] = RecurrentMath.dot(time + (row % filterCount) * memorySize, filterMemory, count: memorySize)
    }
    let unitCount = filterCount / rank
    let values = output.pointer(as: Float.self)
    for index in 0..<batch * unitCount {
      var sum: Float = 0
      for part in 0..<rank { sum += scratch[index * rank + part] }
      values[index] = sum + (bias.map { $0.pointer(as: Float.self)[index % unitCount] } ?? 0)
    }
    activation.apply(to: values, count: batch * unitCount)
  }
}
