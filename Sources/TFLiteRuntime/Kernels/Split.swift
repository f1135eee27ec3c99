// SPLIT, SPLIT_V and UNPACK: each output is one part of an AxisPartition of the input.

/// SPLIT_V's part sizes: `sizes` with at most one −1 filled so that they add up to `extent`.
func splitSizes(_ sizes: [Int], extent: Int) throws -> [Int] {
  var resolved = sizes
  let free = sizes.indices.filter { sizes[$0] == -1 }
  guard free.count <= 1, sizes.allSatisfy({ $0 >= -1 && $0 <= Int(Int32.max) }) else {
    throw KernelError.invalid("SPLIT_V: size_splits \(sizes) may hold one -1 and otherwise non-negative int32 sizes")
  }
  let known = sizes.filter { $0 >= 0 }.reduce(0, +)
  if let free = free.first {
    guard known <= extent else { throw KernelError.invalid("SPLIT_V: size_splits \(sizes) exceed the axis size \(extent)") }
    resolved[free] = extent - known
  } else {
    guard known == extent else { throw KernelError.invalid("SPLIT_V: size_splits \(sizes) do not add up to \(extent)") }
  }
  return resolved
}
