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
//
// Two routes compute it. 8-bit activations whose weights minus their zero point fit signed bytes
// (every int8 model; uint8 ones whose weights stay within ±127 of their zero point) run as a GEMM
// of the input pixels with all (tap, output channel) columns on the dot-product kernels, a scatter
// of each tap's Int32 sums onto the output pixel it lands on, and a vector requantization
// (`ByteTransposeConvolution`); since every sum wraps in 32 bits, the order of the additions does
// not change a bit. 16-bit activations and the other uint8 weights run the Int64 loop over the
// widened input, one output value at a time.

import TFLiteFormat
import TFLiteLinearAlgebra

/// TRANSPOSE_CONV on quantized tensors: inputs `output_shape` (constant INT32 `[4]`), weights
/// `[O,KH,KW,I]`, input `[N,H,W,I]` and an optional bias `[O]`.
final class IntegerTransposeConvKernel: Kernel {
  /// The 8-bit GEMM route when prepared with it, else the Int64 loop.
  var kernelDescription: String? { byteTransposeConvolution?.description }

  private let outputShapeTensor: RuntimeTensor
  private let weights: RuntimeTensor
  private let input: RuntimeTensor
  private let bias: RuntimeTensor?
  private let output: RuntimeTensor
  private let options: TransposeConvOptions
  private let activation: FusedActivation
  private(set) var shape: TransposeConvolutionShape?
  private(set) var arithmetic: IntegerWeightedArithmetic?
  /// The GEMM route of 8-bit activations whose weights fit signed bytes, chosen at prepare; nil
  /// runs the Int64 loop (tests set it to nil to compare the two).
  var byteTransposeConvolution: ByteTransposeConvolution?

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
    byteTransposeConvolution =
      input.type == .int16
      ? nil : arithmetic.flatMap { ByteTransposeConvolution(shape: shape, arithmetic: $0, inputType: input.type) }
    context.requestScratch(
      bytes: byteTransposeConvolution?.scratchBytes ?? input.elementCount * MemoryLayout<Int32>.stride)
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
    if let byteTransposeConvolution {
      let source = try tensorData(input)
      let destination = try tensorData(output)
      if output.type == .int8 {
        byteTransposeConvolution.run(
          input: source, output: destination.assumingMemoryBound(to: Int8.self), context: context, scratch: scratch)
      } else {
        byteTransposeConvolution.run(
          input: source, output: destination.assumingMemoryBound(to: UInt8.self), context: context, scratch: scratch)
      }
      return
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

/// The 8-bit TRANSPOSE_CONV as a GEMM and a scatter, when the weights minus their zero point fit
/// signed bytes (int8 weights always do): every input pixel's unsigned bytes (uint8 as they are,
/// int8 plus 128) times the weights packed as one `depth × (taps · outputChannels)` matrix gives
/// each (tap, output channel) its Int32 sum (`DotProductSums`: generated `vpdpbusd` kernels where
/// the CPU has them, Swift code elsewhere); each tap's sums, minus (128 or 0 + input zero point) ·
/// Σ weights of its column, are added to the Int32 accumulator of the output pixel the tap lands
/// on; the accumulators are then requantized per 16-channel block (generated requantization where
/// available, `IntegerEpilogue` in Swift otherwise). Every addition wraps in Int32, as LiteRT's
/// 8-bit accumulators do, so the result is bit-exact whatever the order of the additions.
final class ByteTransposeConvolution {
  private let shape: TransposeConvolutionShape
  private let panels: QuadPanelMatrices
  private let route: DotProductSums
  private let requantizer: GeneratedRequantizationKernels?
  private let constants: IntegerChannelConstants
  private let epilogue: IntegerEpilogue
  /// (input offset of the unsigned form) · Σ weights, per GEMM column (tap · outputChannels + channel),
  /// then 16 zeros, so that the scatter reads whole 16-channel blocks from any tap's column.
  private let corrections: [Int32]
  /// XOR that turns an input byte into its unsigned form: 0x80 for int8, 0 for uint8.
  private let signMask: UInt8
  /// Output channels rounded up to whole 16-channel blocks: the accumulators' row length.
  private let paddedChannels: Int
  /// GEMM columns rounded up to whole panels.
  private let paddedColumns: Int
  /// The sums' row length: `paddedColumns` and one block more, so that the scatter reads whole
  /// 16-channel blocks from any tap's column (the lanes past the output channels land in the
  /// accumulators' padding, which is never stored).
  private let sumsStride: Int
  /// Input pixels (over all images) per GEMM chunk.
  private let chunkPixels: Int
  /// Scratch offsets of the unsigned input, the sums of one chunk, the accumulators and the
  /// requantized block staging.
  private let inputOffset: Int, sumsOffset: Int, accumulatorOffset: Int, stagingOffset: Int
  /// Scratch bytes `run` needs.
  let scratchBytes: Int

  /// Budget of one chunk's sums, in Int32 values.
  private static let sumsBudget = 1 << 16

  /// The route for `shape` with `arithmetic`'s weights (`[O, KH, KW, I]` minus their zero points)
  /// on `inputType` (int8 or uint8) activations, summing with `route` and requantizing with
  /// `requantizer` (nil: Swift); by default the kernels the runner allows on this thread. Nil when
  /// a weight minus its zero point does not fit a signed byte.
  init?(
    shape: TransposeConvolutionShape, arithmetic: IntegerWeightedArithmetic, inputType: ElementType,
    route: DotProductSums = .current,
    requantizer: GeneratedRequantizationKernels? = GeneratedRequantizationKernels.current
  ) {
    let taps = shape.height.filterSize * shape.width.filterSize
    let (outputChannels, depth) = (shape.outputChannels, shape.inputChannels)
    // Column tap · O + o of the GEMM is output channel o at tap `tap`: OHWI reordered to HWOI.
    var reordered = [Int32](repeating: 0, count: arithmetic.weights.count)
    for channel in 0..<outputChannels {
      for tap in 0..<taps {
        let source = (channel * taps + tap) * depth
        let destination = (tap * outputChannels + channel) * depth
        for d in 0..<depth { reordered[destination + d] = arithmetic.weights[source + d] }
      }
    }
    guard
      let panels = reordered.withUnsafeBufferPointer({ buffer in
        buffer.baseAddress.flatMap {
          QuadPanelMatrices(
            $0, sourceStride: 0, count: 1, layout: .columnMajor(depth: depth), depth: depth,
            columns: shape.gemmColumns)
        }
      })
    else { return nil }
    self.shape = shape
    self.panels = panels
    self.route = route
    self.requantizer = requantizer
    constants = IntegerChannelConstants(
      groups: 1, groupChannels: outputChannels, multipliers: arithmetic.multipliers, rounding: arithmetic.rounding,
      outputZeroPoint: arithmetic.outputZeroPoint, clamp: arithmetic.clamp,
      bias: { Int32(truncatingIfNeeded: arithmetic.bias[$0]) })
    epilogue = constants.epilogue(group: 0)
    signMask = inputType == .int8 ? 0x80 : 0
    let unsignedOffset = Int32(signMask) &- arithmetic.inputOffset
    corrections =
      panels.columnSums.map { unsignedOffset &* $0 }
      + [Int32](repeating: 0, count: GEMMTile.columns)
    paddedChannels = constants.paddedGroupChannels
    paddedColumns = PanelPacking.panelCount(columns: shape.gemmColumns) * GEMMTile.columns
    sumsStride = paddedColumns + GEMMTile.columns
    let inputPixels = shape.batch * shape.inputHeight * shape.inputWidth
    chunkPixels = max(1, min(inputPixels, Self.sumsBudget / sumsStride))
    let outputPixels = shape.batch * shape.height.inputSize * shape.width.inputSize
    var scratch = ScratchLayout()
    inputOffset = scratch.reserve(bytes: inputPixels * panels.paddedDepth)
    sumsOffset = scratch.reserve(bytes: chunkPixels * sumsStride * MemoryLayout<Int32>.stride)
    accumulatorOffset = scratch.reserve(bytes: outputPixels * paddedChannels * MemoryLayout<Int32>.stride)
    stagingOffset = scratch.reserve(bytes: outputPixels * GEMMTile.columns)
    scratchBytes = scratch.byteCount
  }

  /// How the sums run, for `tflite bench --verbose`.
  var description: String { "int8 dot-product GEMM + scatter, \(route.generatedLevel ?? KernelDescription.swiftLevel)" }

  /// Computes `output` (int8 or uint8 as `Output`) from the 8-bit `input`, in `scratch`.
  func run<Output: QuantizedInteger>(
    input: UnsafeRawPointer, output: UnsafeMutablePointer<Output>, context: EvalContext,
    scratch: UnsafeMutableRawPointer
  ) {
    let depth = shape.inputChannels
    let paddedDepth = panels.paddedDepth
    let inputPixels = shape.batch * shape.inputHeight * shape.inputWidth
    let unsignedInput = (scratch + inputOffset).assumingMemoryBound(to: UInt8.self)
    let flip = UInt64(signMask) &* 0x0101_0101_0101_0101
    if depth == paddedDepth {
      copyBytes(from: input, to: unsignedInput, count: inputPixels &* depth, flip: flip)
    } else {
      for pixel in 0..<inputPixels {
        let row = unsignedInput + pixel &* paddedDepth
        copyBytes(from: input + pixel &* depth, to: row, count: depth, flip: flip)
        fillBytes(row + depth, count: paddedDepth &- depth, with: 0)
      }
    }
    let accumulators = (scratch + accumulatorOffset).assumingMemoryBound(to: Int32.self)
    let outputPixels = shape.batch * shape.height.inputSize * shape.width.inputSize
    accumulators.update(repeating: 0, count: outputPixels * paddedChannels)
    let sums = (scratch + sumsOffset).assumingMemoryBound(to: Int32.self)
    var firstPixel = 0
    while firstPixel < inputPixels {
      let pixelCount = min(chunkPixels, inputPixels - firstPixel)
      multiply(unsignedInput + firstPixel * paddedDepth, pixelCount: pixelCount, into: sums, context: context)
      scatter(sums, firstPixel: firstPixel, pixelCount: pixelCount, into: accumulators)
      firstPixel += pixelCount
    }
    requantize(accumulators, pixelCount: outputPixels, into: output, scratch: scratch)
  }

  /// The Int32 sums of `pixelCount` unsigned input rows with every panel, `sumsStride` per row: as
  /// many panels per call as the route's tiles take.
  private func multiply(
    _ rows: UnsafePointer<UInt8>, pixelCount: Int, into sums: UnsafeMutablePointer<Int32>, context: EvalContext
  ) {
    let panelBytes = panels.paddedDepth * GEMMTile.columns
    let matrix = panels.matrix(0)
    let (route, paddedDepth, sumsStride) = (self.route, panels.paddedDepth, self.sumsStride)
    let panelCount = paddedColumns / GEMMTile.columns
    let groupPanels = route.tilePanels
    context.parallelFor((panelCount + groupPanels - 1) / groupPanels) { group in
      let first = group * groupPanels
      route.sums(
        a: rows, lda: paddedDepth, rowCount: pixelCount, b: matrix + first * panelBytes, steps: paddedDepth / 4,
        c: sums + first * GEMMTile.columns, ldc: sumsStride, columns: min(groupPanels, panelCount - first),
        panelBytes: panelBytes)
    }
  }

  /// Adds each tap's corrected sums of input pixels `firstPixel ..< firstPixel + pixelCount` to
  /// the accumulators of the output pixel it lands on.
  private func scatter(
    _ sums: UnsafePointer<Int32>, firstPixel: Int, pixelCount: Int, into accumulators: UnsafeMutablePointer<Int32>
  ) {
    let outputChannels = shape.outputChannels
    let imagePixels = shape.inputHeight * shape.inputWidth
    corrections.withUnsafeBufferPointer { correctionBuffer in
      guard let corrections = correctionBuffer.baseAddress else { return }
      for pixel in firstPixel..<firstPixel + pixelCount {
        let (image, imagePixel) = pixel.quotientAndRemainder(dividingBy: imagePixels)
        let (y, x) = imagePixel.quotientAndRemainder(dividingBy: shape.inputWidth)
        let pixelSums = sums + (pixel - firstPixel) * sumsStride
        shape.forEachLanding(image: image, y: y, x: x) { tap, outputPixel in
          let column = tap &* outputChannels
          let (tapSums, tapCorrections) = (UnsafeRawPointer(pixelSums + column), UnsafeRawPointer(corrections + column))
          let accumulator = UnsafeMutableRawPointer(accumulators + outputPixel &* paddedChannels)
          // Whole 16-channel blocks: the lanes past the output channels add to the padding.
          for offset in stride(from: 0, to: outputChannels &* 4, by: 64) {
            let total =
              accumulator.loadUnaligned(fromByteOffset: offset, as: SIMD16<Int32>.self)
              &+ tapSums.loadUnaligned(fromByteOffset: offset, as: SIMD16<Int32>.self)
              &- tapCorrections.loadUnaligned(fromByteOffset: offset, as: SIMD16<Int32>.self)
            accumulator.storeBytes(of: total, toByteOffset: offset, as: SIMD16<Int32>.self)
          }
        }
      }
    }
  }

  /// Requantizes the accumulators of every output pixel into `output`, one 16-channel block at a
  /// time: whole blocks straight to the output and a partial last block through a staging row per
  /// pixel with the generated kernel; in Swift without it.
  private func requantize<Output: QuantizedInteger>(
    _ accumulators: UnsafePointer<Int32>, pixelCount: Int, into output: UnsafeMutablePointer<Output>,
    scratch: UnsafeMutableRawPointer
  ) {
    let outputChannels = shape.outputChannels
    let block = GEMMTile.columns
    let staging = (scratch + stagingOffset).assumingMemoryBound(to: Output.self)
    for channel in stride(from: 0, to: outputChannels, by: block) {
      let lanes = min(block, outputChannels - channel)
      let blockSums = accumulators + channel
      guard let requantizer else {
        for pixel in 0..<pixelCount {
          let values = epilogue.requantize(loadVector(blockSums + pixel &* paddedChannels), channel: channel)
          storeVector(values.narrowed(to: Output.self), output + (pixel &* outputChannels &+ channel), lanes: lanes)
        }
        continue
      }
      let whole = lanes == block
      requantizer.requantize(
        sums: blockSums, sumsStride: paddedChannels, rows: pixelCount, table: epilogue.table(channel: channel),
        lanes: epilogue.lanes, output: whole ? output + channel : staging, outputStride: whole ? outputChannels : block)
      if !whole {
        for pixel in 0..<pixelCount {
          GEMMDriver.copyRun(from: staging + pixel &* block, to: output + (pixel &* outputChannels &+ channel), count: lanes)
        }
      }
    }
  }
}
