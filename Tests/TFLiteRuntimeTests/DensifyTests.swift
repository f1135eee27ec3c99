import XCTest

@testable import TFLiteRuntime

final class DensifyTests: XCTestCase {
  /// A sparse layout to encode with: traversal order, which levels are compressed, and blocks.
  private struct Layout {
    var traversalOrder: [Int]
    var compressed: [Bool]
    var blockMap: [Int] = []
    var blockSizes: [Int] = []
  }

  /// Test-side encoder: walks the levels breadth-first and, on compressed levels, keeps only the
  /// positions whose subtree holds a non-zero value. Returns the format and the stored elements.
  private func encode(dense: [UInt32], shape: [Int], layout: Layout) -> (SparsityFormat, [UInt32]) {
    let rank = shape.count
    var axisExtents = shape
    for (block, axis) in layout.blockMap.enumerated() {
      axisExtents[axis] /= layout.blockSizes[block]
      axisExtents.append(layout.blockSizes[block])
    }
    let levelExtents = layout.traversalOrder.map { axisExtents[$0] }
    func denseIndex(_ levelCoordinates: [Int]) -> Int {
      var axes = [Int](repeating: 0, count: axisExtents.count)
      for (level, coordinate) in levelCoordinates.enumerated() { axes[layout.traversalOrder[level]] = coordinate }
      var original = Array(axes[..<rank])
      for (block, axis) in layout.blockMap.enumerated() {
        original[axis] = original[axis] * layout.blockSizes[block] + axes[rank + block]
      }
      return flatPosition(original, shape)
    }
    func holdsNonZero(_ prefix: [Int]) -> Bool {
      let rest = Array(levelExtents[prefix.count...])
      return allIndices(rest).contains { dense[denseIndex(prefix + $0)] != 0 }
    }
    var parents: [[Int]] = [[]]
    var levels: [SparsityFormat.Level] = []
    for level in levelExtents.indices {
      var children: [[Int]] = []
      if layout.compressed[level] {
        var segments = [0]
        var indices: [Int] = []
        for parent in parents {
          for coordinate in 0..<levelExtents[level] where holdsNonZero(parent + [coordinate]) {
            indices.append(coordinate)
            children.append(parent + [coordinate])
          }
          segments.append(indices.count)
        }
        levels.append(.compressed(segments: segments, indices: indices))
      } else {
        for parent in parents { children += (0..<levelExtents[level]).map { parent + [$0] } }
        levels.append(.dense(size: levelExtents[level]))
      }
      parents = children
    }
    let format = SparsityFormat(traversalOrder: layout.traversalOrder, blockMap: layout.blockMap, levels: levels)
    return (format, parents.map { dense[denseIndex($0)] })
  }

  private func densify(_ format: SparsityFormat, values: [UInt32], shape: [Int], elementSize: Int) throws -> [UInt8] {
    let densifier = try Densifier(denseShape: shape, format: format, valueCount: values.count)
    let packed = values.flatMap { value in (0..<elementSize).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
    return withBuffers(source: packed, outputBytes: shape.reduce(1, *) * elementSize) { input, output in
      densifier.run(values: input, into: output, elementSize: elementSize)
    }
  }

  func testRoundTripsThroughEveryLayout() throws {
    var generator = SeededGenerator(seed: 120)
    let layouts: [([Int], Layout)] = [
      ([6, 8], Layout(traversalOrder: [0, 1], compressed: [false, true])),
      ([6, 8], Layout(traversalOrder: [1, 0], compressed: [false, true])),
      ([6, 8], Layout(traversalOrder: [0, 1], compressed: [true, true])),
      ([6, 8], Layout(traversalOrder: [0, 1, 2], compressed: [false, true, false], blockMap: [1], blockSizes: [4])),
      ([6, 8], Layout(traversalOrder: [0, 1, 2, 3], compressed: [false, true, false, false], blockMap: [0, 1], blockSizes: [2, 4])),
      ([6, 8], Layout(traversalOrder: [0, 1, 3, 2], compressed: [true, false, false, false], blockMap: [0, 1], blockSizes: [3, 2])),
      ([3, 4, 5], Layout(traversalOrder: [0, 1, 2], compressed: [false, false, true])),
      ([3, 4, 5], Layout(traversalOrder: [2, 0, 1], compressed: [false, true, true])),
    ]
    for (shape, layout) in layouts {
      for elementSize in [1, 2, 4] {
        for _ in 0..<5 {
          let dense = (0..<shape.reduce(1, *)).map { _ -> UInt32 in
            Int.random(in: 0..<10, using: &generator) < 7 ? 0 : UInt32.random(in: 1...(elementSize == 4 ? .max : 255), using: &generator)
          }
          let (format, values) = encode(dense: dense, shape: shape, layout: layout)
          let expected = dense.flatMap { value in (0..<elementSize).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
          XCTAssertEqual(
            try densify(format, values: values, shape: shape, elementSize: elementSize), expected,
            "shape \(shape) layout \(layout.traversalOrder) \(layout.compressed)")
        }
      }
    }
  }

  func testRejectsInconsistentStructures() {
    let csr = SparsityFormat(
      traversalOrder: [0, 1], blockMap: [], levels: [.dense(size: 2), .compressed(segments: [0, 1, 2], indices: [0, 3])])
    XCTAssertNoThrow(try Densifier(denseShape: [2, 4], format: csr, valueCount: 2))
    XCTAssertThrowsError(try Densifier(denseShape: [2, 3], format: csr, valueCount: 2), "index 3 outside an axis of 3")
    XCTAssertThrowsError(try Densifier(denseShape: [2, 4], format: csr, valueCount: 1), "more positions than values")
    var badSegments = csr
    badSegments.levels[1] = .compressed(segments: [0, 2, 1], indices: [0, 3])
    XCTAssertThrowsError(try Densifier(denseShape: [2, 4], format: badSegments, valueCount: 2))
    var shortSegments = csr
    shortSegments.levels[1] = .compressed(segments: [0, 1], indices: [0, 3])
    XCTAssertThrowsError(try Densifier(denseShape: [2, 4], format: shortSegments, valueCount: 2))
    var badOrder = csr
    badOrder.traversalOrder = [0, 0]
    XCTAssertThrowsError(try Densifier(denseShape: [2, 4], format: badOrder, valueCount: 2))
    var badDense = csr
    badDense.levels[0] = .dense(size: 3)
    XCTAssertThrowsError(try Densifier(denseShape: [2, 4], format: badDense, valueCount: 2))
    let blocked = SparsityFormat(
      traversalOrder: [0, 1, 2], blockMap: [1], levels: [.dense(size: 2), .dense(size: 1), .dense(size: 3)])
    XCTAssertThrowsError(try Densifier(denseShape: [2, 4], format: blocked, valueCount: 8), "block size 3 does not divide 4")
  }
}
