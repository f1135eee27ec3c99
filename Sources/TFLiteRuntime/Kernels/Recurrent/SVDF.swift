import TFLiteFormat

// SVDF (FLOAT32 activations, FLOAT32 or hybrid INT8 weights): a fully connected layer factored into `rank` pairs of feature and time filters.
// The state keeps, per batch row and filter, the last `memory` feature activations. Each step
// shifts every filter's memory one place towards the past, stores the new activation
// `weights_feature[f] · x` at the newest place, and computes
//   output[b, u] = act(Σ_{r < rank} weights_time[u·rank + r] · memory[b, u·rank + r] + bias[u]).

/// SVDF: input `[batch, inputs]`, feature weights `[filters, inputs]`, time weights
/// `[filters, memory]`, optional bias `[filters / rank]`, state `[batch, memory · filters]`
/// (variable); output `[batch, filters / rank]`. The weights are FLOAT32, or INT8 with one scale
/// each (hybrid: see ``RecurrentMatrix`` and ``RecurrentVector``).
final class SVDFKernel: Kernel {
  private static let op = "SVDF"
  private let input: RuntimeTensor
  private var featureWeights: RecurrentMatrix
  private let timeWeights: RecurrentVector
  private let bias: RuntimeTensor?
  private let state: RuntimeTensor
  private let output: RuntimeTensor
  private let rank: Int
  private let activation: RecurrentActivation
  /// How the input is quantized for hybrid weights; nil for float weights.
  private let quantization: HybridInputQuantization?
  private var inputScratch: RecurrentQuantizationScratch?
  private var featuresOffset = 0
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
    let features = try node.input(1)
    let hybrid = features.type != .float32
    quantization = hybrid ? (options.asymmetricQuantizeInputs ? .asymmetric : .symmetric) : nil
    featureWeights = try RecurrentMatrix(features, hybrid: hybrid, op: Self.op)
    timeWeights = try RecurrentVector(try node.input(2), hybrid: hybrid, op: Self.op)
    bias = node.optionalInput(3)
    state = try node.input(4)
    output = try node.output(0)
    let operands = [input, bias, state, output]
    try FloatOperands.require(operands, op: Self.op)
    guard options.rank > 0 else { throw KernelError.invalid("SVDF needs a positive rank, got \(options.rank)") }
    rank = Int(options.rank)
    activation = try RecurrentActivation(options.fusedActivationFunction, op: Self.op)
  }

  func prepare(_ context: inout PrepareContext) throws {
    try FloatOperands.requireRank(input, 2, op: Self.op, role: "input")
    try FloatOperands.requireRank(featureWeights.tensor, 2, op: Self.op, role: "feature weights")
    try FloatOperands.requireRank(timeWeights.tensor, 2, op: Self.op, role: "time weights")
    (batch, inputCount) = (input.shape[0], input.shape[1])
    (filterCount, memorySize) = (featureWeights.tensor.shape[0], timeWeights.tensor.shape[1])
    guard filterCount % rank == 0, memorySize > 0 else {
      throw KernelError.invalid("SVDF has \(filterCount) filters and memory \(memorySize) for rank \(rank)")
    }
    try featureWeights.prepare(rows: filterCount, depth: inputCount, op: Self.op, role: "feature weights")
    try timeWeights.prepare(shape: [filterCount, memorySize], op: Self.op, role: "time weights")
    let unitCount = filterCount / rank
    if let bias, bias.shape != [unitCount] {
      throw KernelError.invalid("SVDF bias must be [\(unitCount)], got \(bias.shape)")
    }
    let (stateWidth, overflow) = filterCount.multipliedReportingOverflow(by: memorySize)
    guard !overflow else { throw KernelError.invalid("SVDF memory \(memorySize) of \(filterCount) filters is too large") }
    try checkRecurrentState(state, rows: batch, width: stateWidth, op: Self.op, role: "state")
    output.shape = [batch, unitCount]
    var scratch = ScratchLayout()
    featuresOffset = scratch.reserve(floats: batch * filterCount)
    inputScratch = RecurrentQuantizationScratch(batch: batch, depth: inputCount, quantization: quantization, scratch: &scratch)
    context.requestScratch(bytes: scratch.byteCount)
  }

  func eval(_ context: EvalContext) throws {
    guard let block = context.scratch, let inputScratch else { throw KernelError.invalid("SVDF was not prepared") }
    let scratch = (block + featuresOffset).assumingMemoryBound(to: Float.self)
    let memory = state.pointer(as: Float.self)
    let total = batch * filterCount * memorySize
    // Overlapping ranges: the raw copy moves them like memmove.
    if total > 1 { UnsafeMutableRawPointer(memory).copyMemory(from: memory + 1, byteCount: (total - 1) * MemoryLayout<Float>.stride) }
    scratch.update(repeating: 0, count: batch * filterCount)
    featureWeights.multiplyAccumulate(
      inputScratch.vectors(input.pointer(as: Float.self), stride: inputCount, scratch: block), batch: batch,
      into: scratch, resultStride: filterCount)
    let time = timeWeights.values
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
