import XCTest

import TFLiteLinearAlgebra
@testable import TFLiteRuntime

/// The run-time generated float GEMM kernels (AVX2+FMA, AVX-512F) against the double-precision
/// reference and the Swift kernel, for every instruction set this machine runs.
///
/// Tolerance: the generated kernels fuse multiply and add and split short tiles' depth over
/// several accumulators, so they round differently from the Swift kernel. Both must stay within
/// the bound of recursive float summation: |result − exact| ≤ (K + 2) · 2⁻²³ · (Σ|a·b| + |bias|).
final class GeneratedKernelTests: XCTestCase {
  /// The instruction sets to test: every one this machine runs (the probe itself is checked below).
  private var runnableISAs: [GeneratedKernelISA] {
    GeneratedKernelISA.allCases.filter { GeneratedFloatKernels.kernels(for: $0) != nil }
  }

  private func tolerance(depth: Int) -> Double { Double(depth + 2) * Double(Float.ulpOfOne) }

  /// The CPUID/XGETBV probe agrees with the flags Linux reports (which also reflect what the OS
  /// enabled), so the tests below run exactly the instruction sets this machine has.
  func testProbeAgreesWithProcCpuinfo() throws {
    #if os(Linux) && arch(x86_64)
      let text = try String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)
      let flagsLine = try XCTUnwrap(text.split(separator: "\n").first { $0.hasPrefix("flags") })
      let flags = Set(flagsLine.split(separator: " ").map(String.init))
      let expected: GeneratedKernelISA? =
        flags.isSuperset(of: ["avx512f", "avx2", "fma"]) ? .avx512 : flags.isSuperset(of: ["avx2", "fma"]) ? .avx2 : nil
      XCTAssertEqual(GeneratedKernelISA.supported, expected)
      XCTAssertEqual(runnableISAs.last, expected)
    #else
      XCTAssertNil(GeneratedKernelISA.supported, "code generation is only for x86-64")
    #endif
  }

  /// Whole products through the driver: random M, N, K (edge tiles in both directions, depth over
  /// several blocks so later blocks accumulate from C), strided and transposed A, output rows wider
  /// than N, bias or none, every clamp and none at all, one and two threads.
  func testRandomProductsMatchReferenceAndSwiftKernel() {
    var random = SeededGenerator(seed: 12)
    for isa in runnableISAs {
      let kernels = GeneratedFloatKernels.kernels(for: isa)
      for trial in 0..<50 {
        let rows = random.int(1...45)
        let columns = random.int(1...70)
        let depth = trial % 8 == 0 ? random.int(257...700) : random.int(0...40)
        let transposedA = random.bool()
        let lhsStride = transposedA ? rows : depth + random.int(0...5)
        let outputStride = columns + random.int(0...3)
        let a = random.floats(transposedA ? depth * rows : rows * lhsStride)
        let b = random.floats(depth * columns)
        let bias = random.bool() ? random.floats(columns) : nil
        let activation: FloatClampRange? = trial % 5 == 4 ? nil : testActivations[trial % 4].range
        let expected = referenceMatrixProduct(
          rows: rows, columns: columns, depth: depth, a: { i, k in transposedA ? a[k * rows + i] : a[i * lhsStride + k] },
          b: { k, j in b[k * columns + j] }, bias: bias, lower: activation?.lower ?? -.infinity,
          upper: activation?.upper ?? .infinity)
        let packed = b.withUnsafeBufferPointer {
          PackedMatrices($0.baseAddress!, sourceStride: 0, count: 1, layout: .depthMajor(columns: columns), depth: depth, columns: columns)
        }
        let paddedBias = bias.map { $0.withUnsafeBufferPointer { PanelPacking.paddedBias($0.baseAddress!, groups: 1, columns: columns) } }
        var results: [[Float]] = []
        for (threads, generated) in [(1, kernels), (2, kernels), (1, nil)] {
          let plan = GEMMPlan(rows: rows, columns: columns, depth: depth, threadCount: threads)
          let memory = TestMemory()
          let output = memory.output(rows * outputStride)
          let scratch = memory.scratch(bytes: plan.scratchBytes(leftOperandPacks: transposedA, threadCount: threads))
          let epilogue = FloatEpilogue(bias: memory.copy(paddedBias).map { UnsafePointer($0) }, activation: activation)
          let lhsBase = memory.copy(a)
          if transposedA {
            FloatGEMM.multiply(
              plan: plan, lhs: TransposedLeftOperand(base: lhsBase, depthStride: rows), rhs: packed.matrix(0), output: output,
              outputStride: outputStride, epilogue: epilogue, threadCount: threads, scratch: scratch, generatedKernels: generated)
          } else {
            FloatGEMM.multiply(
              plan: plan, lhs: RowMajorLeftOperand(base: lhsBase, rowStride: lhsStride), rhs: packed.matrix(0), output: output,
              outputStride: outputStride, epilogue: epilogue, threadCount: threads, scratch: scratch, generatedKernels: generated)
          }
          let all = floats(output, rows * outputStride)
          // Columns between N and the row stride are never written.
          for row in 0..<rows where outputStride > columns {
            XCTAssertTrue(all[(row * outputStride + columns)..<((row + 1) * outputStride)].allSatisfy(\.isNaN), "\(isa) wrote past N")
          }
          let product = (0..<rows).flatMap { all[($0 * outputStride)..<($0 * outputStride + columns)] }
          let name = "\(isa) trial \(trial) \(rows)x\(depth)x\(columns) threads \(threads) generated \(generated != nil)"
          assertMatches(product, expected, relative: tolerance(depth: depth), absolute: 1e-30, name)
          results.append(product)
        }
        // The generated and the Swift kernel agree within twice the bound (each is within it).
        for (index, (value, swift)) in zip(results[0], results[2]).enumerated() {
          let allowed = 2 * tolerance(depth: depth) * expected[index].magnitude + 1e-30
          XCTAssertLessThanOrEqual(abs(Double(value) - Double(swift)), allowed, "\(isa) trial \(trial) vs Swift, element \(index)")
        }
      }
    }
  }

  /// Each kernel height directly, whole and column-masked: depths around the unroll of four,
  /// starting from the bias, zeros or C, several tiles per call; nothing outside the tiles' rows ×
  /// real columns is written.
  func testEveryKernelHeightWritesOnlyItsTiles() {
    var random = SeededGenerator(seed: 7)
    for isa in runnableISAs {
      guard let kernels = GeneratedFloatKernels.kernels(for: isa) else { continue }
      for rowCount in 0...(2 * kernels.maximumRows + 1) {
        for (depth, columns) in zip([0, 1, 3, 4, 5, 8, 13, 4, 7, 2], [16, 16, 16, 5, 16, 1, 9, 8, 15, 12]) {
          let lda = depth + 3
          let ldc = 16 + 5
          let a = random.floats(max(rowCount * lda, 1))
          let b = random.floats(depth * 16)
          let bias = random.floats(16)
          let previous = random.floats(rowCount * ldc)
          for (accumulates, start) in [(false, Optional(bias)), (false, nil), (true, nil)] {
            // Guard zones of NaN before and after C, and in the 5 columns of each row past the tile.
            let guardCount = 64
            var buffer = [Float](repeating: .nan, count: guardCount + rowCount * ldc + guardCount)
            for row in 0..<rowCount {
              for column in 0..<columns { buffer[guardCount + row * ldc + column] = previous[row * ldc + column] }
            }
            a.withUnsafeBufferPointer { aBuffer in
              b.withUnsafeBufferPointer { bBuffer in
                (start ?? []).withUnsafeBufferPointer { startBuffer in
                  buffer.withUnsafeMutableBufferPointer { c in
                    XCTAssertTrue(kernels.run(
                      a: aBuffer.baseAddress!, lda: lda, rowCount: rowCount, b: bBuffer.baseAddress ?? UnsafePointer(aBuffer.baseAddress!),
                      depth: depth, c: c.baseAddress! + guardCount, ldc: ldc, start: start == nil ? nil : startBuffer.baseAddress,
                      accumulates: accumulates, clamp: .reluMinusOneToOne, columns: columns))
                  }
                }
              }
            }
            let name =
              "\(isa) rows \(rowCount) depth \(depth) columns \(columns) accumulates \(accumulates) bias \(start != nil)"
            XCTAssertTrue(buffer[0..<guardCount].allSatisfy(\.isNaN), "\(name): wrote before C")
            XCTAssertTrue(buffer[(guardCount + rowCount * ldc)...].allSatisfy(\.isNaN), "\(name): wrote after C")
            for row in 0..<rowCount {
              XCTAssertTrue(
                buffer[(guardCount + row * ldc + columns)..<(guardCount + (row + 1) * ldc)].allSatisfy(\.isNaN),
                "\(name): wrote past column \(columns) of row \(row)")
              for column in 0..<columns {
                var sum = accumulates ? Double(previous[row * ldc + column]) : Double(start?[column] ?? 0)
                var magnitude = abs(sum)
                for k in 0..<depth {
                  let product = Double(a[row * lda + k]) * Double(b[k * 16 + column])
                  sum += product
                  magnitude += abs(product)
                }
                let expected = min(max(sum, -1), 1)
                let value = Double(buffer[guardCount + row * ldc + column])
                XCTAssertLessThanOrEqual(
                  abs(value - expected), tolerance(depth: depth) * magnitude + 1e-30, "\(name): row \(row) column \(column)")
              }
            }
          }
        }
      }
    }
  }

  /// Depth segments (a convolution's filter rows in one call): 1–4 segments, each `depth` steps of
  /// A `aSegmentStride` floats below the previous one and of the panel `bSegmentStride` floats on
  /// (gaps of skipped panel steps between them), every height, whole and column-masked panels,
  /// against a double-precision sum of every segment; nothing past the real columns is written.
  func testDepthSegmentsSumEverySegmentOnce() {
    var random = SeededGenerator(seed: 29)
    for isa in runnableISAs {
      guard let kernels = GeneratedFloatKernels.kernels(for: isa) else { continue }
      for trial in 0..<60 {
        let rowCount = random.int(1...(2 * kernels.maximumRows + 1))
        let segments = random.int(1...4)
        let depth = random.int(0...13)
        let columns = trial % 3 == 0 ? random.int(1...15) : 16
        let lda = random.int(1...3) * max(depth, 1) + random.int(0...2)
        let aSegmentStride = rowCount * lda + random.int(0...7)
        let bSegmentStride = (depth + random.int(0...3)) * 16
        let ldc = 16 + 3
        let a = random.floats(max(segments * aSegmentStride, 1))
        let b = random.floats(max(segments * bSegmentStride, 16))
        let bias = random.floats(16)
        var c = [Float](repeating: .nan, count: rowCount * ldc)
        a.withUnsafeBufferPointer { aBuffer in
          b.withUnsafeBufferPointer { bBuffer in
            bias.withUnsafeBufferPointer { biasBuffer in
              c.withUnsafeMutableBufferPointer { cBuffer in
                XCTAssertTrue(kernels.run(
                  a: aBuffer.baseAddress!, lda: lda, rowCount: rowCount, b: bBuffer.baseAddress!, depth: depth,
                  c: cBuffer.baseAddress!, ldc: ldc, start: biasBuffer.baseAddress, accumulates: false, clamp: .relu6,
                  columns: columns, segments: segments, aSegmentStride: aSegmentStride, bSegmentStride: bSegmentStride))
              }
            }
          }
        }
        let name = "\(isa) trial \(trial): rows \(rowCount) segments \(segments) depth \(depth) columns \(columns)"
        for row in 0..<rowCount {
          XCTAssertTrue(c[(row * ldc + columns)..<((row + 1) * ldc)].allSatisfy(\.isNaN), "\(name): wrote past column \(columns)")
          for column in 0..<columns {
            var sum = Double(bias[column])
            var magnitude = abs(sum)
            for segment in 0..<segments {
              for k in 0..<depth {
                let product =
                  Double(a[segment * aSegmentStride + row * lda + k]) * Double(b[segment * bSegmentStride + k * 16 + column])
                sum += product
                magnitude += abs(product)
              }
            }
            XCTAssertLessThanOrEqual(
              abs(Double(c[row * ldc + column]) - min(max(sum, 0), 6)),
              tolerance(depth: segments * depth) * magnitude + 1e-30, "\(name): row \(row) column \(column)")
          }
        }
      }
    }
  }

  /// The kernels applying negative slopes (a folded PRELU) against the plain kernel followed by
  /// TFLite's PRELU `x >= 0 ? x : x · α` in Swift, bit for bit: every height, whole and
  /// column-masked panels, depth segments, starting from the bias, zeros or C (C seeded with NaN,
  /// ±0 and ±infinity, which must pass or be clamped exactly as the separate PRELU sees them),
  /// clamped or not; nothing past the real columns is written.
  func testNegativeSlopesMatchTheSeparatePrelu() {
    var random = SeededGenerator(seed: 43)
    let specials: [Float] = [.nan, 0, -0.0, .infinity, -.infinity, -.greatestFiniteMagnitude, -1e-38]
    for isa in runnableISAs {
      guard let kernels = GeneratedFloatKernels.kernels(for: isa) else { continue }
      for trial in 0..<120 {
        let rowCount = random.int(1...(2 * kernels.maximumRows + 1))
        let depth = trial % 4 == 0 ? 0 : random.int(1...19)
        let segments = random.int(1...3)
        let columns = trial % 3 == 0 ? random.int(1...15) : 16
        let lda = depth + random.int(0...3)
        let aSegmentStride = rowCount * lda + random.int(0...5)
        let bSegmentStride = (depth + random.int(0...2)) * 16
        let ldc = 16 + 3
        let a = random.floats(max(segments * aSegmentStride, 1))
        let b = random.floats(max(segments * bSegmentStride, 16))
        let bias = random.floats(16)
        let slopes = random.floats(16, in: -3...3)
        let accumulates = trial % 2 == 1
        var previous = random.floats(rowCount * ldc, in: -2...2)
        for index in previous.indices where random.int(0...5) == 0 { previous[index] = specials[random.int(0...6)] }
        let clamp: FloatClampRange? = [nil, FloatClampRange.none, .relu6][trial % 3]
        func run(negativeSlopes: Bool) -> [Float] {
          var c = previous
          for row in 0..<rowCount { for column in columns..<ldc { c[row * ldc + column] = .nan } }
          a.withUnsafeBufferPointer { aBuffer in
            b.withUnsafeBufferPointer { bBuffer in
              bias.withUnsafeBufferPointer { biasBuffer in
                slopes.withUnsafeBufferPointer { slopesBuffer in
                  c.withUnsafeMutableBufferPointer { cBuffer in
                    XCTAssertTrue(kernels.run(
                      a: aBuffer.baseAddress!, lda: lda, rowCount: rowCount, b: bBuffer.baseAddress!, depth: depth,
                      c: cBuffer.baseAddress!, ldc: ldc, start: trial % 4 == 2 ? nil : biasBuffer.baseAddress,
                      accumulates: accumulates, clamp: clamp,
                      negativeSlopes: negativeSlopes ? slopesBuffer.baseAddress : nil, columns: columns,
                      segments: segments, aSegmentStride: aSegmentStride, bSegmentStride: bSegmentStride))
                  }
                }
              }
            }
          }
          return c
        }
        let plain = run(negativeSlopes: false)
        let scaled = run(negativeSlopes: true)
        let name = "\(isa) trial \(trial): rows \(rowCount) depth \(depth)×\(segments) columns \(columns) accumulates \(accumulates)"
        for row in 0..<rowCount {
          XCTAssertTrue(scaled[(row * ldc + columns)..<((row + 1) * ldc)].allSatisfy(\.isNaN), "\(name): wrote past the columns")
          for column in 0..<columns {
            let x = plain[row * ldc + column]
            let expected = x >= 0 ? x : x * slopes[column]
            let value = scaled[row * ldc + column]
            XCTAssertTrue(
              value.bitPattern == expected.bitPattern || value.isNaN && expected.isNaN,
              "\(name): row \(row) column \(column): \(value), separate PRELU \(expected)")
          }
        }
      }
    }
  }

  /// The clamp keeps NaN and infinities as TFLite's `std::max`/`std::min` do (NaN passes, infinity
  /// is bounded), and no clamp at all leaves infinities.
  func testClampPropagatesNaNAndBoundsInfinity() {
    for isa in runnableISAs {
      guard let kernels = GeneratedFloatKernels.kernels(for: isa) else { continue }
      let a: [Float] = [1, .nan, 1]  // rows 0, 1, 2 at depth 1
      var b = [Float](repeating: 0, count: 16)
      b[0] = .infinity
      b[1] = -.infinity
      b[2] = 2
      for clamp in [FloatClampRange.relu6, nil] {
        var c = [Float](repeating: 0, count: 3 * 16)
        a.withUnsafeBufferPointer { aBuffer in
          b.withUnsafeBufferPointer { bBuffer in
            c.withUnsafeMutableBufferPointer { cBuffer in
              XCTAssertTrue(kernels.run(
                a: aBuffer.baseAddress!, lda: 1, rowCount: 3, b: bBuffer.baseAddress!, depth: 1, c: cBuffer.baseAddress!,
                ldc: 16, start: nil, accumulates: false, clamp: clamp))
            }
          }
        }
        XCTAssertEqual(Array(c[0..<3]), clamp == nil ? [.infinity, -.infinity, 2] : [6, 0, 2], "\(isa) \(String(describing: clamp))")
        XCTAssertTrue(c[16..<32].allSatisfy(\.isNaN), "\(isa): NaN row must stay NaN")
      }
    }
  }

  /// Fuzzed generator parameters: heights outside `1...maximumRows` are refused with an error,
  /// valid ones give bounded code that ends in `ret`; the CPUID stubs are well formed.
  func testGeneratorRefusesBadHeightsAndBoundsItsCode() {
    var random = SeededGenerator(seed: 3)
    for isa in GeneratedKernelISA.allCases {
      let maximum = FloatKernelGenerator.maximumRows(isa)
      for rows in [Int.min, -1, 0, maximum + 1, 1000, Int.max] + (0..<40).map({ _ in random.int(-50...50) }) {
        do {
          let code = try FloatKernelGenerator.code(isa: isa, rows: rows, masksColumns: random.bool())
          XCTAssertTrue((1...maximum).contains(rows), "\(isa): rows \(rows) accepted")
          XCTAssertLessThan(code.count, 16 * 1024)
          XCTAssertEqual(code.last, 0xC3)
        } catch {
          XCTAssertEqual(error, .unsupportedRows(rows, isa))
          XCTAssertFalse((1...maximum).contains(rows), "\(isa): rows \(rows) refused")
        }
      }
    }
    XCTAssertNil(ExecutableCode([]), "empty code must not be mapped")
    XCTAssertEqual(ProcessorFeatures.cpuidStub().last, 0xC3)
    XCTAssertEqual(ProcessorFeatures.xgetbvStub().last, 0xC3)
  }

  /// Kernels mapped together share one mapping: each starts on a 64-byte boundary after the one
  /// before it, holds exactly its bytes, and runs (each is a `ret` after some `nop`s, so calling it
  /// returns); a batch with an empty code is refused as a whole.
  func testKernelsOfOneFamilyShareOneExecutableMapping() throws {
    #if arch(x86_64) && os(Linux)
      let codes: [[UInt8]] = [[0xC3], [UInt8](repeating: 0x90, count: 100) + [0xC3], [0x90, 0xC3]]
      let mapped = try XCTUnwrap(ExecutableCode.mapped(codes), "x86-64 Linux maps generated code")
      XCTAssertEqual(mapped.count, 3)
      XCTAssertEqual(mapped.map { Int(bitPattern: $0.entry) % 64 }, [0, 0, 0])
      XCTAssertEqual(mapped[1].entry - mapped[0].entry, 64)
      XCTAssertEqual(mapped[2].entry - mapped[1].entry, 128)
      for (code, kernel) in zip(codes, mapped) {
        XCTAssertEqual(Array(UnsafeRawBufferPointer(start: kernel.entry, count: code.count)), code)
        unsafeBitCast(kernel.entry, to: (@convention(c) () -> Void).self)()
      }
    #endif
    XCTAssertNil(ExecutableCode.mapped([[0xC3], []]), "a batch with empty code must not be mapped")
    XCTAssertNil(ExecutableCode.mapped([]), "an empty batch must not be mapped")
  }

  /// `RunnerOptions.usesGeneratedKernels` false (and only that) makes a runner's GEMMs use the
  /// Swift kernels.
  func testRunnerOptionTurnsGeneratedKernelsOff() throws {
    XCTAssertTrue(RunnerOptions().usesGeneratedKernels)
    let preferred = GeneratedFloatKernels.preferred
    XCTAssertEqual(preferred?.isa, GeneratedFloatKernels.isTurnedOffByEnvironment ? nil : GeneratedKernelISA.supported)
    let off = ModelResources(usesGeneratedKernels: false)
    try off.nestedCall(into: 0) { XCTAssertNil(GeneratedFloatKernels.current) }
    let on = ModelResources(usesGeneratedKernels: true)
    try on.nestedCall(into: 0) { XCTAssertTrue(GeneratedFloatKernels.current === preferred) }
  }
}
