/// The kernels of the runtime, by operator name (schema `BuiltinOperator` name or custom code).
///
/// An operator may have several kernels (for example a float kernel and an integer one, each in
/// its family's file): they are tried in registration order and the first whose `init(node:)`
/// accepts the node runs it.
public enum KernelRegistry {
  /// Every kernel the runtime has, by operator name, in the order they are tried.
  // Written once by its initializer and only read afterwards.
  nonisolated(unsafe) static let builtin: [String: [any Kernel.Type]] = {
    // The quantized families come first: they accept only quantized integer nodes, and some
    // general kernels would otherwise take int8 / int16 nodes as plain integers.
    let families: [[String: any Kernel.Type]] = [
      quantize, integerElementwise, integerActivations, integerSoftmax, integerPooling, integerReductions,
      integerConcatenation, integerResize, integerConvolution, integerTransposeConvolution, integerBatchMatMul,
      integerElementwiseUnary, integerComparisons, integerNormalization,
      hybrid,
      convolution, depthwiseConvolution, transposeConvolution, fullyConnected, batchMatMul, pooling,
      reshape, transpose, concatenation, split, slice, gather, pad, tile, resize, spaceDepth, shape, cast, fill,
      dequantize, densify,
      elementwiseBinary, elementwiseUnary, activations, softmax, normalization, reductions, comparisons, select,
      controlFlow, variables,
      spaceBatch, reverse, oneHot, range, topK, detectionPostProcess, nonMaxSuppression, whereCoordinates, unique,
      embeddingLookup, matrixDiag, segmentSum, scatter,
      convolution3D, bitwise, unsortedSegment, shapeQueries, dynamicUpdateSlice, reverseSequence, matrixSetDiag,
      dilate, bitcast, bucketize, sparseToDense, fakeQuant, fourierTransform,
      embeddingLookupSparse,
      mediaPipe,
      lstm, rnn, svdf,
    ]
    return families.reduce(into: [:]) { all, family in
      for (name, kernel) in family { all[name, default: []].append(kernel) }
    }
  }()

  /// The kernel types for `opName`, in the order they are tried; empty when the runtime has none.
  public static func kernels(for opName: String) -> [any Kernel.Type] { builtin[opName] ?? [] }

  /// Builds the first kernel for `node` that accepts it. When none does, throws
  /// ``KernelError/unsupported(_:)`` with every kernel's reason.
  static func makeKernel(for node: Node) throws -> any Kernel {
    let candidates = kernels(for: node.opName)
    guard !candidates.isEmpty else { throw KernelError.unsupported("no kernel for this operator") }
    var reasons: [String] = []
    for candidate in candidates {
      do {
        return try candidate.init(node: node)
      } catch {
        reasons.append("\(error)")
      }
    }
    throw KernelError.unsupported(reasons.count == 1 ? reasons[0] : reasons.joined(separator: "; "))
  }

  /// Names of every operator the runtime has a kernel for, sorted.
  public static var supportedOperators: [String] { builtin.keys.sorted() }
}
