// REVERSE_V2: a StridedLayout of the input walking the reversed axes backwards.

extension StridedLayout {
  /// The view that reverses a dense tensor of `inputShape` along `axes` (normalized, distinct).
  static func reversal(inputShape: [Int], axes: Set<Int>) -> StridedLayout {
    var strides = denseStrides(inputShape)
    var offset = 0
    for axis in axes where inputShape[axis] > 0 {
      offset += (inputShape[axis] - 1) * strides[axis]
      strides[axis] = -strides[axis]
    }
    return StridedLayout(extents: inputShape, strides: strides, offset: offset)
  }
}

/// Validates REVERSE_V2 axes (entries may be negative) for a tensor of `rank` axes.
func reversedAxes(_ values: [Int], rank: Int) throws -> Set<Int> {
  var axes = Set<Int>()
  for value in values {
    let axis = try normalizedAxis(value, rank: rank, op: "REVERSE_V2")
    guard axes.insert(axis).inserted else {
      throw KernelError.invalid("REVERSE_V2: axis \(value) is listed twice in \(values)")
    }
  }
  return axes
}

// MARK: - Kernel

/// REVERSE_V2 along a constant list of axes, for every element type the copy routines move.
final class ReverseKernel: ViewCopyKernel {
  static let opName = "REVERSE_V2"
  let op = opName
  let input: RuntimeTensor
  let output: RuntimeTensor
  private let axes: RuntimeTensor
  private let elementSize: Int
  private(set) var copy: StridedCopy?

  init(node: Node) throws {
    (input, axes, output) = try node.twoInputsAndOutput()
    try requireSameType([input, output], op: Self.opName)
    try requireSameQuantization([input, output], op: Self.opName)
    elementSize = try movableElementSize(input, op: Self.opName)
  }

  func prepare(_ context: inout PrepareContext) throws {
    let values = try constantIntegers(axes, op: Self.opName, operand: "axis")
    let reversed = try reversedAxes(values, rank: input.shape.count)
    output.shape = input.shape
    copy = StridedCopy(.reversal(inputShape: input.shape, axes: reversed), elementSize: elementSize)
  }
}
