// TRANSPOSE: a permuted StridedLayout of the input (fused axes, cache-blocked 2-D tiles).

/// Validates a TRANSPOSE permutation (entries may be negative) for a tensor of `rank` axes.
func transposePermutation(_ values: [Int], rank: Int) throws -> [Int] {
  guard values.count == rank else {
    throw KernelError.invalid("TRANSPOSE: permutation \(values) must have one entry per input axis (\(rank))")
  }
  guard rank <= 6 else { throw KernelError.unsupported("TRANSPOSE: at most 6 axes are supported, got \(rank)") }
  let permutation = values.map { $0 < 0 ? $0 + rank : $0 }
  guard permutation.sorted() == Array(0..<rank) else {
    throw KernelError.invalid("TRANSPOSE: \(values) is not a permutation of \(rank) axes")
  }
  return permutation
}

extension StridedLayout {
  /// The view that permutes a dense tensor of `inputShape`: output axis `i` is input axis `permutation[i]`.
  static func transpose(inputShape: [Int], permutation: [Int]) -> StridedLayout {
    let inputStrides = denseStrides(inputShape)
    return StridedLayout(
      extents: permutation.map { inputShape[$0] }, strides: permutation.map { inputStrides[$0] }, offset: 0)
  }
}

// MARK: - Kernel

extension KernelRegistry {
  /// TRANSPOSE.
  // Written once by its initializer and only read afterwards.
  nonisolated(unsafe) static let transpose: [String: any Kernel.Type] = ["TRANSPOSE": TransposeKernel.self]
}

/// TRANSPOSE by a constant permutation.
final class TransposeKernel: ViewCopyKernel {
  static let opName = "TRANSPOSE"
  let input: RuntimeTensor
  let output: RuntimeTensor
  private let permutation: RuntimeTensor
  private let elementSize: Int
  private(set) var copy: StridedCopy?

  init(node: Node) throws {
    try node.expect(inputs: 2, outputs: 1)
    input = try node.input(0)
    permutation = try node.input(1)
    output = try node.output(0)
    try requireSameType([input, output], op: Self.opName)
    elementSize = try movableElementSize(input, op: Self.opName)
  }

  func prepare(_ context: inout PrepareContext) throws {
    let values = try constantIntegers(permutation, op: Self.opName, operand: "permutation")
    let axes = try transposePermutation(values, rank: input.shape.count)
    output.shape = axes.map { input.shape[$0] }
    copy = StridedCopy(.transpose(inputShape: input.shape, permutation: axes), elementSize: elementSize)
  }
}
