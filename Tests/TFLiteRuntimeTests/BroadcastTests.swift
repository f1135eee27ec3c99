import Foundation
import XCTest
@testable import TFLiteRuntime

final class BroadcastTests: XCTestCase {
  func testBroadcastShapeFollowsNumPyRules() throws {
    XCTAssertEqual(try BroadcastLayout.broadcastShape([[2, 1, 4], [3, 1]]), [2, 3, 4])
    XCTAssertEqual(try BroadcastLayout.broadcastShape([[], [5]]), [5])
    XCTAssertEqual(try BroadcastLayout.broadcastShape([[0, 3], [1, 3]]), [0, 3])
    XCTAssertEqual(try BroadcastLayout.broadcastShape([[2, 1], [1, 3], [2, 3]]), [2, 3])
  }

  func testIncompatibleShapesThrow() {
    XCTAssertThrowsError(try BroadcastLayout(broadcasting: [[2, 3], [4, 3]]))
    XCTAssertThrowsError(try BroadcastLayout(broadcasting: [[2, -1], [2, 1]]))
    XCTAssertThrowsError(try BroadcastLayout(broadcasting: [[1 << 40, 1], [1, 1 << 40]]))
  }

  func testCollapsesMergeableDimensions() throws {
    let layout = try BroadcastLayout(broadcasting: [[1, 56, 56, 144], [144]])
    XCTAssertEqual(layout.rank, 2)
    XCTAssertEqual(layout.dimensions[0], 3136)
    XCTAssertEqual(layout.dimensions[1], 144)
    XCTAssertEqual(layout.innerStride(of: 0), 1)
    XCTAssertEqual(layout.innerStride(of: 1), 1)
    XCTAssertEqual(layout.strides1[0], 0)
    let same = try BroadcastLayout(broadcasting: [[2, 3, 4, 5], [2, 3, 4, 5]])
    XCTAssertEqual(same.rank, 1)
    XCTAssertEqual(same.dimensions[0], 120)
  }

  /// Every segment of every split reproduces the plain per-element index mapping.
  func testSegmentsMatchScalarIndexing() throws {
    var generator = SeededGenerator(seed: 7)
    for _ in 0..<200 {
      let output = generator.shape(rank: Int.random(in: 0...6, using: &generator), sizes: 1...4)
      let (first, second) = generator.broadcastPair(output: output)
      let third = generator.broadcastPair(output: output).0
      let layout = try BroadcastLayout(broadcasting: [first, second, third])
      let shape = layout.shape
      for chunks in [1, 2, 5] {
        var visited = [Int](repeating: 0, count: layout.elementCount)
        for range in chunkRanges(layout.elementCount, chunks) {
          layout.forEachSegment(in: range) { start, offset0, offset1, offset2, count in
            XCTAssertTrue(range.contains(start) && start + count <= range.upperBound)
            for step in 0..<count {
              let index = start + step
              visited[index] += 1
              XCTAssertEqual(offset0 + step * layout.innerStride(of: 0), broadcastSourceIndex(index, outputShape: shape, shape: first))
              XCTAssertEqual(offset1 + step * layout.innerStride(of: 1), broadcastSourceIndex(index, outputShape: shape, shape: second))
              XCTAssertEqual(offset2 + step * layout.innerStride(of: 2), broadcastSourceIndex(index, outputShape: shape, shape: third))
            }
          }
        }
        XCTAssertEqual(visited, [Int](repeating: 1, count: layout.elementCount), "shapes \(first) \(second) \(third)")
      }
    }
  }

  func testReductionLayoutMapsInputToOutput() throws {
    var generator = SeededGenerator(seed: 11)
    for _ in 0..<100 {
      let shape = generator.shape(rank: Int.random(in: 1...5, using: &generator), sizes: 1...4)
      let axes = shape.map { _ in Bool.random(using: &generator) }
      let layout = try BroadcastLayout(reducing: shape, axes: axes)
      let keptShape = shape.enumerated().map { axes[$0.offset] ? 1 : $0.element }
      layout.forEachSegment(in: 0..<layout.elementCount) { start, outputOffset, _, _, count in
        for step in 0..<count {
          XCTAssertEqual(
            outputOffset + step * layout.innerStride(of: 0),
            broadcastSourceIndex(start + step, outputShape: shape, shape: keptShape))
        }
      }
    }
  }
}

final class ChunkingTests: XCTestCase {
  func testChunksCoverEveryElementOnce() {
    for threads in [1, 2, 3, 8] {
      for count in [0, 1, 5, 16_384, 100_003] {
        let context = EvalContext(threadCount: threads, scratch: nil)
        var covered = [Int](repeating: 0, count: count)
        var ranges: [Range<Int>] = []
        let lock = NSLock()
        context.forEachChunk(of: count, minimumChunk: 1_000) { range in
          lock.lock()
          ranges.append(range)
          lock.unlock()
        }
        for range in ranges { for index in range { covered[index] += 1 } }
        XCTAssertEqual(covered, [Int](repeating: 1, count: count), "\(count) elements on \(threads) threads")
        if threads > 1 && count >= 100_000 { XCTAssertGreaterThan(ranges.count, 1) }
      }
    }
  }
}
