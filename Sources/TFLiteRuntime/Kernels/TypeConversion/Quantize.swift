// QUANTIZE: float32 → int8 / uint8 / int16 (per tensor or per channel) as
// `round(x / scale) + zeroPoint` in float, clamped; and requantization between integer types
// (int8 / uint8 → int8, uint8, int16; int16 → int8, int16, int32; int32 → int8, int16) by the
// quantized multiplier of `inputScale / outputScale`, as LiteRT's reference kernel does.

import TFLiteFormat
import TFLiteLinearAlgebra

/// Float32 to integer quantization with one scale, or one per slice along an axis.
private struct TypedFloatQuantization<Element: QuantizedInteger> {
  /// Scales and zero points per slice (one entry for per-tensor quantization).
  let scales: [Float]
  let zeroPoints: [Int32]
  /// Elements per slice step: the product of the axes after the quantized axis.
  let innerCount: Int

  func run(input: UnsafePointer<Float>, output: UnsafeMutableRawPointer, range: Range<Int>) {
    let destination = output.assumingMemoryBound(to: Element.self)
    let channels = scales.count
    for index in range {
      let channel = channels == 1 ? 0 : (index / innerCount) % channels
      let rounded = (input[index] / scales[channel]).rounded(.toNearestOrAwayFromZero)
      let quantized = Int64(FixedPoint.truncatingConversion(rounded)) + Int64(zeroPoints[channel])
      destination[index] = Element(clamping: quantized)
    }
  }
}

/// Builds the typed float quantization (a closure formed where the element type is concrete).
private struct FloatQuantizationFactory: QuantizedTypeVisitor {
  let scales: [Float]
  let zeroPoints: [Int32]
  let innerCount: Int
  func visit<Element: QuantizedInteger>(_ type: Element.Type) throws
    -> (UnsafePointer<Float>, UnsafeMutableRawPointer, Range<Int>) -> Void
  {
    let quantization = TypedFloatQuantization<Element>(scales: scales, zeroPoints: zeroPoints, innerCount: innerCount)
    return { quantization.run(input: $0, output: $1, range: $2) }
  }
}

/// QUANTIZE.
final class QuantizeKernel: Kernel {
  private static let opName = "QUANTIZE"
  /// The output types TFLite's QUANTIZE accepts for `input`. A switch, not a dictionary keyed by
  /// type: the first `ElementType`-keyed dictionary of a process costs a scan of every protocol
  /// conformance record (the `Hashable` check), about 0.1 ms at load.
  private static func acceptedOutputs(_ input: ElementType) -> [ElementType] {
    switch input {
    case .float32, .int8, .uint8: [.int8, .uint8, .int16]
    case .int16: [.int8, .int16, .int32]
    case .int32: [.int8, .int16]
    default: []
    }
  }
  private let input: RuntimeTensor
  private let output: RuntimeTensor
  /// The typed float quantization of elements `range`.
  private var floatQuantization: ((UnsafePointer<Float>, UnsafeMutableRawPointer, Range<Int>) -> Void)?
  private var requantization: QuantizedElementMap?

  init(node: Node) throws {
    (input, output) = try node.singleInputAndOutput()
    guard Self.acceptedOutputs(input.type).contains(output.type) else {
      throw KernelError.unsupported("\(Self.opName) from \(input.type.name) to \(output.type.name)")
    }
  }

  func prepare(_ context: inout PrepareContext) throws {
    output.shape = input.shape
    try QuantizationValidation.validate(output, op: Self.opName)
    if input.type == .float32 {
      guard let quantization = output.quantization else { return }
      let zeroPoints = quantization.scales.indices.map {
        Int32(truncatingIfNeeded: quantization.zeroPoints[quantization.zeroPoints.count == 1 ? 0 : $0])
      }
      let innerCount = quantization.isPerAxis ? output.shape[(quantization.axis + 1)...].reduce(1, *) : 1
      floatQuantization = try output.type.visitQuantized(
        FloatQuantizationFactory(scales: quantization.scales, zeroPoints: zeroPoints, innerCount: innerCount))
      return
    }
    let symmetric = input.type == .int16 && output.type == .int16
    let source = try QuantizedOperand(input, op: Self.opName, symmetric: symmetric)
    let destination = try QuantizedOperand(output, op: Self.opName, symmetric: symmetric)
    let rounding = context.roundingPolicy
    let function = RescaleFunction(
      inputZeroPoint: source.zeroPoint, outputZeroPoint: destination.zeroPoint,
      multiplier: QuantizedMultiplier(Double(source.scale) / Double(destination.scale), rounding: rounding),
      rounding: rounding, lower: destination.range.lowerBound, upper: destination.range.upperBound)
    requantization = try QuantizedElementMap(function, from: input.type, to: output.type)
  }

  func eval(_ context: EvalContext) throws {
    let (source, destination) = try evalPointers(input, output, op: Self.opName)
    if let floatQuantization {
      let values = source.assumingMemoryBound(to: Float.self)
      context.forEachChunk(of: output.elementCount, minimumChunk: cheapElementwiseChunk) { range in
        floatQuantization(values, destination, range)
      }
    } else if let requantization {
      let generated = GeneratedByteTableKernel.current
      context.forEachChunk(of: output.elementCount, minimumChunk: cheapElementwiseChunk) { range in
        requantization.run(input: source, output: destination, range: range, generated: generated)
      }
    } else {
      throw KernelError.invalid("\(Self.opName) evaluated before prepare")
    }
  }
}
