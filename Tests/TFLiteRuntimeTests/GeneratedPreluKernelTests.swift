import XCTest

import TFLiteFormat
import TFLiteLinearAlgebra
@testable import TFLiteRuntime

/// Float PRELU: the generated kernel (`PreluKernelGenerator`) of every instruction set this machine
/// runs, and the PRELU kernel on every route (generated, Swift rows, broadcast walk), against the
/// definition x ≥ 0 ? x : α·x on randomized shapes and α layouts.
final class GeneratedPreluKernelTests: XCTestCase {
  /// The definition, in float arithmetic.
  private static func prelu(_ x: Float, _ alpha: Float) -> Float { x >= 0 ? x : x * alpha }

  /// Random values with the special cases mixed in: zeros of both signs, infinities, NaN.
  private static func values(_ count: Int, _ generator: inout SeededGenerator) -> [Float] {
    let specials: [Float] = [0, -0.0, .infinity, -.infinity, .nan, .leastNonzeroMagnitude, -.leastNormalMagnitude / 2]
    return (0..<count).map { _ in
      Int.random(in: 0..<10, using: &generator) == 0
        ? specials.randomElement(using: &generator)! : Float.random(in: -4...4, using: &generator)
    }
  }

  /// Asserts `actual` equals `expected` element by element (NaN equal to NaN, −0 equal to +0).
  private func assertSame(_ actual: [Float], _ expected: [Float], _ context: String, file: StaticString = #filePath, line: UInt = #line) {
    XCTAssertEqual(actual.count, expected.count, context, file: file, line: line)
    for (index, (a, e)) in zip(actual, expected).enumerated() where !(a == e || (a.isNaN && e.isNaN)) {
      XCTFail("\(context): element \(index) is \(a), expected \(e)", file: file, line: line)
      return
    }
  }

  /// Each level's kernel over random row counts, pattern lengths and starting pattern rows: every
  /// output row equals the definition with the pattern row it meets, and nothing past the last row
  /// is written.
  func testGeneratedKernelMatchesDefinitionOnEveryLevel() {
    let kernels = GeneratedKernelISA.allCases.compactMap { GeneratedPreluKernel.kernels(for: $0) }
    let runnable = GeneratedKernelISA.allCases.filter { level in GeneratedKernelISA.supported.map { level <= $0 } ?? false }
    XCTAssertEqual(kernels.map(\.isa), runnable)
    var generator = SeededGenerator(seed: 12)
    let rowFloats = PreluKernelGenerator.rowFloats
    for kernel in kernels {
      for trial in 0..<60 {
        let rows = trial < 3 ? trial : Int.random(in: 0...40, using: &generator)
        let patternRows = Int.random(in: 1...5, using: &generator)
        let firstPatternRow = Int.random(in: 0..<patternRows, using: &generator)
        let input = Self.values(rows * rowFloats, &generator)
        let pattern = (0..<patternRows * rowFloats).map { _ in Float.random(in: -2...2, using: &generator) }
        let guardFloats = 32
        var output = [Float](repeating: 7, count: rows * rowFloats + guardFloats)
        input.withUnsafeBufferPointer { x in
          pattern.withUnsafeBufferPointer { alphas in
            output.withUnsafeMutableBufferPointer { out in
              kernel.run(PreluKernelArguments(
                input: x.baseAddress ?? alphas.baseAddress!, output: out.baseAddress!, rowCount: rows,
                pattern: alphas.baseAddress!, patternRows: patternRows,
                position: alphas.baseAddress! + firstPatternRow * rowFloats, rowsBeforeWrap: patternRows - firstPatternRow))
            }
          }
        }
        let expected = (0..<rows * rowFloats).map { index in
          let patternRow = (firstPatternRow + index / rowFloats) % patternRows
          return Self.prelu(input[index], pattern[patternRow * rowFloats + index % rowFloats])
        }
        assertSame(Array(output[..<(rows * rowFloats)]), expected, "\(kernel.isa) trial \(trial)")
        XCTAssertEqual(Array(output[(rows * rowFloats)...]), [Float](repeating: 7, count: guardFloats), "\(kernel.isa) wrote past its rows")
      }
    }
  }

  /// The PRELU node on random NHWC shapes with α per channel ([1, 1, C], [C]), one α ([1], [1, 1, 1])
  /// and α over the whole pixel grid ([H, W, C], the broadcast walk), on one and two threads, with
  /// generated kernels on and off: the definition everywhere.
  func testPreluNodeMatchesDefinitionOnEveryRoute() throws {
    var generator = SeededGenerator(seed: 34)
    for trial in 0..<40 {
      let height = Int.random(in: 1...9, using: &generator)
      let width = Int.random(in: 1...9, using: &generator)
      let channels = [1, 3, 8, 16, 24, 40, 64, Int.random(in: 1...70, using: &generator)].randomElement(using: &generator)!
      let alphaShapes: [[Int]] = [[1, 1, channels], [channels], [1], [1, 1, 1], [height, width, channels]]
      let alphaShape = alphaShapes[trial % alphaShapes.count]
      let input = Self.values(height * width * channels, &generator)
      let alphas = (0..<alphaShape.reduce(1, *)).map { _ in Float.random(in: -2...2, using: &generator) }
      let expected = input.indices.map { index -> Float in
        let alphaIndex = alphas.count == 1 ? 0 : alphas.count == channels ? index % channels : index
        return Self.prelu(input[index], alphas[alphaIndex])
      }
      for generated in [true, false] {
        for threads in [1, 2] {
          let result = try GeneratedFloatKernels.$areAllowed.withValue(generated) {
            try KernelHarness.run(preluNode(input, [1, height, width, channels], alphas, alphaShape), threads: threads)
          }
          XCTAssertEqual(result.shape, [1, height, width, channels])
          assertSame(result.values, expected, "trial \(trial) α \(alphaShape) generated \(generated) threads \(threads)")
        }
      }
    }
  }

  /// An infinite α takes the Swift route, where x ≥ 0 keeps x (α·0 would be NaN).
  func testInfiniteAlphaKeepsNonNegativeInputs() throws {
    let input: [Float] = (0..<40).map { Float($0 % 5) - 2 }
    let alphas: [Float] = [.infinity, 0.5, -.infinity, 2]
    let result = try KernelHarness.run(preluNode(input, [1, 2, 5, 4], alphas, [1, 1, 4]), threads: 1)
    assertSame(result.values, input.indices.map { Self.prelu(input[$0], alphas[$0 % 4]) }, "infinite α")
  }

  /// The description names the generated route where it runs and the Swift level otherwise.
  func testKernelDescriptionNamesTheRoute() throws {
    let node = preluNode([Float](repeating: 1, count: 32), [1, 2, 2, 8], [Float](repeating: 0.25, count: 8), [1, 1, 8])
    let kernel = try KernelDispatch.makeKernel(for: node)
    var context = PrepareContext(threadCount: 1)
    try kernel.prepare(&context)
    if let isa = GeneratedFloatKernels.currentISA {
      XCTAssertEqual(kernel.kernelDescription, "generated \(isa), α repeating per channel")
    } else {
      XCTAssertEqual(kernel.kernelDescription, KernelDescription.swiftLevel)
    }
    GeneratedFloatKernels.$areAllowed.withValue(false) {
      XCTAssertEqual(kernel.kernelDescription, KernelDescription.swiftLevel)
    }
  }

  /// A PRELU node over `input` of `shape` with constant α of `alphaShape`.
  private func preluNode(_ input: [Float], _ shape: [Int], _ alphas: [Float], _ alphaShape: [Int]) -> Node {
    KernelHarness.node(
      "PRELU",
      [KernelHarness.floatTensor(0, shape, input), KernelHarness.floatTensor(1, alphaShape, alphas, constant: true)],
      KernelHarness.outputTensor(2), .none)
  }
}
