// The four-tap route of the 8-bit DEPTHWISE_CONV_2D (`ByteDepthwiseConvolution`), on CPUs with
// AVX512-VNNI and AVX512_VBMI: the generated kernel (`QuadTapDepthwiseKernelGenerator`) adds four
// taps of a channel per `vpdpbusd` lane over a window laid out channel-block-first, and
// requantizes in registers. The sums are the pair route's exactly (Σ u · (w − weight zero point)
// over every tap, padding included, wrapping in Int32, with the input offset's share in the bias),
// so the bytes are the same.
//
// The window keeps one slot per filter row plus a row of padding: input row iy lives in slot
// iy mod filter rows, so an output row reuses the slots earlier rows filled and each input row is
// copied (sign-flipped, channel-block-first) once per thread's range of rows, not once per filter
// row. Columns outside the input, rows outside it and the lanes past the last channel hold the
// unsigned input zero point from the start and are never written again.

import TFLiteLinearAlgebra

/// What the four-tap route of a `ByteDepthwiseConvolution` needs: its kernel, found (and generated
/// and reserved on the process's first request for its shape) at prepare so that a run loads it
/// from here, mapped with the node's other reserved kernels at the end of `allocateTensors()`; its
/// geometry and its weights packed per 16-channel block as `[filter row][quad][channel][tap]`
/// signed bytes (then, when `correctsWeights`, 16 Int32 corrections k_c). The kernel sums every
/// column of every quad, so a tap past the filter's width has weight 0, stored as 0 − k_c. A class,
/// so that a run binds it without copying (and retaining) its kernel and weights.
final class QuadTapDepthwise {
  /// The generated kernel storing the convolution's output type.
  let kernel: QuadTapDepthwiseKernel
  /// Filter rows.
  let filterRows: Int
  /// The packed weights, `blockWeightBytes` (a multiple of 64) per block, from a cache line on.
  let weights: CacheLineValues<UInt8>
  /// 16-channel blocks.
  let blocks: Int
  /// Columns of a window row: every column any output pixel's quads read.
  let windowColumns: Int

  /// The route for `shape` with `weights` (`[tap][channel]`, minus their zero points) storing
  /// `output`, on a kernel of `kernels`; nil when it does not apply: a dilation, a filter or stride
  /// the generator does not take, or weights that no per-channel k_c brings into a signed byte. (A
  /// kernel the OS or the code budget refuses to map leaves the convolution on the tap-pair route.)
  init?(
    _ shape: DepthwiseShape, weights: [Int32], paddedWidth: Int, output: RequantizedOutput,
    kernels: GeneratedQuadTapDepthwiseKernels
  ) {
    let height = shape.height
    let width = shape.width
    let quads = (width.filterSize + 3) / 4
    guard height.dilation == 1, width.dilation == 1 else { return nil }
    let channels = shape.outputChannels
    let taps = height.filterSize * width.filterSize
    // k_c brings the channel's weights and the zero weight of the taps past the filter's width
    // (stored as −k_c, so that k_c · u cancels) into a signed byte.
    var corrections = [Int32](repeating: 0, count: channels)
    for channel in 0..<channels {
      let values = (0..<taps).map { weights[$0 * channels + channel] }
      guard let low = values.min().map({ min($0, 0) }), let high = values.max().map({ max($0, 0) }) else { return nil }
      if low >= Int32(Int8.min) && high <= Int32(Int8.max) { continue }
      guard high - low <= 255 else { return nil }
      corrections[channel] = low - Int32(Int8.min)
    }
    let correctsWeights = corrections.contains { $0 != 0 }
    let probe = QuadTapDepthwiseKernelGenerator.Shape(
      filterRows: height.filterSize, quadsPerRow: quads, stride: width.stride, output: output, correctsWeights: correctsWeights)
    guard probe.isGenerated else { return nil }
    let kernel = kernels.kernel(probe)
    let block = DepthwiseKernelGenerator.blockChannels
    let blocks = (channels + block - 1) / block
    let tapsPerQuad = QuadTapDepthwiseKernelGenerator.tapsPerQuad
    var packed = [UInt8](repeating: 0, count: blocks * probe.blockWeightBytes)
    for channel in 0..<channels {
      let (blockIndex, lane) = channel.quotientAndRemainder(dividingBy: block)
      let blockStart = blockIndex * probe.blockWeightBytes
      for ky in 0..<height.filterSize {
        for kx in 0..<(quads * tapsPerQuad) {
          let (quad, tap) = kx.quotientAndRemainder(dividingBy: tapsPerQuad)
          let weight = kx < width.filterSize ? weights[(ky * width.filterSize + kx) * channels + channel] : 0
          packed[blockStart + ((ky * quads + quad) * block + lane) * tapsPerQuad + tap] =
            UInt8(bitPattern: Int8(weight - corrections[channel]))
        }
      }
      if correctsWeights {
        let correction = UInt32(bitPattern: corrections[channel])
        for byte in 0..<4 {
          packed[blockStart + probe.weightVectors * 64 + lane * 4 + byte] = UInt8(truncatingIfNeeded: correction >> (8 * byte))
        }
      }
    }
    self.kernel = kernel
    filterRows = height.filterSize
    self.weights = CacheLineValues(copying: packed)
    self.blocks = blocks
    windowColumns = max(paddedWidth, max(width.outputSize - 1, 0) * width.stride + quads * tapsPerQuad)
  }

  /// Bytes of one window row (every block).
  var windowRowBytes: Int { blocks * windowColumns * DepthwiseKernelGenerator.blockChannels }

  /// Bytes of a thread's window: a slot per filter row and the padding row.
  var windowBytes: Int { (filterRows + 1) * windowRowBytes }
}

extension ByteDepthwiseConvolution {
  /// The convolution on the four-tap route's kernel, for its output type: each thread's range of
  /// output rows keeps one window (see the file header), and each output row is one kernel call
  /// over every 16-channel block.
  func convolveQuadTaps<Output: QuantizedInteger>(
    _ quadTaps: QuadTapDepthwise, input: UnsafePointer<UInt8>,
    output: UnsafeMutablePointer<Output>, threadCount: Int, requantization: UnsafeRawPointer, lanes: UnsafeRawPointer
  ) {
    let height = shape.height
    let width = shape.width
    let channels = shape.outputChannels
    let filterRows = quadTaps.filterRows
    let rowBytes = quadTaps.windowRowBytes
    let block = DepthwiseKernelGenerator.blockChannels
    let weights = UnsafeRawPointer(quadTaps.weights.base)
    ChannelWindowRows.forEachRowRange(
      rows: shape.batch * height.outputSize,
      workPerRow: workPerRow, threadCount: threadCount, setupRows: filterRows
    ) { range in
      // The window (several KiB) in the thread's workspace: a temporary allocation that large is a malloc.
      ThreadWorkspace.with(byteCount: quadTaps.windowBytes) { windowMemory in
        withUnsafeTemporaryAllocation(of: Int.self, capacity: filterRows) { slotRows in
          withUnsafeTemporaryAllocation(of: UnsafeRawPointer.self, capacity: filterRows) { rowPointers in
            guard let rowsFilled = slotRows.baseAddress, let rows = rowPointers.baseAddress else { return }
            let window = windowMemory.bindMemory(to: UInt8.self, capacity: quadTaps.windowBytes)
            window.initialize(repeating: paddingValue, count: quadTaps.windowBytes)
            rowsFilled.initialize(repeating: -1, count: filterRows)
            let paddingRow = UnsafeRawPointer(window + filterRows &* rowBytes)
            for row in range {
              let image = row / height.outputSize
              let firstInputY = (row % height.outputSize) &* height.stride &- height.paddingBefore
              for tapRow in 0..<filterRows {
                let inputY = firstInputY &+ tapRow
                guard inputY >= 0, inputY < height.inputSize else {
                  (rows + tapRow).initialize(to: paddingRow)
                  continue
                }
                let slot = inputY % filterRows
                let slotRow = window + slot &* rowBytes
                let imageRow = image &* height.inputSize &+ inputY
                if rowsFilled[slot] != imageRow {
                  fillQuadTapRow(slotRow, quadTaps: quadTaps, from: input + imageRow &* width.inputSize &* shape.inputChannels)
                  rowsFilled[slot] = imageRow
                }
                (rows + tapRow).initialize(to: UnsafeRawPointer(slotRow))
              }
              var arguments = QuadTapDepthwiseArguments(
                rows: UnsafePointer(rows), rowBlockBytes: quadTaps.windowColumns &* block, weights: weights,
                constants: quadTaps.kernel.constants, output: UnsafeMutableRawPointer(output + row &* width.outputSize &* channels),
                outputPixelBytes: channels, pixelCount: width.outputSize, blockCount: quadTaps.blocks,
                requantization: requantization, requantizationLanes: lanes,
                lastBlockLanes: channels &- (quadTaps.blocks &- 1) &* block)
              quadTaps.kernel.run(&arguments)
            }
          }
        }
      }
    }
  }

  /// Copies one input row into a window slot, channel-block-first (`[block][column][16]`), in the
  /// unsigned form, at the columns of the input (after the padding before it): every output
  /// channel's byte (input channel / multiplier), the lanes past the last channel left alone.
  /// Without a channel multiplier, block after block down the row (pixel-major, the block loop's
  /// set-up and the last block's test ran once per pixel: 7 % of mobilenet_mini_int8's invoke).
  private func fillQuadTapRow(_ slot: UnsafeMutablePointer<UInt8>, quadTaps: QuadTapDepthwise, from source: UnsafePointer<UInt8>) {
    let block = DepthwiseKernelGenerator.blockChannels
    let pixelBytes = shape.inputChannels
    let channels = shape.outputChannels
    let inputWidth = shape.width.inputSize
    let blockBytes = quadTaps.windowColumns &* block
    let first = slot + shape.width.paddingBefore &* block
    guard shape.multiplier == 1 else {
      for x in 0..<inputWidth {
        let pixel = source + x &* pixelBytes
        let column = first + x &* block
        for channel in 0..<channels {
          column[(channel / block) &* blockBytes &+ channel % block] = pixel[channel / shape.multiplier] ^ signFlip
        }
      }
      return
    }
    // Block after block down the row: each pixel's bytes of the block are one run (16 bytes, or
    // the last block's lanes), the run length's case chosen once per block.
    let flip = UInt64(signFlip) &* 0x0101_0101_0101_0101
    for blockStart in Swift.stride(from: 0, to: channels, by: block) {
      copyRuns(
        inputWidth, bytes: min(block, channels &- blockStart), from: source + blockStart, stride: pixelBytes,
        to: first + blockStart / block &* blockBytes, stride: block, flip: flip)
    }
  }
}
