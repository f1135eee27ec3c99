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

// MARK: - Kernel

/// DEPTH_TO_SPACE (DCR order, as TFLite) and SPACE_TO_DEPTH, chosen by the node's operator.
final class BlockRearrangeKernel: ViewCopyKernel {
  let op: String
  let input: RuntimeTensor
  let output: RuntimeTensor
  private let toSpace: Bool
  private let blockSize: Int
  private let elementSize: Int
  private(set) var copy: StridedCopy?

  init(node: Node) throws {
    op = node.opName
    let operands = try MovableOperands(node, inputs: 1, op: op)
    (input, output, elementSize) = (operands.input, operands.output, operands.elementSize)
    switch node.options {
    case .depthToSpaceOptions(let options):
      toSpace = true
      blockSize = Int(options.blockSize)
    case .spaceToDepthOptions(let options):
      toSpace = false
      blockSize = Int(options.blockSize)
    default:
      throw KernelError.invalid("\(node.opName): missing options")
    }
  }

  func prepare(_ context: inout PrepareContext) throws {
    let (layout, shape) =
      toSpace
      ? try depthToSpaceLayout(inputShape: input.shape, blockSize: blockSize)
      : try spaceToDepthLayout(inputShape: input.shape, blockSize: blockSize)
    output.shape = shape
    copy = StridedCopy(layout, elementSize: elementSize)
  }
}
