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
// Two routes compute it. 8-bit activations run as one ordinary convolution per output phase
// (outputs with the same y mod stride and x mod stride, each reached by its own subset of the
// filter taps) on the 8-bit GEMM, whose tiles requantize and store every stride-th output pixel
// directly (`ByteTransposeConvolution`); since every sum wraps in 32 bits, the order of the
// additions does not change a bit. 16-bit activations run the Int64 loop over the widened input,
// one output value at a time.

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
  /// The per-phase GEMM route of 8-bit activations, chosen at prepare; nil runs the Int64 loop
  /// (tests set it to nil to compare the two).
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
      ? nil
      : arithmetic.flatMap {
        ByteTransposeConvolution(shape: shape, arithmetic: $0, inputType: input.type, threadCount: context.threadCount)
      }
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

/// One output phase of a transposed convolution along one axis: the outputs `first`, `first` +
/// stride, … and the filter taps that reach them, seen as an ordinary stride-1 window over the
/// input. Output `first` + j · stride gathers input j + `originOffset` + t through filter tap
/// `firstTap` + stride · (`taps` − 1 − t), for window taps t = 0 ..< `taps` inside the input (the
/// taps of one phase are the filter's taps `firstTap`, `firstTap` + stride, …, in reverse order).
struct TransposeConvolutionPhase: Equatable {
  /// The phase's first output position (below the stride).
  let first: Int
  /// Output positions in the phase.
  let count: Int
  /// The filter tap of the phase with the smallest index.
  let firstTap: Int
  /// Filter taps that reach the phase (0 when the filter is shorter than the stride).
  let taps: Int
  /// Input position of window tap 0 for the phase's output 0.
  let originOffset: Int
  /// Input extent.
  let inputSize: Int
  /// The transposed convolution's stride.
  let stride: Int

  /// Phase `first` (0 ..< stride) of `axis` (whose `inputSize` is the output extent and
  /// `outputSize` the input extent, as `TransposeConvolutionShape` holds them).
  init(axis: WindowAxis, phase first: Int) {
    let stride = axis.stride
    // Output y meets input iy through tap ky when y + paddingBefore = iy · stride + ky.
    let shifted = first + axis.paddingBefore
    self.first = first
    self.stride = stride
    count = max(0, (axis.inputSize - first + stride - 1) / stride)
    firstTap = shifted % stride
    taps = firstTap < axis.filterSize ? (axis.filterSize - 1 - firstTap) / stride + 1 : 0
    originOffset = shifted / stride - max(0, taps - 1)
    inputSize = axis.outputSize
  }

  /// Window taps of a gathered row: the phase's taps, or one tap of padding when none reach it
  /// (its outputs are then the bias alone).
  var windowTaps: Int { max(1, taps) }

  /// The filter tap of window tap `t`, nil for the padding tap of a phase no tap reaches.
  func filterTap(_ t: Int) -> Int? { taps == 0 ? nil : firstTap + stride * (taps - 1 - t) }

  /// The window taps of output j that fall inside the input, and the input position of tap 0.
  @inline(__always)
  func validTaps(_ j: Int) -> (origin: Int, first: Int, end: Int) {
    let origin = j &+ originOffset
    let first = min(max(0, 0 &- origin), taps)
    return (origin, first, max(first, min(taps, inputSize &- origin)))
  }
}

/// The 8-bit TRANSPOSE_CONV as one ordinary convolution per output phase: a stride-s transposed
/// convolution is s_h × s_w stride-1 convolutions, one per set of outputs with the same (y mod
/// s_h, x mod s_w), each with the filter taps that land on it (for 3×3 stride 2: 2×2, 2×1, 1×2 and
/// 1×1 taps). Each phase's weights are packed as an 8-bit GEMM's (`ByteConvolutionWeights`: the
/// generated `vpdpbusd` tiles where the CPU has them and the weights minus their zero point fit
/// signed bytes, the Swift kernel on 16-bit panels otherwise), depth (tx, ty, channel), with
/// (input offset of the unsigned form) · Σ weights folded into its bias. For every output row the
/// input rows its row phase reads are stacked pixel by pixel as unsigned bytes (int8 plus 128;
/// positions outside the input hold the unsigned input zero point, so they add nothing): input x
/// then holds (ty, channel), so the window of each output of a column phase is one contiguous run
/// and consecutive outputs' runs start one stacked pixel apart. The GEMM reads them in place
/// (rows overlapping) and its tiles requantize and store the int8 or uint8 outputs straight into
/// every stride-th output pixel (C's rows stride · channels apart): no Int32 image, no scatter, no
/// separate requantization. Each output sums exactly the products LiteRT's reference adds,
/// wrapping in Int32 as its accumulators do.
final class ByteTransposeConvolution {
  /// The packed weights and requantization of one (row phase, column phase) pair.
  private struct PhaseWeights {
    /// The packed panels: `Int8` for the generated route, `Int16` for the Swift one.
    let matrix: UnsafeRawPointer
    /// The GEMM depth (window taps · input channels, padded as the panels need).
    let depth: Int
    /// Bias with the input offset's share, rescale and clamp per output channel.
    let epilogue: IntegerEpilogue
    /// True for signed-byte panels on the generated tiles.
    let generated: Bool
  }

  private let shape: TransposeConvolutionShape
  /// The row phases (`shape.height.stride` of them) and column phases.
  private let rowPhases: [TransposeConvolutionPhase], columnPhases: [TransposeConvolutionPhase]
  /// Row phase · column phase count + column phase → its weights.
  private let phases: [PhaseWeights]
  /// The packed weights and constants the phases point into, kept alive here.
  private let storage: [(ByteConvolutionWeights, IntegerChannelConstants)]
  /// The generated kernels, the family of tiles of this node's requantization form and its
  /// store-masking family (reserved at prepare; families live as long as the process); nil when
  /// every phase runs the Swift kernel.
  private let generated: (
    kernels: Unmanaged<GeneratedDotProductKernels>, tiles: Unmanaged<DotProductTiles>,
    maskedTiles: Unmanaged<DotProductTiles>?
  )?
  /// XOR that turns input bytes into their unsigned form: 0x80 in every byte for int8, 0 for uint8.
  private let signFlip: UInt64
  /// The unsigned input zero point in every byte: what positions outside the input hold.
  private let padding: UInt64
  /// The first input column the stacked rows hold (negative where windows start left of the input).
  private let firstColumn: Int
  /// Input columns the stacked rows hold.
  private let stackedColumns: Int
  /// Rows of a row phase one work item stacks and computes (each phase's kernel is made once per item).
  private let blockRows: Int
  /// Work items per image and row phase.
  private let blocksPerPhase: Int
  /// Scratch bytes of one worker: the driver's edge tile, then one block of stacked rows.
  private let workerBytes: Int
  /// Scratch bytes `run` needs.
  let scratchBytes: Int
  /// Workers `run` may use.
  private let threadCount: Int

  /// The route for `shape` with `arithmetic`'s weights (`[O, KH, KW, I]` minus their zero points)
  /// on `inputType` (int8 or uint8) activations and `threadCount` threads, on `kernels` (by
  /// default those the runner allows on this thread; nil: the Swift kernel).
  convenience init?(
    shape: TransposeConvolutionShape, arithmetic: IntegerWeightedArithmetic, inputType: ElementType,
    threadCount: Int, kernels: GeneratedDotProductKernels? = GeneratedDotProductKernels.current
  ) {
    let weights = arithmetic.weights
    self.init(
      shape: shape, weight: { weights[$0] }, arithmetic: arithmetic, inputType: inputType, threadCount: threadCount,
      kernels: kernels)
  }

  /// The route for `shape` whose weight at flat `[O, KH, KW, I]` index i is `weight(i)` (minus its
  /// zero point), with `arithmetic`'s bias and requantization; otherwise as the convenience initializer.
  private init?(
    shape: TransposeConvolutionShape, weight: (Int) -> Int32, arithmetic: IntegerWeightedArithmetic,
    inputType: ElementType, threadCount: Int, kernels: GeneratedDotProductKernels?
  ) {
    let (outputChannels, channels) = (shape.outputChannels, shape.inputChannels)
    let (filterHeight, filterWidth) = (shape.height.filterSize, shape.width.filterSize)
    rowPhases = (0..<shape.height.stride).map { TransposeConvolutionPhase(axis: shape.height, phase: $0) }
    columnPhases = (0..<shape.width.stride).map { TransposeConvolutionPhase(axis: shape.width, phase: $0) }
    let isSigned = inputType == .int8
    let output: RequantizedOutput = isSigned ? .int8 : .uint8
    // (raw + inputOffset) = (unsigned − 128 + inputOffset) for int8, (unsigned + inputOffset) for uint8.
    let offset = arithmetic.inputOffset &- (isSigned ? 128 : 0)
    var storage: [(ByteConvolutionWeights, IntegerChannelConstants)] = []
    var phases: [PhaseWeights] = []
    for rows in rowPhases {
      for columns in columnPhases {
        // Column o, depth (tx, ty, channel) of the phase's GEMM: the filter tap the window tap
        // stands for, zero for a phase's padding tap.
        let depth = rows.windowTaps * columns.windowTaps * channels
        var weights = [Int32](repeating: 0, count: outputChannels * depth)
        for channel in 0..<outputChannels {
          for ty in 0..<rows.windowTaps {
            for tx in 0..<columns.windowTaps {
              guard let ky = rows.filterTap(ty), let kx = columns.filterTap(tx) else { continue }
              let source = ((channel * filterHeight + ky) * filterWidth + kx) * channels
              let destination = channel * depth + (tx * rows.windowTaps + ty) * channels
              for d in 0..<channels { weights[destination + d] = weight(source + d) }
            }
          }
        }
        guard
          let packed = try? weights.withUnsafeBufferPointer({ buffer in
            try ByteConvolutionWeights(
              buffer.baseAddress!, sourceStride: 0, count: 1, layout: .columnMajor(depth: depth), depth: depth,
              columns: outputChannels, uint8ZeroPoint: nil, output: output, op: "TRANSPOSE_CONV", kernels: kernels)
          })
        else { return nil }
        let columnSums = packed.columnSums
        let constants = IntegerChannelConstants(
          groups: 1, groupChannels: outputChannels, multipliers: arithmetic.multipliers,
          rounding: arithmetic.rounding, outputZeroPoint: arithmetic.outputZeroPoint, clamp: arithmetic.clamp
        ) { channel in
          Int32(truncatingIfNeeded: arithmetic.bias[channel]) &+ offset &* columnSums[channel]
        }
        let epilogue = constants.epilogue(group: 0)
        switch packed {
        case .generated(let panels, _):
          phases.append(
            PhaseWeights(
              matrix: UnsafeRawPointer(panels.matrix(0)), depth: panels.paddedDepth, epilogue: epilogue,
              generated: true))
        case .swift(let panels):
          phases.append(
            PhaseWeights(
              matrix: UnsafeRawPointer(panels.matrix(0)), depth: panels.paddedDepth, epilogue: epilogue,
              generated: false))
        case .rowCorrected:
          return nil  // not chosen without a uint8 zero point
        }
        storage.append((packed, constants))
      }
    }
    self.shape = shape
    self.phases = phases
    self.storage = storage
    self.threadCount = max(1, threadCount)
    signFlip = isSigned ? 0x8080_8080_8080_8080 : 0
    padding = UInt64(UInt8(truncatingIfNeeded: 0 &- offset)) &* 0x0101_0101_0101_0101
    // The family of the node's requantization form (one multiplier set and clamp for every phase)
    // reserves the tiles each phase row runs, mapped with the other nodes' at the end of
    // allocateTensors(); a partial last panel runs on the store-masking family where there is one.
    if let kernels, let first = phases.first(where: \.generated) {
      let form = isSigned ? first.epilogue.form(storing: Int8.self) : first.epilogue.form(storing: UInt8.self)
      let tiles = kernels.reservedTiles(output, form: form)
      let masksPartialPanel = kernels.masksStores && outputChannels % GEMMTile.columns != 0
      let maskedTiles = masksPartialPanel ? kernels.reservedTiles(output, form: form, masksStore: true) : nil
      for (index, phase) in phases.enumerated() where phase.generated {
        let rows = columnPhases[index % columnPhases.count].count
        guard rows > 0 else { continue }
        let plan = GEMMPlan(
          rows: rows, columns: outputChannels, depth: phase.depth, threadCount: 1, splitsDepth: false,
          rowBlockElements: (rows + GEMMTile.rows) * phase.depth)
        tiles.reserveTiles(for: plan, masksPartialPanel: masksPartialPanel)
        maskedTiles?.reservePartialPanelTiles(for: plan)
      }
      generated = (
        Unmanaged.passUnretained(kernels), Unmanaged.passUnretained(tiles),
        maskedTiles.map { Unmanaged.passUnretained($0) }
      )
    } else {
      generated = nil
    }
    // The input columns every column phase's windows reach.
    let reached = columnPhases.filter { $0.count > 0 }
    firstColumn = reached.map(\.originOffset).min() ?? 0
    stackedColumns = (reached.map { $0.originOffset + $0.count - 1 + $0.windowTaps }.max() ?? 0) - firstColumn
    let stackedRowBytes = max(1, stackedColumns * (rowPhases.map(\.windowTaps).max() ?? 1) * channels)
    let phaseRows = rowPhases.map(\.count).max() ?? 0
    // Blocks within the budget, at least one per worker where there are rows enough, of equal heights.
    let budgetRows = max(1, Self.stackedBudget / stackedRowBytes)
    let blocks = max((phaseRows + budgetRows - 1) / budgetRows, min(self.threadCount, phaseRows))
    blockRows = max(1, (phaseRows + blocks - 1) / max(1, blocks))
    blocksPerPhase = (phaseRows + blockRows - 1) / blockRows
    // The last window's run is read up to its padded depth: the panels' zero weights meet those bytes.
    workerBytes = GEMMPlan.tileScratchBytes(output: UInt8.self) + (blockRows * stackedRowBytes + 64 + 63) & ~63
    scratchBytes = self.threadCount * workerBytes
  }

  /// Bytes of stacked rows one work item fills (at least one row): they stay in L1 while every
  /// column phase reads them.
  private static let stackedBudget = 16 * 1024

  /// A stride-1 int8 CONV_2D of one group without dilation on this route (stacked rows instead of
  /// an im2col gather: a k×k window's bytes are copied once per output row, not once per output
  /// pixel), on the generated tiles only; nil for other shapes, other weights, without generated
  /// kernels, padding wider than the filter, inputs of at most 4 channels (the few-channel gather's
  /// stems), or weights of `IntegerGEMM.largeWeightBytes` or more
  /// (each output row reads every panel again: ResNet50's 7 × 7 × 512 layers took 1.44× the
  /// im2col route's time, which reads them once). Output y reads input y − pad + ky through tap ky:
  /// that is the stride-1 transposed convolution of the filter turned by 180° (tap kh − 1 − ky)
  /// with padding kh − 1 − pad before and kh − 1 − pad_after after, whose single phase reads the
  /// same input rows and columns.
  convenience init?(
    convolution shape: ConvolutionShape, arithmetic: IntegerWeightedArithmetic, inputType: ElementType,
    threadCount: Int, kernels: GeneratedDotProductKernels? = GeneratedDotProductKernels.current
  ) {
    /// The transposed convolution's axis for a stride-1 convolution `axis`.
    func turned(_ axis: WindowAxis) -> WindowAxis? {
      guard axis.stride == 1, axis.dilation == 1 else { return nil }
      return WindowAxis(
        inputSize: axis.outputSize, filterSize: axis.filterSize, stride: 1, dilation: 1,
        paddingBefore: axis.filterSize - 1 - axis.paddingBefore,
        paddingAfter: axis.inputSize - axis.outputSize + axis.paddingBefore)
    }
    guard inputType == .int8, kernels != nil, let signedWeights = arithmetic.signedWeights, shape.groups == 1,
      shape.height.filterSize * shape.width.filterSize > 1, !FewChannelIm2colLeftOperand.applies(to: shape),
      shape.gemmDepth * shape.outputChannels < IntegerGEMM.largeWeightBytes, let height = turned(shape.height),
      let width = turned(shape.width)
    else { return nil }
    let turnedShape = TransposeConvolutionShape(
      batch: shape.batch, inputHeight: shape.height.inputSize, inputWidth: shape.width.inputSize,
      inputChannels: shape.inputChannels, outputChannels: shape.outputChannels, height: height, width: width)
    let (filterHeight, filterWidth, channels) = (height.filterSize, width.filterSize, shape.inputChannels)
    self.init(
      shape: turnedShape,
      weight: { index in
        // [O, KH, KW, I] index of tap (ky, kx) → the original filter's tap (kh − 1 − ky, kw − 1 − kx).
        let (pixel, d) = index.quotientAndRemainder(dividingBy: channels)
        let (row, kx) = pixel.quotientAndRemainder(dividingBy: filterWidth)
        let (channel, ky) = row.quotientAndRemainder(dividingBy: filterHeight)
        let turnedPixel = (channel * filterHeight + filterHeight - 1 - ky) * filterWidth + filterWidth - 1 - kx
        return Int32(signedWeights[turnedPixel * channels + d])
      }, arithmetic: arithmetic, inputType: inputType, threadCount: threadCount, kernels: kernels)
  }

  /// How the phases run, for `tflite bench --verbose`.
  var description: String {
    let level = generated.map { "generated \($0.kernels.takeUnretainedValue().isa)" } ?? KernelDescription.swiftLevel
    return "8-bit GEMM per output phase, \(level)"
  }

  /// Computes `output` (int8 or uint8 as `Output`) from the 8-bit `input` in `scratch`
  /// (`scratchBytes`, 64-byte aligned): one work item per image, row phase and block of its rows.
  func run<Output: QuantizedInteger>(
    input: UnsafeRawPointer, output: UnsafeMutablePointer<Output>, context: EvalContext,
    scratch: UnsafeMutableRawPointer
  ) {
    let (workerBytes, tileBytes) = (self.workerBytes, GEMMPlan.tileScratchBytes(output: UInt8.self))
    let (phaseCount, blocksPerPhase, blockRows) = (rowPhases.count, self.blocksPerPhase, self.blockRows)
    // The family's own form, or the complete form's where the OS refused it (unretained: families
    // live as long as the process).
    let tiles: (family: Unmanaged<DotProductTiles>?, masked: Unmanaged<DotProductTiles>?)? = generated.map { route in
      route.tiles._withUnsafeGuaranteedRef { $0.mapsFirstTile }
        ? (route.tiles, route.maskedTiles)
        : (
          route.kernels._withUnsafeGuaranteedRef { $0.tiles(Output.isSigned ? .int8 : .uint8) }
            .map { Unmanaged.passUnretained($0) }, nil
        )
    }
    rowPhases.withUnsafeBufferPointer { rowPhases in
      columnPhases.withUnsafeBufferPointer { columnPhases in
        phases.withUnsafeBufferPointer { phases in
          let items = shape.batch * phaseCount * blocksPerPhase
          ParallelWork.run(itemCount: items, threadCount: min(threadCount, context.threadCount)) { item, worker in
            let (image, rest) = item.quotientAndRemainder(dividingBy: phaseCount * blocksPerPhase)
            let (rowPhase, block) = rest.quotientAndRemainder(dividingBy: blocksPerPhase)
            let rows = rowPhases[rowPhase]
            let firstRow = block * blockRows
            let rowCount = min(blockRows, rows.count - firstRow)
            guard rowCount > 0 else { return }
            let workerScratch = scratch + worker * workerBytes
            let stacked = (workerScratch + tileBytes).assumingMemoryBound(to: UInt8.self)
            let lda = rows.windowTaps &* shape.inputChannels
            let stackedRowBytes = stackedColumns &* lda
            for r in 0..<rowCount {
              stack(input, image: image, row: firstRow &+ r, rows: rows, into: stacked + r &* stackedRowBytes)
            }
            // Output row first + (firstRow + r) · stride of the image.
            let outputRowBytes = shape.width.inputSize &* shape.outputChannels
            let blockOutput =
              output + ((image &* shape.height.inputSize &+ rows.first &+ firstRow &* rows.stride) &* outputRowBytes)
            for index in 0..<columnPhases.count where columnPhases[index].count > 0 {
              let columns = columnPhases[index]
              runPhase(
                phases[rowPhase &* columnPhases.count &+ index],
                a: stacked + (columns.originOffset &- firstColumn) &* lda, lda: lda, stackedRowBytes: stackedRowBytes,
                windows: columns.count, rowCount: rowCount,
                output: blockOutput + columns.first &* shape.outputChannels,
                outputRowStride: rows.stride &* outputRowBytes, ldc: columns.stride &* shape.outputChannels,
                tiles: tiles, tile: workerScratch.assumingMemoryBound(to: Output.self))
            }
          }
        }
      }
    }
  }

  /// One phase over `rowCount` output rows: row r's `windows` windows start at `a` + r ·
  /// `stackedRowBytes`, `lda` apart, and requantize into C at `output` + r · `outputRowStride`
  /// (rows `ldc` apart); on `tiles` (the family and the store-masking family of the generated
  /// route) or the Swift kernel, made once for all rows.
  @inline(__always)
  private func runPhase<Output: QuantizedInteger>(
    _ phase: PhaseWeights, a: UnsafePointer<UInt8>, lda: Int, stackedRowBytes: Int, windows: Int, rowCount: Int,
    output: UnsafeMutablePointer<Output>, outputRowStride: Int, ldc: Int,
    tiles: (family: Unmanaged<DotProductTiles>?, masked: Unmanaged<DotProductTiles>?)?, tile: UnsafeMutablePointer<Output>
  ) {
    let columns = shape.outputChannels
    let panels = 0..<PanelPacking.panelCount(columns: columns)
    /// Every row's product on `kernel` over the panels at `rhs`.
    @inline(__always)
    func rowProducts<Kernel: GEMMMicroKernel>(_ kernel: Kernel, rhs: UnsafePointer<Kernel.RHSElement>)
    where Kernel.LHSElement == UInt8, Kernel.OutputElement == Output {
      for r in 0..<rowCount {
        GEMMDriver.runPanels(
          a: a + r &* stackedRowBytes, lda: lda, rowCount: windows, rhs: rhs, panels: panels, columns: columns,
          depth: phase.depth, depthStart: 0, depthCount: phase.depth, output: output + r &* outputRowStride,
          outputStride: ldc, kernel: kernel, tile: tile)
      }
    }
    if phase.generated {
      // The complete form's family mapped when the weights were packed for the generated tiles.
      guard let family = tiles?.family else { preconditionFailure("the generated dot-product tiles did not map") }
      rowProducts(
        DotProductMicroKernel<Output>(epilogue: phase.epilogue, tiles: family, maskedTiles: tiles?.masked),
        rhs: phase.matrix.assumingMemoryBound(to: Int8.self))
    } else {
      rowProducts(
        IntegerMicroKernel<Output>(epilogue: phase.epilogue), rhs: phase.matrix.assumingMemoryBound(to: Int16.self))
    }
  }

  /// Stacks the input rows of row `j` of row phase `rows` in image `image`: stacked column c holds
  /// (ty, channel) of input column `firstColumn` + c, in the unsigned form, positions outside the
  /// input (or the padding tap of a phase no tap reaches) the unsigned input zero point.
  @inline(__always)
  private func stack(
    _ input: UnsafeRawPointer, image: Int, row j: Int, rows: TransposeConvolutionPhase,
    into stacked: UnsafeMutablePointer<UInt8>
  ) {
    let channels = shape.inputChannels
    let (inputHeight, inputWidth) = (shape.inputHeight, shape.inputWidth)
    let imageInput = input + image &* inputHeight &* inputWidth &* channels
    let (originY, firstY, endY) = rows.validTaps(j)
    let columnBytes = rows.windowTaps &* channels
    // The stacked columns whose input column lies inside the input; the others are all padding.
    let firstInside = min(stackedColumns, max(0, -firstColumn))
    let endInside = max(firstInside, min(stackedColumns, inputWidth &- firstColumn))
    fillBytes(stacked, count: firstInside &* columnBytes, with: padding)
    fillBytes(
      stacked + endInside &* columnBytes, count: (stackedColumns &- endInside) &* columnBytes, with: padding)
    // Tap ty of every inside column: one strided run copy from input row originY + ty, or padding
    // where that row is outside the input.
    let insideCount = endInside &- firstInside
    let firstTarget = UnsafeMutableRawPointer(stacked + firstInside &* columnBytes)
    for ty in 0..<rows.windowTaps {
      let target = firstTarget + ty &* channels
      guard ty >= firstY && ty < endY else {
        for column in 0..<insideCount { fillBytes(target + column &* columnBytes, count: channels, with: padding) }
        continue
      }
      copyRuns(
        insideCount, bytes: channels,
        from: imageInput + ((originY &+ ty) &* inputWidth &+ firstColumn &+ firstInside) &* channels, stride: channels,
        to: target, stride: columnBytes, flip: signFlip)
    }
  }
}
