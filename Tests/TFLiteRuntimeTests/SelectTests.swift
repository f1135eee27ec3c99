import XCTest
@testable import TFLiteRuntime

final class SelectTests: XCTestCase {
  func testSelectBroadcastsAllThreeOperands() throws {
    var generator = SeededGenerator(seed: 16)
    for _ in 0..<60 {
      let output = generator.shape(rank: Int.random(in: 0...5, using: &generator), sizes: 1...6)
      let (conditionShape, xShape) = generator.broadcastPair(output: output)
      let yShape = generator.broadcastPair(output: output).0
      let condition: [UInt8] = generator.integers(max(conditionShape.reduce(1, *), 1), in: 0...1)
      let x: [UInt32] = generator.integers(max(xShape.reduce(1, *), 1), in: 0...1000)
      let y: [UInt32] = generator.integers(max(yShape.reduce(1, *), 1), in: 2000...3000)
      let layout = try BroadcastLayout(broadcasting: [conditionShape, xShape, yShape])
      let result: [UInt32] = filledArray(count: layout.elementCount) { output in
        for range in chunkRanges(layout.elementCount, 3) {
          SelectDriver.run(layout: layout, condition: condition, x: x, y: y, output: output, range: range)
        }
      }
      let expected = (0..<layout.elementCount).map { index in
        condition[broadcastSourceIndex(index, outputShape: layout.shape, shape: conditionShape)] != 0
          ? x[broadcastSourceIndex(index, outputShape: layout.shape, shape: xShape)]
          : y[broadcastSourceIndex(index, outputShape: layout.shape, shape: yShape)]
      }
      XCTAssertEqual(Array(result.prefix(layout.elementCount)), expected, "\(conditionShape) \(xShape) \(yShape)")
    }
  }
}
