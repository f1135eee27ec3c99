import TFLiteFormat
import XCTest

import TFLiteLinearAlgebra
@testable import TFLiteRuntime

final class BatchMatMulTests: XCTestCase {
  /// Batch dimensions broadcast numpy-style; each output batch maps to the right operand batches.
  func testBatchBroadcastIndices() throws {
    let broadcast = try XCTUnwrap(BatchBroadcast(lhsBatch: [2, 1], rhsBatch: [3]))
    XCTAssertEqual(broadcast.shape, [2, 3])
    XCTAssertEqual(broadcast.lhsIndices, [0, 0, 0, 1, 1, 1])
    XCTAssertEqual(broadcast.rhsIndices, [0, 1, 2, 0, 1, 2])
    XCTAssertEqual(BatchBroadcast(lhsBatch: [], rhsBatch: [])?.lhsIndices, [0])
    XCTAssertNil(BatchBroadcast(lhsBatch: [2], rhsBatch: [3]))
  }

  /// Random batched products (adj_x, adj_y, broadcast batches, 1 and 2 threads) against the reference.
  func testRandomBatchMatMulsMatchReference() throws {
    var random = SeededGenerator(seed: 7)
    for trial in 0..<24 {
      let rows = random.int(1...12)
      let depth = random.int(1...40)
      let columns = random.int(1...35)
      let adjX = random.bool()
      let adjY = random.bool()
      let lhsBatch = [[], [2], [3, 1], [1, 2]][trial % 4]
      let rhsBatch = [[2], [], [1, 2], [3, 1]][trial % 4]
      let broadcast = try XCTUnwrap(BatchBroadcast(lhsBatch: lhsBatch, rhsBatch: rhsBatch))
      let lhsCount = lhsBatch.reduce(1, *)
      let rhsCount = rhsBatch.reduce(1, *)
      let lhs = random.floats(lhsCount * rows * depth)
      let rhs = random.floats(rhsCount * depth * columns)
      let layout = FloatBatchMatMul.rhsLayout(adjY: adjY, depth: depth, columns: columns)
      let expected = referenceBatchMatMul(
        lhs: lhs, lhsBatch: lhsBatch, rhs: rhs, rhsBatch: rhsBatch, rows: rows, depth: depth, columns: columns,
        adjX: adjX, adjY: adjY)
      let packed = rhs.withUnsafeBufferPointer {
        PackedMatrices(
          $0.baseAddress!, sourceStride: depth * columns, count: rhsCount, layout: layout, depth: depth, columns: columns)
      }
      for threads in [1, 2] {
        let plan = GEMMPlan(rows: rows, columns: columns, depth: depth, threadCount: threads)
        let memory = TestMemory()
        let output = memory.output(expected.count)
        FloatBatchMatMul.run(
          plan: plan, broadcast: broadcast, lhs: memory.copy(lhs), adjX: adjX, rhs: packed.matrix(0), output: output,
          threadCount: threads, scratch: memory.scratch(bytes: plan.scratchBytes(leftOperandPacks: adjX, threadCount: threads)))
        assertMatches(floats(output, expected.count), expected, "trial \(trial) \(rows)x\(depth)x\(columns) adj \(adjX) \(adjY) threads \(threads)")
      }
    }
  }

  /// BATCH_MATMUL has no clamp: infinities pass through unchanged (a fused-activation clamp would
  /// turn them into ±greatestFiniteMagnitude).
  func testInfinitiesAreNotClamped() throws {
    let lhs: [Float] = [.infinity, 1]
    let rhs: [Float] = [1, 1]
    let broadcast = try XCTUnwrap(BatchBroadcast(lhsBatch: [], rhsBatch: []))
    let packed = rhs.withUnsafeBufferPointer {
      PackedMatrices($0.baseAddress!, sourceStride: 0, count: 1, layout: .depthMajor(columns: 1), depth: 2, columns: 1)
    }
    let plan = GEMMPlan(rows: 1, columns: 1, depth: 2, threadCount: 1)
    let memory = TestMemory()
    let output = memory.output(1)
    FloatBatchMatMul.run(
      plan: plan, broadcast: broadcast, lhs: memory.copy(lhs), adjX: false, rhs: packed.matrix(0), output: output,
      threadCount: 1, scratch: memory.scratch(bytes: plan.scratchBytes(leftOperandPacks: false, threadCount: 1)))
    let expected = referenceMatrixProduct(
      rows: 1, columns: 1, depth: 2, a: { lhs[$1] }, b: { k, _ in rhs[k] }, bias: nil, lower: -.infinity, upper: .infinity)
    XCTAssertEqual(floats(output, 1), expected.map { Float($0.value) })
  }
}

/// BATCH_MATMUL through init/prepare/eval.
final class BatchMatMulKernelTests: XCTestCase {
  func testBatchMatMulKernelMatchesReference() throws {
    var random = SeededGenerator(seed: 22)
    for trial in 0..<12 {
      let (rows, depth, columns) = (random.int(1...9), random.int(1...30), random.int(1...20))
      let adjX = trial % 2 == 1
      let adjY = trial % 3 == 1
      let lhsBatch = [[], [3], [2, 1], [2, 3]][trial % 4]
      let rhsBatch = [[2], [3], [1, 4], []][trial % 4]
      let constantRight = trial % 2 == 0
      let lhs = random.floats(lhsBatch.reduce(1, *) * rows * depth)
      let rhs = random.floats(rhsBatch.reduce(1, *) * depth * columns)
      let broadcast = try XCTUnwrap(BatchBroadcast(lhsBatch: lhsBatch, rhsBatch: rhsBatch))
      let expected = referenceBatchMatMul(
        lhs: lhs, lhsBatch: lhsBatch, rhs: rhs, rhsBatch: rhsBatch, rows: rows, depth: depth, columns: columns,
        adjX: adjX, adjY: adjY)
      for threads in [1, 2] {
        let node = KernelHarness.node(
          "BATCH_MATMUL",
          [
            KernelHarness.floatTensor(0, lhsBatch + (adjX ? [depth, rows] : [rows, depth]), lhs),
            KernelHarness.floatTensor(1, rhsBatch + (adjY ? [columns, depth] : [depth, columns]), rhs, constant: constantRight),
          ], KernelHarness.outputTensor(2), .batchMatMulOptions(BatchMatMulOptions(adjX: adjX, adjY: adjY)))
        let result = try KernelHarness.run(node, threads: threads)
        XCTAssertEqual(result.shape, broadcast.shape + [rows, columns])
        assertMatches(result.values, expected, "trial \(trial) threads \(threads)")
      }
    }
  }

  func testBatchMatMulRejectsMismatchedOperands() {
    let lhs = KernelHarness.floatTensor(0, [2, 3, 4], [Float](repeating: 1, count: 24))
    KernelHarness.assertRejects(
      KernelHarness.node(
        "BATCH_MATMUL", [lhs, KernelHarness.floatTensor(1, [3, 4, 2], [Float](repeating: 1, count: 24))],
        KernelHarness.outputTensor(2), .batchMatMulOptions(BatchMatMulOptions())),
      containing: "do not broadcast")
    KernelHarness.assertRejects(
      KernelHarness.node(
        "BATCH_MATMUL", [lhs, KernelHarness.floatTensor(1, [5, 2], [Float](repeating: 1, count: 10))],
        KernelHarness.outputTensor(2), .batchMatMulOptions(BatchMatMulOptions())),
      containing: "inner dimensions")
  }
}
