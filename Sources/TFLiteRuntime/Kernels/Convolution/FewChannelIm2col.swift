// The im2col gather of an 8-bit convolution over few input channels (1–4, no groups, no
// dilation): the first layer of image networks (3×3 stride 2 over RGB in MobileNet and
// EfficientNet, 7×7 stride 2 in ResNet). Its GEMM rows are short (27 bytes for 3×3×3, 147 for
// 7×7×3) and there are many of them (one per output pixel), so the generic gather's work per row
// (tap ranges, a branch per tap, one copy per tap) cost more than the dot products: 46 % of
// mobilenet_v1_mini_uint8_legacy's invoke went to its 3×3×3 first layer at 9 GOP/s.
//
// This gather walks the block's pixels one output row at a time. Within a row, filter row ky of
// pixel x is one contiguous run of filterWidth · channels input bytes (the taps of one filter row
// over all channels), copied with a few overlapping word moves of a length fixed at prepare; only
// the pixels at the left and right edges, whose taps leave the input, split their run into padding
// and copied bytes. A filter row above or below the input is padding for the whole output row.
// Padding holds the unsigned input zero point (it adds nothing, as in LiteRT, once the input
// offset is folded into the bias); so does the depth padding past the real depth, which meets
// zero weights. The bytes are the generic gather's (`UnsignedIm2colLeftOperand`), so every route
// reading them (generated tiles, the row-corrected legacy uint8 route, the Swift panels) gives
// the same sums.

import TFLiteLinearAlgebra

/// The im2col view of an 8-bit convolution's input over few channels in the GEMM's unsigned form
/// (see the file comment): row = output pixel, depth = (ky, kx, channel), padded to the packed
/// weights' depth.
struct FewChannelIm2colLeftOperand: GEMMLeftOperand {
  /// The raw NHWC input.
  let input: UnsafeRawPointer
  /// The convolution.
  let shape: ConvolutionShape
  /// XOR turning raw bytes into the unsigned form (eight bytes at once).
  let signFlip: UInt64
  /// The unsigned input zero point in all eight bytes.
  let padding: UInt64

  /// Most input channels this gather takes.
  static let mostChannels = 4

  /// True when `shape` is a convolution this gather takes: at most `mostChannels` input channels,
  /// one group, no dilation, a filter larger than one pixel or a stride (a 1×1 stride-1 filter
  /// reads its rows in place).
  static func applies(to shape: ConvolutionShape) -> Bool {
    shape.groups == 1 && shape.inputChannels <= mostChannels && shape.height.dilation == 1
      && shape.width.dilation == 1 && !shape.readsInputInPlace
  }

  var packsIntoScratch: Bool { true }

  /// Gathers rows `rowStart ..< rowStart + rowCount`, one output row's run of pixels at a time;
  /// the integer plan keeps the depth whole, so `depthStart` is 0 and `depthCount` the padded depth.
  func block(
    rowStart: Int, rowCount: Int, depthStart: Int, depthCount: Int, scratch: UnsafeMutablePointer<UInt8>
  ) -> (pointer: UnsafePointer<UInt8>, rowStride: Int) {
    let interior = shape.width.interior
    shape.forEachOutputRowRun(rowStart: rowStart, rowCount: rowCount) { image, y, firstX, count, row in
      gatherRun(
        image: image, y: y, firstX: firstX, count: count, interiorPixels: interior,
        into: UnsafeMutableRawPointer(scratch + row &* depthCount), rowStride: depthCount)
    }
    return (UnsafePointer(scratch), depthCount)
  }

  /// Writes the rows of pixels `firstX ..< firstX + count` of output row `y` of image `image`,
  /// `rowStride` bytes apart from `destination`; `interiorPixels` is the width axis's `interior`.
  /// Wrapping index arithmetic: every offset stays inside the input validated in `prepare`. Not
  /// inlined: inside the driver's loops its pointers spilled to the stack on every filter row.
  @inline(never)
  private func gatherRun(
    image: Int, y: Int, firstX: Int, count: Int, interiorPixels: Range<Int>, into destination: UnsafeMutableRawPointer,
    rowStride: Int
  ) {
    let channels = shape.inputChannels
    let height = shape.height
    let width = shape.width
    let filterRowBytes = width.filterSize &* channels
    let inputRowBytes = width.inputSize &* channels
    let imageBase = input + image &* height.inputSize &* inputRowBytes
    let endX = firstX &+ count
    let interior = interiorPixels.clamped(to: firstX..<endX)
    // The depth padding past the filter rows (less than a word: the depth is padded to the next
    // multiple of 2 or 4) first, as the row's last 4 bytes (or all of a shorter row); the filter
    // rows below overwrite the ones that are theirs. No branch on the padding's length per pixel.
    let tail = min(rowStride, 4)
    for i in 0..<count { fillBytes(destination + (i &* rowStride &+ rowStride &- tail), count: tail, with: padding) }
    let (firstY, endY) = height.validTaps(y)
    for ky in 0..<height.filterSize {
      let runBase = destination + ky &* filterRowBytes
      guard ky >= firstY && ky < endY else {
        for i in 0..<count { fillBytes(runBase + i &* rowStride, count: filterRowBytes, with: padding) }
        continue
      }
      let inputRow = imageBase + (height.inputOrigin(y) &+ ky) &* inputRowBytes
      /// Filter row ky of pixel x, whose taps may leave the input.
      @inline(__always) func edgePixel(_ x: Int) {
        let target = runBase + (x &- firstX) &* rowStride
        let (firstTap, endTap) = width.validTaps(x)
        let validBytes = (endTap &- firstTap) &* channels
        fillBytes(target, count: firstTap &* channels, with: padding)
        copyBytes(
          from: inputRow + (width.inputOrigin(x) &+ firstTap) &* channels, to: target + firstTap &* channels,
          count: validBytes, flip: signFlip)
        fillBytes(
          target + endTap &* channels, count: (width.filterSize &- endTap) &* channels, with: padding)
      }
      guard !interior.isEmpty else {
        for x in firstX..<endX { edgePixel(x) }
        continue
      }
      for x in firstX..<interior.lowerBound { edgePixel(x) }
      // The interior pixels' taps of this filter row: one run each, the run length's case chosen
      // once for all of them.
      copyRuns(
        interior.count, bytes: filterRowBytes, from: inputRow + width.inputOrigin(interior.lowerBound) &* channels,
        stride: width.stride &* channels, to: runBase + (interior.lowerBound &- firstX) &* rowStride,
        stride: rowStride, flip: signFlip)
      for x in interior.upperBound..<endX { edgePixel(x) }
    }
  }
}
