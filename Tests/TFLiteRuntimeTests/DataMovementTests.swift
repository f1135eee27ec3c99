import XCTest

@testable import TFLiteRuntime

final class DataMovementTests: XCTestCase {
  /// The element a StridedLayout reads for output index `index`, from its definition.
  private func naiveSource(_ layout: StridedLayout, _ index: [Int]) -> Int {
    layout.offset + zip(index, layout.strides).reduce(0) { $0 + $1.0 * $1.1 }
  }

  func testStridedCopyMatchesDefinitionForRandomLayouts() {
    var generator = SeededGenerator(seed: 1)
    for trial in 0..<300 {
      let rank = Int.random(in: 0...6, using: &generator)
      let extents = randomShape(rank: rank, extents: 0...4, using: &generator)
      // Strides of any sign (and zero) over a source large enough for every reach.
      let strides = (0..<rank).map { _ in Int.random(in: -7...7, using: &generator) }
      let negativeReach = zip(extents, strides).reduce(0) { $0 + max(0, $1.0 - 1) * max(0, -$1.1) }
      let positiveReach = zip(extents, strides).reduce(0) { $0 + max(0, $1.0 - 1) * max(0, $1.1) }
      let layout = StridedLayout(extents: extents, strides: strides, offset: negativeReach)
      for elementSize in movableElementSizes {
        let source = randomBytes(count: negativeReach + positiveReach + 1, elementSize: elementSize, using: &generator)
        let expected = gatheredBytes(
          source, elementSize: elementSize, sourceElements: allIndices(extents).map { naiveSource(layout, $0) })
        XCTAssertEqual(
          stridedCopyBytes(layout, source: source, elementSize: elementSize), expected,
          "trial \(trial): extents \(extents) strides \(strides) element size \(elementSize)")
      }
    }
  }

  func testSimplifiedLayoutVisitsTheSameElements() {
    var generator = SeededGenerator(seed: 2)
    for _ in 0..<200 {
      let shape = randomShape(rank: Int.random(in: 1...6, using: &generator), extents: 1...4, using: &generator)
      let permutation = Array(shape.indices).shuffled(using: &generator)
      let layout = StridedLayout.transpose(inputShape: shape, permutation: permutation)
      let simplified = layout.simplified()
      XCTAssertLessThanOrEqual(simplified.extents.count, layout.extents.count)
      XCTAssertEqual(simplified.elementCount, layout.elementCount)
      XCTAssertEqual(
        allIndices(simplified.extents).map { naiveSource(simplified, $0) },
        allIndices(layout.extents).map { naiveSource(layout, $0) })
    }
  }

  func testCopyBlocksMovesEveryBlock() {
    var generator = SeededGenerator(seed: 3)
    let source = randomBytes(count: 64, elementSize: 1, using: &generator)
    let output = withBuffers(source: source, outputBytes: 40) { input, output in
      copyBlocks(count: 4, blockBytes: 3, from: input + 2, sourceStride: 16, to: output + 1, destinationStride: 10)
    }
    for block in 0..<4 {
      XCTAssertEqual(Array(output[(1 + block * 10)..<(4 + block * 10)]), Array(source[(2 + block * 16)..<(5 + block * 16)]))
    }
    XCTAssertEqual(output[0], 0xEE, "bytes outside the blocks stay untouched")
  }

  func testFillElementsRepeatsTheValue() {
    for elementSize in movableElementSizes {
      var generator = SeededGenerator(seed: UInt64(elementSize))
      let value = randomBytes(count: 1, elementSize: elementSize, using: &generator)
      let output = withBuffers(source: value, outputBytes: 7 * elementSize) { input, output in
        fillElements(output, count: 7, value: input, elementSize: elementSize)
      }
      XCTAssertEqual(output, Array([[UInt8]](repeating: value, count: 7).joined()))
    }
  }

  func testCheckedElementCountRejectsOverflowAndNegativeDimensions() {
    XCTAssertThrowsError(try checkedElementCount([Int.max / 2, 4], op: "TEST"))
    XCTAssertThrowsError(try checkedElementCount([1 << 20, 1 << 20], op: "TEST"))
    XCTAssertThrowsError(try checkedElementCount([3, -1], op: "TEST"))
    XCTAssertEqual(try checkedElementCount([3, 0, 5], op: "TEST"), 0)
  }

  func testConstantViewKernelChecksOperatorAndOperandCount() {
    let input = makeTensor(0, .float32, [2, 3])
    let operand = makeTensor(1, .int32, [2])
    let output = makeTensor(2, .float32, [2, 3])
    XCTAssertThrowsError(
      try runKernel(ConstantViewKernel.self, opName: "REVERSE_V2", inputs: [input, operand], outputs: [output])
    ) { error in
      guard case KernelError.unsupported(let reason) = error else { return XCTFail("\(error)") }
      XCTAssertTrue(reason.contains("not a constant view"), reason)
    }
    XCTAssertThrowsError(
      try runKernel(ConstantViewKernel.self, opName: "SLICE", inputs: [input, operand], outputs: [output]),
      "SLICE needs begin and size")
  }
}
