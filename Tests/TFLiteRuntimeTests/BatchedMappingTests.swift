// Batched executable mappings (issue #12, load + first invoke): kernels a prepare reserves are
// generated then, and mapped together, every table's in one mapping, at the end of
// allocateTensors() (or at the first request of one of them) instead of one mmap + mprotect each
// mid-invoke. The tests check that the kernels of one batch all run, that the code budget counts
// the batch once and gets it back when its last kernel goes, that a refused batch leaves each
// kernel to be made at its first request (and tried again after a release), and that the
// dot-product tiles a GEMM plan reserves are all the tiles its product runs.

import TFLiteLinearAlgebra
import XCTest

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

@testable import TFLiteRuntime

/// Counts of generator calls per kernel, shared with the generator closures (called under the
/// process's kernel lock).
private final class GeneratorCalls: @unchecked Sendable {
  var counts: [Int]
  init(count: Int) { counts = Array(repeating: 0, count: count) }
}

final class BatchedMappingTests: XCTestCase {
  /// x86-64 `mov eax, value; ret`: a kernel that returns `value`.
  private static func returning(_ value: Int32) -> [UInt8] {
    [0xB8] + withUnsafeBytes(of: value.littleEndian, Array.init) + [0xC3]
  }

  /// Calls the kernel at `entry`, which returns an Int32.
  private static func call(_ entry: UnsafeRawPointer) -> Int32 {
    unsafeBitCast(entry, to: (@convention(c) () -> Int32).self)()
  }

  /// A table of `count` kernels where kernel i of table `table` returns 100 · table + i.
  private static func table(_ table: Int32, count: Int, calls: GeneratorCalls) -> LazyExecutableKernels {
    LazyExecutableKernels(count: count) { index in
      calls.counts[index] += 1
      return returning(100 * table + Int32(index))
    }
  }

  /// Kernels reserved in two tables are generated at once but mapped only by `mapReserved()`,
  /// all in one mapping of one page; each runs its own code, and asking again maps nothing.
  func testReservedKernelsOfSeveralTablesShareOneMappingAndRun() throws {
    #if arch(x86_64) && os(Linux)
      LazyExecutableKernels.mapReserved()
      let (firstCalls, secondCalls) = (GeneratorCalls(count: 3), GeneratorCalls(count: 2))
      let first = Self.table(1, count: 3, calls: firstCalls)
      let second = Self.table(2, count: 2, calls: secondCalls)
      let before = ExecutableCode.mappedNow
      first.reserve([0, 2])
      second.reserve([1])
      XCTAssertEqual(firstCalls.counts, [1, 0, 1], "reserving generates the code")
      XCTAssertEqual(secondCalls.counts, [0, 1])
      XCTAssertTrue(first.isReserved(0) && first.isReserved(2) && second.isReserved(1))
      XCTAssertFalse(first.isMade(0), "reserving maps nothing")
      XCTAssertEqual(ExecutableCode.mappedNow.mappings, before.mappings)
      LazyExecutableKernels.mapReserved()
      let after = ExecutableCode.mappedNow
      XCTAssertEqual(after.mappings, before.mappings + 1, "one mapping for the whole batch")
      XCTAssertEqual(after.bytes - before.bytes, Int(sysconf(Int32(_SC_PAGESIZE))), "three small kernels share a page")
      XCTAssertTrue(first.isMade(0) && first.isMade(2) && second.isMade(1))
      XCTAssertFalse(first.isReserved(0) || first.isMade(1) || second.isMade(0), "only the reserved kernels are made")
      let entries = try [first.entry(0), first.entry(2), second.entry(1)].map { try XCTUnwrap($0) }
      XCTAssertEqual(entries.map(Self.call), [100, 102, 201], "each kernel of the batch runs its own code")
      XCTAssertEqual(ExecutableCode.mappedNow.mappings, after.mappings, "asking for batched kernels maps nothing")
      // A kernel left out of the batch is made alone at its first request.
      XCTAssertEqual(Self.call(try XCTUnwrap(first.entry(1))), 101)
      XCTAssertEqual(ExecutableCode.mappedNow.mappings, after.mappings + 1)
      first.reserve([0, 1, 2])
      XCTAssertFalse(first.isReserved(0), "a made kernel is not reserved again")
      XCTAssertEqual(firstCalls.counts, [1, 1, 1], "every kernel generated once")
      XCTAssertEqual(secondCalls.counts, [0, 1])
    #endif
  }

  /// The first request of a reserved kernel maps the whole batch, of every table, at once.
  func testRequestOfAReservedKernelMapsTheWholeBatch() throws {
    #if arch(x86_64) && os(Linux)
      LazyExecutableKernels.mapReserved()
      let calls = GeneratorCalls(count: 4)
      let first = Self.table(3, count: 4, calls: calls)
      let second = Self.table(4, count: 4, calls: GeneratorCalls(count: 4))
      first.reserve([1, 3])
      second.reserve([0])
      let before = ExecutableCode.mappedNow
      XCTAssertEqual(Self.call(try XCTUnwrap(first.entry(3))), 303)
      XCTAssertEqual(ExecutableCode.mappedNow.mappings, before.mappings + 1)
      XCTAssertTrue(first.isMade(1) && second.isMade(0), "the rest of the batch was mapped with it")
      XCTAssertEqual(Self.call(try XCTUnwrap(second.entry(0))), 400)
      XCTAssertEqual(Self.call(try XCTUnwrap(first.entry(1))), 301)
      XCTAssertEqual(ExecutableCode.mappedNow.mappings, before.mappings + 1)
      XCTAssertEqual(calls.counts, [0, 1, 0, 1])
    #endif
  }

  /// The budget counts a batch as one mapping of whole pages and gets all of it back when the
  /// last kernel in it is released (here: when both tables go), which counts as a released mapping.
  func testBudgetCountsABatchOnceAndGetsItBack() throws {
    #if arch(x86_64) && os(Linux)
      LazyExecutableKernels.mapReserved()
      let before = ExecutableCode.mappedNow
      let releases = ExecutableCode.releasedMappings
      let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
      do {
        // Kernels of 3000 bytes: 64-byte aligned, five of them need four pages.
        let big = LazyExecutableKernels(count: 5) { [UInt8](repeating: 0x90, count: 2999 - $0) + [0xC3] }
        let small = Self.table(5, count: 1, calls: GeneratorCalls(count: 1))
        big.reserve(0..<5)
        small.reserve([0])
        LazyExecutableKernels.mapReserved()
        let (bigBytes, offsets) = (5 * 3008, 3008)
        XCTAssertEqual(ExecutableCode.mappedNow.mappings, before.mappings + 1)
        XCTAssertEqual(
          ExecutableCode.mappedNow.bytes - before.bytes, (bigBytes + 64 + pageSize - 1) / pageSize * pageSize,
          "whole pages, kernels 64-byte aligned")
        let entries = try (0..<5).map { try XCTUnwrap(big.entry($0)) }
        for (index, entry) in entries.enumerated().dropFirst() {
          XCTAssertEqual(entries[index - 1].distance(to: entry), offsets, "kernels follow each other in the batch's order")
        }
        for entry in entries { unsafeBitCast(entry, to: (@convention(c) () -> Void).self)() }
        XCTAssertEqual(Self.call(try XCTUnwrap(small.entry(0))), 500)
      }
      XCTAssertEqual(ExecutableCode.mappedNow.bytes, before.bytes, "the batch went with its last kernel")
      XCTAssertEqual(ExecutableCode.mappedNow.mappings, before.mappings)
      XCTAssertEqual(ExecutableCode.releasedMappings, releases + 1)
    #endif
  }

  /// A batch the budget refuses publishes nothing and drops its reservations: each kernel is then
  /// made at its first request, refused too while the budget is full, and made once a mapping has
  /// been released.
  func testRefusedBatchFallsBackToFirstRequestsAndIsRetriedAfterARelease() throws {
    #if arch(x86_64) && os(Linux)
      LazyExecutableKernels.mapReserved()
      let calls = GeneratorCalls(count: 3)
      let kernels = Self.table(6, count: 3, calls: calls)
      var filler = ExecutableCode(
        [UInt8](repeating: 0xC3, count: ExecutableCode.budgetBytes - ExecutableCode.mappedNow.bytes))
      XCTAssertNotNil(filler, "the rest of the budget must map")
      let full = ExecutableCode.mappedNow
      kernels.reserve([0, 1, 2])
      LazyExecutableKernels.mapReserved()
      XCTAssertEqual(ExecutableCode.mappedNow.bytes, full.bytes, "a refused batch books nothing")
      XCTAssertFalse((0..<3).contains { kernels.isMade($0) || kernels.isReserved($0) }, "nothing published or kept")
      XCTAssertNil(kernels.entry(1), "alone it is refused too while the budget is full")
      XCTAssertNil(kernels.entry(1), "and not tried again before a release")
      XCTAssertEqual(calls.counts, [1, 2, 1], "the refused kernel was generated again for its own mapping, once")
      filler = nil
      XCTAssertNil(filler)
      XCTAssertEqual(try (0..<3).map { Self.call(try XCTUnwrap(kernels.entry($0))) }, [600, 601, 602])
    #endif
  }

  /// For random products (rows, output channels, depth, 1–3 threads) on every dot-product level
  /// this machine runs, the tiles `reserveTiles(for:)` reserves on a family of its own are all the
  /// tiles the product calls: after `mapReserved()` the product maps nothing more, and its bytes are
  /// those of the process's own family.
  func testReservedDotProductTilesAreEveryTileAProductRuns() throws {
    var random = SeededGenerator(seed: 2611)
    let levels = DotProductISA.allCases.compactMap { GeneratedDotProductKernels.kernels(for: $0) }
    #if arch(x86_64) && os(Linux)
      XCTAssertFalse(levels.isEmpty || DotProductISA.supported.isEmpty, "this machine runs VNNI")
    #endif
    for kernels in levels {
      for trial in 0..<12 {
        let (rows, columns, depth) = (random.int(1...90), random.int(1...150), 4 * random.int(1...40))
        let threads = 1 + trial % 3
        let label = "\(kernels.isa) \(rows)x\(columns)x\(depth) \(threads) threads"
        let a = (0..<rows * depth).map { _ in UInt8.random(in: 0...255, using: &random) }
        let weights = (0..<depth * columns).map { _ in Int32.random(in: -128...127, using: &random) }
        let constants = IntegerChannelConstants(
          groups: 1, groupChannels: columns,
          multipliers: (0..<columns).map { _ in QuantizedMultiplier(Double.random(in: 1e-5...1e-3, using: &random)) },
          rounding: .doubleRounding, outputZeroPoint: -5, clamp: -128...127, bias: { Int32($0 * 37 - 500) })
        let epilogue = constants.epilogue(group: 0)
        let packed = try XCTUnwrap(
          weights.withUnsafeBufferPointer {
            QuadPanelMatrices(
              $0.baseAddress!, sourceStride: 0, count: 1, layout: .depthMajor(columns: columns), depth: depth,
              columns: columns)
          })
        let plan = IntegerGEMM.plan(rows: rows, columns: columns, paddedDepth: packed.paddedDepth, threadCount: threads)
        let scratchBytes = plan.scratchBytes(leftOperandPacks: false, threadCount: threads, lhs: UInt8.self, output: Int8.self)
        let scratch = UnsafeMutableRawPointer.allocate(byteCount: max(scratchBytes, 64), alignment: 64)
        defer { scratch.deallocate() }
        func product(_ kernel: DotProductMicroKernel<Int8>) -> [Int8] {
          var output = [Int8](repeating: 0x55, count: rows * columns)
          a.withUnsafeBufferPointer { a in
            output.withUnsafeMutableBufferPointer { output in
              GEMMDriver.multiply(
                plan: plan, lhs: RowMajorLeftOperand(base: a.baseAddress!, rowStride: depth), rhs: packed.matrix(0),
                output: output.baseAddress!, outputStride: columns, kernel: kernel, threadCount: threads, scratch: scratch)
            }
          }
          return output
        }
        let expected = withExtendedLifetime(constants) {
          product(DotProductMicroKernel<Int8>(epilogue: epilogue, kernels: kernels))
        }
        let family = try XCTUnwrap(kernels.unsharedTiles(.int8), label)
        // Half the trials write a partial last panel through a store-masking family where the level has one.
        let masked =
          kernels.masksStores && trial % 2 == 0 && columns % 16 != 0
          ? try XCTUnwrap(kernels.unsharedTiles(.int8, masksStore: true), label) : nil
        family.reserveTiles(for: plan, masksPartialPanel: masked != nil)
        masked?.reservePartialPanelTiles(for: plan)
        LazyExecutableKernels.mapReserved()
        let mapped = ExecutableCode.mappedNow
        let bytes = withExtendedLifetime((constants, family, masked)) {
          product(
            DotProductMicroKernel<Int8>(
              epilogue: epilogue, tiles: Unmanaged.passUnretained(family),
              maskedTiles: masked.map { Unmanaged.passUnretained($0) }))
        }
        XCTAssertEqual(ExecutableCode.mappedNow.mappings, mapped.mappings, "\(label): a tile it ran was not reserved")
        XCTAssertEqual(bytes, expected, label)
      }
    }
  }

  /// For random float products (rows, columns with and without a partial last panel, depths
  /// split into blocks or not, 1–3 threads) on every float level this machine runs, the kernels
  /// `reserve(for:)` reserves on a set of its own are all the kernels the product calls: after
  /// `mapReserved()` it maps nothing more, and its floats are those of the process's own kernels.
  func testReservedFloatKernelsAreEveryKernelAProductRuns() throws {
    var random = SeededGenerator(seed: 2612)
    let levels = GeneratedKernelISA.allCases.filter { GeneratedFloatKernels.kernels(for: $0) != nil }
    #if arch(x86_64) && os(Linux)
      XCTAssertFalse(levels.isEmpty, "an x86-64 test machine runs at least AVX2")
    #endif
    for isa in levels {
      for trial in 0..<10 {
        let (rows, columns, depth) = (random.int(1...120), random.int(1...70), trial % 3 == 0 ? 300 : random.int(1...40))
        let threads = 1 + trial % 3
        let label = "\(isa) \(rows)x\(columns)x\(depth) \(threads) threads"
        let a = random.floats(rows * depth)
        let b = random.floats(depth * columns)
        let packed = b.withUnsafeBufferPointer {
          PackedMatrices($0.baseAddress!, sourceStride: 0, count: 1, layout: .depthMajor(columns: columns), depth: depth, columns: columns)
        }
        let paddedBias = random.floats(columns).withUnsafeBufferPointer {
          PanelPacking.paddedBias($0.baseAddress!, groups: 1, columns: columns)
        }
        func product(_ generated: GeneratedFloatKernels) -> [Float] {
          floatGEMMProduct(
            a: a, rows: rows, depth: depth, packed: packed, columns: columns, paddedBias: paddedBias, activation: .relu6,
            threads: threads, generated: generated
          ).values
        }
        let expected = product(try XCTUnwrap(GeneratedFloatKernels.kernels(for: isa)))
        let kernels = try XCTUnwrap(GeneratedFloatKernels.unshared(isa))
        kernels.reserve(for: GEMMPlan(rows: rows, columns: columns, depth: depth, threadCount: threads))
        LazyExecutableKernels.mapReserved()
        let mapped = ExecutableCode.mappedNow
        XCTAssertEqual(product(kernels), expected, label)
        XCTAssertEqual(ExecutableCode.mappedNow.mappings, mapped.mappings, "\(label): a kernel it ran was not reserved")
      }
    }
  }

  /// For random float depthwise convolutions (16-channel blocks with and without an eight-channel
  /// tail, 3×3, 5×5 and other filters, multipliers) on every set this machine runs, the kinds
  /// `FloatDepthwiseConvolution.reserveKernels` reserves on a set of its own are every kind the
  /// convolution runs: after `mapReserved()` it maps nothing more, and its floats are those of the
  /// process's own set.
  func testReservedDepthwiseKindsAreEveryKindAConvolutionRuns() throws {
    var random = SeededGenerator(seed: 2613)
    let sets = GeneratedDepthwiseKernels.runnableSets
    #if arch(x86_64) && os(Linux)
      XCTAssertFalse(sets.isEmpty, "an x86-64 test machine runs at least AVX2")
    #endif
    for processSet in sets {
      for trial in 0..<12 {
        let side = [3, 5][trial % 2]
        let filter = trial % 3 == 2 ? (random.int(1...4), random.int(1...5)) : (side, side)
        guard
          let test = RandomDepthwiseCase(
            random: &random, trial: trial, batch: 1, height: random.int(3...9), width: random.int(3...13),
            channels: [16, 24, 40, 8, 48, 17][trial % 6], multiplier: trial % 4 == 3 ? 2 : 1, filterHeight: filter.0,
            filterWidth: filter.1)
        else { continue }
        let label = "\(processSet.isa) trial \(trial) \(test.shape)"
        let plan = FloatDepthwisePlan(test.shape)
        let scratch = UnsafeMutableRawPointer.allocate(
          byteCount: max(FloatDepthwiseConvolution.scratchBytes(test.shape), 64), alignment: 64)
        defer { scratch.deallocate() }
        func convolved(_ kernels: GeneratedDepthwiseKernels) -> [UInt32] {
          var output = [Float](repeating: .nan, count: test.expected.values.count)
          test.input.withUnsafeBufferPointer { input in
            test.filter.withUnsafeBufferPointer { filter in
              (test.bias ?? []).withUnsafeBufferPointer { bias in
                output.withUnsafeMutableBufferPointer { output in
                  FloatDepthwiseConvolution.run(
                    test.shape, input: input.baseAddress!, filter: filter.baseAddress!,
                    bias: test.bias == nil ? nil : bias.baseAddress, activation: test.activation.range,
                    output: output.baseAddress!, threadCount: 1, scratch: scratch, generatedKernels: kernels, plan: plan)
                }
              }
            }
          }
          return output.map(\.bitPattern)
        }
        let expected = convolved(processSet)
        let kernels = processSet.unshared()
        LazyExecutableKernels.mapReserved()
        let before = ExecutableCode.mappedNow
        FloatDepthwiseConvolution.reserveKernels(test.shape, plan: plan, on: kernels)
        LazyExecutableKernels.mapReserved()
        let mapped = ExecutableCode.mappedNow
        XCTAssertEqual(mapped.mappings, before.mappings + 1, "\(label): the reserved kinds are mapped together")
        XCTAssertEqual(convolved(kernels), expected, label)
        XCTAssertEqual(ExecutableCode.mappedNow.mappings, mapped.mappings, "\(label): a kind it ran was not reserved")
      }
    }
  }

  /// The four-tap depthwise kernels a prepare asks for are generated and reserved, not mapped: two
  /// shapes of a set join another table's reserved kernel in one mapping at `mapReserved()`, and
  /// asking for a known shape again maps nothing more.
  func testFourTapDepthwiseKernelsJoinTheBatch() throws {
    #if arch(x86_64) && os(Linux)
      guard GeneratedQuadTapDepthwiseKernels.supported != nil else {
        // Only CPUs without AVX-512, VNNI or VBMI (or with generated code refused) lack them.
        XCTAssertFalse(
          GeneratedKernelISA.supported == .avx512 && DotProductISA.supported.contains(.avx512VNNI)
            && ProcessorFeatures.hasBytePermutes)
        return
      }
      LazyExecutableKernels.mapReserved()
      let set = GeneratedQuadTapDepthwiseKernels()
      let shapes = [
        QuadTapDepthwiseKernelGenerator.Shape(filterRows: 3, quadsPerRow: 1, stride: 1, output: .int8, correctsWeights: false),
        QuadTapDepthwiseKernelGenerator.Shape(filterRows: 5, quadsPerRow: 2, stride: 2, output: .uint8, correctsWeights: true),
      ]
      let other = Self.table(5, count: 1, calls: GeneratorCalls(count: 1))
      let before = ExecutableCode.mappedNow
      let kernels = shapes.map { set.kernel($0) }
      other.reserve([0])
      XCTAssertEqual(ExecutableCode.mappedNow.mappings, before.mappings, "asking at prepare maps nothing")
      LazyExecutableKernels.mapReserved()
      let after = ExecutableCode.mappedNow
      XCTAssertEqual(after.mappings, before.mappings + 1, "one mapping for both shapes and the other table")
      XCTAssertTrue(other.isMade(0))
      XCTAssertTrue(kernels.allSatisfy(\.isMapped))
      XCTAssertEqual(Self.call(try XCTUnwrap(other.entry(0))), 500)
      XCTAssertTrue(set.kernel(shapes[0]).isMapped)
      XCTAssertEqual(ExecutableCode.mappedNow.mappings, after.mappings, "a known shape is neither generated nor mapped again")
    #endif
  }

  /// The dot-product emitter's constant argument offsets (which spare every 8-bit load the
  /// run-time metadata of a key path per field) are the structure's real layout.
  func testDotProductArgumentOffsetsMatchTheLayout() {
    typealias Arguments = DotProductKernelArguments
    let layout: [(Arguments.Field, PartialKeyPath<Arguments>)] = [
      (.a, \.a), (.aRowBytes, \.aRowBytes), (.b, \.b), (.steps, \.steps), (.c, \.c), (.cRowBytes, \.cRowBytes),
      (.table, \.table), (.lanes, \.lanes), (.signFlip, \.signFlip), (.storeMask, \.storeMask),
      (.panelBytes, \.panelBytes),
    ]
    XCTAssertEqual(layout.count, Arguments.Field.allCases.count, "every field is checked")
    for (field, keyPath) in layout {
      XCTAssertEqual(Int(field.rawValue), MemoryLayout<Arguments>.offset(of: keyPath), "\(field)")
    }
  }
}
