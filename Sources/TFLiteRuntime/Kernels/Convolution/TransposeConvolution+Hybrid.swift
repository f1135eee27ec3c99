// Hybrid TRANSPOSE_CONV: float input and output, constant int8 weights `[O, KH, KW, I]` (one scale
// or one per output channel, zero point 0) and an optional float bias, as the converter writes a
// Keras Conv2DTranspose with dynamic-range quantization.
//
// Like the per-channel hybrid CONV_2D, each image is quantized asymmetrically (see Hybrid.swift);
// every output value gathers the int32 sum of (input − image zero point) · weight over the taps
// that reach it, and becomes sum · (image scale · weight scale) + bias, clamped to the activation.
// The integer sums are exact; LiteRT 2.3 adds its partial results in float in an order not
// reproduced here, so outputs can differ from BUILTIN_REF in the last few bits.

import TFLiteFormat
import TFLiteLinearAlgebra

/// TRANSPOSE_CONV with float input and int8 weights: inputs `output_shape` (constant INT32 `[4]`),
/// weights `[O,KH,KW,I]`, input `[N,H,W,I]` and an optional float bias `[O]`.
final class HybridTransposeConvKernel: Kernel {
  private static let op = "TRANSPOSE_CONV"
  private let outputShapeTensor: RuntimeTensor
  private let weightTensor: RuntimeTensor
  private let input: RuntimeTensor
  private let bias: RuntimeTensor?
  private let output: RuntimeTensor
  private let options: TransposeConvOptions
  private let activation: FloatClampRange
  private var shape: TransposeConvolutionShape?
  private var weights: HybridWeights?
  private var quantizedInput: HybridInputScratch?

  init(node: Node) throws {
    try node.expect(inputs: 3, maxInputs: 4, outputs: 1)
    outputShapeTensor = try node.input(0)
    weightTensor = try node.input(1)
    input = try node.input(2)
    bias = node.optionalInput(3)
    output = try node.output(0)
    guard input.type == .float32, output.type == .float32, weightTensor.type == .int8 else {
      throw KernelError.unsupported(
        "\(Self.op) with \(input.type.name) input, \(weightTensor.type.name) weights and \(output.type.name) output"
          + " in the hybrid kernels")
    }
    guard outputShapeTensor.type == .int32 else {
      throw KernelError.invalid("\(Self.op) output_shape must be INT32, got \(outputShapeTensor.type.name)")
    }
    try FloatOperands.require([bias], op: Self.op)
    options = try FloatOperands.options(of: node, op: Self.op, defaults: TransposeConvOptions()) {
      if case .transposeConvOptions(let options) = $0 { options } else { nil }
    }
    activation = try FloatClampRange(options.fusedActivationFunction, op: Self.op)
  }

  func prepare(_ context: inout PrepareContext) throws {
    let shape = try TransposeConvolutionShape(
      op: Self.op, outputShape: outputShapeTensor, input: input, weights: weightTensor, options: options)
    try FloatOperands.requireBias(bias, count: shape.outputChannels, op: Self.op)
    let tapLength = shape.height.filterSize * shape.width.filterSize * shape.inputChannels
    weights = try HybridWeights.reusing(
      weights, weightTensor, op: Self.op, layout: .contiguous(rows: shape.outputChannels, columns: tapLength),
      channels: shape.outputChannels, channelAxis: 0)
    var scratch = ScratchLayout()
    quantizedInput = HybridInputScratch(
      runs: shape.batch, runLength: shape.inputHeight * shape.inputWidth * shape.inputChannels, scratch: &scratch)
    context.requestScratch(bytes: scratch.byteCount)
    self.shape = shape
    output.shape = shape.outputShape
  }

  func eval(_ context: EvalContext) throws {
    guard output.elementCount > 0 else { return }
    guard let shape, let weights, let quantizedInput, let scratch = context.scratch else {
      throw KernelError.invalid("\(Self.op) was not prepared")
    }
    let quantized = quantizedInput.quantize(
      input.pointer(as: Float.self), as: .asymmetric, scratch: scratch, context: context)
    let destination = output.pointer(as: Float.self)
    let biasPointer = bias.map { UnsafePointer($0.pointer(as: Float.self)) }
    let activation = activation
    let (outputHeight, outputWidth) = (shape.height.inputSize, shape.width.inputSize)
    let (outputChannels, depth) = (shape.outputChannels, shape.inputChannels)
    let tapsPerChannel = shape.height.filterSize * shape.width.filterSize
    context.parallelFor(shape.batch * outputHeight) { row in
      let image = row / outputHeight
      let imageValues = quantized.values + image &* quantized.runLength
      let zeroPoint = quantized.zeroPoints[image]
      let imageScale = quantized.scales[image]
      for x in 0..<outputWidth {
        let outputPixel = destination + (row &* outputWidth &+ x) &* outputChannels
        for channel in 0..<outputChannels {
          let channelWeights = weights.values + channel &* tapsPerChannel &* depth
          var sum: Int32 = 0
          shape.forEachContribution(outputY: row % outputHeight, outputX: x) { inputPixel, tap in
            let pixel = imageValues + inputPixel &* depth
            let filter = channelWeights + tap &* depth
            for d in 0..<depth { sum &+= (Int32(pixel[d]) &- zeroPoint) &* Int32(filter[d]) }
          }
          let value = HybridRescale.combinedScale(
            sum, inputScale: imageScale, weightScale: weights.channelScales[channel],
            bias: hybridBias(biasPointer, channel))
          outputPixel[channel] = activation.apply(value)
        }
      }
    }
  }
}
