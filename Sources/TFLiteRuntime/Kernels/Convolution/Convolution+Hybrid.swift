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
// where the CPU has them), DEPTHWISE_CONV_2D channel by channel in Swift SIMD.

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
  private var units = 0

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
    var scratch = ScratchLayout()
    quantizedInput = HybridInputScratch(runs: rows, runLength: depth, scratch: &scratch)
    tileOffset = scratch.reserve(bytes: context.threadCount * Self.tileRows * GEMMTile.columns * MemoryLayout<Int32>.stride)
    context.requestScratch(bytes: scratch.byteCount)
    self.units = units
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
    let route = DotProductSums.current
    let rowBlocks = (rows + Self.tileRows - 1) / Self.tileRows
    let panelBlocks = (weights.panelCount + Self.panelBlock - 1) / Self.panelBlock
    let tiles = (scratch + tileOffset).assumingMemoryBound(to: Int32.self)
    let depth = quantized.runLength
    ParallelWork.run(itemCount: rowBlocks * panelBlocks, threadCount: context.threadCount) { item, worker in
      let firstRow = (item / panelBlocks) &* Self.tileRows
      let rowCount = min(Self.tileRows, rows &- firstRow)
      let firstPanel = (item % panelBlocks) &* Self.panelBlock
      weights.forEachTile(
        route: route, a: UnsafeRawPointer(quantized.values + firstRow &* depth).assumingMemoryBound(to: UInt8.self),
        lda: depth, rowCount: rowCount, group: 0, panels: firstPanel..<min(weights.panelCount, firstPanel &+ Self.panelBlock),
        tile: tiles + worker &* Self.tileRows &* GEMMTile.columns
      ) { firstUnit, unitCount, sums in
        for index in 0..<rowCount {
          let row = firstRow &+ index
          let scale = quantized.scales[row]
          let offset = quantized.zeroPoints[row] &+ 128
          let outputRow = destination + row &* units
          let rowSums = sums + index &* GEMMTile.columns
          for lane in 0..<unitCount {
            let unit = firstUnit &+ lane
            let value = HybridRescale.combinedScale(
              rowSums[lane] &- offset &* weights.channelSums[unit], inputScale: scale,
              weightScale: weights.channelScales[unit], bias: hybridBias(biasPointer, unit))
            outputRow[unit] = activation.apply(value)
          }
        }
      }
    }
  }
}

/// CONV_2D with float input and int8 / int4 filter `[O, KH, KW, C / groups]`, optional float bias `[O]`.
/// Each work item is a block of output pixels of one image and group: their filter windows are
/// gathered into rows (or read in place for 1×1 stride-1 filters) and multiplied by the packed
/// filter (`HybridPackedWeights`).
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
  /// Output pixels per work item.
  private var blockRows = 1
  /// Offset of the per-worker gathered rows (unused for in-place 1×1 filters).
  private var rowsOffset = 0
  /// Offset of the per-worker tiles of sums.
  private var tileOffset = 0

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
    var scratch = ScratchLayout()
    quantizedInput = HybridInputScratch(
      runs: shape.batch, runLength: shape.batch > 0 ? input.elementCount / shape.batch : 0, scratch: &scratch)
    let rowBytes = weights.panels.paddedDepth
    let tileRows = DotProductSums.current.tileRows
    let pixels = shape.height.outputSize * shape.width.outputSize
    blockRows = min(
      max(tileRows, Self.blockBytes / max(rowBytes, 1) / tileRows * tileRows), Self.maximumBlockRows,
      max(1, pixels))
    if !shape.readsInputInPlace {
      rowsOffset = scratch.reserve(bytes: try FloatOperands.checkedCount(
        [context.threadCount, blockRows, rowBytes], "\(Self.op) gathered rows"))
    }
    tileOffset = scratch.reserve(bytes: context.threadCount * blockRows * GEMMTile.columns * MemoryLayout<Int32>.stride)
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
    let (activation, perChannel, blockRows) = (activation, self.perChannel, self.blockRows)
    let outputWidth = shape.width.outputSize
    let pixels = shape.height.outputSize * outputWidth
    let rowBytes = weights.panels.paddedDepth
    let blocks = (pixels + blockRows - 1) / blockRows
    let groups = shape.groups
    let route = DotProductSums.current
    ParallelWork.run(itemCount: shape.batch * groups * blocks, threadCount: context.threadCount) { item, worker in
      let image = item / (groups &* blocks)
      let group = (item / blocks) % groups
      let firstPixel = (item % blocks) &* blockRows
      let rowCount = min(blockRows, pixels &- firstPixel)
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
        group: group, panels: 0..<weights.panelCount, tile: tiles + worker &* blockRows &* GEMMTile.columns
      ) { firstColumn, columnCount, sums in
        for index in 0..<rowCount {
          let outputPixel = outputPixels + index &* shape.outputChannels
          let pixelSums = sums + index &* GEMMTile.columns
          for lane in 0..<columnCount {
            let channel = firstChannel &+ firstColumn &+ lane
            let corrected = pixelSums[lane] &- offset &* weights.channelSums[channel]
            let bias = hybridBias(biasPointer, channel)
            let weightScale = weights.channelScales[channel]
            let value =
              perChannel
              ? HybridRescale.weightScaleFirst(corrected, inputScale: scale, weightScale: weightScale, bias: bias)
              : HybridRescale.combinedScale(corrected, inputScale: scale, weightScale: weightScale, bias: bias)
            outputPixel[channel] = activation.apply(value)
          }
        }
      }
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
final class HybridDepthwiseConv2DKernel: Kernel {
  private static let op = "DEPTHWISE_CONV_2D"
  private let operands: HybridOperands
  private var input: RuntimeTensor { operands.input }
  private var output: RuntimeTensor { operands.output }
  private let options: DepthwiseConv2DOptions
  private let activation: FloatClampRange
  private var shape: DepthwiseShape?
  private var weights: HybridWeights?
  private var quantizedInput: HybridInputScratch?
  /// Offset of the input with every channel repeated `multiplier` times (when the multiplier is above 1).
  private var expandedOffset: Int?

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
    // The filter stays in its `[tap][channel]` order: the products run over adjacent channels.
    weights = try HybridWeights.reusing(
      weights, operands.weights, op: Self.op,
      layout: .contiguous(rows: shape.height.filterSize * shape.width.filterSize, columns: shape.outputChannels),
      channels: shape.outputChannels, channelAxis: 3)
    var scratch = ScratchLayout()
    let imageSize = shape.batch > 0 ? input.elementCount / shape.batch : 0
    quantizedInput = HybridInputScratch(runs: shape.batch, runLength: imageSize, scratch: &scratch)
    if shape.multiplier > 1 {
      let expandedCount = try FloatOperands.checkedCount(
        [shape.batch, shape.height.inputSize, shape.width.inputSize, shape.outputChannels],
        "\(Self.op) expanded input")
      expandedOffset = scratch.reserve(bytes: expandedCount)
    } else {
      expandedOffset = nil
    }
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
    let channels = shape.outputChannels
    // With a multiplier above 1, every input channel is first repeated so that output channel c
    // reads input element c.
    let source: UnsafePointer<Int8>
    if let expandedOffset {
      let expanded = (scratch + expandedOffset).assumingMemoryBound(to: Int8.self)
      let pixels = quantizedInput.runs * shape.height.inputSize * shape.width.inputSize
      for pixel in 0..<pixels {
        var to = expanded + pixel &* channels
        for channel in 0..<shape.inputChannels {
          to.update(repeating: quantized.values[pixel &* shape.inputChannels &+ channel], count: shape.multiplier)
          to += shape.multiplier
        }
      }
      source = UnsafePointer(expanded)
    } else {
      source = UnsafePointer(quantized.values)
    }
    let imageStride = shape.height.inputSize * shape.width.inputSize * channels
    let biasPointer = operands.biasPointer
    let destination = output.pointer(as: Float.self)
    let activation = activation
    let outputHeight = shape.height.outputSize
    let outputWidth = shape.width.outputSize
    context.parallelFor(shape.batch * outputHeight) { row in
      let image = row / outputHeight
      let y = row % outputHeight
      let scale = quantized.scales[image]
      let zeroPoint = quantized.zeroPoints[image]
      let imageValues = source + image &* imageStride
      let (firstTapY, endTapY) = shape.height.validTaps(y)
      for x in 0..<outputWidth {
        let (firstTapX, endTapX) = shape.width.validTaps(x)
        let originY = shape.height.inputOrigin(y)
        let originX = shape.width.inputOrigin(x)
        let outputPixel = destination + (row &* outputWidth &+ x) &* channels
        /// Input and filter values of tap (ky, kx) from `channel` on.
        func tap(_ ky: Int, _ kx: Int, _ channel: Int) -> (input: UnsafePointer<Int8>, filter: UnsafePointer<Int8>) {
          let inputY = originY &+ ky &* shape.height.dilation
          let inputX = originX &+ kx &* shape.width.dilation
          return (
            imageValues + ((inputY &* shape.width.inputSize &+ inputX) &* channels &+ channel),
            UnsafePointer(weights.values + ((ky &* shape.width.filterSize &+ kx) &* channels &+ channel))
          )
        }
        var channel = 0
        let zeroPoints = SIMD16<Int16>(repeating: Int16(truncatingIfNeeded: zeroPoint))
        while channel &+ 16 <= channels {
          var sums = SIMD16<Int32>()
          for ky in firstTapY..<endTapY {
            for kx in firstTapX..<endTapX {
              let (values, filter) = tap(ky, kx, channel)
              HybridProducts.accumulateChannels(&sums, input: values, zeroPoint: zeroPoints, weights: filter)
            }
          }
          for lane in 0..<16 {
            let index = channel &+ lane
            let value = HybridRescale.combinedScale(
              sums[lane], inputScale: scale, weightScale: weights.channelScales[index],
              bias: hybridBias(biasPointer, index))
            outputPixel[index] = activation.apply(value)
          }
          channel &+= 16
        }
        while channel < channels {
          var sum: Int32 = 0
          for ky in firstTapY..<endTapY {
            for kx in firstTapX..<endTapX {
              let (values, filter) = tap(ky, kx, channel)
              sum &+= Int32(filter.pointee) &* (Int32(values.pointee) &- zeroPoint)
            }
          }
          let value = HybridRescale.combinedScale(
            sum, inputScale: scale, weightScale: weights.channelScales[channel], bias: hybridBias(biasPointer, channel))
          outputPixel[channel] = activation.apply(value)
          channel &+= 1
        }
      }
    }
  }
}
