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
