// Quantized DEPTHWISE_CONV_2D, bit-exact with LiteRT's reference kernels (the arithmetic is
// `IntegerWeightedArithmetic`, shared with CONV_2D and FULLY_CONNECTED in Convolution+Integer.swift):
// every output channel c = input channel c / multiplier sums (input − input zero point) ·
// (weight − weight zero point) over its taps inside the input, adds the bias, rescales per channel
// and clamps. 8-bit activations run on a channel-vectorised loop over per-row input windows (no
// arena scratch): where allowed, one call of a run-time generated kernel (`GeneratedDepthwiseKernels`,
// AVX2 or AVX-512) per output row sums, requantizes and stores every channel block of the row;
// otherwise Swift SIMD code sums each block into Int32 lanes and the Swift epilogue requantizes
// them. 16-bit activations run the scalar grouped convolution over widened inputs.

import TFLiteFormat
import TFLiteLinearAlgebra

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
  /// The 8-bit convolution once prepared (nil for 16-bit activations).
  private(set) var byteDepthwise: ByteDepthwiseConvolution?
  /// The generated kernel set current at prepare, unretained (the process's sets live as long as
  /// it), so that `eval` neither reads the task-local set nor retains it; nil: the Swift route.
  private var generatedKernels: Unmanaged<GeneratedDepthwiseKernels>?
  /// The weights in OHWI order for the 16-bit path.
  private var wideFilter: [Int32] = []

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
    let shape = try DepthwiseShape(depthwiseInput: input, filter: filter, bias: bias, options: options, op: op)
    let outputChannels = shape.outputChannels
    let arithmetic = try IntegerWeightedArithmetic(
      op: op, input: input, weights: filter, bias: bias, output: output, outputChannels: outputChannels,
      channelAxis: 3, activation: activation, rounding: context.roundingPolicy)
    context.releaseAfterCopying(filter)
    output.shape = shape.outputShape
    if input.type == .int16 {
      byteDepthwise = nil
      wideFilter = Self.ohwiFilter(arithmetic.weights, taps: shape.height.filterSize * shape.width.filterSize, channels: outputChannels)
      context.requestScratch(bytes: input.elementCount * MemoryLayout<Int32>.stride)
    } else {
      let convolution = ByteDepthwiseConvolution(shape, arithmetic: arithmetic, isSigned: input.type == .int8)
      // Each thread holds one output row's window at a time (on the stack, or the heap when large).
      let windowBytes = try FloatOperands.checkedCount(convolution.windowShape, "\(op) input window")
      try context.requireMemory(count: windowBytes, bytesEach: context.threadCount, for: "\(op)'s input windows")
      if let quadTaps = convolution.quadTaps {
        try context.requireMemory(count: quadTaps.windowBytes, bytesEach: context.threadCount, for: "\(op)'s four-tap windows")
      } else {
        // The tap-pair kind the rows run, mapped with the node's other kernels.
        GeneratedDepthwiseKernels.current?.reserve([.requantized(input.type == .int8 ? .int8 : .uint8)])
      }
      let sumBytes = try FloatOperands.checkedCount(convolution.rowSumsShape, "\(op) row sums")
      try context.requireMemory(count: sumBytes, bytesEach: context.threadCount, for: "\(op)'s row sums")
      byteDepthwise = convolution
    }
    generatedKernels = GeneratedDepthwiseKernels.current.map { Unmanaged.passUnretained($0) }
    // The 8-bit path keeps only its padded weights (not the Int32 ones).
    self.arithmetic = byteDepthwise == nil ? arithmetic : nil
    self.shape = shape
  }

  var kernelDescription: String? {
    guard let byteDepthwise else { return nil }
    let quadTaps = byteDepthwise.quadTaps?.kernel.isMapped == true && GeneratedDepthwiseKernels.current?.quadTaps != nil
    return quadTaps ? "depthwise, generated AVX512-VNNI+VBMI (four taps per vpdpbusd)" : KernelDescription.depthwise()
  }

  func eval(_ context: EvalContext) throws {
    guard output.elementCount > 0 else { return }
    // Unretained (made from a temporary, not a binding, which would hold a retain for the call):
    // this kernel keeps it alive.
    if let byteDepthwise = byteDepthwise.map(Unmanaged.passUnretained) {
      // As `GeneratedDepthwiseKernels.current`: no generated kernels while a runner turns them off.
      let generatedKernels = GeneratedFloatKernels.areAllowed ? generatedKernels : nil
      try byteDepthwise._withUnsafeGuaranteedRef {
        try $0.run(input: input, output: output, threadCount: context.threadCount, generatedKernels: generatedKernels)
      }
      return
    }
    guard let shape, let arithmetic, let scratch = context.scratch else {
      throw KernelError.invalid("DEPTHWISE_CONV_2D was not prepared")
    }
    let widened = scratch.assumingMemoryBound(to: Int32.self)
    try arithmetic.widenInput(input, into: widened)
    // One group per input channel, `multiplier` output channels each.
    let grouped = ConvolutionShape(
      batch: shape.batch, inputChannels: shape.inputChannels, groupInputChannels: 1,
      outputChannels: shape.outputChannels, height: shape.height, width: shape.width)
    runIntegerConvolution(
      grouped, arithmetic: arithmetic, weights: wideFilter, input: widened, output: try tensorData(output),
      outputType: output.type, context: context)
  }

  /// Depthwise weights `[tap][channel]` reordered to OHWI (`[channel][tap]`).
  private static func ohwiFilter(_ weights: [Int32], taps: Int, channels: Int) -> [Int32] {
    (0..<(taps * channels)).map { index in weights[(index % taps) * channels + index / taps] }
  }
}

/// DEPTHWISE_CONV_2D on 8-bit activations, vectorised over 16 channels.
///
/// For each output row, the input rows its taps read are copied into a small window (on the
/// stack, so the node needs no arena scratch, as LiteRT's int8 depthwise kernels need none) in the
/// unsigned form of the integer GEMM (int8 plus 128), with the unsigned input zero point wherever a
/// tap falls outside the input, every channel repeated `multiplier` times and the channels padded
/// to whole 16-lane blocks. Every output then sums all its taps without bounds checks: Σ u · w,
/// where the input offset's share (offset · Σ w over all taps, padding included) is folded into
/// the bias at prepare time. The taps go in pairs (the generated kernels' word-pair multiply-adds,
/// see `DepthwiseKernelGenerator`); an odd last tap is paired with itself at weight zero.
/// A class, so that `eval` reads it through one reference (as a struct in the kernel's optional
/// property, every invoke copied it and retained and released each of its arrays and classes).
final class ByteDepthwiseConvolution {
  /// The convolution.
  let shape: DepthwiseShape
  /// The weights minus their zero points as tap pairs, `[pair][channel][tap of the pair]` with
  /// `paddedChannels` channels per pair (zero past the channels and for the missing tap of an odd
  /// count), from a cache line on: the generated kernels read it 64 bytes at a time.
  let filter: CacheLineValues<Int16>
  /// Channels per tap in `filter` and per pixel of the window: a multiple of 16.
  let paddedChannels: Int
  /// Pixels per window row: the input row with its padding on both sides.
  let paddedWidth: Int
  /// The tap pairs of the window, built at prepare: (input offset A, input offset B, weight byte
  /// offset) per pair, 3 × `bytePairCount` entries (see `pairTable(shape:paddedWidth:paddedChannels:)`);
  /// behind a pointer, so that a run reads it without retaining an array.
  let pairTable: CacheLineValues<Int>
  /// Bias (with the input offset's share) and multiplier per output channel.
  let constants: IntegerChannelConstants
  /// XOR turning a raw input byte into the unsigned form: 0x80 for int8, 0 for uint8.
  let signFlip: UInt8
  /// The unsigned input zero point, which padding holds.
  let paddingValue: UInt8
  /// The four-tap route (AVX512-VNNI with VBMI) with its kernel, where the shape and weights allow
  /// it and the generated kernels current at prepare have it; the tap-pair route otherwise.
  let quadTaps: QuadTapDepthwise?
  /// `ChannelWindowRows` work of one output row.
  let workPerRow: Int

  init(_ shape: DepthwiseShape, arithmetic: IntegerWeightedArithmetic, isSigned: Bool) {
    let channels = shape.outputChannels
    let padded = PanelPacking.panelCount(columns: channels) * GEMMTile.columns
    let taps = shape.height.filterSize * shape.width.filterSize
    var filter = [Int16](repeating: 0, count: DepthwiseKernelGenerator.bytePairCount(taps: taps) * padded * 2)
    var tapSums = [Int32](repeating: 0, count: channels)
    for tap in 0..<taps {
      for channel in 0..<channels {
        let weight = arithmetic.weights[tap * channels + channel]
        filter[((tap / 2) * padded + channel) * 2 + tap % 2] = Int16(truncatingIfNeeded: weight)
        tapSums[channel] &+= weight
      }
    }
    // (raw + inputOffset) = (unsigned − 128 + inputOffset) for int8, (unsigned + inputOffset) for uint8.
    let offset = arithmetic.inputOffset &- (isSigned ? 128 : 0)
    /// Input extent that covers every tap of every output along one axis.
    func paddedExtent(_ axis: WindowAxis) -> Int {
      let span = axis.outputSize == 0 ? 0 : (axis.outputSize - 1) * axis.stride + (axis.filterSize - 1) * axis.dilation + 1
      return max(axis.paddingBefore + axis.inputSize, span)
    }
    let width = paddedExtent(shape.width)
    self.shape = shape
    self.filter = CacheLineValues(copying: filter)
    paddedChannels = padded
    paddedWidth = width
    pairTable = CacheLineValues(copying: Self.pairTable(shape: shape, paddedWidth: width, paddedChannels: padded))
    constants = IntegerChannelConstants(
      groups: 1, groupChannels: channels, multipliers: arithmetic.multipliers, rounding: arithmetic.rounding,
      outputZeroPoint: arithmetic.outputZeroPoint, clamp: arithmetic.clamp
    ) {
      Int32(truncatingIfNeeded: arithmetic.bias[$0]) &+ offset &* tapSums[$0]
    }
    signFlip = isSigned ? 0x80 : 0
    paddingValue = UInt8(truncatingIfNeeded: 0 &- offset)
    workPerRow = ChannelWindowRows.work(shape.width.outputSize, channels, shape.height.filterSize, shape.width.filterSize)
    quadTaps = GeneratedDepthwiseKernels.current?.quadTaps.flatMap {
      QuadTapDepthwise(shape, weights: arithmetic.weights, paddedWidth: width, output: isSigned ? .int8 : .uint8, kernels: $0)
    }
  }

  /// The shape of one output row's input window (one byte per element): a row per filter tap row.
  var windowShape: [Int] { [shape.height.filterSize, paddedWidth, paddedChannels] }

  /// The shape of the Int32 sums of one output row's 16-channel block on the Swift route (in
  /// bytes): 16 four-byte sums per output pixel; the generated route's AVX2 tail buffer (16 bytes
  /// per pixel) fits in it too.
  var rowSumsShape: [Int] { [shape.width.outputSize, DepthwiseKernelGenerator.blockChannels, 4] }

  /// Computes the output from the input; the sums come from `generatedKernels` when given.
  func run(
    input: RuntimeTensor, output: RuntimeTensor, threadCount: Int, generatedKernels: GeneratedDepthwiseKernels?
  ) throws {
    try withExtendedLifetime(generatedKernels) {
      try run(
        input: input, output: output, threadCount: threadCount,
        generatedKernels: generatedKernels.map { Unmanaged.passUnretained($0) })
    }
  }

  /// `run` on a set the caller keeps alive, held unretained: a run retains, releases and allocates nothing.
  func run(
    input: RuntimeTensor, output: RuntimeTensor, threadCount: Int, generatedKernels: Unmanaged<GeneratedDepthwiseKernels>?
  ) throws {
    let source = UnsafePointer(try tensorData(input).assumingMemoryBound(to: UInt8.self))
    let destination = try tensorData(output)
    if output.type == .uint8 {
      convolve(
        source, output: destination.assumingMemoryBound(to: UInt8.self), threadCount: threadCount,
        generatedKernels: generatedKernels)
    } else {
      convolve(
        source, output: destination.assumingMemoryBound(to: Int8.self), threadCount: threadCount,
        generatedKernels: generatedKernels)
    }
  }

  /// Fills `window` with the unsigned input rows that output row `y` of `image` reads, one window
  /// row per filter tap row: the padding value outside the input, every pixel's channels (each
  /// repeated `multiplier` times) at their place inside it.
  private func fillWindow(_ window: UnsafeMutablePointer<UInt8>, input: UnsafePointer<UInt8>, image: Int, y: Int) {
    let height = shape.height
    let width = shape.width
    let pixelBytes = shape.inputChannels
    let contiguous = shape.multiplier == 1 && paddedChannels == pixelBytes
    let paddedRow = paddedWidth &* paddedChannels
    // Contiguous rows are overwritten inside the input, so only their padding columns need the
    // padding value; otherwise the channel padding between pixels needs it too.
    let inside = width.inputSize &* pixelBytes
    let before = width.paddingBefore &* paddedChannels
    if !contiguous { window.update(repeating: paddingValue, count: height.filterSize &* paddedRow) }
    for tapRow in 0..<height.filterSize {
      let inputY = y &* height.stride &- height.paddingBefore &+ tapRow &* height.dilation
      let windowRow = window + tapRow &* paddedRow
      guard inputY >= 0, inputY < height.inputSize else {
        if contiguous { windowRow.update(repeating: paddingValue, count: paddedRow) }
        continue
      }
      let source = input + (image &* height.inputSize &+ inputY) &* width.inputSize &* pixelBytes
      let row = windowRow + before
      if contiguous {
        windowRow.update(repeating: paddingValue, count: before)
        (row + inside).update(repeating: paddingValue, count: paddedRow &- before &- inside)
        flipBytes(from: source, to: row, count: inside)
        continue
      }
      for x in 0..<width.inputSize {
        let from = source + x &* pixelBytes
        let to = row + x &* paddedChannels
        if shape.multiplier == 1 {
          flipBytes(from: from, to: to, count: pixelBytes)
        } else {
          for channel in 0..<shape.outputChannels { to[channel] = from[channel / shape.multiplier] ^ signFlip }
        }
      }
    }
  }

  /// XORs `count` bytes with the sign flip while copying them, 16 at a time.
  private func flipBytes(from source: UnsafePointer<UInt8>, to destination: UnsafeMutablePointer<UInt8>, count: Int) {
    let flip = SIMD16<UInt8>(repeating: signFlip)
    var offset = 0
    while offset &+ 16 <= count {
      storeVector(loadVector(source + offset) ^ flip, destination + offset)
      offset &+= 16
    }
    while offset < count {
      destination[offset] = source[offset] ^ signFlip
      offset &+= 1
    }
  }

  /// The tap pairs of the window: (input offset A, input offset B, weight byte offset) per pair.
  /// Tap (ky, kx) reads window row ky at column kx · dilation; an odd last tap is paired with
  /// itself (its weights there are zero).
  private static func pairTable(shape: DepthwiseShape, paddedWidth: Int, paddedChannels: Int) -> [Int] {
    let width = shape.width
    let tapCount = shape.height.filterSize * width.filterSize
    func inputOffset(_ tap: Int) -> Int {
      let (ky, kx) = tap.quotientAndRemainder(dividingBy: width.filterSize)
      return ky * paddedWidth * paddedChannels + kx * width.dilation * paddedChannels
    }
    return (0..<DepthwiseKernelGenerator.bytePairCount(taps: tapCount)).flatMap { pair in
      [
        inputOffset(2 * pair), inputOffset(min(2 * pair + 1, tapCount - 1)),
        pair * paddedChannels * 2 * MemoryLayout<Int16>.stride,
      ]
    }
  }

  /// The convolution, one output row at a time over its input window, for one output type: for
  /// each output row the window, then with `generatedKernels` one call of the requantizing byte
  /// kernel over every 16-channel block of the row (see `convolveRowGenerated`), otherwise per block
  /// the Int32 sums of every pixel from Swift SIMD code, requantized by the Swift epilogue.
  private func convolve<Output: QuantizedInteger>(
    _ input: UnsafePointer<UInt8>, output: UnsafeMutablePointer<Output>, threadCount: Int,
    generatedKernels: Unmanaged<GeneratedDepthwiseKernels>?
  ) {
    let channels = shape.outputChannels
    let block = DepthwiseKernelGenerator.blockChannels
    let epilogue = constants.epilogue(group: 0)
    let height = shape.height
    let width = shape.width
    let windowBytes = height.filterSize &* paddedWidth &* paddedChannels
    // The kernel was found at prepare (for the output type, which is the input's); it runs when
    // the set given carries four-tap kernels (not on a forced AVX2 or pair-only set) and the OS
    // mapped it (else the tap-pair route gives the same bytes).
    if let quadTaps = quadTaps.map(Unmanaged.passUnretained),
      generatedKernels?._withUnsafeGuaranteedRef({ $0.quadTaps != nil }) == true,
      quadTaps._withUnsafeGuaranteedRef({ $0.kernel.isMapped })
    {
      quadTaps._withUnsafeGuaranteedRef {
        convolveQuadTaps(
          $0, input: input, output: output, threadCount: threadCount, requantization: epilogue.table(channel: 0),
          lanes: epilogue.lanes)
      }
      return
    }
    let filter = UnsafePointer(self.filter.base)
    let table = UnsafePointer(pairTable.base)
    // The kind is generated on the first run that asks (missing only if the OS refused it).
    let kind = DepthwiseKernelGenerator.ElementKind.requantized(Output.isSigned ? .int8 : .uint8)
    let byteKernels = generatedKernels.flatMap { $0._withUnsafeGuaranteedRef { $0.has(kind) } ? $0 : nil }
    ChannelWindowRows.forEachRow(rows: shape.batch * height.outputSize, workPerRow: workPerRow, threadCount: threadCount) {
      row in
      // In the thread's workspace: a temporary allocation of the window's size is a malloc per row.
      ThreadWorkspace.with(byteCount: windowBytes) { windowMemory in
        let window = windowMemory.bindMemory(to: UInt8.self, capacity: windowBytes)
        fillWindow(window, input: input, image: row / height.outputSize, y: row % height.outputSize)
        let outputRow = output + row &* width.outputSize &* channels
        if let byteKernels {
          byteKernels._withUnsafeGuaranteedRef {
            convolveRowGenerated(
              $0, window: UnsafePointer(window), filter: filter, table: table,
              requantization: epilogue.table(channel: 0), lanes: epilogue.lanes, output: outputRow)
          }
          return
        }
        withUnsafeTemporaryAllocation(of: Int32.self, capacity: width.outputSize &* block) { sumBuffer in
          guard let sums = sumBuffer.baseAddress else { return }
          for channel in stride(from: 0, to: channels, by: block) {
            sumRow(window: UnsafePointer(window), channel: channel, filter: filter, table: table, sums: sums)
            let lanes = min(block, channels &- channel)
            for x in 0..<width.outputSize {
              let requantized = epilogue.requantize(loadVector(sums + x &* block), channel: channel)
              storeVector(requantized.narrowed(to: Output.self), outputRow + (x &* channels &+ channel), lanes: lanes)
            }
          }
        }
      }
    }
  }

  /// One output row from its window with the requantizing generated byte kernel: one call for all
  /// the row's 16-channel blocks, the last one stored through a k-mask on AVX-512. The AVX2 kernel
  /// stores whole blocks only, so there a last partial block goes to a 16-byte-per-pixel buffer
  /// first and its channels are copied from there.
  private func convolveRowGenerated<Output: QuantizedInteger>(
    _ kernels: GeneratedDepthwiseKernels, window: UnsafePointer<UInt8>, filter: UnsafePointer<Int16>,
    table: UnsafePointer<Int>, requantization: UnsafeRawPointer, lanes: UnsafeRawPointer,
    output: UnsafeMutablePointer<Output>
  ) {
    let channels = shape.outputChannels
    let block = DepthwiseKernelGenerator.blockChannels
    let blocks = paddedChannels / block
    let lastLanes = channels &- (blocks &- 1) &* block
    let pixels = shape.width.outputSize
    let kind = DepthwiseKernelGenerator.ElementKind.requantized(Output.isSigned ? .int8 : .uint8)
    /// Runs `count` blocks from block `first`, storing pixels `outputPixelBytes` apart at `destination`.
    func run(first: Int, count: Int, lastBlockLanes: Int, destination: UnsafeMutableRawPointer, outputPixelBytes: Int) {
      var arguments = DepthwiseKernelArguments(
        input: UnsafeRawPointer(window + first &* block), inputPixelBytes: shape.width.stride &* paddedChannels,
        taps: table, tapCount: DepthwiseKernelGenerator.bytePairCount(taps: shape.height.filterSize &* shape.width.filterSize),
        weights: UnsafeRawPointer(filter + 2 &* first &* block), start: kernels.zeros, output: destination,
        outputPixelBytes: outputPixelBytes, pixelCount: pixels, blockCount: count,
        requantization: requantization + first &* RequantizationTable.blockBytes, requantizationLanes: lanes,
        lastBlockLanes: lastBlockLanes)
      kernels.run(kind, &arguments)
    }
    if lastLanes == block || kernels.masksLastBlock {
      run(first: 0, count: blocks, lastBlockLanes: lastLanes, destination: UnsafeMutableRawPointer(output), outputPixelBytes: channels)
      return
    }
    if blocks > 1 {
      run(first: 0, count: blocks &- 1, lastBlockLanes: block, destination: UnsafeMutableRawPointer(output), outputPixelBytes: channels)
    }
    withUnsafeTemporaryAllocation(of: UInt8.self, capacity: pixels &* block) { tailBuffer in
      guard let tail = tailBuffer.baseAddress else { return }
      run(first: blocks &- 1, count: 1, lastBlockLanes: block, destination: UnsafeMutableRawPointer(tail), outputPixelBytes: block)
      for x in 0..<pixels {
        UnsafeMutableRawPointer(output + (x &* channels &+ (blocks &- 1) &* block))
          .copyMemory(from: tail + x &* block, byteCount: lastLanes)
      }
    }
  }

  /// The Swift route of one 16-channel block of one output row: the Int32 sums of every pixel over
  /// the tap pairs of `table`, 16 per pixel into `sums`, as the generated kernel stores them. Four
  /// pixels at a time share each pair's widened weights; a group past the row's end repeats its
  /// last pixel and stores only the real ones.
  private func sumRow(
    window: UnsafePointer<UInt8>, channel: Int, filter: UnsafePointer<Int16>, table: UnsafePointer<Int>,
    sums: UnsafeMutablePointer<Int32>
  ) {
    // Wrapping index arithmetic: every offset stays inside the window built for this shape.
    let width = shape.width
    let block = DepthwiseKernelGenerator.blockChannels
    let pixelStep = width.stride &* paddedChannels
    let pairCount = DepthwiseKernelGenerator.bytePairCount(taps: shape.height.filterSize &* width.filterSize)
    var x = 0
    while x < width.outputSize {
      let count = min(4, width.outputSize &- x)
      let (p0, p1, p2, p3) = fourPixels(from: window + (x &* pixelStep &+ channel), count: count, step: pixelStep)
      var s0 = SIMD16<Int32>()
      var s1 = SIMD16<Int32>()
      var s2 = SIMD16<Int32>()
      var s3 = SIMD16<Int32>()
      for pair in 0..<pairCount {
        let a = table[3 &* pair]
        let b = table[3 &* pair &+ 1]
        let weights = filter + (table[3 &* pair &+ 2] / MemoryLayout<Int16>.stride &+ 2 &* channel)
        let interleaved = UnsafeRawPointer(weights).loadUnaligned(as: SIMD32<Int16>.self)
        let wa = SIMD16<Int32>(truncatingIfNeeded: interleaved.evenHalf)
        let wb = SIMD16<Int32>(truncatingIfNeeded: interleaved.oddHalf)
        s0 &+= widenedBytes(p0 + a) &* wa &+ widenedBytes(p0 + b) &* wb
        s1 &+= widenedBytes(p1 + a) &* wa &+ widenedBytes(p1 + b) &* wb
        s2 &+= widenedBytes(p2 + a) &* wa &+ widenedBytes(p2 + b) &* wb
        s3 &+= widenedBytes(p3 + a) &* wa &+ widenedBytes(p3 + b) &* wb
      }
      let out = sums + x &* block
      storeVector(s0, out)
      if count > 1 { storeVector(s1, out + block) }
      if count > 2 { storeVector(s2, out + 2 &* block) }
      if count > 3 { storeVector(s3, out + 3 &* block) }
      x &+= 4
    }
  }
}

/// Sixteen unsigned bytes zero-extended to Int32 lanes.
@inline(__always)
private func widenedBytes(_ pointer: UnsafePointer<UInt8>) -> SIMD16<Int32> {
  SIMD16<Int32>(widening: loadVector(pointer))
}

