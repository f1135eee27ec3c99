// From decoded component samples to gray or RGB pixels, the way libjpeg-turbo does it with its
// defaults (jdsample.c, jdcolor.c) and, for CMYK, the way Pillow converts its CMYK image to RGB.
//
// Upsampling (per component, from its sample grid to the image grid, ratio hx×vy = Hmax/h ×
// Vmax/v), chosen as libjpeg chooses it with fancy upsampling on (Pillow's default; merged
// upsampling is only used when fancy upsampling is off, so it never applies here):
// - 1×1: the samples as they are.
// - 2×1 ("h2v1 fancy", when the component is more than 2 samples wide): each output is
//   (3 × nearer + farther sample + 1 or 2) / 4, the bias alternating 1, 2 between the left and
//   right output of each sample; the first and last output copy the edge sample.
// - 1×2 ("h1v2 fancy"): the same triangle filter vertically, bias 1 for the upper output row, 2
//   for the lower.
// - 2×2 ("h2v2 fancy", when more than 2 samples wide): column sums 3 × nearer + farther row, then
//   (3 × this + neighbouring column sum + 8 or 7) / 16 horizontally; the first output is
//   (4 × sum + 8) / 16 and the last (4 × sum + 7) / 16.
// - anything else (or 2×1 and 2×2 of 1–2 samples wide): each sample repeated hx×vy times.
// Rows above the first and below the last row of samples repeat the edge row.
//
// The 2× horizontal filters (h2v1, h2v2) run on a row of filter inputs (the samples, or the
// column sums) with the edge input repeated on both sides, which gives the edge outputs above
// without special cases, 8 columns at a time in SIMD.
//
// Colour conversion: YCbCr→RGB with libjpeg's 16-bit fixed-point arithmetic, the numbers of its
// tables (jdcolor.c) computed per pixel, 16 pixels at a time in SIMD: R = Y + ⌊(91881 (Cr−128) +
// 2^15) / 2^16⌋, B = Y + ⌊(116130 (Cb−128) + 2^15) / 2^16⌋, G = Y + ⌊(−22554 (Cb−128) − 46802
// (Cr−128) + 2^15) / 2^16⌋ (the constants are 1.402, 1.772, 0.34414, 0.71414 × 2^16, rounded),
// each clamped to 0...255; YCCK first becomes CMYK as C = 255 − R and so
// on with K kept. CMYK samples (stored inverted, Adobe style) become RGB as Pillow's
// `convert("RGB")` computes on its inverted CMYK: with k the stored K sample, R = k − k × (255 −
// stored C) / 255 rounded as Pillow's MULDIV255.

/// How one component is brought to the image grid.
private enum JPEGUpsampling {
  case fullSize
  case fancyHorizontal
  case fancyVertical
  case fancyBoth
  case replicate(horizontal: Int, vertical: Int)
}

/// The colour space of the decoded components.
enum JPEGColorSpace {
  case gray, yCbCr, rgb, cmyk, yCCK
}

@inline(__always)
private func clampedSample(_ value: Int32) -> UInt8 {
  value < 0 ? 0 : value > 255 ? 255 : UInt8(truncatingIfNeeded: value)
}

/// Converts 16 pixels of Y, Cb and Cr samples to interleaved RGB at `out`, writing 49 bytes (the
/// last one is the next pixel's, written again later). `spill` holds 64 bytes: each pixel is packed
/// as R | G << 8 | B << 16 in a lane, the lanes are stored there once and copied out 4 bytes at a
/// time (reading lanes of a vector one by one spills the whole vector again for every lane).
@inline(__always)
private func convertSixteenYCbCrPixels(
  luma: UnsafePointer<UInt8>, blue: UnsafePointer<UInt8>, red: UnsafePointer<UInt8>, into out: UnsafeMutablePointer<UInt8>,
  spill: UnsafeMutableRawPointer
) {
  // Widened lane by lane: `SIMD16<Int32>(truncatingIfNeeded:)` stays an out-of-line call.
  @inline(__always) func load(_ p: UnsafePointer<UInt8>) -> SIMD16<Int32> {
    SIMD16(
      Int32(p[0]), Int32(p[1]), Int32(p[2]), Int32(p[3]), Int32(p[4]), Int32(p[5]), Int32(p[6]), Int32(p[7]),
      Int32(p[8]), Int32(p[9]), Int32(p[10]), Int32(p[11]), Int32(p[12]), Int32(p[13]), Int32(p[14]), Int32(p[15]))
  }
  let yValue = load(luma)
  let cb = load(blue) &- 128
  let cr = load(red) &- 128
  let half: Int32 = 1 << 15
  let redValues = clampedToByteRange(yValue &+ ((cr &* 91881 &+ half) &>> 16))
  let greenValues = clampedToByteRange(yValue &+ ((cb &* -22554 &+ cr &* -46802 &+ half) &>> 16))
  let blueValues = clampedToByteRange(yValue &+ ((cb &* 116130 &+ half) &>> 16))
  spill.storeBytes(of: redValues | greenValues &<< 8 | blueValues &<< 16, as: SIMD16<Int32>.self)
  let destination = UnsafeMutableRawPointer(out)
  for lane in 0..<16 {
    destination.storeBytes(of: spill.load(fromByteOffset: 4 * lane, as: UInt32.self).littleEndian, toByteOffset: 3 * lane, as: UInt32.self)
  }
}

/// Converts a row of `width` Y, Cb, Cr samples to interleaved RGB: 16 pixels at a time while more
/// pixels follow (the 49th byte written belongs to them), the last 1...16 through `scratch`
/// (3 × 16 input bytes, 49 output bytes, then the 64-byte spill).
@inline(__always)
private func convertYCbCrRow(
  luma: UnsafePointer<UInt8>, blue: UnsafePointer<UInt8>, red: UnsafePointer<UInt8>, width: Int,
  into out: UnsafeMutablePointer<UInt8>, scratch: UnsafeMutablePointer<UInt8>
) {
  let spill = UnsafeMutableRawPointer(scratch + 112)
  var x = 0
  while x + 16 < width {
    convertSixteenYCbCrPixels(luma: luma + x, blue: blue + x, red: red + x, into: out + 3 * x, spill: spill)
    x += 16
  }
  let remaining = width - x
  scratch.update(from: luma + x, count: remaining)
  (scratch + 16).update(from: blue + x, count: remaining)
  (scratch + 32).update(from: red + x, count: remaining)
  convertSixteenYCbCrPixels(luma: scratch, blue: scratch + 16, red: scratch + 32, into: scratch + 48, spill: spill)
  (out + 3 * x).update(from: scratch + 48, count: 3 * remaining)
}

extension JPEGDecoding {
  /// The colour space libjpeg assumes (jdapimin.c default_decompress_parms).
  func colorSpace(of frame: JPEGFrame) -> JPEGColorSpace {
    switch frame.components.count {
    case 1: return .gray
    case 3:
      if sawJFIF { return .yCbCr }
      if let adobeTransform { return adobeTransform == 0 ? .rgb : .yCbCr }
      let identifiers = frame.components.map(\.identifier)
      return identifiers == [0x52, 0x47, 0x42] ? .rgb : .yCbCr
    default:
      if let adobeTransform { return adobeTransform == 0 ? .cmyk : .yCCK }
      return .cmyk
    }
  }
}

/// Rows of decoded samples of one component, `stride` bytes apart: sample row `r` is buffer row
/// `r % rowCount` (a ring of three units while streaming; the whole padded plane otherwise, where
/// nothing wraps). `rowCount` is a multiple of 8, so an 8×8 block never wraps.
struct JPEGSampleRows {
  /// The first buffer row.
  let base: UnsafeMutablePointer<UInt8>
  /// Bytes per row: `paddedBlocksPerRow × 8`.
  let stride: Int
  /// Rows the buffer holds.
  let rowCount: Int

  /// Where sample row `index` lives.
  @inline(__always)
  func row(_ index: Int) -> UnsafeMutablePointer<UInt8> { base + (index % rowCount) * stride }
}

/// Holds the decoded samples of a frame and turns them into output pixels row by row. Decoding
/// proceeds in units (rows of MCUs; rows of blocks for a one-component frame); once units 0...u
/// hold their samples, every output row of the units before u can be written, since fancy
/// upsampling needs at most one sample row of the next unit.
final class JPEGPixelWriter {
  let width: Int
  let height: Int
  let channels: Int
  private let space: JPEGColorSpace
  private let components: [JPEGComponent]
  private let methods: [JPEGUpsampling]
  /// Per component, where its decoded samples go.
  let samples: [JPEGSampleRows]
  /// Per component, sample rows per unit.
  let unitSampleRows: [Int]
  /// Whether the sample rows are rings of three units (rather than whole planes).
  let isStreaming: Bool
  /// Output rows per unit.
  let unitOutputRows: Int
  /// Units in the frame.
  let unitCount: Int
  private let output: UnsafeMutablePointer<UInt8>
  /// Output rows written so far (all rows above this one).
  private var writtenRows = 0
  private let rowCapacity: Int
  private let rowBuffers: UnsafeMutablePointer<UInt8>
  /// The inputs of a 2× horizontal filter, with one entry before index 0 (`filterInputs[-1]`).
  private let filterInputs: UnsafeMutablePointer<Int32>
  /// The tail of a SIMD conversion (`scratchHead` bytes), then an RGB row (YCCK).
  private let scratch: UnsafeMutablePointer<UInt8>
  /// Bytes of `scratch` that `convertYCbCrRow` uses: 48 in, 49 out, a 64-byte spill at 112.
  private static let scratchHead = 176

  /// A writer of `frame` in `colorSpace` into `output`, holding three units of sample rows per
  /// component when `streaming`, whole planes otherwise.
  init(frame: JPEGFrame, colorSpace: JPEGColorSpace, output: UnsafeMutablePointer<UInt8>, streaming: Bool) {
    width = frame.width
    height = frame.height
    space = colorSpace
    channels = colorSpace == .gray ? 1 : 3
    components = frame.components
    self.output = output
    isStreaming = streaming
    methods = frame.components.map { component in
      let horizontal = frame.maxHorizontalFactor / component.horizontalFactor
      let vertical = frame.maxVerticalFactor / component.verticalFactor
      switch (horizontal, vertical) {
      case (1, 1): return .fullSize
      case (2, 1) where component.sampleWidth > 2: return .fancyHorizontal
      case (1, 2): return .fancyVertical
      case (2, 2) where component.sampleWidth > 2: return .fancyBoth
      default: return .replicate(horizontal: horizontal, vertical: vertical)
      }
    }
    let single = frame.components.count == 1
    unitSampleRows = frame.components.map { single ? 8 : $0.verticalFactor * 8 }
    unitOutputRows = single ? 8 : frame.maxVerticalFactor * 8
    unitCount = (frame.height + unitOutputRows - 1) / unitOutputRows
    samples = zip(frame.components, unitSampleRows).map { component, unitRows in
      let stride = component.paddedBlocksPerRow * 8
      let rowCount = streaming ? 3 * unitRows : component.paddedBlockRows * 8
      let base = UnsafeMutablePointer<UInt8>.allocate(capacity: stride * rowCount)
      base.initialize(repeating: 0, count: stride * rowCount)
      return JPEGSampleRows(base: base, stride: stride, rowCount: rowCount)
    }
    // Room for 2 × (samples per row, rounded up to 8 for SIMD) outputs of the fancy filters, or
    // `width` replicated ones.
    rowCapacity = max(frame.width, frame.components.map { 2 * $0.sampleWidth }.max()!) + 32
    rowBuffers = UnsafeMutablePointer<UInt8>.allocate(capacity: rowCapacity * frame.components.count)
    rowBuffers.initialize(repeating: 0, count: rowCapacity * frame.components.count)
    filterInputs = UnsafeMutablePointer<Int32>.allocate(capacity: rowCapacity + 2) + 1
    (filterInputs - 1).initialize(repeating: 0, count: rowCapacity + 2)
    scratch = UnsafeMutablePointer<UInt8>.allocate(capacity: 3 * rowCapacity + Self.scratchHead)
    scratch.initialize(repeating: 0, count: 3 * rowCapacity + Self.scratchHead)
  }

  deinit {
    for rows in samples { rows.base.deallocate() }
    rowBuffers.deallocate()
    (filterInputs - 1).deallocate()
    scratch.deallocate()
  }

  /// Starts over at the top (a scan that decodes the whole frame again).
  func restart() { writtenRows = 0 }

  /// Units 0...`unit` hold their samples: writes the output rows of the units before `unit`.
  func samplesDecoded(throughUnit unit: Int) {
    writeRows(upTo: min(unit * unitOutputRows, height))
  }

  /// Writes every output row not written yet (all samples are decoded).
  func writeRemainingRows() { writeRows(upTo: height) }

  /// Upsamples and colour-converts output rows `writtenRows..<end`.
  private func writeRows(upTo end: Int) {
    guard writtenRows < end else { return }
    var rows = [UnsafePointer<UInt8>](repeating: UnsafePointer(rowBuffers), count: components.count)
    for y in writtenRows..<end {
      for index in components.indices {
        rows[index] = upsampledRow(
          y, component: components[index], samples: samples[index], method: methods[index],
          buffer: rowBuffers + index * rowCapacity)
      }
      let out = output + y * width * channels
      switch space {
      case .gray:
        out.update(from: rows[0], count: width)
      case .rgb:
        for x in 0..<width {
          out[3 * x] = rows[0][x]
          out[3 * x + 1] = rows[1][x]
          out[3 * x + 2] = rows[2][x]
        }
      case .yCbCr:
        convertYCbCrRow(luma: rows[0], blue: rows[1], red: rows[2], width: width, into: out, scratch: scratch)
      case .cmyk, .yCCK:
        let converted = scratch + Self.scratchHead
        if space == .yCCK {
          convertYCbCrRow(luma: rows[0], blue: rows[1], red: rows[2], width: width, into: converted, scratch: scratch)
        }
        for x in 0..<width {
          let cmy =
            space == .cmyk
            ? (rows[0][x], rows[1][x], rows[2][x])
            : (255 - converted[3 * x], 255 - converted[3 * x + 1], 255 - converted[3 * x + 2])
          let black = Int32(rows[3][x])
          @inline(__always) func pillowCMYKToRGB(_ stored: UInt8) -> UInt8 {
            let product = (255 - Int32(stored)) * black + 128
            return clampedSample(black - (((product >> 8) + product) >> 8))
          }
          out[3 * x] = pillowCMYKToRGB(cmy.0)
          out[3 * x + 1] = pillowCMYKToRGB(cmy.1)
          out[3 * x + 2] = pillowCMYKToRGB(cmy.2)
        }
      }
    }
    writtenRows = end
  }

  /// Row `y` of the image grid for one component: a sample row itself, or `buffer` filled by
  /// the component's upsampling method.
  @inline(__always)
  private func upsampledRow(
    _ y: Int, component: JPEGComponent, samples rows: JPEGSampleRows, method: JPEGUpsampling,
    buffer: UnsafeMutablePointer<UInt8>
  ) -> UnsafePointer<UInt8> {
    let samples = component.sampleWidth
    /// The sample row nearest to output row `y` of a 2× vertical upsampling and the one on the
    /// other side (the nearest repeated at the top and bottom edges); bias 1 above, 2 below.
    func verticalNeighbours() -> (near: UnsafePointer<UInt8>, far: UnsafePointer<UInt8>, isUpper: Bool) {
      let nearRow = y >> 1
      let isUpper = y & 1 == 0
      let farRow = isUpper ? max(nearRow - 1, 0) : min(nearRow + 1, component.sampleHeight - 1)
      return (UnsafePointer(rows.row(nearRow)), UnsafePointer(rows.row(farRow)), isUpper)
    }
    switch method {
    case .fullSize:
      return UnsafePointer(rows.row(y))
    case .fancyHorizontal:
      let input = rows.row(y)
      for column in 0..<samples { filterInputs[column] = Int32(input[column]) }
      horizontalFancyPass(count: samples, biases: (1, 2), shift: 2, into: buffer)
      return UnsafePointer(buffer)
    case .fancyVertical:
      let (near, far, isUpper) = verticalNeighbours()
      let bias = isUpper ? 1 : 2
      for column in 0..<samples {
        buffer[column] = UInt8(truncatingIfNeeded: (Int(near[column]) * 3 + Int(far[column]) + bias) >> 2)
      }
      return UnsafePointer(buffer)
    case .fancyBoth:
      let (near, far, _) = verticalNeighbours()
      for column in 0..<samples { filterInputs[column] = Int32(near[column]) * 3 + Int32(far[column]) }
      horizontalFancyPass(count: samples, biases: (8, 7), shift: 4, into: buffer)
      return UnsafePointer(buffer)
    case .replicate(let horizontal, let vertical):
      let input = rows.row(y / vertical)
      for x in 0..<width { buffer[x] = input[x / horizontal] }
      return UnsafePointer(buffer)
    }
  }

  /// The 2× horizontal triangle filter over `filterInputs[0..<count]`: output 2c is (3 × input c +
  /// input c−1 + first bias) >> shift, output 2c+1 the same with input c+1 and the second bias;
  /// the edge inputs are repeated outside the row, which gives libjpeg's edge outputs.
  @inline(__always)
  private func horizontalFancyPass(
    count: Int, biases: (Int32, Int32), shift: Int32, into buffer: UnsafeMutablePointer<UInt8>
  ) {
    filterInputs[-1] = filterInputs[0]
    filterInputs[count] = filterInputs[count - 1]
    @inline(__always) func load(_ column: Int) -> SIMD8<Int32> {
      UnsafeRawPointer(filterInputs + column).loadUnaligned(as: SIMD8<Int32>.self)
    }
    var column = 0
    while column < count {
      let center = load(column) &* 3
      let evens = (center &+ load(column - 1) &+ biases.0) &>> shift
      let odds = (center &+ load(column + 1) &+ biases.1) &>> shift
      // Each lane packed as even | odd << 8, stored once and copied out 4 bytes at a time (the
      // upper two bytes are the next pair's, written again after; the last lands in the slack).
      let spill = UnsafeMutableRawPointer(scratch + 112)
      spill.storeBytes(of: evens | odds &<< 8, as: SIMD8<Int32>.self)
      let out = UnsafeMutableRawPointer(buffer + 2 * column)
      for lane in 0..<8 {
        out.storeBytes(of: spill.load(fromByteOffset: 4 * lane, as: UInt32.self).littleEndian, toByteOffset: 2 * lane, as: UInt32.self)
      }
      column += 8
    }
  }
}
