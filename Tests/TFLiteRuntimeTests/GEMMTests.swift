import XCTest

import TFLiteLinearAlgebra
@testable import TFLiteRuntime

final class GEMMTests: XCTestCase {
  /// Random products against the double-precision reference: edge tiles in both directions, depth
  /// across several blocks, both B layouts, strided and transposed A, bias and clamps, 1 and 2
  /// threads, both arithmetic forms of the float kernel.
  func testRandomProductsMatchReference() {
    var random = SeededGenerator(seed: 1)
    for trial in 0..<60 {
      let rows = random.int(1...40)
      let columns = random.int(1...50)
      let depth = trial % 10 == 0 ? random.int(257...600) : random.int(1...90)
      let transposedA = random.bool()
      let columnMajorB = random.bool()
      let lhsStride = transposedA ? rows : depth + random.int(0...3)
      let a = random.floats(transposedA ? depth * rows : rows * lhsStride)
      let b = random.floats(depth * columns)
      let bias = random.bool() ? random.floats(columns) : nil
      let activation = testActivations[trial % testActivations.count]
      let layout: MatrixLayout = columnMajorB ? .columnMajor(depth: depth) : .depthMajor(columns: columns)
      let expected = referenceMatrixProduct(
        rows: rows, columns: columns, depth: depth,
        a: { i, k in transposedA ? a[k * rows + i] : a[i * lhsStride + k] },
        b: { k, j in b[k * layout.depthStride + j * layout.columnStride] }, bias: bias,
        lower: activation.range.lower, upper: activation.range.upper)
      let packed = b.withUnsafeBufferPointer {
        PackedMatrices($0.baseAddress!, sourceStride: 0, count: 1, layout: layout, depth: depth, columns: columns)
      }
      let paddedBias = bias.map { $0.withUnsafeBufferPointer { PanelPacking.paddedBias($0.baseAddress!, groups: 1, columns: columns) } }
      for (threads, fused) in [(1, false), (2, false), (1, true), (2, true)] {
        let plan = GEMMPlan(rows: rows, columns: columns, depth: depth, threadCount: threads)
        let memory = TestMemory()
        let output = memory.output(rows * columns)
        let scratch = memory.scratch(bytes: plan.scratchBytes(leftOperandPacks: transposedA, threadCount: threads))
        let epilogue = FloatEpilogue(bias: memory.copy(paddedBias).map { UnsafePointer($0) }, activation: activation.range)
        if transposedA {
          FloatGEMM.multiply(
            plan: plan, lhs: TransposedLeftOperand(base: memory.copy(a), depthStride: rows), rhs: packed.matrix(0),
            output: output, outputStride: columns, epilogue: epilogue, threadCount: threads, scratch: scratch,
            usesFusedMultiplyAdd: fused, generatedKernels: nil)
        } else {
          FloatGEMM.multiply(
            plan: plan, lhs: RowMajorLeftOperand(base: memory.copy(a), rowStride: lhsStride), rhs: packed.matrix(0),
            output: output, outputStride: columns, epilogue: epilogue, threadCount: threads, scratch: scratch,
            usesFusedMultiplyAdd: fused, generatedKernels: nil)
        }
        assertMatches(
          floats(output, rows * columns), expected,
          "trial \(trial) \(rows)x\(depth)x\(columns) transposedA=\(transposedA) columnMajorB=\(columnMajorB) threads=\(threads) fused=\(fused)")
      }
    }
  }

  /// A zero-depth product is the bias alone (clamped).
  func testZeroDepthGivesBias() {
    let bias: [Float] = [-2, 0.5, 7]
    let padded = bias.withUnsafeBufferPointer { PanelPacking.paddedBias($0.baseAddress!, groups: 1, columns: 3) }
    let plan = GEMMPlan(rows: 2, columns: 3, depth: 0, threadCount: 1)
    let packed = PackedMatrices([Float](), sourceStride: 0, count: 1, layout: .depthMajor(columns: 3), depth: 0, columns: 3)
    let memory = TestMemory()
    let output = memory.output(6)
    FloatGEMM.multiply(
      plan: plan, lhs: RowMajorLeftOperand(base: memory.copy([0]), rowStride: 0), rhs: packed.matrix(0), output: output,
      outputStride: 3, epilogue: FloatEpilogue(bias: memory.copy(padded), activation: .relu6), threadCount: 1,
      scratch: memory.scratch(bytes: plan.scratchBytes(leftOperandPacks: false, threadCount: 1)))
    let expected = referenceMatrixProduct(
      rows: 2, columns: 3, depth: 0, a: { _, _ in 0 }, b: { _, _ in 0 }, bias: bias,
      lower: FloatClampRange.relu6.lower, upper: FloatClampRange.relu6.upper)
    XCTAssertEqual(floats(output, 6), expected.map { Float($0.value) })
  }

  /// Packed panels: 16 columns per depth step, columns past N are zero.
  func testPanelPackingLayout() {
    let depth = 3
    let columns = 18
    let source = (0..<(depth * columns)).map(Float.init)
    var packed = [Float](repeating: .nan, count: PanelPacking.packedCount(depth: depth, columns: columns))
    XCTAssertEqual(packed.count, 2 * depth * 16)
    source.withUnsafeBufferPointer { src in
      packed.withUnsafeMutableBufferPointer { dst in
        PanelPacking.pack(src.baseAddress!, layout: .depthMajor(columns: columns), depth: depth, columns: columns, into: dst.baseAddress!)
      }
    }
    for k in 0..<depth {
      for j in 0..<16 { XCTAssertEqual(packed[k * 16 + j], source[k * columns + j]) }
      XCTAssertEqual(packed[depth * 16 + k * 16], source[k * columns + 16])
      XCTAssertEqual(packed[depth * 16 + k * 16 + 1], source[k * columns + 17])
      for j in 2..<16 { XCTAssertEqual(packed[depth * 16 + k * 16 + j], 0) }
    }
  }

  /// Plans cover every row and panel exactly once, in row blocks of whole tiles that differ by at
  /// most one tile and fit the packed A block; one thread gets one panel group.
  func testPlansCoverTheProduct() {
    for (rows, columns, depth) in [(12544, 16, 32), (49, 160, 960), (1, 1000, 1280), (196, 96, 576), (7, 5, 3), (40, 512, 64)] {
      for threads in [1, 2, 4, 300] {
        let plan = GEMMPlan(rows: rows, columns: columns, depth: depth, threadCount: threads)
        let label = "\(rows)×\(columns)×\(depth), \(threads) threads"
        XCTAssertEqual(plan.rowBlock % GEMMTile.rows, 0, label)
        var coveredRows = 0
        var blockTiles: [Int] = []
        for block in 0..<plan.rowBlockCount {
          let range = plan.rowRange(ofBlock: block)
          XCTAssertEqual(range.lowerBound, coveredRows, label)
          XCTAssertLessThanOrEqual(range.count, plan.rowBlock, label)
          coveredRows = range.upperBound
          blockTiles.append((range.count + GEMMTile.rows - 1) / GEMMTile.rows)
        }
        XCTAssertEqual(coveredRows, rows, label)
        XCTAssertLessThanOrEqual((blockTiles.max() ?? 0) - (blockTiles.min() ?? 0), 1, label)
        var coveredPanels = 0
        for group in 0..<plan.panelGroupCount {
          let range = plan.panelRange(ofGroup: group)
          XCTAssertEqual(range.lowerBound, coveredPanels, label)
          XCTAssertFalse(range.isEmpty, label)
          coveredPanels = range.upperBound
        }
        XCTAssertEqual(coveredPanels, PanelPacking.panelCount(columns: columns), label)
        XCTAssertLessThanOrEqual(plan.depthBlock, GEMMPlan.maxDepthBlock)
        XCTAssertGreaterThanOrEqual(plan.depthBlock * ((depth + plan.depthBlock - 1) / plan.depthBlock), depth)
        if threads == 1 { XCTAssertEqual(plan.panelGroupCount, 1) }
      }
    }
  }

  /// With two threads, work worth splitting gets about four items per thread, cut the way that
  /// reads the least: a thin, wide product (a 7×7 ResNet stage) along N keeping all rows in one
  /// block, a tall, narrow one along M; a tiny product is not split at all.
  func testTwoThreadPlansSplitThinProductsAlongColumnsAndTallOnesAlongRows() {
    let thin = GEMMPlan(rows: 49, columns: 512, depth: 4608, threadCount: 2)
    XCTAssertEqual(thin.rowBlockCount, 1)
    XCTAssertEqual(thin.itemCount, 8)
    let tall = GEMMPlan(rows: 3136, columns: 64, depth: 576, threadCount: 2)
    XCTAssertEqual(tall.panelGroupCount, 1)
    XCTAssertGreaterThanOrEqual(tall.itemCount, 8)
    XCTAssertEqual(tall.itemCount % 2, 0, "equal items, an even count")
    let tiny = GEMMPlan(rows: 7, columns: 5, depth: 3, threadCount: 2)
    XCTAssertEqual(tiny.itemCount, 1)
    XCTAssertEqual(GEMMPlan(rows: 49, columns: 512, depth: 4608, threadCount: 1).itemCount, 1)
  }

  /// Every item runs exactly once, on a worker index below the thread count.
  func testParallelWorkRunsEachItemOnce() {
    for threads in [1, 2, 3] {
      var counts = [Int](repeating: 0, count: 37)
      var workers = [Int](repeating: -1, count: 37)
      counts.withUnsafeMutableBufferPointer { countBuffer in
        workers.withUnsafeMutableBufferPointer { workerBuffer in
          let countBase = countBuffer.baseAddress!
          let workerBase = workerBuffer.baseAddress!
          ParallelWork.run(itemCount: 37, threadCount: threads) { item, worker in
            countBase[item] += 1
            workerBase[item] = worker
          }
        }
      }
      XCTAssertEqual(counts, [Int](repeating: 1, count: 37), "threads \(threads)")
      XCTAssertTrue(workers.allSatisfy { (0..<threads).contains($0) }, "threads \(threads)")
    }
  }
}

/// A scalar int8 × int8 → int32 micro-kernel, to check that the driver runs other element types.
private struct Int32TestKernel: GEMMMicroKernel {
  func tile(
    a: UnsafePointer<Int8>, lda: Int, validRows: Int, b: UnsafePointer<Int32>, depth: Int,
    output: UnsafeMutablePointer<Int32>, ldc: Int, column: Int, isFirstBlock: Bool, isLastBlock: Bool
  ) {
    for row in 0..<validRows {
      for lane in 0..<GEMMTile.columns {
        var sum = isFirstBlock ? 0 : output[row * ldc + lane]
        for k in 0..<depth { sum &+= Int32(a[row * lda + k]) &* b[k * GEMMTile.columns + lane] }
        output[row * ldc + lane] = sum
      }
    }
  }
}

final class GEMMDriverTests: XCTestCase {
  /// The driver with an integer kernel: every row, column and depth block lands where it should,
  /// with and without depth splitting, on 1 and 2 threads.
  func testIntegerKernelThroughTheDriver() {
    var random = SeededGenerator(seed: 31)
    for trial in 0..<12 {
      let (rows, columns, depth) = (random.int(1...30), random.int(1...40), trial % 3 == 0 ? random.int(257...400) : random.int(1...60))
      let a = (0..<(rows * depth)).map { _ in Int8.random(in: -128...127, using: &random) }
      let b = (0..<(depth * columns)).map { _ in Int32(Int8.random(in: -128...127, using: &random)) }
      var expected = [Int32](repeating: 0, count: rows * columns)
      for i in 0..<rows {
        for j in 0..<columns {
          for k in 0..<depth { expected[i * columns + j] &+= Int32(a[i * depth + k]) * b[k * columns + j] }
        }
      }
      let packed = b.withUnsafeBufferPointer {
        PackedMatrices($0.baseAddress!, sourceStride: 0, count: 1, layout: .depthMajor(columns: columns), depth: depth, columns: columns)
      }
      for threads in [1, 2] {
        for splitsDepth in [true, false] {
          let plan = GEMMPlan(rows: rows, columns: columns, depth: depth, threadCount: threads, splitsDepth: splitsDepth)
          if !splitsDepth { XCTAssertEqual(plan.depthBlock, depth) }
          let scratch = UnsafeMutableRawPointer.allocate(
            byteCount: plan.scratchBytes(leftOperandPacks: false, threadCount: threads, lhs: Int8.self, output: Int32.self),
            alignment: 64)
          defer { scratch.deallocate() }
          var output = [Int32](repeating: -1, count: rows * columns)
          a.withUnsafeBufferPointer { aBuffer in
            output.withUnsafeMutableBufferPointer { outBuffer in
              GEMMDriver.multiply(
                plan: plan, lhs: RowMajorLeftOperand(base: aBuffer.baseAddress!, rowStride: depth), rhs: packed.matrix(0),
                output: outBuffer.baseAddress!, outputStride: columns, kernel: Int32TestKernel(), threadCount: threads,
                scratch: scratch)
            }
          }
          XCTAssertEqual(output, expected, "trial \(trial) \(rows)x\(depth)x\(columns) threads \(threads) split \(splitsDepth)")
        }
      }
    }
  }
}
