import Foundation
import XCTest

import TFLiteFormat
import TFLiteLinearAlgebra
@testable import TFLiteRuntime

/// The float logistic approximation (`LogisticApproximation`): the Swift SIMD code and the
/// generated AVX-512 kernels (`GeneratedLogisticKernels`: fused multiply-adds, a reciprocal
/// estimate and a Newton step instead of the division) each against LiteRT over the whole float
/// range and against a double-precision reference on a dense sweep of bit patterns, and the
/// generated kernels against the Swift code within 3 ulp in every form, in place and out of place,
/// without writing past their vectors.
final class GeneratedLogisticKernelTests: XCTestCase {
  /// e^−87 / (1 + e^−87) rounded to float, the smallest result: −|x| is capped at −87.
  private static let smallestResult: Float = 1.6458115e-38

  /// 1/(1 + e^−x) in double precision.
  private static func exactLogistic(_ x: Float) -> Double { 1 / (1 + Foundation.exp(-Double(x))) }

  /// Asserts the approximation's stated accuracy for `input` and its `output`: NaN stays NaN; at
  /// most 1e-7 from the exact value; for x ≥ −87 a relative error of at most 3.2e-7 and 4 ulp of
  /// the correctly rounded value (LiteRT's reference kernel reaches 1.2e-4 at x = −9); below −87
  /// the capped value, at most e^−87.
  private func assertAccuracy(_ input: [Float], _ output: [Float], file: StaticString = #filePath, line: UInt = #line) {
    var worstAbsolute = 0.0, worstRelative = 0.0
    for (x, y) in zip(input, output) {
      if x.isNaN {
        XCTAssertTrue(y.isNaN, "logistic(NaN) = \(y)", file: file, line: line)
        continue
      }
      let exact = Self.exactLogistic(x)
      worstAbsolute = max(worstAbsolute, abs(Double(y) - exact))
      if x >= -87 {
        worstRelative = max(worstRelative, abs(Double(y) - exact) / exact)
        XCTAssertLessThanOrEqual(ulpDistance(y, Float(exact)), 4, "logistic(\(x)) = \(y)", file: file, line: line)
      } else {
        XCTAssertTrue(y >= 0 && y <= Self.smallestResult, "logistic(\(x)) = \(y)", file: file, line: line)
      }
    }
    XCTAssertLessThanOrEqual(worstAbsolute, 1e-7, file: file, line: line)
    XCTAssertLessThanOrEqual(worstRelative, 3.2e-7, file: file, line: line)
  }

  /// The values of `Scripts/make_logistic_sweep.py`: NaN, ±inf, ±0, subnormals, huge values and
  /// 4096 magnitudes of each sign.
  private static func liteRTSweepInput() throws -> [Float] {
    try TestModelManifest.array("activations/logistic_sweep.input.npy").floatValues()
  }

  /// Asserts that `output`, a route's logistic of `liteRTSweepInput()`, stays within 1.5e-7 of
  /// LiteRT's reference and builtin kernels everywhere and within 5e-7 relative of the builtin
  /// kernel for x ≥ −80, with the stated accuracy against the exact values.
  private func assertMatchesLiteRT(_ input: [Float], _ output: [Float], route: String) throws {
    assertAccuracy(input, output)
    for name in ["litert_reference", "litert_builtin"] {
      let litert = try TestModelManifest.array("activations/logistic_sweep.\(name).npy").floatValues()
      XCTAssertEqual(litert.count, input.count)
      for (index, (ours, theirs)) in zip(output, litert).enumerated() {
        if theirs.isNaN {
          XCTAssertTrue(ours.isNaN, "\(route), \(name) element \(index)")
          continue
        }
        let difference = abs(ours - theirs)
        XCTAssertLessThanOrEqual(difference, 1.5e-7, "\(route), \(name): logistic(\(input[index])) = \(ours), LiteRT \(theirs)")
        if name == "litert_builtin" && input[index] >= -80 {
          XCTAssertLessThanOrEqual(
            difference / theirs, 5e-7, "\(route), \(name): logistic(\(input[index])) = \(ours), LiteRT \(theirs)")
        }
      }
    }
  }

  /// LiteRT's LOGISTIC over the sweep: the Swift route stays within LiteRT's reach
  /// (`assertMatchesLiteRT`) and gives the limits exactly.
  func testSwiftLogisticMatchesLiteRTOverTheWholeFloatRange() throws {
    let input = try Self.liteRTSweepInput()
    try assertMatchesLiteRT(input, runUnary(FloatFunction<Logistic>(), input, chunks: 3), route: "Swift")
    let limits = runUnary(FloatFunction<Logistic>(), [.infinity, -.infinity, 0, -0.0, .greatestFiniteMagnitude])
    XCTAssertEqual(limits[0], 1)
    XCTAssertEqual(limits[1], Self.smallestResult)
    // The polynomial's constant term is 1.0000001, so 0 gives one ulp above ½.
    XCTAssertEqual(limits[2], 0.5, accuracy: 6e-8)
    XCTAssertEqual(limits[3], 0.5, accuracy: 6e-8)
    XCTAssertEqual(limits[4], 1)
  }

  /// Every 4093rd bit pattern of the 2^32 (1.05 million floats of every sign, magnitude and
  /// class): the stated accuracy against double precision.
  func testSwiftLogisticDenseSweepAgainstDoublePrecision() {
    let input = stride(from: UInt64(0), to: 1 << 32, by: 4093).map { Float(bitPattern: UInt32($0)) }
    assertAccuracy(input, runUnary(FloatFunction<Logistic>(), input, chunks: 4))
  }

  /// Every form generates, also on machines that cannot run it (its instructions are pinned by the
  /// NASM encoding table), and ends with `vzeroupper; ret`.
  func testEveryFormGenerates() {
    for form in LogisticKernelGenerator.Form.allCases {
      XCTAssertEqual(Array(LogisticKernelGenerator.code(form).suffix(4)), [0xC5, 0xF8, 0x77, 0xC3], "\(form)")
    }
  }

  /// The generated kernels in every form (logistic, SiLU, SiLU clamped to RELU6's and
  /// RELU_N1_TO_1's ranges) on the LiteRT sweep and every 4093rd bit pattern: within 3 ulp of the
  /// Swift code (NaN for NaN; each route is within about 1.5 ulp of the exact product, and they
  /// can round to opposite sides: 3 ulp apart at most on these 1.06 M inputs), out of place and in place, writing nothing past their vectors; the
  /// generated logistic also within LiteRT's reach and the stated accuracy on its own. Without
  /// AVX-512 (or with generated kernels turned off) there are none, and the test checks that instead.
  func testGeneratedKernelsStayWithinThreeUlpOfTheSwiftCode() throws {
    guard let kernels = GeneratedLogisticKernels.preferred else {
      XCTAssertTrue(GeneratedKernelISA.supported != .avx512 || GeneratedFloatKernels.isTurnedOffByEnvironment)
      return
    }
    let sweep = try Self.liteRTSweepInput()
    let sweepVectors = Array(sweep.prefix(sweep.count / 16 * 16))
    var logisticOfSweep = [Float](repeating: 0, count: sweepVectors.count)
    logisticOfSweep.withUnsafeMutableBufferPointer { buffer in
      kernels.run(.logistic, input: sweepVectors, output: buffer.baseAddress!, vectorCount: sweepVectors.count / 16)
    }
    try assertMatchesLiteRT(
      sweep, logisticOfSweep + runUnary(FloatFunction<Logistic>(), Array(sweep[sweepVectors.count...])),
      route: "generated")
    let dense = stride(from: UInt64(0), to: 1 << 32, by: 4093).map { Float(bitPattern: UInt32($0)) }
    let denseVectors = Array(dense.prefix(dense.count / 16 * 16))
    var logisticOfDense = [Float](repeating: 0, count: denseVectors.count)
    logisticOfDense.withUnsafeMutableBufferPointer { buffer in
      kernels.run(.logistic, input: denseVectors, output: buffer.baseAddress!, vectorCount: denseVectors.count / 16)
    }
    assertAccuracy(denseVectors, logisticOfDense)

    let input = Array((sweep + dense).prefix((sweep.count + dense.count) / 16 * 16))
    let ranges: [(String, ActivationRange<Float>)] = [("RELU6", .init(lower: 0, upper: 6)), ("RELU_N1_TO_1", .init(lower: -1, upper: 1))]
    var cases: [(String, LogisticKernelGenerator.Form, ActivationRange<Float>, [Float])] = [
      ("LOGISTIC", .logistic, .init(lower: -.infinity, upper: .infinity), runUnary(FloatFunction<Logistic>(), input)),
      ("SiLU", .sigmoidLinearUnit, .init(lower: -.infinity, upper: .infinity),
       runUnary(SigmoidLinearUnit(activation: .init(lower: -.infinity, upper: .infinity), clamps: false), input)),
    ]
    for (name, range) in ranges {
      cases.append(("SiLU \(name)", .clampedSigmoidLinearUnit, range, runUnary(SigmoidLinearUnit(activation: range, clamps: true), input)))
    }
    let sentinel = Float(bitPattern: 0x7FC0_1234)
    for (name, form, range, expected) in cases {
      var output = [Float](repeating: sentinel, count: input.count + 16)
      output.withUnsafeMutableBufferPointer { buffer in
        kernels.run(
          form, input: input, output: buffer.baseAddress!, vectorCount: input.count / 16, lower: range.lower, upper: range.upper)
      }
      XCTAssertTrue(output[input.count...].allSatisfy { $0.bitPattern == sentinel.bitPattern }, "\(name) wrote past its vectors")
      var inPlace = input
      inPlace.withUnsafeMutableBufferPointer { buffer in
        kernels.run(
          form, input: buffer.baseAddress!, output: buffer.baseAddress!, vectorCount: input.count / 16, lower: range.lower,
          upper: range.upper)
      }
      XCTAssertEqual(Array(output[..<input.count]).map(\.bitPattern), inPlace.map(\.bitPattern), "\(name): in place differs")
      for index in input.indices
      where expected[index].isNaN ? !output[index].isNaN : ulpDistance(output[index], expected[index]) > 3 {
        XCTFail("\(name)(\(input[index])): generated \(output[index]), Swift \(expected[index])")
        break
      }
    }
  }

  /// Every form on 0 to 5 vectors (the loop runs two vectors per turn and a last single one):
  /// each vector within 3 ulp of the Swift code and nothing written past the last.
  func testEveryVectorCountWritesExactlyItsVectors() {
    guard let kernels = GeneratedLogisticKernels.preferred else { return }
    var random = SeededGenerator(seed: 31)
    let input = random.floats(5 * 16, in: -20...20)
    let unbounded = ActivationRange<Float>(lower: -.infinity, upper: .infinity)
    let relu6 = ActivationRange<Float>(lower: 0, upper: 6)
    let cases: [(LogisticKernelGenerator.Form, ActivationRange<Float>, [Float])] = [
      (.logistic, unbounded, runUnary(FloatFunction<Logistic>(), input)),
      (.sigmoidLinearUnit, unbounded, runUnary(SigmoidLinearUnit(activation: unbounded, clamps: false), input)),
      (.clampedSigmoidLinearUnit, relu6, runUnary(SigmoidLinearUnit(activation: relu6, clamps: true), input)),
    ]
    let sentinel = Float(bitPattern: 0x7FC0_4321)
    for (form, range, expected) in cases {
      for vectorCount in 0...5 {
        var output = [Float](repeating: sentinel, count: input.count + 16)
        output.withUnsafeMutableBufferPointer { buffer in
          kernels.run(
            form, input: input, output: buffer.baseAddress!, vectorCount: vectorCount, lower: range.lower, upper: range.upper)
        }
        let written = vectorCount * 16
        XCTAssertTrue(output[written...].allSatisfy { $0.bitPattern == sentinel.bitPattern }, "\(form) \(vectorCount): wrote past")
        for index in 0..<written where ulpDistance(output[index], expected[index]) > 3 {
          XCTFail("\(form) \(vectorCount) vectors: element \(index) is \(output[index]), Swift \(expected[index])")
          break
        }
      }
    }
  }

  /// The LOGISTIC kernel and the fused SiLU through the registered kernels give results within
  /// 3 ulp of each other with generated kernels on and off (odd element counts: the last lanes run
  /// in Swift), and say which code they run.
  func testKernelsAgreeWithinThreeUlpWithGeneratedKernelsOnAndOff() throws {
    var random = SeededGenerator(seed: 23)
    let values = random.floats(1237, in: -30...30) + [.nan, .infinity, -.infinity, 0, -0.0, 1e-40]
    var results: [[Float]] = []
    for allowed in [true, false] {
      try GeneratedFloatKernels.$areAllowed.withValue(allowed) {
        let logistic = KernelHarness.node("LOGISTIC", [KernelHarness.floatTensor(0, [values.count], values)], KernelHarness.outputTensor(1), .none)
        results.append(try KernelHarness.run(logistic, threads: 2).values)
        var options = MulOptions()
        options.fusedActivationFunction = .relu6
        let silu = try SigmoidLinearUnitKernel(node: KernelHarness.node(
          "MUL", [KernelHarness.floatTensor(0, [values.count], values)], KernelHarness.outputTensor(1), .mulOptions(options)))
        let expectedLevel = allowed && GeneratedLogisticKernels.preferred != nil ? "generated AVX-512F" : KernelDescription.swiftLevel
        XCTAssertEqual(silu.kernelDescription, expectedLevel)
      }
    }
    XCTAssertEqual(results[0].count, results[1].count)
    for (index, (on, off)) in zip(results[0], results[1]).enumerated() {
      if off.isNaN {
        XCTAssertTrue(on.isNaN, "element \(index): generated \(on), Swift NaN")
      } else {
        XCTAssertLessThanOrEqual(ulpDistance(on, off), 3, "logistic(\(values[index])): generated \(on), Swift \(off)")
      }
    }
    assertAccuracy(values, results[0])
    assertAccuracy(values, results[1])
  }
}
