// WHERE with one operand: the coordinates (int64) of the condition's non-zero elements in row-major
// order, one row of `rank` coordinates each. The row count depends on the values, so the node is
// prepared once its condition is known (at prepare time for constants, else during `invoke()`).

/// Counts the non-zero elements (NaN counts, −0 does not) of a tensor of `shape`, and writes their
/// coordinates into `output` (when given), at most `capacity` rows. Returns the count.
func scanNonZero<Value: Numeric>(
  _ values: UnsafePointer<Value>, shape: [Int], into output: UnsafeMutablePointer<Int64>?, capacity: Int
) -> Int {
  let rank = shape.count
  var found = 0
  shape.withUnsafeBufferPointer { extents in
    withUnsafeTemporaryAllocation(of: Int64.self, capacity: max(rank, 1)) { coordinates in
      coordinates.initialize(repeating: 0)
      let count = extents.reduce(1, &*)
      for index in 0..<count {
        if values[index] != 0 {
          if let output, found < capacity, let start = coordinates.baseAddress {
            (output + found &* rank).update(from: start, count: rank)
          }
          found &+= 1
        }
        guard output != nil else { continue }
        // Advance the row-major coordinates.
        var axis = rank &- 1
        while axis >= 0 {
          coordinates[axis] &+= 1
          if coordinates[axis] < Int64(extents[axis]) { break }
          coordinates[axis] = 0
          axis &-= 1
        }
      }
    }
  }
  return found
}

// MARK: - Kernel

/// WHERE over a bool, float32, int8, uint8, int32, uint32 or int64 condition of rank ≥ 1.
final class WhereKernel: Kernel {
  private let condition: RuntimeTensor
  private let output: RuntimeTensor

  init(node: Node) throws {
    (condition, output) = try node.singleInputAndOutput()
    guard [.bool, .float32, .int8, .uint8, .int32, .uint32, .int64].contains(condition.type) else {
      throw KernelError.unsupported("WHERE on a \(condition.type.name) condition")
    }
    guard output.type == .int64 else { throw KernelError.invalid("WHERE output must be INT64, got \(output.type.name)") }
  }

  func prepare(_ context: inout PrepareContext) throws {
    guard !condition.shape.isEmpty else { throw KernelError.invalid("WHERE needs a condition of rank at least 1") }
    guard condition.hasValuesForPrepare, let data = condition.data else {
      throw KernelError.needsInputValues("WHERE condition is computed at run time")
    }
    output.shape = [scan(data, into: nil, capacity: 0), condition.shape.count]
  }

  func eval(_ context: EvalContext) throws {
    let source = try tensorData(condition)
    let destination = try tensorData(output).assumingMemoryBound(to: Int64.self)
    _ = scan(source, into: destination, capacity: output.shape.first ?? 0)
  }

  /// `scanNonZero` over the condition's elements, typed by the condition's type (bool as bytes).
  private func scan(_ data: UnsafeMutableRawPointer, into output: UnsafeMutablePointer<Int64>?, capacity: Int) -> Int {
    let shape = condition.shape
    switch condition.type {
    case .float32: return scanNonZero(data.assumingMemoryBound(to: Float.self), shape: shape, into: output, capacity: capacity)
    case .int8: return scanNonZero(data.assumingMemoryBound(to: Int8.self), shape: shape, into: output, capacity: capacity)
    case .int32: return scanNonZero(data.assumingMemoryBound(to: Int32.self), shape: shape, into: output, capacity: capacity)
    case .uint32: return scanNonZero(data.assumingMemoryBound(to: UInt32.self), shape: shape, into: output, capacity: capacity)
    case .int64: return scanNonZero(data.assumingMemoryBound(to: Int64.self), shape: shape, into: output, capacity: capacity)
    default: return scanNonZero(data.assumingMemoryBound(to: UInt8.self), shape: shape, into: output, capacity: capacity)
    }
  }
}
