import XCTest

@testable import TFLiteRuntime

final class ResizeTests: XCTestCase {
  private let coordinateModes = [(false, false), (true, false), (false, true)]

  /// Nearest-neighbour source index, straight from TFLite's definition.
  private func naiveNearest(_ position: Int, input: Int, output: Int, alignCorners: Bool, halfPixel: Bool) -> Int {
    let scale: Float = alignCorners && output > 1 ? Float(input - 1) / Float(output - 1) : Float(input) / Float(output)
    let coordinate = (Float(position) + (halfPixel ? 0.5 : 0)) * scale
    var index = Int(alignCorners ? coordinate.rounded() : coordinate.rounded(.down))
    index = min(index, input - 1)
    return halfPixel ? max(index, 0) : index
  }

  func testNearestNeighborMatchesNaiveResize() throws {
    var generator = SeededGenerator(seed: 50)
    for _ in 0..<60 {
      let inputShape = [Int.random(in: 1...2, using: &generator)] + randomShape(rank: 3, extents: 1...6, using: &generator)
      let size = [Int.random(in: 1...13, using: &generator), Int.random(in: 1...13, using: &generator)]
      let outputShape = try resizedShape(inputShape: inputShape, size: size, op: "TEST")
      for (alignCorners, halfPixel) in coordinateModes {
        let plan = NearestNeighborResize(
          inputShape: inputShape, outputHeight: size[0], outputWidth: size[1], alignCorners: alignCorners,
          halfPixelCenters: halfPixel)
        let sources = allIndices(outputShape).map { index -> Int? in
          let row = naiveNearest(index[1], input: inputShape[1], output: size[0], alignCorners: alignCorners, halfPixel: halfPixel)
          let column = naiveNearest(index[2], input: inputShape[2], output: size[1], alignCorners: alignCorners, halfPixel: halfPixel)
          return flatPosition([index[0], row, column, index[3]], inputShape)
        }
        for elementSize in movableElementSizes {
          let source = randomBytes(count: inputShape.reduce(1, *), elementSize: elementSize, using: &generator)
          let output = withBuffers(source: source, outputBytes: outputShape.reduce(1, *) * elementSize) { input, output in
            plan.run(from: input, to: output, elementSize: elementSize)
          }
          XCTAssertEqual(output, gatheredBytes(source, elementSize: elementSize, sourceElements: sources))
        }
      }
    }
  }

  /// Bilinear value at one output position, computed in double from the sampling definition.
  private func naiveBilinear(
    _ input: [Float], shape: [Int], index: [Int], size: [Int], alignCorners: Bool, halfPixel: Bool
  ) -> Double {
    func sample(_ position: Int, _ inputSize: Int, _ outputSize: Int) -> (Int, Int, Double) {
      let scale = alignCorners && outputSize > 1 ? Double(inputSize - 1) / Double(outputSize - 1) : Double(inputSize) / Double(outputSize)
      let coordinate = halfPixel ? (Double(position) + 0.5) * scale - 0.5 : Double(position) * scale
      let low = max(Int(coordinate.rounded(.down)), 0)
      let high = min(Int(coordinate.rounded(.up)), inputSize - 1)
      return (low, high, coordinate - Double(low))
    }
    let (top, bottom, dy) = sample(index[1], shape[1], size[0])
    let (left, right, dx) = sample(index[2], shape[2], size[1])
    func value(_ row: Int, _ column: Int) -> Double { Double(input[flatPosition([index[0], row, column, index[3]], shape)]) }
    let upper = value(top, left) * (1 - dx) + value(top, right) * dx
    let lower = value(bottom, left) * (1 - dx) + value(bottom, right) * dx
    return upper * (1 - dy) + lower * dy
  }

  func testBilinearMatchesNaiveResize() throws {
    var generator = SeededGenerator(seed: 51)
    for _ in 0..<50 {
      let inputShape = [Int.random(in: 1...2, using: &generator)] + randomShape(rank: 3, extents: 1...6, using: &generator)
      let size = [Int.random(in: 1...13, using: &generator), Int.random(in: 1...13, using: &generator)]
      let outputShape = try resizedShape(inputShape: inputShape, size: size, op: "TEST")
      let input = (0..<inputShape.reduce(1, *)).map { _ in Float.random(in: -4...4, using: &generator) }
      for (alignCorners, halfPixel) in coordinateModes {
        let plan = BilinearResize(
          inputShape: inputShape, outputHeight: size[0], outputWidth: size[1], alignCorners: alignCorners,
          halfPixelCenters: halfPixel)
        var output = [Float](repeating: .nan, count: outputShape.reduce(1, *))
        input.withUnsafeBufferPointer { input in
          output.withUnsafeMutableBufferPointer { output in
            // Two calls over disjoint row ranges, as the threaded kernel does.
            let rows = outputShape[0] * outputShape[1]
            plan.run(from: input.baseAddress!, to: output.baseAddress!, rows: 0..<(rows / 2))
            plan.run(from: input.baseAddress!, to: output.baseAddress!, rows: (rows / 2)..<rows)
          }
        }
        for (flat, index) in allIndices(outputShape).enumerated() {
          let expected = naiveBilinear(input, shape: inputShape, index: index, size: size, alignCorners: alignCorners, halfPixel: halfPixel)
          XCTAssertEqual(Double(output[flat]), expected, accuracy: 1e-5, "input \(inputShape) size \(size) at \(index)")
        }
      }
    }
  }

  func testRejectsBadSizes() {
    XCTAssertThrowsError(try resizedShape(inputShape: [1, 2, 2, 1], size: [0, 2], op: "TEST"))
    XCTAssertThrowsError(try resizedShape(inputShape: [1, 2, 2, 1], size: [2], op: "TEST"))
    XCTAssertThrowsError(try resizedShape(inputShape: [2, 2, 1], size: [2, 2], op: "TEST"))
    XCTAssertThrowsError(try resizedShape(inputShape: [1, 2, 2, 1 << 20], size: [1 << 20, 4], op: "TEST"))
  }
}
