// Error measures of one tensor of our run against a reference runtime's values of the same tensor.
// Real values are compared: quantized tensors are dequantized with the model's parameters (both
// sides have the same ones), so errors are in the model's real units, and `maxErrorSteps` is the
// largest difference of the stored integers (|Δ| / scale). Integer tensors (quantized or not) are
// within tolerance when every stored value is within `integerSteps` (0: exact); float tensors when
// every |ours - reference| <= atol + rtol * |reference| (NaN matches only NaN).

import Foundation
import TFLiteRuntime

/// What `compare --reference` accepts as a match.
struct LayerTolerance {
  /// Tolerance of float tensors.
  var float: Tolerance
  /// The largest difference of stored values allowed in integer tensors (0: exact).
  var integerSteps: Int
}

/// One tensor compared with its reference values.
struct TensorComparison {
  /// Why a tensor was not compared value by value.
  enum Skip {
    /// The reference has no values for it (the reason its writer gave).
    case absentInReference(String)
    /// Our run did not compute it.
    case notComputed(String)
  }

  /// Statistics over the elements of a compared tensor.
  struct Errors {
    /// Elements compared.
    var elementCount = 0
    /// Elements beyond tolerance.
    var mismatchCount = 0
    /// First element beyond tolerance (flat index), if any.
    var firstMismatch: Int?
    /// Largest |ours - reference| (real units) over finite differences.
    var maxAbsoluteError = 0.0
    /// Mean |ours - reference| over finite differences.
    var meanAbsoluteError = 0.0
    /// Largest difference of stored integers, for quantized tensors.
    var maxErrorSteps: Int?
    /// ‖ours - reference‖₂ / ‖reference‖₂ (0 when both are 0).
    var relativeError = 0.0
    /// Cosine similarity of ours and the reference as vectors (1 when both are 0).
    var cosine = 1.0
    /// 10·log10(‖reference‖² / ‖ours - reference‖²), +inf when equal.
    var signalToNoiseDecibels = Double.infinity
  }

  /// The outcome.
  enum Outcome {
    /// Compared value by value (shapes equal).
    case compared(Errors)
    /// The shapes differ: out of tolerance.
    case shapeDiffers(ours: [Int], reference: [Int])
    /// Not compared.
    case skipped(Skip)
  }

  /// Tensor index in subgraph 0.
  var tensorIndex: Int
  /// The tensor's name.
  var name: String
  /// Our tensor's type and shape.
  var typeAndShape: String
  /// What was found.
  var outcome: Outcome

  /// True or false for a compared tensor, nil for one that was not compared.
  var isWithinTolerance: Bool? {
    switch outcome {
    case .compared(let errors): errors.mismatchCount == 0
    case .shapeDiffers: false
    case .skipped: nil
    }
  }

  /// Compares `ours` (the values of `tensor` after a run) with `reference`.
  init(tensor: RuntimeTensor, ours: HostArray, reference: HostArray, tolerance: LayerTolerance) {
    tensorIndex = tensor.index
    name = tensor.name
    typeAndShape = tensor.typeAndShape
    guard ours.shape == reference.shape else {
      outcome = .shapeDiffers(ours: ours.shape, reference: reference.shape)
      return
    }
    var reference = reference
    reference.quantization = ours.quantization
    guard let oursStored = ours.numbers(), let referenceStored = reference.numbers(),
      let oursReal = ours.realValues(), let referenceReal = reference.realValues(),
      oursStored.count == referenceStored.count
    else {
      outcome = .skipped(.notComputed("values of type \(tensor.type.name) are not numbers"))
      return
    }
    let isInteger = ![ElementType.float16, .bfloat16, .float32, .float64].contains(tensor.type)
    let isQuantized = isInteger && tensor.quantization != nil
    var errors = Errors(elementCount: oursStored.count, maxErrorSteps: isQuantized ? 0 : nil)
    var absoluteSum = 0.0
    var finiteCount = 0
    var errorSquares = 0.0
    var referenceSquares = 0.0
    var oursSquares = 0.0
    var dotProduct = 0.0
    for index in oursStored.indices {
      let (a, r) = (oursReal[index], referenceReal[index])
      let storedDifference = abs(oursStored[index] - referenceStored[index])
      let accepted =
        isInteger ? storedDifference <= Double(tolerance.integerSteps) : tolerance.float.accepts(a, r)
      if !accepted {
        errors.mismatchCount += 1
        if errors.firstMismatch == nil { errors.firstMismatch = index }
      }
      if isQuantized { errors.maxErrorSteps = max(errors.maxErrorSteps ?? 0, Int(storedDifference)) }
      let difference = a == r ? 0 : abs(a - r)
      if difference.isFinite {
        finiteCount += 1
        absoluteSum += difference
        errors.maxAbsoluteError = max(errors.maxAbsoluteError, difference)
        errorSquares += difference * difference
      }
      if a.isFinite && r.isFinite {
        referenceSquares += r * r
        oursSquares += a * a
        dotProduct += a * r
      }
    }
    errors.meanAbsoluteError = finiteCount > 0 ? absoluteSum / Double(finiteCount) : 0
    errors.relativeError =
      errorSquares == 0 ? 0 : referenceSquares == 0 ? .infinity : (errorSquares / referenceSquares).squareRoot()
    errors.cosine =
      oursSquares == 0 && referenceSquares == 0
      ? 1 : oursSquares == 0 || referenceSquares == 0 ? 0 : dotProduct / (oursSquares * referenceSquares).squareRoot()
    errors.signalToNoiseDecibels =
      errorSquares == 0 ? .infinity : referenceSquares == 0 ? -.infinity : 10 * log10(referenceSquares / errorSquares)
    outcome = .compared(errors)
  }

  /// A tensor that was not compared.
  init(tensor: RuntimeTensor, skipped reason: Skip) {
    tensorIndex = tensor.index
    name = tensor.name
    typeAndShape = tensor.typeAndShape
    outcome = .skipped(reason)
  }
}
