// DEPTH_TO_SPACE and SPACE_TO_DEPTH: both are the transpose [0, 1, 3, 2, 4, 5] of a 6-D view of NHWC data.

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
