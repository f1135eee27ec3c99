import Foundation
import TFLiteFormat
import TFLiteLinearAlgebra
import XCTest

@testable import TFLiteRuntime

/// The ways work is cut for several threads (GEMM plans split along M and N, element-wise chunks,
/// window rows): everything is covered once, pieces are balanced, and the results equal one
/// thread's (bit for bit where the arithmetic does not depend on the cut; within rounding where
/// the generated float kernel's accumulator sets depend on a tile's height).
final class ThreadSplitTests: XCTestCase {
  /// Item counts are capped by what is affordable and rounded down to a multiple of the threads.
  func testBalancedItemCountsAreMultiplesOfTheThreadCount() {
    XCTAssertEqual(ParallelWork.balancedItemCount(wanted: 8, affordable: 100, threadCount: 2), 8)
    XCTAssertEqual(ParallelWork.balancedItemCount(wanted: 8, affordable: 3, threadCount: 2), 2)
    XCTAssertEqual(ParallelWork.balancedItemCount(wanted: 8, affordable: 7, threadCount: 2), 6)
    XCTAssertEqual(ParallelWork.balancedItemCount(wanted: 12, affordable: 100, threadCount: 3), 12)
    XCTAssertEqual(ParallelWork.balancedItemCount(wanted: 12, affordable: 2, threadCount: 3), 2)
    XCTAssertEqual(ParallelWork.balancedItemCount(wanted: 8, affordable: 1, threadCount: 2), 1)
    XCTAssertEqual(ParallelWork.balancedItemCount(wanted: 8, affordable: 100, threadCount: 1), 1)
  }

  /// Element-wise chunks cover every element once, are as equal as possible, and come in a
  /// multiple of the thread count (or one chunk inline).
  func testChunksCoverEveryElementOnceInEqualPiecesPerThread() {
    for (count, minimumChunk, threads) in [(100_000, 16_384, 2), (50_000, 16_384, 2), (10, 16_384, 2), (70_000, 2_048, 3), (5_000, 1, 1)] {
      let context = EvalContext(threadCount: threads, scratch: nil)
      let lock = NSLock()
      var ranges: [Range<Int>] = []
      context.forEachChunk(of: count, minimumChunk: minimumChunk) { range in
        lock.lock()
        ranges.append(range)
        lock.unlock()
      }
      ranges.sort { $0.lowerBound < $1.lowerBound }
      let label = "\(count) elements, chunks of at least \(minimumChunk), \(threads) threads"
      XCTAssertEqual(ranges.first?.lowerBound, 0, label)
      XCTAssertEqual(ranges.last?.upperBound, count, label)
      XCTAssertTrue(zip(ranges, ranges.dropFirst()).allSatisfy { $0.upperBound == $1.lowerBound }, label)
      let sizes = ranges.map(\.count)
      XCTAssertLessThanOrEqual((sizes.max() ?? 0) - (sizes.min() ?? 0), 1, label)
      XCTAssertTrue(ranges.count == 1 || ranges.count % threads == 0, "\(label): \(ranges.count) chunks")
    }
  }

  /// Chunks aligned to blocks (the hybrid quantizer's 16 values) cover every element once, start
  /// at multiples of the block, differ by at most one block except for the last one's remainder,
  /// and come in a multiple of the thread count (or fewer than the threads: each still a chunk of
  /// its own); random counts, one to four threads.
  func testAlignedChunksCoverEveryElementOnceInWholeBlocks() {
    var random = SeededGenerator(seed: 77)
    for trial in 0..<200 {
      let count = trial < 4 ? [0, 1, 15, 16][trial] : random.int(1...300_000)
      let alignment = [1, 8, 16][trial % 3]
      let threads = 1 + trial % 4
      let minimumChunk = [1, 2_048, 16_384][trial % 3]
      let chunks = ChunkSplit(count: count, alignment: alignment, minimumChunk: minimumChunk, threadCount: threads)
      let ranges = (0..<chunks.count).map(chunks.range)
      let label = "\(count) elements, blocks of \(alignment), chunks of at least \(minimumChunk), \(threads) threads"
      XCTAssertEqual(ranges.first?.lowerBound, 0, label)
      XCTAssertEqual(ranges.last?.upperBound, count, label)
      XCTAssertTrue(zip(ranges, ranges.dropFirst()).allSatisfy { $0.upperBound == $1.lowerBound }, label)
      XCTAssertTrue(ranges.allSatisfy { $0.lowerBound % alignment == 0 }, label)
      XCTAssertTrue(chunks.count < threads || chunks.count % threads == 0, "\(label): \(chunks.count) chunks")
      XCTAssertTrue(chunks.count == 1 || ranges.allSatisfy { $0.count >= minimumChunk }, label)
      let wholeBlocks = ranges.dropLast().map(\.count) + [ranges.last!.count - count % alignment]
      XCTAssertLessThanOrEqual((wholeBlocks.max() ?? 0) - (wholeBlocks.min() ?? 0), alignment, label)
    }
  }

  /// A thin dynamic-range layer (MobileNetV2's 7×7 stage: 49 pixels, one block on one thread) is
  /// cut along its channels on several threads, into enough items for every thread; a tall one
  /// keeps all channels per item; one thread keeps one item per pixel block.
  func testThinDynamicRangeLayersAreCutAlongChannels() {
    for threads in 2...4 {
      let thin = GEMMPlan.cut(rows: 49, columns: 1280, depth: 320, threadCount: threads, rowTile: 10, fewestRowBlocks: 1)
      XCTAssertGreaterThanOrEqual(thin.panelGroups, threads, "\(threads) threads: \(thin)")
      XCTAssertGreaterThanOrEqual(thin.rowBlocks * thin.panelGroups, 2 * threads, "\(threads) threads: \(thin)")
      let tall = GEMMPlan.cut(rows: 12544, columns: 16, depth: 32, threadCount: threads, rowTile: 10, fewestRowBlocks: 210)
      XCTAssertEqual(tall.panelGroups, 1, "\(threads) threads: \(tall)")
      XCTAssertGreaterThanOrEqual(tall.rowBlocks, 210, "\(threads) threads: \(tall)")
    }
    let one = GEMMPlan.cut(rows: 49, columns: 1280, depth: 320, threadCount: 1, rowTile: 10, fewestRowBlocks: 1)
    XCTAssertEqual(one.rowBlocks, 1)
    XCTAssertEqual(one.panelGroups, 1)
  }

  /// Window rows (depthwise convolution, pooling) run every row exactly once, for row counts
  /// below, at and above eight per thread, cheap and costly rows, one to three threads.
  func testWindowRowsRunEveryRowOnce() {
    for rows in [0, 1, 7, 14, 15, 56, 112, 113] {
      for workPerRow in [10, 20_000, 1_000_000] {
        for threads in 1...3 {
          var counts = [Int](repeating: 0, count: rows)
          counts.withUnsafeMutableBufferPointer { buffer in
            let base = buffer.baseAddress
            ChannelWindowRows.forEachRow(rows: rows, workPerRow: workPerRow, threadCount: threads) { row in
              base?[row] += 1
            }
          }
          XCTAssertEqual(counts, [Int](repeating: 1, count: rows), "\(rows) rows × \(workPerRow), \(threads) threads")
          for setupRows in 2...5 {
            // Ranges that fill a ring window first: every row once, in ranges as long as the fill
            // where the threads allow, and still a range per thread where there are rows for it.
            var ranges: [Range<Int>] = []
            let lock = NSLock()
            ChannelWindowRows.forEachRowRange(rows: rows, workPerRow: workPerRow, threadCount: threads, setupRows: setupRows) { range in
              lock.lock()
              ranges.append(range)
              lock.unlock()
            }
            ranges.sort { $0.lowerBound < $1.lowerBound }
            let label = "\(rows) rows × \(workPerRow), \(threads) threads, \(setupRows)-row windows: \(ranges)"
            XCTAssertEqual(ranges.flatMap { Array($0) }, Array(0..<rows), label)
            if ranges.count > 1 {
              XCTAssertGreaterThanOrEqual(ranges.map(\.count).min() ?? 0, min(setupRows, rows / threads), label)
            }
            if rows >= threads, workPerRow >= 1_000_000 { XCTAssertGreaterThanOrEqual(ranges.count, threads, label) }
          }
        }
      }
    }
  }

  /// The work of window rows (`ChannelWindowRows.work`), of two factors and of four: negative
  /// factors count as 0 and products past `Int.max` saturate, against a plain loop that checks each
  /// step by division.
  func testWindowRowWorkSaturates() {
    /// The product of `factors` as a loop that stops at `Int.max`.
    func reference(_ factors: [Int]) -> Int {
      let clamped = factors.map { max($0, 0) }
      if clamped.contains(0) { return 0 }
      var product = 1
      for factor in clamped {
        if product > Int.max / factor { return Int.max }
        product *= factor
      }
      return product
    }
    let values = [-5, -1, 0, 1, 3, 1000, 1 << 31, 1 << 32, Int.max / 2, Int.max]
    for first in values {
      for second in values {
        XCTAssertEqual(ChannelWindowRows.work(first, second), reference([first, second]), "\(first) × \(second)")
        // Four factors (a row's pixels, channels, filter rows and columns), every one of them varied.
        for third in values {
          for fourth in values {
            XCTAssertEqual(
              ChannelWindowRows.work(first, second, third, fourth), reference([first, second, third, fourth]),
              "\(first) × \(second) × \(third) × \(fourth)")
          }
        }
      }
    }
  }

  /// Float GEMMs of the shapes the two-thread plans cut differently (thin and wide, tall and
  /// narrow, one row, partial panels) on 2 and 3 threads: bit for bit one thread's with the Swift
  /// kernel (its sums do not depend on the cut), within rounding of it with the generated kernel,
  /// and both within rounding of the double-precision reference.
  func testSplitFloatProductsEqualOneThread() {
    var random = SeededGenerator(seed: 12)
    for (rows, columns, depth) in [(49, 256, 64), (196, 96, 40), (1, 1000, 256), (784, 32, 32), (40, 512, 32), (15, 48, 100)] {
      let a = random.floats(rows * depth)
      let b = random.floats(depth * columns)
      let bias = random.floats(columns)
      let expected = referenceMatrixProduct(
        rows: rows, columns: columns, depth: depth, a: { i, k in a[i * depth + k] }, b: { k, j in b[j * depth + k] },
        bias: bias, lower: -.infinity, upper: .infinity)
      let packed = b.withUnsafeBufferPointer {
        PackedMatrices($0.baseAddress!, sourceStride: 0, count: 1, layout: .columnMajor(depth: depth), depth: depth, columns: columns)
      }
      let paddedBias = bias.withUnsafeBufferPointer { PanelPacking.paddedBias($0.baseAddress!, groups: 1, columns: columns) }
      let kernelChoices: [(name: String, kernels: GeneratedFloatKernels?)] =
        [("swift", nil)] + (GeneratedFloatKernels.preferred.map { [("generated", $0)] } ?? [])
      for choice in kernelChoices {
        var oneThread: [Float] = []
        for threads in [1, 2, 3] {
          let (values, plan) = floatGEMMProduct(
            a: a, rows: rows, depth: depth, packed: packed, columns: columns, paddedBias: paddedBias,
            activation: .none, threads: threads, generated: choice.kernels)
          let label = "\(rows)×\(columns)×\(depth) \(choice.name), \(threads) threads (\(plan.rowBlockCount) row blocks × \(plan.panelGroupCount) panel groups)"
          assertMatches(values, expected, label)
          if threads == 1 {
            oneThread = values
          } else if choice.kernels == nil {
            XCTAssertEqual(values.map(\.bitPattern), oneThread.map(\.bitPattern), label)
          } else {
            let largest = zip(values, oneThread).map { abs($0 - $1) / max(abs($1), 1) }.max() ?? 0
            XCTAssertLessThanOrEqual(largest, 1e-5, label)
          }
        }
      }
    }
  }

  /// Every float mini network of TestModels (MobileNet, EfficientNet, U-Net, SSD, float16 weights) gives one thread's outputs on two threads, within 1e-5
  /// relative (the generated float kernel adds short tiles' sums in another order).
  func testFloatNetworksGiveOneThreadsOutputsOnTwoThreads() throws {
    let entries = try TestModelManifest.load().models.filter {
      $0.kind == "network" && $0.name.contains("_mini") && ["float32", "float16_weights"].contains($0.quantization)
    }
    XCTAssertGreaterThanOrEqual(entries.count, 5)
    for entry in entries {
      let outputs = try [1, 2].map { try networkOutputs(entry, threadCount: $0) }
      XCTAssertEqual(outputs[0].count, outputs[1].count, entry.name)
      for (index, (one, two)) in zip(outputs[0], outputs[1]).enumerated() {
        XCTAssertEqual(one.count, two.count, entry.name)
        let largest = zip(one, two).map { abs($0 - $1) / max(abs($0), 1) }.max() ?? 0
        XCTAssertLessThanOrEqual(largest, 1e-5, "\(entry.name) output \(index)")
      }
    }
  }

  /// The float outputs of `entry` run on its committed inputs with `threadCount` threads.
  private func networkOutputs(_ entry: TestModelManifest.Entry, threadCount: Int) throws -> [[Float]] {
    let model = try TFLiteModel(contentsOfFile: TestModelManifest.directory.appendingPathComponent(entry.file).path)
    let executor = try ModelRunner(model: model, options: RunnerOptions(threadCount: threadCount)).primary
    let arrays = try entry.inputs.map { try TestModelManifest.array($0.file) }
    for (index, array) in arrays.enumerated() where executor.inputs[index].shape != array.shape {
      try executor.resizeInput(at: index, to: array.shape)
    }
    try executor.allocateTensors()
    for (tensor, array) in zip(executor.inputs, arrays) {
      let data = try XCTUnwrap(tensor.data, entry.name)
      array.bytes.withUnsafeBytes { data.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
    }
    try executor.invoke()
    return executor.outputs.map { tensor in
      tensor.type == .float32 ? Array(UnsafeBufferPointer(start: tensor.pointer(as: Float.self), count: tensor.elementCount)) : []
    }
  }
}
