import TFLiteFormat

// BUCKETIZE: each input value's bucket among the option's ascending float boundaries, as an
// int32: the number of boundaries ≤ the value. float32, int32 and int64 inputs compare in float32
// (as TFLite's upper_bound over float boundaries does), float64 inputs in float64.

/// BUCKETIZE of float32, float64, int32 or int64 values.
final class BucketizeKernel: Kernel {
  private static let opName = "BUCKETIZE"
  private let input: RuntimeTensor
  private let output: RuntimeTensor
  private let boundaries: [Float]

  init(node: Node) throws {
    (input, output) = try node.singleInputAndOutput()
    guard [.float32, .float64, .int32, .int64].contains(input.type), output.type == .int32 else {
      throw KernelError.unsupported("\(Self.opName) from \(input.type.name) to \(output.type.name)")
    }
    boundaries = try FloatOperands.options(of: node, op: Self.opName, defaults: BucketizeOptions()) {
      if case .bucketizeOptions(let options) = $0 { options } else { nil }
    }.boundaries
    guard zip(boundaries, boundaries.dropFirst()).allSatisfy({ $0 <= $1 }) else {
      throw KernelError.invalid("\(Self.opName) boundaries are not sorted: \(boundaries)")
    }
  }

  func prepare(_ context: inout PrepareContext) throws {
    output.shape = input.shape
  }

  func eval(_ context: EvalContext) throws {
    let (source, destination) = try evalPointers(input, output, op: Self.opName)
    let buckets = destination.assumingMemoryBound(to: Int32.self)
    switch input.type {
    case .float64: assign(source.assumingMemoryBound(to: Double.self), buckets) { $0 }
    case .int32: assign(source.assumingMemoryBound(to: Int32.self), buckets) { Double(Float($0)) }
    case .int64: assign(source.assumingMemoryBound(to: Int64.self), buckets) { Double(Float($0)) }
    default: assign(source.assumingMemoryBound(to: Float.self), buckets) { Double($0) }
    }
  }

  /// Writes the bucket of every value, compared as `comparable(value)`.
  private func assign<Value>(
    _ values: UnsafePointer<Value>, _ buckets: UnsafeMutablePointer<Int32>, _ comparable: (Value) -> Double
  ) {
    boundaries.withUnsafeBufferPointer { edges in
      for index in 0..<input.elementCount {
        let value = comparable(values[index])
        // Binary search for the first boundary greater than the value.
        var (low, high) = (0, edges.count)
        while low < high {
          let middle = (low + high) / 2
          if value < Double(edges[middle]) { high = middle } else { low = middle + 1 }
        }
        buckets[index] = Int32(low)
      }
    }
  }
}
