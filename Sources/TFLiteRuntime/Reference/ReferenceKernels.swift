// The reference kernels: what each TFLite operator computes, written as plain loops.
//
// Start here to learn what CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED, TRANSPOSE_CONV,
// BATCH_MATMUL, the pools, SOFTMAX and the elementwise operators compute, in float and in TFLite's
// integer arithmetic.
// Every kernel is a function of plain values: ``Reference/Tensor``s it reads (a shape and its
// values in row-major order), small parameter structs, and a ``Reference/Destination`` it writes
// its output to. Nothing here knows about models, graphs, memory planning or threads, and nothing
// is optimized: one output element at a time, in the order the definition reads. The optimized
// kernels (im2col and packed GEMM, SIMD) must give the same integer results bit for bit and the
// same float results up to summation order.
//
// As in TFLite, an operator has two steps. Its output-shape function (`conv2DOutputShape`, ...)
// is what the runtime's `prepare` calls: it checks the shapes and gives the output's. The kernel
// then reads the inputs where they are and writes the output in place: the runtime hands over its
// own tensors' memory (`.existing`), so running a node copies nothing; a test asks for a
// `.newTensor` instead and gets the result back.
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
  /// A tensor as the reference kernels read it: a shape and its values in row-major order.
  ///
  /// The values are either borrowed memory (the runtime hands its tensors' memory over as they
  /// are, so running a node copies nothing) or owned by the tensor (made from an array, or the
  /// result of a kernel asked for ``Destination/newTensor``).
  public struct Tensor<Element> {
    /// The dimensions, outermost first.
    public let shape: [Int]
    /// `shape.reduce(1, *)` values, the last dimension varying fastest.
    public let values: UnsafeBufferPointer<Element>
    /// The owner of `values` when the tensor owns them; nil for borrowed memory.
    private let storage: AnyObject?

    /// A tensor of `shape` holding a copy of `values`; throws unless the counts agree and no dimension is negative.
    public init(shape: [Int], values: [Element]) throws {
      try Reference.requireCount(values.count, for: shape)
      let storage = Storage<Element>(copying: values)
      self.init(shape: shape, values: UnsafeBufferPointer(storage.buffer), storage: storage)
    }

    /// A rank-1 tensor holding a copy of `values`.
    public init(vector values: [Element]) {
      let storage = Storage<Element>(copying: values)
      self.init(shape: [values.count], values: UnsafeBufferPointer(storage.buffer), storage: storage)
    }

    /// A tensor of `shape` reading `values` where they are, without copying them; the memory must
    /// stay valid and unchanged while the tensor is used. Throws unless the counts agree.
    public init(shape: [Int], borrowing values: UnsafeBufferPointer<Element>) throws {
      try Reference.requireCount(values.count, for: shape)
      self.init(shape: shape, values: values, storage: nil)
    }

    /// A tensor over `values`, kept alive by `storage`.
    fileprivate init(shape: [Int], values: UnsafeBufferPointer<Element>, storage: AnyObject?) {
      self.shape = shape
      self.values = values
      self.storage = storage
    }

    /// The dimensions as NHWC, or an error naming `role` when the tensor is not of rank 4.
    func imageShape(_ role: String) throws -> ImageShape { try Reference.imageShape(shape, role) }
  }

  /// A tensor a reference kernel writes: its output, of the shape the operator gives.
  public struct MutableTensor<Element> {
    /// The values the kernel writes, in row-major order.
    public let values: UnsafeMutableBufferPointer<Element>
    /// The same memory, read-only: what a kernel returns once it has written every element.
    public let finished: Tensor<Element>
    /// The dimensions, outermost first.
    public var shape: [Int] { finished.shape }

    /// A tensor of `shape` writing into `values` where they are (the runtime's output memory),
    /// which must stay valid while the kernel runs. Throws unless the counts agree.
    public init(shape: [Int], borrowing values: UnsafeMutableBufferPointer<Element>) throws {
      self.init(values: values, finished: try Tensor(shape: shape, borrowing: UnsafeBufferPointer(values)))
    }

    /// Writable `values` and their read-only view `finished`.
    fileprivate init(values: UnsafeMutableBufferPointer<Element>, finished: Tensor<Element>) {
      self.values = values
      self.finished = finished
    }

    /// Element `index` (row-major).
    @inline(__always)
    public subscript(index: Int) -> Element {
      get { values[index] }
      nonmutating set { values[index] = newValue }
    }
  }

  /// Where a reference kernel writes its output.
  public enum Destination<Element: BitwiseCopyable> {
    /// New memory, owned by the tensor the kernel returns (for tests and other callers with no memory of their own).
    case newTensor
    /// Existing memory (the runtime's output tensor), whose shape must be the one the operator gives.
    case existing(MutableTensor<Element>)

    /// The tensor to write an output of `shape` into; throws when existing memory has another shape.
    func tensor(shape: [Int]) throws -> MutableTensor<Element> {
      switch self {
      case .newTensor:
        let storage = try Storage<Element>(zeroed: Reference.elementCount(shape))
        let finished = Tensor(shape: shape, values: UnsafeBufferPointer(storage.buffer), storage: storage)
        return MutableTensor(values: storage.buffer, finished: finished)
      case .existing(let output):
        guard output.shape == shape else {
          throw Error("the output has shape \(output.shape), the operator gives \(shape)")
        }
        return output
      }
    }
  }

  /// Memory owned by a tensor, freed with it.
  private final class Storage<Element> {
    /// The values.
    let buffer: UnsafeMutableBufferPointer<Element>

    /// A copy of `values`.
    init(copying values: [Element]) {
      buffer = .allocate(capacity: values.count)
      _ = buffer.initialize(from: values)
    }

    /// `count` elements whose bytes are all zero (0 for every numeric type).
    init(zeroed count: Int) where Element: BitwiseCopyable {
      let bytes = UnsafeMutableRawBufferPointer.allocate(
        byteCount: count * MemoryLayout<Element>.stride, alignment: MemoryLayout<Element>.alignment)
      bytes.initializeMemory(as: UInt8.self, repeating: 0)
      buffer = bytes.bindMemory(to: Element.self)
    }

    deinit {
      buffer.deinitialize()
      buffer.deallocate()
    }
  }

  /// Throws unless `shape` has no negative dimension and `count` elements.
  static func requireCount(_ count: Int, for shape: [Int]) throws {
    guard shape.allSatisfy({ $0 >= 0 }) else { throw Error("shape \(shape) has a negative dimension") }
    let needed = try elementCount(shape)
    guard count == needed else { throw Error("shape \(shape) needs \(needed) values, got \(count)") }
  }

  /// `shape` as NHWC, or an error naming `role` when it is not of rank 4.
  static func imageShape(_ shape: [Int], _ role: String) throws -> ImageShape {
    guard shape.count == 4 else { throw Error("\(role) must have rank 4 (NHWC), got shape \(shape)") }
    return ImageShape(batch: shape[0], height: shape[1], width: shape[2], channels: shape[3])
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

/// A tensor's values are its own or memory the runtime vouches for, and read-only either way.
extension Reference.Tensor: @unchecked Sendable where Element: Sendable {}
