import TFLiteFormat

// Float building blocks of the recurrent kernels (LSTM, RNN, SVDF): batched matrix-vector
// products with strided rows, in-place activations and per-row normalization. Everything works
// on raw pointers and never allocates, so the kernels can call it from `eval`.

/// The activation a recurrent kernel applies to a gate or a hidden state.
enum RecurrentActivation {
  case none, relu, reluMinusOneToOne, relu6, tanh, sigmoid

  /// The activation named by a fused-activation option. `allowsNone` is false for the LSTM kernels:
  /// TFLite's LSTM leaves its buffers unwritten for NONE, so its results are not the identity's.
  init(_ activation: ActivationFunctionType, op: String, allowsNone: Bool = true) throws {
    switch activation {
    case .none where allowsNone: self = .none
    case .relu: self = .relu
    case .reluN1To1: self = .reluMinusOneToOne
    case .relu6: self = .relu6
    case .tanh: self = .tanh
    default: throw KernelError.unsupported("\(op) with activation \(activation.name)")
    }
  }

  /// The activation of 16 lanes.
  @inline(__always)
  func callAsFunction(_ x: SIMD16<Float>) -> SIMD16<Float> {
    switch self {
    case .none: x
    case .relu: x.replacing(with: 0, where: x .< 0)
    case .reluMinusOneToOne: x.clamped(lowerBound: SIMD16(repeating: -1), upperBound: SIMD16(repeating: 1))
    case .relu6: x.clamped(lowerBound: SIMD16(repeating: 0), upperBound: SIMD16(repeating: 6))
    case .tanh: VectorMath.tanh(x)
    case .sigmoid: VectorMath.logistic(x)
    }
  }

  /// Replaces `values[0..<count]` by their activations.
  func apply(to values: UnsafeMutablePointer<Float>, count: Int) {
    guard self != .none else { return }
    RecurrentMath.transform(values, count: count) { self($0) }
  }
}

/// Vector arithmetic shared by the recurrent kernels.
enum RecurrentMath {
  /// `Σ a[i]·b[i]` over `count` elements.
  @inline(__always)
  static func dot(_ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, count: Int) -> Float {
    var first = SIMD8<Float>(), second = SIMD8<Float>()
    var index = 0
    while index + 16 <= count {
      first += UnsafeRawPointer(a + index).loadUnaligned(as: SIMD8<Float>.self)
        * UnsafeRawPointer(b + index).loadUnaligned(as: SIMD8<Float>.self)
      second += UnsafeRawPointer(a + index + 8).loadUnaligned(as: SIMD8<Float>.self)
        * UnsafeRawPointer(b + index + 8).loadUnaligned(as: SIMD8<Float>.self)
      index += 16
    }
    var sum = (first + second).sum()
    while index < count {
      sum += a[index] * b[index]
      index += 1
    }
    return sum
  }

  /// For every batch row `b` and matrix row `r`:
  /// `result[b·resultStride + r] += Σₖ matrix[r·depth + k] · vectors[b·vectorStride + k]`.
  static func multiplyAccumulate(
    matrix: UnsafePointer<Float>, rows: Int, depth: Int, vectors: UnsafePointer<Float>, vectorStride: Int,
    batch: Int, result: UnsafeMutablePointer<Float>, resultStride: Int
  ) {
    for row in 0..<batch {
      let vector = vectors + row * vectorStride
      let target = result + row * resultStride
      for unit in 0..<rows {
        target[unit] += dot(matrix + unit * depth, vector, count: depth)
      }
    }
  }

  /// Copies `vector` (`count` floats) into each of `batch` rows `stride` apart, or zeros when it is nil.
  static func fillRows(
    _ destination: UnsafeMutablePointer<Float>, with vector: UnsafePointer<Float>?, count: Int, batch: Int,
    stride: Int
  ) {
    for row in 0..<batch {
      let target = destination + row * stride
      if let vector {
        target.update(from: vector, count: count)
      } else {
        target.update(repeating: 0, count: count)
      }
    }
  }

  /// Copies `batch` rows of `count` floats between buffers with their own row strides.
  static func copyRows(
    from source: UnsafePointer<Float>, sourceStride: Int, to destination: UnsafeMutablePointer<Float>,
    destinationStride: Int, count: Int, batch: Int
  ) {
    for row in 0..<batch {
      (destination + row * destinationStride).update(from: source + row * sourceStride, count: count)
    }
  }

  /// `values[b·count + i] += weights[i] · vectors[b·count + i]` (a diagonal matrix per batch row).
  static func diagonalMultiplyAccumulate(
    weights: UnsafePointer<Float>, vectors: UnsafePointer<Float>, count: Int, batch: Int,
    values: UnsafeMutablePointer<Float>
  ) {
    for row in 0..<batch {
      let offset = row * count
      for index in 0..<count { values[offset + index] += weights[index] * vectors[offset + index] }
    }
  }

  /// Normalizes each of `batch` rows of `count` values to mean 0 and standard deviation 1
  /// (variance from the centred values, plus 1e-8 as TFLite's layer-norm LSTM), then scales it
  /// by `coefficients` and adds `bias`.
  static func normalizeRows(
    _ values: UnsafeMutablePointer<Float>, count: Int, batch: Int, coefficients: UnsafePointer<Float>,
    bias: UnsafePointer<Float>?
  ) {
    for row in 0..<batch {
      let start = values + row * count
      var sum: Float = 0
      for index in 0..<count { sum += start[index] }
      let mean = sum / Float(count)
      var squares: Float = 0
      for index in 0..<count {
        let difference = start[index] - mean
        squares += difference * difference
      }
      let inverseDeviation = 1 / (squares / Float(count) + 1e-8).squareRoot()
      for index in 0..<count {
        start[index] = (start[index] - mean) * inverseDeviation * coefficients[index] + (bias?[index] ?? 0)
      }
    }
  }

  /// Clamps `values[0..<count]` to `[-limit, limit]`.
  static func clip(_ values: UnsafeMutablePointer<Float>, count: Int, limit: Float) {
    transform(values, count: count) {
      $0.clamped(lowerBound: SIMD16(repeating: -limit), upperBound: SIMD16(repeating: limit))
    }
  }

  /// Replaces `values[0..<count]` by `body` of them, 16 lanes at a time.
  @inline(__always)
  static func transform(
    _ values: UnsafeMutablePointer<Float>, count: Int, _ body: (SIMD16<Float>) -> SIMD16<Float>
  ) {
    var index = 0
    while index < count {
      let lanes = min(vectorLaneCount, count - index)
      let vector =
        lanes == vectorLaneCount ? loadVector(values + index) : loadPartialVector(values + index, count: lanes)
      storeVector(body(vector), values + index, lanes: lanes)
      index += lanes
    }
  }
}

/// Where the rows of a `[time, batch, features]` (time major) or `[batch, time, features]`
/// sequence are, in rows of `features` values.
struct SequenceLayout {
  /// Time steps.
  let steps: Int
  /// Sequences in the batch.
  let batch: Int
  /// True for `[time, batch, ...]`.
  let timeMajor: Bool

  /// Reads the layout of a rank-3 sequence tensor.
  init(_ tensor: RuntimeTensor, timeMajor: Bool, op: String) throws {
    try FloatOperands.requireRank(tensor, 3, op: op, role: "input")
    self.timeMajor = timeMajor
    steps = timeMajor ? tensor.shape[0] : tensor.shape[1]
    batch = timeMajor ? tensor.shape[1] : tensor.shape[0]
  }

  /// One time step of `batch` rows.
  init(batch: Int) {
    steps = 1
    self.batch = batch
    timeMajor = true
  }

  /// Index of the row of time step `step` of the first sequence.
  func firstRow(step: Int) -> Int { timeMajor ? step * batch : step }

  /// Rows between the same time step of consecutive sequences.
  var batchRowStride: Int { timeMajor ? 1 : steps }
}
