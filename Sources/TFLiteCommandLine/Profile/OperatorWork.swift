// The arithmetic work of an operator, from its options and the tensor shapes the runtime
// prepared: one multiply-accumulate counts as two operations, as GFLOP/s figures usually do.
//
// CONV_2D: 2 · output elements · (filter height · filter width · input channels per group).
// DEPTHWISE_CONV_2D: 2 · output elements · filter height · filter width.
// FULLY_CONNECTED: 2 · output elements · input depth (the filter's second dimension).
// BATCH_MATMUL: 2 · output elements · the contracted dimension of the left operand.
// TRANSPOSE_CONV: 2 · input elements · output channels · filter height · filter width (every input
// element is scattered through the whole filter).
// Work is unknown (nil) for every other operator. Float operands count FLOPs; integer ones count
// integer operations (reported as GOP/s).
import TFLiteFormat
import TFLiteRuntime

/// The arithmetic one run of an operator does.
struct OperatorWork: Equatable {
  /// Operations (two per multiply-accumulate).
  var operations: Int
  /// True when the operands are integers (GOP/s), false for floats (GFLOP/s).
  var isInteger: Bool

  /// `GFLOP/s` or `GOP/s`.
  var unit: String { isInteger ? "GOP/s" : "GFLOP/s" }

  /// The work of `op` with the tensors of `executor` (after allocation), or nil when unknown.
  init?(of op: Operator, code: BuiltinOperator, in executor: SubgraphExecutor) {
    func tensor(_ list: [Int32], _ position: Int) -> RuntimeTensor? {
      guard position < list.count, list[position] >= 0, Int(list[position]) < executor.tensors.count else { return nil }
      return executor.tensors[Int(list[position])]
    }
    guard let input = tensor(op.inputs, 0), let output = tensor(op.outputs, 0) else { return nil }
    let weights = tensor(op.inputs, 1)
    let multiplyAccumulates: Int?
    switch code {
    case .conv2d:
      // Filter [output channels, height, width, input channels per group].
      multiplyAccumulates = weights.flatMap { $0.shape.count == 4 ? output.elementCount * $0.shape[1] * $0.shape[2] * $0.shape[3] : nil }
    case .depthwiseConv2d:
      // Filter [1, height, width, output channels].
      multiplyAccumulates = weights.flatMap { $0.shape.count == 4 ? output.elementCount * $0.shape[1] * $0.shape[2] : nil }
    case .fullyConnected:
      multiplyAccumulates = weights.flatMap { $0.shape.count == 2 ? output.elementCount * $0.shape[1] : nil }
    case .batchMatmul:
      let adjointLeft: Bool
      if case .batchMatMulOptions(let options) = op.builtinOptions { adjointLeft = options.adjX } else { adjointLeft = false }
      let rank = input.shape.count
      multiplyAccumulates = rank >= 2 ? output.elementCount * input.shape[adjointLeft ? rank - 2 : rank - 1] : nil
    case .transposeConv:
      // Inputs: output shape, filter [output channels, height, width, input channels], input.
      guard let filter = weights, filter.shape.count == 4, let values = tensor(op.inputs, 2) else { return nil }
      multiplyAccumulates = values.elementCount * filter.shape[0] * filter.shape[1] * filter.shape[2]
    default:
      multiplyAccumulates = nil
    }
    guard let multiplyAccumulates else { return nil }
    operations = 2 * multiplyAccumulates
    let activations = code == .transposeConv ? (tensor(op.inputs, 2) ?? input) : input
    isInteger = ![ElementType.float32, .float16, .bfloat16, .float64].contains(activations.type)
  }
}
