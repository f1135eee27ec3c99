// Weights of the recurrent kernels, FLOAT32 or dynamic-range ("hybrid") INT8 with one scale per
// tensor, as LiteRT's LSTM, RNN and SVDF kernels take them:
// - a weight matrix multiplies vectors quantized to int8 per batch row (symmetric, or asymmetric
//   with the `asymmetric_quantize_inputs` option; the quantizer of ``HybridInputQuantization``);
//   each int32 dot product, less the row sum times the zero point, is scaled by
//   `inputScale · weightScale` and added to the float result;
// - a weight vector (peepholes, SVDF time weights) is dequantized once, `value · scale`, and used in float.
import TFLiteLinearAlgebra


/// A batch of float vectors that a ``RecurrentMatrix`` multiplies, with their int8 copy when
/// hybrid weights read them.
struct RecurrentVectors {
  /// The first vector.
  let values: UnsafePointer<Float>
  /// Floats between consecutive vectors.
  let stride: Int
  /// The int8 copy, vector after vector (`depth` values each), or nil for float weights.
  let quantized: HybridQuantizedInput?
}

/// Scratch room for the int8 copy of `batch` vectors of `depth` values.
struct RecurrentQuantizationScratch {
  private let valuesOffset: Int
  private let scalesOffset: Int
  private let zeroPointsOffset: Int
  private let depth: Int
  private let batch: Int
  /// How vectors are quantized, or nil when the weights are float (no room reserved).
  private let quantization: HybridInputQuantization?

  /// Reserves the room in `scratch` when `quantization` is given.
  init(batch: Int, depth: Int, quantization: HybridInputQuantization?, scratch: inout ScratchLayout) {
    self.batch = batch
    self.depth = depth
    self.quantization = quantization
    let used = quantization == nil ? 0 : 1
    valuesOffset = scratch.reserve(bytes: used * batch * depth)
    scalesOffset = scratch.reserve(floats: used * batch)
    zeroPointsOffset = scratch.reserve(bytes: used * batch * MemoryLayout<Int32>.stride)
  }

  /// The vectors at `values` (`stride` floats apart), quantized into `scratch` for hybrid weights.
  func vectors(_ values: UnsafePointer<Float>, stride: Int, scratch: UnsafeMutableRawPointer) -> RecurrentVectors {
    guard let quantization else { return RecurrentVectors(values: values, stride: stride, quantized: nil) }
    let quantized = HybridQuantizedInput(
      values: (scratch + valuesOffset).assumingMemoryBound(to: Int8.self),
      scales: (scratch + scalesOffset).assumingMemoryBound(to: Float.self),
      zeroPoints: (scratch + zeroPointsOffset).assumingMemoryBound(to: Int32.self), runLength: depth)
    for row in 0..<batch {
      let parameters = quantization.quantize(values + row * stride, count: depth, into: quantized.values + row * depth)
      quantized.scales[row] = parameters.scale
      quantized.zeroPoints[row] = parameters.zeroPoint
    }
    return RecurrentVectors(values: values, stride: stride, quantized: quantized)
  }
}

/// Throws unless `tensor` is FLOAT32, or INT8 with one scale and zero point 0 when `hybrid`.
private func checkRecurrentWeight(_ tensor: RuntimeTensor, hybrid: Bool, op: String) throws {
  guard hybrid else { return try FloatOperands.require([tensor], op: op) }
  guard tensor.type == .int8, let quantization = tensor.quantization, quantization.scales.count == 1,
    quantization.zeroPoints.allSatisfy({ $0 == 0 })
  else {
    throw KernelError.unsupported(
      "\(op) with hybrid weights needs INT8 weights with one scale and zero point 0, got '\(tensor.name)' \(tensor.type.name)")
  }
  try QuantizationValidation.validate(tensor, op: op)
}

/// Throws unless `state` is a variable tensor of `rows` rows of `width` values: the recurrent
/// kernels update their states in place, which only variable tensors allow.
func checkRecurrentState(_ state: RuntimeTensor, rows: Int, width: Int, op: String, role: String) throws {
  guard state.isVariable else {
    throw KernelError.invalid("\(op) \(role) '\(state.name)' must be a variable tensor")
  }
  let (count, overflow) = rows.multipliedReportingOverflow(by: width)
  guard !overflow, state.elementCount == count else {
    throw KernelError.invalid("\(op) \(role) \(state.shape) does not hold \(rows) rows of \(width) values")
  }
}

/// A weight matrix `[rows, depth]` of a recurrent kernel.
struct RecurrentMatrix {
  /// The weights.
  let tensor: RuntimeTensor
  private var hybridWeights: HybridWeights?

  /// Checks the type (INT8 with one scale when `hybrid`, else FLOAT32).
  init(_ tensor: RuntimeTensor, hybrid: Bool, op: String) throws {
    try checkRecurrentWeight(tensor, hybrid: hybrid, op: op)
    self.tensor = tensor
  }

  /// Checks the shape and reads hybrid weights.
  mutating func prepare(rows: Int, depth: Int, op: String, role: String) throws {
    guard tensor.shape == [rows, depth] else {
      throw KernelError.invalid("\(op) \(role) must be [\(rows), \(depth)], got \(tensor.shape)")
    }
    if tensor.type == .int8 {
      hybridWeights = try HybridWeights.reusing(
        hybridWeights, tensor, op: op, layout: .contiguous(rows: rows, columns: depth), channels: rows, channelAxis: 0)
    }
  }

  /// For each of `batch` vectors `b` and row `r`: `result[b·resultStride + r] += row r · vector b`.
  func multiplyAccumulate(
    _ vectors: RecurrentVectors, batch: Int, into result: UnsafeMutablePointer<Float>, resultStride: Int
  ) {
    let (rows, depth) = (tensor.shape[0], tensor.shape[1])
    guard let hybridWeights, let quantized = vectors.quantized else {
      RecurrentMath.multiplyAccumulate(
        matrix: tensor.pointer(as: Float.self), rows: rows, depth: depth, vectors: vectors.values,
        vectorStride: vectors.stride, batch: batch, result: result, resultStride: resultStride)
      return
    }
    let weightScale = hybridWeights.channelScales[0]
    for row in 0..<batch {
      let factor = quantized.scales[row] * weightScale
      let zeroPoint = quantized.zeroPoints[row]
      let target = result + row * resultStride
      let vector = quantized.values + row * depth
      HybridProducts.forEachDotProduct(weights: hybridWeights.values, depth: depth, rows: 0..<rows, input: vector) {
        unit, sum in
        target[unit] += Float(sum &- hybridWeights.rowSums[unit] &* zeroPoint) * factor
      }
    }
  }
}

/// A weight vector (or a matrix used element by element) of a recurrent kernel, as floats.
final class RecurrentVector {
  /// The weights.
  let tensor: RuntimeTensor
  private var dequantized: UnsafeMutablePointer<Float>?

  /// Checks the type (INT8 with one scale when `hybrid`, else FLOAT32).
  init(_ tensor: RuntimeTensor, hybrid: Bool, op: String) throws {
    try checkRecurrentWeight(tensor, hybrid: hybrid, op: op)
    self.tensor = tensor
  }

  deinit { dequantized?.deallocate() }

  /// Checks the shape and dequantizes INT8 values (`value · scale`).
  func prepare(shape: [Int], op: String, role: String) throws {
    guard tensor.shape == shape else { throw KernelError.invalid("\(op) \(role) must be \(shape), got \(tensor.shape)") }
    guard tensor.type == .int8 else { return }
    guard tensor.isConstant, let data = tensor.data else {
      throw KernelError.unsupported("\(op): hybrid \(role) '\(tensor.name)' must be constant")
    }
    let scale = tensor.quantization?.scales.first ?? 1
    let count = tensor.elementCount
    dequantized?.deallocate()
    let values = UnsafeMutablePointer<Float>.allocate(capacity: max(count, 1))
    for index in 0..<count { (values + index).initialize(to: Float(data.load(fromByteOffset: index, as: Int8.self)) * scale) }
    dequantized = values
  }

  /// The float values (valid in `eval`).
  var values: UnsafePointer<Float> { UnsafePointer(dequantized ?? tensor.pointer(as: Float.self)) }
}
