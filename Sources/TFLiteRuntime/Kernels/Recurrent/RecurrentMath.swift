#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import TFLiteFormat
import TFLiteLinearAlgebra

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
    case .tanh: RecurrentMath.rationalTanh(x)
    case .sigmoid: RecurrentMath.rangeReducedLogistic(x)
    }
  }

  /// Replaces `values[0..<count]` by their activations.
  func apply(to values: UnsafeMutablePointer<Float>, count: Int) {
    guard self != .none else { return }
    RecurrentMath.transform(values, count: count) { self($0) }
  }

  /// ``apply(to:count:)`` for values that LiteRT keeps `offset` floats past a 64-byte boundary.
  /// LiteRT computes the sigmoid a whole aligned SIMD packet at a time and the values before the
  /// first and after the last whole packet one at a time, as e / (1 + e) with e = expf(min(x,
  /// 16.6355324)), which rounds differently; the same values are computed that way here.
  func apply(to values: UnsafeMutablePointer<Float>, count: Int, liteRTOffset offset: Int) {
    guard self == .sigmoid else { return apply(to: values, count: count) }
    let packet = RecurrentMath.liteRTPacketFloats
    let head = min((packet - offset % packet) % packet, count)
    let body = (count - head) / packet * packet
    RecurrentMath.expLogistic(values, range: 0..<head)
    apply(to: values + head, count: body)
    RecurrentMath.expLogistic(values, range: head + body..<count)
  }
}

/// Vector arithmetic shared by the recurrent kernels.
enum RecurrentMath {
  /// Floats per SIMD packet in LiteRT's x86-64 build of its vector functions.
  static let liteRTPacketFloats = 4

  /// The sigmoid of `values[range]` one value at a time: e / (1 + e) with e = expf(min(x, 16.6355324)).
  static func expLogistic(_ values: UnsafeMutablePointer<Float>, range: Range<Int>) {
    for index in range {
      let e = expf(min(values[index], 16.635_532_4))
      values[index] = e / (1 + e)
    }
  }

  /// tanh as LiteRT's recurrent kernels compute it (Eigen's fast float tanh without FMA): x clamped
  /// to ±7.90738964, then x + x³·P(x²) over Q(x²), a [9/8] rational with single-precision
  /// coefficients, every product and sum rounded on its own.
  @inline(__always)
  static func rationalTanh(_ input: SIMD16<Float>) -> SIMD16<Float> {
    let limit: Float = 7.907_389_64
    let x = input.clamped(lowerBound: SIMD16(repeating: -limit), upperBound: SIMD16(repeating: limit))
    let x2 = x * x
    let x3 = x2 * x
    var numerator = SIMD16<Float>(repeating: 1.394_553_628e-8)
    for coefficient: Float in [2.102_733_560e-5, 3.520_756_727e-3, 1.340_216_100e-1] {
      numerator = numerator * x2 + SIMD16(repeating: coefficient)
    }
    var denominator = SIMD16<Float>(repeating: 8.015_776_984e-7)
    for coefficient: Float in [3.326_951_409e-4, 2.597_254_514e-2, 4.673_548_340e-1, 1] {
      denominator = denominator * x2 + SIMD16(repeating: coefficient)
    }
    return (x3 * numerator + x) / denominator
  }

  /// The logistic function as LiteRT's recurrent kernels compute it (Eigen's vectorized float
  /// logistic, without FMA): e = exp(x) from x/2 = m·ln2 + r (ln2 in two parts), a degree-5
  /// polynomial for exp(r), scaling by 2^m and squaring; then e / (1 + e). Inputs are capped at
  /// 16.6355324 and those below −104 give 0.
  @inline(__always)
  static func rangeReducedLogistic(_ input: SIMD16<Float>) -> SIMD16<Float> {
    let half = SIMD16<Float>(repeating: 0.5)
    let one = SIMD16<Float>(repeating: 1)
    let x = input.replacing(with: 16.635_532_4, where: input .> 16.635_532_4) * half
    let m = VectorMath.floor(x * 1.442_695_040_888_963_41 + half)
    var r = m * -0.693_359_375 + x
    r = m * 2.121_944_40e-4 + r
    let r2 = r * r
    let even = r2 * 4.189_866_781_234_741_210_937_5e-2 + SIMD16(repeating: 0.499_991_416_931_152_343_75)
    let odd = r2 * 8.334_713_056_683_540_344_238_281_25e-3 + SIMD16(repeating: 0.166_668_772_697_448_730_468_75)
    var p = r * odd + even
    p = r2 * p + (r + one)
    // 2^m from its exponent bits: m (an integer within −75...12 for finite inputs) lands in the
    // low mantissa bits of m + 1.5·2^23.
    let shifter: Float = 12_582_912
    let integers = unsafeBitCast(m + shifter, to: SIMD16<Int32>.self) &- Int32(bitPattern: shifter.bitPattern)
    let exponents = (integers &+ 127) &<< 23
    var e = p * unsafeBitCast(exponents, to: SIMD16<Float>.self)
    e = e * e
    return (e / (one + e)).replacing(with: 0, where: input .< -104)
  }

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

  /// The dot products of four consecutive matrix rows (`depth` apart) with `vector`, sharing its loads.
  @inline(__always)
  private static func fourDots(
    _ rows: UnsafePointer<Float>, depth: Int, _ vector: UnsafePointer<Float>
  ) -> SIMD4<Float> {
    var sums = (SIMD8<Float>(), SIMD8<Float>(), SIMD8<Float>(), SIMD8<Float>())
    @inline(__always) func load(_ pointer: UnsafePointer<Float>) -> SIMD8<Float> {
      UnsafeRawPointer(pointer).loadUnaligned(as: SIMD8<Float>.self)
    }
    var index = 0
    while index + 8 <= depth {
      let values = load(vector + index)
      sums.0 += load(rows + index) * values
      sums.1 += load(rows + depth + index) * values
      sums.2 += load(rows + 2 * depth + index) * values
      sums.3 += load(rows + 3 * depth + index) * values
      index += 8
    }
    var result = SIMD4(sums.0.sum(), sums.1.sum(), sums.2.sum(), sums.3.sum())
    while index < depth {
      let value = vector[index]
      result += SIMD4(rows[index], rows[depth + index], rows[2 * depth + index], rows[3 * depth + index]) * value
      index += 1
    }
    return result
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
      var unit = 0
      while unit + 4 <= rows {
        let sums = fourDots(matrix + unit * depth, depth: depth, vector)
        for lane in 0..<4 { target[unit + lane] += sums[lane] }
        unit += 4
      }
      while unit < rows {
        target[unit] += dot(matrix + unit * depth, vector, count: depth)
        unit += 1
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
