// SOFTMAX (with beta) and LOG_SOFTMAX over the last axis of a tensor of any rank.
//
// Per row, as TFLite's reference: subtract the row maximum (running from the lowest finite
// float), exponentiate (scaled by beta for SOFTMAX), then divide by the sum, or for LOG_SOFTMAX
// subtract the log of the sum.

import TFLiteFormat

/// Row-wise softmax computations over `[rows, depth]` views.
enum SoftmaxDriver {
  /// output = exp(β(x − max)) / Σ exp(β(x − max)) for each row in `rows`.
  static func softmax(
    input: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>, depth: Int, beta: Float, rows: Range<Int>
  ) {
    for row in rows {
      let offset = row * depth
      let values = StreamedOperand(input, offset: offset)
      let results = output + offset
      let maximum = reduceVectors(MaximumReduction<Float>(), count: depth) { index, lanes in
        values.vector(at: index, lanes: lanes)
      }
      let sum = reduceVectors(SumReduction<Float>(), count: depth) { index, lanes in
        let exponentials = VectorMath.exp((values.vector(at: index, lanes: lanes) - maximum) * beta)
        storeVector(exponentials, results + index, lanes: lanes)
        return exponentials
      }
      let exponentials = StreamedOperand(UnsafePointer(results), offset: 0)
      storeEachVector(count: depth, into: results) { index, lanes in
        exponentials.vector(at: index, lanes: lanes) / sum
      }
    }
  }

  /// output = x − max − log Σ exp(x − max) for each row in `rows`.
  static func logSoftmax(
    input: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>, depth: Int, rows: Range<Int>
  ) {
    for row in rows {
      let offset = row * depth
      let values = StreamedOperand(input, offset: offset)
      let maximum = reduceVectors(MaximumReduction<Float>(), count: depth) { index, lanes in
        values.vector(at: index, lanes: lanes)
      }
      let sum = reduceVectors(SumReduction<Float>(), count: depth) { index, lanes in
        VectorMath.exp(values.vector(at: index, lanes: lanes) - maximum)
      }
      let logSum = VectorMath.log(SIMD16(repeating: sum))[0]
      storeEachVector(count: depth, into: output + offset) { index, lanes in
        values.vector(at: index, lanes: lanes) - maximum - logSum
      }
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

extension KernelRegistry {
  /// SOFTMAX, LOG_SOFTMAX.
  nonisolated(unsafe) static let softmax: [String: any Kernel.Type] = [
    SoftmaxDefinition.operatorName: LastAxisKernel<SoftmaxDefinition>.self,
    LogSoftmaxDefinition.operatorName: LastAxisKernel<LogSoftmaxDefinition>.self,
  ]
}
