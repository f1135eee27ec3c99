// CONCATENATION and PACK (and, through the same partition, SPLIT, SPLIT_V and UNPACK in Split.swift).

/// A tensor cut into consecutive parts along one axis: `outerCount` blocks, each made of
/// `partExtents[i] * innerCount` elements of every part `i` in turn.
struct AxisPartition: Equatable {
  /// Product of the axes before the cut axis.
  let outerCount: Int
  /// Product of the axes after the cut axis.
  let innerCount: Int
  /// Extent of each part along the cut axis.
  let partExtents: [Int]
  /// Element offset of each part inside one block of the whole.
  let partOffsets: [Int]
  /// Extent of the whole along the cut axis.
  let totalExtent: Int

  /// Describes parts of the given extents along `axis` of a tensor of `shape` (the cut axis of
  /// `shape` itself is ignored; `axis == shape.count` cuts below the last axis, as PACK does).
  init(shape: [Int], axis: Int, partExtents: [Int]) {
    outerCount = shape[..<axis].reduce(1, *)
    innerCount = shape[min(axis + 1, shape.count)...].reduce(1, *)
    self.partExtents = partExtents
    var offsets: [Int] = []
    var running = 0
    for extent in partExtents {
      offsets.append(running * innerCount)
      running += extent
    }
    partOffsets = offsets
    totalExtent = running
  }

  /// Copies part `part` (dense, `outerCount × extent × innerCount`) into its place in the whole.
  func insert(part: Int, from source: UnsafeRawPointer, into whole: UnsafeMutableRawPointer, elementSize: Int) {
    let partBytes = partExtents[part] &* innerCount &* elementSize
    copyBlocks(
      count: outerCount, blockBytes: partBytes, from: source, sourceStride: partBytes,
      to: whole + partOffsets[part] &* elementSize, destinationStride: totalExtent &* innerCount &* elementSize)
  }

  /// Copies part `part` out of the whole into its own dense tensor.
  func extract(part: Int, from whole: UnsafeRawPointer, into destination: UnsafeMutableRawPointer, elementSize: Int) {
    let partBytes = partExtents[part] &* innerCount &* elementSize
    copyBlocks(
      count: outerCount, blockBytes: partBytes, from: whole + partOffsets[part] &* elementSize,
      sourceStride: totalExtent &* innerCount &* elementSize, to: destination, destinationStride: partBytes)
  }
}

/// CONCATENATION's output shape: the inputs must agree on every axis but `axis` (normalized), where they add up.
func concatenatedShape(inputShapes: [[Int]], axis: Int) throws -> [Int] {
  guard var shape = inputShapes.first else { throw KernelError.invalid("CONCATENATION: no inputs") }
  for other in inputShapes.dropFirst() {
    guard other.count == shape.count,
      other.indices.allSatisfy({ $0 == axis || other[$0] == shape[$0] })
    else {
      throw KernelError.invalid("CONCATENATION: \(inputShapes) do not match outside axis \(axis)")
    }
    shape[axis] += other[axis]
  }
  _ = try checkedElementCount(shape, op: "CONCATENATION")
  return shape
}
