import TFLiteFormat
import XCTest

@testable import TFLiteRuntime

final class ConcatenationTests: XCTestCase {
  /// Runs `AxisPartition.join` over copies of `parts` and returns the joined bytes.
  private func joined(_ parts: [[UInt8]], partition: AxisPartition, elementSize: Int) -> [UInt8] {
    let buffers = parts.map { part -> UnsafeMutableRawBufferPointer in
      let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(part.count, 1), alignment: 16)
      buffer.copyBytes(from: part)
      return buffer
    }
    defer { buffers.forEach { $0.deallocate() } }
    let total = parts.reduce(0) { $0 + $1.count }
    return withBuffers(source: [], outputBytes: total) { _, output in
      partition.join(into: output, elementSize: elementSize) { UnsafeRawPointer(buffers[$0].baseAddress!) }
    }
  }

  /// The joined bytes element by element: output element `o` comes from the part whose range
  /// along `axis` holds `o[axis]`.
  private func naiveJoin(_ parts: [[UInt8]], shapes: [[Int]], axis: Int, elementSize: Int) throws -> [UInt8] {
    var expected: [UInt8] = []
    for output in allIndices(try concatenatedShape(inputShapes: shapes, axis: axis)) {
      var position = output[axis]
      var part = 0
      while position >= shapes[part][axis] {
        position -= shapes[part][axis]
        part += 1
      }
      var input = output
      input[axis] = position
      let element = flatPosition(input, shapes[part])
      expected += parts[part][(element * elementSize)..<((element + 1) * elementSize)]
    }
    return expected
  }

  func testConcatenationMatchesNaiveJoin() throws {
    var generator = SeededGenerator(seed: 90)
    for _ in 0..<200 {
      let base = randomShape(rank: Int.random(in: 1...4, using: &generator), extents: 1...4, using: &generator)
      let axis = Int.random(in: 0..<base.count, using: &generator)
      let shapes = (0..<Int.random(in: 1...4, using: &generator)).map { _ -> [Int] in
        var shape = base
        shape[axis] = Int.random(in: 0...3, using: &generator)
        return shape
      }
      let outputShape = try concatenatedShape(inputShapes: shapes, axis: axis)
      let partition = AxisPartition(shape: outputShape, axis: axis, partExtents: shapes.map { $0[axis] })
      for elementSize in movableElementSizes {
        let parts = shapes.map { randomBytes(count: $0.reduce(1, *), elementSize: elementSize, using: &generator) }
        let expected = try naiveJoin(parts, shapes: shapes, axis: axis, elementSize: elementSize)
        let output = joined(parts, partition: partition, elementSize: elementSize)
        XCTAssertEqual(output, expected, "shapes \(shapes) axis \(axis)")

        // SPLIT is the inverse: extracting every part gives the parts back.
        for (index, part) in parts.enumerated() where !part.isEmpty {
          let extracted = withBuffers(source: output, outputBytes: part.count) { whole, destination in
            partition.extract(part: index, from: whole, into: destination, elementSize: elementSize)
          }
          XCTAssertEqual(extracted, part)
        }
      }
    }
  }

  /// Every run length of 1–70 bytes (the first part's run; the others' are 1–3 times it), 2–5
  /// parts, every axis of ranks 1–4, every element size: the inline short-run copies write exactly
  /// the naive join's bytes and nothing before or after the output, and SPLIT gives the parts back.
  func testShortRunsOfEveryLengthJoinAndSplitExactly() throws {
    var generator = SeededGenerator(seed: 94)
    let guardBytes = 16
    for elementSize in movableElementSizes {
      for runElements in 1...(70 / elementSize) {
        let rank = 1 + runElements % 4
        let axis = (runElements / 4) % rank
        // Part 0's run along `axis` is `runElements`: its extent there times the axes after it.
        var base = randomShape(rank: rank, extents: 1...3, using: &generator)
        for inner in (axis + 1)..<rank { base[inner] = inner == rank - 1 ? runElements : 1 }
        let shapes = (0..<(2 + runElements % 4)).map { part -> [Int] in
          var shape = base
          let multiple = part == 0 ? 1 : Int.random(in: 1...3, using: &generator)
          shape[axis] = axis == rank - 1 ? runElements * multiple : multiple
          return shape
        }
        let outputShape = try concatenatedShape(inputShapes: shapes, axis: axis)
        let partition = AxisPartition(shape: outputShape, axis: axis, partExtents: shapes.map { $0[axis] })
        let parts = shapes.map { randomBytes(count: $0.reduce(1, *), elementSize: elementSize, using: &generator) }
        let expected = try naiveJoin(parts, shapes: shapes, axis: axis, elementSize: elementSize)
        let buffers = parts.map { part -> UnsafeMutableRawBufferPointer in
          let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: part.count, alignment: 16)
          buffer.copyBytes(from: part)
          return buffer
        }
        defer { buffers.forEach { $0.deallocate() } }
        let guarded = withBuffers(source: [], outputBytes: expected.count + 2 * guardBytes) { _, output in
          partition.join(into: output + guardBytes, elementSize: elementSize) { UnsafeRawPointer(buffers[$0].baseAddress!) }
        }
        let untouched = [UInt8](repeating: 0xEE, count: guardBytes)
        let context = "\(elementSize)-byte elements, shapes \(shapes), axis \(axis)"
        XCTAssertEqual(Array(guarded[guardBytes..<(guardBytes + expected.count)]), expected, context)
        XCTAssertEqual(Array(guarded.prefix(guardBytes)), untouched, context)
        XCTAssertEqual(Array(guarded.suffix(guardBytes)), untouched, context)
        for (index, part) in parts.enumerated() {
          let extracted = withBuffers(source: expected, outputBytes: part.count + guardBytes) { whole, destination in
            partition.extract(part: index, from: whole, into: destination, elementSize: elementSize)
          }
          XCTAssertEqual(Array(extracted.prefix(part.count)), part, context)
          XCTAssertEqual(Array(extracted.suffix(guardBytes)), untouched, context)
        }
      }
    }
  }

  func testPackPartitionsBelowTheLastAxis() {
    // PACK along the new last axis: parts of extent 1 interleave element by element.
    var generator = SeededGenerator(seed: 91)
    let parts = (0..<3).map { _ in randomBytes(count: 4, elementSize: 4, using: &generator) }
    let partition = AxisPartition(shape: [4], axis: 1, partExtents: [1, 1, 1])
    let output = joined(parts, partition: partition, elementSize: 4)
    for element in 0..<4 {
      for part in 0..<3 {
        XCTAssertEqual(Array(output[((element * 3 + part) * 4)..<((element * 3 + part + 1) * 4)]), Array(parts[part][(element * 4)..<(element * 4 + 4)]))
      }
    }
  }

  func testConcatenatedShapeRejectsMismatches() {
    XCTAssertThrowsError(try concatenatedShape(inputShapes: [[2, 3], [3, 3]], axis: 1))
    XCTAssertThrowsError(try concatenatedShape(inputShapes: [[2, 3], [2, 3, 1]], axis: 0))
    XCTAssertThrowsError(try concatenatedShape(inputShapes: [], axis: 0))
  }

  func testSplitSizesFillTheFreeEntry() throws {
    var generator = SeededGenerator(seed: 92)
    for _ in 0..<100 {
      let sizes = randomShape(rank: Int.random(in: 1...5, using: &generator), extents: 0...6, using: &generator)
      let extent = sizes.reduce(0, +)
      XCTAssertEqual(try splitSizes(sizes, extent: extent), sizes)
      var withFree = sizes
      withFree[Int.random(in: 0..<sizes.count, using: &generator)] = -1
      XCTAssertEqual(try splitSizes(withFree, extent: extent), sizes)
      XCTAssertThrowsError(try splitSizes(sizes, extent: extent + 1))
    }
    XCTAssertThrowsError(try splitSizes([-1, -1], extent: 10))
    XCTAssertThrowsError(try splitSizes([11, -1], extent: 10))
    XCTAssertThrowsError(try splitSizes([-2, 12], extent: 10))
  }
}

final class ConcatenationKernelTests: XCTestCase {
  func testFusedRelu6ClampsTheJoinedValues() throws {
    var generator = SeededGenerator(seed: 93)
    let first = (0..<6).map { _ in Float.random(in: -10...10, using: &generator) }
    let second = (0..<4).map { _ in Float.random(in: -10...10, using: &generator) }
    let a = makeTensor(0, .float32, [2, 3], bytes: bytesOf(first))
    let b = makeTensor(1, .float32, [2, 2], bytes: bytesOf(second))
    let output = makeTensor(2, .float32, [2, 5])
    try runKernel(
      ConcatenationKernel.self, opName: "CONCATENATION", inputs: [a, b], outputs: [output],
      options: .concatenationOptions(ConcatenationOptions(axis: -1, fusedActivationFunction: .relu6)))
    let joined = Array(first[0..<3]) + Array(second[0..<2]) + Array(first[3..<6]) + Array(second[2..<4])
    XCTAssertEqual(output.shape, [2, 5])
    XCTAssertEqual(elements(output, as: Float.self), joined.map { min(max($0, 0), 6) })
  }

  func testInt8InputsWithOtherQuantizationAreRejected() {
    let a = makeTensor(0, .int8, [2], quantization: Quantization(scales: [0.5], zeroPoints: [0]))
    let b = makeTensor(1, .int8, [2], quantization: Quantization(scales: [0.25], zeroPoints: [0]))
    let output = makeTensor(2, .int8, [4], quantization: Quantization(scales: [0.5], zeroPoints: [0]))
    XCTAssertThrowsError(
      try runKernel(
        ConcatenationKernel.self, opName: "CONCATENATION", inputs: [a, b], outputs: [output],
        options: .concatenationOptions(ConcatenationOptions())))
  }
}
