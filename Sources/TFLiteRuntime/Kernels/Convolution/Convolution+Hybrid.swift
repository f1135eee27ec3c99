// Hybrid FULLY_CONNECTED, CONV_2D and DEPTHWISE_CONV_2D: float input and output, constant int8
// (FULLY_CONNECTED and CONV_2D also packed int4) weights, float bias. The arithmetic (see
// Hybrid.swift) follows LiteRT's BUILTIN_REF kernels:
// - FULLY_CONNECTED quantizes each input row, symmetric or asymmetric by its
//   `asymmetric_quantize_inputs` option, and computes bias + sum · (row scale · weight scale).
// - CONV_2D whose weight scales differ (or that has groups) quantizes each image asymmetrically and
//   computes (sum · weight scale) · image scale + bias; with one shared weight scale it quantizes
//   each image symmetrically and computes sum · (image scale · weight scale) + bias.
// - DEPTHWISE_CONV_2D quantizes each image asymmetrically and computes
//   sum · (weight scale · image scale) + bias.
// Taps outside the input add nothing. The float convolutions clamp to the activation's range;
// FULLY_CONNECTED without an activation does not clamp at all. FULLY_CONNECTED and CONV_2D run
// their integer products as a packed 8-bit GEMM (HybridDotProducts.swift: generated VNNI kernels
// where the CPU has them), DEPTHWISE_CONV_2D over a padded copy of the quantized image, 16 channels
// and four pixels at a time in Swift SIMD.

import TFLiteFormat
import TFLiteLinearAlgebra

/// FULLY_CONNECTED with float input and int8 / int4 weights: input read as `[M, K]`, weights
/// `[N, K]`, optional float bias `[N]`. An input of zeros only gives the bias without any product,
/// as LiteRT skips the product then.
final class HybridFullyConnectedKernel: Kernel {
  private static let op = "FULLY_CONNECTED"
  /// Output panels (of 16 channels) per work item.
  private static let panelBlock = 4
  private let operands: HybridOperands
  private var input: RuntimeTensor { operands.input }
  private var output: RuntimeTensor { operands.output }
  private let keepNumDims: Bool
  private let activation: FloatClampRange
  private let quantization: HybridInputQuantization
  private var weights: HybridPackedWeights?
  private var quantizedInput: HybridInputScratch?
  /// Offset of the per-worker tiles of sums.
  private var tileOffset = 0
  /// Int32 sums of one worker's tile.
  private var tileElements = 0
  private var units = 0
  /// The sums' route current at prepare (see `HybridConv2DKernel.route`).
  private var route = DotProductSums(generated: nil)

  init(node: Node) throws {
    operands = try HybridOperands(node, op: Self.op, weightTypes: [.int8, .int4])
    let options = try FloatOperands.options(of: node, op: Self.op, defaults: FullyConnectedOptions()) {
      if case .fullyConnectedOptions(let options) = $0 { options } else { nil }
    }
    guard options.weightsFormat == .default else {
      throw KernelError.unsupported("\(Self.op) with weights format \(options.weightsFormat.name)")
    }
    keepNumDims = options.keepNumDims
    // LiteRT applies no clamp at all when the hybrid kernel has no activation.
    activation =
      options.fusedActivationFunction == .none
      ? FloatClampRange(lower: -.infinity, upper: .infinity)
      : try FloatClampRange(options.fusedActivationFunction, op: Self.op)
    quantization = options.asymmetricQuantizeInputs ? .asymmetric : .symmetric
  }

  var kernelDescription: String? { DotProductSums.current.hybridDescription }

  func prepare(_ context: inout PrepareContext) throws {
    let geometry = try FullyConnectedShape(
      input: input, weights: operands.weights, bias: operands.bias, keepNumDims: keepNumDims)
    let (rows, depth, units) = (geometry.rows, geometry.depth, geometry.units)
    weights = try HybridPackedWeights.reusing(
      weights, operands.weights, op: Self.op, layout: .contiguous(rows: units, columns: depth), groups: 1,
      channelAxis: 0)
    context.releaseAfterCopying(operands.weights)
    var scratch = ScratchLayout()
    quantizedInput = HybridInputScratch(runs: rows, runLength: depth, scratch: &scratch)
    tileElements = HybridPackedWeights.tileElements(rows: Self.tileRows)
    tileOffset = scratch.reserve(bytes: context.threadCount * tileElements * MemoryLayout<Int32>.stride)
    context.requestScratch(bytes: scratch.byteCount)
    self.units = units
    route = DotProductSums.current
    output.shape = geometry.outputShape
  }

  /// Input rows per work item.
  private static let tileRows = 60

  func eval(_ context: EvalContext) throws {
    guard output.elementCount > 0 else { return }
    guard let weights, let quantizedInput, let scratch = context.scratch else {
      throw KernelError.invalid("\(Self.op) was not prepared")
    }
    let source = input.pointer(as: Float.self)
    let destination = output.pointer(as: Float.self)
    let biasPointer = operands.biasPointer
    let (units, rows, activation) = (self.units, quantizedInput.runs, self.activation)
    if !(0..<rows * quantizedInput.runLength).contains(where: { source[$0] != 0 }) {
      for row in 0..<rows {
        for unit in 0..<units { destination[row &* units &+ unit] = activation.apply(hybridBias(biasPointer, unit)) }
      }
      return
    }
    let quantized = quantizedInput.quantize(source, as: quantization, scratch: scratch, context: context, unsigned: true)
    let route = GeneratedFloatKernels.areAllowed ? self.route : DotProductSums(generated: nil)
    let rowBlocks = (rows + Self.tileRows - 1) / Self.tileRows
    let panelBlocks = (weights.panelCount + Self.panelBlock - 1) / Self.panelBlock
    let tiles = (scratch + tileOffset).assumingMemoryBound(to: Int32.self)
    let tileElements = self.tileElements
    let depth = quantized.runLength
    ParallelWork.run(itemCount: rowBlocks * panelBlocks, threadCount: context.threadCount) { item, worker in
      let firstRow = (item / panelBlocks) &* Self.tileRows
      let rowCount = min(Self.tileRows, rows &- firstRow)
      let firstPanel = (item % panelBlocks) &* Self.panelBlock
      weights.forEachTile(
        route: route, a: UnsafeRawPointer(quantized.values + firstRow &* depth).assumingMemoryBound(to: UInt8.self),
        lda: depth, rowCount: rowCount, group: 0, panels: firstPanel..<min(weights.panelCount, firstPanel &+ Self.panelBlock),
        tile: tiles + worker &* tileElements
      ) { firstUnit, unitCount, sums, sumsStride in
        let columns = HybridTileColumns(weights: weights, firstChannel: firstUnit, count: unitCount, bias: biasPointer)
        for index in 0..<rowCount {
          let row = firstRow &+ index
          columns.store(
            sums + index &* sumsStride, storedZeroPoint: quantized.zeroPoints[row] &+ 128,
            inputScale: quantized.scales[row], weightScaleFirst: false, activation: activation,
            into: destination + (row &* units &+ firstUnit))
        }
      }
    }
  }
}

/// CONV_2D with float input and int8 / int4 filter `[O, KH, KW, C / groups]`, optional float bias `[O]`.
/// Each work item is a block of output pixels of one image and group times a group of the filter's
/// 16-channel panels: the pixels' filter windows are gathered into rows (or read in place for 1×1
/// stride-1 filters) and multiplied by those panels of the packed filter (`HybridPackedWeights`).
/// One thread takes all panels at once and as few pixel blocks as the cache budget allows; with
/// several, `GEMMPlan.cut`'s cost model picks the blocks and panel groups (a 7×7 layer, one block
/// of pixels, is cut along its channels).
final class HybridConv2DKernel: Kernel {
  private static let op = "CONV_2D"
  /// Bytes of gathered rows per work item at most (they stay in the core's L2 while every panel
  /// of the filter passes over them).
  private static let blockBytes = 64 * 1024
  /// Output pixels per work item at most (a multiple of every route's tile height: 4, 6, 10), so
  /// that thin filters do not make the per-worker rows and sums outgrow the activations.
  private static let maximumBlockRows = 60
  private let operands: HybridOperands
  private var input: RuntimeTensor { operands.input }
  private var output: RuntimeTensor { operands.output }
  private let options: Conv2DOptions
  private let activation: FloatClampRange
  private var shape: ConvolutionShape?
  private var weights: HybridPackedWeights?
  private var quantizedInput: HybridInputScratch?
  /// True for LiteRT's per-channel path: asymmetric input, weight scale applied first.
  private var perChannel = false
  /// Output pixels of the largest block.
  private var blockRows = 1
  /// How the pixels of one image and group are cut into blocks and the panels into groups.
  private var cut = (rowBlocks: 1, panelGroups: 1, rowTile: 1)
  /// The sums' route current at prepare (the cut's tile height is its), held so that `eval` neither
  /// reads the task-local kernel set nor looks its Int32-sum family up under a lock per invoke;
  /// `eval` takes the Swift loop instead while a runner turns generated kernels off.
  private var route = DotProductSums(generated: nil)
  /// Offset of the per-worker gathered rows (unused for in-place 1×1 filters).
  private var rowsOffset = 0
  /// Offset of the per-worker tiles of sums.
  private var tileOffset = 0
  /// Int32 sums of one worker's tile.
  private var tileElements = 0

  init(node: Node) throws {
    operands = try HybridOperands(node, op: Self.op, weightTypes: [.int8, .int4])
    options = try FloatOperands.options(of: node, op: Self.op, defaults: Conv2DOptions()) {
      if case .conv2DOptions(let options) = $0 { options } else { nil }
    }
    activation = try FloatClampRange(options.fusedActivationFunction, op: Self.op)
  }

  var kernelDescription: String? { DotProductSums.current.hybridDescription }

  func prepare(_ context: inout PrepareContext) throws {
    let shape = try ConvolutionShape(
      conv2DInput: input, filter: operands.weights, bias: operands.bias, options: options, op: Self.op)
    let weights = try HybridPackedWeights.reusing(
      self.weights, operands.weights, op: Self.op,
      layout: .contiguous(rows: shape.outputChannels, columns: shape.gemmDepth), groups: shape.groups, channelAxis: 0)
    context.releaseAfterCopying(operands.weights)
    var scratch = ScratchLayout()
    quantizedInput = HybridInputScratch(
      runs: shape.batch, runLength: shape.batch > 0 ? input.elementCount / shape.batch : 0, scratch: &scratch)
    // The float epilogue `storeRows` calls, mapped with the node's other kernels.
    GeneratedHybridKernels.current?.reserve([.epilogue])
    let rowBytes = weights.panels.paddedDepth
    route = DotProductSums.current
    let tileRows = route.tileRows
    let pixels = shape.height.outputSize * shape.width.outputSize
    let rowTiles = max(1, (pixels + tileRows - 1) / tileRows)
    let tilesPerBlock = max(1, min(Self.blockBytes / max(rowBytes, 1), Self.maximumBlockRows) / tileRows)
    let chosen = GEMMPlan.cut(
      rows: pixels, columns: weights.groupChannels, depth: rowBytes, threadCount: context.threadCount,
      rowTile: tileRows, fewestRowBlocks: (rowTiles + tilesPerBlock - 1) / tilesPerBlock)
    cut = (chosen.rowBlocks, chosen.panelGroups, tileRows)
    blockRows = max(1, min(pixels, (rowTiles + chosen.rowBlocks - 1) / chosen.rowBlocks * tileRows))
    if !shape.readsInputInPlace {
      rowsOffset = scratch.reserve(bytes: try FloatOperands.checkedCount(
        [context.threadCount, blockRows, rowBytes], "\(Self.op) gathered rows"))
    }
    tileElements = HybridPackedWeights.tileElements(rows: blockRows)
    tileOffset = scratch.reserve(bytes: context.threadCount * tileElements * MemoryLayout<Int32>.stride)
    context.requestScratch(bytes: scratch.byteCount)
    perChannel = weights.hasDistinctScales || shape.groups > 1
    self.weights = weights
    self.shape = shape
    output.shape = shape.outputShape
  }

  func eval(_ context: EvalContext) throws {
    guard output.elementCount > 0 else { return }
    guard let shape, let weights, let quantizedInput, let scratch = context.scratch else {
      throw KernelError.invalid("\(Self.op) was not prepared")
    }
    let quantized = quantizedInput.quantize(
      input.pointer(as: Float.self), as: perChannel ? .asymmetric : .symmetric, scratch: scratch, context: context,
      unsigned: true)
    let biasPointer = operands.biasPointer
    let destination = output.pointer(as: Float.self)
    let gathered = (scratch + rowsOffset).assumingMemoryBound(to: Int8.self)
    let tiles = (scratch + tileOffset).assumingMemoryBound(to: Int32.self)
    let tileElements = self.tileElements
    let (activation, perChannel, blockRows, cut) = (activation, self.perChannel, self.blockRows, self.cut)
    let outputWidth = shape.width.outputSize
    let pixels = shape.height.outputSize * outputWidth
    let rowTiles = (pixels + cut.rowTile - 1) / cut.rowTile
    let rowBytes = weights.panels.paddedDepth
    let blocks = cut.rowBlocks &* cut.panelGroups
    let groups = shape.groups
    let route = GeneratedFloatKernels.areAllowed ? self.route : DotProductSums(generated: nil)
    // Unretained: the families live as long as the process, and a retained reference costs a
    // retain and a release around every tile's epilogue, on one reference count both threads write.
    let generated = GeneratedHybridKernels.current.map { Unmanaged.passUnretained($0) }
    ParallelWork.run(itemCount: shape.batch * groups * blocks, threadCount: context.threadCount) { item, worker in
      let image = item / (groups &* blocks)
      let group = (item / blocks) % groups
      let pixelRange = GEMMPlan.share(
        item % blocks / cut.panelGroups, of: cut.rowBlocks, units: rowTiles, unitSize: cut.rowTile, limit: pixels)
      let panels = GEMMPlan.share(
        item % cut.panelGroups, of: cut.panelGroups, units: weights.panelCount, unitSize: 1, limit: weights.panelCount)
      let firstPixel = pixelRange.lowerBound
      let rowCount = pixelRange.count
      let scale = quantized.scales[image]
      let offset = quantized.zeroPoints[image] &+ 128
      let imageValues = quantized.values + image &* quantized.runLength
      let channelOffset = group &* shape.groupInputChannels
      let rows: UnsafePointer<Int8>
      let lda: Int
      if shape.readsInputInPlace {
        rows = UnsafePointer(imageValues + (firstPixel &* shape.inputChannels &+ channelOffset))
        lda = shape.inputChannels
      } else {
        let workerRows = gathered + worker &* blockRows &* rowBytes
        for index in 0..<rowCount {
          let pixel = firstPixel &+ index
          gatherPatch(
            shape, image: imageValues, y: pixel / outputWidth, x: pixel % outputWidth, channelOffset: channelOffset,
            padding: Int8(truncatingIfNeeded: offset), into: workerRows + index &* rowBytes)
        }
        rows = UnsafePointer(workerRows)
        lda = rowBytes
      }
      let firstChannel = group &* weights.groupChannels
      let outputPixels = destination + (image &* pixels &+ firstPixel) &* shape.outputChannels
      weights.forEachTile(
        route: route, a: UnsafeRawPointer(rows).assumingMemoryBound(to: UInt8.self), lda: lda, rowCount: rowCount,
        group: group, panels: panels, tile: tiles + worker &* tileElements
      ) { firstColumn, columnCount, sums, sumsStride in
        let channel = firstChannel &+ firstColumn
        HybridTileColumns(weights: weights, firstChannel: channel, count: columnCount, bias: biasPointer).storeRows(
          rowCount, sums: sums, sumsStride: sumsStride, storedZeroPoint: offset, inputScale: scale,
          weightScaleFirst: perChannel, activation: activation, into: outputPixels + channel,
          outputStride: shape.outputChannels, generated: generated)
      }
    }
  }
}

/// The channels of one 16-column tile of a hybrid GEMM (`count` real ones from `firstChannel`), with
/// their weight sums, weight scales and bias loaded once for all the tile's rows.
private struct HybridTileColumns {
  let count: Int
  let channelSums: SIMD16<Int32>
  let weightScales: SIMD16<Float>
  let bias: SIMD16<Float>

  @inline(__always)
  init(weights: HybridPackedWeights, firstChannel: Int, count: Int, bias: UnsafePointer<Float>?) {
    self.count = count
    // The packed weights keep a panel's worth of readable values past the last channel.
    channelSums = loadVector(weights.channelSums + firstChannel)
    weightScales = loadVector(weights.channelScales + firstChannel)
    self.bias =
      bias.map { count == GEMMTile.columns ? loadVector($0 + firstChannel) : loadPartialVector($0 + firstChannel, count: count) }
      ?? SIMD16<Float>()
  }

  /// Writes the float outputs of one row of sums (Σ (q + 128) · w) to `output`: the sum less
  /// (z + 128) · Σ w, then LiteRT's float order (`HybridRescale`), lane for lane: per-channel
  /// CONV_2D (`weightScaleFirst`) (sum · weight scale) · input scale + bias, the others
  /// sum · (input scale · weight scale) + bias; then the activation.
  @inline(__always)
  func store(
    _ sums: UnsafePointer<Int32>, storedZeroPoint: Int32, inputScale: Float, weightScaleFirst: Bool,
    activation: FloatClampRange, into output: UnsafeMutablePointer<Float>
  ) {
    let corrected = SIMD16<Float>(converting: loadVector(sums) &- storedZeroPoint &* channelSums)
    let scaled =
      weightScaleFirst ? corrected * weightScales * inputScale : corrected * (inputScale * weightScales)
    storeVector(activation.apply(scaled + bias), output, lanes: count)
  }

  /// `store` for `rowCount` rows of sums (`sumsStride` apart) into rows of `output` (`outputStride`
  /// apart), all with the same input zero point and scale: by the generated epilogue when given
  /// and mapped (the same floats), else row by row in Swift. `generated` is held unretained (a
  /// process-lifetime family), so a call retains nothing.
  @inline(__always)
  func storeRows(
    _ rowCount: Int, sums: UnsafePointer<Int32>, sumsStride: Int, storedZeroPoint: Int32, inputScale: Float,
    weightScaleFirst: Bool, activation: FloatClampRange, into output: UnsafeMutablePointer<Float>, outputStride: Int,
    generated: Unmanaged<GeneratedHybridKernels>?
  ) {
    if let generated,
      generated._withUnsafeGuaranteedRef({
        $0.storeFloats(
          sums: sums, sumsStride: sumsStride, rows: rowCount, correction: storedZeroPoint &* channelSums,
          firstScales: weightScaleFirst ? weightScales : inputScale * weightScales,
          secondScale: weightScaleFirst ? inputScale : 1, bias: bias, clamp: activation, lanes: count, output: output,
          outputStride: outputStride)
      })
    {
      return
    }
    for index in 0..<rowCount {
      store(
        sums + index &* sumsStride, storedZeroPoint: storedZeroPoint, inputScale: inputScale,
        weightScaleFirst: weightScaleFirst, activation: activation, into: output + index &* outputStride)
    }
  }
}

/// Copies the filter window of output pixel (`y`, `x`) over one group's channels from a quantized
/// image into `patch` (in the filter's `[KH, KW, C / groups]` order), writing `padding` (the input
/// zero point as stored, whose products the channel sums take out again) for taps outside the image.
private func gatherPatch(
  _ shape: ConvolutionShape, image: UnsafePointer<Int8>, y: Int, x: Int, channelOffset: Int, padding: Int8,
  into patch: UnsafeMutablePointer<Int8>
) {
  let channels = shape.groupInputChannels
  let originY = shape.height.inputOrigin(y)
  let originX = shape.width.inputOrigin(x)
  var destination = patch
  for ky in 0..<shape.height.filterSize {
    let inputY = originY &+ ky &* shape.height.dilation
    let rowInside = inputY >= 0 && inputY < shape.height.inputSize
    for kx in 0..<shape.width.filterSize {
      let inputX = originX &+ kx &* shape.width.dilation
      if rowInside && inputX >= 0 && inputX < shape.width.inputSize {
        destination.update(
          from: image + ((inputY &* shape.width.inputSize &+ inputX) &* shape.inputChannels &+ channelOffset),
          count: channels)
      } else {
        destination.update(repeating: padding, count: channels)
      }
      destination += channels
    }
  }
}

/// DEPTHWISE_CONV_2D with float input and int8 filter `[1, KH, KW, C · multiplier]`, optional float bias.
///
/// Each image is quantized (asymmetric, stored unsigned as q + 128) and copied into a padded image:
/// the input's padding around it holds the stored zero point z + 128, every channel is repeated
/// `multiplier` times and the channels are padded to whole 16-lane blocks. Every output then sums
/// all its taps without bounds checks, four pixels sharing each weight load: S = Σ u · w over all
/// taps, and S − (z + 128) · Σ w (the filter's sum over all taps) is LiteRT's Σ (q − z) · w over
/// the taps inside the input, in Int32 as there. It becomes float per channel as
/// sum · (image scale · weight scale) + bias.
final class HybridDepthwiseConv2DKernel: Kernel {
  private static let op = "DEPTHWISE_CONV_2D"
  private let operands: HybridOperands
  private var input: RuntimeTensor { operands.input }
  private var output: RuntimeTensor { operands.output }
  private let options: DepthwiseConv2DOptions
  private let activation: FloatClampRange
  private var shape: DepthwiseShape?
  private var filter: HybridDepthwiseFilter?
  private var quantizedInput: HybridInputScratch?
  /// The padded image's extent: rows, pixels per row (channels per pixel are `filter.paddedChannels`).
  private var paddedExtent = (height: 0, width: 0)
  /// Offset of the padded images in the scratch memory.
  private var paddedOffset = 0

  init(node: Node) throws {
    operands = try HybridOperands(node, op: Self.op, weightTypes: [.int8])
    options = try FloatOperands.options(of: node, op: Self.op, defaults: DepthwiseConv2DOptions()) {
      if case .depthwiseConv2DOptions(let options) = $0 { options } else { nil }
    }
    activation = try FloatClampRange(options.fusedActivationFunction, op: Self.op)
  }

  func prepare(_ context: inout PrepareContext) throws {
    let shape = try DepthwiseShape(
      depthwiseInput: input, filter: operands.weights, bias: operands.bias, options: options, op: Self.op)
    let filter = try HybridDepthwiseFilter.reusing(
      self.filter, operands.weights, op: Self.op, taps: shape.height.filterSize * shape.width.filterSize,
      channels: shape.outputChannels)
    context.releaseAfterCopying(operands.weights)
    var scratch = ScratchLayout()
    let imageSize = shape.batch > 0 ? input.elementCount / shape.batch : 0
    quantizedInput = HybridInputScratch(runs: shape.batch, runLength: imageSize, scratch: &scratch)
    /// Input extent that covers every tap of every output along one axis.
    func paddedSize(_ axis: WindowAxis) -> Int {
      let span = axis.outputSize == 0 ? 0 : (axis.outputSize - 1) * axis.stride + (axis.filterSize - 1) * axis.dilation + 1
      return max(axis.paddingBefore + axis.inputSize, span)
    }
    paddedExtent = (paddedSize(shape.height), paddedSize(shape.width))
    paddedOffset = scratch.reserve(
      bytes: try FloatOperands.checkedCount(
        [shape.batch, paddedExtent.height, paddedExtent.width, filter.paddedChannels], "\(Self.op) padded input"))
    context.requestScratch(bytes: scratch.byteCount)
    self.filter = filter
    self.shape = shape
    output.shape = shape.outputShape
  }

  func eval(_ context: EvalContext) throws {
    guard output.elementCount > 0 else { return }
    guard let shape, let filter, let quantizedInput, let scratch = context.scratch else {
      throw KernelError.invalid("\(Self.op) was not prepared")
    }
    let quantized = quantizedInput.quantize(
      input.pointer(as: Float.self), as: .asymmetric, scratch: scratch, context: context, unsigned: true)
    let padded = (scratch + paddedOffset).assumingMemoryBound(to: UInt8.self)
    fillPaddedImages(padded, from: quantized, shape: shape, channelStride: filter.paddedChannels, context: context)
    let stride = filter.paddedChannels
    let paddedRow = paddedExtent.width &* stride
    let imageBytes = paddedExtent.height &* paddedRow
    let channels = shape.outputChannels
    let (height, width) = (shape.height, shape.width)
    let pixelStep = width.stride &* stride
    let tapStep = width.dilation &* stride
    let tapRowStep = height.dilation &* paddedRow
    let biasPointer = operands.biasPointer
    let destination = output.pointer(as: Float.self)
    let activation = activation
    ChannelWindowRows.forEachRowAndChannelBlocks(
      rows: shape.batch * height.outputSize, channelBlocks: stride / GEMMTile.columns,
      workPerRow: ChannelWindowRows.work(width.outputSize, channels, height.filterSize, width.filterSize),
      threadCount: context.threadCount
    ) { row, blocks in
      // Wrapping index arithmetic: every offset stays inside the padded image built for this shape.
      let image = row / height.outputSize
      let firstRow = UnsafePointer(
        padded + (image &* imageBytes &+ (row % height.outputSize) &* height.stride &* paddedRow))
      let outputRow = destination + row &* width.outputSize &* channels
      let inputScale = SIMD16<Float>(repeating: quantized.scales[image])
      let storedZeroPoint = SIMD16<Int32>(repeating: quantized.zeroPoints[image] &+ 128)
      var channel = blocks.lowerBound &* GEMMTile.columns
      let endChannel = min(channels, blocks.upperBound &* GEMMTile.columns)
      while channel < endChannel {
        let lanes = min(GEMMTile.columns, channels &- channel)
        let scale = inputScale * loadVector(filter.channelScales + channel)
        let correction = storedZeroPoint &* loadVector(filter.tapSums + channel)
        let bias =
          biasPointer.map { lanes == GEMMTile.columns ? loadVector($0 + channel) : loadPartialVector($0 + channel, count: lanes) }
          ?? SIMD16<Float>()
        @inline(__always) func store(_ sums: SIMD16<Int32>, pixel: Int) {
          let value = SIMD16<Float>(converting: sums &- correction) * scale + bias
          storeVector(activation.apply(value), outputRow + (pixel &* channels &+ channel), lanes: lanes)
        }
        var x = 0
        while x < width.outputSize {
          // A group past the row's end repeats its last pixel and stores only the real ones.
          let count = min(4, width.outputSize &- x)
          let (p0, p1, p2, p3) = fourPixels(from: firstRow + (x &* pixelStep &+ channel), count: count, step: pixelStep)
          var sums = (SIMD16<Int32>(), SIMD16<Int32>(), SIMD16<Int32>(), SIMD16<Int32>())
          var weights = filter.weights + channel
          var tapRow = 0
          for _ in 0..<height.filterSize {
            var tap = tapRow
            for _ in 0..<width.filterSize {
              let w = SIMD16<Int32>(widening: loadVector(weights))
              sums.0 &+= SIMD16<Int32>(widening: loadVector(p0 + tap)) &* w
              sums.1 &+= SIMD16<Int32>(widening: loadVector(p1 + tap)) &* w
              sums.2 &+= SIMD16<Int32>(widening: loadVector(p2 + tap)) &* w
              sums.3 &+= SIMD16<Int32>(widening: loadVector(p3 + tap)) &* w
              tap &+= tapStep
              weights += stride
            }
            tapRow &+= tapRowStep
          }
          store(sums.0, pixel: x)
          if count > 1 { store(sums.1, pixel: x &+ 1) }
          if count > 2 { store(sums.2, pixel: x &+ 2) }
          if count > 3 { store(sums.3, pixel: x &+ 3) }
          x &+= 4
        }
        channel &+= GEMMTile.columns
      }
    }
  }

  /// Copies every quantized image into its padded image (`channelStride` bytes per pixel): the
  /// stored zero point outside the input, each channel repeated `multiplier` times inside it.
  private func fillPaddedImages(
    _ padded: UnsafeMutablePointer<UInt8>, from quantized: HybridQuantizedInput, shape: DepthwiseShape,
    channelStride: Int, context: EvalContext
  ) {
    let (height, width) = (shape.height, shape.width)
    let paddedRow = paddedExtent.width &* channelStride
    let imageBytes = paddedExtent.height &* paddedRow
    let pixelBytes = shape.inputChannels
    let values = UnsafeRawPointer(quantized.values).assumingMemoryBound(to: UInt8.self)
    context.parallelFor(shape.batch * paddedExtent.height) { paddedY in
      let image = paddedY / paddedExtent.height
      let padding = UInt8(truncatingIfNeeded: quantized.zeroPoints[image] &+ 128)
      let row = padded + (image &* imageBytes &+ (paddedY % paddedExtent.height) &* paddedRow)
      let inputY = paddedY % paddedExtent.height &- height.paddingBefore
      guard inputY >= 0, inputY < height.inputSize else {
        row.update(repeating: padding, count: paddedRow)
        return
      }
      let inside = row + width.paddingBefore &* channelStride
      row.update(repeating: padding, count: width.paddingBefore &* channelStride)
      let afterInput = inside + width.inputSize &* channelStride
      afterInput.update(repeating: padding, count: (row + paddedRow) - afterInput)
      let source = values + (image &* height.inputSize &+ inputY) &* width.inputSize &* pixelBytes
      if shape.multiplier == 1 && channelStride == pixelBytes {
        inside.update(from: source, count: width.inputSize &* pixelBytes)
        return
      }
      for x in 0..<width.inputSize {
        let from = source + x &* pixelBytes
        let to = inside + x &* channelStride
        if shape.multiplier == 1 {
          to.update(from: from, count: pixelBytes)
        } else {
          for channel in 0..<shape.outputChannels { to[channel] = from[channel / shape.multiplier] }
        }
      }
    }
  }
}

/// The constant filter of a hybrid DEPTHWISE_CONV_2D, read once: its int8 weights widened to 16
/// bits in `[tap][channel]` order with the channels padded with zero weights to whole 16-lane
/// blocks, and per (padded) channel the sum of its weights over all taps and its scale.
final class HybridDepthwiseFilter {
  /// Channels per tap: a multiple of 16.
  let paddedChannels: Int
  /// `taps × paddedChannels` weights.
  let weights: UnsafeMutablePointer<Int16>
  /// Σ w over all taps of every padded channel.
  let tapSums: UnsafeMutablePointer<Int32>
  /// The weight scale of every padded channel (0 past the real channels).
  let channelScales: UnsafeMutablePointer<Float>
  /// The tensor memory and extent the filter was read from.
  private let source: (data: UnsafeMutableRawPointer, taps: Int, channels: Int)

  /// `existing` when it was read from the same memory of `tensor` with the same extent, else the
  /// filter read anew.
  static func reusing(
    _ existing: HybridDepthwiseFilter?, _ tensor: RuntimeTensor, op: String, taps: Int, channels: Int
  ) throws -> HybridDepthwiseFilter {
    if let existing, tensor.isConstant, existing.source.data == tensor.data, existing.source.taps == taps,
      existing.source.channels == channels
    {
      return existing
    }
    return try HybridDepthwiseFilter(tensor, op: op, taps: taps, channels: channels)
  }

  /// Reads and checks `tensor` (`[1, KH, KW, channels]` int8, one scale or one per channel on axis 3).
  init(_ tensor: RuntimeTensor, op: String, taps: Int, channels: Int) throws {
    let (data, scales) = try HybridWeights.validated(tensor, op: op, channels: channels, channelAxis: 3)
    let padded = PanelPacking.panelCount(columns: channels) * GEMMTile.columns
    paddedChannels = padded
    weights = .allocate(capacity: max(taps * padded, 1))
    weights.initialize(repeating: 0, count: max(taps * padded, 1))
    tapSums = .allocate(capacity: max(padded, 1))
    tapSums.initialize(repeating: 0, count: max(padded, 1))
    channelScales = .allocate(capacity: max(padded, 1))
    channelScales.initialize(repeating: 0, count: max(padded, 1))
    let values = data.assumingMemoryBound(to: Int8.self)
    for tap in 0..<taps {
      for channel in 0..<channels {
        let weight = values[tap * channels + channel]
        weights[tap * padded + channel] = Int16(weight)
        tapSums[channel] &+= Int32(weight)
      }
    }
    for channel in 0..<channels { channelScales[channel] = scales.count == 1 ? scales[0] : scales[channel] }
    source = (data, taps, channels)
  }

  deinit {
    weights.deallocate()
    tapSums.deallocate()
    channelScales.deallocate()
  }
}

extension SIMD16 where Scalar == Float {
  /// The lanes of `values` as floats (rounded to nearest), lane by lane: LLVM emits `cvtdq2ps`,
  /// where the generic `init(_:)` between SIMD types is an out-of-line call.
  @inline(__always)
  init(converting values: SIMD16<Int32>) {
    self.init()
    for lane in 0..<16 { self[lane] = Float(values[lane]) }
  }
}
