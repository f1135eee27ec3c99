// Reductions over axes: MEAN, SUM, REDUCE_PROD, REDUCE_MAX, REDUCE_MIN, and ARG_MAX / ARG_MIN.
//
// Axes may be negative (counted from the end) and repeated; keep_dims keeps reduced dimensions
// as 1. `ReductionDriver` walks the input once with a `BroadcastLayout` whose operand is the
// output: when the innermost collapsed dimension is reduced, each row is reduced with four SIMD
// accumulators; when it is kept, rows are combined lane-wise into the output. Running maxima
// start from the lowest finite value and minima from the highest (as TFLite does); MEAN of an
// empty tensor is NaN. ARG_MAX / ARG_MIN return the first index of the extreme value.

/// SUM.
struct SumReduction<Scalar: ArithmeticScalar>: ReductionOperation {
  var identity: Scalar { 0 }
  @inline(__always)
  func combine(_ lhs: SIMD16<Scalar>, _ rhs: SIMD16<Scalar>) -> SIMD16<Scalar> { Scalar.add(lhs, rhs) }
}

/// REDUCE_PROD.
struct ProductReduction<Scalar: ArithmeticScalar>: ReductionOperation {
  var identity: Scalar { 1 }
  @inline(__always)
  func combine(_ lhs: SIMD16<Scalar>, _ rhs: SIMD16<Scalar>) -> SIMD16<Scalar> { Scalar.multiply(lhs, rhs) }
}

/// REDUCE_MAX.
struct MaximumReduction<Scalar: ArithmeticScalar>: ReductionOperation {
  var identity: Scalar { Scalar.leastFiniteValue }
  @inline(__always)
  func combine(_ lhs: SIMD16<Scalar>, _ rhs: SIMD16<Scalar>) -> SIMD16<Scalar> {
    Scalar.maximum(rhs, lhs)
  }
}

/// REDUCE_MIN.
struct MinimumReduction<Scalar: ArithmeticScalar>: ReductionOperation {
  var identity: Scalar { Scalar.greatestFiniteValue }
  @inline(__always)
  func combine(_ lhs: SIMD16<Scalar>, _ rhs: SIMD16<Scalar>) -> SIMD16<Scalar> {
    Scalar.minimum(rhs, lhs)
  }
}

/// Which axes a reduction removes, and the resulting output shape.
struct ReductionAxes: Equatable, Sendable {
  /// For each input dimension, whether it is reduced.
  let isReduced: [Bool]
  /// The output shape (reduced dimensions dropped, or kept as 1 with keep_dims).
  let outputShape: [Int]

  /// Resolves `axes` (each in −rank ..< rank; repeats allowed) against `inputShape`.
  init(axes: [Int], inputShape: [Int], keepDimensions: Bool) throws {
    let rank = inputShape.count
    var isReduced = [Bool](repeating: false, count: rank)
    for axis in axes {
      guard axis >= -rank && axis < rank else {
        throw KernelError.invalid("reduction axis \(axis) is out of range for a tensor of rank \(rank)")
      }
      isReduced[axis < 0 ? axis + rank : axis] = true
    }
    self.isReduced = isReduced
    var outputShape: [Int] = []
    for (dimension, size) in inputShape.enumerated() {
      if !isReduced[dimension] {
        outputShape.append(size)
      } else if keepDimensions {
        outputShape.append(1)
      }
    }
    self.outputShape = outputShape
  }
}

/// Runs reductions.
enum ReductionDriver {
  /// Reduces `input` walked by `layout` (from `BroadcastLayout(reducing:axes:)`) into `output`,
  /// which holds `outputCount` elements.
  static func run<Operation: ReductionOperation>(
    _ operation: Operation, layout: BroadcastLayout,
    input: UnsafePointer<Operation.Scalar>, output: UnsafeMutablePointer<Operation.Scalar>, outputCount: Int
  ) {
    output.update(repeating: operation.identity, count: outputCount)
    let everything = 0..<layout.elementCount
    if layout.innerStride(of: 0) == 0 {
      layout.forEachSegment(in: everything) { start, outputOffset, _, _, count in
        let row = StreamedOperand(input, offset: start)
        let reduced = reduceVectors(operation, count: count) { index, lanes in row.vector(at: index, lanes: lanes) }
        output[outputOffset] = operation.combine(output[outputOffset], reduced)
      }
    } else {
      layout.forEachSegment(in: everything) { start, outputOffset, _, _, count in
        let row = StreamedOperand(input, offset: start)
        let accumulated = StreamedOperand(UnsafePointer(output), offset: outputOffset)
        storeEachVector(count: count, into: output + outputOffset) { index, lanes in
          operation.combine(accumulated.vector(at: index, lanes: lanes), row.vector(at: index, lanes: lanes))
        }
      }
    }
  }

  /// MEAN: the sum divided by the number of reduced elements; NaN everywhere for an empty input.
  static func mean(
    layout: BroadcastLayout, input: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>, outputCount: Int
  ) {
    guard layout.elementCount > 0 else {
      output.update(repeating: .nan, count: outputCount)
      return
    }
    run(SumReduction<Float>(), layout: layout, input: input, output: output, outputCount: outputCount)
    let divisor = Float(layout.elementCount / max(outputCount, 1))
    let sums = StreamedOperand(UnsafePointer(output), offset: 0)
    storeEachVector(count: outputCount, into: output) { index, lanes in sums.vector(at: index, lanes: lanes) / divisor }
  }
}

/// Whether ARG_MAX or ARG_MIN is computed.
enum ExtremumKind: Sendable {
  /// ARG_MAX.
  case maximum
  /// ARG_MIN.
  case minimum
}

/// ARG_MAX / ARG_MIN over one axis of a tensor viewed as [outer, axis, inner].
enum ArgumentExtremum {
  /// Writes, for each (outer, inner) pair, the first index along the axis holding the extreme value.
  static func run<Scalar: Comparable, Index: FixedWidthInteger>(
    _ kind: ExtremumKind, input: UnsafePointer<Scalar>, outerCount: Int, axisCount: Int, innerCount: Int,
    output: UnsafeMutablePointer<Index>
  ) {
    switch kind {
    case .maximum: run(input, outerCount, axisCount, innerCount, output, prefers: >)
    case .minimum: run(input, outerCount, axisCount, innerCount, output, prefers: <)
    }
  }

  @inline(__always)
  private static func run<Scalar: Comparable, Index: FixedWidthInteger>(
    _ input: UnsafePointer<Scalar>, _ outerCount: Int, _ axisCount: Int, _ innerCount: Int,
    _ output: UnsafeMutablePointer<Index>, prefers: (Scalar, Scalar) -> Bool
  ) {
    guard axisCount > 0 else {
      output.update(repeating: 0, count: outerCount * innerCount)
      return
    }
    for outer in 0..<outerCount {
      let block = input + outer * axisCount * innerCount
      for inner in 0..<innerCount {
        var best = block[inner]
        var bestIndex = 0
        var element = block + inner + innerCount
        for index in 1..<axisCount {
          if prefers(element.pointee, best) {
            best = element.pointee
            bestIndex = index
          }
          element += innerCount
        }
        output[outer * innerCount + inner] = Index(truncatingIfNeeded: bestIndex)
      }
    }
  }
}
