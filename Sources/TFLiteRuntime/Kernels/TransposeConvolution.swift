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
    bias: UnsafePointer<Float>?, activation: ActivationRange, output: UnsafeMutablePointer<Float>,
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
    let outputHeight = shape.height.inputSize
    let outputWidth = shape.width.inputSize
    for row in firstRow..<firstRow + rowCount {
      let image = row / shape.inputHeight
      let y = row % shape.inputHeight
      for x in 0..<shape.inputWidth {
        var slice = columns + ((row - firstRow) * shape.rowPixels + x) * shape.gemmColumns
        for ky in 0..<shape.height.filterSize {
          let outputY = y * shape.height.stride - shape.height.paddingBefore + ky
          for kx in 0..<shape.width.filterSize {
            let outputX = x * shape.width.stride - shape.width.paddingBefore + kx
            if outputY >= 0 && outputY < outputHeight && outputX >= 0 && outputX < outputWidth {
              let out = output + ((image * outputHeight + outputY) * outputWidth + outputX) * outputChannels
              for channel in 0..<outputChannels { out[channel] += slice[channel] }
            }
            slice += outputChannels
          }
        }
      }
    }
  }
}
