import TFLiteFormat
import TFLiteLinearAlgebra

// FAKE_QUANT (float32): values clamped to the nudged [min, max] range of `num_bits`-bit
// quantization and rounded to its grid, as TFLite does it: scale = (max − min) / (2^bits − 1),
// the zero point from min rounded (half away from zero) into [0, 2^bits − 1], the range moved so
// that 0 is on the grid. TFLite does not run narrow_range at all, so neither do we.

/// FAKE_QUANT of float32 values.
final class FakeQuantKernel: Kernel {
  private static let opName = "FAKE_QUANT"
  private let input: RuntimeTensor
  private let output: RuntimeTensor
  private let nudgedMinimum: Float
  private let nudgedMaximum: Float
  private let scale: Float

  init(node: Node) throws {
    (input, output) = try node.singleInputAndOutput()
    try FloatOperands.require([input, output], op: Self.opName)
    let options = try FloatOperands.options(of: node, op: Self.opName, defaults: FakeQuantOptions()) {
      if case .fakeQuantOptions(let options) = $0 { options } else { nil }
    }
    guard !options.narrowRange else { throw KernelError.unsupported("\(Self.opName) with narrow_range") }
    guard (2...16).contains(options.numBits), options.min < options.max, options.min.isFinite, options.max.isFinite
    else {
      throw KernelError.invalid("\(Self.opName): \(options.numBits) bits over [\(options.min), \(options.max)]")
    }
    let levels = Float((1 << options.numBits) - 1)
    scale = (options.max - options.min) / levels
    let zeroPointFromMinimum = -options.min / scale
    let zeroPoint = zeroPointFromMinimum < 0 ? 0 : zeroPointFromMinimum > levels ? levels : zeroPointFromMinimum.rounded()
    nudgedMinimum = -zeroPoint * scale
    nudgedMaximum = (levels - zeroPoint) * scale
  }

  func prepare(_ context: inout PrepareContext) throws {
    output.shape = input.shape
  }

  func eval(_ context: EvalContext) throws {
    let (source, destination) = try evalPointers(input, output, op: Self.opName)
    let values = source.assumingMemoryBound(to: Float.self)
    let results = destination.assumingMemoryBound(to: Float.self)
    let inverseScale = 1 / scale
    for index in 0..<input.elementCount {
      let clamped = min(nudgedMaximum, max(nudgedMinimum, values[index]))
      results[index] = ((clamped - nudgedMinimum) * inverseScale).rounded() * scale + nudgedMinimum
    }
  }
}
