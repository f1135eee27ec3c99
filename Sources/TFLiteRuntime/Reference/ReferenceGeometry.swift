// Where a window reads and how shapes broadcast, by TFLite's formulas.
//
// A window (a convolution filter or a pooling window) slides over one spatial axis:
// - its effective size is (filter − 1) · dilation + 1: a dilated filter skips input values;
// - SAME padding gives ceil(input / stride) outputs, VALID gives ceil((input − effective + 1) / stride);
// - the padding needed, (output − 1) · stride + effective − input (never negative), is split with
//   the smaller half before the data (TFLite's `ComputePaddingHeightWidth`: an odd total puts the
//   extra element after);
// - output position o, filter tap k reads input position o · stride − paddingBefore + k · dilation;
//   a position outside the input reads nothing (it is not a zero that takes part in an average).
//
// Broadcasting (ADD, SUB, MUL): shapes are aligned on their last dimension, missing leading
// dimensions count as 1, and every dimension pair must be equal or contain a 1, which repeats.

extension Reference {
  /// SAME or VALID, the two padding schemes of TFLite's windowed operators.
  public enum Padding: Sendable, Hashable {
    /// Pad so that every input position is covered: ceil(input / stride) outputs.
    case same
    /// No padding: only windows that lie wholly inside the input.
    case valid
  }

  /// How a window moves over the two spatial axes of an image.
  public struct WindowParameters: Sendable, Hashable {
    /// Step between outputs along the height.
    public var strideHeight: Int
    /// Step between outputs along the width.
    public var strideWidth: Int
    /// Spacing of filter taps along the height (1: adjacent).
    public var dilationHeight: Int
    /// Spacing of filter taps along the width.
    public var dilationWidth: Int
    /// SAME or VALID.
    public var padding: Padding

    /// Parameters for strides, dilations (default 1) and padding.
    public init(
      strideHeight: Int, strideWidth: Int, dilationHeight: Int = 1, dilationWidth: Int = 1, padding: Padding
    ) {
      self.strideHeight = strideHeight
      self.strideWidth = strideWidth
      self.dilationHeight = dilationHeight
      self.dilationWidth = dilationWidth
      self.padding = padding
    }

    /// The geometry of both axes for an input of `height` × `width` and a filter of
    /// `filterHeight` × `filterWidth`.
    func axes(height: Int, width: Int, filterHeight: Int, filterWidth: Int) throws -> (Axis, Axis) {
      (
        try Axis(
          inputSize: height, filterSize: filterHeight, stride: strideHeight, dilation: dilationHeight,
          padding: padding),
        try Axis(
          inputSize: width, filterSize: filterWidth, stride: strideWidth, dilation: dilationWidth, padding: padding)
      )
    }
  }

  /// A window sliding along one axis: the output size and where each output reads.
  public struct Axis: Sendable, Hashable {
    /// Input positions along the axis.
    public let inputSize: Int
    /// Filter taps along the axis.
    public let filterSize: Int
    /// Step between outputs.
    public let stride: Int
    /// Spacing of taps.
    public let dilation: Int
    /// Output positions along the axis.
    public let outputSize: Int
    /// Padding positions before the first input value.
    public let paddingBefore: Int

    /// The geometry of one axis by TFLite's formulas (see the file header).
    public init(inputSize: Int, filterSize: Int, stride: Int, dilation: Int, padding: Padding) throws {
      let limit = Int(Int32.max)
      guard (0...limit).contains(inputSize), (1...limit).contains(filterSize), (1...limit).contains(stride),
        (1...limit).contains(dilation)
      else {
        throw Error(
          "window needs input ≥ 0, filter ≥ 1, stride ≥ 1 and dilation ≥ 1 (all below 2^31); "
            + "got input \(inputSize), filter \(filterSize), stride \(stride), dilation \(dilation)")
      }
      // Below 2^62: no sum or product of these sizes overflows.
      let effectiveSize = (filterSize - 1) * dilation + 1
      switch padding {
      case .same: outputSize = (inputSize + stride - 1) / stride
      case .valid: outputSize = max(0, (inputSize - effectiveSize + stride) / stride)
      }
      let totalPadding = max(0, (outputSize - 1) * stride + effectiveSize - inputSize)
      self.inputSize = inputSize
      self.filterSize = filterSize
      self.stride = stride
      self.dilation = dilation
      paddingBefore = totalPadding / 2
    }

    /// The input position that output `output`'s tap `tap` reads (may lie outside 0..<inputSize).
    @inline(__always)
    public func inputPosition(output: Int, tap: Int) -> Int {
      output * stride - paddingBefore + tap * dilation
    }

    /// True when `position` is inside the input.
    @inline(__always)
    public func contains(_ position: Int) -> Bool { position >= 0 && position < inputSize }
  }

  /// The broadcast of two shapes: the output shape and, for each output element, the element of
  /// each input it reads.
  public struct Broadcast: Sendable, Hashable {
    /// The output shape.
    public let shape: [Int]
    /// For each output dimension, how far the left input's index moves per step (0 where it repeats).
    let lhsStrides: [Int]
    /// The same for the right input.
    let rhsStrides: [Int]

    /// Broadcasts `lhs` against `rhs`; throws when a dimension pair is unequal and contains no 1.
    public init(_ lhs: [Int], _ rhs: [Int]) throws {
      let rank = max(lhs.count, rhs.count)
      let left = [Int](repeating: 1, count: rank - lhs.count) + lhs
      let right = [Int](repeating: 1, count: rank - rhs.count) + rhs
      shape = try zip(left, right).map { a, b in
        guard a == b || a == 1 || b == 1 else { throw Error("shapes \(lhs) and \(rhs) do not broadcast") }
        return a == 1 ? b : a
      }
      _ = try Reference.elementCount(shape)
      lhsStrides = Self.strides(left)
      rhsStrides = Self.strides(right)
    }

    /// Row-major strides of `shape`, with 0 for each dimension of size 1 (it repeats).
    private static func strides(_ shape: [Int]) -> [Int] {
      var strides = [Int](repeating: 0, count: shape.count)
      var step = 1
      for dimension in shape.indices.reversed() {
        strides[dimension] = shape[dimension] == 1 ? 0 : step
        step *= shape[dimension]
      }
      return strides
    }

    /// The indices into the left and right inputs of output element `index`.
    public func inputIndices(of index: Int) -> (lhs: Int, rhs: Int) {
      var remainder = index
      var lhs = 0
      var rhs = 0
      for dimension in shape.indices.reversed() {
        let coordinate = remainder % shape[dimension]
        remainder /= shape[dimension]
        lhs += coordinate * lhsStrides[dimension]
        rhs += coordinate * rhsStrides[dimension]
      }
      return (lhs, rhs)
    }
  }
}
