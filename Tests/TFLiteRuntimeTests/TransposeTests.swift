import XCTest

@testable import TFLiteRuntime

final class TransposeTests: XCTestCase {
  /// Naive transpose: output index `o` reads the input index whose axis `permutation[k]` is `o[k]`.
  private func naiveTranspose(_ source: [UInt8], shape: [Int], permutation: [Int], elementSize: Int) -> [UInt8] {
    let outputShape = permutation.map { shape[$0] }
    let sources = allIndices(outputShape).map { output -> Int? in
      var input = [Int](repeating: 0, count: shape.count)
      for (axis, from) in permutation.enumerated() { input[from] = output[axis] }
      return flatPosition(input, shape)
    }
    return gatheredBytes(source, elementSize: elementSize, sourceElements: sources)
  }

  func testRandomPermutationsUpToSixAxes() throws {
    var generator = SeededGenerator(seed: 10)
    for _ in 0..<200 {
      let shape = randomShape(rank: Int.random(in: 1...6, using: &generator), extents: 1...4, using: &generator)
      let permutation = Array(shape.indices).shuffled(using: &generator)
      // Negative entries name the same axes.
      let written = permutation.map { Bool.random(using: &generator) ? $0 - shape.count : $0 }
      XCTAssertEqual(try transposePermutation(written, rank: shape.count), permutation)
      for elementSize in movableElementSizes {
        let source = randomBytes(count: shape.reduce(1, *), elementSize: elementSize, using: &generator)
        let layout = StridedLayout.transpose(inputShape: shape, permutation: permutation)
        XCTAssertEqual(
          stridedCopyBytes(layout, source: source, elementSize: elementSize),
          naiveTranspose(source, shape: shape, permutation: permutation, elementSize: elementSize),
          "shape \(shape) permutation \(permutation)")
      }
    }
  }

  func testImageLayoutSwapsUseTheBlockedTileAndStayExact() {
    var generator = SeededGenerator(seed: 11)
    for (shape, permutation) in [([1, 17, 19, 18], [0, 3, 1, 2]), ([2, 9, 5, 33], [0, 2, 3, 1]), ([40, 35], [1, 0])] {
      for elementSize in movableElementSizes {
        let source = randomBytes(count: shape.reduce(1, *), elementSize: elementSize, using: &generator)
        XCTAssertEqual(
          stridedCopyBytes(StridedLayout.transpose(inputShape: shape, permutation: permutation), source: source, elementSize: elementSize),
          naiveTranspose(source, shape: shape, permutation: permutation, elementSize: elementSize))
      }
    }
  }

  func testRejectsInvalidPermutations() {
    XCTAssertThrowsError(try transposePermutation([0, 0], rank: 2))
    XCTAssertThrowsError(try transposePermutation([0, 2], rank: 2))
    XCTAssertThrowsError(try transposePermutation([0], rank: 2))
    XCTAssertThrowsError(try transposePermutation([0, -3], rank: 2))
  }
}
