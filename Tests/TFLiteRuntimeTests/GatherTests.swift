import TFLiteFormat
import XCTest

@testable import TFLiteRuntime

final class GatherTests: XCTestCase {
  private func runGather(
    _ plan: GatherPlan, params: [UInt8], indices: [Int32], elementSize: Int
  ) throws -> [UInt8] {
    try withBuffers(source: params, outputBytes: plan.outputShape.reduce(1, *) * elementSize) { input, output in
      try indices.withUnsafeBufferPointer {
        try plan.run(params: input, indices: $0.baseAddress!, output: output, elementSize: elementSize)
      }
    }
  }

  func testGatherWithAxisAndBatchDimsMatchesNaiveIndexing() throws {
    var generator = SeededGenerator(seed: 40)
    for _ in 0..<300 {
      let paramsShape = randomShape(rank: Int.random(in: 1...4, using: &generator), extents: 1...4, using: &generator)
      let axis = Int.random(in: 0..<paramsShape.count, using: &generator)
      let batchDims = Int.random(in: 0...axis, using: &generator)
      let indicesShape =
        Array(paramsShape[..<batchDims]) + randomShape(rank: Int.random(in: 0...2, using: &generator), extents: 1...3, using: &generator)
      let indices = (0..<indicesShape.reduce(1, *)).map { _ in Int32.random(in: 0..<Int32(paramsShape[axis]), using: &generator) }
      let plan = try GatherPlan(
        paramsShape: paramsShape, indicesShape: indicesShape, axis: axis - (Bool.random(using: &generator) ? paramsShape.count : 0),
        batchDims: batchDims)
      let indexRank = indicesShape.count - batchDims
      let sources = allIndices(plan.outputShape).map { output -> Int? in
        let batch = Array(output[..<batchDims])
        let position = Array(output[axis..<(axis + indexRank)])
        let index = Int(indices[flatPosition(batch + position, indicesShape)])
        let input = Array(output[..<axis]) + [index] + Array(output[(axis + indexRank)...])
        return flatPosition(input, paramsShape)
      }
      for elementSize in movableElementSizes {
        let params = randomBytes(count: paramsShape.reduce(1, *), elementSize: elementSize, using: &generator)
        XCTAssertEqual(
          try runGather(plan, params: params, indices: indices, elementSize: elementSize),
          gatheredBytes(params, elementSize: elementSize, sourceElements: sources),
          "params \(paramsShape) indices \(indicesShape) axis \(axis) batch \(batchDims)")
      }
    }
  }

  func testGatherThrowsOnOutOfRangeIndex() throws {
    let plan = try GatherPlan(paramsShape: [3, 2], indicesShape: [2], axis: 0, batchDims: 0)
    let params = [UInt8](repeating: 1, count: 24)
    XCTAssertThrowsError(try runGather(plan, params: params, indices: [0, 3], elementSize: 4))
    XCTAssertThrowsError(try runGather(plan, params: params, indices: [-1, 0], elementSize: 4))
    XCTAssertNoThrow(try runGather(plan, params: params, indices: [2, 0], elementSize: 4))
  }

  func testGatherRejectsInvalidAxes() {
    XCTAssertThrowsError(try GatherPlan(paramsShape: [3, 2], indicesShape: [2], axis: 2, batchDims: 0))
    XCTAssertThrowsError(try GatherPlan(paramsShape: [3, 2], indicesShape: [3], axis: 0, batchDims: 1))
    XCTAssertThrowsError(try GatherPlan(paramsShape: [3, 2], indicesShape: [2, 2], axis: 1, batchDims: 1))
  }

  func testGatherNDMatchesNaiveIndexing() throws {
    var generator = SeededGenerator(seed: 41)
    for _ in 0..<300 {
      let paramsShape = randomShape(rank: Int.random(in: 1...4, using: &generator), extents: 1...4, using: &generator)
      let depth = Int.random(in: 0...paramsShape.count, using: &generator)
      let indicesShape = randomShape(rank: Int.random(in: 0...2, using: &generator), extents: 1...3, using: &generator) + [depth]
      let tuples = indicesShape.dropLast().reduce(1, *)
      let indices = (0..<tuples).flatMap { _ in
        paramsShape[..<depth].map { Int64.random(in: 0..<Int64($0), using: &generator) }
      }
      let plan = try GatherNDPlan(paramsShape: paramsShape, indicesShape: indicesShape)
      let sources = allIndices(plan.outputShape).map { output -> Int? in
        let tuple = flatPosition(Array(output[..<(indicesShape.count - 1)]), Array(indicesShape.dropLast()))
        let coordinates = (0..<depth).map { Int(indices[tuple * depth + $0]) }
        return flatPosition(coordinates + Array(output[(indicesShape.count - 1)...]), paramsShape)
      }
      let params = randomBytes(count: paramsShape.reduce(1, *), elementSize: 2, using: &generator)
      let output = try withBuffers(source: params, outputBytes: plan.outputShape.reduce(1, *) * 2) { input, output in
        try indices.withUnsafeBufferPointer {
          try plan.run(params: input, indices: $0.baseAddress ?? UnsafePointer(bitPattern: 8)!, output: output, elementSize: 2)
        }
      }
      XCTAssertEqual(output, gatheredBytes(params, elementSize: 2, sourceElements: sources), "params \(paramsShape) indices \(indicesShape)")
    }
  }

  func testGatherNDThrowsOnOutOfRangeCoordinate() throws {
    let plan = try GatherNDPlan(paramsShape: [3, 2], indicesShape: [1, 2])
    let params = [UInt8](repeating: 0, count: 6)
    for bad: [Int16] in [[0, 2], [3, 0], [-1, 0]] {
      XCTAssertThrowsError(
        try withBuffers(source: params, outputBytes: 1) { input, output in
          try bad.withUnsafeBufferPointer { try plan.run(params: input, indices: $0.baseAddress!, output: output, elementSize: 1) }
        })
    }
    XCTAssertThrowsError(try GatherNDPlan(paramsShape: [3], indicesShape: [2, 2]))
  }
}

final class GatherKernelTests: XCTestCase {
  func testKernelThrowsAtEvalForAnOutOfRangeIndex() throws {
    let params = makeTensor(0, .float32, [3, 2], bytes: bytesOf([Float](repeating: 1, count: 6)))
    let indices = makeTensor(1, .int64, [2], bytes: bytesOf([Int64(1), 3]))
    let output = makeTensor(2, .float32, [2, 2])
    XCTAssertThrowsError(
      try runKernel(GatherKernel.self, opName: "GATHER", inputs: [params, indices], outputs: [output], options: .gatherOptions(GatherOptions()))
    ) { error in
      XCTAssertTrue("\(error)".contains("out of range"), "\(error)")
    }
  }
}
