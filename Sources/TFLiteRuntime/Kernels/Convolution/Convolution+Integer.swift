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
//
// 8-bit activations run on the packed integer GEMM (`IntegerGEMM`, CONV_2D and FULLY_CONNECTED:
// the generated VNNI kernels where the CPU has them and the weights fit signed bytes, or, for
// per-tensor uint8 weights that do not, on w − 128 with each row's byte sum correcting the sums
// (`RowCorrectedDotProductMicroKernel`); else the Swift kernel on 16-bit panels, chosen at prepare)
// and on a channel-vectorised depthwise loop;
// 16-bit activations keep the scalar loops over widened inputs.

import TFLiteFormat
import TFLiteLinearAlgebra

/// The arithmetic shared by the integer weighted kernels, fixed at prepare time.
struct IntegerWeightedArithmetic {
  /// The constant weights minus their zero points, in the op's layout (empty when `signedWeights` has them).
  let weights: [Int32]
  /// The int8 weights where the tensor holds them, when every zero point is 0 and the caller does
  /// not need them widened: the 8-bit GEMM packs them straight, without an Int32 copy (four times
  /// the largest layer's weights, the peak of ResNet50 int8's memory while loading).
  let signedWeights: UnsafePointer<Int8>?
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
  /// The zero point of per-tensor uint8 weights (nil for other weights).
  let uint8WeightZeroPoint: Int32?

  /// Reads and validates the operands; `channelAxis` is the weights' output-channel axis. With
  /// `roundsOnce` every activation type rescales a 32-bit sum with one rounding, whatever `rounding`.
  /// Without `widensSignedWeights`, int8 weights with zero points 0 stay in the tensor (`signedWeights`).
  init(
    op: String, input: RuntimeTensor, weights weightTensor: RuntimeTensor, bias biasTensor: RuntimeTensor?,
    output: RuntimeTensor, outputChannels: Int, channelAxis: Int, activation: FusedActivation,
    rounding: RoundingPolicy, roundsOnce: Bool = false, widensSignedWeights: Bool = true
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
    func zeroPoint(_ channel: Int) -> Int32 { Int32(clamping: zeroPoints.count == 1 ? zeroPoints[0] : zeroPoints[channel]) }
    let channelZeroPoints = (0..<outputChannels).map(zeroPoint)
    if !widensSignedWeights && weightTensor.type == .int8 && channelZeroPoints.allSatisfy({ $0 == 0 }) {
      signedWeights = UnsafePointer(weightData.assumingMemoryBound(to: Int8.self))
      weights = []
    } else {
      signedWeights = nil
      weights = Self.weightsMinusZeroPoints(
        weightData, type: weightTensor.type, count: weightTensor.elementCount, channelAxisIsFirst: channelAxis == 0,
        zeroPoints: channelZeroPoints)
    }
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
    uint8WeightZeroPoint = weightTensor.type == .uint8 && zeroPoints.count == 1 ? zeroPoint(0) : nil
  }

  /// Every weight minus its output channel's zero point (`zeroPoints`, one per channel), in the
  /// tensor's order; the channel is the first axis or, without `channelAxisIsFirst`, the last.
  /// int4 weights are unpacked to bytes first.
  private static func weightsMinusZeroPoints(
    _ data: UnsafeRawPointer, type: ElementType, count: Int, channelAxisIsFirst: Bool, zeroPoints: [Int32]
  ) -> [Int32] {
    switch type {
    case .uint8:
      return minusZeroPoints(
        data.assumingMemoryBound(to: UInt8.self), count: count, channelAxisIsFirst: channelAxisIsFirst,
        zeroPoints: zeroPoints)
    case .int4:
      let unpacked = (0..<count).map { int4Value(data, at: $0) }
      return unpacked.withUnsafeBufferPointer { buffer in
        guard let base = buffer.baseAddress else { return [] }
        return minusZeroPoints(base, count: count, channelAxisIsFirst: channelAxisIsFirst, zeroPoints: zeroPoints)
      }
    default:
      return minusZeroPoints(
        data.assumingMemoryBound(to: Int8.self), count: count, channelAxisIsFirst: channelAxisIsFirst,
        zeroPoints: zeroPoints)
    }
  }

  /// `weightsMinusZeroPoints` for one raw element type, in runs that share a zero point (a whole
  /// channel for the first axis, one row of channels for the last), so that the loops vectorize:
  /// the per-element type switch and channel division were 30 % of ResNet50 int8's load + first invoke.
  private static func minusZeroPoints<Raw: FixedWidthInteger>(
    _ source: UnsafePointer<Raw>, count: Int, channelAxisIsFirst: Bool, zeroPoints: [Int32]
  ) -> [Int32] {
    let channels = zeroPoints.count
    var values = [Int32](repeating: 0, count: count)
    guard channels > 0 else { return values }
    values.withUnsafeMutableBufferPointer { buffer in
      guard let output = buffer.baseAddress else { return }
      zeroPoints.withUnsafeBufferPointer { zeroPointBuffer in
        guard let channelZeroPoints = zeroPointBuffer.baseAddress else { return }
        if channelAxisIsFirst {
          let run = count / channels
          for channel in 0..<channels {
            let zeroPoint = channelZeroPoints[channel]
            for index in channel &* run..<(channel &+ 1) &* run {
              output[index] = Int32(truncatingIfNeeded: source[index]) &- zeroPoint
            }
          }
        } else {
          for start in stride(from: 0, to: count, by: channels) {
            for channel in 0..<min(channels, count &- start) {
              output[start &+ channel] = Int32(truncatingIfNeeded: source[start &+ channel]) &- channelZeroPoints[channel]
            }
          }
        }
      }
    }
    return values
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
func requireIntegerWeightedTypes(_ node: Node, op: String) throws {
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
  if let bias = node.optionalInput(2) {
    let allowed: [ElementType] = input.type == .int16 ? [.int32, .int64] : [.int32]
    guard allowed.contains(bias.type) else {
      throw KernelError.unsupported("\(op) with \(bias.type.name) bias on \(input.type.name) input")
    }
  }
}

/// Runs a convolution (grouped or not; FULLY_CONNECTED as a 1×1 one, DEPTHWISE_CONV_2D as one
/// group per input channel) over widened inputs; `weights` are in OHWI order.
func runIntegerConvolution(
  _ shape: ConvolutionShape, arithmetic: IntegerWeightedArithmetic, weights ohwiWeights: [Int32],
  input: UnsafePointer<Int32>, output: UnsafeMutableRawPointer, outputType: ElementType, context: EvalContext
) {
  let outputHeight = shape.height.outputSize
  let outputWidth = shape.width.outputSize
  let filterHeight = shape.height.filterSize
  let filterWidth = shape.width.filterSize
  let depth = shape.groupInputChannels
  let groupOutputs = shape.groupOutputChannels
  ohwiWeights.withUnsafeBufferPointer { weightBuffer in
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
  /// The 8-bit GEMM's route and instruction set (`int8 GEMM, generated AVX512-VNNI`); nil (the Swift
  /// level) for 16-bit activations.
  var kernelDescription: String? { stackedRows.map { "stacked rows, \($0.description)" } ?? byteConvolution?.description }

  private let input: RuntimeTensor
  private let filter: RuntimeTensor
  private let bias: RuntimeTensor?
  private let output: RuntimeTensor
  private let options: Conv2DOptions
  private let activation: FusedActivation
  private var shape: ConvolutionShape?
  private var arithmetic: IntegerWeightedArithmetic?
  private var byteConvolution: ByteConvolution?
  /// A stride-1 int8 convolution on stacked input rows (`ByteTransposeConvolution(convolution:)`),
  /// chosen at prepare where it applies; nil: `byteConvolution` or the 16-bit loop (tests set it
  /// to nil to compare).
  var stackedRows: ByteTransposeConvolution?

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
    let shape = try ConvolutionShape(conv2DInput: input, filter: filter, bias: bias, options: options, op: op)
    let arithmetic = try IntegerWeightedArithmetic(
      op: op, input: input, weights: filter, bias: bias, output: output, outputChannels: shape.outputChannels,
      channelAxis: 0, activation: activation, rounding: context.roundingPolicy,
      widensSignedWeights: input.type == .int16)
    context.releaseAfterCopying(filter)
    output.shape = shape.outputShape
    self.shape = shape
    stackedRows = ByteTransposeConvolution(
      convolution: shape, arithmetic: arithmetic, inputType: input.type, threadCount: context.threadCount)
    if let stackedRows {
      context.requestScratch(bytes: stackedRows.scratchBytes)
      byteConvolution = nil
      self.arithmetic = nil
      return
    }
    byteConvolution = try prepareConvolution(shape, arithmetic: arithmetic, input: input, op: op, context: &context)
    // The 8-bit path keeps only its packed form (not the Int32 weights).
    self.arithmetic = byteConvolution == nil ? arithmetic : nil
  }

  func eval(_ context: EvalContext) throws {
    // The routes unretained (made from a temporary, not a binding, which would hold a retain for
    // the call): this kernel keeps them alive.
    if let stackedRows = stackedRows.map(Unmanaged.passUnretained) {
      guard output.elementCount > 0 else { return }
      guard let scratch = context.scratch else { throw KernelError.invalid("CONV_2D was not prepared") }
      let (source, destination) = (try tensorData(input), try tensorData(output).assumingMemoryBound(to: Int8.self))
      stackedRows._withUnsafeGuaranteedRef {
        $0.run(input: source, output: destination, context: context, scratch: scratch)
      }
      return
    }
    if let byteConvolution = byteConvolution.map(Unmanaged.passUnretained) {
      try evalByteConvolution(byteConvolution, op: "CONV_2D", input: input, output: output, context: context)
      return
    }
    try evalWideConvolution(op: "CONV_2D", shape: shape, arithmetic: arithmetic, input: input, output: output, context: context)
  }
}

/// FULLY_CONNECTED on quantized tensors: input read as `[M, K]`, weights `[N, K]`, optional bias `[N]`,
/// computed as a 1×1 convolution over M pixels.
final class IntegerFullyConnectedKernel: Kernel {
  /// The 8-bit GEMM's route and instruction set (`int8 GEMM, generated AVX512-VNNI`); nil (the Swift
  /// level) for 16-bit activations.
  var kernelDescription: String? { byteConvolution?.description }

  private let input: RuntimeTensor
  private let weights: RuntimeTensor
  private let bias: RuntimeTensor?
  private let output: RuntimeTensor
  private let keepNumDims: Bool
  private let activation: FusedActivation
  private var shape: ConvolutionShape?
  private var arithmetic: IntegerWeightedArithmetic?
  private var byteConvolution: ByteConvolution?

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
    let geometry = try FullyConnectedShape(input: input, weights: weights, bias: bias, keepNumDims: keepNumDims)
    let (rows, depth, units) = (geometry.rows, geometry.depth, geometry.units)
    guard let point = WindowAxis(inputSize: 1, filterSize: 1, stride: 1, dilation: 1, samePadding: false) else {
      throw KernelError.invalid("\(op) has no valid geometry")
    }
    let arithmetic = try IntegerWeightedArithmetic(
      op: op, input: input, weights: weights, bias: bias, output: output, outputChannels: units, channelAxis: 0,
      activation: activation, rounding: context.roundingPolicy, roundsOnce: true,
      widensSignedWeights: input.type == .int16)
    context.releaseAfterCopying(weights)
    let shape = ConvolutionShape(
      batch: rows, inputChannels: depth, groupInputChannels: depth, outputChannels: units, height: point, width: point)
    output.shape = geometry.outputShape
    byteConvolution = try prepareConvolution(shape, arithmetic: arithmetic, input: input, op: op, context: &context)
    // The 8-bit path keeps only its packed form (not the Int32 weights).
    self.arithmetic = byteConvolution == nil ? arithmetic : nil
    self.shape = shape
  }

  func eval(_ context: EvalContext) throws {
    // Unretained, as in `IntegerConv2DKernel.eval`.
    if let byteConvolution = byteConvolution.map(Unmanaged.passUnretained) {
      try evalByteConvolution(byteConvolution, op: "FULLY_CONNECTED", input: input, output: output, context: context)
      return
    }
    try evalWideConvolution(
      op: "FULLY_CONNECTED", shape: shape, arithmetic: arithmetic, input: input, output: output, context: context)
  }
}

/// Prepares a convolution (CONV_2D, and FULLY_CONNECTED as a 1×1 convolution): the packed GEMM
/// for 8-bit activations, or the scratch of the widened 16-bit input (nil returned).
private func prepareConvolution(
  _ shape: ConvolutionShape, arithmetic: IntegerWeightedArithmetic, input: RuntimeTensor, op: String,
  context: inout PrepareContext
) throws -> ByteConvolution? {
  guard input.type != .int16 else {
    context.requestScratch(bytes: input.elementCount * MemoryLayout<Int32>.stride)
    return nil
  }
  var scratch = ScratchLayout()
  let convolution = try ByteConvolution(
    shape, arithmetic: arithmetic, input: input, op: op, threadCount: context.threadCount, scratch: &scratch)
  context.requestScratch(bytes: scratch.byteCount)
  return convolution
}

/// Runs a prepared 8-bit convolution, the packed GEMM (the kernel keeps `byteConvolution` alive).
private func evalByteConvolution(
  _ byteConvolution: Unmanaged<ByteConvolution>, op: String, input: RuntimeTensor, output: RuntimeTensor,
  context: EvalContext
) throws {
  guard output.elementCount > 0 else { return }
  guard let scratch = context.scratch else { throw KernelError.invalid("\(op) was not prepared") }
  try byteConvolution._withUnsafeGuaranteedRef {
    try $0.run(input: input, output: output, threadCount: context.threadCount, scratch: scratch)
  }
}

/// Runs a prepared 16-bit convolution: the scalar loop over the input widened into the node's
/// scratch memory. (Separate from `evalByteConvolution`, so that an 8-bit eval does not copy the
/// optional arithmetic and its arrays.)
private func evalWideConvolution(
  op: String, shape: ConvolutionShape?, arithmetic: IntegerWeightedArithmetic?, input: RuntimeTensor,
  output: RuntimeTensor, context: EvalContext
) throws {
  guard output.elementCount > 0 else { return }
  guard let scratch = context.scratch, let shape, let arithmetic else { throw KernelError.invalid("\(op) was not prepared") }
  let widened = scratch.assumingMemoryBound(to: Int32.self)
  try arithmetic.widenInput(input, into: widened)
  runIntegerConvolution(
    shape, arithmetic: arithmetic, weights: arithmetic.weights, input: widened, output: try tensorData(output),
    outputType: output.type, context: context)
}

/// The packed weights of a `ByteConvolution` (and of each phase of a `ByteTransposeConvolution`)
/// and the kernels that read them, chosen at prepare.
enum ByteConvolutionWeights {
  /// 16-bit panels for the Swift kernel.
  case swift(PairedPanelMatrices)
  /// Signed-byte panels for the generated `vpdpbusd` kernels.
  case generated(QuadPanelMatrices, GeneratedDotProductKernels)
  /// Signed-byte panels of w − 128 (uint8 weights with zero point `weightZeroPoint`, whose w − zw
  /// does not fit a signed byte), for the generated kernels through
  /// `RowCorrectedDotProductMicroKernel`, which corrects each row by its byte sum over the real
  /// depth `depth`.
  case rowCorrected(QuadPanelMatrices, DotProductSums, weightZeroPoint: Int32, depth: Int)

  /// Packs `count` matrices of weights minus their zero points (layout and sizes as
  /// `InterleavedPanelMatrices`) for the generated kernels when the runner allows them and this
  /// machine runs them: as they are when every value fits a signed byte (and the families storing
  /// `output` map), else as w − 128 when they are per-tensor uint8 weights with zero point
  /// `uint8ZeroPoint`; otherwise for the Swift kernel. Only one packed copy is kept. `source` is
  /// the int8 tensor itself or the widened w − zw. `kernels` are the generated kernels to use (by
  /// default those the runner allows on this thread; nil: the Swift kernel).
  init<Source: FixedWidthInteger>(
    _ source: UnsafePointer<Source>, sourceStride: Int, count: Int, layout: MatrixLayout, depth: Int, columns: Int,
    uint8ZeroPoint: Int32?, output: RequantizedOutput, op: String,
    kernels: GeneratedDotProductKernels? = GeneratedDotProductKernels.current
  ) throws {
    if let kernels, Self.mapsRequantizingFamilies(kernels, output: output),
      let packed = QuadPanelMatrices(
        source, sourceStride: sourceStride, count: count, layout: layout, depth: depth, columns: columns)
    {
      self = .generated(packed, kernels)
    } else if let kernels, let zeroPoint = uint8ZeroPoint,
      let packed = Self.centred(
        source, sourceStride: sourceStride, count: count, layout: layout, depth: depth, columns: columns,
        zeroPoint: zeroPoint)
    {
      self = .rowCorrected(packed, DotProductSums(generated: kernels), weightZeroPoint: zeroPoint, depth: depth)
    } else if let packed = PairedPanelMatrices(
      source, sourceStride: sourceStride, count: count, layout: layout, depth: depth, columns: columns)
    {
      self = .swift(packed)
    } else {
      throw KernelError.invalid("\(op) has weights minus their zero points outside 16 bits")
    }
  }

  /// True when every family storing `output` that the convolution may run (the one reading int8 A
  /// in place too, where the kernels have it) is mapped, or now maps: made at prepare, not mid-invoke,
  /// and when the OS refuses one the convolution takes another route instead.
  private static func mapsRequantizingFamilies(_ kernels: GeneratedDotProductKernels, output: RequantizedOutput) -> Bool {
    // Both first tiles reserved before either is asked for: one mapping takes them together.
    let readsInt8 = output == .int8 && kernels.flipsSigns
    _ = kernels.reservedTiles(output)
    if readsInt8 { _ = kernels.reservedTiles(output, flipsSign: true) }
    return kernels.tiles(output) != nil && (!readsInt8 || kernels.tiles(output, flipsSign: true) != nil)
  }

  /// The weights w − zw (as `source` gives them) plus zw − 128, packed with the depth rounded up
  /// to a multiple of four (zero weights past the real depth); nil when a value is not a uint8
  /// weight minus `zeroPoint`. The widened copy lives only while it is packed.
  private static func centred<Source: FixedWidthInteger>(
    _ source: UnsafePointer<Source>, sourceStride: Int, count: Int, layout: MatrixLayout, depth: Int, columns: Int,
    zeroPoint: Int32
  ) -> QuadPanelMatrices? {
    let stepDepth = QuadPanelMatrices.paddedDepth(depth)
    var centred = [Int8](repeating: 0, count: count * columns * stepDepth)
    for matrix in 0..<count {
      for column in 0..<columns {
        for k in 0..<depth {
          let value = Int32(truncatingIfNeeded: source[matrix * sourceStride + k * layout.depthStride + column * layout.columnStride])
          guard let byte = Int8(exactly: value &+ zeroPoint &- 128) else { return nil }
          centred[(matrix * columns + column) * stepDepth + k] = byte
        }
      }
    }
    return centred.withUnsafeBufferPointer { buffer in
      QuadPanelMatrices(
        buffer.baseAddress!, sourceStride: columns * stepDepth, count: count, layout: .columnMajor(depth: stepDepth),
        depth: stepDepth, columns: columns)
    }
  }

  /// Σ_k B[k, n] of every column (the weights minus their zero point), group after group.
  var columnSums: [Int32] {
    switch self {
    case .swift(let packed): packed.columnSums
    case .generated(let packed, _): packed.columnSums
    // Σ (w − zw) = Σ (w − 128) + depth · (128 − zw).
    case .rowCorrected(let packed, _, let zeroPoint, let depth):
      packed.columnSums.map { $0 &+ Int32(truncatingIfNeeded: depth) &* (128 &- zeroPoint) }
    }
  }

  /// The depth of the packed panels: the GEMM's depth.
  var paddedDepth: Int {
    switch self {
    case .swift(let packed): packed.paddedDepth
    case .generated(let packed, _): packed.paddedDepth
    case .rowCorrected(let packed, _, _, _): packed.paddedDepth
    }
  }

  /// True when the generated kernels can read int8 activations in place, flipping their signs.
  var kernelsFlipSigns: Bool {
    switch self {
    case .swift, .rowCorrected: false
    case .generated(_, let kernels): kernels.flipsSigns
    }
  }

  /// The code computing the sums, for `tflite bench --verbose`.
  var level: String {
    switch self {
    case .swift: "16-bit weight panels, \(KernelDescription.swiftLevel)"
    case .generated(_, let kernels): "generated \(kernels.isa)"
    case .rowCorrected(_, let sums, _, _):
      "\(sums.generatedLevel ?? KernelDescription.swiftLevel), weights − 128 with the zero point through row sums"
    }
  }
}

/// A CONV_2D or FULLY_CONNECTED on 8-bit activations as one integer GEMM per group: the weights
/// packed once, the input offset folded into the bias. A class, so that `eval` reads it through
/// one reference (as a struct in the kernel's optional property, every invoke copied it and
/// retained and released each of its arrays and packed weights).
private final class ByteConvolution {
  /// The convolution.
  let shape: ConvolutionShape
  /// The GEMM plan shared by every group.
  let plan: GEMMPlan
  /// The packed weights, one matrix per group, and the route that reads them.
  let weights: ByteConvolutionWeights
  /// Bias (with the input offset's share), multiplier per output channel.
  let constants: IntegerChannelConstants
  /// XOR turning a raw input byte into the GEMM's unsigned form: 0x80 in every byte for int8, 0 for uint8.
  let signFlip: UInt64
  /// The unsigned value that stands for the input zero point: what padding taps hold.
  let paddingValue: UInt8
  /// True when the GEMM reads the input rows in place: a 1×1 stride-1 convolution without padding
  /// whose depth needs no padding for the packed panels, on uint8 input, or on int8 input of fewer
  /// than `flippedBlockRows` rows (FULLY_CONNECTED's batch) or into at most 16 output channels
  /// when the generated kernels flip its signs as they read it (`flipsSign`). Otherwise an int8 input is flipped to the unsigned form
  /// while its rows are packed (in blocks of `flippedBlockRows` rows when the convolution could
  /// read it in place), not through a copy of the whole input, which would cost scratch as large as
  /// the input (LiteRT's int8 1×1 convolution needs none).
  let readsInPlace: Bool
  /// True when the generated kernels read the int8 input in place and flip its signs.
  let flipsSign: Bool
  /// True when the rows are gathered by `FewChannelIm2colLeftOperand` (1–4 input channels).
  let gathersFewChannels: Bool
  /// An int8 1×1 convolution read in place into 1–4 channels on AVX512-VNNI: the output bytes on
  /// the vector lanes instead of the GEMM's output channels (`PixelLanePointwise`); nil otherwise,
  /// and the GEMM prepared below runs where the OS refuses its kernel.
  let pixelLanes: PixelLanePointwise?
  /// Rows of a packed block of an int8 1×1 stride-1 input (which the convolution could read in
  /// place): four 6-row tiles of four panels, or three 8-row tiles of three.
  static let flippedBlockRows = 24
  /// Where the GEMM's scratch starts.
  let gemmScratchOffset: Int
  /// The input's element type (int8 or uint8).
  let inputType: ElementType
  /// The generated route as `run` reads it: the first group's packed weights, the distance between
  /// the groups' matrices, and the family of tiles in this convolution's requantization form
  /// (reserved at prepare, mapped at the end of `allocateTensors()`). Unretained: families live for
  /// the process and `weights` keeps the matrices; binding the `.generated` payloads and looking
  /// the family up under its lock retained and released them on every GEMM call. nil on the other routes.
  /// `maskedTiles` is the store-masking family of the same form that writes a partial last panel
  /// straight into the output, where the level has one (else nil: the driver's scratch tile).
  private let generatedRoute: (
    weights: UnsafePointer<Int8>, matrixStride: Int, tiles: Unmanaged<DotProductTiles>,
    maskedTiles: Unmanaged<DotProductTiles>?
  )?

  /// `int8 GEMM, generated AVX512-VNNI` and the like (made when asked: the Swift level is only
  /// known after the float GEMM's one-time probe, which a model without float GEMMs never runs).
  var description: String {
    "\(inputType.name.lowercased()) GEMM, \(weights.level)\(gathersFewChannels ? ", few-channel im2col" : "")"
      + (pixelLanes?.isRunnable == true ? ", output bytes on the lanes" : "")
  }

  init(
    _ shape: ConvolutionShape, arithmetic: IntegerWeightedArithmetic, input: RuntimeTensor, op: String,
    threadCount: Int, scratch: inout ScratchLayout
  ) throws {
    let depth = shape.gemmDepth
    func pack<Source: FixedWidthInteger>(_ base: UnsafePointer<Source>) throws -> ByteConvolutionWeights {
      try ByteConvolutionWeights(
        base, sourceStride: shape.groupOutputChannels * depth, count: shape.groups,
        layout: .columnMajor(depth: depth), depth: depth, columns: shape.groupOutputChannels,
        uint8ZeroPoint: arithmetic.uint8WeightZeroPoint, output: input.type == .int8 ? .int8 : .uint8, op: op)
    }
    let weights =
      try arithmetic.signedWeights.map { try pack($0) }
      ?? arithmetic.weights.withUnsafeBufferPointer { buffer in
        guard let base = buffer.baseAddress else { throw KernelError.invalid("\(op) has no weights") }
        return try pack(base)
      }
    // (raw + inputOffset) = (unsigned − 128 + inputOffset) for int8, (unsigned + inputOffset) for uint8.
    let isSigned = input.type == .int8
    let offset = arithmetic.inputOffset &- (isSigned ? 128 : 0)
    let columnSums = weights.columnSums
    constants = IntegerChannelConstants(
      groups: shape.groups, groupChannels: shape.groupOutputChannels, multipliers: arithmetic.multipliers,
      rounding: arithmetic.rounding, outputZeroPoint: arithmetic.outputZeroPoint, clamp: arithmetic.clamp
    ) { channel in
      Int32(truncatingIfNeeded: arithmetic.bias[channel]) &+ offset &* columnSums[channel]
    }
    self.shape = shape
    self.weights = weights
    signFlip = isSigned ? 0x8080_8080_8080_8080 : 0
    paddingValue = UInt8(truncatingIfNeeded: 0 &- offset)
    flipsSign = isSigned && weights.kernelsFlipSigns
    // Tiles reading int8 A in place flip the sign bits of every broadcast A quad: one more vector
    // instruction on the multiply-adds' ports per row, step and panel group (6 beside 24 `vpdpbusd`
    // in a 6 × 4 tile), where packing flips 16 bytes per instruction, once per row for every panel.
    // So int8 1×1 inputs of a block's rows or more are packed, in blocks of that many rows: the
    // scratch stays small (a few KiB on the mini networks' thin layers). With one panel of output
    // channels the flip costs no more than the packing, and reading in place saves the small
    // blocks' per-block work (unet_mini_int8's 1×1 from 8 channels to 1 over 1024 pixels: 43 blocks).
    let pointwise = shape.readsInputInPlace && weights.paddedDepth == shape.groupInputChannels
    readsInPlace =
      pointwise
      && (!isSigned
        || (flipsSign
          && (shape.gemmRows < Self.flippedBlockRows || shape.groupOutputChannels <= GEMMTile.columns)))
    gathersFewChannels = !readsInPlace && FewChannelIm2colLeftOperand.applies(to: shape)
    if readsInPlace, flipsSign, shape.groups == 1, case .generated(_, let kernels) = weights,
      let signedWeights = arithmetic.signedWeights
    {
      pixelLanes = PixelLanePointwise(
        dotProducts: kernels, outputs: shape.outputChannels, depth: shape.inputChannels, weights: signedWeights,
        epilogue: constants.epilogue(group: 0), multipliers: arithmetic.multipliers, rounding: arithmetic.rounding)
    } else {
      pixelLanes = nil
    }
    // The family of this convolution's requantization form (8-bit outputs have the input's type)
    // reserves its first tile and the tiles the plan runs, all mapped with the other nodes' at the
    // end of allocateTensors(), not mid-invoke; where the OS refuses them, the tiles run in the
    // complete form (as `DotProductMicroKernel` picks), whose family was mapped when the route was chosen.
    var tiles: DotProductTiles?
    if case .generated(_, let kernels) = weights {
      let epilogue = constants.epilogue(group: 0)
      let form = isSigned ? epilogue.form(storing: Int8.self) : epilogue.form(storing: UInt8.self)
      tiles = kernels.reservedTiles(isSigned ? .int8 : .uint8, form: form, flipsSign: flipsSign && readsInPlace)
    }
    // Row-corrected (legacy uint8) weights run in 2 KiB row blocks: the rows they gather stay
    // small enough that the scratch (and the arena) is no larger than LiteRT's on those networks.
    // Few rows against large weights (ResNet50's 7 × 7 layers) go in one block, which reads the
    // weights once.
    let rowBlockBytes: Int
    let wholeProduct = IntegerGEMM.wholeProductBlockBytes(
      rows: shape.gemmRows, depth: weights.paddedDepth, columns: shape.groupOutputChannels)
    if case .rowCorrected = weights {
      rowBlockBytes = 2 * 1024
    } else if let wholeProduct {
      rowBlockBytes = wholeProduct
    } else if pointwise && !readsInPlace {
      rowBlockBytes = Self.flippedBlockRows * weights.paddedDepth
    } else {
      rowBlockBytes = IntegerGEMM.packedBlockBytes(depth: weights.paddedDepth)
    }
    plan = GEMMPlan(
      rows: shape.gemmRows, columns: shape.groupOutputChannels, depth: weights.paddedDepth, threadCount: threadCount,
      splitsDepth: false, rowBlockElements: rowBlockBytes)
    // The tiles the plan will run, mapped with the other nodes' at the end of allocateTensors():
    // a partial last panel (N mod 16 columns) on the store-masking family where the level has one.
    if case .generated(let packed, let kernels) = weights, let tiles {
      let masksPartialPanel = IntegerGEMM.masksPartialPanel(kernels: kernels, plan: plan)
      tiles.reserveTiles(for: plan, masksPartialPanel: masksPartialPanel)
      var maskedTiles: DotProductTiles?
      if masksPartialPanel {
        maskedTiles = kernels.reservedTiles(tiles.output, form: tiles.form, flipsSign: tiles.flipsSign, masksStore: true)
        maskedTiles?.reservePartialPanelTiles(for: plan)
      }
      generatedRoute = (
        packed.matrix(0), shape.groups > 1 ? packed.matrix(1) - packed.matrix(0) : 0, Unmanaged.passUnretained(tiles),
        maskedTiles.map { Unmanaged.passUnretained($0) }
      )
    } else {
      generatedRoute = nil
    }
    if case .rowCorrected(_, let sums, _, _) = weights {
      sums.generated?.reserveCorrectedTiles(
        for: plan, blockRows: RowCorrectedDotProductMicroKernel<UInt8>.blockRows)
    }
    gemmScratchOffset = scratch.reserve(
      bytes: plan.scratchBytes(leftOperandPacks: !readsInPlace, threadCount: threadCount, lhs: UInt8.self, output: UInt8.self))
    inputType = input.type
  }

  /// Computes the output from the input.
  func run(input: RuntimeTensor, output: RuntimeTensor, threadCount: Int, scratch: UnsafeMutableRawPointer) throws {
    let source = UnsafeRawPointer(try tensorData(input))
    let destination = try tensorData(output)
    // Unretained, as the kernel's routes (see `IntegerConv2DKernel.eval`).
    if let pixelLanes = pixelLanes.map(Unmanaged.passUnretained),
      pixelLanes._withUnsafeGuaranteedRef({
        $0.run(
          input: source.assumingMemoryBound(to: Int8.self), output: destination.assumingMemoryBound(to: Int8.self),
          pixels: shape.gemmRows)
      })
    {
      return
    }
    if output.type == .uint8 {
      run(source, output: destination.assumingMemoryBound(to: UInt8.self), threadCount: threadCount, scratch: scratch)
    } else {
      run(source, output: destination.assumingMemoryBound(to: Int8.self), threadCount: threadCount, scratch: scratch)
    }
  }

  /// One GEMM per group into `output`.
  private func run<Output: QuantizedInteger>(
    _ source: UnsafeRawPointer, output: UnsafeMutablePointer<Output>, threadCount: Int,
    scratch: UnsafeMutableRawPointer
  ) {
    for group in 0..<shape.groups {
      let channelOffset = group * shape.groupInputChannels
      if readsInPlace {
        let lhs = RowMajorLeftOperand(
          base: source.assumingMemoryBound(to: UInt8.self) + channelOffset, rowStride: shape.inputChannels)
        multiply(lhs: lhs, group: group, output: output, threadCount: threadCount, scratch: scratch)
      } else if gathersFewChannels {
        let lhs = FewChannelIm2colLeftOperand(
          input: source, shape: shape, signFlip: signFlip, padding: UInt64(paddingValue) &* 0x0101_0101_0101_0101)
        multiply(lhs: lhs, group: group, output: output, threadCount: threadCount, scratch: scratch)
      } else {
        let lhs = UnsignedIm2colLeftOperand(
          input: source, shape: shape, channelOffset: channelOffset, signFlip: signFlip,
          padding: UInt64(paddingValue) &* 0x0101_0101_0101_0101)
        multiply(lhs: lhs, group: group, output: output, threadCount: threadCount, scratch: scratch)
      }
    }
  }

  /// The GEMM of group `group` on the route chosen at prepare.
  @inline(__always)
  private func multiply<LHS: GEMMLeftOperand, Output: QuantizedInteger>(
    lhs: LHS, group: Int, output: UnsafeMutablePointer<Output>, threadCount: Int, scratch: UnsafeMutableRawPointer
  ) where LHS.Element == UInt8 {
    let epilogue = constants.epilogue(group: group)
    let groupOutput = output + group * shape.groupOutputChannels
    let groupScratch = scratch + gemmScratchOffset
    // The family's requantization form is the same for every group (one left-shift flag and clamp
    // per convolution); where the OS refused it, the switch below takes the complete form.
    if let route = generatedRoute, route.tiles._withUnsafeGuaranteedRef({ $0.mapsFirstTile }) {
      GEMMDriver.multiply(
        plan: plan, lhs: lhs, rhs: route.weights + group * route.matrixStride, output: groupOutput,
        outputStride: shape.outputChannels,
        kernel: DotProductMicroKernel<Output>(epilogue: epilogue, tiles: route.tiles, maskedTiles: route.maskedTiles),
        threadCount: threadCount, scratch: groupScratch)
      return
    }
    switch weights {
    case .swift(let packed):
      IntegerGEMM.multiply(
        plan: plan, lhs: lhs, rhs: packed.matrix(group), output: groupOutput, outputStride: shape.outputChannels,
        epilogue: epilogue, threadCount: threadCount, scratch: groupScratch)
    case .generated(let packed, let kernels):
      IntegerGEMM.multiply(
        plan: plan, lhs: lhs, rhs: packed.matrix(group), output: groupOutput, outputStride: shape.outputChannels,
        epilogue: epilogue, kernels: kernels, flipsSign: flipsSign && readsInPlace, threadCount: threadCount,
        scratch: groupScratch)
    case .rowCorrected(let packed, let sums, let zeroPoint, let depth):
      GEMMDriver.multiply(
        plan: plan, lhs: lhs, rhs: packed.matrix(group), output: groupOutput, outputStride: shape.outputChannels,
        kernel: RowCorrectedDotProductMicroKernel<Output>(
          epilogue: epilogue, sums: sums, rowSumFactor: 128 &- zeroPoint, rowSumDepth: depth),
        threadCount: threadCount, scratch: groupScratch)
    }
  }
}

/// The im2col view of an 8-bit convolution input in the GEMM's unsigned form: row = output pixel,
/// depth = (ky, kx, channel of the group), padded to the packed weights' depth (a multiple of 2 or
/// 4). Taps outside the input hold the unsigned input zero point, so they add nothing; so does the
/// depth padding, which meets zero weights.
private struct UnsignedIm2colLeftOperand: GEMMLeftOperand {
  /// The raw NHWC input.
  let input: UnsafeRawPointer
  /// The convolution.
  let shape: ConvolutionShape
  /// First input channel of the group.
  let channelOffset: Int
  /// XOR turning raw bytes into the unsigned form (eight bytes at once).
  let signFlip: UInt64
  /// The unsigned input zero point in all eight bytes.
  let padding: UInt64

  var packsIntoScratch: Bool { true }

  /// Gathers rows `rowStart ..< rowStart + rowCount`, one output row's run of pixels at a time
  /// (see ``gatherRun(image:y:firstX:count:into:rowStride:)``); the integer plan keeps the depth
  /// whole, so `depthStart` is 0 and `depthCount` the padded GEMM depth.
  func block(
    rowStart: Int, rowCount: Int, depthStart: Int, depthCount: Int, scratch: UnsafeMutablePointer<UInt8>
  ) -> (pointer: UnsafePointer<UInt8>, rowStride: Int) {
    if shape.readsInputInPlace {
      return pointBlock(rowStart: rowStart, rowCount: rowCount, depthCount: depthCount, scratch: scratch)
    }
    shape.forEachOutputRowRun(rowStart: rowStart, rowCount: rowCount) { image, y, firstX, count, row in
      gatherRun(
        image: image, y: y, firstX: firstX, count: count, into: UnsafeMutableRawPointer(scratch + row &* depthCount),
        rowStride: depthCount)
    }
    return (UnsafePointer(scratch), depthCount)
  }

  /// Writes the rows of pixels `firstX ..< firstX + count` of output row `y` of image `image`,
  /// `rowStride` bytes apart from `destination`, filter row by filter row. The vertical taps are
  /// decided once for the whole run: a filter row outside the input is padding for every pixel.
  /// Within a filter row, the pixels whose horizontal taps all land inside the input (`interior`)
  /// are copied with no tap ranges or fills by one ``copyRuns(_:bytes:from:stride:to:stride:flip:)``
  /// (without dilation or groups, a pixel's taps are one run of filterWidth · channels bytes) or
  /// one per tap; only the edge pixels split their taps into padding and input.
  /// Wrapping index arithmetic: every offset stays inside the input validated in `prepare`.
  @inline(__always)
  private func gatherRun(
    image: Int, y: Int, firstX: Int, count: Int, into destination: UnsafeMutableRawPointer, rowStride: Int
  ) {
    let channels = shape.groupInputChannels
    let pixelStride = shape.inputChannels
    let height = shape.height
    let width = shape.width
    let filterRowBytes = width.filterSize &* channels
    let inputRowBytes = width.inputSize &* pixelStride
    let imageBase = input + (image &* height.inputSize &* inputRowBytes &+ channelOffset)
    // Adjacent taps of a filter row are contiguous input bytes without dilation or groups.
    let contiguousTaps = width.dilation == 1 && channels == pixelStride
    let endX = firstX &+ count
    let interior = width.interior.clamped(to: firstX..<endX)
    let (firstY, endY) = height.validTaps(y)
    for ky in 0..<height.filterSize {
      let runBase = destination + ky &* filterRowBytes
      guard ky >= firstY && ky < endY else {
        for i in 0..<count { fillBytes(runBase + i &* rowStride, count: filterRowBytes, with: padding) }
        continue
      }
      let inputRow = imageBase + (height.inputOrigin(y) &+ ky &* height.dilation) &* inputRowBytes
      /// Copies taps `first ..< end` of pixel `x`'s filter row to their bytes of `target`.
      @inline(__always) func copyTaps(_ first: Int, _ end: Int, of x: Int, to target: UnsafeMutableRawPointer) {
        let source = inputRow + (width.inputOrigin(x) &+ first &* width.dilation) &* pixelStride
        if contiguousTaps {
          copyBytes(from: source, to: target + first &* channels, count: (end &- first) &* channels, flip: signFlip)
        } else {
          copyRuns(
            end &- first, bytes: channels, from: source, stride: width.dilation &* pixelStride,
            to: target + first &* channels, stride: channels, flip: signFlip)
        }
      }
      /// Filter row ky of pixel x, whose taps may leave the input.
      @inline(__always) func edgePixel(_ x: Int) {
        let target = runBase + (x &- firstX) &* rowStride
        let (firstTap, endTap) = width.validTaps(x)
        fillBytes(target, count: firstTap &* channels, with: padding)
        copyTaps(firstTap, endTap, of: x, to: target)
        fillBytes(target + endTap &* channels, count: (width.filterSize &- endTap) &* channels, with: padding)
      }
      guard !interior.isEmpty else {
        for x in firstX..<endX { edgePixel(x) }
        continue
      }
      for x in firstX..<interior.lowerBound { edgePixel(x) }
      // The interior pixels' runs, pixelStep input bytes apart: one run per pixel of all taps, or
      // one per tap.
      let source = inputRow + width.inputOrigin(interior.lowerBound) &* pixelStride
      let target = runBase + (interior.lowerBound &- firstX) &* rowStride
      let pixelStep = width.stride &* pixelStride
      if contiguousTaps {
        copyRuns(
          interior.count, bytes: filterRowBytes, from: source, stride: pixelStep, to: target, stride: rowStride,
          flip: signFlip)
      } else {
        for kx in 0..<width.filterSize {
          copyRuns(
            interior.count, bytes: channels, from: source + kx &* width.dilation &* pixelStride, stride: pixelStep,
            to: target + kx &* channels, stride: rowStride, flip: signFlip)
        }
      }
      for x in interior.upperBound..<endX { edgePixel(x) }
    }
    let filledDepth = height.filterSize &* filterRowBytes
    if rowStride > filledDepth {
      for i in 0..<count {
        fillBytes(destination + (i &* rowStride &+ filledDepth), count: rowStride &- filledDepth, with: padding)
      }
    }
  }
}

extension UnsignedIm2colLeftOperand {
  /// ``block(rowStart:rowCount:depthStart:depthCount:scratch:)`` of a 1×1 stride-1 filter without
  /// padding: row r is input pixel r, so each row is the group's channels of one pixel (plus the
  /// depth padding), and without groups or padding the whole block is one contiguous run.
  private func pointBlock(
    rowStart: Int, rowCount: Int, depthCount: Int, scratch: UnsafeMutablePointer<UInt8>
  ) -> (pointer: UnsafePointer<UInt8>, rowStride: Int) {
    let channels = shape.groupInputChannels
    let pixelStride = shape.inputChannels
    let first = input + (rowStart &* pixelStride &+ channelOffset)
    let destination = UnsafeMutableRawPointer(scratch)
    if channels == pixelStride && depthCount == channels {
      copyBytes(from: first, to: destination, count: rowCount &* channels, flip: signFlip)
    } else {
      for r in 0..<rowCount {
        let row = destination + r &* depthCount
        copyBytes(from: first + r &* pixelStride, to: row, count: channels, flip: signFlip)
        fillBytes(row + channels, count: depthCount &- channels, with: padding)
      }
    }
    return (UnsafePointer(scratch), depthCount)
  }
}
