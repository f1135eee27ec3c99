// Iteration layouts shared by broadcasting elementwise kernels and reductions.
//
// A layout walks an iteration space (the output of a broadcast, or the input of a reduction) in
// row-major order and tells, for up to three operands, where each element lives. Dimensions of
// size 1 are dropped and neighbouring dimensions that every operand walks the same way are
// merged, so `[1, 56, 56, 144] + [144]` becomes a 3136 × 144 walk with the second operand's
// outer stride 0. The walk hands out contiguous segments of the innermost dimension, in which
// each operand either advances with the output (stride 1) or stays on one element (stride 0).

/// A collapsed iteration space with the strides of up to three operands.
struct BroadcastLayout: Sendable, Equatable {
  /// Most dimensions a layout keeps after collapsing.
  static let maximumRank = 8

  /// Uncollapsed shape of the iteration space (the broadcast output shape).
  let shape: [Int]
  /// Number of elements in the iteration space.
  let elementCount: Int
  /// Number of collapsed dimensions (at least 1).
  let rank: Int
  /// Collapsed dimension sizes; lanes `rank...` are unused.
  let dimensions: SIMD8<Int>
  /// Per-dimension element strides of operand 0 (0 where the operand is broadcast).
  let strides0: SIMD8<Int>
  /// Per-dimension element strides of operand 1 (0 where the operand is broadcast).
  let strides1: SIMD8<Int>
  /// Per-dimension element strides of operand 2 (0 where the operand is broadcast).
  let strides2: SIMD8<Int>

  /// The layout of an elementwise operation whose operands have `operandShapes` (1 to 3 shapes),
  /// broadcast with NumPy rules: shapes align on the right and each dimension pair must be equal
  /// or contain a 1.
  init(broadcasting operandShapes: [[Int]]) throws {
    guard (1...3).contains(operandShapes.count) else {
      throw KernelError.invalid("broadcast needs 1 to 3 operands, got \(operandShapes.count)")
    }
    let outputShape = try BroadcastLayout.broadcastShape(operandShapes)
    for shape in operandShapes { _ = try BroadcastLayout.elementCount(of: shape) }
    let operandStrides = operandShapes.map { shape -> [Int] in
      let padding = outputShape.count - shape.count
      var strides = [Int](repeating: 0, count: outputShape.count)
      var step = 1
      for dimension in stride(from: shape.count - 1, through: 0, by: -1) {
        strides[dimension + padding] = shape[dimension] == 1 ? 0 : step
        step *= shape[dimension]
      }
      return strides
    }
    try self.init(shape: outputShape, operandStrides: operandStrides)
  }

  /// The layout of a reduction over `axes` (already normalized to `0..<shape.count`) of a tensor
  /// of `shape`: the walk covers the input, and operand 0 is the offset into the output.
  init(reducing shape: [Int], axes: [Bool]) throws {
    _ = try BroadcastLayout.elementCount(of: shape)
    var outputStrides = [Int](repeating: 0, count: shape.count)
    var step = 1
    for dimension in stride(from: shape.count - 1, through: 0, by: -1) where !axes[dimension] {
      outputStrides[dimension] = step
      step *= shape[dimension]
    }
    try self.init(shape: shape, operandStrides: [outputStrides])
  }

  private init(shape: [Int], operandStrides: [[Int]]) throws {
    let elementCount = try BroadcastLayout.elementCount(of: shape)
    var collapsedDimensions: [Int] = []
    var collapsedStrides: [[Int]] = operandStrides.map { _ in [] }
    for dimension in shape.indices where shape[dimension] != 1 {
      let size = shape[dimension]
      let mergesWithPrevious = !collapsedDimensions.isEmpty && operandStrides.indices.allSatisfy {
        collapsedStrides[$0][collapsedStrides[$0].count - 1] == operandStrides[$0][dimension] * size
      }
      if mergesWithPrevious {
        collapsedDimensions[collapsedDimensions.count - 1] *= size
        for operand in operandStrides.indices {
          collapsedStrides[operand][collapsedStrides[operand].count - 1] = operandStrides[operand][dimension]
        }
      } else {
        collapsedDimensions.append(size)
        for operand in operandStrides.indices { collapsedStrides[operand].append(operandStrides[operand][dimension]) }
      }
    }
    if collapsedDimensions.isEmpty {
      collapsedDimensions = [1]
      for operand in operandStrides.indices { collapsedStrides[operand] = [0] }
    }
    guard collapsedDimensions.count <= BroadcastLayout.maximumRank else {
      throw KernelError.unsupported(
        "shape \(shape) needs \(collapsedDimensions.count) dimensions after collapsing; at most \(BroadcastLayout.maximumRank) are supported")
    }
    func packed(_ values: [Int]) -> SIMD8<Int> {
      var vector = SIMD8<Int>(repeating: 0)
      for (index, value) in values.enumerated() { vector[index] = value }
      return vector
    }
    self.shape = shape
    self.elementCount = elementCount
    self.rank = collapsedDimensions.count
    self.dimensions = packed(collapsedDimensions)
    self.strides0 = packed(collapsedStrides[0])
    self.strides1 = collapsedStrides.count > 1 ? packed(collapsedStrides[1]) : SIMD8(repeating: 0)
    self.strides2 = collapsedStrides.count > 2 ? packed(collapsedStrides[2]) : SIMD8(repeating: 0)
  }

  /// The NumPy broadcast of `shapes`; throws when a dimension pair is neither equal nor has a 1,
  /// or when a dimension is negative.
  static func broadcastShape(_ shapes: [[Int]]) throws -> [Int] {
    let rank = shapes.map(\.count).max() ?? 0
    var result = [Int](repeating: 1, count: rank)
    for shape in shapes {
      let padding = rank - shape.count
      for (dimension, size) in shape.enumerated() {
        guard size >= 0 else { throw KernelError.invalid("negative dimension in shape \(shape)") }
        let current = result[dimension + padding]
        if current == 1 {
          result[dimension + padding] = size
        } else if size != 1 && size != current {
          throw KernelError.invalid(
            "shapes \(shapes.map { "\($0)" }.joined(separator: " and ")) do not broadcast")
        }
      }
    }
    return result
  }

  /// The number of elements of `shape`; throws for negative sizes or a count that overflows.
  static func elementCount(of shape: [Int]) throws -> Int {
    var count = 1
    for size in shape {
      guard size >= 0 else { throw KernelError.invalid("negative dimension in shape \(shape)") }
      let (product, overflow) = count.multipliedReportingOverflow(by: size)
      guard !overflow else { throw KernelError.invalid("shape \(shape) has too many elements") }
      count = product
    }
    return count
  }

  /// Length of the innermost collapsed dimension (the longest contiguous segment).
  var rowLength: Int { dimensions[rank - 1] }

  /// Element stride of `operand` along the innermost collapsed dimension: 1 (streamed) or 0.
  func innerStride(of operand: Int) -> Int {
    switch operand {
    case 0: return strides0[rank - 1]
    case 1: return strides1[rank - 1]
    default: return strides2[rank - 1]
    }
  }

  /// Calls `body(start, offset0, offset1, offset2, count)` for each contiguous segment of the
  /// iteration elements in `range`: elements `start ..< start + count` lie in one innermost row,
  /// and the operands' first elements sit at the given offsets.
  @inline(__always)
  func forEachSegment(
    in range: Range<Int>,
    _ body: (_ start: Int, _ offset0: Int, _ offset1: Int, _ offset2: Int, _ count: Int) -> Void
  ) {
    guard !range.isEmpty else { return }
    // Coordinates live in a stack buffer of scalars: element-wise writes into a SIMD value would
    // be reloaded as a whole vector and stall on store forwarding.
    withUnsafeTemporaryAllocation(of: Int.self, capacity: BroadcastLayout.maximumRank) { coordinates in
      let innermost = rank &- 1
      let rowLength = dimensions[innermost]
      var remainder = range.lowerBound
      var offset0 = 0, offset1 = 0, offset2 = 0
      for dimension in stride(from: innermost, through: 0, by: -1) {
        let coordinate = remainder % dimensions[dimension]
        remainder /= dimensions[dimension]
        coordinates[dimension] = coordinate
        offset0 &+= coordinate &* strides0[dimension]
        offset1 &+= coordinate &* strides1[dimension]
        offset2 &+= coordinate &* strides2[dimension]
      }
      var start = range.lowerBound
      var column = coordinates[innermost]
      while start < range.upperBound {
        let count = min(rowLength &- column, range.upperBound &- start)
        body(start, offset0, offset1, offset2, count)
        start &+= count
        if column &+ count < rowLength { break }  // the range ended inside this row
        // Move to the start of the next row, carrying into the outer dimensions.
        offset0 &-= column &* strides0[innermost]
        offset1 &-= column &* strides1[innermost]
        offset2 &-= column &* strides2[innermost]
        column = 0
        var dimension = innermost &- 1
        while dimension >= 0 {
          coordinates[dimension] &+= 1
          offset0 &+= strides0[dimension]
          offset1 &+= strides1[dimension]
          offset2 &+= strides2[dimension]
          if coordinates[dimension] < dimensions[dimension] { break }
          offset0 &-= dimensions[dimension] &* strides0[dimension]
          offset1 &-= dimensions[dimension] &* strides1[dimension]
          offset2 &-= dimensions[dimension] &* strides2[dimension]
          coordinates[dimension] = 0
          dimension &-= 1
        }
      }
    }
  }
}
