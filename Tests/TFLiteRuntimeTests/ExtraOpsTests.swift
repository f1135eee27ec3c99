import Foundation
import TFLiteFormat
import XCTest

@testable import TFLiteRuntime

/// The extra kernels against naive Swift definitions on random shapes, and their refusals of bad operands.
final class ExtraOpsTests: XCTestCase {
  // MARK: SPACE_TO_BATCH_ND / BATCH_TO_SPACE_ND

  /// Naive SPACE_TO_BATCH_ND source of every output element (nil = padding).
  private func naiveSpaceToBatch(shape: [Int], blocks: [Int], paddings: [Int]) -> (shape: [Int], sources: [Int?]) {
    let spatial = blocks.count
    let batch = shape[0]
    var outputShape = [batch * blocks.reduce(1, *)]
    for axis in 0..<spatial { outputShape.append((shape[axis + 1] + paddings[2 * axis] + paddings[2 * axis + 1]) / blocks[axis]) }
    outputShape += shape[(spatial + 1)...]
    let sources = allIndices(outputShape).map { output -> Int? in
      // Output batch = block offset · batch + b, the offset row-major over the block axes.
      var offset = output[0] / batch
      var input = output
      input[0] = output[0] % batch
      for axis in stride(from: spatial - 1, through: 0, by: -1) {
        input[axis + 1] = output[axis + 1] * blocks[axis] + offset % blocks[axis] - paddings[2 * axis]
        offset /= blocks[axis]
        if input[axis + 1] < 0 || input[axis + 1] >= shape[axis + 1] { return nil }
      }
      return flatPosition(input, shape)
    }
    return (outputShape, sources)
  }

  /// A random input shape `[batch, spatial…, rest…]` and paddings that make every padded spatial
  /// size a multiple of its block.
  private func randomSpaceToBatchOperands(blocks: [Int], using generator: inout SeededGenerator) -> ([Int], [Int]) {
    var shape = [generator.int(1...2)]
    var paddings: [Int] = []
    for block in blocks {
      let size = generator.int(1...5)
      let before = generator.int(0...2)
      shape.append(size)
      paddings += [before, (block - (size + before) % block) % block + block * generator.int(0...1)]
    }
    shape += (0..<generator.int(0...2)).map { _ in generator.int(1...3) }
    return (shape, paddings)
  }

  func testSpaceToBatchMatchesDefinitionAndPadsWithTheGivenElement() throws {
    var generator = SeededGenerator(seed: 300)
    for _ in 0..<80 {
      let spatial = generator.int(1...3)
      let blocks = (0..<spatial).map { _ in generator.int(1...3) }
      let (shape, paddings) = randomSpaceToBatchOperands(blocks: blocks, using: &generator)
      let plan = try BlockBatchPlan.spaceToBatch(inputShape: shape, blockShape: blocks, paddings: paddings)
      let naive = naiveSpaceToBatch(shape: shape, blocks: blocks, paddings: paddings)
      XCTAssertEqual(plan.outputShape, naive.shape)
      for elementSize in movableElementSizes {
        let source = randomBytes(count: shape.reduce(1, *), elementSize: elementSize, using: &generator)
        let padding = randomBytes(count: 1, elementSize: elementSize, using: &generator)
        let actual = padding.withUnsafeBytes { pad in
          withBuffers(source: source, outputBytes: naive.sources.count * elementSize) { input, output in
            plan.run(
              from: input, to: output, padding: pad.baseAddress!, elementSize: elementSize,
              pixels: 0..<plan.sourcePixels.count)
          }
        }
        XCTAssertEqual(
          actual, gatheredBytes(source, elementSize: elementSize, sourceElements: naive.sources, fill: padding),
          "shape \(shape) blocks \(blocks) paddings \(paddings)")
      }
    }
  }

  func testBatchToSpaceUndoesSpaceToBatch() throws {
    var generator = SeededGenerator(seed: 301)
    for _ in 0..<60 {
      let blocks = [generator.int(1...3), generator.int(1...3)]
      let (shape, margins) = randomSpaceToBatchOperands(blocks: blocks, using: &generator)
      let toBatch = try BlockBatchPlan.spaceToBatch(inputShape: shape, blockShape: blocks, paddings: margins)
      let back = try BlockBatchPlan.batchToSpace(inputShape: toBatch.outputShape, blockShape: blocks, crops: margins)
      XCTAssertEqual(back.outputShape, shape)
      let source = randomBytes(count: shape.reduce(1, *), elementSize: 4, using: &generator)
      let zero = [UInt8](repeating: 0, count: 4)
      let batched = zero.withUnsafeBytes { pad in
        withBuffers(source: source, outputBytes: toBatch.sourcePixels.count * toBatch.pixelElements * 4) { input, output in
          toBatch.run(from: input, to: output, padding: pad.baseAddress!, elementSize: 4, pixels: 0..<toBatch.sourcePixels.count)
        }
      }
      let restored = zero.withUnsafeBytes { pad in
        withBuffers(source: batched, outputBytes: source.count) { input, output in
          back.run(from: input, to: output, padding: pad.baseAddress!, elementSize: 4, pixels: 0..<back.sourcePixels.count)
        }
      }
      XCTAssertEqual(restored, source, "shape \(shape) blocks \(blocks) margins \(margins)")
    }
  }

  func testSpaceBatchRejectsBadBlocksAndMargins() {
    XCTAssertThrowsError(try BlockBatchPlan.spaceToBatch(inputShape: [1, 5, 4, 1], blockShape: [2, 2], paddings: [0, 0, 0, 0]))
    XCTAssertThrowsError(try BlockBatchPlan.spaceToBatch(inputShape: [1, 4, 4, 1], blockShape: [0, 2], paddings: [0, 0, 0, 0]))
    XCTAssertThrowsError(try BlockBatchPlan.spaceToBatch(inputShape: [1, 4, 4, 1], blockShape: [2, 2], paddings: [0, -2, 0, 2]))
    XCTAssertThrowsError(try BlockBatchPlan.spaceToBatch(inputShape: [4], blockShape: [2], paddings: [0, 0]))
    XCTAssertThrowsError(try BlockBatchPlan.batchToSpace(inputShape: [3, 2, 2, 1], blockShape: [2, 2], crops: [0, 0, 0, 0]))
    XCTAssertThrowsError(try BlockBatchPlan.batchToSpace(inputShape: [4, 2, 2, 1], blockShape: [2, 2], crops: [3, 2, 0, 0]))
  }

  func testSpaceToBatchKernelWaitsForRunTimeBlockShapes() throws {
    let input = makeTensor(0, .float32, [1, 4, 4, 1], bytes: bytesOf((0..<16).map(Float.init)))
    let blocks = makeTensor(1, .int32, [2])
    let paddings = makeTensor(2, .int32, [2, 2], bytes: bytesOf([Int32](repeating: 0, count: 4)))
    let output = makeTensor(3, .float32, [])
    let kernel = try BlockBatchKernel(node: extraNode("SPACE_TO_BATCH_ND", [input, blocks, paddings], [output]))
    var context = PrepareContext(threadCount: 1)
    XCTAssertThrowsError(try kernel.prepare(&context)) {
      guard case KernelError.needsInputValues = $0 else { return XCTFail("\($0)") }
    }
    // Once the block shape is computed (as the runtime does during invoke), the node prepares and runs.
    blocks.pointer(as: Int32.self).update(from: [2, 2], count: 2)
    blocks.isComputedBeforePrepare = true
    try kernel.prepare(&context)
    XCTAssertEqual(output.shape, [4, 2, 2, 1])
    output.allocateOwnedMemory()
    try kernel.eval(EvalContext(threadCount: 1, scratch: nil))
    XCTAssertEqual(elements(output, as: Float.self), [0, 2, 8, 10, 1, 3, 9, 11, 4, 6, 12, 14, 5, 7, 13, 15])
  }

  // MARK: REVERSE_V2

  func testReverseMatchesDefinition() throws {
    var generator = SeededGenerator(seed: 302)
    for _ in 0..<120 {
      let shape = randomShape(rank: generator.int(1...5), extents: 1...4, using: &generator)
      let axes = shape.indices.filter { _ in generator.bool() }
      let written = axes.map { generator.bool() ? $0 - shape.count : $0 }
      let layout = StridedLayout.reversal(inputShape: shape, axes: try reversedAxes(written, rank: shape.count))
      let sources = allIndices(shape).map { output -> Int? in
        flatPosition(output.enumerated().map { axis, index in axes.contains(axis) ? shape[axis] - 1 - index : index }, shape)
      }
      for elementSize in movableElementSizes {
        let source = randomBytes(count: shape.reduce(1, *), elementSize: elementSize, using: &generator)
        XCTAssertEqual(
          stridedCopyBytes(layout, source: source, elementSize: elementSize),
          gatheredBytes(source, elementSize: elementSize, sourceElements: sources), "shape \(shape) axes \(axes)")
      }
    }
  }

  func testReverseRejectsRepeatedOrOutOfRangeAxes() {
    XCTAssertThrowsError(try reversedAxes([1, -2], rank: 3))
    XCTAssertThrowsError(try reversedAxes([3], rank: 3))
  }

  // MARK: ONE_HOT

  func testOneHotMatchesDefinition() throws {
    var generator = SeededGenerator(seed: 303)
    for _ in 0..<60 {
      let indicesShape = randomShape(rank: generator.int(0...3), extents: 1...4, using: &generator)
      let depth = generator.int(0...5)
      let axis = generator.int(-1...indicesShape.count)
      let indices: [Int64] = (0..<indicesShape.reduce(1, *)).map { _ in Int64(generator.int(-2...6)) }
      let plan = try OneHotPlan(indicesShape: indicesShape, depth: depth, axis: axis)
      let inserted = axis == -1 ? indicesShape.count : axis
      var expectedShape = indicesShape
      expectedShape.insert(depth, at: inserted)
      XCTAssertEqual(plan.outputShape, expectedShape)
      let (on, off): (Float, Float) = (2.5, -1)
      let expected = allIndices(expectedShape).map { output -> Float in
        var position = output
        let hot = position.remove(at: inserted)
        return indices[flatPosition(position, indicesShape)] == Int64(hot) ? on : off
      }
      var actual = [Float](repeating: .nan, count: expected.count)
      withUnsafeBytes(of: on) { onBytes in
        withUnsafeBytes(of: off) { offBytes in
          indices.withUnsafeBufferPointer { indexBuffer in
            actual.withUnsafeMutableBytes { output in
              guard let base = output.baseAddress else { return }
              plan.run(
                indices: indexBuffer.baseAddress!, on: onBytes.baseAddress!, off: offBytes.baseAddress!, output: base,
                elementSize: 4)
            }
          }
        }
      }
      XCTAssertEqual(actual, expected, "indices \(indicesShape) depth \(depth) axis \(axis)")
    }
  }

  func testOneHotRejectsNegativeDepthAndBadAxis() {
    XCTAssertThrowsError(try OneHotPlan(indicesShape: [2], depth: -1, axis: -1))
    XCTAssertThrowsError(try OneHotPlan(indicesShape: [2], depth: 3, axis: 2))
    XCTAssertThrowsError(try OneHotPlan(indicesShape: [2], depth: 3, axis: -2))
  }

  // MARK: RANGE

  func testRangeCountsMatchDefinition() throws {
    var generator = SeededGenerator(seed: 304)
    for _ in 0..<300 {
      let start = generator.int(-50...50)
      let delta = generator.int(1...7) * (generator.bool() ? 1 : -1)
      let limit = start + delta * generator.int(0...20) + (delta > 0 ? generator.int(0...6) : -generator.int(0...6))
      let expected = Array(stride(from: start, to: limit, by: delta)).count
      XCTAssertEqual(try integerRangeCount(start: Int64(start), limit: Int64(limit), delta: Int64(delta)), expected)
      let (floatStart, floatLimit, floatDelta) = (Float(start) / 4, Float(limit) / 4, Float(delta) / 4)
      XCTAssertEqual(try floatRangeCount(start: floatStart, limit: floatLimit, delta: floatDelta), expected)
    }
  }

  func testRangeRejectsBadDeltasAndHugeCounts() {
    XCTAssertThrowsError(try integerRangeCount(start: 0, limit: 5, delta: 0))
    XCTAssertThrowsError(try integerRangeCount(start: 0, limit: 5, delta: -1))
    XCTAssertThrowsError(try integerRangeCount(start: .min, limit: .max, delta: 1))
    XCTAssertThrowsError(try floatRangeCount(start: 0, limit: 1, delta: 0))
    XCTAssertThrowsError(try floatRangeCount(start: 0, limit: .infinity, delta: 1))
    XCTAssertThrowsError(try floatRangeCount(start: 0, limit: 1e30, delta: 1e-3))
  }

  func testRangeKernelWritesRepeatedSums() throws {
    let start = makeTensor(0, .float32, [], bytes: bytesOf([Float(0.1)]))
    let limit = makeTensor(1, .float32, [], bytes: bytesOf([Float(2)]))
    let delta = makeTensor(2, .float32, [], bytes: bytesOf([Float(0.3)]))
    let output = makeTensor(3, .float32, [])
    try runKernel(RangeKernel.self, opName: "RANGE", inputs: [start, limit, delta], outputs: [output])
    var value: Float = 0.1
    let expected = (0..<7).map { _ in
      defer { value += 0.3 }
      return value
    }
    XCTAssertEqual(elements(output, as: Float.self), expected)
  }

  // MARK: TOPK_V2

  func testTopKMatchesAStableSort() {
    var generator = SeededGenerator(seed: 305)
    for _ in 0..<200 {
      let length = generator.int(1...40)
      let k = generator.int(0...length)
      let values: [Int32] = (0..<length).map { _ in Int32(generator.int(-4...4)) }
      let expected = values.indices.sorted { values[$0] > values[$1] || (values[$0] == values[$1] && $0 < $1) }.prefix(k)
      var indices = [Int32](repeating: -1, count: max(k, 1))
      values.withUnsafeBufferPointer { row in
        indices.withUnsafeMutableBufferPointer { rankTop(row: row.baseAddress!, length: length, k: k, indices: $0.baseAddress!) }
      }
      XCTAssertEqual(indices.prefix(k).map(Int.init), Array(expected), "values \(values) k \(k)")
    }
  }

  func testTopKKernelRowsOnTwoThreads() throws {
    var generator = SeededGenerator(seed: 306)
    let (rows, length, k) = (20_000, 8, 3)
    let values = generator.floats(rows * length)
    let input = makeTensor(0, .float32, [rows, length], bytes: bytesOf(values))
    let kTensor = makeTensor(1, .int32, [], bytes: bytesOf([Int32(k)]))
    let outputs = [makeTensor(2, .float32, []), makeTensor(3, .int32, [])]
    let kernel = try TopKKernel(node: extraNode("TOPK_V2", [input, kTensor], outputs))
    var context = PrepareContext(threadCount: 2)
    try kernel.prepare(&context)
    for output in outputs { output.allocateOwnedMemory() }
    try kernel.eval(EvalContext(threadCount: 2, scratch: nil))
    let indices = elements(outputs[1], as: Int32.self)
    for row in 0..<rows {
      let slice = Array(values[(row * length)..<((row + 1) * length)])
      let expected = slice.indices.sorted { slice[$0] > slice[$1] }.prefix(k)
      XCTAssertEqual(indices[(row * k)..<((row + 1) * k)].map(Int.init), Array(expected))
    }
    XCTAssertEqual(elements(outputs[0], as: Float.self)[0], values[Int(indices[0])])
  }

  func testTopKRejectsKLargerThanTheRow() {
    let input = makeTensor(0, .float32, [2, 4], bytes: bytesOf([Float](repeating: 0, count: 8)))
    let k = makeTensor(1, .int32, [], bytes: bytesOf([Int32(5)]))
    XCTAssertThrowsError(
      try runKernel(TopKKernel.self, opName: "TOPK_V2", inputs: [input, k], outputs: [makeTensor(2, .float32, []), makeTensor(3, .int32, [])]))
  }
}

/// A node of `opName` with no options over the given operands.
func extraNode(_ opName: String, _ inputs: [RuntimeTensor?], _ outputs: [RuntimeTensor], options: BuiltinOptions = .none) -> Node {
  Node(
    index: 0, opName: opName, version: 1, inputs: inputs, outputs: outputs, options: options,
    customOptions: UnsafeRawBufferPointer(start: nil, count: 0), subgraph: { _ in throw KernelError.unsupported("none") })
}
