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
// Colour conversion: YCbCr→RGB with libjpeg's 16-bit fixed-point tables (R = Y + round(1.402
// (Cr−128)), B = Y + round(1.772 (Cb−128)), G = Y + ⌊(−0.34414 (Cb−128) − 0.71414 (Cr−128)) ×
// 2^16 + 2^15⌋ / 2^16, each clamped to 0...255); YCCK first becomes CMYK as C = 255 − R and so
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

/// libjpeg's YCbCr→RGB tables (jdcolor.c build_ycc_rgb_table), indexed by the Cb or Cr sample.
private struct JPEGYCbCrTables {
  var crToRed = [Int32](repeating: 0, count: 256)
  var cbToBlue = [Int32](repeating: 0, count: 256)
  /// Scaled by 2^16; `cbToGreen` includes the rounding half.
  var crToGreen = [Int32](repeating: 0, count: 256)
  var cbToGreen = [Int32](repeating: 0, count: 256)

  static let shared = JPEGYCbCrTables()

  private init() {
    // round(c × 2^16) of 1.40200, 1.77200, 0.71414, 0.34414.
    let crRed: Int32 = 91881
    let cbBlue: Int32 = 116130
    let crGreen: Int32 = 46802
    let cbGreen: Int32 = 22554
    let half: Int32 = 1 << 15
    for sample in 0..<256 {
      let centered = Int32(sample) - 128
      crToRed[sample] = (crRed * centered + half) >> 16
      cbToBlue[sample] = (cbBlue * centered + half) >> 16
      crToGreen[sample] = -crGreen * centered
      cbToGreen[sample] = -cbGreen * centered + half
    }
  }
}

@inline(__always)
private func clampedSample(_ value: Int32) -> UInt8 {
  value < 0 ? 0 : value > 255 ? 255 : UInt8(truncatingIfNeeded: value)
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
  private let columnSums: UnsafeMutablePointer<Int32>

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
    // Room for 2 × (samples per row) outputs of the fancy filters, or `width` replicated ones.
    rowCapacity = max(frame.width, frame.components.map { 2 * $0.sampleWidth }.max()!) + 8
    rowBuffers = UnsafeMutablePointer<UInt8>.allocate(capacity: rowCapacity * frame.components.count)
    rowBuffers.initialize(repeating: 0, count: rowCapacity * frame.components.count)
    columnSums = UnsafeMutablePointer<Int32>.allocate(capacity: rowCapacity)
    columnSums.initialize(repeating: 0, count: rowCapacity)
  }

  deinit {
    for rows in samples { rows.base.deallocate() }
    rowBuffers.deallocate()
    columnSums.deallocate()
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
    let tables = JPEGYCbCrTables.shared
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
        tables.crToRed.withUnsafeBufferPointer { crToRed in
          tables.cbToBlue.withUnsafeBufferPointer { cbToBlue in
            tables.crToGreen.withUnsafeBufferPointer { crToGreen in
              tables.cbToGreen.withUnsafeBufferPointer { cbToGreen in
                let luma = rows[0]
                let blueDifference = rows[1]
                let redDifference = rows[2]
                for x in 0..<width {
                  let yValue = Int32(luma[x])
                  let cb = Int(blueDifference[x])
                  let cr = Int(redDifference[x])
                  out[3 * x] = clampedSample(yValue + crToRed[cr])
                  out[3 * x + 1] = clampedSample(yValue + ((cbToGreen[cb] + crToGreen[cr]) >> 16))
                  out[3 * x + 2] = clampedSample(yValue + cbToBlue[cb])
                }
              }
            }
          }
        }
      case .cmyk, .yCCK:
        for x in 0..<width {
          var cmy: (UInt8, UInt8, UInt8)
          if space == .cmyk {
            cmy = (rows[0][x], rows[1][x], rows[2][x])
          } else {
            let yValue = Int32(rows[0][x])
            let cb = Int(rows[1][x])
            let cr = Int(rows[2][x])
            cmy = (
              clampedSample(255 - (yValue + tables.crToRed[cr])),
              clampedSample(255 - (yValue + ((tables.cbToGreen[cb] + tables.crToGreen[cr]) >> 16))),
              clampedSample(255 - (yValue + tables.cbToBlue[cb]))
            )
          }
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
      buffer[0] = input[0]
      buffer[1] = UInt8(truncatingIfNeeded: (Int(input[0]) * 3 + Int(input[1]) + 2) >> 2)
      for column in 1..<(samples - 1) {
        let weighted = Int(input[column]) * 3
        buffer[2 * column] = UInt8(truncatingIfNeeded: (weighted + Int(input[column - 1]) + 1) >> 2)
        buffer[2 * column + 1] = UInt8(truncatingIfNeeded: (weighted + Int(input[column + 1]) + 2) >> 2)
      }
      let last = samples - 1
      buffer[2 * last] = UInt8(truncatingIfNeeded: (Int(input[last]) * 3 + Int(input[last - 1]) + 1) >> 2)
      buffer[2 * last + 1] = input[last]
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
      for column in 0..<samples {
        columnSums[column] = Int32(near[column]) * 3 + Int32(far[column])
      }
      buffer[0] = UInt8(truncatingIfNeeded: (columnSums[0] * 4 + 8) >> 4)
      buffer[1] = UInt8(truncatingIfNeeded: (columnSums[0] * 3 + columnSums[1] + 7) >> 4)
      for column in 1..<(samples - 1) {
        let weighted = columnSums[column] * 3
        buffer[2 * column] = UInt8(truncatingIfNeeded: (weighted + columnSums[column - 1] + 8) >> 4)
        buffer[2 * column + 1] = UInt8(truncatingIfNeeded: (weighted + columnSums[column + 1] + 7) >> 4)
      }
      let last = samples - 1
      buffer[2 * last] = UInt8(truncatingIfNeeded: (columnSums[last] * 3 + columnSums[last - 1] + 8) >> 4)
      buffer[2 * last + 1] = UInt8(truncatingIfNeeded: (columnSums[last] * 4 + 7) >> 4)
      return UnsafePointer(buffer)
    case .replicate(let horizontal, let vertical):
      let input = rows.row(y / vertical)
      for x in 0..<width { buffer[x] = input[x / horizontal] }
      return UnsafePointer(buffer)
    }
  }
}
