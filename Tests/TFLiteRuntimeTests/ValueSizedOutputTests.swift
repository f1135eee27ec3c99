import Foundation
import TFLiteFormat
import XCTest

@testable import TFLiteRuntime

/// WHERE, UNIQUE and NON_MAX_SUPPRESSION_V4/V5 against naive Swift definitions.
final class ValueSizedOutputTests: XCTestCase {
  /// Builds `kernelType` for the operands, prepares it, gives the outputs memory and runs it with scratch.
  private func run(
    _ kernelType: any Kernel.Type, _ opName: String, _ inputs: [RuntimeTensor], _ outputs: [RuntimeTensor],
    options: BuiltinOptions = .none
  ) throws {
    let kernel = try kernelType.init(node: extraNode(opName, inputs, outputs, options: options))
    var context = PrepareContext(threadCount: 1)
    try kernel.prepare(&context)
    for output in outputs { output.allocateOwnedMemory() }
    let scratch = UnsafeMutableRawPointer.allocate(byteCount: max(context.scratchByteCount, 64), alignment: 64)
    defer { scratch.deallocate() }
    try kernel.eval(EvalContext(threadCount: 1, scratch: context.scratchByteCount > 0 ? scratch : nil))
  }

  // MARK: WHERE

  func testWhereListsNonZeroCoordinatesInRowMajorOrder() throws {
    var generator = SeededGenerator(seed: 500)
    for _ in 0..<60 {
      let shape = randomShape(rank: generator.int(1...4), extents: 1...4, using: &generator)
      let values: [Float] = (0..<shape.reduce(1, *)).map { _ in [0, -0.0, 1, -2.5, .nan][generator.int(0...4)] }
      let output = makeTensor(1, .int64, [])
      try run(WhereKernel.self, "WHERE", [makeTensor(0, .float32, shape, bytes: bytesOf(values))], [output])
      let expected = allIndices(shape).filter { values[flatPosition($0, shape)] != 0 }
      XCTAssertEqual(output.shape, [expected.count, shape.count])
      XCTAssertEqual(elements(output, as: Int64.self), expected.flatMap { $0.map(Int64.init) })
    }
    let flags: [UInt8] = [1, 0, 0, 1, 1, 0]
    let output = makeTensor(1, .int64, [])
    try run(WhereKernel.self, "WHERE", [makeTensor(0, .bool, [2, 3], bytes: flags)], [output])
    XCTAssertEqual(elements(output, as: Int64.self), [0, 0, 1, 0, 1, 1])
  }

  func testWhereWaitsForRunTimeValuesAndRefusesScalars() throws {
    let kernel = try WhereKernel(node: extraNode("WHERE", [makeTensor(0, .int32, [3])], [makeTensor(1, .int64, [])]))
    var context = PrepareContext(threadCount: 1)
    XCTAssertThrowsError(try kernel.prepare(&context)) {
      guard case KernelError.needsInputValues = $0 else { return XCTFail("\($0)") }
    }
    XCTAssertThrowsError(
      try run(WhereKernel.self, "WHERE", [makeTensor(0, .int32, [], bytes: bytesOf([Int32(1)]))], [makeTensor(1, .int64, [])]))
  }

  // MARK: UNIQUE

  func testUniqueKeepsFirstAppearanceOrder() throws {
    var generator = SeededGenerator(seed: 501)
    for trial in 0..<80 {
      let count = generator.int(1...40)
      let values: [Float] = (0..<count).map { _ in Float(generator.int(-4...4)) / 2 }.map { $0 == 0 && generator.bool() ? -0.0 : $0 }
      var distinct: [Float] = []
      let ids = values.map { value -> Int64 in
        if let found = distinct.firstIndex(of: value) { return Int64(found) }
        distinct.append(value)
        return Int64(distinct.count - 1)
      }
      let wide = trial % 2 == 0
      let outputs = [makeTensor(1, .float32, []), makeTensor(2, wide ? .int64 : .int32, [])]
      try run(
        UniqueKernel.self, "UNIQUE", [makeTensor(0, .float32, [count], bytes: bytesOf(values))], outputs,
        options: .uniqueOptions(UniqueOptions(idxOutType: wide ? .int64 : .int32)))
      XCTAssertEqual(elements(outputs[0], as: Float.self), distinct, "\(values)")
      XCTAssertEqual(wide ? elements(outputs[1], as: Int64.self) : elements(outputs[1], as: Int32.self).map(Int64.init), ids)
    }
  }

  // MARK: NON_MAX_SUPPRESSION_V4 / V5

  private func naiveIoU(_ a: [Float], _ b: [Float]) -> Float {
    let (aTop, aBottom, aLeft, aRight) = (min(a[0], a[2]), max(a[0], a[2]), min(a[1], a[3]), max(a[1], a[3]))
    let (bTop, bBottom, bLeft, bRight) = (min(b[0], b[2]), max(b[0], b[2]), min(b[1], b[3]), max(b[1], b[3]))
    let areaA = (aBottom - aTop) * (aRight - aLeft)
    let areaB = (bBottom - bTop) * (bRight - bLeft)
    guard areaA > 0, areaB > 0 else { return 0 }
    let intersection = max(min(aBottom, bBottom) - max(aTop, bTop), 0) * max(min(aRight, bRight) - max(aLeft, bLeft), 0)
    return intersection / (areaA + areaB - intersection)
  }

  /// Soft NMS the eager way: repeatedly keep the best remaining candidate, drop the ones it
  /// overlaps by the IoU threshold or more, and decay the others (sigma 0: no decay).
  private func naiveSuppression(
    boxes: [[Float]], scores: [Float], limit: Int, iouThreshold: Float, scoreThreshold: Float, sigma: Float
  ) -> (indices: [Int32], scores: [Float]) {
    var remaining = scores.indices.filter { scores[$0] > scoreThreshold }.map { ($0, scores[$0]) }
    var kept: (indices: [Int32], scores: [Float]) = ([], [])
    while kept.indices.count < limit, let best = remaining.max(by: { $0.1 < $1.1 || ($0.1 == $1.1 && $0.0 > $1.0) }) {
      kept.indices.append(Int32(best.0))
      kept.scores.append(best.1)
      remaining = remaining.compactMap { candidate in
        guard candidate.0 != best.0 else { return nil }
        let overlap = naiveIoU(boxes[candidate.0], boxes[best.0])
        guard overlap < iouThreshold else { return nil }
        let score = sigma > 0 ? candidate.1 * Foundation.exp(-0.5 / sigma * overlap * overlap) : candidate.1
        return score > scoreThreshold ? (candidate.0, score) : nil
      }
    }
    return kept
  }

  private func scalar<T>(_ index: Int, _ type: ElementType, _ value: T) -> RuntimeTensor {
    makeTensor(index, type, [], bytes: bytesOf([value]))
  }

  func testSuppressionMatchesTheEagerDefinition() throws {
    var generator = SeededGenerator(seed: 502)
    for trial in 0..<150 {
      let count = generator.int(1...30)
      let boxes = (0..<count).map { _ -> [Float] in
        let (y, x) = (Float.random(in: 0...0.7, using: &generator), Float.random(in: 0...0.7, using: &generator))
        let (h, w) = (Float.random(in: 0.05...0.3, using: &generator), Float.random(in: 0.05...0.3, using: &generator))
        return generator.bool() ? [y, x, y + h, x + w] : [y + h, x + w, y, x]
      }
      let scores = generator.floats(count, in: 0...1)
      let soft = trial % 2 == 1
      let (limit, iou, threshold) = (generator.int(0...12), Float.random(in: 0.2...0.9, using: &generator), Float.random(in: 0...0.5, using: &generator))
      let sigma: Float = soft ? Float.random(in: 0.1...1, using: &generator) : 0
      let expected = naiveSuppression(
        boxes: boxes, scores: scores, limit: limit, iouThreshold: iou, scoreThreshold: threshold, sigma: sigma)
      var inputs = [
        makeTensor(0, .float32, [count, 4], bytes: bytesOf(boxes.flatMap { $0 })),
        makeTensor(1, .float32, [count], bytes: bytesOf(scores)), scalar(2, .int32, Int32(limit)),
        scalar(3, .float32, iou), scalar(4, .float32, threshold),
      ]
      var outputs = [makeTensor(6, .int32, [])]
      if soft {
        inputs.append(scalar(5, .float32, sigma))
        outputs.append(makeTensor(7, .float32, []))
      }
      outputs.append(makeTensor(8, .int32, []))
      try run(NonMaxSuppressionKernel.self, soft ? "NON_MAX_SUPPRESSION_V5" : "NON_MAX_SUPPRESSION_V4", inputs, outputs)
      let padding = limit - expected.indices.count
      XCTAssertEqual(elements(outputs[0], as: Int32.self), expected.indices + Array(repeating: 0, count: padding), "trial \(trial)")
      XCTAssertEqual(elements(outputs[outputs.count - 1], as: Int32.self), [Int32(expected.indices.count)])
      if soft {
        for (actual, wanted) in zip(elements(outputs[1], as: Float.self), expected.scores + Array(repeating: 0, count: padding)) {
          XCTAssertEqual(actual, wanted, accuracy: 1e-6)
        }
      }
    }
  }

  func testRunTimeLimitSizesTheOutputsByTheBoxesKept() throws {
    let boxes: [Float] = [0, 0, 1, 1, 0, 0, 0.9, 1, 2, 2, 3, 3, 5, 5, 6, 6]
    let limit = makeTensor(2, .int32, [], bytes: bytesOf([Int32(10)]))
    limit.isConstant = false
    limit.isComputedBeforePrepare = true
    let outputs = [makeTensor(6, .int32, []), makeTensor(7, .int32, [])]
    try run(
      NonMaxSuppressionKernel.self, "NON_MAX_SUPPRESSION_V4",
      [makeTensor(0, .float32, [4, 4], bytes: bytesOf(boxes)), makeTensor(1, .float32, [4], bytes: bytesOf([Float(0.9), 0.8, 0.7, 0.1])),
       limit, scalar(3, .float32, Float(0.5)), scalar(4, .float32, Float(0.5))],
      outputs)
    let expected = naiveSuppression(
      boxes: stride(from: 0, to: 16, by: 4).map { Array(boxes[$0..<($0 + 4)]) }, scores: [0.9, 0.8, 0.7, 0.1], limit: 10,
      iouThreshold: 0.5, scoreThreshold: 0.5, sigma: 0)
    XCTAssertEqual(outputs[0].shape, [expected.indices.count])
    XCTAssertEqual(elements(outputs[0], as: Int32.self), expected.indices)
  }

  func testSuppressionRejectsNegativeLimitsAndSigmas() {
    let boxes = makeTensor(0, .float32, [1, 4], bytes: bytesOf([Float(0), 0, 1, 1]))
    let scores = makeTensor(1, .float32, [1], bytes: bytesOf([Float(1)]))
    XCTAssertThrowsError(
      try run(
        NonMaxSuppressionKernel.self, "NON_MAX_SUPPRESSION_V4",
        [boxes, scores, scalar(2, .int32, Int32(-1)), scalar(3, .float32, Float(0.5)), scalar(4, .float32, Float(0))],
        [makeTensor(6, .int32, []), makeTensor(7, .int32, [])]))
    XCTAssertThrowsError(
      try run(
        NonMaxSuppressionKernel.self, "NON_MAX_SUPPRESSION_V5",
        [boxes, scores, scalar(2, .int32, Int32(1)), scalar(3, .float32, Float(0.5)), scalar(4, .float32, Float(0)),
         scalar(5, .float32, Float(-1))],
        [makeTensor(6, .int32, []), makeTensor(7, .float32, []), makeTensor(8, .int32, [])]))
  }
}

/// SEGMENT_SUM, MATRIX_DIAG and EMBEDDING_LOOKUP against naive Swift definitions.
final class TableOperatorTests: XCTestCase {
  func testSegmentSumAddsRowsInOrder() throws {
    var generator = SeededGenerator(seed: 510)
    for _ in 0..<40 {
      let rows = generator.int(1...12)
      var ids: [Int32] = [0]
      for _ in 1..<rows { ids.append(ids[ids.count - 1] + Int32(generator.int(0...1))) }
      let rowShape = randomShape(rank: generator.int(0...2), extents: 1...3, using: &generator)
      let rowElements = rowShape.reduce(1, *)
      let data = generator.floats(rows * rowElements, in: -10...10)
      var expected = [Float](repeating: 0, count: (Int(ids[rows - 1]) + 1) * rowElements)
      for row in 0..<rows {
        for element in 0..<rowElements { expected[Int(ids[row]) * rowElements + element] += data[row * rowElements + element] }
      }
      let output = makeTensor(2, .float32, [])
      try runKernel(
        SegmentSumKernel.self, opName: "SEGMENT_SUM",
        inputs: [makeTensor(0, .float32, [rows] + rowShape, bytes: bytesOf(data)), makeTensor(1, .int32, [rows], bytes: bytesOf(ids))],
        outputs: [output])
      XCTAssertEqual(output.shape, [Int(ids[rows - 1]) + 1] + rowShape)
      XCTAssertEqual(elements(output, as: Float.self), expected)
    }
  }

  func testSegmentSumRejectsIdsThatSkipOrDoNotStartAtZero() {
    for ids: [Int32] in [[1, 1, 2], [0, 2, 2], [0, 1, 0]] {
      XCTAssertThrowsError(
        try runKernel(
          SegmentSumKernel.self, opName: "SEGMENT_SUM",
          inputs: [makeTensor(0, .int32, [3], bytes: bytesOf([Int32](repeating: 1, count: 3))), makeTensor(1, .int32, [3], bytes: bytesOf(ids))],
          outputs: [makeTensor(2, .int32, [])]))
    }
  }

  func testMatrixDiagPlacesRowsOnDiagonals() throws {
    var generator = SeededGenerator(seed: 511)
    for _ in 0..<30 {
      let shape = randomShape(rank: generator.int(1...3), extents: 1...4, using: &generator)
      let size = shape[shape.count - 1]
      for elementSize in movableElementSizes {
        let source = randomBytes(count: shape.reduce(1, *), elementSize: elementSize, using: &generator)
        let type: ElementType = elementSize == 1 ? .int8 : elementSize == 2 ? .int16 : elementSize == 4 ? .int32 : .int64
        let output = makeTensor(1, type, [])
        try runKernel(MatrixDiagKernel.self, opName: "MATRIX_DIAG", inputs: [makeTensor(0, type, shape, bytes: source)], outputs: [output])
        let sources = allIndices(shape + [size]).map { index -> Int? in
          index[index.count - 1] == index[index.count - 2] ? flatPosition(Array(index.dropLast()), shape) : nil
        }
        let zero = [UInt8](repeating: 0, count: elementSize)
        XCTAssertEqual(
          Array(UnsafeRawBufferPointer(start: output.data, count: output.byteCount)),
          gatheredBytes(source, elementSize: elementSize, sourceElements: sources, fill: zero))
      }
    }
  }

  func testEmbeddingLookupCopiesOrDequantizesRows() throws {
    var generator = SeededGenerator(seed: 512)
    let (rows, width) = (6, 5)
    let ids: [Int32] = (0..<9).map { _ in Int32(generator.int(0...(rows - 1))) }
    let table = generator.floats(rows * width)
    let copied = makeTensor(2, .float32, [])
    try runKernel(
      EmbeddingLookupKernel.self, opName: "EMBEDDING_LOOKUP",
      inputs: [makeTensor(0, .int32, [ids.count], bytes: bytesOf(ids)), makeTensor(1, .float32, [rows, width], bytes: bytesOf(table))],
      outputs: [copied])
    XCTAssertEqual(elements(copied, as: Float.self), ids.flatMap { table[(Int($0) * width)..<(Int($0) * width + width)] })

    let quantized: [Int8] = (0..<(rows * width)).map { _ in Int8(generator.int(-127...127)) }
    let scales = (0..<rows).map { _ in Float.random(in: 0.001...0.1, using: &generator) }
    let hybridTable = makeTensor(
      1, .int8, [rows, width], bytes: bytesOf(quantized),
      quantization: Quantization(scales: scales, zeroPoints: [Int](repeating: 0, count: rows), axis: 0))
    let dequantized = makeTensor(2, .float32, [])
    try runKernel(
      EmbeddingLookupKernel.self, opName: "EMBEDDING_LOOKUP",
      inputs: [makeTensor(0, .int32, [ids.count], bytes: bytesOf(ids)), hybridTable], outputs: [dequantized])
    XCTAssertEqual(
      elements(dequantized, as: Float.self),
      ids.flatMap { id in (0..<width).map { Float(quantized[Int(id) * width + $0]) * scales[Int(id)] } })

    XCTAssertThrowsError(
      try runKernel(
        EmbeddingLookupKernel.self, opName: "EMBEDDING_LOOKUP",
        inputs: [makeTensor(0, .int32, [1], bytes: bytesOf([Int32(rows)])), makeTensor(1, .float32, [rows, width], bytes: bytesOf(table))],
        outputs: [makeTensor(2, .float32, [])]))
  }
}
