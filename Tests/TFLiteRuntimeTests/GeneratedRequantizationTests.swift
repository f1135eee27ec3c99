import XCTest

import TFLiteLinearAlgebra

/// The generated requantization (RequantizationEmission.swift): the dot-product kernels' fused
/// epilogue of every VNNI level this machine runs (the depthwise byte kernels' epilogue, also on
/// AVX2, is in `GeneratedDepthwiseKernelTests`), bit for bit against the scalar rescale (`QuantizedMultiplier.apply`, itself pinned to
/// LiteRT's reference) and the Swift epilogue, over extreme sums, multipliers 0 and 2^31 − 1, every
/// legal shift, both roundings, int8 and uint8 outputs, every clamp, odd row counts and strides.
final class GeneratedRequantizationTests: XCTestCase {
  /// A random requantization problem of `blocks` 16-channel blocks.
  private struct Problem {
    let multipliers: [QuantizedMultiplier]
    let bias: [Int32]
    let rounding: RoundingPolicy
    let zeroPoint: Int32
    let clamp: ClosedRange<Int32>
    let constants: IntegerChannelConstants
    let epilogue: IntegerEpilogue

    init(random: inout SeededGenerator, channels: Int, signed: Bool, trial: Int) {
      rounding = trial % 2 == 0 ? .doubleRounding : .singleRounding
      let perTensor = trial % 5 == 0
      // Every fourth problem only divides (no left shifts under two roundings, the form without
      // that step; one rounding never shifts left).
      let dividesOnly = trial % 4 == 2
      func multiplier(_ index: Int) -> QuantizedMultiplier {
        let drawn = Self.multiplier(&random, index: index)
        return dividesOnly ? QuantizedMultiplier(multiplier: drawn.multiplier, shift: min(drawn.shift, 0)) : drawn
      }
      let shared = multiplier(trial)
      multipliers = (0..<channels).map { perTensor ? shared : multiplier($0 &+ trial) }
      bias = (0..<channels).map { _ in
        random.int(0...3) == 0 ? [Int32.min, Int32.max, 0, -1][random.int(0...3)] : Int32.random(in: .min ... .max, using: &random)
      }
      let range: ClosedRange<Int32> = signed ? -128...127 : 0...255
      zeroPoint = Int32.random(in: range, using: &random)
      // No activation, ReLU (from the zero point), ReLU6-like (zero point to a few steps above).
      switch trial % 3 {
      case 0: clamp = range
      case 1: clamp = zeroPoint...range.upperBound
      default: clamp = zeroPoint...min(range.upperBound, zeroPoint + Int32(random.int(0...60)))
      }
      let bias = bias
      constants = IntegerChannelConstants(
        groups: 1, groupChannels: channels, multipliers: multipliers, rounding: rounding, outputZeroPoint: zeroPoint,
        clamp: clamp
      ) { bias[$0] }
      epilogue = constants.epilogue(group: 0)
    }

    /// Multipliers 0, 2^31 − 1 and 2^30, and random mantissas, with shifts over −31…30.
    static func multiplier(_ random: inout SeededGenerator, index: Int) -> QuantizedMultiplier {
      let shift = index % 7 == 0 ? [-31, 30, 0, -1, 1][random.int(0...4)] : random.int(-31...30)
      switch index % 6 {
      case 0: return QuantizedMultiplier(multiplier: 0, shift: shift)
      case 1: return QuantizedMultiplier(multiplier: .max, shift: shift)
      case 2: return QuantizedMultiplier(multiplier: 1 << 30, shift: shift)
      default: return QuantizedMultiplier(multiplier: Int32.random(in: (1 << 30)...(.max), using: &random), shift: shift)
      }
    }

    /// The raw output of `channel` for `sum`, from the scalar rescale.
    func expected(_ sum: Int32, channel: Int) -> Int32 {
      let scaled = multipliers[channel].apply(sum &+ bias[channel], rounding: rounding) &+ zeroPoint
      return min(max(scaled, clamp.lowerBound), clamp.upperBound)
    }
  }

  /// A random sum: extremes a quarter of the time.
  private func sum(_ random: inout SeededGenerator) -> Int32 {
    random.int(0...3) == 0
      ? [Int32.min, Int32.max, 0, -1, 1, Int32.min + 1][random.int(0...5)] : Int32.random(in: .min ... .max, using: &random)
  }

  /// The standalone kernel of each instruction set on random rows of sums: every output byte as
  /// the scalar rescale and the Swift epilogue give it, and nothing written past 16 bytes a row.
  func testStandaloneKernelMatchesScalarRescaleAndSwiftEpilogue() throws {
    let isas = GeneratedKernelISA.allCases.filter { GeneratedRequantizationKernels.kernels(for: $0) != nil }
    #if arch(x86_64)
      XCTAssertFalse(isas.isEmpty, "an x86-64 test machine runs at least AVX2")
    #endif
    var random = SeededGenerator(seed: 1203)
    for isa in isas {
      let kernels = try XCTUnwrap(GeneratedRequantizationKernels.kernels(for: isa))
      for trial in 0..<60 {
        let signed = trial % 4 < 2
        let blocks = random.int(1...3)
        let channels = 16 * blocks
        let problem = Problem(random: &random, channels: channels, signed: signed, trial: trial)
        let rows = [1, 3, 7, 13, 0][trial % 5]
        let sumsStride = channels + 16 * random.int(0...1)
        let outputStride = channels + random.int(0...9)
        let sums = (0..<max(rows, 1) * sumsStride).map { _ in sum(&random) }
        let label = "\(isa) trial \(trial) \(problem.rounding) \(signed ? "int8" : "uint8") rows \(rows)"
        func run<Output: QuantizedInteger>(_ type: Output.Type) {
          let guardValue = Output(truncatingIfNeeded: 0x5A)
          var output = [Output](repeating: guardValue, count: max(rows, 1) * outputStride)
          sums.withUnsafeBufferPointer { sumBuffer in
            output.withUnsafeMutableBufferPointer { outputBuffer in
              for block in 0..<blocks {
                kernels.requantize(
                  sums: sumBuffer.baseAddress! + 16 * block, sumsStride: sumsStride, rows: rows,
                  table: problem.epilogue.table(channel: 16 * block), lanes: problem.epilogue.lanes,
                  output: outputBuffer.baseAddress! + 16 * block, outputStride: outputStride)
              }
            }
          }
          for row in 0..<max(rows, 1) {
            for channel in 0..<outputStride {
              let actual = output[row * outputStride + channel]
              guard row < rows, channel < channels else {
                XCTAssertEqual(actual, guardValue, "\(label): wrote past the rows at \(row), \(channel)")
                continue
              }
              let value = sums[row * sumsStride + channel]
              XCTAssertEqual(Int32(actual), problem.expected(value, channel: channel), "\(label) row \(row) channel \(channel) sum \(value)")
            }
            guard row < rows else { continue }
            for block in 0..<blocks {
              let vector = SIMD16<Int32>((0..<16).map { sums[row * sumsStride + 16 * block + $0] })
              let swift = problem.epilogue.requantize(vector, channel: 16 * block)
              for lane in 0..<16 {
                XCTAssertEqual(Int32(output[row * outputStride + 16 * block + lane]), swift[lane], "\(label): Swift epilogue")
              }
            }
          }
        }
        signed ? run(Int8.self) : run(UInt8.self)
      }
    }
  }

  /// Sums on and beside every rounding tie: for each channel's multiplier and shift (both
  /// roundings, right shifts 0…31 and a few left shifts, multipliers 2^30, 2^30 + 1, 2^31 − 1 and
  /// odd mantissas), the sums whose exact rescale lies within two steps of k + ½ for outputs k
  /// inside int8, positive and negative, where the two-rounding and one-rounding forms (halves away
  /// from zero after a nudged high multiply; halves up) and any merged 64-bit form differ first.
  /// Every instruction set's standalone kernel must give the scalar rescale's bytes.
  func testRescaleMatchesScalarRescaleOnEveryRoundingTie() throws {
    let isas = GeneratedKernelISA.allCases.filter { GeneratedRequantizationKernels.kernels(for: $0) != nil }
    #if arch(x86_64)
      XCTAssertFalse(isas.isEmpty, "an x86-64 test machine runs at least AVX2")
    #endif
    let mantissas: [Int32] = [1 << 30, (1 << 30) + 1, .max, 0x5555_5555, 0x6000_0001]
    let shifts = Array(-31...2)
    let candidates = Array(-60..<60)
    let nudges = Array(-2...2)
    let rows = candidates.count * nudges.count
    for isa in isas {
      let kernels = try XCTUnwrap(GeneratedRequantizationKernels.kernels(for: isa))
      for rounding in [RoundingPolicy.doubleRounding, .singleRounding] {
        // 16 channels a block: (mantissa, shift) pairs in turn until every pair has run.
        let pairs = mantissas.flatMap { mantissa in shifts.map { QuantizedMultiplier(multiplier: mantissa, shift: $0) } }
        for first in stride(from: 0, to: pairs.count, by: 16) {
          let multipliers = (0..<16).map { pairs[(first + $0) % pairs.count] }
          let constants = IntegerChannelConstants(
            groups: 1, groupChannels: 16, multipliers: multipliers, rounding: rounding, outputZeroPoint: 0,
            clamp: -128...127) { _ in 0 }
          let epilogue = constants.epilogue(group: 0)
          var sums = [Int32](repeating: 0, count: rows * 16)
          for channel in 0..<16 {
            let multiplier = multipliers[channel]
            // x · M · 2^(shift − 31) = k + ½ at x = (k + ½) · 2^(31 − shift) / M.
            let scale = Double(sign: .plus, exponent: 31 - multiplier.shift, significand: 1) / Double(multiplier.multiplier)
            for (index, k) in candidates.enumerated() {
              let tie = ((Double(k) + 0.5) * scale).rounded()
              for (offset, nudge) in nudges.enumerated() {
                let value = min(max(tie + Double(nudge), Double(Int32.min)), Double(Int32.max))
                sums[(index * nudges.count + offset) * 16 + channel] = Int32(value)
              }
            }
          }
          var output = [Int8](repeating: 0, count: rows * 16)
          sums.withUnsafeBufferPointer { sumBuffer in
            output.withUnsafeMutableBufferPointer { outputBuffer in
              kernels.requantize(
                sums: sumBuffer.baseAddress!, sumsStride: 16, rows: rows, table: epilogue.table(channel: 0),
                lanes: epilogue.lanes, output: outputBuffer.baseAddress!, outputStride: 16)
            }
          }
          var mismatches = 0
          for index in sums.indices {
            let multiplier = multipliers[index % 16]
            let expected = min(max(multiplier.apply(sums[index], rounding: rounding), -128), 127)
            if Int32(output[index]) != expected {
              mismatches += 1
              if mismatches <= 5 {
                XCTFail("\(isa) \(rounding) \(multiplier): sum \(sums[index]) gave \(output[index]), expected \(expected)")
              }
            }
          }
          XCTAssertEqual(mismatches, 0, "\(isa) \(rounding) channels from pair \(first)")
        }
      }
    }
  }

  /// The legacy-uint8 row-corrected tiles (RowCorrectedDotProducts.swift): with every sum route
  /// (Swift and each VNNI level) and every requantization (Swift and each generated level), each
  /// output byte is the scalar rescale of Σ u · (w − zw) computed here from first principles, on
  /// rows read where they lie (row strides past the packed depth, whose extra bytes must not
  /// count), 1–3 whole panels and a partial last panel, more rows than one block; the output
  /// bytes past the written columns stay untouched.
  func testRowCorrectedTilesMatchScalarRescaleOnEveryRoute() throws {
    var random = SeededGenerator(seed: 1205)
    let sumRoutes =
      [DotProductSums(generated: nil)]
      + DotProductISA.allCases.compactMap { GeneratedDotProductKernels.kernels(for: $0) }.map { DotProductSums(generated: $0) }
    let requantizers: [GeneratedRequantizationKernels?] =
      [nil] + GeneratedKernelISA.allCases.compactMap { GeneratedRequantizationKernels.kernels(for: $0) }
    for trial in 0..<24 {
      let rows = trial % 3 == 0 ? random.int(25...60) : random.int(1...13)
      let depth = random.int(1...40)
      let paddedDepth = QuadPanelMatrices.paddedDepth(depth)
      let lda = paddedDepth + random.int(0...9)
      let panels = random.int(1...3)
      let partialColumns = trial % 2 == 0 ? random.int(1...15) : 0
      let columns = panels * 16 + partialColumns
      let zeroPoint = Int32(random.int(0...255))
      // A: unsigned bytes; past the real depth (depth padding and the rest of the row) random too,
      // as in the input a 1×1 convolution reads in place: the row sums must leave them out.
      let a = (0..<rows * lda).map { _ in UInt8.random(in: 0...255, using: &random) }
      // Column n's uint8 weights at n · depth; B holds w − 128, zero past the real depth.
      let weights = (0..<columns * depth).map { _ in UInt8.random(in: 0...255, using: &random) }
      var centred = [Int8](repeating: 0, count: columns * paddedDepth)
      for column in 0..<columns {
        for k in 0..<depth { centred[column * paddedDepth + k] = Int8(Int(weights[column * depth + k]) - 128) }
      }
      let packed = try XCTUnwrap(
        centred.withUnsafeBufferPointer {
          QuadPanelMatrices(
            $0.baseAddress!, sourceStride: 0, count: 1, layout: .columnMajor(depth: paddedDepth), depth: paddedDepth,
            columns: columns)
        })
      let panelStride = packed.paddedDepth * GEMMTile.columns
      let problem = Problem(random: &random, channels: columns, signed: false, trial: trial)
      let ldc = columns + random.int(0...7)
      for route in sumRoutes {
        for requantizer in requantizers {
          let label =
            "trial \(trial) rows \(rows) depth \(depth) columns \(columns) zw \(zeroPoint) sums \(route.generatedLevel ?? "Swift") "
            + "requantization \(requantizer.map { "\($0.isa)" } ?? "Swift")"
          let kernel = RowCorrectedDotProductMicroKernel<UInt8>(
            epilogue: problem.epilogue, sums: route, rowSumFactor: 128 &- zeroPoint, rowSumDepth: depth,
            requantizer: .some(requantizer))
          var output = [UInt8](repeating: 0xA5, count: rows * ldc)
          a.withUnsafeBufferPointer { aBuffer in
            output.withUnsafeMutableBufferPointer { outputBuffer in
              // The whole panels in one call (one panel through `panelRows`), then the partial one.
              if panels == 1 {
                kernel.panelRows(
                  a: aBuffer.baseAddress!, lda: lda, rowCount: rows, b: packed.matrix(0), depth: packed.paddedDepth,
                  output: outputBuffer.baseAddress!, ldc: ldc, column: 0, isFirstBlock: true, isLastBlock: true)
              } else {
                kernel.panelsRows(
                  a: aBuffer.baseAddress!, lda: lda, rowCount: rows, b: packed.matrix(0), panels: panels,
                  panelStride: panelStride, depth: packed.paddedDepth, output: outputBuffer.baseAddress!, ldc: ldc,
                  column: 0, isFirstBlock: true, isLastBlock: true)
              }
              if partialColumns > 0 {
                XCTAssertTrue(
                  kernel.partialPanelRows(
                    a: aBuffer.baseAddress!, lda: lda, rowCount: rows, b: packed.matrix(0) + panels * panelStride,
                    depth: packed.paddedDepth, output: outputBuffer.baseAddress! + panels * 16, ldc: ldc,
                    column: panels * 16, validColumns: partialColumns, isFirstBlock: true, isLastBlock: true))
              }
            }
          }
          for row in 0..<rows {
            for column in 0..<ldc {
              let actual = output[row * ldc + column]
              guard column < columns else {
                XCTAssertEqual(actual, 0xA5, "\(label): wrote past \(columns) columns in row \(row)")
                continue
              }
              let sum = (0..<depth).reduce(Int32(0)) {
                $0 + Int32(a[row * lda + $1]) * (Int32(weights[column * depth + $1]) - zeroPoint)
              }
              XCTAssertEqual(
                Int32(actual), problem.expected(sum, channel: column),
                "\(label) row \(row) column \(column)")
            }
          }
        }
      }
    }
  }

  /// The rows' byte sums of the row-corrected kernels (`byteSum`): every length 0–70 at every
  /// start offset 0–7 in a buffer of random bytes equals the sum taken byte by byte, and the
  /// longest row it may get (2^23 bytes of 255) does not overflow.
  func testByteSumEqualsSumByByteForEveryLengthAndAlignment() {
    var random = SeededGenerator(seed: 1206)
    let bytes = (0..<80).map { _ in UInt8.random(in: 0...255, using: &random) }
    bytes.withUnsafeBufferPointer { buffer in
      for start in 0..<8 {
        for count in 0...70 {
          let expected = bytes[start..<start + count].reduce(Int32(0)) { $0 + Int32($1) }
          XCTAssertEqual(byteSum(buffer.baseAddress! + start, count: count), expected, "start \(start) count \(count)")
        }
      }
    }
    let longest = [UInt8](repeating: 255, count: 1 << 23)
    XCTAssertEqual(longest.withUnsafeBufferPointer { byteSum($0.baseAddress!, count: $0.count) }, 255 << 23)
  }

  /// The fused epilogue of every dot-product kernel height: random A and B (and, for some tiles, a
  /// depth long enough to wrap the sums past Int32), requantized bytes equal to the scalar rescale
  /// of the kernel's own Int32 sums (which the dot-product tests pin to first principles), and the
  /// output rows' bytes past 16 untouched; on AVX512-VNNI also the variant reading int8 A (A − 128
  /// as signed bytes), which must give the same bytes.
  func testFusedEpilogueMatchesScalarRescaleOfSums() throws {
    let isas = DotProductISA.allCases.filter { GeneratedDotProductKernels.kernels(for: $0) != nil }
    var random = SeededGenerator(seed: 1204)
    var formsSeen: Set<RequantizationForm> = []
    defer {
      if !isas.isEmpty { XCTAssertEqual(formsSeen, Set(RequantizationForm.all), "every requantization form ran") }
    }
    for isa in isas {
      let kernels = try XCTUnwrap(GeneratedDotProductKernels.kernels(for: isa))
      for trial in 0..<(2 * kernels.maximumRows + 8) {
        let rows = trial % kernels.maximumRows + 1
        let signed = trial % 4 < 2
        let steps = trial % 9 == 8 ? 20_000 : random.int(0...40)
        let extreme = steps > 1000
        let lda = 4 * steps + random.int(0...5)
        let a = (0..<rows * lda).map { _ in extreme ? 255 : UInt8.random(in: 0...255, using: &random) }
        let b = (0..<steps * 64).map { _ in extreme ? 127 : Int8.random(in: -128...127, using: &random) }
        let problem = Problem(random: &random, channels: 16, signed: signed, trial: trial)
        let ldc = 16 + random.int(0...7)
        var sums = [Int32](repeating: 0, count: rows * 16)
        a.withUnsafeBufferPointer { aBuffer in
          b.withUnsafeBufferPointer { bBuffer in
            sums.withUnsafeMutableBufferPointer {
              kernels.tileSums(
                a: aBuffer.baseAddress!, lda: lda, rows: rows, b: bBuffer.baseAddress!, steps: steps,
                c: $0.baseAddress!, ldc: 16)
            }
          }
        }
        if extreme { XCTAssertEqual(sums[0], Int32(truncatingIfNeeded: 255 * 127 * 4 * steps), "the long tile wraps") }
        let label = "\(isa) trial \(trial) rows \(rows) steps \(steps) \(problem.rounding) \(signed ? "int8" : "uint8")"
        // Where the kernels read int8 A in place, the same tile from A − 128 as int8 bytes.
        let flippedA = a.map { $0 ^ 0x80 }
        func run<Output: QuantizedInteger>(_ type: Output.Type, flipsSign: Bool, form: RequantizationForm) {
          let guardValue = Output(truncatingIfNeeded: 0xA5)
          var output = [Output](repeating: guardValue, count: rows * ldc)
          (flipsSign ? flippedA : a).withUnsafeBufferPointer { aBuffer in
            b.withUnsafeBufferPointer { bBuffer in
              output.withUnsafeMutableBufferPointer { outputBuffer in
                kernels.requantizedTile(
                  a: aBuffer.baseAddress!, lda: lda, rows: rows, b: bBuffer.baseAddress!, steps: steps,
                  table: problem.epilogue.table(channel: 0), lanes: problem.epilogue.lanes,
                  c: outputBuffer.baseAddress!, ldc: ldc, form: form, flipsSign: flipsSign)
              }
            }
          }
          for row in 0..<rows {
            for column in 0..<ldc {
              let actual = output[row * ldc + column]
              if column < 16 {
                XCTAssertEqual(
                  Int32(actual), problem.expected(sums[row * 16 + column], channel: column),
                  "\(label) \(form) flips \(flipsSign) row \(row) column \(column)")
              } else {
                XCTAssertEqual(actual, guardValue, "\(label): wrote past 16 columns")
              }
            }
          }
        }
        // The form a convolution with these constants runs, and every step.
        let form = signed ? problem.epilogue.form(storing: Int8.self) : problem.epilogue.form(storing: UInt8.self)
        formsSeen.insert(form)
        for flipsSign in kernels.flipsSigns ? [false, true] : [false] {
          for form in [form, .complete] {
            signed ? run(Int8.self, flipsSign: flipsSign, form: form) : run(UInt8.self, flipsSign: flipsSign, form: form)
          }
        }
      }
      XCTAssertEqual(kernels.flipsSigns, isa == .avx512VNNI, "AVX512-VNNI reads int8 A in place")
    }
  }

  /// The requantizing tiles of several panels (every panel count and height of every VNNI level
  /// this machine runs, panels `panelBytes` apart with gaps, int8 A read in place where the level
  /// flips signs): each panel's 16 output bytes per row equal the scalar rescale of the sums
  /// computed here from first principles with that panel's channel constants, and nothing is
  /// written past the tile's columns.
  func testMultiPanelTilesMatchFirstPrinciples() throws {
    let isas = DotProductISA.allCases.filter { GeneratedDotProductKernels.kernels(for: $0) != nil }
    var random = SeededGenerator(seed: 1207)
    for isa in isas {
      let kernels = try XCTUnwrap(GeneratedDotProductKernels.kernels(for: isa))
      for columns in 1...kernels.maximumColumns {
        for rows in 1...kernels.maximumRows(columns: columns) {
          let trial = columns * 16 + rows
          let signed = trial % 4 < 2
          let steps = random.int(0...24)
          let lda = 4 * steps + random.int(0...5)
          let panelBytes = 64 * (steps + random.int(0...2))
          let a = (0..<rows * lda).map { _ in UInt8.random(in: 0...255, using: &random) }
          let b = (0..<max(1, columns * panelBytes)).map { _ in Int8.random(in: -128...127, using: &random) }
          let problem = Problem(random: &random, channels: 16 * columns, signed: signed, trial: trial)
          let ldc = 16 * columns + random.int(0...7)
          let label = "\(isa) \(rows)×\(columns) steps \(steps) \(problem.rounding) \(signed ? "int8" : "uint8")"
          func run<Output: QuantizedInteger>(_ type: Output.Type, flipsSign: Bool) {
            let guardValue = Output(truncatingIfNeeded: 0x3C)
            let form = problem.epilogue.form(storing: Output.self)
            var output = [Output](repeating: guardValue, count: rows * ldc)
            (flipsSign ? a.map { $0 ^ 0x80 } : a).withUnsafeBufferPointer { aBuffer in
              b.withUnsafeBufferPointer { bBuffer in
                output.withUnsafeMutableBufferPointer { outputBuffer in
                  kernels.requantizedTile(
                    a: aBuffer.baseAddress!, lda: lda, rows: rows, b: bBuffer.baseAddress!, steps: steps,
                    table: problem.epilogue.table(channel: 0), lanes: problem.epilogue.lanes,
                    c: outputBuffer.baseAddress!, ldc: ldc, form: form, flipsSign: flipsSign, columns: columns,
                    panelBytes: panelBytes)
                }
              }
            }
            for row in 0..<rows {
              for column in 0..<ldc {
                let actual = output[row * ldc + column]
                guard column < 16 * columns else {
                  XCTAssertEqual(actual, guardValue, "\(label): wrote past the tile at row \(row), column \(column)")
                  continue
                }
                let (panel, lane) = column.quotientAndRemainder(dividingBy: 16)
                var sum: Int32 = 0
                for k in 0..<4 * steps {
                  let weight = b[panel * panelBytes + (k / 4) * 64 + lane * 4 + k % 4]
                  sum &+= Int32(a[row * lda + k]) &* Int32(weight)
                }
                XCTAssertEqual(
                  Int32(actual), problem.expected(sum, channel: column),
                  "\(label) flips \(flipsSign) row \(row) column \(column)")
              }
            }
          }
          for flipsSign in kernels.flipsSigns ? [false, true] : [false] {
            signed ? run(Int8.self, flipsSign: flipsSign) : run(UInt8.self, flipsSign: flipsSign)
          }
        }
      }
      XCTAssertEqual(kernels.maximumColumns, isa == .avx512VNNI ? 4 : 1, "AVX-512 tiles span up to four panels")
    }
  }

  /// The store-masking one-panel tiles (AVX512-VNNI): every height, 1–16 stored columns, output rows
  /// only as far apart as the stored columns (or a few bytes more), int8 and uint8, int8 A read in
  /// place or not, the convolution's form and the complete one: each stored byte equals the scalar
  /// rescale of the first-principles sum, and no byte past a row's stored columns (nor past the
  /// last row) changes. The generator refuses the mask on AVX-VNNI, on several panels and on sums.
  func testMaskedTilesStoreOnlyTheirColumns() throws {
    for isa in DotProductISA.allCases where !DotProductKernelGenerator.masksStores(isa) {
      XCTAssertThrowsError(try DotProductKernelGenerator.code(isa: isa, rows: 1, output: .int8, masksStore: true))
    }
    XCTAssertThrowsError(try DotProductKernelGenerator.code(isa: .avx512VNNI, rows: 1, columns: 2, output: .int8, masksStore: true))
    XCTAssertThrowsError(try DotProductKernelGenerator.code(isa: .avx512VNNI, rows: 1, masksStore: true))
    let levels = DotProductISA.allCases.compactMap { GeneratedDotProductKernels.kernels(for: $0) }.filter(\.masksStores)
    #if arch(x86_64) && os(Linux)
      if DotProductISA.supported.contains(.avx512VNNI) { XCTAssertFalse(levels.isEmpty, "AVX512-VNNI masks stores") }
    #endif
    var random = SeededGenerator(seed: 1208)
    for kernels in levels {
      for rows in 1...kernels.maximumRows(columns: 1) {
        for trial in 0..<4 {
          let validColumns = trial == 0 ? 1 : trial == 1 ? 16 : random.int(2...15)
          let signed = (rows + trial) % 2 == 0
          let steps = random.int(0...12)
          let lda = 4 * steps + random.int(0...5)
          let a = (0..<rows * lda).map { _ in UInt8.random(in: 0...255, using: &random) }
          let b = (0..<max(1, steps * 64)).map { _ in Int8.random(in: -128...127, using: &random) }
          let problem = Problem(random: &random, channels: 16, signed: signed, trial: rows * 4 + trial)
          let ldc = validColumns + random.int(0...3)
          let label = "\(kernels.isa) rows \(rows) columns \(validColumns) ldc \(ldc) steps \(steps) \(signed ? "int8" : "uint8")"
          func run<Output: QuantizedInteger>(_ type: Output.Type, flipsSign: Bool, form: RequantizationForm) throws {
            let family = try XCTUnwrap(
              kernels.tiles(Output.isSigned ? .int8 : .uint8, form: form, flipsSign: flipsSign, masksStore: true), label)
            XCTAssertTrue(family.masksStore && family.maximumColumns == 1, label)
            let guardValue = Output(truncatingIfNeeded: 0x5C)
            var output = [Output](repeating: guardValue, count: rows * ldc + 16)
            (flipsSign ? a.map { $0 ^ 0x80 } : a).withUnsafeBufferPointer { aBuffer in
              b.withUnsafeBufferPointer { bBuffer in
                output.withUnsafeMutableBufferPointer { outputBuffer in
                  family.requantizedTile(
                    a: aBuffer.baseAddress!, lda: lda, rows: rows, b: bBuffer.baseAddress!, steps: steps,
                    table: problem.epilogue.table(channel: 0), lanes: problem.epilogue.lanes,
                    c: outputBuffer.baseAddress!, ldc: ldc, validColumns: validColumns)
                }
              }
            }
            for index in output.indices {
              let (row, column) = index.quotientAndRemainder(dividingBy: ldc)
              guard row < rows && column < validColumns else {
                XCTAssertEqual(output[index], guardValue, "\(label): wrote byte \(index)")
                continue
              }
              var sum: Int32 = 0
              for k in 0..<4 * steps { sum &+= Int32(a[row * lda + k]) &* Int32(b[(k / 4) * 64 + column * 4 + k % 4]) }
              XCTAssertEqual(
                Int32(output[index]), problem.expected(sum, channel: column),
                "\(label) \(form) flips \(flipsSign) row \(row) column \(column)")
            }
          }
          for flipsSign in [false, true] {
            for form in [signed ? problem.epilogue.form(storing: Int8.self) : problem.epilogue.form(storing: UInt8.self), .complete] {
              try signed ? run(Int8.self, flipsSign: flipsSign, form: form) : run(UInt8.self, flipsSign: flipsSign, form: form)
            }
          }
        }
      }
    }
  }
}
