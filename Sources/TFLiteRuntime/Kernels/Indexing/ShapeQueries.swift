// RANK: the input's rank as an int32 scalar (known from the shape alone, so computed at prepare).
// BROADCAST_ARGS: the broadcast of two shape vectors (int32 or int64, both of one type), aligned on
// their last axes; extents must be equal or 1, otherwise the node fails.

/// RANK of any tensor.
final class RankKernel: Kernel {
  static let dependsOnlyOnInputShapes = true
  private let input: RuntimeTensor
  private let output: RuntimeTensor

  init(node: Node) throws {
    (input, output) = try node.singleInputAndOutput()
    guard output.type == .int32 else { throw KernelError.unsupported("RANK: output of type \(output.type.name)") }
  }

  func prepare(_ context: inout PrepareContext) throws {
    output.shape = []
  }

  func eval(_ context: EvalContext) throws {
    try tensorData(output).storeBytes(of: Int32(truncatingIfNeeded: input.shape.count), as: Int32.self)
  }
}

/// BROADCAST_ARGS of two int32 or two int64 shape vectors.
final class BroadcastArgsKernel: Kernel {
  private let lhs: RuntimeTensor
  private let rhs: RuntimeTensor
  private let output: RuntimeTensor

  init(node: Node) throws {
    (lhs, rhs, output) = try node.twoInputsAndOutput()
    _ = try commonElementType([lhs, rhs, output], allowed: [.int32, .int64], operatorName: "BROADCAST_ARGS")
  }

  func prepare(_ context: inout PrepareContext) throws {
    guard lhs.shape.count == 1, rhs.shape.count == 1 else {
      throw KernelError.invalid("BROADCAST_ARGS needs two shape vectors, got \(lhs.shape) and \(rhs.shape)")
    }
    output.shape = [max(lhs.shape[0], rhs.shape[0])]
  }

  func eval(_ context: EvalContext) throws {
    if output.type == .int32 {
      try broadcast(Int32.self)
    } else {
      try broadcast(Int64.self)
    }
  }

  private func broadcast<Extent: FixedWidthInteger>(_: Extent.Type) throws {
    let left = try tensorData(lhs).assumingMemoryBound(to: Extent.self)
    let right = try tensorData(rhs).assumingMemoryBound(to: Extent.self)
    let result = try tensorData(output).assumingMemoryBound(to: Extent.self)
    let (leftCount, rightCount, count) = (lhs.elementCount, rhs.elementCount, output.elementCount)
    for axis in 0..<count {
      let a: Extent = axis < count - leftCount ? 1 : left[axis - (count - leftCount)]
      let b: Extent = axis < count - rightCount ? 1 : right[axis - (count - rightCount)]
      guard a == b || a == 1 || b == 1 else {
        throw KernelError.invalid("BROADCAST_ARGS: extents \(a) and \(b) do not broadcast")
      }
      result[axis] = a == 1 ? b : a
    }
  }
}
