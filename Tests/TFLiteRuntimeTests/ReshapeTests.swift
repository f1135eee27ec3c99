import XCTest

@testable import TFLiteRuntime

final class ReshapeTests: XCTestCase {
  func testInferredDimensionPreservesTheElementCount() throws {
    var generator = SeededGenerator(seed: 80)
    for _ in 0..<300 {
      let input = randomShape(rank: Int.random(in: 0...4, using: &generator), extents: 1...5, using: &generator)
      let count = input.reduce(1, *)
      // Factor the element count into a random requested shape, then hide one factor.
      var remaining = count
      var requested: [Int] = []
      while remaining > 1 {
        let divisor = (1...remaining).filter { remaining % $0 == 0 }.randomElement(using: &generator)!
        requested.append(divisor)
        remaining /= divisor
      }
      if !requested.isEmpty && Bool.random(using: &generator) {
        let hidden = Int.random(in: 0..<requested.count, using: &generator)
        let full = requested
        requested[hidden] = -1
        XCTAssertEqual(try reshapedShape(inputShape: input, requested: requested), full)
      } else {
        XCTAssertEqual(try reshapedShape(inputShape: input, requested: requested), requested)
      }
    }
  }

  func testEmptyTensorsAndInvalidRequests() throws {
    XCTAssertEqual(try reshapedShape(inputShape: [0, 3], requested: [3, -1]), [3, 0])
    XCTAssertEqual(try reshapedShape(inputShape: [0, 6], requested: [0, -1]), [0, 6])
    XCTAssertThrowsError(try reshapedShape(inputShape: [2, 3], requested: [4, -1]))
    XCTAssertThrowsError(try reshapedShape(inputShape: [2, 3], requested: [-1, -1]))
    XCTAssertThrowsError(try reshapedShape(inputShape: [2, 3], requested: [-2, -3]))
    XCTAssertThrowsError(try reshapedShape(inputShape: [2, 3], requested: [0, -1]))
    XCTAssertThrowsError(try reshapedShape(inputShape: [2, 3], requested: [1 << 40, 1 << 40]))
  }

  func testSqueezeAndExpandDims() throws {
    var generator = SeededGenerator(seed: 81)
    for _ in 0..<200 {
      let shape = randomShape(rank: Int.random(in: 0...5, using: &generator), extents: 1...3, using: &generator)
      let ones = shape.indices.filter { shape[$0] == 1 }
      XCTAssertEqual(try squeezedShape(inputShape: shape, axes: []), shape.filter { $0 != 1 })
      let chosen = ones.filter { _ in Bool.random(using: &generator) }
      if !chosen.isEmpty {
        let written = chosen.map { Bool.random(using: &generator) ? $0 - shape.count : $0 }
        XCTAssertEqual(
          try squeezedShape(inputShape: shape, axes: written),
          shape.indices.filter { !chosen.contains($0) }.map { shape[$0] })
      }
      let axis = Int.random(in: (-shape.count - 1)...shape.count, using: &generator)
      let expanded = try expandedShape(inputShape: shape, axis: axis)
      let position = axis < 0 ? axis + shape.count + 1 : axis
      XCTAssertEqual(expanded[position], 1)
      XCTAssertEqual(Array(expanded[..<position]) + Array(expanded[(position + 1)...]), shape)
    }
    XCTAssertThrowsError(try squeezedShape(inputShape: [2, 1], axes: [0]))
    XCTAssertThrowsError(try squeezedShape(inputShape: [2, 1], axes: [2]))
    XCTAssertThrowsError(try expandedShape(inputShape: [2, 1], axis: 3))
    XCTAssertThrowsError(try expandedShape(inputShape: [2, 1], axis: -4))
  }
}

final class ReshapeKernelTests: XCTestCase {
  func testShapeOperandThatIsNotConstantAsksForRunTimePreparation() throws {
    let input = makeTensor(0, .float32, [2, 3])
    let shape = makeTensor(1, .int32, [2])
    let output = makeTensor(2, .float32, [6])
    XCTAssertThrowsError(try runKernel(ReshapeKernel.self, opName: "RESHAPE", inputs: [input, shape], outputs: [output])) { error in
      guard case KernelError.needsInputValues(let reason) = error else { return XCTFail("\(error)") }
      XCTAssertTrue(reason.contains("RESHAPE shape"), reason)
    }
  }

  func testKernelCopiesTheBytesUnderTheNewShape() throws {
    var generator = SeededGenerator(seed: 82)
    let values = (0..<24).map { _ in Float.random(in: -1...1, using: &generator) }
    let input = makeTensor(0, .float32, [2, 3, 4], bytes: bytesOf(values))
    let shape = makeTensor(1, .int32, [2], bytes: bytesOf([Int32(-1), 6]))
    let output = makeTensor(2, .float32, [1])
    try runKernel(ReshapeKernel.self, opName: "RESHAPE", inputs: [input, shape], outputs: [output])
    XCTAssertEqual(output.shape, [4, 6])
    XCTAssertEqual(elements(output, as: Float.self), values)
  }
}
