// Quantized L2_NORMALIZATION over the last axis (int8 and uint8), bit-exact with LiteRT's
// reference kernels.
//
// Each row's sum of squared offsets gives a fixed-point multiplier of 1/√sum; every offset is
// rescaled by it to the output scale 1/128 (zero point 0 on int8, 128 on uint8). int8 rescales
// with TFLite's general multiplier (a left shift of 7 folded in); uint8 multiplies the offset by
// 128 first and only divides.

import TFLiteFormat
import TFLiteLinearAlgebra

/// L2_NORMALIZATION on int8 and uint8 tensors.
final class IntegerL2NormalizationKernel: IntegerRowKernel, Kernel {
  /// The output scale TFLite requires: 1/128.
  static let outputScale: Float = 1 / 128

  init(node: Node) throws {
    if case .l2NormOptions(let options) = node.options, options.fusedActivationFunction != .none {
      throw KernelError.unsupported("L2_NORMALIZATION with fused activation \(options.fusedActivationFunction.name)")
    }
    try super.init(node: node, op: "L2_NORMALIZATION", types: [(.int8, .int8), (.uint8, .uint8)])
  }

  func prepare(_ context: inout PrepareContext) throws {
    try prepareShape()
    let inputOperand = try QuantizedOperand(input, op: op)
    let outputOperand = try QuantizedOperand(output, op: op)
    let zeroPoint: Int32 = output.type == .uint8 ? 128 : 0
    guard outputOperand.scale == Self.outputScale, outputOperand.zeroPoint == zeroPoint else {
      throw KernelError.invalid(
        "\(op): output \(QuantizationValidation.describe(output)) must have scale 1/128 and zero point \(zeroPoint), got scale \(outputOperand.scale) and zero point \(outputOperand.zeroPoint)"
      )
    }
    let normalization = TypedL2Normalization(inputZeroPoint: inputOperand.zeroPoint, rounding: context.roundingPolicy)
    setBody(try input.type.visitQuantized(L2NormalizationFactory(normalization: normalization)))
  }
}

/// Builds the typed row loop.
private struct L2NormalizationFactory: QuantizedTypeVisitor {
  let normalization: TypedL2Normalization
  func visit<Element: QuantizedInteger>(_ type: Element.Type) throws -> RowLoop {
    let normalization = normalization
    return { normalization.run(Element.self, input: $0, output: $1, depth: $2, rows: $3) }
  }
}

/// The rows of one normalization.
private struct TypedL2Normalization {
  /// The left shift that turns a multiple of 1/√sum into 1/128 steps.
  static let outputBits = 7
  let inputZeroPoint: Int32
  let rounding: RoundingPolicy

  func run<Element: QuantizedInteger>(
    _: Element.Type, input: UnsafeRawPointer, output: UnsafeMutableRawPointer, depth: Int, rows: Range<Int>
  ) {
    let unsigned = Element.min == 0
    for row in rows {
      let source = input.assumingMemoryBound(to: Element.self) + row * depth
      let destination = output.assumingMemoryBound(to: Element.self) + row * depth
      // TFLite sums in int32 (wrapping only for rows of more than 33 025 values).
      var sumOfSquares: Int32 = 0
      for index in 0..<depth {
        let offset = Int32(truncatingIfNeeded: source[index]) &- inputZeroPoint
        sumOfSquares = sumOfSquares &+ offset &* offset
      }
      let inverse = FixedPoint.inverseSquareRoot(sumOfSquares)
      let scaled = QuantizedMultiplier(multiplier: inverse.multiplier, shift: inverse.shift + Self.outputBits)
      for index in 0..<depth {
        let offset = Int32(truncatingIfNeeded: source[index]) &- inputZeroPoint
        let value =
          unsigned
          ? 128 &+ inverse.applyAsSmallerThanOne(offset &* 128, rounding: rounding)
          : scaled.apply(offset, rounding: rounding)
        destination[index] = Element(clamping: value)
      }
    }
  }
}
