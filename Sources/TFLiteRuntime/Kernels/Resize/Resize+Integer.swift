// RESIZE_BILINEAR on quantized tensors, bit-exact with LiteRT's reference kernels: int8 and int16
// interpolate in 10-bit fixed point (positions and weights in 1/1024 units, the 20-bit weighted
// sum rounded back); uint8 interpolates in float and rounds half up, as the reference kernel
// does. Input and output share their quantization, so raw values are interpolated.

import TFLiteFormat
import TFLiteLinearAlgebra

/// The source taps of one output coordinate along one axis.
private struct QuantizedBilinearTap<Weight> {
  /// The lower and upper input coordinate.
  let lower: Int
  let upper: Int
  /// The position of the output coordinate in input space (fixed point or float).
  let position: Weight
}

/// The taps of every output row and column.
private struct QuantizedBilinearTaps<Weight> {
  let rows: [QuantizedBilinearTap<Weight>]
  let columns: [QuantizedBilinearTap<Weight>]
}

/// The 10-bit fixed-point taps along one axis (TFLite's `ComputeInterpolationValuesInteger`).
private func fixedPointTaps(inputSize: Int, outputSize: Int, alignCorners: Bool, halfPixelCenters: Bool)
  -> [QuantizedBilinearTap<Int>]
{
  let scale =
    alignCorners && outputSize > 1
    ? ((1 << 10) * (inputSize - 1) + (outputSize - 1) / 2) / (outputSize - 1)
    : ((1 << 10) * inputSize + outputSize / 2) / outputSize
  return (0..<outputSize).map { coordinate in
    let position = halfPixelCenters ? coordinate * scale + scale / 2 - (1 << 9) : coordinate * scale
    return QuantizedBilinearTap(
      lower: max(position / (1 << 10), 0), upper: min((position + (1 << 10) - 1) / (1 << 10), inputSize - 1),
      position: position)
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

/// Interpolation of 8- or 16-bit raw values.
private struct TypedBilinearResize<Element: QuantizedInteger> {
  let source: ResizeSource
  let outputHeight: Int
  let fixedPoint: QuantizedBilinearTaps<Int>?
  let float: QuantizedBilinearTaps<Float>?
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

  @inline(__always)
  private func corner(_ base: UnsafePointer<Element>, _ y: Int, _ x: Int, _ channel: Int) -> Element {
    base[(y * source.width + x) * source.channels + channel]
  }

  private func blendFixedPoint(
    _ base: UnsafePointer<Element>, _ row: QuantizedBilinearTap<Int>, _ column: QuantizedBilinearTap<Int>,
    _ destination: UnsafeMutablePointer<Element>
  ) {
    let fractionY = row.position - (1 << 10) * row.lower
    let fractionX = column.position - (1 << 10) * column.lower
    // The four corner weights in 1/2^20 units (each product of two 10-bit fractions).
    let weights = (
      topLeft: ((1 << 10) - fractionY) * ((1 << 10) - fractionX), bottomLeft: fractionY * ((1 << 10) - fractionX),
      topRight: ((1 << 10) - fractionY) * fractionX, bottomRight: fractionY * fractionX)
    let corners = (
      topLeft: base + (row.lower * source.width + column.lower) * source.channels,
      bottomLeft: base + (row.upper * source.width + column.lower) * source.channels,
      topRight: base + (row.lower * source.width + column.upper) * source.channels,
      bottomRight: base + (row.upper * source.width + column.upper) * source.channels)
    var channel = 0
    if Element.bitWidth == 8 {
      // 8-bit values times weights below 2^22 fit Int32 lanes, eight channels at a time.
      while channel &+ 8 <= source.channels {
        let sum =
          Element.loadWidened(corners.topLeft + channel) &* Int32(truncatingIfNeeded: weights.topLeft)
          &+ Element.loadWidened(corners.bottomLeft + channel) &* Int32(truncatingIfNeeded: weights.bottomLeft)
          &+ Element.loadWidened(corners.topRight + channel) &* Int32(truncatingIfNeeded: weights.topRight)
          &+ Element.loadWidened(corners.bottomRight + channel) &* Int32(truncatingIfNeeded: weights.bottomRight)
        let rounded: SIMD8<Int32>
        switch rounding {
        case .doubleRounding:
          // Round half away from zero, then divide truncating toward zero.
          let nudged = sum &+ SIMD8(repeating: 1 << 19).replacing(with: SIMD8(repeating: -(1 << 19)), whereNegative: sum &- 1)
          rounded = (nudged &+ ((nudged &>> 31) & ((1 << 20) - 1))) &>> 20
        case .singleRounding:
          rounded = (sum &+ (1 << 19)) &>> 20
        }
        Element.storeNarrowed(rounded, to: destination + channel)
        channel &+= 8
      }
    }
    while channel < source.channels {
      let sum =
        Int64(corners.topLeft[channel]) * Int64(weights.topLeft) + Int64(corners.bottomLeft[channel])
        * Int64(weights.bottomLeft) + Int64(corners.topRight[channel]) * Int64(weights.topRight)
        + Int64(corners.bottomRight[channel]) * Int64(weights.bottomRight)
      let value: Int64
      switch rounding {
      case .doubleRounding: value = (sum + (sum > 0 ? 1 << 19 : -(1 << 19))) / (1 << 20)
      case .singleRounding: value = (sum + (1 << 19)) >> 20
      }
      destination[channel] = Element(truncatingIfNeeded: value)
      channel &+= 1
    }
  }

  private func blendFloat(
    _ base: UnsafePointer<Element>, _ row: QuantizedBilinearTap<Float>, _ column: QuantizedBilinearTap<Float>,
    _ destination: UnsafeMutablePointer<Element>
  ) {
    let fractionY = row.position - Float(row.lower)
    let fractionX = column.position - Float(column.lower)
    for channel in 0..<source.channels {
      var sum = Float(corner(base, row.lower, column.lower, channel)) * (1 - fractionY) * (1 - fractionX)
      sum += Float(corner(base, row.upper, column.lower, channel)) * fractionY * (1 - fractionX)
      sum += Float(corner(base, row.lower, column.upper, channel)) * (1 - fractionY) * fractionX
      sum += Float(corner(base, row.upper, column.upper, channel)) * fractionY * fractionX
      destination[channel] = Element(truncatingIfNeeded: FixedPoint.truncatingConversion(sum + 0.5))
    }
  }
}

/// Builds the typed resize: the fixed-point interpolation for int8 and int16, float for uint8
/// (a closure formed where the element type is concrete).
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
    func taps<Weight>(_ axis: (Int, Int, Bool, Bool) -> [QuantizedBilinearTap<Weight>]) -> QuantizedBilinearTaps<Weight> {
      QuantizedBilinearTaps(
        rows: axis(source.height, outputHeight, alignCorners, halfPixelCenters),
        columns: axis(source.width, outputWidth, alignCorners, halfPixelCenters))
    }
    let isFloat = Element.self == UInt8.self
    let resize = TypedBilinearResize<Element>(
      source: source, outputHeight: outputHeight, fixedPoint: isFloat ? nil : taps(fixedPointTaps),
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
    try node.expect(inputs: 2, outputs: 1)
    input = try node.input(0)
    size = try node.input(1)
    output = try node.output(0)
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
