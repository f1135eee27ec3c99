import XCTest

import TFLiteLinearAlgebra

/// The run-time generated `vpdpbusd` kernels (AVX-VNNI on ymm, AVX512-VNNI on zmm) against Int32
/// sums computed from first principles and against the Swift integer kernel's sums on the 16-bit
/// panels, bit for bit, for every dot-product instruction set this machine runs.
final class GeneratedDotProductKernelTests: XCTestCase {
  /// Every dot-product instruction set this machine runs.
  private var runnableISAs: [DotProductISA] {
    DotProductISA.allCases.filter { GeneratedDotProductKernels.kernels(for: $0) != nil }
  }

  /// The probe agrees with the flags Linux reports.
  func testProbeAgreesWithProcCpuinfo() throws {
    #if os(Linux) && arch(x86_64)
      let text = try String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)
      let flagsLine = try XCTUnwrap(text.split(separator: "\n").first { $0.hasPrefix("flags") })
      let flags = Set(flagsLine.split(separator: " ").map(String.init))
      var expected: DotProductISAs = []
      if flags.isSuperset(of: ["avx2", "fma", "avx_vnni"]) { expected.insert(.avxVNNI) }
      if flags.isSuperset(of: ["avx2", "fma", "avx512f", "avx512_vnni"]) { expected.insert(.avx512VNNI) }
      XCTAssertEqual(DotProductISA.supported, expected)
      XCTAssertEqual(runnableISAs, DotProductISA.allCases.filter(expected.contains))
    #else
      XCTAssertTrue(DotProductISA.supported.isEmpty, "code generation is only for x86-64")
    #endif
  }

  /// Each family is made on first request, kept (the same mapping on every later request) and
  /// stores what it was asked for (output, requantization form); sign-flipping families exist only
  /// where the level reads int8 A.
  func testFamiliesAreMadeOnFirstRequestAndKept() throws {
    for isa in runnableISAs {
      let kernels = try XCTUnwrap(GeneratedDotProductKernels.kernels(for: isa))
      let flips = kernels.flipsSigns ? [false, true] : [false]
      for output in [nil] + RequantizedOutput.allCases.map(Optional.some) {
        for flipsSign in output == nil ? [false] : flips {
          for form in output == nil ? [.complete] : RequantizationForm.all {
            let label = "\(isa) \(String(describing: output)) \(form)"
            let first = try XCTUnwrap(kernels.tiles(output, form: form, flipsSign: flipsSign), label)
            XCTAssertTrue(first === kernels.tiles(output, form: form, flipsSign: flipsSign), "\(label): made twice")
            XCTAssertEqual(first.output, output)
            XCTAssertEqual(first.flipsSign, flipsSign)
            XCTAssertEqual(first.form, form)
            XCTAssertEqual(first.isa, isa)
            XCTAssertEqual(first.maximumColumns, kernels.maximumColumns)
          }
        }
      }
      XCTAssertFalse(
        kernels.tiles(.int8) === kernels.tiles(.uint8), "\(isa): int8 and uint8 outputs share a family")
      XCTAssertFalse(
        kernels.tiles(.int8) === kernels.tiles(.int8, form: RequantizationForm(shiftsLeft: false, saturates: true)),
        "\(isa): two requantization forms share a family")
    }
  }

  /// Random M, N (edge tiles in both directions), K (0, not a multiple of four, long), A rows
  /// wider than the depth with random bytes past it (they must meet zero weights), C rows wider
  /// than 16 whose extra lanes must stay untouched, weights over the whole Int8 range.
  func testRandomProductsMatchFirstPrinciplesAndSwiftKernel() throws {
    var random = SeededGenerator(seed: 1212)
    for isa in runnableISAs {
      let kernels = try XCTUnwrap(GeneratedDotProductKernels.kernels(for: isa))
      for trial in 0..<60 {
        let rows = random.int(1...25)
        let columns = random.int(1...40)
        let depth = trial % 10 == 0 ? random.int(200...600) : random.int(0...37)
        let paddedDepth = QuadPanelMatrices.paddedDepth(depth)
        let lda = paddedDepth + random.int(0...6)
        let a = (0..<rows * lda).map { _ in UInt8.random(in: 0...255, using: &random) }
        let weights = (0..<depth * columns).map { _ in Int32.random(in: -128...127, using: &random) }
        assertMatches(kernels: kernels, a: a, lda: lda, rows: rows, weights: weights, depth: depth, columns: columns)
      }
    }
  }

  /// Extreme values: 255 × −128 over a depth long enough that the sums wrap around Int32, and
  /// 255 × 127, both of which the reference accumulates with wrapping.
  func testExtremeValuesWrapAsInt32() throws {
    for isa in runnableISAs {
      let kernels = try XCTUnwrap(GeneratedDotProductKernels.kernels(for: isa))
      let depth = 66_000
      let a = [UInt8](repeating: 255, count: 3 * depth)
      let weights = (0..<depth * 17).map { Int32($0 % 17 == 16 ? 127 : -128) }
      assertMatches(kernels: kernels, a: a, lda: depth, rows: 3, weights: weights, depth: depth, columns: 17)
    }
  }

  /// Sums of several panels in one call (every panel count of every level this machine runs, and
  /// the Swift route of `DotProductSums` the same way): random rows across tile boundaries, panels
  /// `panelBytes` apart with gaps, C rows wider than the tile; each sum equal to first principles,
  /// the columns past the tile untouched.
  func testMultiPanelSumsMatchFirstPrinciples() {
    var random = SeededGenerator(seed: 1208)
    let routes = runnableISAs.compactMap { GeneratedDotProductKernels.kernels(for: $0) }.map {
      DotProductSums(generated: $0)
    } + [DotProductSums(generated: nil)]
    for route in routes {
      for columns in 1...route.tilePanels {
        for trial in 0..<4 {
          let rows = random.int(1...25)
          let steps = trial == 0 ? 0 : random.int(1...30)
          let lda = 4 * steps + random.int(0...3)
          let panelBytes = 64 * (steps + random.int(0...2))
          let ldc = 16 * columns + random.int(0...5)
          let a = (0..<rows * lda).map { _ in UInt8.random(in: 0...255, using: &random) }
          let b = (0..<max(1, columns * panelBytes)).map { _ in Int8.random(in: -128...127, using: &random) }
          let sentinel: Int32 = 0x5A5A_5A5A
          var c = [Int32](repeating: sentinel, count: rows * ldc)
          a.withUnsafeBufferPointer { aBuffer in
            b.withUnsafeBufferPointer { bBuffer in
              c.withUnsafeMutableBufferPointer {
                route.sums(
                  a: aBuffer.baseAddress!, lda: lda, rowCount: rows, b: bBuffer.baseAddress!, steps: steps,
                  c: $0.baseAddress!, ldc: ldc, columns: columns, panelBytes: panelBytes)
              }
            }
          }
          let label = "\(route.generatedLevel ?? "Swift") \(rows)×\(columns) panels, steps \(steps)"
          for row in 0..<rows {
            for column in 0..<ldc {
              var expected = sentinel
              if column < 16 * columns {
                let (panel, lane) = column.quotientAndRemainder(dividingBy: 16)
                expected = 0
                for k in 0..<4 * steps {
                  expected &+= Int32(a[row * lda + k]) &* Int32(b[panel * panelBytes + (k / 4) * 64 + lane * 4 + k % 4])
                }
              }
              XCTAssertEqual(c[row * ldc + column], expected, "\(label) row \(row) column \(column)")
            }
          }
        }
      }
    }
  }

  /// Every tile (every height of every panel count of every level this machine runs) over 0
  /// through 5 steps: each Int32 sum equals first principles, and the C columns past the tile and
  /// the row past its last are untouched.
  func testEveryTileSumsShortDepths() throws {
    var random = SeededGenerator(seed: 1209)
    for isa in runnableISAs {
      let kernels = try XCTUnwrap(GeneratedDotProductKernels.kernels(for: isa))
      for columns in 1...kernels.maximumColumns {
        for rows in 1...kernels.maximumRows(columns: columns) {
          for steps in 0...5 {
            let lda = 4 * steps + random.int(0...3)
            let panelBytes = 64 * (steps + random.int(0...1))
            let ldc = 16 * columns + random.int(0...3)
            let a = (0..<rows * lda).map { _ in UInt8.random(in: 0...255, using: &random) }
            let b = (0..<max(1, columns * panelBytes)).map { _ in Int8.random(in: -128...127, using: &random) }
            let sentinel: Int32 = 0x1234_5678
            var c = [Int32](repeating: sentinel, count: (rows + 1) * ldc)
            a.withUnsafeBufferPointer { aBuffer in
              b.withUnsafeBufferPointer { bBuffer in
                c.withUnsafeMutableBufferPointer {
                  kernels.tileSums(
                    a: aBuffer.baseAddress!, lda: lda, rows: rows, b: bBuffer.baseAddress!, steps: steps,
                    c: $0.baseAddress!, ldc: ldc, columns: columns, panelBytes: panelBytes)
                }
              }
            }
            for row in 0...rows {
              for column in 0..<ldc {
                var expected = sentinel
                if row < rows && column < 16 * columns {
                  let (panel, lane) = column.quotientAndRemainder(dividingBy: 16)
                  expected = 0
                  for k in 0..<4 * steps {
                    expected &+= Int32(a[row * lda + k]) &* Int32(b[panel * panelBytes + (k / 4) * 64 + lane * 4 + k % 4])
                  }
                }
                XCTAssertEqual(
                  c[row * ldc + column], expected, "\(isa) \(rows)×\(columns) steps \(steps) row \(row) column \(column)")
              }
            }
          }
        }
      }
    }
  }

  /// Weights outside Int8 (uint8 weights minus a zero point) are refused by the packing.
  func testPackingRefusesValuesOutsideInt8() {
    for outside: Int32 in [128, -129, 255, -255] {
      let weights: [Int32] = [1, outside, 3, 4]
      let packed = weights.withUnsafeBufferPointer {
        QuadPanelMatrices($0.baseAddress!, sourceStride: 0, count: 1, layout: .depthMajor(columns: 2), depth: 2, columns: 2)
      }
      XCTAssertNil(packed, "\(outside)")
    }
  }

  /// Tile heights and panel counts outside the generator's range are refused; every height of
  /// every panel count of every level encodes (also on machines that cannot run it), ending in
  /// `vzeroupper; ret`.
  func testGeneratorCoversEveryHeightAndRefusesOthers() throws {
    for isa in DotProductISA.allCases {
      let maximumColumns = DotProductKernelGenerator.maximumColumns(isa)
      XCTAssertThrowsError(try DotProductKernelGenerator.code(isa: isa, rows: 1, columns: 0))
      XCTAssertThrowsError(try DotProductKernelGenerator.code(isa: isa, rows: 1, columns: maximumColumns + 1))
      for columns in 1...maximumColumns {
        let maximum = DotProductKernelGenerator.maximumRows(isa, columns: columns)
        XCTAssertThrowsError(try DotProductKernelGenerator.code(isa: isa, rows: 0, columns: columns))
        XCTAssertThrowsError(try DotProductKernelGenerator.code(isa: isa, rows: maximum + 1, columns: columns))
        for rows in 1...maximum {
          let code = try DotProductKernelGenerator.code(isa: isa, rows: rows, columns: columns, output: .int8)
          XCTAssertEqual(Array(code.suffix(4)), [0xC5, 0xF8, 0x77, 0xC3])
        }
      }
    }
  }

  /// Runs one product through `kernels` and compares with the first-principles sums and the Swift
  /// kernel's sums over the 16-bit panels.
  private func assertMatches(
    kernels: GeneratedDotProductKernels, a: [UInt8], lda: Int, rows: Int, weights: [Int32], depth: Int, columns: Int,
    file: StaticString = #filePath, line: UInt = #line
  ) {
    let width = GEMMTile.columns
    let ldc = width + 3
    let sentinel: Int32 = 0x5A5A_5A5A
    let quad = weights.withUnsafeBufferPointer {
      QuadPanelMatrices($0.baseAddress!, sourceStride: 0, count: 1, layout: .depthMajor(columns: columns), depth: depth, columns: columns)
    }
    guard let quad else { return XCTFail("int8 weights refused", file: file, line: line) }
    let paired = weights.withUnsafeBufferPointer {
      PairedPanelMatrices($0.baseAddress!, sourceStride: 0, count: 1, layout: .depthMajor(columns: columns), depth: depth, columns: columns)
    }
    guard let paired else { return XCTFail("int8 weights refused by the 16-bit packing", file: file, line: line) }
    // The Swift kernel reads A in pairs: give it rows of the paired depth (the byte past an odd
    // depth meets a zero weight, as in the generated kernel).
    let pairedDepth = paired.paddedDepth
    for panel in 0..<PanelPacking.panelCount(columns: columns) {
      var c = [Int32](repeating: sentinel, count: max(1, rows * ldc))
      a.withUnsafeBufferPointer { a in
        c.withUnsafeMutableBufferPointer { c in
          kernels.sums(
            a: a.baseAddress!, lda: lda, rowCount: rows, b: quad.matrix(0) + panel * quad.paddedDepth * width,
            steps: quad.paddedDepth / 4, c: c.baseAddress!, ldc: ldc)
        }
      }
      for row in 0..<rows {
        let swiftSums = a.withUnsafeBufferPointer { a in
          IntegerMicroKernel<Int8>.singleRowSums(
            a: a.baseAddress! + row * lda, b: paired.matrix(0) + panel * pairedDepth * width, pairs: pairedDepth / 2)
        }
        for lane in 0..<width {
          let column = panel * width + lane
          var expected: Int32 = 0
          if column < columns {
            for k in 0..<depth { expected &+= Int32(a[row * lda + k]) &* weights[k * columns + column] }
          }
          let got = c[row * ldc + lane]
          guard got == expected && got == swiftSums[lane] else {
            return XCTFail(
              "\(kernels.isa) rows \(rows) depth \(depth) row \(row) column \(column): \(got), expected \(expected), Swift \(swiftSums[lane])",
              file: file, line: line)
          }
        }
        for gap in width..<ldc where row * ldc + gap < c.count {
          XCTAssertEqual(c[row * ldc + gap], sentinel, "written past the tile", file: file, line: line)
        }
      }
    }
  }
}
