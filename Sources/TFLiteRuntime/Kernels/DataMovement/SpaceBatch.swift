// SPACE_TO_BATCH_ND and BATCH_TO_SPACE_ND: spatial blocks move between the batch axis and the
// spatial axes. Both are planned in `prepare` as a pixel map (for every output pixel, the input
// pixel it copies, or none where SPACE_TO_BATCH_ND pads) and run as copies of whole pixels
// (the elements of the axes after the spatial ones), so one plan serves every element type.

/// Where each output pixel of SPACE_TO_BATCH_ND or BATCH_TO_SPACE_ND comes from.
struct BlockBatchPlan: Equatable {
  /// Output shape.
  var outputShape: [Int]
  /// Elements per pixel: the product of the axes after the spatial ones.
  var pixelElements: Int
  /// For every output pixel in row-major order, the input pixel it copies; −1 for padding.
  var sourcePixels: [Int]

  /// SPACE_TO_BATCH_ND of an input `[batch, spatial…, rest…]`: the spatial axes are padded by
  /// `paddings` (a before/after pair per spatial axis) and cut into blocks of `blockShape`; the
  /// block offset becomes the outer part of the output batch (`offset · batch + b`).
  static func spaceToBatch(
    inputShape: [Int], blockShape: [Int], paddings: [Int], memory: PrepareContext? = nil
  ) throws -> BlockBatchPlan {
    let op = "SPACE_TO_BATCH_ND"
    let spatialCount = try validatedSpatialCount(inputShape: inputShape, blockShape: blockShape, op: op)
    guard paddings.count == 2 * spatialCount, paddings.allSatisfy({ $0 >= 0 }) else {
      throw KernelError.invalid("\(op): paddings \(paddings) must be \(spatialCount)×2 non-negative values")
    }
    let batch = inputShape[0]
    let spatial = Array(inputShape[1...spatialCount])
    var outputSpatial: [Int] = []
    for axis in 0..<spatialCount {
      let padded = try checkedSum(spatial[axis], paddings[2 * axis], paddings[2 * axis + 1], op: op)
      guard padded % blockShape[axis] == 0 else {
        throw KernelError.invalid(
          "\(op): padded size \(padded) of spatial axis \(axis) is not divisible by block size \(blockShape[axis])")
      }
      outputSpatial.append(padded / blockShape[axis])
    }
    let blockCount = try checkedElementCount(blockShape, op: op)
    let outputShape = [try checkedElementCount([batch, blockCount], op: op)] + outputSpatial + Array(inputShape[(spatialCount + 1)...])
    return try BlockBatchPlan(
      op: op, outputShape: outputShape, inputShape: inputShape, spatialCount: spatialCount, memory: memory
    ) { outputBatch, outputCoordinates in
      var inputPixel = outputBatch % batch
      var blockOffset = outputBatch / batch
      var coordinates = outputCoordinates
      for axis in stride(from: spatialCount - 1, through: 0, by: -1) {
        coordinates[axis] = coordinates[axis] * blockShape[axis] + blockOffset % blockShape[axis] - paddings[2 * axis]
        blockOffset /= blockShape[axis]
        guard coordinates[axis] >= 0, coordinates[axis] < spatial[axis] else { return nil }
      }
      for axis in 0..<spatialCount { inputPixel = inputPixel * spatial[axis] + coordinates[axis] }
      return inputPixel
    }
  }

  /// BATCH_TO_SPACE_ND of an input `[blocks · batch, spatial…, rest…]`: the inverse of
  /// SPACE_TO_BATCH_ND, then `crops` (a before/after pair per spatial axis) are cut away.
  static func batchToSpace(
    inputShape: [Int], blockShape: [Int], crops: [Int], memory: PrepareContext? = nil
  ) throws -> BlockBatchPlan {
    let op = "BATCH_TO_SPACE_ND"
    let spatialCount = try validatedSpatialCount(inputShape: inputShape, blockShape: blockShape, op: op)
    guard crops.count == 2 * spatialCount, crops.allSatisfy({ $0 >= 0 }) else {
      throw KernelError.invalid("\(op): crops \(crops) must be \(spatialCount)×2 non-negative values")
    }
    let blockCount = try checkedElementCount(blockShape, op: op)
    guard inputShape[0] % blockCount == 0 else {
      throw KernelError.invalid("\(op): input batch \(inputShape[0]) is not divisible by the block count \(blockCount)")
    }
    let batch = inputShape[0] / blockCount
    let spatial = Array(inputShape[1...spatialCount])
    var outputSpatial: [Int] = []
    for axis in 0..<spatialCount {
      let uncropped = try checkedElementCount([spatial[axis], blockShape[axis]], op: op)
      let cropped = try checkedSum(uncropped, -crops[2 * axis], -crops[2 * axis + 1], op: op)
      guard cropped >= 0 else {
        throw KernelError.invalid("\(op): crops \(crops) remove more than the \(uncropped) elements of spatial axis \(axis)")
      }
      outputSpatial.append(cropped)
    }
    let outputShape = [batch] + outputSpatial + inputShape[(spatialCount + 1)...]
    return try BlockBatchPlan(
      op: op, outputShape: outputShape, inputShape: inputShape, spatialCount: spatialCount, memory: memory
    ) { outputBatch, outputCoordinates in
      var blockOffset = 0
      var inputCoordinates = outputCoordinates
      for axis in 0..<spatialCount {
        let uncropped = outputCoordinates[axis] + crops[2 * axis]
        blockOffset = blockOffset * blockShape[axis] + uncropped % blockShape[axis]
        inputCoordinates[axis] = uncropped / blockShape[axis]
      }
      var inputPixel = blockOffset * batch + outputBatch
      for axis in 0..<spatialCount { inputPixel = inputPixel * spatial[axis] + inputCoordinates[axis] }
      return inputPixel
    }
  }

  /// Checks the ranks and block sizes shared by both operators; returns the number of spatial axes.
  private static func validatedSpatialCount(inputShape: [Int], blockShape: [Int], op: String) throws -> Int {
    let spatialCount = blockShape.count
    guard spatialCount >= 1, inputShape.count >= spatialCount + 1 else {
      throw KernelError.invalid("\(op): input \(inputShape) needs a batch axis and \(spatialCount) spatial axes")
    }
    guard blockShape.allSatisfy({ $0 >= 1 }) else {
      throw KernelError.invalid("\(op): block sizes \(blockShape) must be positive")
    }
    return spatialCount
  }

  /// Maps every output pixel through `source(batch, spatialCoordinates)`, which returns the
  /// input pixel or nil for padding; the table must fit in `memory`'s limit.
  private init(
    op: String, outputShape: [Int], inputShape: [Int], spatialCount: Int, memory: PrepareContext?,
    source: (Int, [Int]) -> Int?
  ) throws {
    _ = try checkedElementCount(outputShape, op: op)
    self.outputShape = outputShape
    pixelElements = inputShape[(spatialCount + 1)...].reduce(1, *)
    let pixelShape = Array(outputShape[...spatialCount])
    let pixelCount = pixelShape.reduce(1, *)
    try memory?.requireMemory(count: pixelCount, bytesEach: MemoryLayout<Int>.stride, for: "\(op) pixel table")
    sourcePixels = []
    sourcePixels.reserveCapacity(pixelCount)
    var coordinates = [Int](repeating: 0, count: spatialCount)
    for pixel in 0..<pixelCount {
      var remainder = pixel
      for axis in stride(from: spatialCount - 1, through: 0, by: -1) {
        coordinates[axis] = remainder % pixelShape[axis + 1]
        remainder /= pixelShape[axis + 1]
      }
      sourcePixels.append(source(remainder, coordinates) ?? -1)
    }
  }

  /// Writes output pixels `pixels`: copies of input pixels, or `padding` (one element) repeated.
  func run(
    from input: UnsafeRawPointer, to output: UnsafeMutableRawPointer, padding: UnsafeRawPointer, elementSize: Int,
    pixels: Range<Int>
  ) {
    let pixelBytes = pixelElements &* elementSize
    sourcePixels.withUnsafeBufferPointer { sources in
      for pixel in pixels {
        let destination = output + pixel &* pixelBytes
        let source = sources[pixel]
        if source < 0 {
          fillElements(destination, count: pixelElements, value: padding, elementSize: elementSize)
        } else {
          destination.copyMemory(from: input + source &* pixelBytes, byteCount: pixelBytes)
        }
      }
    }
  }
}

// MARK: - Kernel

/// SPACE_TO_BATCH_ND (inputs: data, block shape, paddings) and BATCH_TO_SPACE_ND (data, block
/// shape, crops), chosen by the node's operator; block shape and paddings or crops must be
/// constant. Quantized padding uses the zero point, so it reads as 0.
final class BlockBatchKernel: Kernel {
  private let opName: String
  private let toBatch: Bool
  private let input: RuntimeTensor
  private let blockShape: RuntimeTensor
  private let margins: RuntimeTensor
  private let output: RuntimeTensor
  private let elementSize: Int
  /// The padding element's bytes (little-endian, in the low `elementSize` bytes).
  private let padding: UInt64
  private var plan: BlockBatchPlan?

  init(node: Node) throws {
    opName = node.opName
    toBatch = node.op == .builtin(.spaceToBatchNd)
    try node.expect(inputs: 3, outputs: 1)
    input = try node.input(0)
    blockShape = try node.input(1)
    margins = try node.input(2)
    output = try node.output(0)
    try requireSameType([input, output], op: opName)
    try requireSameQuantization([input, output], op: opName)
    elementSize = try movableElementSize(input, op: opName)
    padding = UInt64(truncatingIfNeeded: output.quantization?.zeroPoints.first ?? 0)
  }

  func prepare(_ context: inout PrepareContext) throws {
    let blocks = try constantIntegers(blockShape, op: opName, operand: "block shape")
    let pairs = try constantIntegers(margins, op: opName, operand: toBatch ? "paddings" : "crops")
    let plan =
      toBatch
      ? try BlockBatchPlan.spaceToBatch(inputShape: input.shape, blockShape: blocks, paddings: pairs, memory: context)
      : try BlockBatchPlan.batchToSpace(inputShape: input.shape, blockShape: blocks, crops: pairs, memory: context)
    output.shape = plan.outputShape
    self.plan = plan
  }

  func eval(_ context: EvalContext) throws {
    guard let plan else { throw KernelError.invalid("\(opName): eval before prepare") }
    let (source, destination) = try evalPointers(input, output, op: opName)
    let elementSize = elementSize
    withUnsafeBytes(of: padding) { padding in
      guard let padding = padding.baseAddress else { return }
      context.forEachChunk(
        of: plan.sourcePixels.count, minimumChunk: max(1, cheapElementwiseChunk / max(plan.pixelElements, 1))
      ) { pixels in
        plan.run(from: source, to: destination, padding: padding, elementSize: elementSize, pixels: pixels)
      }
    }
  }
}
