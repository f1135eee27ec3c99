// Quantized CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED, bit-exact with LiteRT's reference
// kernels: int8 activations with int8 weights (per-tensor or per-channel; packed int4 weights for
// FULLY_CONNECTED) and int32 bias, uint8
// activations with uint8 weights, and int16 activations with int8 weights and int64 (or int32)
// bias. Every product is (input − input zero point) · (weight − weight zero point); taps outside
// the input add nothing. The sum plus bias is rescaled per output channel by
// input_scale · weight_scale / output_scale (in double), offset by the output zero point and
// clamped to the fused activation's range. 8-bit activations (and 16-bit ones with an int32 bias)
// accumulate in int32 (wrapping) and rescale with the run's rounding policy; 16-bit ones with an
// int64 bias accumulate in int64 and use the 64-bit rescale. FULLY_CONNECTED is the exception: the
// reference outputs (LiteRT 2.3, BUILTIN_REF) match only a single-rounding rescale of the 32-bit sum
// with the full 31-bit multiplier, for 8- and 16-bit activations alike, so it always rescales so.

import TFLiteFormat

/// The arithmetic shared by the integer weighted kernels, fixed at prepare time.
struct IntegerWeightedArithmetic {
  /// The constant weights minus their zero points, in the op's layout.
  let weights: [Int32]
  /// The bias of every output channel (zero when absent).
  let bias: [Int64]
  /// The rescale of every output channel.
  let multipliers: [QuantizedMultiplier]
  /// Minus the input zero point.
  let inputOffset: Int32
  /// The output zero point.
  let outputZeroPoint: Int32
  /// The fused activation's clamp in raw output values.
  let clamp: ClosedRange<Int32>
  /// True for 16-bit activations with an int64 (or no) bias: 64-bit accumulator and rescale.
  let wideAccumulator: Bool
  /// How the 32-bit rescale rounds.
  let rounding: RoundingPolicy

  /// Reads and validates the operands; `channelAxis` is the weights' output-channel axis. With
  /// `roundsOnce` every activation type rescales a 32-bit sum with one rounding, whatever `rounding`.
  init(
    op: String, input: RuntimeTensor, weights weightTensor: RuntimeTensor, bias biasTensor: RuntimeTensor?,
    output: RuntimeTensor, outputChannels: Int, channelAxis: Int, activation: FusedActivation,
    rounding: RoundingPolicy, roundsOnce: Bool = false
  ) throws {
    let inputOperand = try QuantizedOperand(input, op: op, symmetric: input.type == .int16)
    let outputOperand = try QuantizedOperand(output, op: op, symmetric: output.type == .int16)
    try QuantizationValidation.validate(weightTensor, op: op)
    guard let weightQuantization = weightTensor.quantization else {
      throw KernelError.invalid("\(op): weights '\(weightTensor.name)' are not quantized")
    }
    let scales = weightQuantization.scales
    let zeroPoints = weightQuantization.zeroPoints
    guard scales.count == 1 || (scales.count == outputChannels && weightQuantization.axis == channelAxis) else {
      throw KernelError.invalid(
        "\(op): weights '\(weightTensor.name)' have \(scales.count) scales for \(outputChannels) output channels")
    }
    guard weightTensor.isConstant, let weightData = weightTensor.data else {
      throw KernelError.unsupported("\(op) on quantized operands with non-constant weights")
    }
    let weightCount = weightTensor.elementCount
    let channelStride = weightCount / max(outputChannels, 1)
    // The output channel of weight element `index`: axis 0 → index / stride, last axis → index % channels.
    func channel(_ index: Int) -> Int { channelAxis == 0 ? index / max(channelStride, 1) : index % outputChannels }
    func zeroPoint(_ channel: Int) -> Int32 { Int32(clamping: zeroPoints.count == 1 ? zeroPoints[0] : zeroPoints[channel]) }
    var values = [Int32](repeating: 0, count: weightCount)
    for index in 0..<weightCount {
      let raw: Int32
      switch weightTensor.type {
      case .uint8: raw = Int32(weightData.load(fromByteOffset: index, as: UInt8.self))
      case .int4:
        // Two values a byte, the first in the low nibble; shifts sign-extend the 4 bits.
        let byte = Int32(weightData.load(fromByteOffset: index / 2, as: Int8.self))
        raw = index % 2 == 0 ? (byte << 28) >> 28 : (byte << 24) >> 28
      default: raw = Int32(weightData.load(fromByteOffset: index, as: Int8.self))
      }
      values[index] = raw - zeroPoint(channel(index))
    }
    weights = values
    var biasValues = [Int64](repeating: 0, count: outputChannels)
    if let biasTensor {
      guard biasTensor.isConstant, let biasData = biasTensor.data, biasTensor.elementCount == outputChannels else {
        throw KernelError.unsupported("\(op) on quantized operands needs a constant bias of \(outputChannels) values")
      }
      for index in 0..<outputChannels {
        biasValues[index] =
          biasTensor.type == .int64
          ? biasData.loadUnaligned(fromByteOffset: index * 8, as: Int64.self)
          : Int64(biasData.loadUnaligned(fromByteOffset: index * 4, as: Int32.self))
      }
    }
    bias = biasValues
    multipliers = (0..<outputChannels).map { channel in
      let weightScale = Double(scales.count == 1 ? scales[0] : scales[channel])
      return QuantizedMultiplier(
        Double(inputOperand.scale) * weightScale / Double(outputOperand.scale), rounding: rounding)
    }
    inputOffset = -inputOperand.zeroPoint
    outputZeroPoint = outputOperand.zeroPoint
    clamp = outputOperand.activationRange(activation)
    // LiteRT's 16-bit convolutions accumulate in the bias type: int64 unless the bias is int32.
    wideAccumulator = input.type == .int16 && biasTensor?.type != .int32 && !roundsOnce
    self.rounding = roundsOnce ? .singleRounding : rounding
  }

  /// The raw output of `channel` for the accumulated `sum` of products (bias not yet added).
  @inline(__always)
  func requantize(_ sum: Int64, channel: Int) -> Int32 {
    let total = sum &+ bias[channel]
    let scaled =
      wideAccumulator
      ? multipliers[channel].apply(total)
      : multipliers[channel].apply(Int32(truncatingIfNeeded: total), rounding: rounding)
    return min(max(scaled &+ outputZeroPoint, clamp.lowerBound), clamp.upperBound)
  }

  /// Copies the raw input plus the input offset into `destination`.
  func widenInput(_ input: RuntimeTensor, into destination: UnsafeMutablePointer<Int32>) throws {
    let source = try tensorData(input)
    let offset = inputOffset
    for index in 0..<input.elementCount {
      let raw: Int32
      switch input.type {
      case .uint8: raw = Int32(source.load(fromByteOffset: index, as: UInt8.self))
      case .int16: raw = Int32(source.loadUnaligned(fromByteOffset: index * 2, as: Int16.self))
      default: raw = Int32(source.load(fromByteOffset: index, as: Int8.self))
      }
      destination[index] = raw &+ offset
    }
  }
}

/// Stores raw value `value` as element `index` of an int8, uint8 or int16 output.
@inline(__always)
private func storeRaw(_ value: Int32, at index: Int, type: ElementType, into output: UnsafeMutableRawPointer) {
  switch type {
  case .uint8: output.storeBytes(of: UInt8(truncatingIfNeeded: value), toByteOffset: index, as: UInt8.self)
  case .int16: output.storeBytes(of: Int16(truncatingIfNeeded: value), toByteOffset: index * 2, as: Int16.self)
  default: output.storeBytes(of: Int8(truncatingIfNeeded: value), toByteOffset: index, as: Int8.self)
  }
}

/// Checks the operand types of an integer weighted node: int8/int8, uint8/uint8 or int16/int8
/// activations/weights (and int8/int4 for FULLY_CONNECTED), the output of the input's type, an int32 (or, for int16, int64) bias.
private func requireIntegerWeightedTypes(_ node: Node, op: String) throws {
  try node.expect(inputs: 2, maxInputs: 3, outputs: 1)
  let input = try node.input(0)
  let weights = try node.input(1)
  let output = try node.output(0)
  var pairs: [(ElementType, ElementType)] = [(.int8, .int8), (.uint8, .uint8), (.int16, .int8)]
  if op == "FULLY_CONNECTED" { pairs.append((.int8, .int4)) }
  guard pairs.contains(where: { $0 == input.type && $1 == weights.type }), output.type == input.type else {
    throw KernelError.unsupported(
      "\(op) with \(input.type.name) input, \(weights.type.name) weights and \(output.type.name) output in the integer kernels")
  }
  guard weights.sparsity == nil else { throw KernelError.unsupported("\(op) with sparse quantized weights") }
  if let bias = node.optionalInput(2) {
    let allowed: [ElementType] = input.type == .int16 ? [.int32, .int64] : [.int32]
    guard allowed.contains(bias.type) else {
      throw KernelError.unsupported("\(op) with \(bias.type.name) bias on \(input.type.name) input")
    }
  }
}

/// Runs a convolution (grouped or not, FULLY_CONNECTED as a 1×1 one) over widened inputs.
private func runIntegerConvolution(
  _ shape: ConvolutionShape, arithmetic: IntegerWeightedArithmetic, input: UnsafePointer<Int32>,
  output: UnsafeMutableRawPointer, outputType: ElementType, context: EvalContext
) {
  let outputHeight = shape.height.outputSize
  let outputWidth = shape.width.outputSize
  let filterHeight = shape.height.filterSize
  let filterWidth = shape.width.filterSize
  let depth = shape.groupInputChannels
  let groupOutputs = shape.groupOutputChannels
  arithmetic.weights.withUnsafeBufferPointer { weightBuffer in
    guard let weights = weightBuffer.baseAddress else { return }
    context.parallelFor(shape.batch * outputHeight) { row in
      let image = row / outputHeight
      let y = row % outputHeight
      for x in 0..<outputWidth {
        let originY = shape.height.inputOrigin(y)
        let originX = shape.width.inputOrigin(x)
        let outputBase = ((row * outputWidth) + x) * shape.outputChannels
        for channel in 0..<shape.outputChannels {
          let channelStart = (channel / groupOutputs) * depth
          var sum: Int64 = 0
          for ky in 0..<filterHeight {
            let inputY = originY + ky * shape.height.dilation
            guard inputY >= 0, inputY < shape.height.inputSize else { continue }
            for kx in 0..<filterWidth {
              let inputX = originX + kx * shape.width.dilation
              guard inputX >= 0, inputX < shape.width.inputSize else { continue }
              let pixel =
                input + ((image * shape.height.inputSize + inputY) * shape.width.inputSize + inputX)
                * shape.inputChannels + channelStart
              let filter = weights + ((channel * filterHeight + ky) * filterWidth + kx) * depth
              var partial: Int64 = 0
              for d in 0..<depth { partial &+= Int64(pixel[d]) &* Int64(filter[d]) }
              sum &+= partial
            }
          }
          storeRaw(arithmetic.requantize(sum, channel: channel), at: outputBase + channel, type: outputType, into: output)
        }
      }
    }
  }
}

/// CONV_2D on quantized tensors: input `[N,H,W,C]`, filter `[O,KH,KW,C/groups]`, optional bias `[O]`.
final class IntegerConv2DKernel: Kernel {
  private let input: RuntimeTensor
  private let filter: RuntimeTensor
  private let bias: RuntimeTensor?
  private let output: RuntimeTensor
  private let options: Conv2DOptions
  private let activation: FusedActivation
  private var shape: ConvolutionShape?
  private var arithmetic: IntegerWeightedArithmetic?

  init(node: Node) throws {
    try requireIntegerWeightedTypes(node, op: "CONV_2D")
    input = try node.input(0)
    filter = try node.input(1)
    bias = node.optionalInput(2)
    output = try node.output(0)
    options = try FloatOperands.options(of: node, op: "CONV_2D", defaults: Conv2DOptions()) {
      if case .conv2DOptions(let options) = $0 { options } else { nil }
    }
    activation = try FusedActivation(options.fusedActivationFunction, op: "CONV_2D")
  }

  func prepare(_ context: inout PrepareContext) throws {
    let op = "CONV_2D"
    try FloatOperands.requireRank(input, 4, op: op, role: "input")
    try FloatOperands.requireRank(filter, 4, op: op, role: "filter")
    let channels = input.shape[3]
    let (outputChannels, filterChannels) = (filter.shape[0], filter.shape[3])
    guard filterChannels > 0, channels > 0, channels % filterChannels == 0,
      outputChannels % (channels / filterChannels) == 0
    else {
      throw KernelError.invalid("\(op) filter \(filter.shape) does not fit input \(input.shape)")
    }
    try FloatOperands.requireBias(bias, count: outputChannels, op: op)
    let heightAxis = try WindowAxis(
      op: op, axis: "height", inputSize: input.shape[1], filterSize: filter.shape[1], stride: options.strideH,
      dilation: options.dilationHFactor, padding: options.padding)
    let widthAxis = try WindowAxis(
      op: op, axis: "width", inputSize: input.shape[2], filterSize: filter.shape[2], stride: options.strideW,
      dilation: options.dilationWFactor, padding: options.padding)
    let outputShape = [input.shape[0], heightAxis.outputSize, widthAxis.outputSize, outputChannels]
    _ = try FloatOperands.checkedCount(outputShape, "\(op) output")
    arithmetic = try IntegerWeightedArithmetic(
      op: op, input: input, weights: filter, bias: bias, output: output, outputChannels: outputChannels,
      channelAxis: 0, activation: activation, rounding: context.roundingPolicy)
    shape = ConvolutionShape(
      batch: input.shape[0], inputChannels: channels, groupInputChannels: filterChannels,
      outputChannels: outputChannels, height: heightAxis, width: widthAxis)
    output.shape = outputShape
    context.requestScratch(bytes: input.elementCount * MemoryLayout<Int32>.stride)
  }

  func eval(_ context: EvalContext) throws {
    try evalWidenedConvolution(
      op: "CONV_2D", shape: shape, arithmetic: arithmetic, input: input, output: output, context: context)
  }
}

/// FULLY_CONNECTED on quantized tensors: input read as `[M, K]`, weights `[N, K]`, optional bias `[N]`,
/// computed as a 1×1 convolution over M pixels.
final class IntegerFullyConnectedKernel: Kernel {
  private let input: RuntimeTensor
  private let weights: RuntimeTensor
  private let bias: RuntimeTensor?
  private let output: RuntimeTensor
  private let keepNumDims: Bool
  private let activation: FusedActivation
  private var shape: ConvolutionShape?
  private var arithmetic: IntegerWeightedArithmetic?

  init(node: Node) throws {
    let op = "FULLY_CONNECTED"
    try requireIntegerWeightedTypes(node, op: op)
    input = try node.input(0)
    weights = try node.input(1)
    bias = node.optionalInput(2)
    output = try node.output(0)
    let options = try FloatOperands.options(of: node, op: op, defaults: FullyConnectedOptions()) {
      if case .fullyConnectedOptions(let options) = $0 { options } else { nil }
    }
    guard options.weightsFormat == .default else {
      throw KernelError.unsupported("\(op) with weights format \(options.weightsFormat.name)")
    }
    keepNumDims = options.keepNumDims
    activation = try FusedActivation(options.fusedActivationFunction, op: op)
  }

  func prepare(_ context: inout PrepareContext) throws {
    let op = "FULLY_CONNECTED"
    try FloatOperands.requireRank(weights, 2, op: op, role: "weights")
    let (units, depth) = (weights.shape[0], weights.shape[1])
    guard depth > 0, input.elementCount % depth == 0 else {
      throw KernelError.invalid("\(op) input \(input.shape) cannot be read as rows of \(depth) values")
    }
    let rows = input.elementCount / depth
    try FloatOperands.requireBias(bias, count: units, op: op)
    let outputShape: [Int]
    if keepNumDims {
      guard input.shape.last == depth else {
        throw KernelError.invalid("\(op) with keep_num_dims needs the input's last dimension to be \(depth), got \(input.shape)")
      }
      outputShape = input.shape.dropLast() + [units]
    } else {
      outputShape = [rows, units]
    }
    _ = try FloatOperands.checkedCount(outputShape, "\(op) output")
    guard let point = WindowAxis(inputSize: 1, filterSize: 1, stride: 1, dilation: 1, samePadding: false) else {
      throw KernelError.invalid("\(op) has no valid geometry")
    }
    arithmetic = try IntegerWeightedArithmetic(
      op: op, input: input, weights: weights, bias: bias, output: output, outputChannels: units, channelAxis: 0,
      activation: activation, rounding: context.roundingPolicy, roundsOnce: true)
    shape = ConvolutionShape(
      batch: rows, inputChannels: depth, groupInputChannels: depth, outputChannels: units, height: point, width: point)
    output.shape = outputShape
    context.requestScratch(bytes: input.elementCount * MemoryLayout<Int32>.stride)
  }

  func eval(_ context: EvalContext) throws {
    try evalWidenedConvolution(
      op: "FULLY_CONNECTED", shape: shape, arithmetic: arithmetic, input: input, output: output, context: context)
  }
}

/// Widens `input` into the node's scratch memory and runs the prepared convolution (CONV_2D, and
/// FULLY_CONNECTED as a 1×1 convolution).
private func evalWidenedConvolution(
  op: String, shape: ConvolutionShape?, arithmetic: IntegerWeightedArithmetic?, input: RuntimeTensor,
  output: RuntimeTensor, context: EvalContext
) throws {
  guard output.elementCount > 0 else { return }
  guard let shape, let arithmetic, let scratch = context.scratch else {
    throw KernelError.invalid("\(op) was not prepared")
  }
  let widened = scratch.assumingMemoryBound(to: Int32.self)
  try arithmetic.widenInput(input, into: widened)
  runIntegerConvolution(
    shape, arithmetic: arithmetic, input: widened, output: try tensorData(output), outputType: output.type,
    context: context)
}

/// DEPTHWISE_CONV_2D on quantized tensors: input `[N,H,W,C]`, filter `[1,KH,KW,C·multiplier]`.
final class IntegerDepthwiseConv2DKernel: Kernel {
  private let input: RuntimeTensor
  private let filter: RuntimeTensor
  private let bias: RuntimeTensor?
  private let output: RuntimeTensor
  private let options: DepthwiseConv2DOptions
  private let activation: FusedActivation
  private var shape: DepthwiseShape?
  private var arithmetic: IntegerWeightedArithmetic?

  init(node: Node) throws {
    let op = "DEPTHWISE_CONV_2D"
    try requireIntegerWeightedTypes(node, op: op)
    input = try node.input(0)
    filter = try node.input(1)
    bias = node.optionalInput(2)
    output = try node.output(0)
    options = try FloatOperands.options(of: node, op: op, defaults: DepthwiseConv2DOptions()) {
      if case .depthwiseConv2DOptions(let options) = $0 { options } else { nil }
    }
    activation = try FusedActivation(options.fusedActivationFunction, op: op)
  }

  func prepare(_ context: inout PrepareContext) throws {
    let op = "DEPTHWISE_CONV_2D"
    try FloatOperands.requireRank(input, 4, op: op, role: "input")
    try FloatOperands.requireRank(filter, 4, op: op, role: "filter")
    let channels = input.shape[3]
    let outputChannels = filter.shape[3]
    guard filter.shape[0] == 1, channels > 0, outputChannels > 0, outputChannels % channels == 0 else {
      throw KernelError.invalid("\(op) filter \(filter.shape) does not fit input channels \(channels)")
    }
    try FloatOperands.requireBias(bias, count: outputChannels, op: op)
    let heightAxis = try WindowAxis(
      op: op, axis: "height", inputSize: input.shape[1], filterSize: filter.shape[1], stride: options.strideH,
      dilation: options.dilationHFactor, padding: options.padding)
    let widthAxis = try WindowAxis(
      op: op, axis: "width", inputSize: input.shape[2], filterSize: filter.shape[2], stride: options.strideW,
      dilation: options.dilationWFactor, padding: options.padding)
    let outputShape = [input.shape[0], heightAxis.outputSize, widthAxis.outputSize, outputChannels]
    _ = try FloatOperands.checkedCount(outputShape, "\(op) output")
    arithmetic = try IntegerWeightedArithmetic(
      op: op, input: input, weights: filter, bias: bias, output: output, outputChannels: outputChannels,
      channelAxis: 3, activation: activation, rounding: context.roundingPolicy)
    shape = DepthwiseShape(
      batch: input.shape[0], inputChannels: channels, multiplier: outputChannels / channels, height: heightAxis,
      width: widthAxis)
    output.shape = outputShape
    context.requestScratch(bytes: input.elementCount * MemoryLayout<Int32>.stride)
  }

  func eval(_ context: EvalContext) throws {
    guard output.elementCount > 0 else { return }
    guard let shape, let arithmetic, let scratch = context.scratch else {
      throw KernelError.invalid("DEPTHWISE_CONV_2D was not prepared")
    }
    let widened = scratch.assumingMemoryBound(to: Int32.self)
    try arithmetic.widenInput(input, into: widened)
    let destination = try tensorData(output)
    let outputType = output.type
    let input = UnsafePointer(widened)
    let outputHeight = shape.height.outputSize
    let outputWidth = shape.width.outputSize
    let outputChannels = shape.outputChannels
    arithmetic.weights.withUnsafeBufferPointer { weightBuffer in
      guard let weights = weightBuffer.baseAddress else { return }
      context.parallelFor(shape.batch * outputHeight) { row in
        let image = row / outputHeight
        let y = row % outputHeight
        for x in 0..<outputWidth {
          let originY = shape.height.inputOrigin(y)
          let originX = shape.width.inputOrigin(x)
          let outputBase = (row * outputWidth + x) * outputChannels
          for channel in 0..<outputChannels {
            let inputChannel = channel / shape.multiplier
            var sum: Int64 = 0
            for ky in 0..<shape.height.filterSize {
              let inputY = originY + ky * shape.height.dilation
              guard inputY >= 0, inputY < shape.height.inputSize else { continue }
              for kx in 0..<shape.width.filterSize {
                let inputX = originX + kx * shape.width.dilation
                guard inputX >= 0, inputX < shape.width.inputSize else { continue }
                let value =
                  input[((image * shape.height.inputSize + inputY) * shape.width.inputSize + inputX)
                    * shape.inputChannels + inputChannel]
                let weight = weights[(ky * shape.width.filterSize + kx) * outputChannels + channel]
                sum &+= Int64(value) &* Int64(weight)
              }
            }
            storeRaw(
              arithmetic.requantize(sum, channel: channel), at: outputBase + channel, type: outputType,
              into: destination)
          }
        }
      }
    }
  }
}

extension KernelRegistry {
  /// CONV_2D and DEPTHWISE_CONV_2D on quantized tensors.
  nonisolated(unsafe) static let integerConvolution: [String: any Kernel.Type] = [
    "CONV_2D": IntegerConv2DKernel.self, "DEPTHWISE_CONV_2D": IntegerDepthwiseConv2DKernel.self,
    "FULLY_CONNECTED": IntegerFullyConnectedKernel.self,
  ]
}
