// AVERAGE_POOL_2D, MAX_POOL_2D and L2_POOL_2D, as TFLite's reference kernels compute them
// (`reference/pooling.h`, `integer_ops/pooling.h`).
//
// Input [N, H, W, C] → output [N, OH, OW, C]: each output value summarizes one channel of a
// filterHeight × filterWidth window (no dilation). Only the window's taps inside the input take
// part: near a SAME-padded edge the average divides by the number of real values, not by the
// window size. Then the fused activation clamps.
//
// The integer pools work on raw values, since TFLite requires the input and output to share their
// scale and zero point: the average sums in int32 and divides rounding half away from zero; the
// maximum compares raw values. The clamp is the fused activation's range in raw output values.
import TFLiteLinearAlgebra


extension Reference {
  /// The size and movement of a pooling window.
  public struct PoolParameters: Sendable, Hashable {
    /// Window rows.
    public var filterHeight: Int
    /// Window columns.
    public var filterWidth: Int
    /// Strides and padding (dilations must be 1).
    public var window: WindowParameters

    /// A window of `filterHeight` × `filterWidth` moving as `window` says.
    public init(filterHeight: Int, filterWidth: Int, window: WindowParameters) {
      self.filterHeight = filterHeight
      self.filterWidth = filterWidth
      self.window = window
    }
  }

  /// Float AVERAGE_POOL_2D: the mean of the window's values inside the input.
  public static func averagePool2D(
    input: Tensor<Float>, parameters: PoolParameters, activation: FusedActivation,
    into destination: Destination<Float> = .newTensor
  ) throws -> Tensor<Float> {
    let range = floatRange(activation)
    return try pool2D(input: input, parameters: parameters, into: destination) { values in
      var sum: Float = 0
      for value in values { sum += value }
      return clamp(sum / Float(values.count), range)
    }
  }

  /// Float MAX_POOL_2D: the largest of the window's values inside the input.
  public static func maxPool2D(
    input: Tensor<Float>, parameters: PoolParameters, activation: FusedActivation,
    into destination: Destination<Float> = .newTensor
  ) throws -> Tensor<Float> {
    let range = floatRange(activation)
    return try pool2D(input: input, parameters: parameters, into: destination) { values in
      var largest = -Float.greatestFiniteMagnitude
      for value in values { largest = max(largest, value) }
      return clamp(largest, range)
    }
  }

  /// Float L2_POOL_2D: the square root of the mean of the squares of the window's values.
  public static func l2Pool2D(
    input: Tensor<Float>, parameters: PoolParameters, activation: FusedActivation,
    into destination: Destination<Float> = .newTensor
  ) throws -> Tensor<Float> {
    let range = floatRange(activation)
    return try pool2D(input: input, parameters: parameters, into: destination) { values in
      var sumOfSquares: Float = 0
      for value in values { sumOfSquares += value * value }
      return clamp((sumOfSquares / Float(values.count)).squareRoot(), range)
    }
  }

  /// Integer AVERAGE_POOL_2D (int8, uint8, int16; input and output share their quantization):
  /// the int32 sum divided by the count, rounding half away from zero, clamped.
  public static func averagePool2D<Raw: FixedWidthInteger & Sendable & BitwiseCopyable>(
    input: Tensor<Raw>, parameters: PoolParameters, activation: FusedActivation, output: QuantizationParameters,
    into destination: Destination<Raw> = .newTensor
  ) throws -> Tensor<Raw> {
    let clamp = quantizedClamp(activation, output: output, type: Raw.self)
    return try pool2D(input: input, parameters: parameters, into: destination) { values in
      var sum: Int32 = 0
      for value in values { sum &+= Int32(value) }
      let count = Int32(values.count)
      // Add (or, for a negative sum, subtract) half the count before the truncating division.
      let average = (sum > 0 ? sum &+ count / 2 : sum &- count / 2) / count
      return Raw(truncatingIfNeeded: min(max(average, clamp.lowerBound), clamp.upperBound))
    }
  }

  /// Integer MAX_POOL_2D (int8, uint8, int16; input and output share their quantization): the
  /// largest raw value, clamped.
  public static func maxPool2D<Raw: FixedWidthInteger & Sendable & BitwiseCopyable>(
    input: Tensor<Raw>, parameters: PoolParameters, activation: FusedActivation, output: QuantizationParameters,
    into destination: Destination<Raw> = .newTensor
  ) throws -> Tensor<Raw> {
    let clamp = quantizedClamp(activation, output: output, type: Raw.self)
    return try pool2D(input: input, parameters: parameters, into: destination) { values in
      var largest = Int32(Raw.min)
      for value in values { largest = max(largest, Int32(value)) }
      return Raw(truncatingIfNeeded: min(max(largest, clamp.lowerBound), clamp.upperBound))
    }
  }

  /// The fused activation's range in raw values of `type` with the output's quantization.
  static func quantizedClamp<Raw: FixedWidthInteger>(
    _ activation: FusedActivation, output: QuantizationParameters, type: Raw.Type
  ) -> ClosedRange<Int32> {
    FixedPoint.activationRange(
      activation, scale: output.scale, zeroPoint: Int(output.zeroPoint), typeRange: rawRange(of: Raw.self))
  }

  /// The input's axes under the pooling window, checked, and the output shape.
  static func poolShapes(input: [Int], parameters: PoolParameters) throws -> (
    input: ImageShape, rows: Axis, columns: Axis, output: ImageShape
  ) {
    let inputShape = try imageShape(input, "pooling input")
    guard parameters.window.dilationHeight == 1, parameters.window.dilationWidth == 1 else {
      throw Error("pooling windows have no dilation")
    }
    let (rows, columns) = try parameters.window.axes(
      height: inputShape.height, width: inputShape.width, filterHeight: parameters.filterHeight,
      filterWidth: parameters.filterWidth)
    let outputShape = ImageShape(
      batch: inputShape.batch, height: rows.outputSize, width: columns.outputSize, channels: inputShape.channels)
    return (inputShape, rows, columns, outputShape)
  }

  /// The output shape of AVERAGE_POOL_2D, MAX_POOL_2D or L2_POOL_2D on an input of shape `input`.
  public static func pool2DOutputShape(input: [Int], parameters: PoolParameters) throws -> [Int] {
    try poolShapes(input: input, parameters: parameters).output.dimensions
  }

  /// The pooling loops: for each output element, the window's values inside the input (in row
  /// order), summarized by `reduce`. A window with no value inside the input is an error.
  static func pool2D<Element: BitwiseCopyable>(
    input: Tensor<Element>, parameters: PoolParameters, into destination: Destination<Element>,
    reduce: ([Element]) -> Element
  ) throws -> Tensor<Element> {
    let (inputShape, rows, columns, outputShape) = try poolShapes(input: input.shape, parameters: parameters)
    let output = try destination.tensor(shape: outputShape.dimensions)
    var window: [Element] = []
    for n in 0..<outputShape.batch {
      for y in 0..<outputShape.height {
        for x in 0..<outputShape.width {
          for c in 0..<outputShape.channels {
            window.removeAll(keepingCapacity: true)
            for ky in 0..<parameters.filterHeight {
              let inputY = rows.inputPosition(output: y, tap: ky)
              guard rows.contains(inputY) else { continue }
              for kx in 0..<parameters.filterWidth {
                let inputX = columns.inputPosition(output: x, tap: kx)
                guard columns.contains(inputX) else { continue }
                window.append(input.values[inputShape.index(n, inputY, inputX, c)])
              }
            }
            guard !window.isEmpty else {
              throw Error("pooling window at output (\(y), \(x)) covers no input value (input \(input.shape))")
            }
            output[outputShape.index(n, y, x, c)] = reduce(window)
          }
        }
      }
    }
    return output.finished
  }
}
