// Quantized TRANSPOSE_CONV, bit-exact with LiteRT's reference kernels: int8 activations with int8
// weights (per-tensor or per-output-channel) and an optional int32 bias, uint8 activations with
// uint8 weights (per-tensor, any zero point), and int16 activations with int8 weights and an
// optional int64 (or int32) bias.
//
// Every input value lands on the output pixels its filter taps reach: output (y, x) gathers input
// (iy, ix) through tap (ky, kx) when y + pad_top = iy · stride + ky (and likewise for x). Each
// product is (input − input zero point) · (weight − weight zero point). The sum plus bias is
// rescaled per output channel by input_scale · weight_scale / output_scale, offset by the output
// zero point and clamped to the fused activation's range (TRANSPOSE_CONV version 4 and later),
// with the same arithmetic as the integer CONV_2D: 8-bit sums wrap in 32 bits and rescale with two
// roundings (the run's rounding policy); 16-bit ones with an int64 (or no) bias accumulate in 64
// bits and use the 64-bit rescale.

import TFLiteFormat
import TFLiteLinearAlgebra

/// TRANSPOSE_CONV on quantized tensors: inputs `output_shape` (constant INT32 `[4]`), weights
/// `[O,KH,KW,I]`, input `[N,H,W,I]` and an optional bias `[O]`.
final class IntegerTransposeConvKernel: Kernel {
  private let outputShapeTensor: RuntimeTensor
  private let weights: RuntimeTensor
  private let input: RuntimeTensor
  private let bias: RuntimeTensor?
  private let output: RuntimeTensor
  private let options: TransposeConvOptions
  private let activation: FusedActivation
  private var shape: TransposeConvolutionShape?
  private var arithmetic: IntegerWeightedArithmetic?

  init(node: Node) throws {
    let op = "TRANSPOSE_CONV"
    try node.expect(inputs: 3, maxInputs: 4, outputs: 1)
    let (input, weights, output) = (try node.input(2), try node.input(1), try node.output(0))
    let pairs: [(ElementType, ElementType)] = [(.int8, .int8), (.uint8, .uint8), (.int16, .int8)]
    guard pairs.contains(where: { $0 == input.type && $1 == weights.type }), output.type == input.type else {
      throw KernelError.unsupported(
        "\(op) with \(input.type.name) input, \(weights.type.name) weights and \(output.type.name) output "
          + "in the integer kernels")
    }
    (self.input, self.weights, self.output) = (input, weights, output)
    outputShapeTensor = try node.input(0)
    bias = node.optionalInput(3)
    guard outputShapeTensor.type == .int32 else {
      throw KernelError.invalid("\(op) output_shape must be INT32, got \(outputShapeTensor.type.name)")
    }
    options = try FloatOperands.options(of: node, op: op, defaults: TransposeConvOptions()) {
      if case .transposeConvOptions(let options) = $0 { options } else { nil }
    }
    activation = try FusedActivation(options.fusedActivationFunction, op: op)
    try Self.checkBiasType(bias, input: input, declared: options.quantizedBiasType, op: op)
  }

  /// The bias LiteRT accepts: int32 for 8-bit activations; int64 or int32 for 16-bit ones, as the
  /// options' `quantized_bias_type` says when it is set.
  private static func checkBiasType(
    _ bias: RuntimeTensor?, input: RuntimeTensor, declared: TensorType, op: String
  ) throws {
    let allowed: [ElementType] = input.type == .int16 ? [.int64, .int32] : [.int32]
    if let bias, !allowed.contains(bias.type) {
      throw KernelError.unsupported("\(op) with \(bias.type.name) bias on \(input.type.name) input")
    }
    guard input.type == .int16, declared != .float32 else { return }
    guard let declaredType = ElementType(declared), [.int64, .int32].contains(declaredType) else {
      throw KernelError.invalid("\(op) declares quantized_bias_type \(declared.name); 16-bit inputs need INT64 or INT32")
    }
    if let bias, bias.type != declaredType {
      throw KernelError.invalid("\(op) bias '\(bias.name)' is \(bias.type.name) but quantized_bias_type is \(declared.name)")
    }
    // LiteRT then sums in 32 bits even without a bias; the shared arithmetic sums 16-bit inputs
    // without a bias in 64 bits, so that combination is not run here.
    if bias == nil && declaredType == .int32 {
      throw KernelError.unsupported("\(op) on INT16 input with quantized_bias_type INT32 and no bias")
    }
  }

  func prepare(_ context: inout PrepareContext) throws {
    let op = "TRANSPOSE_CONV"
    let shape = try TransposeConvolutionShape(
      op: op, outputShape: outputShapeTensor, input: input, weights: weights, options: options)
    try FloatOperands.requireBias(bias, count: shape.outputChannels, op: op)
    try Self.requireSymmetric(weights, bias: bias, input: input, op: op)
    arithmetic = try IntegerWeightedArithmetic(
      op: op, input: input, weights: weights, bias: bias, output: output, outputChannels: shape.outputChannels,
      channelAxis: 0, activation: activation, rounding: context.roundingPolicy)
    self.shape = shape
    output.shape = shape.outputShape
    context.requestScratch(bytes: input.elementCount * MemoryLayout<Int32>.stride)
  }

  /// LiteRT's signed kernels ignore the weights' zero points and require a zero bias zero point,
  /// so signed weights and biases must be symmetric.
  private static func requireSymmetric(
    _ weights: RuntimeTensor, bias: RuntimeTensor?, input: RuntimeTensor, op: String
  ) throws {
    guard input.type != .uint8 else { return }
    if let zeroPoint = weights.quantization?.zeroPoints.first(where: { $0 != 0 }) {
      throw KernelError.invalid(
        "\(op): \(weights.type.name) weights '\(weights.name)' must have zero point 0, got \(zeroPoint)")
    }
    if let bias, let zeroPoint = bias.quantization?.zeroPoints.first(where: { $0 != 0 }) {
      throw KernelError.invalid("\(op): bias '\(bias.name)' must have zero point 0, got \(zeroPoint)")
    }
  }

  func eval(_ context: EvalContext) throws {
    guard output.elementCount > 0 else { return }
    guard let shape, let arithmetic, let scratch = context.scratch else {
      throw KernelError.invalid("TRANSPOSE_CONV was not prepared")
    }
    let pass = IntegerTransposeConvolution(
      shape: shape, arithmetic: arithmetic, input: scratch.assumingMemoryBound(to: Int32.self),
      output: try tensorData(output), context: context)
    try arithmetic.widenInput(input, into: pass.input)
    try output.type.visitQuantized(pass)
  }
}

/// One evaluation of a quantized transposed convolution over widened inputs (input values already
/// offset by minus the input zero point), specialised for the output element type.
private struct IntegerTransposeConvolution: QuantizedTypeVisitor {
  let shape: TransposeConvolutionShape
  let arithmetic: IntegerWeightedArithmetic
  /// The widened input, NHWC.
  let input: UnsafeMutablePointer<Int32>
  let output: UnsafeMutableRawPointer
  let context: EvalContext

  /// Computes every output element, one output row per parallel task.
  func visit<Output: QuantizedInteger>(_ type: Output.Type) {
    let output = self.output.assumingMemoryBound(to: Output.self)
    let input = UnsafePointer(self.input)
    let outputHeight = shape.height.inputSize
    let outputWidth = shape.width.inputSize
    let outputChannels = shape.outputChannels
    let depth = shape.inputChannels
    let tapsPerChannel = shape.height.filterSize * shape.width.filterSize
    let imageSize = shape.inputHeight * shape.inputWidth * depth
    let (shape, arithmetic) = (self.shape, self.arithmetic)
    arithmetic.weights.withUnsafeBufferPointer { weightBuffer in
      guard let weights = weightBuffer.baseAddress else { return }
      context.parallelFor(shape.batch * outputHeight) { row in
        let imageBase = input + row / outputHeight * imageSize
        for x in 0..<outputWidth {
          let outputBase = output + (row * outputWidth + x) * outputChannels
          for channel in 0..<outputChannels {
            let channelWeights = weights + channel * tapsPerChannel * depth
            var sum: Int64 = 0
            shape.forEachContribution(outputY: row % outputHeight, outputX: x) { inputPixel, tap in
              let pixel = imageBase + inputPixel * depth
              let filter = channelWeights + tap * depth
              var partial: Int64 = 0
              for d in 0..<depth { partial &+= Int64(pixel[d]) &* Int64(filter[d]) }
              sum &+= partial
            }
            outputBase[channel] = Output(truncatingIfNeeded: arithmetic.requantize(sum, channel: channel))
          }
        }
      }
    }
  }
}
