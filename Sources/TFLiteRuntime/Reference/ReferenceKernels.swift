// The reference kernels: what each TFLite operator computes, written as plain loops.
//
// Start here to learn what CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED, TRANSPOSE_CONV,
// BATCH_MATMUL, the pools, SOFTMAX and the elementwise operators compute, in float and in TFLite's
// integer arithmetic.
// Every function is a pure function of plain values: a ``Reference/Tensor`` (a shape and its
// values in row-major order) and small parameter structs. Nothing here knows about models, graphs,
// memory planning or threads, and nothing is optimized: one output element at a time, in the order
// the definition reads. The optimized kernels (im2col and packed GEMM, SIMD) must give the same
// integer results bit for bit and the same float results up to summation order.
//
// The layout is NHWC for images (`[batch, height, width, channels]`) as in TFLite. The fixed-point
// arithmetic of the integer forms (quantized multipliers, rounding, look-up tables) is not written
// here: it is called from `Quantization/`, its one home.
//
// Files: `ReferenceKernels.swift` (tensors, errors, clamps), `ReferenceGeometry.swift` (windows,
// padding, broadcasting), `ReferenceArithmetic.swift` (float and quantized multiply-accumulate),
// then one file per operator family: `ReferenceConvolution.swift`, `ReferenceFullyConnected.swift`,
// `ReferenceTransposeConvolution.swift`, `ReferenceBatchMatMul.swift`, `ReferencePooling.swift`,
// `ReferenceSoftmax.swift`, `ReferenceElementwise.swift`, `ReferenceActivations.swift`.
import TFLiteLinearAlgebra


/// The reference kernels: plain, loop-by-loop implementations of TFLite operators.
public enum Reference {}

extension Reference {
  /// A tensor as the reference kernels see it: a shape and its values in row-major order.
  public struct Tensor<Element>: Sendable where Element: Sendable {
    /// The dimensions, outermost first.
    public let shape: [Int]
    /// `shape.reduce(1, *)` values, the last dimension varying fastest.
    public let values: [Element]

    /// A tensor of `shape` holding `values`; throws unless the counts agree and no dimension is negative.
    public init(shape: [Int], values: [Element]) throws {
      guard shape.allSatisfy({ $0 >= 0 }) else { throw Error("shape \(shape) has a negative dimension") }
      let count = try Reference.elementCount(shape)
      guard values.count == count else {
        throw Error("shape \(shape) needs \(count) values, got \(values.count)")
      }
      self.shape = shape
      self.values = values
    }

    /// The dimensions as NHWC, or an error naming `role` when the tensor is not of rank 4.
    func imageShape(_ role: String) throws -> ImageShape {
      guard shape.count == 4 else { throw Error("\(role) must have rank 4 (NHWC), got shape \(shape)") }
      return ImageShape(batch: shape[0], height: shape[1], width: shape[2], channels: shape[3])
    }
  }

  /// The four dimensions of an NHWC image (or of an OHWI filter read as one).
  public struct ImageShape: Sendable, Hashable {
    /// N: the number of images (or output channels of a filter).
    public var batch: Int
    /// H.
    public var height: Int
    /// W.
    public var width: Int
    /// C: values per pixel.
    public var channels: Int

    /// A shape from its four dimensions.
    public init(batch: Int, height: Int, width: Int, channels: Int) {
      self.batch = batch
      self.height = height
      self.width = width
      self.channels = channels
    }

    /// The shape as an array, `[N, H, W, C]`.
    public var dimensions: [Int] { [batch, height, width, channels] }

    /// The row-major index of element (n, y, x, c).
    @inline(__always)
    public func index(_ n: Int, _ y: Int, _ x: Int, _ c: Int) -> Int {
      ((n * height + y) * width + x) * channels + c
    }
  }

  /// Why a reference kernel refused its arguments (shapes that do not fit, bad parameters).
  public struct Error: Swift.Error, CustomStringConvertible, Sendable {
    /// What is wrong.
    public let description: String
    /// An error saying `description`.
    public init(_ description: String) { self.description = description }
  }

  /// The number of elements of `shape`, or an error when it does not fit in an `Int`.
  static func elementCount(_ shape: [Int]) throws -> Int {
    try shape.reduce(1) { count, dimension in
      let (product, overflow) = count.multipliedReportingOverflow(by: dimension)
      guard !overflow else { throw Error("shape \(shape) has too many elements") }
      return product
    }
  }

  /// The real-valued clamp of a fused activation, as TFLite's float kernels apply it: with no
  /// activation the value is still clamped to the finite float range (`±Float.greatestFiniteMagnitude`).
  public static func floatRange(_ activation: FusedActivation) -> (lower: Float, upper: Float) {
    switch activation {
    case .none: (-.greatestFiniteMagnitude, .greatestFiniteMagnitude)
    case .relu: (0, .greatestFiniteMagnitude)
    case .relu6: (0, 6)
    case .reluN1To1: (-1, 1)
    }
  }

  /// `min(max(value, lower), upper)` written as C++'s `std::min(std::max(...))`: a NaN value stays NaN.
  @inline(__always)
  static func clamp(_ value: Float, _ range: (lower: Float, upper: Float)) -> Float {
    let raised = value < range.lower ? range.lower : value
    return range.upper < raised ? range.upper : raised
  }

  /// The raw values an integer type holds, as Int32 (int8: −128...127, uint8: 0...255, int16: −32768...32767).
  static func rawRange<Raw: FixedWidthInteger>(of type: Raw.Type) -> ClosedRange<Int32> {
    Int32(Raw.min)...Int32(Raw.max)
  }
}
