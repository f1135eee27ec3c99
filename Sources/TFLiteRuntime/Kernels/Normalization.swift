// L2_NORMALIZATION over the last axis: x / max(‖x‖₂, 1e-6), as TFLite's reference kernel.

import TFLiteFormat

/// Row-wise L2 normalization over `[rows, depth]` views.
enum L2NormalizationDriver {
  /// The smallest norm divided by, so all-zero rows stay zero.
  static let minimumNorm: Float = 1e-6

  /// Normalizes each row in `rows`.
  static func run(input: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>, depth: Int, rows: Range<Int>) {
    for row in rows {
      let offset = row * depth
      let values = StreamedOperand(input, offset: offset)
      let sumOfSquares = reduceVectors(SumReduction<Float>(), count: depth) { index, lanes in
        let vector = values.vector(at: index, lanes: lanes)
        return vector * vector
      }
      let norm = max(sumOfSquares.squareRoot(), minimumNorm)
      storeEachVector(count: depth, into: output + offset) { index, lanes in
        values.vector(at: index, lanes: lanes) / norm
      }
    }
  }
}

/// The kernel definition of L2_NORMALIZATION.
struct L2NormalizationDefinition: LastAxisKernelDefinition {
  static let operatorName = "L2_NORMALIZATION"

  init(node: Node) throws {
    if case .l2NormOptions(let options) = node.options, options.fusedActivationFunction != .none {
      throw KernelError.unsupported("L2_NORMALIZATION with fused activation \(options.fusedActivationFunction.name)")
    }
  }

  func run(input: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>, depth: Int, rows: Range<Int>) {
    L2NormalizationDriver.run(input: input, output: output, depth: depth, rows: rows)
  }
}

extension KernelRegistry {
  /// L2_NORMALIZATION.
  nonisolated(unsafe) static let normalization: [String: any Kernel.Type] = [
    L2NormalizationDefinition.operatorName: LastAxisKernel<L2NormalizationDefinition>.self
  ]
}
