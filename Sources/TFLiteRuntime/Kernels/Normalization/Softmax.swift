// SOFTMAX (with beta) and LOG_SOFTMAX over the last axis of a tensor of any rank.
//
// Per row, as TFLite's reference: subtract the row maximum (running from the lowest finite
// float), exponentiate (scaled by beta for SOFTMAX), then divide by the sum, or for LOG_SOFTMAX
// subtract the log of the sum.

import TFLiteFormat
import TFLiteLinearAlgebra

/// exp((x − offset) · scale), lane-wise.
struct ShiftedExponentialOperation: UnaryLanewiseOperation {
  /// Subtracted first (the row maximum).
  let offset: Float
  /// Multiplied next (beta).
  let scale: Float

  @inline(__always)
  func callAsFunction(_ x: SIMD16<Float>) -> SIMD16<Float> { VectorMath.exp((x - offset) * scale) }
}

/// (x − first) − second, lane-wise, in that order.
struct DoubleShiftOperation: UnaryLanewiseOperation {
  /// Subtracted first.
  let first: Float
  /// Subtracted second.
  let second: Float

  @inline(__always)
  func callAsFunction(_ x: SIMD16<Float>) -> SIMD16<Float> { x - first - second }
}

/// Row-wise softmax computations over `[rows, depth]` views.
enum SoftmaxDriver {
  /// output = exp(β(x − max)) / Σ exp(β(x − max)) for each row in `rows`.
  static func softmax(
    input: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>, depth: Int, beta: Float, rows: Range<Int>
  ) {
    for row in rows {
      let values = StreamedOperand(input, offset: row * depth)
      let results = output + row * depth
      let maximum = reduceVectors(MaximumReduction<Float>(), values, count: depth)
      storeEachVector(
        MappedVectors(values, ShiftedExponentialOperation(offset: maximum, scale: beta)), count: depth, into: results)
      let exponentials = StreamedOperand(UnsafePointer(results), offset: 0)
      let sum = reduceVectors(SumReduction<Float>(), exponentials, count: depth)
      storeEachVector(MappedVectors(exponentials, DivisionByScalarOperation(divisor: sum)), count: depth, into: results)
    }
  }

  /// output = x − max − log Σ exp(x − max) for each row in `rows`.
  static func logSoftmax(
    input: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>, depth: Int, rows: Range<Int>
  ) {
    for row in rows {
      let values = StreamedOperand(input, offset: row * depth)
      let maximum = reduceVectors(MaximumReduction<Float>(), values, count: depth)
      let exponentials = MappedVectors(values, ShiftedExponentialOperation(offset: maximum, scale: 1))
      let logSum = VectorMath.log(SIMD16(repeating: reduceVectors(SumReduction<Float>(), exponentials, count: depth)))[0]
      storeEachVector(
        MappedVectors(values, DoubleShiftOperation(first: maximum, second: logSum)), count: depth,
        into: output + row * depth)
    }
  }
}

/// The kernel definition of SOFTMAX.
struct SoftmaxDefinition: LastAxisKernelDefinition {
  static let operatorName = "SOFTMAX"
  private let beta: Float

  init(node: Node) throws {
    guard case .softmaxOptions(let options) = node.options else {
      throw KernelError.invalid("SOFTMAX needs SoftmaxOptions")
    }
    beta = options.beta
  }

  func run(input: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>, depth: Int, rows: Range<Int>) {
    SoftmaxDriver.softmax(input: input, output: output, depth: depth, beta: beta, rows: rows)
  }
}

/// The kernel definition of LOG_SOFTMAX.
struct LogSoftmaxDefinition: LastAxisKernelDefinition {
  static let operatorName = "LOG_SOFTMAX"

  init(node: Node) throws {}

  func run(input: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>, depth: Int, rows: Range<Int>) {
    SoftmaxDriver.logSoftmax(input: input, output: output, depth: depth, rows: rows)
  }
}
