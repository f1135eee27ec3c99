// CONV_2D on float32 without im2col, on the generated GEMM kernels: for one output row, the taps of
// filter row ky over the output pixels x₀ … x₀+n−1 whose windows have the same in-bounds columns
// form a matrix the GEMM kernel can read straight from the NHWC input: row i starts at input pixel
// (originY + ky, originX(x₀ + i) + kxFirst), rows are stride·C floats apart, and its depth
// (kx, channel) is (kxEnd − kxFirst)·C contiguous floats. The packed filter panel holds the same
// depth range contiguously too (`PanelPacking` lays a panel out depth by depth). So each output
// row is one GEMM call per panel, per group of pixels with the same in-bounds columns: the in-bounds
// filter rows are the call's depth segments (the kernel runs its depth loop once per filter row,
// moving A down one input row and the panel to that filter row's taps), so each tile starts from
// the bias, sums every tap in registers and clamps once.
//
// The products are summed in the im2col GEMM's depth order, (ky, kx, channel), one filter row per
// segment (the generated kernel may round the partial sums differently from one call over the
// whole depth: float rounding, within the convolution tolerances), and a padding tap is skipped
// where im2col adds a zero product. A last panel narrower than 16 columns is computed in a
// per-worker buffer and its real columns copied out.
//
// With horizontal padding (SAME), the pixels at either end of a row see fewer filter columns, so a
// row would split into several runs, those at the ends one or two pixels long: a one-row tile
// loads a whole panel vector per multiply-add and ran at a fraction of the taller tiles' rate (a
// perf profile of ResNet50 float put 18 % of the generated code's samples in the one-row kernel).
// Such a convolution instead copies the in-bounds filter rows of each output row into a per-worker
// buffer with the padding columns as zeros, and runs the whole output row as one run over it (the
// copy is about stride / (filter width · output channels) of the multiply-adds).
//
// Used for convolutions that would read their input through im2col (not 1×1 stride 1), with groups
// of one and no dilation, when the generated float kernels run and the route is expected to be the
// faster one (`outrunsIm2col`: few input channels, or output rows of 14 pixels or more).
// MediaPipe's first layers (3 input channels, 3×3 stride 2) spent most of their time gathering
// im2col rows, and pose_landmark_full's 3×3 layers half of theirs.

import TFLiteLinearAlgebra

/// A float convolution computed as GEMM calls over the input in place (see the file comment).
struct ImplicitConvolution {
  /// Output pixels `start ..< start + count` of a row, whose windows have in-bounds filter columns
  /// `columns`.
  struct PixelRun: Equatable {
    /// First output pixel of the run.
    let start: Int
    /// Pixels in the run.
    let count: Int
    /// The in-bounds filter columns of each pixel's window.
    let columns: Range<Int>
  }

  /// The input rows padded with zero columns on both sides (see the file comment).
  struct PaddedRows: Equatable {
    /// Zero columns before the input's first column.
    let before: Int
    /// Columns of a padded row: every column some pixel's window reads.
    let columns: Int
  }

  let shape: ConvolutionShape
  /// The runs covering one output row, left to right, each reading the input in place.
  let runs: [PixelRun]
  /// Set when some pixel's window has padding columns: every row then runs as one run over its
  /// input rows copied with zero columns, rather than over `runs`.
  let paddedRows: PaddedRows?
  /// The runs each row executes: `runs`, or the whole row over the padded rows.
  private let rowRuns: [PixelRun]

  /// The route for `shape`, or nil when it does not apply (grouped or dilated convolutions).
  init?(_ shape: ConvolutionShape) {
    guard shape.groups == 1, shape.height.dilation == 1, shape.width.dilation == 1, shape.width.outputSize > 0 else {
      return nil
    }
    self.shape = shape
    var runs: [PixelRun] = []
    for x in 0..<shape.width.outputSize {
      let taps = shape.width.validTaps(x)
      let columns = taps.first..<max(taps.first, taps.end)
      if let last = runs.last, last.columns == columns {
        runs[runs.count - 1] = PixelRun(start: last.start, count: last.count + 1, columns: columns)
      } else {
        runs.append(PixelRun(start: x, count: 1, columns: columns))
      }
    }
    self.runs = runs
    let hasPaddingColumns = runs.contains { $0.columns != 0..<shape.width.filterSize }
    paddedRows =
      hasPaddingColumns
      ? PaddedRows(
        before: shape.width.paddingBefore,
        columns: (shape.width.outputSize - 1) * shape.width.stride + shape.width.filterSize) : nil
    rowRuns =
      hasPaddingColumns
      ? [PixelRun(start: 0, count: shape.width.outputSize, columns: 0..<shape.width.filterSize)] : runs
  }

  /// True when this route is expected to run faster than the im2col GEMM: always with fewer than
  /// `im2colChannels` input channels (im2col would gather runs of a few floats), otherwise when an
  /// output row holds at least `shortestRow` pixels. Shorter rows fill no tallest tile per call and
  /// stream the whole filter panel from L2 for each row, where im2col's tiles span output rows
  /// and keep a depth block of the panel in L1 (ResNet50 float's 7×7 3×3 layers: 41–51 GFLOP/s
  /// here against 68–84 on im2col).
  static func outrunsIm2col(_ shape: ConvolutionShape) -> Bool {
    shape.inputChannels < im2colChannels || shape.width.outputSize >= shortestRow
  }

  /// See `outrunsIm2col`: the tallest AVX-512 tile.
  static let shortestRow = 14
  /// See `outrunsIm2col`.
  static let im2colChannels = 16

  /// Bytes of a worker's buffer for a last panel narrower than 16 columns (one output row of it).
  private var panelBufferBytes: Int {
    (shape.width.outputSize * GEMMTile.columns * MemoryLayout<Float>.stride + 63) & ~63
  }

  /// Floats of one padded input row.
  private var paddedRowFloats: Int { (paddedRows?.columns ?? 0) * shape.inputChannels }

  /// Scratch bytes per worker: the narrow panel's buffer, and the padded filter rows.
  var workerScratchBytes: Int {
    panelBufferBytes + shape.height.filterSize * paddedRowFloats * MemoryLayout<Float>.stride
  }

  /// True when every kernel the rows call for exists on `kernels` (generated if needed): false
  /// when one was refused a mapping, and then the im2col route runs instead.
  func canRun(on kernels: GeneratedFloatKernels, appliesNegativeSlopes: Bool = false) -> Bool {
    rowRuns.allSatisfy { kernels.canRun(rowCount: $0.count, appliesNegativeSlopes: appliesNegativeSlopes) }
  }

  /// Reserves the kernels the rows call for on `kernels` (mapped with the other nodes' at the end
  /// of `allocateTensors()`).
  func reserveKernels(on kernels: GeneratedFloatKernels, appliesNegativeSlopes: Bool = false) {
    for run in runs { kernels.reserve(rowCount: run.count, appliesNegativeSlopes: appliesNegativeSlopes) }
  }

  /// Computes the convolution on `kernels`, which `canRun` must have accepted.
  ///
  /// - Parameters:
  ///   - filter: the packed filter (`PanelPacking`, depth `shape.gemmDepth`).
  ///   - bias: padded to whole panels, or nil.
  ///   - negativeSlopes: a folded PRELU's α padded to whole panels, applied after the clamp; or nil.
  ///   - scratch: `workerScratchBytes` × workers, 64-byte aligned.
  func run(
    kernels: GeneratedFloatKernels, input: UnsafePointer<Float>, filter: UnsafePointer<Float>,
    bias: UnsafePointer<Float>?, activation: FloatClampRange, negativeSlopes: UnsafePointer<Float>? = nil,
    output: UnsafeMutablePointer<Float>, threadCount: Int, scratch: UnsafeMutableRawPointer
  ) {
    let rows = shape.batch * shape.height.outputSize
    if paddedRows != nil {
      // The padding columns of every worker's padded rows, zeroed once: `copyPadded` writes only
      // the input's columns.
      for worker in 0..<max(1, threadCount) {
        zeroFloats(
          (scratch + worker * workerScratchBytes + panelBufferBytes).assumingMemoryBound(to: Float.self),
          count: shape.height.filterSize * paddedRowFloats)
      }
    }
    ParallelWork.run(itemCount: rows, threadCount: threadCount) { row, worker in
      let workerScratch = scratch + worker * workerScratchBytes
      runRow(
        row, kernels: kernels, input: input, filter: filter, bias: bias, activation: activation,
        negativeSlopes: negativeSlopes, output: output,
        buffer: workerScratch.assumingMemoryBound(to: Float.self),
        paddedBuffer: (workerScratch + panelBufferBytes).assumingMemoryBound(to: Float.self))
    }
  }

  /// Output row `row` (image-major) over every panel and run.
  private func runRow(
    _ row: Int, kernels: GeneratedFloatKernels, input: UnsafePointer<Float>, filter: UnsafePointer<Float>,
    bias: UnsafePointer<Float>?, activation: FloatClampRange, negativeSlopes: UnsafePointer<Float>?,
    output: UnsafeMutablePointer<Float>, buffer: UnsafeMutablePointer<Float>, paddedBuffer: UnsafeMutablePointer<Float>
  ) {
    let width = GEMMTile.columns
    let channels = shape.inputChannels
    let outputChannels = shape.outputChannels
    let outputWidth = shape.width.outputSize
    let y = row % shape.height.outputSize
    let image = input + (row / shape.height.outputSize) * shape.height.inputSize * shape.width.inputSize * channels
    let filterRows = shape.height.validTaps(y)
    let originY = shape.height.inputOrigin(y)
    let panelStride = shape.gemmDepth * width
    let outputRow = output + row * outputWidth * outputChannels
    let inputRowFloats = shape.width.inputSize * channels
    // A's first in-bounds filter row, the floats between filter rows and the columns before the
    // input's first one: the input in place, or its rows copied with zero columns.
    var (firstRow, rowFloats, columnShift) = (image + (originY + filterRows.first) * inputRowFloats, inputRowFloats, 0)
    if let paddedRows, filterRows.first < filterRows.end {
      copyPadded(
        rows: image + (originY + filterRows.first) * inputRowFloats, count: filterRows.end - filterRows.first,
        padding: paddedRows, into: paddedBuffer)
      (firstRow, rowFloats, columnShift) = (UnsafePointer(paddedBuffer), paddedRowFloats, paddedRows.before)
    }
    for panel in 0..<PanelPacking.panelCount(columns: outputChannels) {
      let column = panel * width
      let columns = min(width, outputChannels - column)
      // A whole panel is written in place; a narrower one into the buffer, then copied.
      let (c, ldc) = columns == width ? (outputRow + column, outputChannels) : (buffer, width)
      let start = bias.map { $0 + column }
      let slopes = negativeSlopes.map { $0 + column }
      for run in rowRuns {
        let cRun = c + run.start * ldc
        guard filterRows.first < filterRows.end, !run.columns.isEmpty else {
          fillWithClampedStart(
            cRun, ldc: ldc, pixels: run.count, start: start, activation: activation, negativeSlopes: slopes)
          continue
        }
        let a = firstRow + (shape.width.inputOrigin(run.start) + columnShift + run.columns.lowerBound) * channels
        let depthStart = (filterRows.first * shape.width.filterSize + run.columns.lowerBound) * channels
        // Runs: `canRun` found its kernels, and made kernels are kept. One segment per filter row.
        _ = kernels.run(
          a: a, lda: shape.width.stride * channels, rowCount: run.count, b: filter + panel * panelStride + depthStart * width,
          depth: run.columns.count * channels, c: cRun, ldc: ldc, start: start, accumulates: false, clamp: activation,
          negativeSlopes: slopes, segments: filterRows.end - filterRows.first, aSegmentStride: rowFloats,
          bSegmentStride: shape.width.filterSize * channels * width)
      }
      if columns < width {
        for x in 0..<outputWidth {
          copyFloats(from: buffer + x * width, to: outputRow + x * outputChannels + column, count: columns)
        }
      }
    }
  }

  /// Copies `count` consecutive input rows (from `rows`) into `destination`, each as
  /// `padding.columns` columns: zeros, then the input row's columns, then zeros. Only the input's
  /// columns are written: `run` zeroed the others once for the whole convolution.
  private func copyPadded(
    rows: UnsafePointer<Float>, count: Int, padding: PaddedRows, into destination: UnsafeMutablePointer<Float>
  ) {
    let channels = shape.inputChannels
    let before = min(padding.before, padding.columns) * channels
    let inside = max(0, min(shape.width.inputSize, padding.columns - padding.before)) * channels
    let inputRowFloats = shape.width.inputSize * channels
    for index in 0..<count {
      copyFloats(from: rows + index * inputRowFloats, to: destination + index * paddedRowFloats + before, count: inside)
    }
  }

  /// Pixels whose windows hold no input: the bias (or zero), clamped, negative values scaled by
  /// `negativeSlopes` when given.
  private func fillWithClampedStart(
    _ c: UnsafeMutablePointer<Float>, ldc: Int, pixels: Int, start: UnsafePointer<Float>?, activation: FloatClampRange,
    negativeSlopes: UnsafePointer<Float>?
  ) {
    for pixel in 0..<pixels {
      for lane in 0..<GEMMTile.columns {
        let value = min(max(start?[lane] ?? 0, activation.lower), activation.upper)
        c[pixel * ldc + lane] = negativeSlopes.map { value < 0 ? value * $0[lane] : value } ?? value
      }
    }
  }
}
