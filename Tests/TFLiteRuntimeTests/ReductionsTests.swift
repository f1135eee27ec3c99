import XCTest
@testable import TFLiteRuntime
import TFLiteLinearAlgebra

final class ReductionsTests: XCTestCase {
  /// Scalar model of a reduction: visits the input in order and folds each element into the
  /// output element it maps to.
  func scalarReduce<Scalar>(
    _ input: [Scalar], shape: [Int], isReduced: [Bool], initial: Scalar, _ combine: (Scalar, Scalar) -> Scalar
  ) -> [Scalar] {
    let keptShape = shape.enumerated().map { isReduced[$0.offset] ? 1 : $0.element }
    var output = [Scalar](repeating: initial, count: keptShape.reduce(1, *))
    for (index, value) in input.enumerated() {
      let target = broadcastSourceIndex(index, outputShape: shape, shape: keptShape)
      output[target] = combine(output[target], value)
    }
    return output
  }

  func runReduction<Operation: ReductionOperation>(
    _ operation: Operation, _ input: [Operation.Scalar], shape: [Int], isReduced: [Bool], threadCount: Int = 1
  ) throws -> [Operation.Scalar] {
    let layout = try BroadcastLayout(reducing: shape, axes: isReduced)
    let outputCount = shape.enumerated().filter { !isReduced[$0.offset] }.map(\.element).reduce(1, *)
    return filledArray(count: outputCount) { output in
      ReductionDriver.run(
        operation, layout: layout, input: input, output: output, outputCount: outputCount, threadCount: threadCount)
    }
  }

  /// Random shapes (some with long rows, so the four-accumulator loop runs) and axis sets.
  func cases(seed: UInt64) -> [([Int], [Bool])] {
    var generator = SeededGenerator(seed: seed)
    var result: [([Int], [Bool])] = [([7, 300], [false, true]), ([300, 7], [true, false]), ([5, 67, 3], [true, true, true])]
    for _ in 0..<60 {
      let shape = generator.shape(rank: Int.random(in: 1...5, using: &generator), sizes: 1...7)
      result.append((shape, shape.map { _ in Bool.random(using: &generator) }))
    }
    return result
  }

  func testFloatReductionsMatchScalarFold() throws {
    var generator = SeededGenerator(seed: 5)
    for (shape, isReduced) in cases(seed: 21) {
      let input = generator.floats(shape.reduce(1, *), in: -4...4)
      let sums = try runReduction(SumReduction<Float>(), input, shape: shape, isReduced: isReduced)
      let expectedSums = scalarReduce(input, shape: shape, isReduced: isReduced, initial: 0, +)
      for (sum, expected) in zip(sums, expectedSums) { XCTAssertEqual(sum, expected, accuracy: 1e-4 * max(1, abs(expected))) }
      XCTAssertEqual(
        try runReduction(MaximumReduction<Float>(), input, shape: shape, isReduced: isReduced),
        scalarReduce(input, shape: shape, isReduced: isReduced, initial: -.greatestFiniteMagnitude) { max($0, $1) })
      XCTAssertEqual(
        try runReduction(MinimumReduction<Float>(), input, shape: shape, isReduced: isReduced),
        scalarReduce(input, shape: shape, isReduced: isReduced, initial: .greatestFiniteMagnitude) { min($0, $1) })
      let factors = input.map { 1 + $0 / 64 }
      let products = try runReduction(ProductReduction<Float>(), factors, shape: shape, isReduced: isReduced)
      let expectedProducts = scalarReduce(factors, shape: shape, isReduced: isReduced, initial: 1, *)
      for (product, expected) in zip(products, expectedProducts) { XCTAssertEqual(product, expected, accuracy: 1e-4 * max(1, abs(expected))) }
    }
  }

  func testIntegerReductionsAreExact() throws {
    var generator = SeededGenerator(seed: 6)
    for (shape, isReduced) in cases(seed: 22) {
      let input: [Int32] = generator.integers(shape.reduce(1, *), in: -3...3)
      XCTAssertEqual(
        try runReduction(SumReduction<Int32>(), input, shape: shape, isReduced: isReduced),
        scalarReduce(input, shape: shape, isReduced: isReduced, initial: 0, &+))
      XCTAssertEqual(
        try runReduction(ProductReduction<Int32>(), input, shape: shape, isReduced: isReduced),
        scalarReduce(input, shape: shape, isReduced: isReduced, initial: 1, &*))
      let wide = input.map { Int64($0) << 40 }
      XCTAssertEqual(
        try runReduction(MaximumReduction<Int64>(), wide, shape: shape, isReduced: isReduced),
        scalarReduce(wide, shape: shape, isReduced: isReduced, initial: .min) { max($0, $1) })
    }
  }

  /// Rows reduced into one row (MEAN and SUM over height and width) cut into chunks of rows on
  /// one to four threads, random shapes: one thread (one chunk) folds the rows in the scalar order
  /// (same floats); several chunks give the extrema and integer sums exactly and float sums within
  /// rounding of the scalar fold.
  func testColumnReductionsSplitByRowsOnSeveralThreads() throws {
    var generator = SeededGenerator(seed: 31)
    var splitCases = 0
    for trial in 0..<40 {
      let shape = [Int.random(in: 200...3_000, using: &generator), Int.random(in: 1...70, using: &generator)]
      let threads = 1 + trial % 4
      let isReduced = [true, false]
      let label = "\(shape), \(threads) threads"
      let chunks = ChunkSplit(count: shape[0], minimumChunk: cheapElementwiseChunk / shape[1], threadCount: threads)
      if chunks.count > 1 { splitCases += 1 }
      let input = generator.floats(shape[0] * shape[1], in: -4...4)
      let sums = try runReduction(SumReduction<Float>(), input, shape: shape, isReduced: isReduced, threadCount: threads)
      let expectedSums = scalarReduce(input, shape: shape, isReduced: isReduced, initial: 0, +)
      if chunks.count == 1 {
        XCTAssertEqual(sums, expectedSums, label)
      } else {
        for (sum, expected) in zip(sums, expectedSums) {
          XCTAssertEqual(sum, expected, accuracy: 1e-5 * Float(shape[0]) * 4, label)
        }
      }
      XCTAssertEqual(
        try runReduction(MaximumReduction<Float>(), input, shape: shape, isReduced: isReduced, threadCount: threads),
        scalarReduce(input, shape: shape, isReduced: isReduced, initial: -.greatestFiniteMagnitude) { max($0, $1) }, label)
      let integers = input.map { Int32($0 * 1e8) }
      XCTAssertEqual(
        try runReduction(SumReduction<Int32>(), integers, shape: shape, isReduced: isReduced, threadCount: threads),
        scalarReduce(integers, shape: shape, isReduced: isReduced, initial: 0, &+), label)
    }
    XCTAssertGreaterThan(splitCases, 10, "too few random shapes were split")
  }

  func testMeanDividesByReducedCountAndIsNaNWhenEmpty() throws {
    var generator = SeededGenerator(seed: 8)
    let shape = [2, 7, 7, 19]
    let isReduced = [false, true, true, false]
    let input = generator.floats(shape.reduce(1, *), in: -4...4)
    let layout = try BroadcastLayout(reducing: shape, axes: isReduced)
    let means: [Float] = filledArray(count: 38) { ReductionDriver.mean(layout: layout, input: input, output: $0, outputCount: 38, threadCount: 1) }
    let expected = scalarReduce(input, shape: shape, isReduced: isReduced, initial: 0, +).map { $0 / 49 }
    for (mean, reference) in zip(means, expected) { XCTAssertEqual(mean, reference, accuracy: 1e-5) }
    let emptyLayout = try BroadcastLayout(reducing: [3, 0], axes: [false, true])
    let empty: [Float] = filledArray(count: 3) { ReductionDriver.mean(layout: emptyLayout, input: [], output: $0, outputCount: 3, threadCount: 1) }
    XCTAssertTrue(empty.allSatisfy(\.isNaN))
  }

  /// MEAN's finish (`IntegerReductionFinish.finish`, eight outputs at a time through the
  /// multiplier lanes, then one by one; shifts outside −31...30 all one by one) gives, for random
  /// accumulators (small sums and the whole Int32 range), multipliers, shifts −40...35, zero points,
  /// reduced counts and output counts 0–40, under both roundings (shifts beyond −31...30 under
  /// double rounding only), into int8, uint8 and int16 outputs,
  /// the bytes of a plain loop of gemmlowp's arithmetic (`SaturatingRoundingDoublingHighMul` and
  /// `RoundingDivideByPOT`, or one rounding of the 64-bit product), clamped to the type.
  func testQuantizedMeanFinishMatchesPlainRescaleLoop() {
    var random = SeededGenerator(seed: 1213)
    /// `x · multiplier · 2^(shift − 31)` by gemmlowp's steps (double) or one rounding (single).
    func rescale(_ x: Int32, _ multiplier: Int32, _ shift: Int, _ rounding: RoundingPolicy) -> Int32 {
      guard rounding == .doubleRounding else {
        let total = Int64(31 - shift)
        return Int32(truncatingIfNeeded: (Int64(x) * Int64(multiplier) + (Int64(1) << (total - 1))) >> total)
      }
      let value = x &<< Int32(max(shift, 0))
      let product = Int64(value) * Int64(multiplier)
      let nudge: Int64 = product >= 0 ? 1 << 30 : 1 - (1 << 30)
      let high = Int32(truncatingIfNeeded: (product + nudge) / (Int64(1) << 31))
      let exponent = max(-shift, 0)
      let mask = Int32(truncatingIfNeeded: (Int64(1) << exponent) - 1)
      let threshold = (mask >> 1) + (high < 0 ? 1 : 0)
      return (high >> Int32(exponent)) + ((high & mask) > threshold ? 1 : 0)
    }
    func check<Element: QuantizedInteger>(_: Element.Type, trial: Int) {
      let rounding: RoundingPolicy = trial % 2 == 0 ? .doubleRounding : .singleRounding
      let multiplier = Int32(random.int((1 << 30)...Int(Int32.max)))
      // Shifts outside −31...30 (double rounding only: the scalar single rounding's 64-bit shift
      // takes −32...30) stay on the scalar rescale.
      let shift = trial % 5 == 4 && rounding == .doubleRounding ? random.int(-40...35) : random.int(-20...2)
      let zeroPoint = Int32(random.int(Int(Element.min)...Int(Element.max)))
      let outputZeroPoint = Int32(random.int(Int(Element.min)...Int(Element.max)))
      let reducedCount = random.int(1...5000)
      let count = random.int(0...40)
      let accumulators = (0..<count).map { _ in
        trial % 3 == 0 ? Int32(random.int(Int(Int32.min)...Int(Int32.max))) : Int32(random.int(-600_000...600_000))
      }
      let finish = IntegerReductionFinish.rescale(
        multiplier: QuantizedMultiplier(multiplier: multiplier, shift: shift), inputZeroPoint: zeroPoint,
        count: reducedCount, outputZeroPoint: outputZeroPoint, rounding: rounding)
      var actual = [Element](repeating: 0, count: count)
      accumulators.withUnsafeBufferPointer { sums in
        actual.withUnsafeMutableBufferPointer { output in
          finish.finish(sums.baseAddress ?? UnsafePointer(bitPattern: 8)!, count: count, into: output.baseAddress ?? UnsafeMutablePointer(bitPattern: 8)!)
        }
      }
      // Shifts beyond gemmlowp's 0...31 exponents are the scalar rescale's own (tested against LiteRT).
      let expected = accumulators.map { sum -> Element in
        let offset = Int32(truncatingIfNeeded: Int64(sum) - Int64(zeroPoint) * Int64(reducedCount))
        let value =
          (-31...30).contains(shift)
          ? rescale(offset, multiplier, shift, rounding) &+ outputZeroPoint
          : QuantizedMultiplier(multiplier: multiplier, shift: shift).apply(offset, rounding: rounding) &+ outputZeroPoint
        return Element(min(max(value, Int32(Element.min)), Int32(Element.max)))
      }
      XCTAssertEqual(actual, expected, "trial \(trial) \(Element.self) \(rounding) multiplier \(multiplier) shift \(shift)")
    }
    for trial in 0..<60 {
      check(Int8.self, trial: trial)
      check(UInt8.self, trial: trial)
      check(Int16.self, trial: trial)
    }
  }

  func testAxesResolveNegativeAndRepeatedAxes() throws {
    let axes = try ReductionAxes(axes: [-1, 1, 3], inputShape: [2, 3, 4, 5], keepDimensions: false)
    XCTAssertEqual(axes.isReduced, [false, true, false, true])
    XCTAssertEqual(axes.outputShape, [2, 4])
    XCTAssertEqual(try ReductionAxes(axes: [0, -4], inputShape: [2, 3, 4, 5], keepDimensions: true).outputShape, [1, 3, 4, 5])
    XCTAssertEqual(try ReductionAxes(axes: [], inputShape: [], keepDimensions: false).outputShape, [])
    XCTAssertThrowsError(try ReductionAxes(axes: [4], inputShape: [2, 3, 4, 5], keepDimensions: false))
    XCTAssertThrowsError(try ReductionAxes(axes: [-5], inputShape: [2, 3, 4, 5], keepDimensions: false))
  }

  func testArgumentExtremumTakesFirstIndexOfTies() {
    var generator = SeededGenerator(seed: 9)
    let (outer, axis, inner) = (3, 6, 5)
    let input: [Int32] = generator.integers(outer * axis * inner, in: 0...3)
    for kind in [ExtremumKind.maximum, .minimum] {
      let output: [Int64] = filledArray(count: outer * inner) {
        ArgumentExtremum.run(kind, input: input, outerCount: outer, axisCount: axis, innerCount: inner, output: $0)
      }
      for o in 0..<outer {
        for i in 0..<inner {
          let column = (0..<axis).map { input[(o * axis + $0) * inner + i] }
          let target = kind == .maximum ? column.max()! : column.min()!
          XCTAssertEqual(output[o * inner + i], Int64(column.firstIndex(of: target)!))
        }
      }
    }
  }
}
