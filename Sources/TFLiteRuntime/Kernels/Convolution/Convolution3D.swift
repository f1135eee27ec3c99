import TFLiteFormat
import TFLiteLinearAlgebra

// CONV_3D and CONV_3D_TRANSPOSE in float32 over NDHWC volumes.
//
// CONV_3D: filter [KD, KH, KW, C_in, C_out], optional bias [C_out]; one GEMM whose rows are the
// output voxels and whose depth is a whole filter (KD·KH·KW·C_in), the left-hand blocks gathered
// from the input im2col-style, the filter packed once at prepare.
//
// CONV_3D_TRANSPOSE: inputs output_shape (int32 [5]), filter [KD, KH, KW, C_out, C_in], input
// [N, D, H, W, C_in], optional bias [C_out]. The output size comes from output_shape; padding is
// the one of a CONV_3D from that output back to the input (whose size must match). One GEMM gives
// every input voxel's contribution to each filter tap (input × filterᵀ), then those columns are
// added into the output (col2im).

/// The geometry of a 3-D convolution: `depth`, `height` and `width` axes run from the larger
/// volume (a CONV_3D input, a CONV_3D_TRANSPOSE output) to the smaller one.
struct Convolution3DShape {
  /// N.
  let batch: Int
  /// Channels of the larger volume.
  let wideChannels: Int
  /// Channels of the smaller volume.
  let narrowChannels: Int
  /// Depth axis.
  let depth: WindowAxis
  /// Height axis.
  let height: WindowAxis
  /// Width axis.
  let width: WindowAxis
  /// Positions of each axis whose every tap is inside the large volume.
  private let interior: (depth: Range<Int>, height: Range<Int>, width: Range<Int>)

  /// Voxels of one image of the smaller volume.
  var narrowVoxels: Int { depth.outputSize * height.outputSize * width.outputSize }
  /// Filter taps (KD·KH·KW).
  var taps: Int { depth.filterSize * height.filterSize * width.filterSize }

  /// Reads the strides, dilations and padding of `options` for a volume `[n, d, h, w, c]` filtered
  /// by a `[kd, kh, kw]` window.
  init(
    op: String, batch: Int, volume: (depth: Int, height: Int, width: Int), wideChannels: Int, narrowChannels: Int,
    filter: (depth: Int, height: Int, width: Int), options: Conv3DOptions
  ) throws {
    self.batch = batch
    self.wideChannels = wideChannels
    self.narrowChannels = narrowChannels
    depth = try WindowAxis(
      op: op, axis: "depth", inputSize: volume.depth, filterSize: filter.depth, stride: options.strideD,
      dilation: options.dilationDFactor, padding: options.padding)
    height = try WindowAxis(
      op: op, axis: "height", inputSize: volume.height, filterSize: filter.height, stride: options.strideH,
      dilation: options.dilationHFactor, padding: options.padding)
    width = try WindowAxis(
      op: op, axis: "width", inputSize: volume.width, filterSize: filter.width, stride: options.strideW,
      dilation: options.dilationWFactor, padding: options.padding)
    interior = (depth.interior, height.interior, width.interior)
  }

  /// True when every filter tap of the small-volume voxel `voxel` lands inside the large volume.
  @inline(__always)
  func isInterior(voxel: Int) -> Bool {
    let x = voxel % width.outputSize
    let y = (voxel / width.outputSize) % height.outputSize
    let z = voxel / (width.outputSize * height.outputSize)
    return interior.depth.contains(z) && interior.height.contains(y) && interior.width.contains(x)
  }

  /// Calls `body(tap, wideVoxel)` for every filter tap of the small-volume voxel `voxel` (an index
  /// within one image) that lands inside the large volume, `wideVoxel` indexing one image of it.
  @inline(__always)
  func forEachTap(ofVoxel voxel: Int, _ body: (_ tap: Int, _ wideVoxel: Int) -> Void) {
    let x = voxel % width.outputSize
    let y = (voxel / width.outputSize) % height.outputSize
    let z = voxel / (width.outputSize * height.outputSize)
    let (zTaps, yTaps, xTaps) = (depth.validTaps(z), height.validTaps(y), width.validTaps(x))
    for kz in zTaps.first..<zTaps.end {
      let inputZ = depth.inputOrigin(z) + kz * depth.dilation
      for ky in yTaps.first..<yTaps.end {
        let inputY = height.inputOrigin(y) + ky * height.dilation
        let row = (inputZ * height.inputSize + inputY) * width.inputSize
        let tapRow = (kz * height.filterSize + ky) * width.filterSize
        for kx in xTaps.first..<xTaps.end {
          body(tapRow + kx, row + width.inputOrigin(x) + kx * width.dilation)
        }
      }
    }
  }
}

/// The im2col view of a CONV_3D input: row = output voxel, depth = (kd, kh, kw, channel); taps
/// outside the input read as zero.
struct Volume3DIm2colOperand: GEMMLeftOperand {
  /// The NDHWC input.
  let input: UnsafePointer<Float>
  /// The convolution (wide = input).
  let shape: Convolution3DShape

  var packsIntoScratch: Bool { true }

  func block(
    rowStart: Int, rowCount: Int, depthStart: Int, depthCount: Int, scratch: UnsafeMutablePointer<Float>
  ) -> (pointer: UnsafePointer<Float>, rowStride: Int) {
    let channels = shape.wideChannels
    let imageVoxels = shape.narrowVoxels
    let inputImage = shape.depth.inputSize * shape.height.inputSize * shape.width.inputSize * channels
    let depthEnd = depthStart + depthCount
    for r in 0..<rowCount {
      let row = rowStart + r
      let image = input + (row / imageVoxels) * inputImage
      let destination = scratch + r * depthCount
      let voxel = row % imageVoxels
      // Taps outside the input read as zero; an interior voxel has none, and its taps fill the block.
      if !shape.isInterior(voxel: voxel) { zeroFloats(destination, count: depthCount) }
      shape.forEachTap(ofVoxel: voxel) { tap, voxel in
        // The tap's channels overlap the block's depth range in [start, end).
        let start = max(tap * channels, depthStart)
        let end = min(tap * channels + channels, depthEnd)
        guard start < end else { return }
        copyFloats(
          from: image + voxel * channels + (start - tap * channels), to: destination + (start - depthStart),
          count: end - start)
      }
    }
    return (UnsafePointer(scratch), depthCount)
  }
}

/// Reads the shared options of CONV_3D and CONV_3D_TRANSPOSE.
private func conv3DOptions(_ node: Node, op: String) throws -> (Conv3DOptions, FloatClampRange) {
  let options = try FloatOperands.options(of: node, op: op, defaults: Conv3DOptions()) {
    if case .conv3DOptions(let options) = $0 { options } else { nil }
  }
  return (options, try FloatClampRange(options.fusedActivationFunction, op: op))
}

/// CONV_3D (float32): `input [N, D, H, W, C]`, `filter [KD, KH, KW, C, O]`, optional `bias [O]`.
final class Conv3DKernel: Kernel {
  /// A float GEMM.
  var kernelDescription: String? { KernelDescription.floatGEMM }

  private static let opName = "CONV_3D"
  private let operands: WeightedOperands
  private let options: Conv3DOptions
  private let activation: FloatClampRange
  private var shape: Convolution3DShape?
  private var plan: GEMMPlan?
  private var weights = PackedWeights()
  private var paddedBias = PaddedBias()
  private var gemmScratchOffset = 0

  init(node: Node) throws {
    operands = try WeightedOperands(node, op: Self.opName)
    (options, activation) = try conv3DOptions(node, op: Self.opName)
  }

  func prepare(_ context: inout PrepareContext) throws {
    let (input, filter, output) = (operands.input, operands.weights, operands.output)
    try FloatOperands.requireRank(input, 5, op: Self.opName, role: "input")
    try FloatOperands.requireRank(filter, 5, op: Self.opName, role: "filter")
    let channels = input.shape[4]
    let outputChannels = filter.shape[4]
    guard filter.shape[3] == channels else {
      throw KernelError.invalid("CONV_3D filter has \(filter.shape[3]) input channels, the input \(channels)")
    }
    try FloatOperands.requireBias(operands.bias, count: outputChannels, op: Self.opName)
    let shape = try Convolution3DShape(
      op: Self.opName, batch: input.shape[0], volume: (input.shape[1], input.shape[2], input.shape[3]),
      wideChannels: channels, narrowChannels: outputChannels,
      filter: (filter.shape[0], filter.shape[1], filter.shape[2]), options: options)
    let outputShape = [
      shape.batch, shape.depth.outputSize, shape.height.outputSize, shape.width.outputSize, outputChannels,
    ]
    let rows = try FloatOperands.checkedCount(Array(outputShape.dropLast()), "CONV_3D output voxels")
    _ = try FloatOperands.checkedCount(outputShape, "CONV_3D output")
    let gemmDepth = try FloatOperands.checkedCount(filter.shape.dropLast(), "CONV_3D filter")
    output.shape = outputShape
    let plan = GEMMPlan(rows: rows, columns: outputChannels, depth: gemmDepth, threadCount: context.threadCount)
    var scratch = ScratchLayout()
    try weights.prepare(
      filter, count: 1, sourceStride: 0, layout: .depthMajor(columns: outputChannels), depth: gemmDepth,
      columns: outputChannels, scratch: &scratch)
    paddedBias.prepare(operands.bias, groups: 1, columns: outputChannels, scratch: &scratch)
    gemmScratchOffset = scratch.reserve(
      bytes: plan.scratchBytes(leftOperandPacks: true, threadCount: context.threadCount))
    context.requestScratch(bytes: scratch.byteCount)
    self.shape = shape
    self.plan = plan
  }

  func eval(_ context: EvalContext) throws {
    guard operands.output.elementCount > 0 else { return }
    guard let shape, let plan, let scratch = context.scratch else { throw KernelError.invalid("CONV_3D was not prepared") }
    let lhs = Volume3DIm2colOperand(input: operands.input.pointer(as: Float.self), shape: shape)
    let packedFilter = try weights.pointer(operands.weights, scratch: scratch)
    let bias = paddedBias.pointer(operands.bias, scratch: scratch)
    FloatGEMM.multiply(
      plan: plan, lhs: lhs, rhs: packedFilter, output: operands.output.pointer(as: Float.self),
      outputStride: shape.narrowChannels, epilogue: FloatEpilogue(bias: bias, activation: activation),
      threadCount: context.threadCount, scratch: scratch + gemmScratchOffset)
  }
}

/// CONV_3D_TRANSPOSE (float32): `output_shape` (int32 [5]), `filter [KD, KH, KW, O, C]`,
/// `input [N, D, H, W, C]`, optional `bias [O]`.
final class Conv3DTransposeKernel: Kernel {
  /// A float GEMM.
  var kernelDescription: String? { KernelDescription.floatGEMM }

  private static let opName = "CONV_3D_TRANSPOSE"
  private let outputShape: RuntimeTensor
  private let filter: RuntimeTensor
  private let input: RuntimeTensor
  private let bias: RuntimeTensor?
  private let output: RuntimeTensor
  private let options: Conv3DOptions
  private let activation: FloatClampRange
  private var shape: Convolution3DShape?
  private var plan: GEMMPlan?
  private var weights = PackedWeights()
  private var columnsOffset = 0
  private var gemmScratchOffset = 0

  init(node: Node) throws {
    try node.expect(inputs: 3, maxInputs: 4, outputs: 1)
    outputShape = try node.input(0)
    filter = try node.input(1)
    input = try node.input(2)
    bias = node.optionalInput(3)
    output = try node.output(0)
    try FloatOperands.require([filter, input, bias, output], op: Self.opName)
    guard outputShape.type == .int32 else {
      throw KernelError.unsupported("CONV_3D_TRANSPOSE with \(outputShape.type.name) output_shape")
    }
    (options, activation) = try conv3DOptions(node, op: Self.opName)
  }

  func prepare(_ context: inout PrepareContext) throws {
    try FloatOperands.requireRank(input, 5, op: Self.opName, role: "input")
    try FloatOperands.requireRank(filter, 5, op: Self.opName, role: "filter")
    guard outputShape.shape == [5] else {
      throw KernelError.invalid("CONV_3D_TRANSPOSE output_shape must hold 5 values, has shape \(outputShape.shape)")
    }
    guard outputShape.hasValuesForPrepare, let shapeData = outputShape.data else {
      throw KernelError.needsInputValues("CONV_3D_TRANSPOSE output_shape is computed at run time")
    }
    let requested = (0..<5).map { Int(shapeData.assumingMemoryBound(to: Int32.self)[$0]) }
    let channels = input.shape[4]
    let outputChannels = filter.shape[3]
    guard filter.shape[4] == channels else {
      throw KernelError.invalid("CONV_3D_TRANSPOSE filter has \(filter.shape[4]) input channels, the input \(channels)")
    }
    guard requested[0] == input.shape[0], requested[4] == outputChannels, requested.allSatisfy({ $0 >= 0 }) else {
      throw KernelError.invalid(
        "CONV_3D_TRANSPOSE output_shape \(requested) does not fit input \(input.shape) and filter \(filter.shape)")
    }
    try FloatOperands.requireBias(bias, count: outputChannels, op: Self.opName)
    let shape = try Convolution3DShape(
      op: Self.opName, batch: requested[0], volume: (requested[1], requested[2], requested[3]),
      wideChannels: outputChannels, narrowChannels: channels,
      filter: (filter.shape[0], filter.shape[1], filter.shape[2]), options: options)
    guard [shape.depth.outputSize, shape.height.outputSize, shape.width.outputSize] == Array(input.shape[1...3]) else {
      throw KernelError.invalid(
        "CONV_3D_TRANSPOSE input \(input.shape) is not what a convolution of output_shape \(requested) gives")
    }
    _ = try FloatOperands.checkedCount(requested, "CONV_3D_TRANSPOSE output")
    let rows = try FloatOperands.checkedCount(Array(input.shape.dropLast()), "CONV_3D_TRANSPOSE input voxels")
    let columns = try FloatOperands.checkedCount(Array(filter.shape.dropLast()), "CONV_3D_TRANSPOSE filter")
    let columnBytes = try FloatOperands.checkedCount([rows, columns, MemoryLayout<Float>.stride], "its columns")
    output.shape = requested
    let plan = GEMMPlan(rows: rows, columns: columns, depth: channels, threadCount: context.threadCount)
    var scratch = ScratchLayout()
    try weights.prepare(
      filter, count: 1, sourceStride: 0, layout: .columnMajor(depth: channels), depth: channels, columns: columns,
      scratch: &scratch)
    columnsOffset = scratch.reserve(bytes: columnBytes)
    gemmScratchOffset = scratch.reserve(
      bytes: plan.scratchBytes(leftOperandPacks: false, threadCount: context.threadCount))
    context.requestScratch(bytes: scratch.byteCount)
    self.shape = shape
    self.plan = plan
  }

  func eval(_ context: EvalContext) throws {
    guard output.elementCount > 0 else { return }
    guard let shape, let plan, let scratch = context.scratch else {
      throw KernelError.invalid("CONV_3D_TRANSPOSE was not prepared")
    }
    let columns = (scratch + columnsOffset).assumingMemoryBound(to: Float.self)
    let contributionCount = plan.columns
    let lhs = RowMajorLeftOperand(base: UnsafePointer(input.pointer(as: Float.self)), rowStride: shape.narrowChannels)
    FloatGEMM.multiply(
      plan: plan, lhs: lhs, rhs: try weights.pointer(filter, scratch: scratch), output: columns,
      outputStride: contributionCount, epilogue: FloatEpilogue(bias: nil, activation: nil),
      threadCount: context.threadCount, scratch: scratch + gemmScratchOffset)
    scatterColumns(UnsafePointer(columns), shape: shape, into: output.pointer(as: Float.self), context: context)
  }

  /// Adds each input voxel's tap contributions into the output voxels they reach, then the bias
  /// and the clamp. Parallel over output images (each image's voxels are written by one worker).
  private func scatterColumns(
    _ columns: UnsafePointer<Float>, shape: Convolution3DShape, into destination: UnsafeMutablePointer<Float>,
    context: EvalContext
  ) {
    let outputChannels = shape.wideChannels
    let outputImage = shape.depth.inputSize * shape.height.inputSize * shape.width.inputSize * outputChannels
    let contributionsPerVoxel = shape.taps * outputChannels
    let biasValues = bias.map { UnsafePointer($0.pointer(as: Float.self)) }
    let activation = activation
    context.parallelFor(shape.batch) { image in
      let target = destination + image * outputImage
      zeroFloats(target, count: outputImage)
      for voxel in 0..<shape.narrowVoxels {
        let source = columns + (image * shape.narrowVoxels + voxel) * contributionsPerVoxel
        shape.forEachTap(ofVoxel: voxel) { tap, outputVoxel in
          let from = source + tap * outputChannels
          let to = target + outputVoxel * outputChannels
          for channel in 0..<outputChannels { to[channel] += from[channel] }
        }
      }
      for voxel in 0..<(outputImage / max(1, outputChannels)) {
        let values = target + voxel * outputChannels
        for channel in 0..<outputChannels {
          values[channel] = activation.apply(values[channel] + (biasValues?[channel] ?? 0))
        }
      }
    }
  }
}
