import TFLiteLinearAlgebra
import XCTest

@testable import TFLiteRuntime

/// The generated kernels of the dynamic-range path (`GeneratedHybridKernels`: input quantization
/// and the float epilogue of the GEMM tiles) against the Swift code they replace, on every
/// instruction set this machine runs (AVX-512 and, by asking for it, AVX2): the same range, scale, zero point and bytes on random rows and spans, with
/// no byte read or written outside the blocks asked for; a refused mapping leaves the Swift code's
/// bytes. `HybridInputQuantizationTests` checks both quantizer routes against LiteRT's arithmetic,
/// `HybridGEMMTests` the convolutions with generated kernels on and off against integer sums.
final class GeneratedHybridKernelTests: XCTestCase {
  /// The generated kernels of every instruction set this machine runs.
  private let generatedRoutes = GeneratedKernelISA.allCases.compactMap { GeneratedHybridKernels.kernels(for: $0) }

  /// A random float of one of the shapes that matter: ties of half a step, zeros of both signs,
  /// huge and tiny values, now and then NaN or an infinity when `nonFinite`.
  private func randomValue(_ generator: inout SeededGenerator, magnitude: Float, nonFinite: Bool) -> Float {
    switch generator.next() % 16 {
    case 0: return Float(Int(generator.next() % 511) - 255) / 2 * magnitude / 127
    case 1: return 0
    case 2: return -0.0
    case 3 where nonFinite: return [Float.nan, .infinity, -.infinity][Int(generator.next() % 3)]
    case 4: return Float(bitPattern: UInt32(truncatingIfNeeded: generator.next()))
    default: return Float(Double(generator.next() % 2_000_001) / 1_000_000 - 1) * magnitude
    }
  }

  /// The Swift and the generated quantizers agree on random rows (lengths 1–300, signed and unsigned, symmetric and asymmetric)
  /// and on random 16-aligned spans of a row quantized with the whole row's range.
  func testGeneratedQuantizerMatchesTheSwiftCodeOnRandomRowsAndSpans() {
    var generator = SeededGenerator(seed: 0x4b1d_0e)
    for trial in 0..<400 {
      let count = Int(generator.next() % 300) + 1
      let magnitude = [Float(1e-30), 1e-3, 1, 255, 1e6, 1e30][Int(generator.next() % 6)]
      let nonFinite = trial % 5 == 4
      let values = (0..<count).map { _ in randomValue(&generator, magnitude: magnitude, nonFinite: nonFinite) }
      let spanStart = Int(generator.next() % UInt64(count / 16 + 1)) * 16
      // Spans start at a multiple of 16 and end at one or at the row's end, as the callers cut them.
      let span = spanStart..<min(count, spanStart + 16 * Int(generator.next() % 5))
      for quantization in [HybridInputQuantization.symmetric, .asymmetric] {
        for unsigned in [false, true] {
          let expected = quantize(values, quantization, span: span, unsigned: unsigned, route: nil)
          for route in generatedRoutes {
            let actual = quantize(values, quantization, span: span, unsigned: unsigned, route: route)
            let label = "trial \(trial), \(count) values, span \(span), \(quantization), unsigned \(unsigned), \(route.isa)"
            XCTAssertEqual(actual.range.low.isNaN, expected.range.low.isNaN, label)
            if !expected.range.low.isNaN {
              XCTAssertEqual(actual.range.low, expected.range.low, label)
              XCTAssertEqual(actual.range.high, expected.range.high, label)
            }
            XCTAssertEqual(actual.row.scale.bitPattern, expected.row.scale.bitPattern, label)
            XCTAssertEqual(actual.row.zeroPoint, expected.row.zeroPoint, label)
            XCTAssertEqual(actual.row.bytes, expected.row.bytes, label)
            XCTAssertEqual(actual.span, expected.span, label)
          }
        }
      }
    }
  }

  /// The range of `values` (read from an odd offset), the whole row quantized, and `span` of it
  /// quantized alone with the row's range, on `route`; every output buffer has guard bytes on both
  /// sides, checked here.
  private func quantize(
    _ values: [Float], _ quantization: HybridInputQuantization, span: Range<Int>, unsigned: Bool,
    route: GeneratedHybridKernels?
  ) -> (range: (low: Float, high: Float), row: (scale: Float, zeroPoint: Int32, bytes: [Int8]), span: [Int8]) {
    let generated = route.map { Unmanaged.passUnretained($0) }
    let guardBytes = 64
    let source = [Float.nan] + values + [Float.nan]
    var row = [Int8](repeating: 0x5A, count: values.count + 2 * guardBytes)
    var spanBytes = row
    let (range, parameters) = source.withUnsafeBufferPointer { buffer in
      let input = buffer.baseAddress! + 1
      let range = HybridInputQuantization.range(input, span: 0..<values.count, first: values[0], generated: generated)
      let parameters = row.withUnsafeMutableBufferPointer {
        quantization.quantize(input, count: values.count, into: $0.baseAddress! + guardBytes, unsigned: unsigned, generated: generated)
      }
      spanBytes.withUnsafeMutableBufferPointer {
        _ = quantization.quantize(
          input, count: values.count, range: range, span: span, into: $0.baseAddress! + guardBytes, unsigned: unsigned,
          generated: generated)
      }
      return (range, parameters)
    }
    XCTAssertTrue(row.prefix(guardBytes).allSatisfy { $0 == 0x5A } && row.suffix(guardBytes).allSatisfy { $0 == 0x5A })
    let spanGuards = Array(spanBytes[..<(guardBytes + span.lowerBound)] + spanBytes[(guardBytes + span.upperBound)...])
    XCTAssertTrue(spanGuards.allSatisfy { $0 == 0x5A }, "bytes outside the span written")
    return (
      range, (parameters.scale, parameters.zeroPoint, Array(row[guardBytes..<(guardBytes + values.count)])),
      Array(spanBytes[(guardBytes + span.lowerBound)..<(guardBytes + span.upperBound)])
    )
  }

  /// The kernels themselves on random block counts (0–40) and random constants, including extreme
  /// scales and every zero point: the bytes equal the Swift quantizer's block rule lane for lane
  /// (computed here from the documented steps), exactly `blockCount × 16` bytes are written and the
  /// range covers exactly the blocks asked for (a NaN first value stays NaN).
  func testKernelsOnRandomBlockCountsAndConstantsTouchOnlyTheirBlocks() {
    var generator = SeededGenerator(seed: 0xf022_1e)
    for trial in 0..<300 {
      let blocks = trial < 3 ? trial : Int(generator.next() % 41)
      let values = (0..<(blocks * 16 + 16)).map { _ in
        randomValue(&generator, magnitude: [Float(1e-3), 1, 1e4][trial % 3], nonFinite: trial % 2 == 0)
      }
      let zeroPoint = Int32(Int(generator.next() % 256) - 128)
      let inverseScale = [Float(0), 1e-20, 0.01, 1, 127, 3e5, .infinity][Int(generator.next() % 7)]
      let (lowest, highest) = (Float(-128 - zeroPoint), Float(127 - zeroPoint))
      let unsigned = generator.next() % 2 == 0
      let expected = (0..<blocks * 16).map { index -> Int8 in
        let product = values[index] * inverseScale
        let rounded = product + (product.sign == .minus ? -0.5 : 0.5)
        let clamped = rounded.isNaN ? 0 : Int32(min(max(rounded, lowest), highest))
        return Int8(truncatingIfNeeded: clamped + zeroPoint + (unsigned ? 128 : 0))
      }
      let first = trial % 7 == 0 ? Float.nan : values[0]
      var expectedLow = first
      var expectedHigh = first
      for value in values.prefix(blocks * 16) {
        expectedLow = value < expectedLow ? value : expectedLow
        expectedHigh = value > expectedHigh ? value : expectedHigh
      }
      for route in generatedRoutes {
        let label = "trial \(trial), \(blocks) blocks, \(route.isa)"
        var output = [Int8](repeating: 0x33, count: blocks * 16 + 32)
        let (ran, range) = values.withUnsafeBufferPointer { input in
          output.withUnsafeMutableBufferPointer { output in
            (
              route.quantize(
                HybridQuantizeKernelArguments(
                  input: input.baseAddress!, output: UnsafeMutableRawPointer(output.baseAddress! + 16), blockCount: blocks,
                  inverseScale: inverseScale, lowest: lowest, highest: highest, zeroPoint: zeroPoint, unsigned: unsigned)),
              route.range(input.baseAddress!, blockCount: blocks, first: first, merge: HybridInputQuantization.merged)
            )
          }
        }
        XCTAssertTrue(ran, label)
        XCTAssertEqual(Array(output[16..<(16 + blocks * 16)]), expected, label)
        XCTAssertTrue(output.prefix(16).allSatisfy { $0 == 0x33 } && output.suffix(16).allSatisfy { $0 == 0x33 }, label)
        guard let range else { return XCTFail("\(label): no range") }
        XCTAssertEqual(range.low.isNaN, expectedLow.isNaN, label)
        XCTAssertEqual(range.high.isNaN, expectedHigh.isNaN, label)
        if !expectedLow.isNaN {
          XCTAssertEqual(range.low, expectedLow, label)
          XCTAssertEqual(range.high, expectedHigh, label)
        }
      }
    }
  }

  /// The float epilogue on random tiles of every instruction set: rows 0–70, 1–16 stored columns,
  /// random sums, corrections, scales (the per-channel and the combined order), biases and clamps
  /// (none, RELU, RELU6, the unbounded one of FULLY_CONNECTED): every stored float equals
  /// ((sum − correction) · first scale) · second scale + bias clamped, lane by lane in the same
  /// IEEE operations, and nothing outside the stored columns of each row is written.
  func testEpilogueMatchesTheSwiftStepsOnRandomTiles() {
    var generator = SeededGenerator(seed: 0xe911_06)
    for trial in 0..<200 {
      let rows = trial < 2 ? trial : Int(generator.next() % 71)
      let lanes = Int(generator.next() % 16) + 1
      let sumsStride = 16 * Int(generator.next() % 3 + 1)
      let outputStride = lanes + Int(generator.next() % 40)
      let sums = (0..<max(rows, 1) * sumsStride).map { _ in Int32(truncatingIfNeeded: generator.next() >> 40) - (1 << 23) }
      let correction = SIMD16<Int32>((0..<16).map { _ in Int32(Int(generator.next() % 200_001) - 100_000) })
      let firstScales = SIMD16<Float>((0..<16).map { _ in Float(generator.next() % 1000 + 1) * 1e-5 })
      let secondScale = trial % 2 == 0 ? 1 : Float(generator.next() % 1000 + 1) * 3e-4
      let bias = SIMD16<Float>((0..<16).map { _ in Float(Int(generator.next() % 2001) - 1000) / 64 })
      let clamp = [
        FloatClampRange.none, .relu, .relu6, FloatClampRange(lower: -.infinity, upper: .infinity),
      ][Int(generator.next() % 4)]
      var expected = [Float](repeating: -7, count: max(rows, 1) * outputStride + 16)
      for row in 0..<rows {
        for lane in 0..<lanes {
          let corrected = Float(sums[row * sumsStride + lane] &- correction[lane])
          expected[row * outputStride + lane] = clamp.apply(corrected * firstScales[lane] * secondScale + bias[lane])
        }
      }
      for route in generatedRoutes {
        var output = [Float](repeating: -7, count: expected.count)
        let ran = sums.withUnsafeBufferPointer { sums in
          output.withUnsafeMutableBufferPointer { output in
            route.storeFloats(
              sums: sums.baseAddress!, sumsStride: sumsStride, rows: rows, correction: correction,
              firstScales: firstScales, secondScale: secondScale, bias: bias, clamp: clamp, lanes: lanes,
              output: output.baseAddress!, outputStride: outputStride)
          }
        }
        XCTAssertTrue(ran, "\(route.isa)")
        XCTAssertEqual(
          output.map(\.bitPattern), expected.map(\.bitPattern),
          "trial \(trial): \(rows) rows, \(lanes) lanes, \(route.isa)")
      }
    }
  }
}
