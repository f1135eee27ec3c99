// SELECT and SELECT_V2: output = condition ? x : y, element by element.
//
// SELECT_V2 broadcasts all three operands. SELECT (version 1) accepts a condition of the same
// shape as x, a scalar, or a vector matching x's first dimension (selecting whole slices); the
// kernel expresses the last case as a condition of shape [n, 1, …, 1] and uses the same layout.
// Values are moved as raw bit patterns, so one specialization per element width serves all types.

/// One operand of a select, streamed or repeated along a segment (decided per layout, not per
/// element, so the branch is perfectly predictable).
private struct SelectOperand<Scalar: SIMDScalar & BitwiseCopyable> {
  let base: UnsafePointer<Scalar>
  let isRepeated: Bool

  @inline(__always)
  func vector(at index: Int, lanes: Int) -> SIMD16<Scalar> {
    if isRepeated { return SIMD16(repeating: base[0]) }
    return StreamedOperand(base, offset: index).vector(at: 0, lanes: lanes)
  }
}

/// Runs selects over broadcast operands.
enum SelectDriver {
  /// Computes output elements `range` of `layout` (built from the shapes of condition, x, y);
  /// `Scalar` is any type of the elements' width.
  static func run<Scalar: SelectableLanes>(
    layout: BroadcastLayout, condition: UnsafePointer<UInt8>,
    x: UnsafePointer<Scalar>, y: UnsafePointer<Scalar>,
    output: UnsafeMutablePointer<Scalar>, range: Range<Int>
  ) {
    let conditionRepeats = layout.innerStride(of: 0) == 0
    let xRepeats = layout.innerStride(of: 1) == 0
    let yRepeats = layout.innerStride(of: 2) == 0
    layout.forEachSegment(in: range) { start, conditionOffset, xOffset, yOffset, count in
      let conditionSource = SelectOperand(base: condition + conditionOffset, isRepeated: conditionRepeats)
      let xSource = SelectOperand(base: x + xOffset, isRepeated: xRepeats)
      let ySource = SelectOperand(base: y + yOffset, isRepeated: yRepeats)
      storeEachVector(count: count, into: output + start) { index, lanes in
        Scalar.select(
          conditionSource.vector(at: index, lanes: lanes),
          xSource.vector(at: index, lanes: lanes), ySource.vector(at: index, lanes: lanes))
      }
    }
  }
}
