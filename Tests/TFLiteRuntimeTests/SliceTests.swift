import XCTest

@testable import TFLiteRuntime

final class SliceTests: XCTestCase {
  // MARK: SLICE

  func testSliceMatchesNaiveIndexing() throws {
    var generator = SeededGenerator(seed: 20)
    for _ in 0..<200 {
      let shape = randomShape(rank: Int.random(in: 1...5, using: &generator), extents: 1...5, using: &generator)
      let begin = shape.map { Int.random(in: 0...$0, using: &generator) }
      let size = zip(shape, begin).map { extent, start in
        Bool.random(using: &generator) ? -1 : Int.random(in: 0...(extent - start), using: &generator)
      }
      let extents = zip(zip(shape, begin), size).map { $1 == -1 ? $0.0 - $0.1 : $1 }
      let sources = allIndices(extents).map { index -> Int? in flatPosition(zip(index, begin).map(+), shape) }
      for elementSize in movableElementSizes {
        let source = randomBytes(count: shape.reduce(1, *), elementSize: elementSize, using: &generator)
        let layout = try sliceLayout(inputShape: shape, begin: begin, size: size)
        XCTAssertEqual(layout.extents, extents)
        XCTAssertEqual(
          stridedCopyBytes(layout, source: source, elementSize: elementSize),
          gatheredBytes(source, elementSize: elementSize, sourceElements: sources))
      }
    }
  }

  func testSliceRejectsOutOfRangeRequests() {
    XCTAssertThrowsError(try sliceLayout(inputShape: [4], begin: [5], size: [-1]))
    XCTAssertThrowsError(try sliceLayout(inputShape: [4], begin: [2], size: [3]))
    XCTAssertThrowsError(try sliceLayout(inputShape: [4], begin: [-1], size: [1]))
    XCTAssertThrowsError(try sliceLayout(inputShape: [4], begin: [0], size: [-2]))
    XCTAssertThrowsError(try sliceLayout(inputShape: [4, 4], begin: [0], size: [1]))
  }

  // MARK: STRIDED_SLICE

  /// One entry of a numpy-style index expression.
  private enum IndexItem {
    case ellipsis
    case newAxis
    case single(Int)
    case range(begin: Int?, end: Int?, step: Int)
  }

  /// Python's `slice(begin, end, step).indices(size)` followed by `range`.
  private func pythonRange(begin: Int?, end: Int?, step: Int, size: Int) -> [Int] {
    func normalize(_ value: Int?, default fallback: Int) -> Int {
      guard var value else { return fallback }
      if value < 0 { value += size }
      return step > 0 ? min(max(value, 0), size) : min(max(value, -1), size - 1)
    }
    let first = normalize(begin, default: step > 0 ? 0 : size - 1)
    let last = normalize(end, default: step > 0 ? size : -1)
    return Array(stride(from: first, to: last, by: step))
  }

  /// Evaluates an index expression numpy's way: per output axis, the list of input positions
  /// (nil for a new axis), plus which entries of that list survive in the output shape.
  private func numpySlice(_ items: [IndexItem], shape: [Int]) -> (positions: [[Int?]], keep: [Bool]) {
    let consuming = items.filter { if case .ellipsis = $0 { return false }; if case .newAxis = $0 { return false }; return true }.count
    var expanded: [IndexItem] = []
    var sawEllipsis = false
    for item in items {
      if case .ellipsis = item {
        sawEllipsis = true
        expanded += [IndexItem](repeating: .range(begin: nil, end: nil, step: 1), count: shape.count - consuming)
      } else {
        expanded.append(item)
      }
    }
    if !sawEllipsis {
      expanded += [IndexItem](repeating: .range(begin: nil, end: nil, step: 1), count: shape.count - consuming)
    }
    var axis = 0
    var positions: [[Int?]] = []
    var keep: [Bool] = []
    for item in expanded {
      switch item {
      case .newAxis:
        positions.append([nil])
        keep.append(true)
      case .single(let index):
        positions.append([index < 0 ? index + shape[axis] : index])
        keep.append(false)
        axis += 1
      case .range(let begin, let end, let step):
        positions.append(pythonRange(begin: begin, end: end, step: step, size: shape[axis]))
        keep.append(true)
        axis += 1
      case .ellipsis:
        break
      }
    }
    return (positions, keep)
  }

  /// Builds a random valid index expression for `shape` and the equivalent STRIDED_SLICE spec.
  private func randomExpression(shape: [Int], using generator: inout SeededGenerator) -> ([IndexItem], StridedSliceSpec) {
    var items: [IndexItem] = []
    var spec = StridedSliceSpec(begin: [], end: [], strides: [])
    var remainingAxes = shape.count
    var usedEllipsis = false
    var axis = 0
    let entryCount = Int.random(in: 0...(shape.count + 2), using: &generator)
    for entry in 0..<entryCount {
      let roll = Int.random(in: 0..<10, using: &generator)
      var begin = Int.random(in: -6...6, using: &generator)
      let end = Int.random(in: -6...6, using: &generator)
      var step = [-3, -2, -1, 1, 1, 2, 3].randomElement(using: &generator)!
      if roll == 0 && !usedEllipsis {
        usedEllipsis = true
        spec.ellipsisMask |= 1 << entry
        items.append(.ellipsis)
        // The ellipsis swallows a random number of the remaining axes.
        let swallowed = Int.random(in: 0...remainingAxes, using: &generator)
        remainingAxes -= swallowed
        axis += swallowed
      } else if roll == 1 {
        spec.newAxisMask |= 1 << entry
        items.append(.newAxis)
      } else if remainingAxes > 0 {
        let size = shape[axis]
        if roll == 2 && size > 0 {
          begin = Int.random(in: -size..<size, using: &generator)
          step = 1
          spec.shrinkAxisMask |= 1 << entry
          items.append(.single(begin))
        } else {
          let maskBegin = Int.random(in: 0..<4, using: &generator) == 0
          let maskEnd = Int.random(in: 0..<4, using: &generator) == 0
          if maskBegin { spec.beginMask |= 1 << entry }
          if maskEnd { spec.endMask |= 1 << entry }
          items.append(.range(begin: maskBegin ? nil : begin, end: maskEnd ? nil : end, step: step))
        }
        remainingAxes -= 1
        axis += 1
      } else {
        break
      }
      spec.begin.append(begin)
      spec.end.append(end)
      spec.strides.append(step)
    }
    // Without an ellipsis every axis not named is taken whole; with one, the swallowed count must match.
    if usedEllipsis && remainingAxes > 0 {
      for _ in 0..<remainingAxes {
        items.append(.range(begin: nil, end: nil, step: 1))
        spec.beginMask |= 1 << spec.begin.count
        spec.endMask |= 1 << spec.begin.count
        spec.begin.append(0)
        spec.end.append(0)
        spec.strides.append(1)
      }
    }
    return (items, spec)
  }

  func testStridedSliceMatchesNumpySemanticsWithAllMasks() throws {
    var generator = SeededGenerator(seed: 21)
    for trial in 0..<600 {
      let shape = randomShape(rank: Int.random(in: 0...4, using: &generator), extents: 1...5, using: &generator)
      let (items, spec) = randomExpression(shape: shape, using: &generator)
      let expected = numpySlice(items, shape: shape)
      let resolved = try spec.resolve(inputShape: shape)
      let expectedShape = zip(expected.positions, expected.keep).filter { $0.1 }.map { $0.0.count }
      XCTAssertEqual(resolved.outputShape, expectedShape, "trial \(trial): shape \(shape) spec \(spec)")
      let sources = allIndices(expected.positions.map(\.count)).map { index -> Int? in
        let inputIndex = zip(index, expected.positions).compactMap { $1[$0] }
        return flatPosition(inputIndex, shape)
      }
      let elementSize = movableElementSizes[trial % 4]
      let source = randomBytes(count: shape.reduce(1, *), elementSize: elementSize, using: &generator)
      XCTAssertEqual(
        stridedCopyBytes(resolved.layout, source: source, elementSize: elementSize),
        gatheredBytes(source, elementSize: elementSize, sourceElements: sources),
        "trial \(trial): shape \(shape) spec \(spec)")
    }
  }

  func testOffsetFlagTreatsEndAsSize() throws {
    var generator = SeededGenerator(seed: 22)
    for _ in 0..<100 {
      let shape = randomShape(rank: Int.random(in: 1...4, using: &generator), extents: 1...6, using: &generator)
      let begin = shape.map { Int.random(in: 0..<$0, using: &generator) }
      let size = zip(shape, begin).map { Int.random(in: 0...($0 - $1), using: &generator) }
      let strides = [Int](repeating: 1, count: shape.count)
      let spec = StridedSliceSpec(begin: begin, end: size, strides: strides, offset: true)
      let resolved = try spec.resolve(inputShape: shape)
      XCTAssertEqual(resolved.outputShape, size)
      let source = randomBytes(count: shape.reduce(1, *), elementSize: 4, using: &generator)
      XCTAssertEqual(
        stridedCopyBytes(resolved.layout, source: source, elementSize: 4),
        stridedCopyBytes(try sliceLayout(inputShape: shape, begin: begin, size: size), source: source, elementSize: 4))
    }
  }

  func testStridedSliceRejectsInvalidSpecs() {
    XCTAssertThrowsError(try StridedSliceSpec(begin: [0], end: [1], strides: [0]).resolve(inputShape: [3]))
    XCTAssertThrowsError(try StridedSliceSpec(begin: [0], end: [1, 2], strides: [1]).resolve(inputShape: [3]))
    XCTAssertThrowsError(try StridedSliceSpec(begin: [0, 0, 0], end: [1, 1, 1], strides: [1, 1, 1]).resolve(inputShape: [3, 3]))
    XCTAssertThrowsError(
      try StridedSliceSpec(begin: [5], end: [6], strides: [1], shrinkAxisMask: 1).resolve(inputShape: [3]))
    XCTAssertThrowsError(
      try StridedSliceSpec(begin: [0, 0], end: [1, 1], strides: [1, 1], ellipsisMask: 3).resolve(inputShape: [3, 3]))
  }
}
