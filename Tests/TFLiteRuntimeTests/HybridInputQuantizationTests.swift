import TFLiteFormat
import TFLiteLinearAlgebra
import XCTest

@testable import TFLiteRuntime

/// The run-time input quantizer of the hybrid kernels against a plain scalar form of the one
/// LiteRT 2.3's x86 wheels run (`NeonSymmetricQuantizeFloats` / `NeonAsymmetricQuantizeFloats`
/// through the SSE translation of `tensor_utils`), written here from that code's steps:
/// - symmetric: range = max(|min|, |max|) in float, scale = range / 127, 1 / scale = 127 / range;
/// - asymmetric: rmin = min(0, min), rmax = max(0, max) in float, scale = (rmax − rmin) / 255
///   (the subtraction in float, the division in double), the zero point nudged from whichever of
///   min or max gives the smaller error and rounded half away from zero, 1 / scale in double;
/// - an empty range gives zeros, scale 1, zero point 0;
/// - values of whole blocks of eight: x · (1 / scale) plus 0.5 (−0.5 when negative), truncated,
///   plus the zero point, clamped to the type; the last `count % 8` values round half away from zero.
///
/// Every row goes through the Swift code and the generated kernels of every instruction set this
/// machine runs (`GeneratedHybridKernels`: AVX2, AVX-512).
final class HybridInputQuantizationTests: XCTestCase {
  /// The Swift code (nil) and the generated kernels of every instruction set this machine runs.
  private let routes: [GeneratedHybridKernels?] =
    [nil] + GeneratedKernelISA.allCases.compactMap { GeneratedHybridKernels.kernels(for: $0) }

  /// The reference quantization of `values`: the int8 values, scale and zero point.
  private func reference(_ values: [Float], asymmetric: Bool) -> (values: [Int8], scale: Float, zeroPoint: Int32) {
    var low = values[0]
    var high = values[0]
    for value in values {
      if value < low { low = value }
      if value > high { high = value }
    }
    let scale: Float
    let inverse: Float
    let zeroPoint: Int32
    let lowest: Int32
    if asymmetric {
      let rangeLow = min(Float(0), low)
      let rangeHigh = max(Float(0), high)
      if rangeLow == rangeHigh { return ([Int8](repeating: 0, count: values.count), 1, 0) }
      let doubleScale = Double(rangeHigh - rangeLow) / (127 - -128)
      let fromLow = -128 - Double(rangeLow) / doubleScale
      let fromHigh = 127 - Double(rangeHigh) / doubleScale
      let chosen =
        abs(-128.0) + abs(Double(rangeLow) / doubleScale) < abs(127.0) + abs(Double(rangeHigh) / doubleScale)
        ? fromLow : fromHigh
      zeroPoint = chosen <= -128 ? -128 : chosen >= 127 ? 127 : Int32(chosen.rounded(.toNearestOrAwayFromZero))
      scale = Float(doubleScale)
      inverse = scale == 0 ? 0 : Float(1.0 / Double(scale))
      lowest = -128
    } else {
      let range = max(abs(low), abs(high))
      if range == 0 { return ([Int8](repeating: 0, count: values.count), 1, 0) }
      scale = range / 127
      inverse = 127 / range
      zeroPoint = 0
      lowest = -127
    }
    let wholeBlocks = values.count / 8 * 8
    let quantized = values.enumerated().map { index, value -> Int8 in
      let product = inverse * value
      let rounded =
        index < wholeBlocks
        ? Int32(product + (product < 0 ? -0.5 : 0.5)) : Int32(product.rounded(.toNearestOrAwayFromZero))
      return Int8(min(127, max(lowest, rounded + zeroPoint)))
    }
    return (quantized, scale, zeroPoint)
  }

  /// Runs the quantizer on `values` read from an odd offset, signed and unsigned, on `route`.
  private func quantized(
    _ values: [Float], _ quantization: HybridInputQuantization, route: GeneratedHybridKernels?
  ) -> (
    signed: [Int8], unsigned: [Int8], parameters: HybridInputQuantization.Parameters
  ) {
    let generated = route.map { Unmanaged.passUnretained($0) }
    let source = [Float.nan] + values
    var signed = [Int8](repeating: 0x55, count: values.count + 1)
    var unsigned = signed
    let parameters = source.withUnsafeBufferPointer { buffer in
      signed.withUnsafeMutableBufferPointer {
        quantization.quantize(buffer.baseAddress! + 1, count: values.count, into: $0.baseAddress!, generated: generated)
      }
    }
    let unsignedParameters = source.withUnsafeBufferPointer { buffer in
      unsigned.withUnsafeMutableBufferPointer {
        quantization.quantize(
          buffer.baseAddress! + 1, count: values.count, into: $0.baseAddress!, unsigned: true, generated: generated)
      }
    }
    XCTAssertEqual(signed.last, 0x55, "wrote past the end")
    XCTAssertEqual(unsigned.last, 0x55, "wrote past the end")
    XCTAssertEqual(parameters.scale.bitPattern, unsignedParameters.scale.bitPattern)
    XCTAssertEqual(parameters.zeroPoint, unsignedParameters.zeroPoint)
    return (Array(signed.dropLast()), Array(unsigned.dropLast()), parameters)
  }

  /// Quantizes `values` both ways and compares every output with the reference.
  private func assertMatchesReference(_ values: [Float], _ label: String, file: StaticString = #filePath, line: UInt = #line) {
    for quantization in [HybridInputQuantization.symmetric, .asymmetric] {
      for route in routes {
        let expected = reference(values, asymmetric: quantization == .asymmetric)
        let actual = quantized(values, quantization, route: route)
        let context = "\(label), \(quantization), \(values.count) values, \(route.map { "generated \($0.isa)" } ?? "Swift")"
        XCTAssertEqual(actual.parameters.scale.bitPattern, expected.scale.bitPattern, "scale, \(context)", file: file, line: line)
        XCTAssertEqual(actual.parameters.zeroPoint, expected.zeroPoint, "zero point, \(context)", file: file, line: line)
        XCTAssertEqual(actual.signed, expected.values, context, file: file, line: line)
        XCTAssertEqual(
          actual.unsigned.map { UInt8(bitPattern: $0) }, expected.values.map { UInt8(Int16($0) + 128) },
          "unsigned form, \(context)", file: file, line: line)
      }
    }
  }

  func testRandomRowsMatchTheReference() {
    var generator = SeededGenerator(seed: 0x5eed_12)
    let counts = [1, 3, 7, 8, 9, 15, 16, 17, 23, 24, 25, 31, 32, 33, 40, 47, 48, 63, 64, 100, 257]
    for trial in 0..<600 {
      let count = trial < counts.count ? counts[trial] : Int(generator.next() % 300) + 1
      let magnitude = [Float(1e-30), 1e-3, 1, 255, 1e6, 1e30][Int(generator.next() % 6)]
      // Shifted ranges give asymmetric zero points across the whole int8 range.
      let shift = Float(Int(generator.next() % 5) - 2) * magnitude * 0.5
      let values = (0..<count).map { _ -> Float in
        switch generator.next() % 8 {
        // Exact multiples of half a step: the ties that tell the two rounding rules apart.
        case 0: return Float(Int(generator.next() % 511) - 255) / 2 * magnitude / 127
        case 1: return 0
        default: return Float(Double(generator.next() % 2_000_001) / 1_000_000 - 1) * magnitude + shift
        }
      }
      assertMatchesReference(values, "trial \(trial)")
    }
  }

  func testEdgeRowsMatchTheReference() {
    for count in [1, 8, 13, 16, 24, 37] {
      assertMatchesReference([Float](repeating: 0, count: count), "all zero")
      assertMatchesReference([Float](repeating: -0.0, count: count), "all negative zero")
      assertMatchesReference([Float](repeating: 3.25, count: count), "constant positive")
      assertMatchesReference([Float](repeating: -7, count: count), "constant negative")
      assertMatchesReference(
        (0..<count).map { $0 % 2 == 0 ? Float.greatestFiniteMagnitude : -Float.greatestFiniteMagnitude },
        "the widest finite range (its float difference overflows to infinity)")
      assertMatchesReference(
        (0..<count).map { Float($0 % 3) * 1e-36 }, "tiny steps")
      assertMatchesReference((0..<count).map { Float($0) - 0.5 }, "halves")
    }
  }

  /// LiteRT converts the scaled values with `cvttps2dq` (C++ leaves NaN and out-of-range
  /// conversions undefined); ours are documented in HybridOperands.swift: a NaN value (not the
  /// first, which the range scan keeps) is stored as the zero point; an infinite value makes the
  /// scale infinite and every value the zero point.
  func testNonFiniteValuesGiveTheDocumentedResult() {
    var values = (0..<21).map { Float($0) - 10 }
    values[9] = .nan
    var finite = values
    finite[9] = 0
    for quantization in [HybridInputQuantization.symmetric, .asymmetric] {
      for route in routes {
        let withNaN = quantized(values, quantization, route: route)
        let expected = reference(finite, asymmetric: quantization == .asymmetric)
        XCTAssertEqual(withNaN.parameters.scale, expected.scale, "\(quantization)")
        var expectedValues = expected.values
        expectedValues[9] = Int8(expected.zeroPoint)
        XCTAssertEqual(withNaN.signed, expectedValues, "NaN, \(quantization)")

        var infinite = finite
        infinite[4] = .infinity
        let withInfinity = quantized(infinite, quantization, route: route)
        XCTAssertEqual(withInfinity.parameters.scale, .infinity, "\(quantization)")
        XCTAssertEqual(
          withInfinity.signed, [Int8](repeating: Int8(withInfinity.parameters.zeroPoint), count: infinite.count),
          "infinity, \(quantization)")
      }
    }
  }

  /// A whole image quantized on several threads (fewer runs than threads: each run is cut into
  /// chunks whose ranges merge) gives the reference's values, scale and zero point: random run
  /// lengths around the chunk size with every `count % 8` tail, one to three runs, one to four
  /// threads, signed and unsigned; a NaN past the first chunk is passed over by the range and
  /// stored as the zero point, as on one thread; an all-zero run gives zeros.
  func testImagesSplitOverThreadsQuantizeAsTheReference() {
    var generator = SeededGenerator(seed: 0x5011_7)
    for trial in 0..<24 {
      let runLength = [16_384, 40_000, 70_001, 131_079][trial % 4] + Int(generator.next() % 64)
      let runs = 1 + trial % 3
      let threads = 1 + trial % 4
      var values = (0..<runs * runLength).map { _ in
        Float(Double(generator.next() % 2_000_001) / 1_000_000 - 0.7) * [Float(1e-3), 1, 300][trial % 3]
      }
      let special = trial % 5
      if special == 1 { for index in 0..<runLength { values[index] = 0 } }
      let nanIndex = runLength - 5
      if special == 2 { values[nanIndex] = .nan }
      for quantization in [HybridInputQuantization.symmetric, .asymmetric] {
        for unsigned in [false, true] {
          var layout = ScratchLayout()
          let scratchPlan = HybridInputScratch(runs: runs, runLength: runLength, scratch: &layout)
          let scratch = UnsafeMutableRawPointer.allocate(byteCount: layout.byteCount, alignment: 64)
          defer { scratch.deallocate() }
          let quantized = values.withUnsafeBufferPointer {
            scratchPlan.quantize(
              $0.baseAddress!, as: quantization, scratch: scratch, context: EvalContext(threadCount: threads, scratch: nil),
              unsigned: unsigned)
          }
          for run in 0..<runs {
            var finite = Array(values[run * runLength..<(run + 1) * runLength])
            let hasNaN = special == 2 && run == 0
            if hasNaN { finite[nanIndex] = 0 }
            var expected = reference(finite, asymmetric: quantization == .asymmetric)
            if hasNaN { expected.values[nanIndex] = Int8(expected.zeroPoint) }
            let label = "trial \(trial): \(runs) runs of \(runLength), \(threads) threads, \(quantization), unsigned \(unsigned), run \(run)"
            XCTAssertEqual(quantized.scales[run].bitPattern, expected.scale.bitPattern, label)
            XCTAssertEqual(quantized.zeroPoints[run], expected.zeroPoint, label)
            let stored = Array(UnsafeBufferPointer(start: quantized.values + run * runLength, count: runLength))
            let expectedStored = expected.values.map { unsigned ? Int8(truncatingIfNeeded: Int16($0) + 128) : $0 }
            XCTAssertEqual(stored, expectedStored, label)
          }
        }
      }
    }
  }
}
