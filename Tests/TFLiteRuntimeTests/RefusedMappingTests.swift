import XCTest

import TFLiteLinearAlgebra
@testable import TFLiteRuntime

/// A kernel generated on first use whose mapping is refused after the start-up probe (memory
/// exhausted, or the 16 MiB `ExecutableCode.budgetBytes` reached) never stops the process: the
/// float GEMM, the dot-product tiles, the element-wise and column-sum kernels and the depthwise
/// routes fall back (to the Swift kernels, or to the dot-product family's one-row tile), so
/// networks give LiteRT's bytes (8-bit) or stay within their tolerance (float). The refusal is
/// real: the tests fill what is left of the budget with one mapping, so every later mapping is
/// refused exactly as an exhausted budget refuses it, and release it afterwards (refused kernels
/// are tried again once a mapping has been released, so later tests get their generated kernels).
final class RefusedMappingTests: XCTestCase {
  /// Runs `body` while every new executable mapping of the process is refused.
  private func withMappingsRefused<Result>(_ body: () throws -> Result) throws -> Result {
    let room = ExecutableCode.budgetBytes - ExecutableCode.mappedNow.bytes
    // On platforms without generated code nothing is ever mapped, so nothing needs refusing.
    let filler = room > 0 ? ExecutableCode([UInt8](repeating: 0xC3, count: room)) : nil
    #if arch(x86_64) && os(Linux)
      XCTAssertNotNil(filler, "the rest of the budget must map")
    #endif
    XCTAssertNil(ExecutableCode([0xC3]), "with the budget full a mapping is refused")
    let before = ExecutableCode.mappedNow
    let result = try withExtendedLifetime(filler) { try body() }
    XCTAssertEqual(ExecutableCode.mappedNow.bytes, before.bytes, "nothing was mapped while refused")
    return result
  }

  /// Products through the driver on float kernels none of whose heights exist yet, every
  /// instruction set this machine runs: with mappings refused every tile (whole panels, masked
  /// edge panels, the scratch tile) runs the Swift kernel and gives its exact floats, within the
  /// summation bound of the double-precision reference; once the refusal is over the same kernels
  /// are generated and used.
  func testFloatGEMMRunsTheSwiftTilesWhenItsKernelsAreRefused() throws {
    var random = SeededGenerator(seed: 1201)
    let levels = GeneratedKernelISA.allCases.filter { GeneratedFloatKernels.kernels(for: $0) != nil }
    #if arch(x86_64) && os(Linux)
      XCTAssertFalse(levels.isEmpty, "an x86-64 test machine runs at least AVX2")
    #endif
    for isa in levels {
      for trial in 0..<6 {
        // A set of its own per trial: none of its kernels exists when the refusal starts.
        let kernels = try XCTUnwrap(GeneratedFloatKernels.unshared(isa))
        let (rows, columns, depth) = (random.int(1...30), random.int(17...50), trial == 0 ? 300 : random.int(1...40))
        let a = random.floats(rows * depth)
        let b = random.floats(depth * columns)
        let bias = random.floats(columns)
        let activation = testActivations[trial % 4].range
        let expected = referenceMatrixProduct(
          rows: rows, columns: columns, depth: depth, a: { a[$0 * depth + $1] }, b: { b[$0 * columns + $1] }, bias: bias,
          lower: activation.lower, upper: activation.upper)
        let packed = b.withUnsafeBufferPointer {
          PackedMatrices($0.baseAddress!, sourceStride: 0, count: 1, layout: .depthMajor(columns: columns), depth: depth, columns: columns)
        }
        let paddedBias = bias.withUnsafeBufferPointer { PanelPacking.paddedBias($0.baseAddress!, groups: 1, columns: columns) }
        func product(_ generated: GeneratedFloatKernels?, threads: Int) -> [Float] {
          floatGEMMProduct(
            a: a, rows: rows, depth: depth, packed: packed, columns: columns, paddedBias: paddedBias,
            activation: activation, threads: threads, generated: generated
          ).values
        }
        let label = "\(isa) trial \(trial) \(rows)x\(depth)x\(columns)"
        let swift = [product(nil, threads: 1), product(nil, threads: 2)]
        let refused = try withMappingsRefused { [product(kernels, threads: 1), product(kernels, threads: 2)] }
        XCTAssertEqual(refused, swift, "\(label): refused kernels must leave the Swift tiles' floats (1 and 2 threads)")
        XCTAssertFalse(kernels.isGenerated(rows: 1), label)
        assertMatches(refused[0], expected, relative: Double(depth + 2) * Double(Float.ulpOfOne), absolute: 1e-30, label)
        let generated = product(kernels, threads: 1)
        assertMatches(generated, expected, relative: Double(depth + 2) * Double(Float.ulpOfOne), absolute: 1e-30, label)
        XCTAssertTrue((1...kernels.maximumRows).contains { kernels.isGenerated(rows: $0) }, "\(label): made after the refusal")
      }
    }
  }

  /// Dot-product families whose tall and multi-panel tiles do not exist yet (only the one-row
  /// one-panel tile, mapped with the family): with mappings refused, every tile shape of every
  /// family (Int32 sums; int8 and uint8 outputs; int8 A read in place) runs on the one-row tile, a
  /// row and a panel per call, and gives the bytes of the process's own family's tile of that shape.
  func testDotProductTilesRunOnTheOneRowTileWhenTheirOwnAreRefused() throws {
    var random = SeededGenerator(seed: 1202)
    let levels = DotProductISA.allCases.compactMap { GeneratedDotProductKernels.kernels(for: $0) }
    for kernels in levels {
      var families: [(output: RequantizedOutput?, flipsSign: Bool)] = [(nil, false), (.int8, false), (.uint8, false)]
      if kernels.flipsSigns { families += [(.int8, true), (.uint8, true)] }
      for (output, flipsSign) in families {
        let shared = try XCTUnwrap(kernels.tiles(output, flipsSign: flipsSign))
        let unshared = try XCTUnwrap(kernels.unsharedTiles(output, flipsSign: flipsSign))
        for columns in 1...kernels.maximumColumns {
          let rows = kernels.maximumRows(columns: columns)
          let steps = random.int(1...12)
          let (lda, panelBytes, ldc) = (4 * steps + random.int(0...3), 64 * steps + 64 * random.int(0...1), 16 * columns + 3)
          let a = (0..<rows * lda).map { _ in UInt8.random(in: 0...255, using: &random) }
          let b = (0..<columns * panelBytes).map { _ in Int8.random(in: -128...127, using: &random) }
          let label = "\(kernels.isa) \(output.map { "\($0)" } ?? "sums") flips \(flipsSign) \(rows)x\(columns) panels"
          if output == nil {
            func sums(_ tiles: DotProductTiles) -> [Int32] {
              var c = [Int32](repeating: 0x5A5A_5A5A, count: rows * ldc)
              c.withUnsafeMutableBufferPointer { c in
                tiles.tileSums(
                  a: a, lda: lda, rows: rows, b: b, steps: steps, c: c.baseAddress!, ldc: ldc, columns: columns,
                  panelBytes: panelBytes)
              }
              return c
            }
            let expected = sums(shared)
            XCTAssertEqual(try withMappingsRefused { sums(unshared) }, expected, label)
            continue
          }
          let biases = (0..<16 * columns).map { _ in Int32.random(in: -100_000...100_000, using: &random) }
          let constants = IntegerChannelConstants(
            groups: 1, groupChannels: 16 * columns,
            multipliers: (0..<16 * columns).map { _ in QuantizedMultiplier(Double.random(in: 1e-5...1e-3, using: &random)) },
            rounding: .doubleRounding, outputZeroPoint: output == .int8 ? -3 : 120,
            clamp: output == .int8 ? -128...127 : 0...255
          ) { biases[$0] }
          // The epilogue points into `constants`' storage: keep it alive while the tiles run.
          defer { withExtendedLifetime(constants) {} }
          let epilogue = constants.epilogue(group: 0)
          func requantized<Output: QuantizedInteger>(_ tiles: DotProductTiles, _: Output.Type) -> [Output] {
            var c = [Output](repeating: Output(truncatingIfNeeded: 0x3C), count: rows * ldc)
            c.withUnsafeMutableBufferPointer { c in
              tiles.requantizedTile(
                a: a, lda: lda, rows: rows, b: b, steps: steps, table: epilogue.table(channel: 0),
                lanes: epilogue.lanes, c: c.baseAddress!, ldc: ldc, columns: columns, panelBytes: panelBytes)
            }
            return c
          }
          if output == .int8 {
            let expected = requantized(shared, Int8.self)
            XCTAssertEqual(try withMappingsRefused { requantized(unshared, Int8.self) }, expected, label)
          } else {
            let expected = requantized(shared, UInt8.self)
            XCTAssertEqual(try withMappingsRefused { requantized(unshared, UInt8.self) }, expected, label)
          }
        }
      }
    }
  }

  /// The element-wise and column-sum kernels report a refused kernel instead of running: nothing
  /// is written, and the element-wise plan hands every element back to the Swift map.
  func testElementwiseAndColumnSumKernelsReportARefusedMapping() throws {
    for isa in GeneratedKernelISA.allCases {
      guard let binary = GeneratedQuantizedBinaryKernels.unshared(isa),
        let columnSums = GeneratedColumnSumKernels.unshared(isa)
      else { continue }
      let constants = QuantizedBinaryConstants(
        multiplyingWith: 3, 5, multiplier: QuantizedMultiplier(0.01), outputZeroPoint: 9, clamp: 0...255,
        rounding: .doubleRounding)
      let input = [UInt8](repeating: 7, count: 64)
      var output = [UInt8](repeating: 0xA5, count: 64)
      var sums = [Int32](repeating: 0x5A5A_5A5A, count: 32)
      let ran = try withMappingsRefused {
        input.withUnsafeBytes { source in
          output.withUnsafeMutableBytes { destination in
            sums.withUnsafeMutableBufferPointer { sums in
              (
                binary.run(
                  constants, output: .uint8, lhs: source.baseAddress!, rhs: source.baseAddress!,
                  output: destination.baseAddress!, blockCount: 4),
                columnSums.run(.uint8, from: source.baseAddress!, rowBytes: 32, rows: 2, into: sums.baseAddress!, blockCount: 2)
              )
            }
          }
        }
      }
      XCTAssertFalse(ran.0, "\(isa): a refused binary kernel must say so")
      XCTAssertFalse(ran.1, "\(isa): a refused column sum kernel must say so")
      XCTAssertTrue(output.allSatisfy { $0 == 0xA5 }, "\(isa): nothing written")
      XCTAssertTrue(sums.allSatisfy { $0 == 0x5A5A_5A5A }, "\(isa): nothing summed")
    }
  }

  /// The dynamic-range quantization kernels report a refused mapping instead of running (nothing
  /// read into a range, nothing written), and the quantizer then gives the Swift code's bytes.
  func testHybridQuantizationKernelsReportARefusedMappingAndTheSwiftCodeRuns() throws {
    let values = (0..<53).map { Float($0 % 11) * 0.37 - 1.5 }
    for isa in GeneratedKernelISA.allCases {
      guard let kernels = GeneratedHybridKernels.unshared(isa) else { continue }
      var output = [Int8](repeating: 0x5A, count: 64)
      var swift = output
      let outcome = try withMappingsRefused {
        values.withUnsafeBufferPointer { input in
          output.withUnsafeMutableBufferPointer { output in
            (
              kernels.quantize(
                HybridQuantizeKernelArguments(
                  input: input.baseAddress!, output: UnsafeMutableRawPointer(output.baseAddress!), blockCount: 3,
                  inverseScale: 10, lowest: -128, highest: 127, zeroPoint: 0, unsigned: false)),
              kernels.range(input.baseAddress!, blockCount: 3, first: input[0], merge: HybridInputQuantization.merged),
              HybridInputQuantization.asymmetric.quantize(
                input.baseAddress!, count: values.count, into: output.baseAddress!, unsigned: true,
                generated: Unmanaged.passUnretained(kernels))
            )
          }
        }
      }
      XCTAssertFalse(outcome.0, "\(isa): a refused quantizer kernel must say so")
      XCTAssertNil(outcome.1, "\(isa): a refused range kernel must say so")
      let expected = values.withUnsafeBufferPointer { input in
        swift.withUnsafeMutableBufferPointer {
          HybridInputQuantization.asymmetric.quantize(input.baseAddress!, count: values.count, into: $0.baseAddress!, unsigned: true)
        }
      }
      XCTAssertEqual(output, swift, "\(isa): the Swift code's bytes")
      XCTAssertEqual(outcome.2.scale, expected.scale, "\(isa)")
      XCTAssertEqual(outcome.2.zeroPoint, expected.zeroPoint, "\(isa)")
    }
  }

  /// Every TestModels network (float, int8, uint8 and legacy uint8, hybrid; one and two threads)
  /// prepared and run in new runners while every mapping is refused gives LiteRT's outputs: the
  /// bytes for 8-bit networks, the manifest's tolerance for float ones. Families the runtime maps
  /// up front are asked for first (as any earlier model would have), so only kernels made on first
  /// use meet the refusal; run alone, this test meets it for every such kernel the networks use.
  func testNetworksGiveLiteRTsOutputsWithMappingsRefused() throws {
    let entries = try TestModelManifest.load().models.filter { $0.kind == "network" && !$0.file.hasPrefix("mediapipe/") }
    XCTAssertGreaterThanOrEqual(entries.count, 28)
    // The families mapped whole on their first request, kept for the process (nil for good when
    // that first request is refused), as any earlier model would have made them.
    for isa in GeneratedKernelISA.allCases {
      _ = GeneratedRequantizationKernels.kernels(for: isa)
      _ = GeneratedPreluKernel.kernels(for: isa)
    }
    _ = GeneratedLogisticKernels.preferred
    _ = GeneratedByteTableKernel.runnable
    _ = GeneratedPairTableKernels.runnable
    _ = GeneratedQuadTapDepthwiseKernels.supported
    let outcomes = try withMappingsRefused {
      entries.enumerated().map { index, entry in Conformance.run(entry, threadCount: 1 + index % 2) }
    }
    for outcome in outcomes {
      XCTAssertNil(outcome.failure, "\(outcome.entry.name): \(outcome.failure ?? "")")
      XCTAssertEqual(outcome.mismatchCount, 0, "\(outcome.entry.name): \(outcome.firstMismatch ?? "")")
    }
  }
}
