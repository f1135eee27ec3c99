// The arithmetic of the weighted operators (CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED,
// TRANSPOSE_CONV, BATCH_MATMUL): what happens to each input × weight product and to each finished
// sum. The loops over pixels and taps are written once per operator, generic over this arithmetic;
// the float and the integer forms differ only here.
//
// Float: the products are summed in float, the bias is added and the fused activation clamps.
//
// Integer (TFLite's quantized kernels): a real value is scale · (raw − zeroPoint). Each product
// is (input − input zero point) · (weight − weight zero point) in integers. The sum plus the
// int32 (or int64) bias stands for input_scale · weight_scale · sum in real terms, so it is
// rescaled to the output by the real multiplier input_scale · weight_scale / output_scale (one per
// output channel for per-channel weights), formed in double as TFLite does and applied as a
// fixed-point ``QuantizedMultiplier``. Then the output zero point is added and the value is clamped
// to the fused activation's range, itself quantized with the output's scale and zero point.
//
// Which integer sum and rescale LiteRT uses (``Reference/Accumulation``):
// - 8-bit activations sum in 32 bits (wrapping) and rescale with two roundings (a rounding
//   doubling high multiply, then a rounding right shift: `RoundingPolicy.doubleRounding`);
// - 16-bit activations with an int64 bias (or none) sum in 64 bits and use the 64-bit rescale
//   (the multiplier rounded to 16 bits, one rounding shift); with an int32 bias they sum in 32 bits;
// - FULLY_CONNECTED (LiteRT 2.3's reference kernel) rescales a 32-bit sum with one rounding, for
//   8- and 16-bit activations alike.
import TFLiteLinearAlgebra


extension Reference {
  /// What a weighted operator does with each product and each finished sum (float or integer).
  public protocol WeightedArithmetic: Sendable {
    /// The input element type.
    associatedtype Input
    /// The weight element type.
    associatedtype Weight
    /// The running sum.
    associatedtype Accumulator
    /// The output element type.
    associatedtype Output: BitwiseCopyable
    /// The empty sum.
    var zero: Accumulator { get }
    /// `sum` plus the product of one input and one weight feeding output channel `channel`.
    func accumulate(_ sum: Accumulator, _ input: Input, _ weight: Weight, channel: Int) -> Accumulator
    /// The output value of channel `channel` for a finished `sum`: bias, rescale, activation.
    func finish(_ sum: Accumulator, channel: Int) -> Output
    /// Throws unless the arithmetic has parameters (bias, multipliers) for `outputChannels` channels.
    func check(outputChannels: Int) throws
  }

  /// Float arithmetic: products summed in float, then bias and activation clamp.
  public struct FloatArithmetic: WeightedArithmetic {
    /// One bias per output channel, or nil for none.
    public let bias: Tensor<Float>?
    /// The fused activation's bounds.
    public let range: (lower: Float, upper: Float)

    /// Arithmetic for `bias` (nil: none) and a fused activation.
    public init(bias: Tensor<Float>?, activation: FusedActivation) {
      self.init(bias: bias, range: Reference.floatRange(activation))
    }

    /// Arithmetic for `bias` (nil: none) clamping to `range` (BATCH_MATMUL: no clamp at all).
    public init(bias: Tensor<Float>?, range: (lower: Float, upper: Float)) {
      self.bias = bias
      self.range = range
    }

    /// Arithmetic for the bias values `bias` (nil: none) clamping to `range`.
    public init(bias: [Float]?, range: (lower: Float, upper: Float)) {
      self.init(bias: bias.map(Tensor.init(vector:)), range: range)
    }

    /// 0.
    public var zero: Float { 0 }

    /// `sum + input · weight`.
    @inline(__always)
    public func accumulate(_ sum: Float, _ input: Float, _ weight: Float, channel: Int) -> Float {
      sum + input * weight
    }

    /// `clamp(sum + bias[channel])`.
    @inline(__always)
    public func finish(_ sum: Float, channel: Int) -> Float {
      Reference.clamp(sum + (bias?.values[channel] ?? 0), range)
    }

    /// Throws unless the bias is absent or has one value per output channel.
    public func check(outputChannels: Int) throws {
      if let bias, bias.values.count != outputChannels {
        throw Error("bias has \(bias.values.count) values for \(outputChannels) output channels")
      }
    }
  }

  /// The quantization of a tensor with one scale: real = scale · (raw − zeroPoint).
  public struct QuantizationParameters: Sendable, Hashable {
    /// The real value of one raw step.
    public var scale: Float
    /// The raw value that stands for real 0.
    public var zeroPoint: Int32

    /// Parameters from a scale and a zero point.
    public init(scale: Float, zeroPoint: Int32) {
      self.scale = scale
      self.zeroPoint = zeroPoint
    }
  }

  /// The quantization of weights: one scale and zero point for the tensor, or one per output
  /// channel (per-channel int8 weights).
  public struct ChannelQuantization: Sendable, Hashable {
    /// One scale, or one per output channel.
    public var scales: [Float]
    /// One zero point, or one per output channel.
    public var zeroPoints: [Int32]

    /// Parameters from scales and zero points.
    public init(scales: [Float], zeroPoints: [Int32]) {
      self.scales = scales
      self.zeroPoints = zeroPoints
    }

    /// The scale of output channel `channel`.
    func scale(_ channel: Int) -> Float { scales.count == 1 ? scales[0] : scales[channel] }
    /// The zero point of output channel `channel`.
    func zeroPoint(_ channel: Int) -> Int32 { zeroPoints.count == 1 ? zeroPoints[0] : zeroPoints[channel] }
  }

  /// How an integer weighted operator sums its products and rescales the sum (see the file header).
  public enum Accumulation: Sendable, Hashable {
    /// The sum wraps in 32 bits and is rescaled by `QuantizedMultiplier.apply(_:rounding:)`, rounding so.
    case int32(RoundingPolicy)
    /// The sum is kept in 64 bits and rescaled by the 64-bit `QuantizedMultiplier.apply(_:)`.
    case int64

    /// What LiteRT's convolutions (CONV_2D, DEPTHWISE_CONV_2D, TRANSPOSE_CONV) use: 64 bits for
    /// 16-bit activations unless the bias is int32, 32 bits with `rounding` otherwise.
    public static func convolution(sixteenBitInput: Bool, int32Bias: Bool, rounding: RoundingPolicy) -> Accumulation {
      sixteenBitInput && !int32Bias ? .int64 : .int32(rounding)
    }

    /// What LiteRT 2.3's reference FULLY_CONNECTED uses: a 32-bit sum rescaled with one rounding.
    public static let fullyConnected = Accumulation.int32(.singleRounding)
  }

  /// Everything an integer weighted operator needs besides its tensors.
  public struct WeightedQuantization: Sendable, Hashable {
    /// The input's quantization.
    public var input: QuantizationParameters
    /// The weights' quantization (per tensor or per output channel).
    public var weights: ChannelQuantization
    /// The output's quantization.
    public var output: QuantizationParameters
    /// The fused activation, clamped in raw output values.
    public var activation: FusedActivation
    /// How products are summed and the sum rescaled.
    public var accumulation: Accumulation
    /// How the multipliers are formed (``RoundingPolicy/singleRounding`` caps their exponent at 30).
    public var rounding: RoundingPolicy

    /// Parameters of an integer weighted operator.
    public init(
      input: QuantizationParameters, weights: ChannelQuantization, output: QuantizationParameters,
      activation: FusedActivation, accumulation: Accumulation, rounding: RoundingPolicy = .doubleRounding
    ) {
      self.input = input
      self.weights = weights
      self.output = output
      self.activation = activation
      self.accumulation = accumulation
      self.rounding = rounding
    }
  }

  /// TFLite's integer arithmetic for weighted operators (see the file header).
  public struct QuantizedArithmetic<
    Input: FixedWidthInteger & Sendable & BitwiseCopyable, Weight: FixedWidthInteger & Sendable
  >: WeightedArithmetic
  {
    /// The raw output has the input's type.
    public typealias Output = Input
    /// Minus the input zero point: added to every raw input.
    let inputOffset: Int32
    /// Minus each output channel's weight zero point.
    let weightOffsets: [Int32]
    /// One bias per output channel (zero when there is none).
    let bias: [Int64]
    /// One rescale per output channel.
    let multipliers: [QuantizedMultiplier]
    /// The output zero point.
    let outputZeroPoint: Int32
    /// The fused activation's range in raw output values.
    let clamp: ClosedRange<Int32>
    /// How sums are kept and rescaled.
    let accumulation: Accumulation

    /// The arithmetic of `outputChannels` channels; throws when the scales, zero points or bias do
    /// not fit the channel count or a scale is not finite and positive.
    public init(_ quantization: WeightedQuantization, bias: [Int64]?, outputChannels: Int) throws {
      let weights = quantization.weights
      guard [1, outputChannels].contains(weights.scales.count),
        [1, weights.scales.count].contains(weights.zeroPoints.count)
      else {
        throw Error(
          "weights have \(weights.scales.count) scales and \(weights.zeroPoints.count) zero points "
            + "for \(outputChannels) output channels")
      }
      let scales = [quantization.input.scale, quantization.output.scale] + weights.scales
      guard scales.allSatisfy({ $0.isFinite && $0 > 0 }) else {
        throw Error("scales must be finite and positive: \(scales)")
      }
      if let bias, bias.count != outputChannels {
        throw Error("bias has \(bias.count) values for \(outputChannels) output channels")
      }
      inputOffset = -quantization.input.zeroPoint
      weightOffsets = (0..<outputChannels).map { -weights.zeroPoint($0) }
      self.bias = bias ?? [Int64](repeating: 0, count: outputChannels)
      multipliers = (0..<outputChannels).map { channel in
        let real = Double(quantization.input.scale) * Double(weights.scale(channel)) / Double(quantization.output.scale)
        return QuantizedMultiplier(real, rounding: quantization.rounding)
      }
      outputZeroPoint = quantization.output.zeroPoint
      clamp = FixedPoint.activationRange(
        quantization.activation, scale: quantization.output.scale, zeroPoint: Int(quantization.output.zeroPoint),
        typeRange: Reference.rawRange(of: Input.self))
      accumulation = quantization.accumulation
    }

    /// 0.
    public var zero: Int64 { 0 }

    /// `sum + (input − input zero point) · (weight − weight zero point)`.
    @inline(__always)
    public func accumulate(_ sum: Int64, _ input: Input, _ weight: Weight, channel: Int) -> Int64 {
      sum &+ Int64(Int32(input) &+ inputOffset) &* Int64(Int32(weight) &+ weightOffsets[channel])
    }

    /// The raw output: (sum + bias) rescaled, plus the output zero point, clamped.
    @inline(__always)
    public func finish(_ sum: Int64, channel: Int) -> Input {
      let total = sum &+ bias[channel]
      let rescaled: Int32
      switch accumulation {
      case .int32(let rounding):
        // A 32-bit accumulator wraps: keep the low 32 bits of the sum.
        rescaled = multipliers[channel].apply(Int32(truncatingIfNeeded: total), rounding: rounding)
      case .int64:
        rescaled = multipliers[channel].apply(total)
      }
      let value = rescaled &+ outputZeroPoint
      return Input(truncatingIfNeeded: min(max(value, clamp.lowerBound), clamp.upperBound))
    }

    /// Throws unless the arithmetic was made for `outputChannels` channels.
    public func check(outputChannels: Int) throws {
      guard multipliers.count == outputChannels else {
        throw Error(
          "quantized arithmetic for \(multipliers.count) channels used with \(outputChannels) output channels")
      }
    }
  }
}
