// TOPK_V2: the k largest entries of each row of the last axis, largest first; equal values keep
// their order (the lower index first). Each row keeps a heap of its best k candidates in its own
// row of the indices output (worst candidate on top), so rows run in parallel without scratch.

/// True when entry `lhs` ranks below entry `rhs`: a smaller value, or an equal value at a higher index.
@inline(__always)
private func ranksBelow<Value: Comparable>(_ lhs: Int32, _ rhs: Int32, in row: UnsafePointer<Value>) -> Bool {
  let (left, right) = (row[Int(lhs)], row[Int(rhs)])
  return left < right || (!(right < left) && lhs > rhs)
}

/// Restores the heap below `start` (each parent ranks below its children) in `heap[0..<count]`.
@inline(__always)
private func siftDown<Value: Comparable>(
  _ heap: UnsafeMutablePointer<Int32>, from start: Int, count: Int, row: UnsafePointer<Value>
) {
  var parent = start
  while true {
    let left = 2 &* parent &+ 1
    guard left < count else { return }
    let right = left &+ 1
    let lower = right < count && ranksBelow(heap[right], heap[left], in: row) ? right : left
    guard ranksBelow(heap[lower], heap[parent], in: row) else { return }
    (heap[parent], heap[lower]) = (heap[lower], heap[parent])
    parent = lower
  }
}

/// Writes into `indices` the positions of the `k` largest of the `length` values at `row`, best
/// first; equal values keep their order (the lower position first).
func rankTop<Value: Comparable>(row: UnsafePointer<Value>, length: Int, k: Int, indices: UnsafeMutablePointer<Int32>) {
  guard k > 0 else { return }
  // Build a heap of the first k entries, then let every later entry replace the worst one it beats.
  for position in 0..<k { indices[position] = Int32(truncatingIfNeeded: position) }
  for start in stride(from: k / 2 - 1, through: 0, by: -1) { siftDown(indices, from: start, count: k, row: row) }
  for position in k..<length {
    let candidate = Int32(truncatingIfNeeded: position)
    if ranksBelow(indices[0], candidate, in: row) {
      indices[0] = candidate
      siftDown(indices, from: 0, count: k, row: row)
    }
  }
  // Heap sort: moving the worst remaining entry to the end leaves the best first.
  for end in stride(from: k - 1, to: 0, by: -1) {
    (indices[0], indices[end]) = (indices[end], indices[0])
    siftDown(indices, from: 0, count: end, row: row)
  }
}

// MARK: - Kernel

/// TOPK_V2 with a constant k over float32, int8, uint8, int16, int32 or int64 values; int32 indices.
final class TopKKernel: Kernel {
  private static let opName = "TOPK_V2"
  private let input: RuntimeTensor
  private let kTensor: RuntimeTensor
  private let values: RuntimeTensor
  private let indices: RuntimeTensor
  private var k = 0

  init(node: Node) throws {
    try node.expect(inputs: 2, outputs: 2)
    input = try node.input(0)
    kTensor = try node.input(1)
    values = try node.output(0)
    indices = try node.output(1)
    _ = try commonElementType(
      [input, values], allowed: [.float32, .int8, .uint8, .int16, .int32, .int64], operatorName: Self.opName)
    try requireSameQuantization([input, values], op: Self.opName)
    guard indices.type == .int32 else { throw KernelError.unsupported("TOPK_V2 with \(indices.type.name) indices") }
  }

  func prepare(_ context: inout PrepareContext) throws {
    let kValues = try constantIntegers(kTensor, op: Self.opName, operand: "k")
    guard kValues.count == 1 else { throw KernelError.invalid("TOPK_V2: k must be a scalar, got \(kTensor.shape)") }
    guard let length = input.shape.last else { throw KernelError.invalid("TOPK_V2: input must be at least 1-D") }
    guard kValues[0] >= 0, kValues[0] <= length else {
      throw KernelError.invalid("TOPK_V2: k = \(kValues[0]) must lie in [0, \(length)]")
    }
    k = kValues[0]
    let shape = input.shape.dropLast() + [k]
    values.shape = Array(shape)
    indices.shape = Array(shape)
  }

  func eval(_ context: EvalContext) throws {
    let source = try tensorData(input)
    let valuesData = try tensorData(values)
    let indicesData = try tensorData(indices).assumingMemoryBound(to: Int32.self)
    switch input.type {
    case .float32: run(context, source, valuesData, indicesData, Float.self)
    case .int8: run(context, source, valuesData, indicesData, Int8.self)
    case .uint8: run(context, source, valuesData, indicesData, UInt8.self)
    case .int16: run(context, source, valuesData, indicesData, Int16.self)
    case .int32: run(context, source, valuesData, indicesData, Int32.self)
    default: run(context, source, valuesData, indicesData, Int64.self)
    }
  }

  private func run<Value: Comparable>(
    _ context: EvalContext, _ source: UnsafeMutableRawPointer, _ valuesData: UnsafeMutableRawPointer,
    _ indicesData: UnsafeMutablePointer<Int32>, _ type: Value.Type
  ) {
    let length = input.shape.last ?? 0
    guard length > 0, k > 0 else { return }
    let rows = input.elementCount / length
    let k = k
    let row = UnsafePointer(source.assumingMemoryBound(to: Value.self))
    let output = valuesData.assumingMemoryBound(to: Value.self)
    context.forEachChunk(of: rows, minimumChunk: max(1, cheapElementwiseChunk / length)) { range in
      for index in range {
        let (values, indices) = (row + index &* length, indicesData + index &* k)
        rankTop(row: values, length: length, k: k, indices: indices)
        for position in 0..<k { output[index &* k &+ position] = values[Int(indices[position])] }
      }
    }
  }
}
