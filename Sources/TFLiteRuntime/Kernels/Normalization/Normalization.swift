// Normalizations over the last axis: L2_NORMALIZATION (x / max(‖x‖₂, 1e-6), as TFLite's
// reference kernel) and LOCAL_RESPONSE_NORMALIZATION.

import TFLiteFormat

/// Row-wise L2 normalization over `[rows, depth]` views.
enum L2NormalizationDriver {
  /// The smallest norm divided by, so all-zero rows stay zero.
  static let minimumNorm: Float = 1e-6

  /// Normalizes each row in `rows`.
  static func run(input: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>, depth: Int, rows: Range<Int>) {
    for row in rows {
      let values = StreamedOperand(input, offset: row * depth)
      let sumOfSquares = reduceVectors(SumReduction<Float>(), MappedVectors(values, FloatFunction<Square>()), count: depth)
      let norm = max(sumOfSquares.squareRoot(), minimumNorm)
      storeEachVector(
        MappedVectors(values, DivisionByScalarOperation(divisor: norm)), count: depth, into: output + row * depth)
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

/// The kernel definition of LOCAL_RESPONSE_NORMALIZATION: x · (bias + α·Σ x²)^−β, the sum over
/// the channels within `radius` of each channel (both ends included, as TensorFlow and LiteRT's
/// optimized kernel do).
struct LocalResponseNormalizationDefinition: LastAxisKernelDefinition {
  static let operatorName = "LOCAL_RESPONSE_NORMALIZATION"
  private let radius: Int
  private let bias: Float
  private let alpha: Float
  private let beta: Float

  init(node: Node) throws {
    guard case .localResponseNormalizationOptions(let options) = node.options else {
      throw KernelError.invalid("LOCAL_RESPONSE_NORMALIZATION needs LocalResponseNormalizationOptions")
    }
    guard options.radius >= 0 else {
      throw KernelError.invalid("LOCAL_RESPONSE_NORMALIZATION radius \(options.radius) is negative")
    }
    radius = Int(options.radius)
    bias = options.bias
    alpha = options.alpha
    beta = options.beta
  }

  func run(input: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>, depth: Int, rows: Range<Int>) {
    let exponent = -beta
    for row in rows {
      let values = input + row * depth
      let results = output + row * depth
      // First the base (bias + α·Σ x²) of every channel, then one vector pass for the powers.
      for channel in 0..<depth {
        var sumOfSquares: Float = 0
        for neighbour in max(0, channel - radius)...min(depth - 1, channel + radius) {
          sumOfSquares += values[neighbour] * values[neighbour]
        }
        results[channel] = bias + alpha * sumOfSquares
      }
      storeEachVector(
        CombinedVectors(
          StreamedOperand(values, offset: 0), StreamedOperand(UnsafePointer(results), offset: 0),
          PowerScaleOperation(exponent: exponent)),
        count: depth, into: results)
    }
  }
}

/// x · base^exponent, lane-wise (the last step of LOCAL_RESPONSE_NORMALIZATION).
struct PowerScaleOperation: BinaryLanewiseOperation {
  /// The exponent (−β).
  let exponent: Float

  @inline(__always)
  func callAsFunction(_ x: SIMD16<Float>, _ base: SIMD16<Float>) -> SIMD16<Float> {
    x * VectorMath.pow(base, SIMD16(repeating: exponent))
  }
}
