// RESIZE_BILINEAR on quantized tensors, bit-exact with LiteRT's reference kernels: int8 and int16
// interpolate in 10-bit fixed point (positions and weights in 1/1024 units, the 20-bit weighted
// sum rounded back); uint8 interpolates in float and rounds half up, as the reference kernel
// does. Input and output share their quantization, so raw values are interpolated.
//
// int8 runs in two passes (`SeparableInt8BilinearResize`): the reference's sum of four corners
// times products of two 10-bit weights equals a blend of two column blends, and every product of
// the first pass is a 10-bit weight times a 9-bit difference, which SSE2 multiplies natively.
// Where the weights have few bits (2× and 4× upscales with half-pixel centers), both passes run
// in Int16 lanes (`NarrowInt8Blend`).

import TFLiteFormat
import TFLiteLinearAlgebra

/// The source taps of one output coordinate along one axis.
private struct QuantizedBilinearTap<Weight> {
  /// The lower and upper input coordinate.
  let lower: Int
  let upper: Int
  /// The position of the output coordinate in input space (float).
  let position: Weight
}

/// The taps of every output row and column.
private struct QuantizedBilinearTaps<Tap> {
  let rows: [Tap]
  let columns: [Tap]
}

/// The two input coordinates one output coordinate blends along one axis, in 10-bit fixed point.
struct FixedPointBilinearTap: Equatable {
  /// The lower and upper input coordinate (equal at the borders).
  let lower: Int
  let upper: Int
  /// The weight of `upper` in 1/1024 units (0...1023; `lower` weighs 1024 − `fraction`), 0 when
  /// `lower == upper`.
  let fraction: Int

  /// The taps along one axis (TFLite's `ComputeInterpolationValuesInteger`). Where both taps are
  /// one input coordinate, the reference's two weights (which may lie outside 0...1024 there)
  /// add up to 1024 on the same value, so the fraction is stored as 0: the same sums, and every
  /// weight fits 11 bits. The lower tap is also kept inside the input: with `alignCorners` and
  /// more than 2048 output coordinates the reference's lower tap can pass the last input one.
  static func axis(inputSize: Int, outputSize: Int, alignCorners: Bool, halfPixelCenters: Bool) -> [Self] {
    let scale =
      alignCorners && outputSize > 1
      ? ((1 << 10) * (inputSize - 1) + (outputSize - 1) / 2) / (outputSize - 1)
      : ((1 << 10) * inputSize + outputSize / 2) / outputSize
    return (0..<outputSize).map { coordinate in
      let position = halfPixelCenters ? coordinate * scale + scale / 2 - (1 << 9) : coordinate * scale
      let lower = min(max(position / (1 << 10), 0), inputSize - 1)
      let upper = min((position + (1 << 10) - 1) / (1 << 10), inputSize - 1)
      return Self(lower: lower, upper: upper, fraction: lower == upper ? 0 : position - (1 << 10) * lower)
    }
  }

  /// How many bits below the binary point the fractions of `taps` use: 10 minus the fewest
  /// trailing zero bits of a non-zero fraction (2 for quarters), 0 when every fraction is 0.
  static func fractionBits(_ taps: [Self]) -> Int {
    taps.lazy.filter { $0.fraction != 0 }.map { 10 - $0.fraction.trailingZeroBitCount }.max() ?? 0
  }
}

/// What `roundedInterpolation` adds to a negative sum before its floor division: −1 rounds half
/// away from zero (`.doubleRounding`, the reference's `(sum ± 2^19) / 2^20`), 0 half up
/// (`.singleRounding`, `(sum + 2^19) >> 20`).
private func negativeSumAdjustment<Value: FixedWidthInteger>(_ rounding: RoundingPolicy) -> Value {
  rounding == .doubleRounding ? -1 : 0
}

/// `sum / 2^bits` (2^20 unless given) rounded as the reference rounds its 20-bit interpolation, in one floor
/// division: for a negative sum, ⌈(sum − 2^19) / 2^20⌉ = ⌊(sum + 2^19 − 1) / 2^20⌋, so half away from
/// zero is `(sum + 2^19 + (sum < 0 ? −1 : 0)) >> 20` and half up the same without the −1.
@inline(__always)
private func roundedInterpolation<Value: FixedWidthInteger>(_ sum: Value, adjustment: Value, bits: Int = 20) -> Value {
  (sum &+ (1 &<< (bits &- 1)) &+ ((sum &>> (Value.bitWidth - 1)) & adjustment)) &>> bits
}

/// The lanes of one formulation of the two-pass int8 interpolation: how an input row is blended
/// across columns and how two such rows are blended into an output row.
private protocol SeparableInt8Blend {
  /// The lane type of a row blended across columns.
  associatedtype Blended
  /// The number of output columns.
  var outputWidth: Int { get }
  /// The first pass: blends one input row across columns into `outputWidth · channels` values.
  func blendColumns(_ inputRow: UnsafePointer<Int8>, into blend: UnsafeMutablePointer<Blended>)
  /// The second pass: blends two rows made by the first pass with the row tap's `fraction` into
  /// `length` int8 outputs, rounded as the reference rounds.
  func blendRows(
    _ top: UnsafePointer<Blended>, _ bottom: UnsafePointer<Blended>, fraction: Int, length: Int,
    into destination: UnsafeMutablePointer<Int8>)
}

/// int8 interpolation in two passes. Each input row the output needs is first blended across
/// columns, then each output row blends two such rows (the reference's sum of four corners times
/// products of a row and a column weight is a blend of two column blends). The two blended rows
/// last made are kept, so an upscale blends each input row across once per image instead of once
/// per output row, and the second pass runs over whole output rows whatever the channel count.
private struct SeparableInt8BilinearResize<Blend: SeparableInt8Blend> {
  let source: ResizeSource
  let rows: [FixedPointBilinearTap]
  let blend: Blend

  /// Computes output rows `range` (counted over batch × output height).
  func run(input: UnsafeRawPointer, output: UnsafeMutableRawPointer, rows range: Range<Int>) {
    let rowLength = blend.outputWidth &* source.channels
    let inputElements = input.assumingMemoryBound(to: Int8.self)
    let outputElements = output.assumingMemoryBound(to: Int8.self)
    let inputRowLength = source.width &* source.channels
    ThreadWorkspace.with(byteCount: 2 &* rowLength &* MemoryLayout<Blend.Blended>.stride) { workspace in
      let buffers = workspace.bindMemory(to: Blend.Blended.self, capacity: 2 &* rowLength)
      // The input row (over batch × input height) blended into buffer 0 and buffer 1, or −1.
      var held = SIMD2<Int>(-1, -1)
      /// The buffer holding input row `row` blended, made in the buffer not holding `keeping`.
      func blended(_ row: Int, keeping: Int) -> UnsafeMutablePointer<Blend.Blended> {
        if held[0] == row { return buffers }
        if held[1] == row { return buffers + rowLength }
        let slot = held[0] == keeping ? 1 : 0
        held[slot] = row
        let buffer = buffers + slot &* rowLength
        blend.blendColumns(inputElements + row &* inputRowLength, into: buffer)
        return buffer
      }
      rows.withUnsafeBufferPointer { rowTaps in
        for outputRow in range {
          let batch = outputRow / rowTaps.count
          let tap = rowTaps[outputRow &- batch &* rowTaps.count]
          let top = batch &* source.height &+ tap.lower
          let bottom = batch &* source.height &+ tap.upper
          let topBlend = blended(top, keeping: bottom)
          let bottomBlend = blended(bottom, keeping: top)
          blend.blendRows(
            topBlend, bottomBlend, fraction: tap.fraction, length: rowLength,
            into: outputElements + outputRow &* rowLength)
        }
      }
    }
  }
}

/// The two passes in Int32 lanes, for any taps: `H = 1024·left + fx·(right − left)` (18 bits),
/// then `S = 1024·H_top + fy·(H_bottom − H_top)`, exactly the reference's 20-bit sum.
private struct WideInt8Blend: SeparableInt8Blend {
  let channels: Int
  let columns: [FixedPointBilinearTap]
  let rounding: RoundingPolicy

  var outputWidth: Int { columns.count }

  /// Both factors of the product fit 16 bits (`fx` below 2^10, the difference of two int8 values
  /// 9 bits), so it is a 16-bit multiply-add (`pmaddwd`) even in SSE2.
  func blendColumns(_ inputRow: UnsafePointer<Int8>, into blend: UnsafeMutablePointer<Int32>) {
    let channels = self.channels
    columns.withUnsafeBufferPointer { columns in
      var destination = blend
      for tap in columns {
        let left = inputRow + tap.lower &* channels
        let right = inputRow + tap.upper &* channels
        let fraction = Int32(truncatingIfNeeded: tap.fraction) & 1023
        let fractions = SIMD8(repeating: fraction)
        var channel = 0
        while channel &+ 8 <= channels {
          let leftValues = Int8.loadWidened(left + channel)
          let difference = Int8.loadWidened(right + channel) &- leftValues
          UnsafeMutableRawPointer(destination + channel).storeBytes(
            of: (leftValues &<< 10) &+ fractions &* difference, as: SIMD8<Int32>.self)
          channel &+= 8
        }
        while channel < channels {
          let leftValue = Int32(left[channel])
          destination[channel] = (leftValue &<< 10) &+ fraction &* (Int32(right[channel]) &- leftValue)
          channel &+= 1
        }
        destination += channels
      }
    }
  }

  /// |S| ≤ 2^27, so Int32 lanes hold it. One loop serves both rounding policies (through
  /// `adjustment`): a policy switch inside it made the compiler take the vectors apart lane by lane.
  func blendRows(
    _ top: UnsafePointer<Int32>, _ bottom: UnsafePointer<Int32>, fraction: Int, length: Int,
    into destination: UnsafeMutablePointer<Int8>
  ) {
    let fraction = Int32(truncatingIfNeeded: fraction)
    let fractions = SIMD8(repeating: fraction)
    let adjustment: Int32 = negativeSumAdjustment(rounding)
    let adjustments = SIMD8(repeating: adjustment)
    var index = 0
    while index &+ 8 <= length {
      let topValues = UnsafeRawPointer(top + index).loadUnaligned(as: SIMD8<Int32>.self)
      let bottomValues = UnsafeRawPointer(bottom + index).loadUnaligned(as: SIMD8<Int32>.self)
      let sum = (topValues &<< 10) &+ fractions &* (bottomValues &- topValues)
      Int8.storeNarrowed((sum &+ (1 << 19) &+ ((sum &>> 31) & adjustments)) &>> 20, to: destination + index)
      index &+= 8
    }
    while index < length {
      let sum = (top[index] &<< 10) &+ fraction &* (bottom[index] &- top[index])
      destination[index] = Int8(truncatingIfNeeded: roundedInterpolation(sum, adjustment: adjustment))
      index &+= 1
    }
  }
}

/// The two passes in Int16 lanes, for taps whose fractions have few significant bits (a 2× or 4×
/// upscale with half-pixel centers blends by quarters or eighths). With column weights in units of
/// 1/2^c and row weights in 1/2^(8 − c), where the column fractions (1/1024) end in at least
/// 10 − c zero bits and the row fractions in 2 + c, every product of a row and a column weight is
/// a whole number of 2^12 in the reference's 1/2^20 units. Its sum is then S = 2^12·T with
/// T = Σ corner · row weight · column weight in these units, |T| ≤ 2^15, and rounding S to 2^20
/// is rounding T to 2^8 the same way. The first pass is `H = wL·left + wR·right`, the second
/// `T = wT·H_top + wB·H_bottom`: 16-bit multiplies (`pmullw`), twice the lanes of Int32 and no
/// `pmuludq` shuffles. Intermediate products may wrap; T itself fits, so the wrapped sum is T.
private struct NarrowInt8Blend: SeparableInt8Blend {
  let channels: Int
  let columns: [FixedPointBilinearTap]
  /// Each column tap's lower and upper weight, in all eight lanes (made once, not per input row).
  let columnWeights: [(lower: SIMD8<Int16>, upper: SIMD8<Int16>)]
  /// c: the column weights' bits (the row weights have 8 − c).
  let columnBits: Int
  let rounding: RoundingPolicy

  var outputWidth: Int { columns.count }

  /// The blend if the column and row fractions need at most 8 significant bits together.
  init?(channels: Int, rows: [FixedPointBilinearTap], columns: [FixedPointBilinearTap], rounding: RoundingPolicy) {
    let columnBits = FixedPointBilinearTap.fractionBits(columns)
    guard columnBits + FixedPointBilinearTap.fractionBits(rows) <= 8 else { return nil }
    (self.channels, self.columns, self.columnBits, self.rounding) = (channels, columns, columnBits, rounding)
    columnWeights = columns.map {
      let (lower, upper) = Self.weights(fraction: $0.fraction, bits: columnBits)
      return (SIMD8(repeating: lower), SIMD8(repeating: upper))
    }
  }

  /// A tap's weights (lower, upper) in 1/2^`bits` units.
  @inline(__always)
  private static func weights(fraction: Int, bits: Int) -> (lower: Int16, upper: Int16) {
    let upper = Int16(truncatingIfNeeded: fraction &>> (10 &- bits))
    return (Int16(truncatingIfNeeded: 1 &<< bits) &- upper, upper)
  }

  func blendColumns(_ inputRow: UnsafePointer<Int8>, into blend: UnsafeMutablePointer<Int16>) {
    let channels = self.channels
    columns.withUnsafeBufferPointer { columns in
      columnWeights.withUnsafeBufferPointer { columnWeights in
        var destination = blend
        for (tap, weights) in zip(columns, columnWeights) {
          let left = inputRow + tap.lower &* channels
          let right = inputRow + tap.upper &* channels
          var channel = 0
          while channel &+ 8 <= channels {
            let value =
              weights.lower &* SIMD8(widening: left + channel) &+ weights.upper &* SIMD8(widening: right + channel)
            UnsafeMutableRawPointer(destination + channel).storeBytes(of: value, as: SIMD8<Int16>.self)
            channel &+= 8
          }
          while channel < channels {
            destination[channel] = weights.lower[0] &* Int16(left[channel]) &+ weights.upper[0] &* Int16(right[channel])
            channel &+= 1
          }
          destination += channels
        }
      }
    }
  }

  func blendRows(
    _ top: UnsafePointer<Int16>, _ bottom: UnsafePointer<Int16>, fraction: Int, length: Int,
    into destination: UnsafeMutablePointer<Int8>
  ) {
    let (topWeight, bottomWeight) = Self.weights(fraction: fraction, bits: 8 &- columnBits)
    let adjustment: Int16 = negativeSumAdjustment(rounding)
    var index = 0
    while index &+ 16 <= length {
      let topValues = UnsafeRawPointer(top + index).loadUnaligned(as: SIMD16<Int16>.self)
      let bottomValues = UnsafeRawPointer(bottom + index).loadUnaligned(as: SIMD16<Int16>.self)
      let sum = topWeight &* topValues &+ bottomWeight &* bottomValues
      let rounded = (sum &+ 128 &+ ((sum &>> 15) & adjustment)) &>> 8
      UnsafeMutableRawPointer(destination + index).storeBytes(of: SIMD16<Int8>(truncating: rounded), as: SIMD16<Int8>.self)
      index &+= 16
    }
    while index < length {
      let sum = topWeight &* top[index] &+ bottomWeight &* bottom[index]
      destination[index] = Int8(truncatingIfNeeded: roundedInterpolation(sum, adjustment: adjustment, bits: 8))
      index &+= 1
    }
  }
}

/// The float taps along one axis (TFLite's `ComputeInterpolationValues`).
private func floatTaps(inputSize: Int, outputSize: Int, alignCorners: Bool, halfPixelCenters: Bool)
  -> [QuantizedBilinearTap<Float>]
{
  let scale =
    alignCorners && outputSize > 1 ? Float(inputSize - 1) / Float(outputSize - 1) : Float(inputSize) / Float(outputSize)
  return (0..<outputSize).map { coordinate in
    let position = halfPixelCenters ? (Float(coordinate) + 0.5) * scale - 0.5 : Float(coordinate) * scale
    return QuantizedBilinearTap(
      lower: max(Int(FixedPoint.truncatingConversion(position.rounded(.down))), 0),
      upper: min(Int(FixedPoint.truncatingConversion(position.rounded(.up))), inputSize - 1), position: position)
  }
}

/// Interpolation of int16 (fixed point) or uint8 (float) raw values, one output pixel at a time.
private struct TypedBilinearResize<Element: QuantizedInteger> {
  let source: ResizeSource
  let outputHeight: Int
  let fixedPoint: QuantizedBilinearTaps<FixedPointBilinearTap>?
  let float: QuantizedBilinearTaps<QuantizedBilinearTap<Float>>?
  let rounding: RoundingPolicy

  /// Computes output rows `rows` (over all images).
  func run(input: UnsafeRawPointer, output: UnsafeMutableRawPointer, rows: Range<Int>) {
    let channels = source.channels
    let image = source.height * source.width * channels
    let inputElements = input.assumingMemoryBound(to: Element.self)
    let outputElements = output.assumingMemoryBound(to: Element.self)
    let outputWidth = fixedPoint?.columns.count ?? float?.columns.count ?? 0
    for row in rows {
      let batch = row / outputHeight
      let y = row % outputHeight
      let base = inputElements + batch * image
      var destination = outputElements + row * outputWidth * channels
      for x in 0..<outputWidth {
        if let taps = fixedPoint {
          blendFixedPoint(base, taps.rows[y], taps.columns[x], destination)
        } else if let taps = float {
          blendFloat(base, taps.rows[y], taps.columns[x], destination)
        }
        destination += channels
      }
    }
  }

  /// The first channel of the four input pixels an output pixel blends.
  @inline(__always)
  private func corners(_ base: UnsafePointer<Element>, rows: (lower: Int, upper: Int), columns: (lower: Int, upper: Int))
    -> (
      topLeft: UnsafePointer<Element>, bottomLeft: UnsafePointer<Element>, topRight: UnsafePointer<Element>,
      bottomRight: UnsafePointer<Element>
    )
  {
    func pixel(_ row: Int, _ column: Int) -> UnsafePointer<Element> {
      base + (row * source.width + column) * source.channels
    }
    return (
      pixel(rows.lower, columns.lower), pixel(rows.upper, columns.lower), pixel(rows.lower, columns.upper),
      pixel(rows.upper, columns.upper)
    )
  }

  private func blendFixedPoint(
    _ base: UnsafePointer<Element>, _ row: FixedPointBilinearTap, _ column: FixedPointBilinearTap,
    _ destination: UnsafeMutablePointer<Element>
  ) {
    // The four corner weights in 1/2^20 units (each product of two 10-bit weights).
    let weights = (
      topLeft: ((1 << 10) - row.fraction) * ((1 << 10) - column.fraction),
      bottomLeft: row.fraction * ((1 << 10) - column.fraction),
      topRight: ((1 << 10) - row.fraction) * column.fraction, bottomRight: row.fraction * column.fraction)
    let corners = self.corners(base, rows: (row.lower, row.upper), columns: (column.lower, column.upper))
    for channel in 0..<source.channels {
      let sum =
        Int64(corners.topLeft[channel]) * Int64(weights.topLeft) + Int64(corners.bottomLeft[channel])
        * Int64(weights.bottomLeft) + Int64(corners.topRight[channel]) * Int64(weights.topRight)
        + Int64(corners.bottomRight[channel]) * Int64(weights.bottomRight)
      destination[channel] = Element(
        truncatingIfNeeded: roundedInterpolation(sum, adjustment: negativeSumAdjustment(rounding)))
    }
  }

  /// The reference's float blend, `((corner · row weight) · column weight)` summed over the four
  /// corners in its order, plus 0.5, truncated: eight channels at a time in float lanes (the same
  /// operations per lane), the rest one by one.
  private func blendFloat(
    _ base: UnsafePointer<Element>, _ row: QuantizedBilinearTap<Float>, _ column: QuantizedBilinearTap<Float>,
    _ destination: UnsafeMutablePointer<Element>
  ) {
    let (lowerY, upperY) = (1 - (row.position - Float(row.lower)), row.position - Float(row.lower))
    let (lowerX, upperX) = (1 - (column.position - Float(column.lower)), column.position - Float(column.lower))
    let corners = self.corners(base, rows: (row.lower, row.upper), columns: (column.lower, column.upper))
    var channel = 0
    while channel &+ 8 <= source.channels {
      func values(_ corner: UnsafePointer<Element>) -> SIMD8<Float> {
        SIMD8(converting: Element.loadWidened(corner + channel))
      }
      var sum = values(corners.topLeft) * lowerY * lowerX
      sum += values(corners.bottomLeft) * upperY * lowerX
      sum += values(corners.topRight) * lowerY * upperX
      sum += values(corners.bottomRight) * upperY * upperX
      Element.storeNarrowed(truncatedBelowTwoTo23(sum + 0.5), to: destination + channel)
      channel &+= 8
    }
    while channel < source.channels {
      var sum = Float(corners.topLeft[channel]) * lowerY * lowerX
      sum += Float(corners.bottomLeft[channel]) * upperY * lowerX
      sum += Float(corners.topRight[channel]) * lowerY * upperX
      sum += Float(corners.bottomRight[channel]) * upperY * upperX
      destination[channel] = Element(truncatingIfNeeded: FixedPoint.truncatingConversion(sum + 0.5))
      channel &+= 1
    }
  }
}

extension SIMD8 where Scalar == Int16 {
  /// Eight int8 values at `pointer`, sign-extended lane by lane (as `loadWidened`).
  @inline(__always)
  fileprivate init(widening pointer: UnsafePointer<Int8>) {
    let x = UnsafeRawPointer(pointer).loadUnaligned(as: SIMD8<Int8>.self)
    self.init(
      Int16(x[0]), Int16(x[1]), Int16(x[2]), Int16(x[3]), Int16(x[4]), Int16(x[5]), Int16(x[6]), Int16(x[7]))
  }
}

extension SIMD8 where Scalar == Int8 {
  /// The low byte of each lane, lane by lane (as `storeNarrowed`).
  @inline(__always)
  fileprivate init(truncating x: SIMD8<Int16>) {
    self.init(
      Int8(truncatingIfNeeded: x[0]), Int8(truncatingIfNeeded: x[1]), Int8(truncatingIfNeeded: x[2]),
      Int8(truncatingIfNeeded: x[3]), Int8(truncatingIfNeeded: x[4]), Int8(truncatingIfNeeded: x[5]),
      Int8(truncatingIfNeeded: x[6]), Int8(truncatingIfNeeded: x[7]))
  }
}

extension SIMD16 where Scalar == Int8 {
  /// The low byte of each lane, by halves: LLVM then packs the two halves with one `packuswb`
  /// (a 16-lane loop inserted the upper half byte by byte).
  @inline(__always)
  fileprivate init(truncating lanes: SIMD16<Int16>) {
    self.init(lowHalf: SIMD8(truncating: lanes.lowHalf), highHalf: SIMD8(truncating: lanes.highHalf))
  }
}

extension SIMD8 where Scalar == Float {
  /// The lanes of `values` as floats, lane by lane (LLVM emits `cvtdq2ps`; the generic `init(_:)`
  /// between SIMD types is an out-of-line call).
  @inline(__always)
  fileprivate init(converting values: SIMD8<Int32>) {
    self.init()
    for lane in 0..<8 { self[lane] = Float(values[lane]) }
  }
}

/// `Int32(x)` (truncation) of lanes in 0 ..< 2^23 without a per-lane range check: adding and
/// subtracting 2^23 rounds a lane to the nearest whole number, one less where that passed the
/// lane, and the whole number is then the low bits of `that + 2^23`. The uint8 blends plus 0.5
/// lie in 0.5 ... 256.
@inline(__always)
private func truncatedBelowTwoTo23(_ x: SIMD8<Float>) -> SIMD8<Int32> {
  let shift = SIMD8<Float>(repeating: 8_388_608)
  var whole = (x + shift) - shift
  whole.replace(with: whole - 1, where: whole .> x)
  return unsafeBitCast(whole + shift, to: SIMD8<Int32>.self) &- 0x4B00_0000
}

/// Builds the typed resize: the two-pass fixed-point interpolation for int8, the one-value-at-a-time
/// fixed-point one for int16, float for uint8 (a closure formed where the element type is concrete).
private struct IntegerBilinearFactory: QuantizedTypeVisitor {
  let inputShape: [Int]
  let outputHeight: Int
  let outputWidth: Int
  let alignCorners: Bool
  let halfPixelCenters: Bool
  let rounding: RoundingPolicy

  func visit<Element: QuantizedInteger>(_ type: Element.Type) throws
    -> (UnsafeRawPointer, UnsafeMutableRawPointer, Range<Int>) -> Void
  {
    let source = ResizeSource(shape: inputShape)
    func taps<Tap>(_ axis: (Int, Int, Bool, Bool) -> [Tap]) -> QuantizedBilinearTaps<Tap> {
      QuantizedBilinearTaps(
        rows: axis(source.height, outputHeight, alignCorners, halfPixelCenters),
        columns: axis(source.width, outputWidth, alignCorners, halfPixelCenters))
    }
    if Element.self == Int8.self {
      let fixedPoint = taps(FixedPointBilinearTap.axis)
      if let narrow = NarrowInt8Blend(
        channels: source.channels, rows: fixedPoint.rows, columns: fixedPoint.columns, rounding: rounding)
      {
        let resize = SeparableInt8BilinearResize(source: source, rows: fixedPoint.rows, blend: narrow)
        return { resize.run(input: $0, output: $1, rows: $2) }
      }
      let wide = WideInt8Blend(channels: source.channels, columns: fixedPoint.columns, rounding: rounding)
      let resize = SeparableInt8BilinearResize(source: source, rows: fixedPoint.rows, blend: wide)
      return { resize.run(input: $0, output: $1, rows: $2) }
    }
    let isFloat = Element.self == UInt8.self
    let resize = TypedBilinearResize<Element>(
      source: source, outputHeight: outputHeight, fixedPoint: isFloat ? nil : taps(FixedPointBilinearTap.axis),
      float: isFloat ? taps(floatTaps) : nil, rounding: rounding)
    return { resize.run(input: $0, output: $1, rows: $2) }
  }
}

/// RESIZE_BILINEAR on int8, uint8 and int16 tensors. The size operand must be constant.
final class IntegerResizeBilinearKernel: Kernel {
  private static let opName = "RESIZE_BILINEAR"
  private let input: RuntimeTensor
  private let size: RuntimeTensor
  private let output: RuntimeTensor
  private let options: ResizeBilinearOptions
  /// The typed resize of output rows over all images.
  private var resize: ((UnsafeRawPointer, UnsafeMutableRawPointer, Range<Int>) -> Void)?

  init(node: Node) throws {
    (input, size, output) = try node.twoInputsAndOutput()
    guard input.type == output.type, [.int8, .uint8, .int16].contains(input.type) else {
      throw KernelError.unsupported("\(Self.opName) from \(input.type.name) to \(output.type.name) in the quantized kernels")
    }
    guard case .resizeBilinearOptions(let options) = node.options else {
      throw KernelError.invalid("\(Self.opName): missing options")
    }
    guard !(options.alignCorners && options.halfPixelCenters) else {
      throw KernelError.invalid("\(Self.opName): align_corners and half_pixel_centers cannot both be set")
    }
    self.options = options
  }

  func prepare(_ context: inout PrepareContext) throws {
    let requested = try constantIntegers(size, op: Self.opName, operand: "size")
    output.shape = try resizedShape(inputShape: input.shape, size: requested, op: Self.opName)
    resize = try input.type.visitQuantized(
      IntegerBilinearFactory(
        inputShape: input.shape, outputHeight: requested[0], outputWidth: requested[1],
        alignCorners: options.alignCorners, halfPixelCenters: options.halfPixelCenters,
        rounding: context.roundingPolicy))
  }

  func eval(_ context: EvalContext) throws {
    guard let resize else { throw KernelError.invalid("\(Self.opName) evaluated before prepare") }
    let (source, destination) = try evalPointers(input, output, op: Self.opName)
    context.forEachChunk(of: output.shape[0] * output.shape[1], minimumChunk: 1) { range in
      resize(source, destination, range)
    }
  }
}
