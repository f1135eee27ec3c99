// L2_NORMALIZATION over the last axis: x / max(‖x‖₂, 1e-6), as TFLite's reference kernel.

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
