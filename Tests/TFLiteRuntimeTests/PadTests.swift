import XCTest

@testable import TFLiteRuntime

final class PadTests: XCTestCase {
  private func randomCase(_ generator: inout SeededGenerator, maxPad: (Int) -> Int) throws -> ([Int], Paddings) {
    let shape = randomShape(rank: Int.random(in: 0...4, using: &generator), extents: 1...4, using: &generator)
    // Leave some axes unpadded so the trailing-axis folding is exercised.
    let values = shape.flatMap { extent -> [Int] in
      let limit = maxPad(extent)
      let padded = limit > 0 && Bool.random(using: &generator)
      return padded ? [Int.random(in: 0...limit, using: &generator), Int.random(in: 0...limit, using: &generator)] : [0, 0]
    }
    return (shape, try Paddings(matrix: values, rank: shape.count, op: "TEST"))
  }

  func testConstantPadMatchesNaivePadding() throws {
    var generator = SeededGenerator(seed: 30)
    for _ in 0..<300 {
      let (shape, paddings) = try randomCase(&generator) { _ in 3 }
      let outputShape = try paddings.outputShape(of: shape, op: "TEST")
      let sources = allIndices(outputShape).map { output -> Int? in
        let input = zip(output, paddings.before).map(-)
        guard zip(input, shape).allSatisfy({ $0 >= 0 && $0 < $1 }) else { return nil }
        return flatPosition(input, shape)
      }
      for elementSize in movableElementSizes {
        let source = randomBytes(count: shape.reduce(1, *), elementSize: elementSize, using: &generator)
        let value = randomBytes(count: 1, elementSize: elementSize, using: &generator)
        let plan = ConstantPad(inputShape: shape, paddings: paddings, elementSize: elementSize)
        let output = withBuffers(source: source + value, outputBytes: outputShape.reduce(1, *) * elementSize) { input, output in
          plan.run(from: input, to: output, value: input + source.count)
        }
        XCTAssertEqual(
          output, gatheredBytes(source, elementSize: elementSize, sourceElements: sources, fill: value),
          "shape \(shape) paddings \(paddings)")
      }
    }
  }

  /// numpy's mirror rule: reflect the out-of-range position back across the border.
  private func mirrored(_ position: Int, extent: Int, mode: MirrorPad.Mode) -> Int {
    if position < 0 { return mode == .reflect ? -position : -position - 1 }
    if position >= extent { return mode == .reflect ? 2 * (extent - 1) - position : 2 * extent - 1 - position }
    return position
  }

  func testMirrorPadMatchesNaiveReflection() throws {
    var generator = SeededGenerator(seed: 31)
    for mode in [MirrorPad.Mode.reflect, .symmetric] {
      for _ in 0..<200 {
        let (shape, paddings) = try randomCase(&generator) { mode == .reflect ? $0 - 1 : $0 }
        let outputShape = try paddings.outputShape(of: shape, op: "TEST")
        let sources = allIndices(outputShape).map { output -> Int? in
          let input = output.indices.map { mirrored(output[$0] - paddings.before[$0], extent: shape[$0], mode: mode) }
          return flatPosition(input, shape)
        }
        for elementSize in movableElementSizes {
          let source = randomBytes(count: shape.reduce(1, *), elementSize: elementSize, using: &generator)
          let plan = try MirrorPad(inputShape: shape, paddings: paddings, mode: mode, elementSize: elementSize)
          let output = withBuffers(source: source, outputBytes: outputShape.reduce(1, *) * elementSize) { input, output in
            plan.run(from: input, to: output)
          }
          XCTAssertEqual(
            output, gatheredBytes(source, elementSize: elementSize, sourceElements: sources),
            "\(mode) shape \(shape) paddings \(paddings)")
        }
      }
    }
  }

  func testRejectsInvalidPaddings() throws {
    XCTAssertThrowsError(try Paddings(matrix: [1, -1], rank: 1, op: "TEST"))
    XCTAssertThrowsError(try Paddings(matrix: [1, 1, 1], rank: 2, op: "TEST"))
    let wide = try Paddings(matrix: [3, 0], rank: 1, op: "TEST")
    XCTAssertThrowsError(try MirrorPad(inputShape: [3], paddings: wide, mode: .reflect, elementSize: 4))
    XCTAssertNoThrow(try MirrorPad(inputShape: [3], paddings: wide, mode: .symmetric, elementSize: 4))
    let huge = try Paddings(matrix: [Int(Int32.max), Int(Int32.max)], rank: 1, op: "TEST")
    XCTAssertThrowsError(try huge.outputShape(of: [4], op: "TEST"))
  }
}

final class PadKernelTests: XCTestCase {
  func testQuantizedPadFillsWithTheZeroPoint() throws {
    var generator = SeededGenerator(seed: 32)
    let values = (0..<6).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    let zeroPoint = Int.random(in: 1...200, using: &generator)
    let quantization = Quantization(scales: [0.1], zeroPoints: [zeroPoint])
    let input = makeTensor(0, .uint8, [2, 3], bytes: values, quantization: quantization)
    let paddings = makeTensor(1, .int64, [2, 2], bytes: bytesOf([Int64(1), 0, 0, 2]))
    let output = makeTensor(2, .uint8, [1], quantization: quantization)
    try runKernel(PadKernel.self, opName: "PAD", inputs: [input, paddings], outputs: [output])
    XCTAssertEqual(output.shape, [3, 5])
    let expected = allIndices([3, 5]).map { index -> UInt8 in
      let (row, column) = (index[0] - 1, index[1])
      return row >= 0 && column < 3 ? values[row * 3 + column] : UInt8(zeroPoint)
    }
    XCTAssertEqual(elements(output, as: UInt8.self), expected)
  }
}
