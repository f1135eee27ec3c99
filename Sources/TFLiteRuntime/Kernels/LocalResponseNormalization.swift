// LOCAL_RESPONSE_NORMALIZATION over the last axis: each element is divided by
// (bias + alpha · Σ x²)^beta, the sum running over the `radius` channels on either side
// (clipped at the row ends), as TFLite's kernel computes it (alpha is not divided by the window).

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

import TFLiteFormat

/// The kernel definition of LOCAL_RESPONSE_NORMALIZATION (float32).
struct LocalResponseNormalizationDefinition: LastAxisKernelDefinition {
  static let operatorName = "LOCAL_RESPONSE_NORMALIZATION"
  /// Channels on each side of the window's centre.
  let radius: Int
  /// Added to the scaled sum of squares.
  let bias: Float
  /// Scale of the sum of squares.
  let alpha: Float
  /// Exponent of the divisor.
  let beta: Float

  init(node: Node) throws {
    guard case .localResponseNormalizationOptions(let options) = node.options else {
      throw KernelError.invalid("LOCAL_RESPONSE_NORMALIZATION needs its options")
    }
    guard options.radius >= 0 else { throw KernelError.invalid("LOCAL_RESPONSE_NORMALIZATION: negative radius \(options.radius)") }
    radius = Int(options.radius)
    bias = options.bias
    alpha = options.alpha
    beta = options.beta
  }

  func run(input: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>, depth: Int, rows: Range<Int>) {
    for row in rows {
      let values = input + row &* depth
      let results = output + row &* depth
      for channel in 0..<depth {
        var sumOfSquares: Float = 0
        for neighbour in max(0, channel - radius)...min(depth - 1, channel + radius) {
          sumOfSquares += values[neighbour] * values[neighbour]
        }
        results[channel] = values[channel] * powf(bias + alpha * sumOfSquares, -beta)
      }
    }
  }
}

extension KernelRegistry {
  /// LOCAL_RESPONSE_NORMALIZATION.
  // Written once by its initializer and only read afterwards.
  nonisolated(unsafe) static let localResponseNormalization: [String: any Kernel.Type] = [
    LocalResponseNormalizationDefinition.operatorName: LastAxisKernel<LocalResponseNormalizationDefinition>.self
  ]
}
