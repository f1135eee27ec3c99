// Helpers for the differential kernel tests: a seeded generator, random shapes and values, and
// a plain scalar model of broadcasting that the SIMD drivers are compared with.
@testable import TFLiteRuntime


extension SeededGenerator {
  /// Random integers in `range`.
  mutating func integers<T: FixedWidthInteger>(_ count: Int, in range: ClosedRange<T>) -> [T] {
    (0..<count).map { _ in T.random(in: range, using: &self) }
  }

  /// A random shape of `rank` dimensions with sizes in `sizes`.
  mutating func shape(rank: Int, sizes: ClosedRange<Int> = 1...5) -> [Int] {
    (0..<rank).map { _ in Int.random(in: sizes, using: &self) }
  }

  /// Two shapes that broadcast to `output`: each dimension of each operand is either the output's
  /// or 1, and an operand may drop leading dimensions.
  mutating func broadcastPair(output: [Int]) -> ([Int], [Int]) {
    func operand(_ generator: inout SeededGenerator) -> [Int] {
      let dropped = Int.random(in: 0...output.count, using: &generator)
      return output.dropFirst(dropped).map { Bool.random(using: &generator) ? $0 : 1 }
    }
    return (operand(&self), operand(&self))
  }
}

/// Plain scalar model of NumPy broadcasting: the element of an operand of `shape` that feeds
/// output element `index` of `outputShape`.
func broadcastSourceIndex(_ index: Int, outputShape: [Int], shape: [Int]) -> Int {
  var remainder = index
  var coordinates = [Int](repeating: 0, count: outputShape.count)
  for dimension in outputShape.indices.reversed() {
    coordinates[dimension] = remainder % outputShape[dimension]
    remainder /= outputShape[dimension]
  }
  let padding = outputShape.count - shape.count
  var source = 0
  for dimension in shape.indices {
    let coordinate = shape[dimension] == 1 ? 0 : coordinates[dimension + padding]
    source = source * shape[dimension] + coordinate
  }
  return source
}

/// `count` elements split into `chunks` nearly equal ranges, as a kernel splits work across threads.
func chunkRanges(_ count: Int, _ chunks: Int) -> [Range<Int>] {
  (0..<chunks).map { chunk in (count * chunk / chunks)..<(count * (chunk + 1) / chunks) }
}

/// An array of `count` elements written by `body` through a pointer.
func filledArray<Element>(count: Int, _ body: (UnsafeMutablePointer<Element>) throws -> Void) rethrows -> [Element] {
  try [Element](unsafeUninitializedCapacity: max(count, 1)) { buffer, initialized in
    try body(buffer.baseAddress!)
    initialized = count
  }
}

/// Runs `operation` through `BinaryDriver` on arrays, split into `chunks` ranges as threads would.
func runBinary<Operation: BinaryLanewiseOperation>(
  _ operation: Operation, _ lhs: [Operation.Operand], _ lhsShape: [Int],
  _ rhs: [Operation.Operand], _ rhsShape: [Int], chunks: Int = 1
) throws -> (values: [Operation.Result], shape: [Int]) {
  let layout = try BroadcastLayout(broadcasting: [lhsShape, rhsShape])
  let output: [Operation.Result] = filledArray(count: layout.elementCount) { output in
    for range in chunkRanges(layout.elementCount, chunks) {
      BinaryDriver.run(operation, layout: layout, lhs: lhs, rhs: rhs, output: output, range: range)
    }
  }
  return (output, layout.shape)
}

/// Runs `operation` through `UnaryDriver` on an array, split into `chunks` ranges.
func runUnary<Operation: UnaryLanewiseOperation>(
  _ operation: Operation, _ input: [Operation.Operand], chunks: Int = 1
) -> [Operation.Result] {
  filledArray(count: input.count) { output in
    for range in chunkRanges(input.count, chunks) {
      UnaryDriver.run(operation, input: input, output: output, range: range)
    }
  }
}

/// The expected result of a broadcast binary function computed one scalar at a time.
func scalarBroadcast<Operand, Result>(
  _ lhs: [Operand], _ lhsShape: [Int], _ rhs: [Operand], _ rhsShape: [Int], outputShape: [Int],
  _ function: (Operand, Operand) -> Result
) -> [Result] {
  let count = outputShape.reduce(1, *)
  return (0..<count).map { index in
    function(
      lhs[broadcastSourceIndex(index, outputShape: outputShape, shape: lhsShape)],
      rhs[broadcastSourceIndex(index, outputShape: outputShape, shape: rhsShape)])
  }
}
