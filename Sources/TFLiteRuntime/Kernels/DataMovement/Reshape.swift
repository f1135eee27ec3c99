// RESHAPE, SQUEEZE and EXPAND_DIMS: the bytes stay as they are, only the shape changes.

import TFLiteFormat

/// RESHAPE's output shape: `requested` with at most one −1 inferred from the input's element count.
/// Zero-sized dimensions are allowed (a −1 next to a 0 becomes 0 when the input is empty).
func reshapedShape(inputShape: [Int], requested: [Int]) throws -> [Int] {
  let inputCount = try checkedElementCount(inputShape, op: "RESHAPE")
  let nonZeroInputCount = try checkedElementCount(inputShape.filter { $0 != 0 }, op: "RESHAPE")
  var shape = requested
  var inferredAxis: Int?
  for (axis, dimension) in requested.enumerated() where dimension < 0 {
    guard dimension == -1, inferredAxis == nil else {
      throw KernelError.invalid("RESHAPE: \(requested) may hold a single -1 and no other negative value")
    }
    inferredAxis = axis
  }
  let known = requested.filter { $0 >= 0 }
  let knownCount = try checkedElementCount(known, op: "RESHAPE")
  if let inferredAxis {
    // An empty input makes the free dimension 0 unless another dimension already is;
    // otherwise it is what the non-zero dimensions leave over.
    let nonZeroKnownCount = try checkedElementCount(known.filter { $0 != 0 }, op: "RESHAPE")
    shape[inferredAxis] = inputCount == 0 && knownCount != 0 ? 0 : nonZeroInputCount / nonZeroKnownCount
  }
  guard try checkedElementCount(shape, op: "RESHAPE") == inputCount else {
    throw KernelError.invalid("RESHAPE: \(inputShape) has \(inputCount) elements, \(requested) does not")
  }
  return shape
}

/// SQUEEZE's output shape: the listed axes (negative allowed; all size-1 axes when empty) removed.
func squeezedShape(inputShape: [Int], axes: [Int]) throws -> [Int] {
  let rank = inputShape.count
  var removed = [Bool](repeating: false, count: rank)
  if axes.isEmpty {
    for axis in 0..<rank where inputShape[axis] == 1 { removed[axis] = true }
  } else {
    for requested in axes {
      let axis = try normalizedAxis(requested, rank: rank, op: "SQUEEZE")
      guard inputShape[axis] == 1 else {
        throw KernelError.invalid("SQUEEZE: axis \(requested) of \(inputShape) has size \(inputShape[axis]), not 1")
      }
      removed[axis] = true
    }
  }
  return inputShape.indices.filter { !removed[$0] }.map { inputShape[$0] }
}

/// EXPAND_DIMS's output shape: a size-1 axis inserted at `axis` (in `[-rank-1, rank]`).
func expandedShape(inputShape: [Int], axis requested: Int) throws -> [Int] {
  let axis = try normalizedAxis(requested, rank: inputShape.count + 1, op: "EXPAND_DIMS")
  var shape = inputShape
  shape.insert(1, at: axis)
  return shape
}

// MARK: - Kernels

/// RESHAPE: the new shape comes from a constant int32 vector input or, without one, from the options.
final class ReshapeKernel: ByteCopyKernel {
  static let opName = "RESHAPE"
  let input: RuntimeTensor
  let output: RuntimeTensor
  private let shapeInput: RuntimeTensor?
  private let optionShape: [Int]

  init(node: Node) throws {
    let operands = try MovableOperands(node, inputs: 1, maxInputs: 2, op: Self.opName)
    (input, output) = (operands.input, operands.output)
    // As in TFLite, a shape operand counts only when it is a 1-D int32 tensor; otherwise the options rule.
    let candidate = node.optionalInput(1)
    shapeInput = candidate.flatMap { $0.type == .int32 && $0.shape.count == 1 ? $0 : nil }
    var requested: [Int] = []
    if case .reshapeOptions(let options) = node.options { requested = options.newShape.map(Int.init) }
    // Old converters wrote [0] for a scalar.
    optionShape = requested == [0] ? [] : requested
  }

  func prepare(_ context: inout PrepareContext) throws {
    let requested = try shapeInput.map { try constantIntegers($0, op: Self.opName, operand: "shape") } ?? optionShape
    output.shape = try reshapedShape(inputShape: input.shape, requested: requested)
  }
}

/// SQUEEZE: removes the listed size-1 axes (all of them when none are listed).
final class SqueezeKernel: ByteCopyKernel {
  static let opName = "SQUEEZE"
  let input: RuntimeTensor
  let output: RuntimeTensor
  private let axes: [Int]

  init(node: Node) throws {
    let operands = try MovableOperands(node, inputs: 1, op: Self.opName)
    (input, output) = (operands.input, operands.output)
    if case .squeezeOptions(let options) = node.options { axes = options.squeezeDims.map(Int.init) } else { axes = [] }
  }

  func prepare(_ context: inout PrepareContext) throws {
    output.shape = try squeezedShape(inputShape: input.shape, axes: axes)
  }
}

/// EXPAND_DIMS: inserts a size-1 axis at the position given by a constant int32/int64 scalar.
final class ExpandDimsKernel: ByteCopyKernel {
  static let opName = "EXPAND_DIMS"
  let input: RuntimeTensor
  let output: RuntimeTensor
  private let axis: RuntimeTensor

  init(node: Node) throws {
    let operands = try MovableOperands(node, inputs: 2, op: Self.opName)
    (input, output) = (operands.input, operands.output)
    axis = try node.input(1)
  }

  func prepare(_ context: inout PrepareContext) throws {
    let values = try constantIntegers(axis, op: Self.opName, operand: "axis")
    guard values.count == 1 else { throw KernelError.invalid("EXPAND_DIMS: axis must hold one value, got \(values)") }
    output.shape = try expandedShape(inputShape: input.shape, axis: values[0])
  }
}
