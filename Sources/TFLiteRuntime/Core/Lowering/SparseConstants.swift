// Sparse constants (the schema's SparsityParameters), expanded to dense tensors once when the
// model is lowered, so no kernel ever sees one (DENSIFY then only copies its dense input).
//
// The stored values are visited in traversal order: one level per original axis, then one per
// block axis. A DENSE level enumerates all its positions; a SPARSE_CSR level enumerates, for the
// position reached in the level above, the indices between two of its segment boundaries.

import TFLiteFormat

/// The schema's sparsity description, decoded into plain arrays.
struct SparsityFormat {
  /// One level of the traversal.
  enum Level: Equatable {
    /// Every position `0..<size` is stored.
    case dense(size: Int)
    /// Only listed positions are stored: position `p` of the level above owns
    /// `indices[segments[p]..<segments[p + 1]]`.
    case compressed(segments: [Int], indices: [Int])
  }

  /// Order in which the (original, then block) axes are traversed.
  var traversalOrder: [Int]
  /// Original axis split into blocks by each block axis, in increasing order.
  var blockMap: [Int]
  /// One entry per traversed axis, in traversal order.
  var levels: [Level]
}

extension SparsityFormat {
  /// Decodes the schema's parameters; `model` resolves index vectors stored as raw bytes.
  init(_ parameters: SparsityParameters, model: TFLiteModel) throws {
    traversalOrder = parameters.traversalOrder.map(Int.init)
    blockMap = parameters.blockMap.map(Int.init)
    levels = try parameters.dimMetadata.enumerated().map { level, metadata in
      switch metadata.format {
      case .dense:
        return .dense(size: Int(metadata.denseSize))
      case .sparseCsr:
        return .compressed(
          segments: try Self.values(metadata.arraySegments, model: model, level: level),
          indices: try Self.values(metadata.arrayIndices, model: model, level: level))
      default:
        throw KernelError.unsupported("sparse tensor level \(level) has format \(metadata.format.name)")
      }
    }
  }

  private static func values(_ vector: SparseIndexVector, model: TFLiteModel, level: Int) throws -> [Int] {
    switch vector {
    case .int32Vector(let vector): return vector.values.map(Int.init)
    case .uint16Vector(let vector): return vector.values.map(Int.init)
    case .uint8Vector(let vector): return vector.values.map { model.bytes(in: $0).map(Int.init) } ?? []
    default: throw KernelError.invalid("sparse tensor level \(level) is SPARSE_CSR but lacks its index arrays")
    }
  }
}

/// The scatter that expands a sparse constant, planned and validated once: where each stored value lands.
struct Densifier {
  /// Dense element index of each stored value, in storage order.
  let destinations: [Int32]
  /// Number of dense elements.
  let denseCount: Int

  /// Walks the sparse structure of a tensor of `denseShape` holding `valueCount` stored values.
  /// Throws on any inconsistency (bad permutation, index out of range, too few values, ...).
  init(denseShape: [Int], format: SparsityFormat, valueCount: Int) throws {
    let rank = denseShape.count
    let blocks = format.blockMap.count
    let levelCount = rank + blocks
    denseCount = try checkedElementCount(denseShape, op: "DENSIFY")
    guard format.traversalOrder.count == levelCount, format.levels.count == levelCount,
      format.traversalOrder.sorted() == Array(0..<levelCount),
      format.traversalOrder[..<rank].allSatisfy({ $0 < rank })
    else {
      throw KernelError.invalid(
        "DENSIFY: traversal order \(format.traversalOrder) does not list the \(rank) axes and then the \(blocks) block axes")
    }
    guard format.blockMap.allSatisfy({ $0 >= 0 && $0 < rank }), zip(format.blockMap, format.blockMap.dropFirst()).allSatisfy(<)
    else {
      throw KernelError.invalid("DENSIFY: block map \(format.blockMap) must list distinct axes of rank \(rank) in order")
    }
    // Extent of every traversed axis: original axes divided by their block size, block axes the block size.
    var axisExtents = denseShape + [Int](repeating: 0, count: blocks)
    for block in 0..<blocks {
      let level = format.traversalOrder.firstIndex(of: rank + block) ?? 0
      guard case .dense(let size) = format.levels[level], size > 0, denseShape[format.blockMap[block]] % size == 0 else {
        throw KernelError.unsupported("DENSIFY: block axis \(block) must be a dense level whose size divides its axis")
      }
      axisExtents[rank + block] = size
      axisExtents[format.blockMap[block]] /= size
    }
    var walk = SparseWalk(
      format: format, rank: rank, levelExtents: format.traversalOrder.map { axisExtents[$0] },
      denseStrides: denseStrides(denseShape), valueCount: valueCount)
    try walk.visit(level: 0, position: 0)
    destinations = walk.destinations
  }

  /// Writes the dense tensor: zeros everywhere, then each stored value at its place.
  func run(values: UnsafeRawPointer, into destination: UnsafeMutableRawPointer, elementSize: Int) {
    destination.initializeMemory(as: UInt8.self, repeating: 0, count: denseCount &* elementSize)
    destinations.withUnsafeBufferPointer { targets in
      for (index, target) in targets.enumerated() {
        (destination + Int(target) &* elementSize).copyMemory(from: values + index &* elementSize, byteCount: elementSize)
      }
    }
  }
}

/// The depth-first traversal of a sparse structure that records the dense index of each stored value.
private struct SparseWalk {
  let format: SparsityFormat
  let rank: Int
  /// Number of positions of each level's axis.
  let levelExtents: [Int]
  let denseStrides: [Int]
  let valueCount: Int
  /// Coordinate reached on each level.
  var coordinates: [Int]
  var destinations: [Int32] = []

  init(format: SparsityFormat, rank: Int, levelExtents: [Int], denseStrides: [Int], valueCount: Int) {
    self.format = format
    self.rank = rank
    self.levelExtents = levelExtents
    self.denseStrides = denseStrides
    self.valueCount = valueCount
    coordinates = [Int](repeating: 0, count: levelExtents.count)
  }

  /// Visits the positions of `level` that belong to `position` of the level above.
  mutating func visit(level: Int, position: Int) throws {
    if level == levelExtents.count {
      guard destinations.count < valueCount else {
        throw KernelError.invalid("DENSIFY: the sparse structure addresses more than the \(valueCount) stored values")
      }
      destinations.append(Int32(truncatingIfNeeded: denseIndex()))
      return
    }
    switch format.levels[level] {
    case .dense(let size):
      guard size == levelExtents[level] else {
        throw KernelError.invalid("DENSIFY: dense level \(level) has size \(size), its axis has \(levelExtents[level])")
      }
      for coordinate in 0..<size {
        coordinates[level] = coordinate
        try visit(level: level + 1, position: position * size + coordinate)
      }
    case .compressed(let segments, let indices):
      guard position + 1 < segments.count else {
        throw KernelError.invalid("DENSIFY: level \(level) has no segment for position \(position)")
      }
      let (first, end) = (segments[position], segments[position + 1])
      guard first >= 0, first <= end, end <= indices.count else {
        throw KernelError.invalid("DENSIFY: level \(level) segment \(first)..<\(end) is invalid for \(indices.count) indices")
      }
      for slot in first..<end {
        let coordinate = indices[slot]
        guard coordinate >= 0, coordinate < levelExtents[level] else {
          throw KernelError.invalid("DENSIFY: index \(coordinate) is outside level \(level) of \(levelExtents[level])")
        }
        coordinates[level] = coordinate
        try visit(level: level + 1, position: slot)
      }
    }
  }

  /// The dense element index of the current coordinates.
  private func denseIndex() -> Int {
    var original = [Int](repeating: 0, count: rank)
    for level in 0..<rank { original[format.traversalOrder[level]] = coordinates[level] }
    for level in rank..<coordinates.count {
      let block = format.traversalOrder[level] - rank
      let axis = format.blockMap[block]
      original[axis] = original[axis] * levelExtents[level] + coordinates[level]
    }
    return zip(original, denseStrides).reduce(0) { $0 + $1.0 * $1.1 }
  }
}
