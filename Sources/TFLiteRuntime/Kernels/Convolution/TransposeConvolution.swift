import TFLiteFormat
import TFLiteLinearAlgebra

/// Shape of a TRANSPOSE_CONV: NHWC input, OHWI filter `[out, h, w, in]`, NHWC output of a given size.
///
/// The padding follows TFLite: computed as for a convolution whose *input* is this op's output
/// (`height`/`width` axes use the output extent as their input size, dilation 1).
struct TransposeConvolutionShape: Equatable {
  /// N.
  let batch: Int
  /// Input rows.
  let inputHeight: Int
  /// Input columns.
  let inputWidth: Int
  /// Input channels: K of the GEMM.
  let inputChannels: Int
  /// Output channels.
  let outputChannels: Int
  /// Vertical geometry, `inputSize` = output rows.
  let height: WindowAxis
  /// Horizontal geometry, `inputSize` = output columns.
  let width: WindowAxis

  /// Columns of the GEMM: every (ky, kx, output channel).
  var gemmColumns: Int { height.filterSize * width.filterSize * outputChannels }
  /// Input pixels per image row.
  var rowPixels: Int { inputWidth }
}

extension TransposeConvolutionShape {
  /// The geometry of a TRANSPOSE_CONV node of any element type: `output_shape` (INT32 `[4]`, its
  /// values known at prepare), input `[N,H,W,I]` and weights `[O,KH,KW,I]`. Throws when the shapes
  /// disagree or when the output extent does not give back the input's height and width.
  init(
    op: String, outputShape outputShapeTensor: RuntimeTensor, input: RuntimeTensor, weights: RuntimeTensor,
    options: TransposeConvOptions
  ) throws {
    guard outputShapeTensor.hasValuesForPrepare, outputShapeTensor.data != nil else {
      throw KernelError.needsInputValues("\(op) output_shape is computed at run time")
    }
    guard outputShapeTensor.elementCount == 4 else {
      throw KernelError.invalid("\(op) output_shape must have 4 values, got shape \(outputShapeTensor.shape)")
    }
    let values = outputShapeTensor.pointer(as: Int32.self)
    let outputShape = (0..<4).map { Int(values[$0]) }
    try FloatOperands.requireRank(input, 4, op: op, role: "input")
    try FloatOperands.requireRank(weights, 4, op: op, role: "weights")
    let (batch, height, width, channels) = (input.shape[0], input.shape[1], input.shape[2], input.shape[3])
    let (outputChannels, filterHeight, filterWidth, filterChannels) =
      (weights.shape[0], weights.shape[1], weights.shape[2], weights.shape[3])
    guard filterChannels == channels, outputShape[0] == batch, outputShape[3] == outputChannels,
      outputShape.allSatisfy({ $0 >= 0 })
    else {
      throw KernelError.invalid(
        "\(op) shapes do not match: input \(input.shape), weights \(weights.shape), output_shape \(outputShape)")
    }
    let heightAxis = try WindowAxis(
      op: op, axis: "height", inputSize: outputShape[1], filterSize: filterHeight, stride: options.strideH,
      dilation: 1, padding: options.padding)
    let widthAxis = try WindowAxis(
      op: op, axis: "width", inputSize: outputShape[2], filterSize: filterWidth, stride: options.strideW,
      dilation: 1, padding: options.padding)
    guard heightAxis.outputSize == height, widthAxis.outputSize == width else {
      throw KernelError.invalid(
        "\(op) output_shape \(outputShape) does not come from input \(input.shape) with filter \(weights.shape), "
          + "strides \(options.strideH)×\(options.strideW) and \(options.padding.name) padding")
    }
    _ = try FloatOperands.checkedCount(outputShape, "\(op) output")
    self.init(
      batch: batch, inputHeight: height, inputWidth: width, inputChannels: channels, outputChannels: outputChannels,
      height: heightAxis, width: widthAxis)
  }

  /// The NHWC output shape.
  var outputShape: [Int] { [batch, height.inputSize, width.inputSize, outputChannels] }

  /// Checks the bias size and that the float GEMM's column buffer sizes do not overflow.
  func validateFloatBuffers(bias: RuntimeTensor?, op: String) throws {
    try FloatOperands.requireBias(bias, count: outputChannels, op: op)
    let columns = try FloatOperands.checkedCount(
      [height.filterSize, width.filterSize, outputChannels], "\(op) GEMM columns")
    _ = try FloatOperands.checkedCount([inputWidth, columns, 4], "\(op) column buffer row")
  }
}

extension TransposeConvolutionShape {
  /// Calls `body(inputPixel, tap)` for every input pixel of an image and filter tap that land on
  /// output pixel (`y`, `x`): `inputPixel` = iy · inputWidth + ix and `tap` = ky · filterWidth + kx
  /// with y + top padding = iy · stride + ky (likewise along x), so the taps step by the stride.
  @inline(__always)
  func forEachContribution(outputY y: Int, outputX x: Int, _ body: (_ inputPixel: Int, _ tap: Int) -> Void) {
    let shiftedY = y + height.paddingBefore
    let shiftedX = x + width.paddingBefore
    var ky = shiftedY % height.stride
    while ky < height.filterSize {
      let inputY = (shiftedY - ky) / height.stride
      if inputY >= 0 && inputY < inputHeight {
        var kx = shiftedX % width.stride
        while kx < width.filterSize {
          let inputX = (shiftedX - kx) / width.stride
          if inputX >= 0 && inputX < inputWidth { body(inputY * inputWidth + inputX, ky * width.filterSize + kx) }
          kx += width.stride
        }
      }
      ky += height.stride
    }
  }
}

extension TransposeConvolutionShape {
  /// Calls `body(tap, outputPixel)` for every filter tap of input pixel (`y`, `x`) of image `image`
  /// that lands inside the output: `tap` = ky · filterWidth + kx, `outputPixel` the flat index of
  /// output pixel (y · stride − top padding + ky, x · stride − left padding + kx) over all images.
  @inline(__always)
  func forEachLanding(image: Int, y: Int, x: Int, _ body: (_ tap: Int, _ outputPixel: Int) -> Void) {
    let outputHeight = height.inputSize
    let outputWidth = width.inputSize
    for ky in 0..<height.filterSize {
      let outputY = y * height.stride - height.paddingBefore + ky
      guard outputY >= 0 && outputY < outputHeight else { continue }
      for kx in 0..<width.filterSize {
        let outputX = x * width.stride - width.paddingBefore + kx
        guard outputX >= 0 && outputX < outputWidth else { continue }
        body(ky * width.filterSize + kx, (image * outputHeight + outputY) * outputWidth + outputX)
      }
    }
  }
}

/// TRANSPOSE_CONV in float32: one GEMM (`input pixels × in` · `in × (kh·kw·out)`) into a column
/// buffer, then each column is added to the output pixel it lands on (col2im), in chunks of input
/// rows so the column buffer stays small.
enum FloatTransposeConvolution {
  /// Column-buffer budget in floats.
  static let columnBudget = 1 << 20

  /// Input rows (over all images) per chunk.
  static func rowsPerChunk(_ shape: TransposeConvolutionShape) -> Int {
    let rows = shape.batch * shape.inputHeight
    return max(1, min(rows, columnBudget / max(1, shape.rowPixels * shape.gemmColumns)))
  }

  /// Packs the OHWI filter as the `in × (kh·kw·out)` right-hand matrix (`reordered` holds
  /// `filter`'s element count and receives the HWOI copy first).
  static func packFilter(
    _ filter: UnsafePointer<Float>, shape: TransposeConvolutionShape, reordered: UnsafeMutablePointer<Float>,
    into destination: UnsafeMutablePointer<Float>
  ) {
    let taps = shape.height.filterSize * shape.width.filterSize
    let channels = shape.inputChannels
    for outputChannel in 0..<shape.outputChannels {
      for tap in 0..<taps {
        (reordered + (tap * shape.outputChannels + outputChannel) * channels)
          .update(from: filter + (outputChannel * taps + tap) * channels, count: channels)
      }
    }
    PanelPacking.pack(
      UnsafePointer(reordered), layout: .columnMajor(depth: channels), depth: channels, columns: shape.gemmColumns,
      into: destination)
  }

  /// GEMM plan of a chunk of `inputRows` input rows.
  static func plan(_ shape: TransposeConvolutionShape, inputRows: Int, threadCount: Int) -> GEMMPlan {
    GEMMPlan(
      rows: inputRows * shape.rowPixels, columns: shape.gemmColumns, depth: shape.inputChannels,
      threadCount: threadCount)
  }

  /// Scratch bytes `run` needs: the column buffer and the GEMM's workers.
  static func scratchBytes(_ shape: TransposeConvolutionShape, threadCount: Int) -> Int {
    let chunk = rowsPerChunk(shape)
    let lastChunk = (shape.batch * shape.inputHeight) % chunk
    let gemm = max(
      plan(shape, inputRows: chunk, threadCount: threadCount).scratchBytes(leftOperandPacks: false, threadCount: threadCount),
      plan(shape, inputRows: max(lastChunk, 1), threadCount: threadCount)
        .scratchBytes(leftOperandPacks: false, threadCount: threadCount))
    return (chunk * shape.rowPixels * shape.gemmColumns + 15) / 16 * 16 * MemoryLayout<Float>.stride + gemm
  }

  /// Computes the transposed convolution. `filter` is packed by `packFilter`; `bias` has
  /// `outputChannels` values or is nil.
  static func run(
    _ shape: TransposeConvolutionShape, input: UnsafePointer<Float>, filter: UnsafePointer<Float>,
    bias: UnsafePointer<Float>?, activation: FloatClampRange, output: UnsafeMutablePointer<Float>,
    threadCount: Int, scratch: UnsafeMutableRawPointer
  ) {
    let outputChannels = shape.outputChannels
    let outputPixels = shape.batch * shape.height.inputSize * shape.width.inputSize
    output.update(repeating: 0, count: outputPixels * outputChannels)
    let chunk = rowsPerChunk(shape)
    let columns = scratch.assumingMemoryBound(to: Float.self)
    let columnFloats = (chunk * shape.rowPixels * shape.gemmColumns + 15) / 16 * 16
    let gemmScratch = scratch + columnFloats * MemoryLayout<Float>.stride
    let totalRows = shape.batch * shape.inputHeight
    var firstRow = 0
    while firstRow < totalRows {
      let rowCount = min(chunk, totalRows - firstRow)
      let plan = plan(shape, inputRows: rowCount, threadCount: threadCount)
      FloatGEMM.multiply(
        plan: plan,
        lhs: RowMajorLeftOperand(base: input + firstRow * shape.rowPixels * shape.inputChannels, rowStride: shape.inputChannels),
        rhs: filter, output: columns, outputStride: shape.gemmColumns, epilogue: FloatEpilogue(bias: nil, activation: nil),
        threadCount: threadCount, scratch: gemmScratch)
      scatterColumns(shape, firstRow: firstRow, rowCount: rowCount, columns: columns, output: output)
      firstRow += rowCount
    }
    for pixel in 0..<outputPixels {
      let out = output + pixel * outputChannels
      for channel in 0..<outputChannels {
        out[channel] = activation.apply(out[channel] + (bias?[channel] ?? 0))
      }
    }
  }

  /// col2im: adds each (ky, kx) slice of every input pixel's columns to the output pixel it lands on.
  private static func scatterColumns(
    _ shape: TransposeConvolutionShape, firstRow: Int, rowCount: Int, columns: UnsafePointer<Float>,
    output: UnsafeMutablePointer<Float>
  ) {
    let outputChannels = shape.outputChannels
    for row in firstRow..<firstRow + rowCount {
      for x in 0..<shape.inputWidth {
        let pixelColumns = columns + ((row - firstRow) * shape.rowPixels + x) * shape.gemmColumns
        shape.forEachLanding(image: row / shape.inputHeight, y: row % shape.inputHeight, x: x) { tap, outputPixel in
          let slice = pixelColumns + tap * outputChannels
          let out = output + outputPixel * outputChannels
          for channel in 0..<outputChannels { out[channel] += slice[channel] }
        }
      }
    }
  }
}

/// The weights of a float transposed convolution in the GEMM's packed layout, for every kernel
/// built on `FloatTransposeConvolution`: constant weights are packed once at prepare (again only
/// when their data or the geometry changes), weights computed at run time are packed into scratch
/// at every eval.
struct PackedTransposeConvolutionWeights {
  /// Packed constant weights, the data they were packed from and the geometry they were packed for.
  private var constantPacked: [Float] = []
  private var constantSource: UnsafeMutableRawPointer?
  private var packedShape: TransposeConvolutionShape?
  /// Scratch regions for weights computed at run time (reordered copy, packed panels), then the GEMM's.
  private var reorderOffset: Int?
  private var packedOffset = 0
  private var runScratchOffset = 0

  /// Packs constant `weights` or plans their packing at run time, and requests the scratch that
  /// `run` needs.
  mutating func prepare(_ weights: RuntimeTensor, shape: TransposeConvolutionShape, context: inout PrepareContext) {
    let packedCount = PanelPacking.packedCount(depth: shape.inputChannels, columns: shape.gemmColumns)
    var scratch = ScratchLayout()
    if weights.isConstant, let data = weights.data {
      reorderOffset = nil
      if constantSource != data || packedShape != shape {
        var reordered = [Float](repeating: 0, count: weights.elementCount)
        constantPacked = [Float](repeating: 0, count: packedCount)
        reordered.withUnsafeMutableBufferPointer { reorderedBuffer in
          constantPacked.withUnsafeMutableBufferPointer { packedBuffer in
            guard let reorderedBase = reorderedBuffer.baseAddress, let packedBase = packedBuffer.baseAddress else { return }
            FloatTransposeConvolution.packFilter(
              data.assumingMemoryBound(to: Float.self), shape: shape, reordered: reorderedBase, into: packedBase)
          }
        }
        constantSource = data
        packedShape = shape
      }
    } else {
      constantPacked = []
      constantSource = nil
      packedShape = nil
      reorderOffset = scratch.reserve(floats: weights.elementCount)
      packedOffset = scratch.reserve(floats: packedCount)
    }
    runScratchOffset = scratch.reserve(bytes: FloatTransposeConvolution.scratchBytes(shape, threadCount: context.threadCount))
    context.requestScratch(bytes: scratch.byteCount)
  }

  /// Computes the transposed convolution of `input` with `weights` (packing them first when they
  /// are computed at run time) into `output`.
  func run(
    _ shape: TransposeConvolutionShape, weights: RuntimeTensor, input: RuntimeTensor, bias: RuntimeTensor?,
    activation: FloatClampRange, output: RuntimeTensor, context: EvalContext, scratch: UnsafeMutableRawPointer
  ) {
    let biasPointer = bias.map { UnsafePointer($0.pointer(as: Float.self)) }
    func run(_ packed: UnsafePointer<Float>) {
      FloatTransposeConvolution.run(
        shape, input: input.pointer(as: Float.self), filter: packed, bias: biasPointer, activation: activation,
        output: output.pointer(as: Float.self), threadCount: context.threadCount, scratch: scratch + runScratchOffset)
    }
    if let reorderOffset {
      let packed = (scratch + packedOffset).assumingMemoryBound(to: Float.self)
      FloatTransposeConvolution.packFilter(
        weights.pointer(as: Float.self), shape: shape,
        reordered: (scratch + reorderOffset).assumingMemoryBound(to: Float.self), into: packed)
      run(packed)
    } else {
      constantPacked.withUnsafeBufferPointer { buffer in
        if let base = buffer.baseAddress { run(base) }
      }
    }
  }
}

/// TRANSPOSE_CONV (float32): inputs `output_shape` (constant INT32 `[4]`), `weights [O,KH,KW,I]`,
/// `input [N,H,W,I]` and an optional `bias [O]`; fused activation from newer versions' options.
final class TransposeConvKernel: Kernel {
  /// A float GEMM.
  var kernelDescription: String? { KernelDescription.floatGEMM }

  private let outputShapeTensor: RuntimeTensor
  private let weights: RuntimeTensor
  private let input: RuntimeTensor
  private let bias: RuntimeTensor?
  private let output: RuntimeTensor
  private let options: TransposeConvOptions
  private let activation: FloatClampRange
  private var shape: TransposeConvolutionShape?
  private var packedWeights = PackedTransposeConvolutionWeights()

  init(node: Node) throws {
    try node.expect(inputs: 3, maxInputs: 4, outputs: 1)
    outputShapeTensor = try node.input(0)
    weights = try node.input(1)
    input = try node.input(2)
    bias = node.optionalInput(3)
    output = try node.output(0)
    guard outputShapeTensor.type == .int32 else {
      throw KernelError.invalid("TRANSPOSE_CONV output_shape must be INT32, got \(outputShapeTensor.type.name)")
    }
    try FloatOperands.require([weights, input, bias, output], op: "TRANSPOSE_CONV")
    options = try FloatOperands.options(of: node, op: "TRANSPOSE_CONV", defaults: TransposeConvOptions()) {
      if case .transposeConvOptions(let options) = $0 { options } else { nil }
    }
    activation = try FloatClampRange(options.fusedActivationFunction, op: "TRANSPOSE_CONV")
  }

  func prepare(_ context: inout PrepareContext) throws {
    let shape = try TransposeConvolutionShape(
      op: "TRANSPOSE_CONV", outputShape: outputShapeTensor, input: input, weights: weights, options: options)
    try shape.validateFloatBuffers(bias: bias, op: "TRANSPOSE_CONV")
    output.shape = shape.outputShape
    packedWeights.prepare(weights, shape: shape, context: &context)
    self.shape = shape
  }

  func eval(_ context: EvalContext) throws {
    guard output.elementCount > 0 else { return }
    guard let shape, let scratch = context.scratch else { throw KernelError.invalid("TRANSPOSE_CONV was not prepared") }
    packedWeights.run(
      shape, weights: weights, input: input, bias: bias, activation: activation, output: output, context: context,
      scratch: scratch)
  }
}
