import XCTest

@testable import TFLiteRuntime

final class TileTests: XCTestCase {
  func testTileMatchesNaiveRepetition() throws {
    var generator = SeededGenerator(seed: 60)
    for _ in 0..<200 {
      let shape = randomShape(rank: Int.random(in: 0...4, using: &generator), extents: 1...4, using: &generator)
      let multiples = randomShape(rank: shape.count, extents: 0...3, using: &generator)
      let (layout, outputShape) = try tileLayout(inputShape: shape, multiples: multiples)
      XCTAssertEqual(outputShape, zip(shape, multiples).map(*))
      let sources = allIndices(outputShape).map { output -> Int? in flatPosition(zip(output, shape).map(%), shape) }
      for elementSize in movableElementSizes {
        let source = randomBytes(count: shape.reduce(1, *), elementSize: elementSize, using: &generator)
        XCTAssertEqual(
          stridedCopyBytes(layout, source: source, elementSize: elementSize),
          gatheredBytes(source, elementSize: elementSize, sourceElements: sources), "shape \(shape) multiples \(multiples)")
      }
    }
  }

  func testBroadcastToMatchesNaiveBroadcast() throws {
    var generator = SeededGenerator(seed: 61)
    for _ in 0..<200 {
      let outputShape = randomShape(rank: Int.random(in: 0...5, using: &generator), extents: 1...4, using: &generator)
      let inputRank = Int.random(in: 0...outputShape.count, using: &generator)
      let inputShape = outputShape.suffix(inputRank).map { Bool.random(using: &generator) ? 1 : $0 }
      let layout = try broadcastLayout(inputShape: inputShape, outputShape: outputShape, op: "TEST")
      let leading = outputShape.count - inputRank
      let sources = allIndices(outputShape).map { output -> Int? in
        flatPosition(inputShape.indices.map { inputShape[$0] == 1 ? 0 : output[leading + $0] }, inputShape)
      }
      for elementSize in movableElementSizes {
        let source = randomBytes(count: inputShape.reduce(1, *), elementSize: elementSize, using: &generator)
        XCTAssertEqual(
          stridedCopyBytes(layout, source: source, elementSize: elementSize),
          gatheredBytes(source, elementSize: elementSize, sourceElements: sources), "\(inputShape) to \(outputShape)")
      }
    }
  }

  func testRejectsInvalidRequests() {
    XCTAssertThrowsError(try tileLayout(inputShape: [2, 2], multiples: [2]))
    XCTAssertThrowsError(try tileLayout(inputShape: [2], multiples: [-1]))
    XCTAssertThrowsError(try tileLayout(inputShape: [1 << 16], multiples: [1 << 16]))
    XCTAssertThrowsError(try broadcastLayout(inputShape: [3], outputShape: [2, 4], op: "TEST"))
    XCTAssertThrowsError(try broadcastLayout(inputShape: [1, 3], outputShape: [3], op: "TEST"))
  }
}
