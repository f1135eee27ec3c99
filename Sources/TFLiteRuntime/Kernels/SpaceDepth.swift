// DEPTH_TO_SPACE and SPACE_TO_DEPTH: both are the transpose [0, 1, 3, 2, 4, 5] of a 6-D view of NHWC data.

import TFLiteFormat

/// The view and output shape of DEPTH_TO_SPACE: channel blocks of `blockSize²` move into
/// `blockSize × blockSize` spatial tiles.
func depthToSpaceLayout(inputShape: [Int], blockSize: Int) throws -> (layout: StridedLayout, outputShape: [Int]) {
  guard inputShape.count == 4 else { throw KernelError.invalid("DEPTH_TO_SPACE: input must be 4-D, got \(inputShape)") }
  guard blockSize > 0, inputShape[3] % (blockSize * blockSize) == 0 else {
    throw KernelError.invalid("DEPTH_TO_SPACE: \(inputShape[3]) channels are not divisible by block size \(blockSize)²")
  }
  let (batches, height, width) = (inputShape[0], inputShape[1], inputShape[2])
  let depth = inputShape[3] / (blockSize * blockSize)
  let view = [batches, height, width, blockSize, blockSize, depth]
  let outputShape = [batches, height * blockSize, width * blockSize, depth]
  _ = try checkedElementCount(outputShape, op: "DEPTH_TO_SPACE")
  return (StridedLayout.transpose(inputShape: view, permutation: [0, 1, 3, 2, 4, 5]), outputShape)
}

/// The view and output shape of SPACE_TO_DEPTH: `blockSize × blockSize` spatial tiles become channel blocks.
func spaceToDepthLayout(inputShape: [Int], blockSize: Int) throws -> (layout: StridedLayout, outputShape: [Int]) {
  guard inputShape.count == 4 else { throw KernelError.invalid("SPACE_TO_DEPTH: input must be 4-D, got \(inputShape)") }
  guard blockSize > 0, inputShape[1] % blockSize == 0, inputShape[2] % blockSize == 0 else {
    throw KernelError.invalid("SPACE_TO_DEPTH: height and width of \(inputShape) are not divisible by block size \(blockSize)")
  }
  let (batches, depth) = (inputShape[0], inputShape[3])
  let (height, width) = (inputShape[1] / blockSize, inputShape[2] / blockSize)
  let view = [batches, height, blockSize, width, blockSize, depth]
  let outputShape = [batches, height, width, depth * blockSize * blockSize]
  _ = try checkedElementCount(outputShape, op: "SPACE_TO_DEPTH")
  return (StridedLayout.transpose(inputShape: view, permutation: [0, 1, 3, 2, 4, 5]), outputShape)
}

// MARK: - Kernels

extension KernelRegistry {
  /// DEPTH_TO_SPACE and SPACE_TO_DEPTH.
  // Written once by its initializer and only read afterwards.
  nonisolated(unsafe) static let spaceDepth: [String: any Kernel.Type] = [
    "DEPTH_TO_SPACE": DepthToSpaceKernel.self, "SPACE_TO_DEPTH": SpaceToDepthKernel.self,
  ]
}

/// The operands and block size shared by the two block-rearranging kernels.
private struct BlockRearrangement {
  let input: RuntimeTensor
  let output: RuntimeTensor
  let elementSize: Int
  let blockSize: Int

  init(node: Node, op: String, blockSize: Int32?) throws {
    try node.expect(inputs: 1, outputs: 1)
    input = try node.input(0)
    output = try node.output(0)
    try requireSameType([input, output], op: op)
    elementSize = try movableElementSize(input, op: op)
    guard let blockSize else { throw KernelError.invalid("\(op): missing options") }
    self.blockSize = Int(blockSize)
  }
}

/// DEPTH_TO_SPACE (DCR order, as TFLite).
final class DepthToSpaceKernel: ViewCopyKernel {
  static let opName = "DEPTH_TO_SPACE"
  private let operands: BlockRearrangement
  private(set) var copy: StridedCopy?
  var input: RuntimeTensor { operands.input }
  var output: RuntimeTensor { operands.output }

  init(node: Node) throws {
    var blockSize: Int32?
    if case .depthToSpaceOptions(let options) = node.options { blockSize = options.blockSize }
    operands = try BlockRearrangement(node: node, op: Self.opName, blockSize: blockSize)
  }

  func prepare(_ context: inout PrepareContext) throws {
    let (layout, shape) = try depthToSpaceLayout(inputShape: input.shape, blockSize: operands.blockSize)
    output.shape = shape
    copy = StridedCopy(layout, elementSize: operands.elementSize)
  }
}

/// SPACE_TO_DEPTH.
final class SpaceToDepthKernel: ViewCopyKernel {
  static let opName = "SPACE_TO_DEPTH"
  private let operands: BlockRearrangement
  private(set) var copy: StridedCopy?
  var input: RuntimeTensor { operands.input }
  var output: RuntimeTensor { operands.output }

  init(node: Node) throws {
    var blockSize: Int32?
    if case .spaceToDepthOptions(let options) = node.options { blockSize = options.blockSize }
    operands = try BlockRearrangement(node: node, op: Self.opName, blockSize: blockSize)
  }

  func prepare(_ context: inout PrepareContext) throws {
    let (layout, shape) = try spaceToDepthLayout(inputShape: input.shape, blockSize: operands.blockSize)
    output.shape = shape
    copy = StridedCopy(layout, elementSize: operands.elementSize)
  }
}
