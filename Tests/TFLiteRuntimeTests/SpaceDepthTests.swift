import XCTest

@testable import TFLiteRuntime

final class SpaceDepthTests: XCTestCase {
  func testDepthToSpaceMatchesDefinition() throws {
    var generator = SeededGenerator(seed: 70)
    for _ in 0..<60 {
      let block = Int.random(in: 1...3, using: &generator)
      let depth = Int.random(in: 1...3, using: &generator)
      let shape = randomShape(rank: 3, extents: 1...4, using: &generator) + [depth * block * block]
      let (layout, outputShape) = try depthToSpaceLayout(inputShape: shape, blockSize: block)
      // output[b, y, x, c] = input[b, y / block, x / block, ((y % block) * block + x % block) * depth + c]
      let sources = allIndices(outputShape).map { o -> Int? in
        flatPosition([o[0], o[1] / block, o[2] / block, ((o[1] % block) * block + o[2] % block) * depth + o[3]], shape)
      }
      for elementSize in movableElementSizes {
        let source = randomBytes(count: shape.reduce(1, *), elementSize: elementSize, using: &generator)
        XCTAssertEqual(
          stridedCopyBytes(layout, source: source, elementSize: elementSize),
          gatheredBytes(source, elementSize: elementSize, sourceElements: sources))
      }
    }
  }

  func testSpaceToDepthMatchesDefinition() throws {
    var generator = SeededGenerator(seed: 71)
    for _ in 0..<60 {
      let block = Int.random(in: 1...3, using: &generator)
      let shape = [Int.random(in: 1...2, using: &generator), block * Int.random(in: 1...3, using: &generator),
                   block * Int.random(in: 1...3, using: &generator), Int.random(in: 1...3, using: &generator)]
      let (layout, outputShape) = try spaceToDepthLayout(inputShape: shape, blockSize: block)
      // output[b, y, x, (dy * block + dx) * depth + c] = input[b, y * block + dy, x * block + dx, c]
      let depth = shape[3]
      let sources = allIndices(outputShape).map { o -> Int? in
        let (tile, c) = (o[3] / depth, o[3] % depth)
        return flatPosition([o[0], o[1] * block + tile / block, o[2] * block + tile % block, c], shape)
      }
      for elementSize in movableElementSizes {
        let source = randomBytes(count: shape.reduce(1, *), elementSize: elementSize, using: &generator)
        XCTAssertEqual(
          stridedCopyBytes(layout, source: source, elementSize: elementSize),
          gatheredBytes(source, elementSize: elementSize, sourceElements: sources))
      }
    }
  }

  func testRejectsIndivisibleShapes() {
    XCTAssertThrowsError(try depthToSpaceLayout(inputShape: [1, 2, 2, 6], blockSize: 2))
    XCTAssertThrowsError(try depthToSpaceLayout(inputShape: [1, 2, 2, 4], blockSize: 0))
    XCTAssertThrowsError(try spaceToDepthLayout(inputShape: [1, 3, 2, 1], blockSize: 2))
    XCTAssertThrowsError(try spaceToDepthLayout(inputShape: [3, 2, 1], blockSize: 1))
  }
}
