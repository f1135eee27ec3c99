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
// per-worker buffer and its real columns copied out. Used for every convolution that reads its
// input through im2col (not 1×1 stride 1), with groups of one and no dilation, when the generated
// float kernels run: MediaPipe's first layers (3 input channels, 3×3 stride 2) spent most of their
// time gathering im2col rows, and pose_landmark_full's 3×3 layers half of theirs.

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

  let shape: ConvolutionShape
  /// The runs covering one output row, left to right.
  let runs: [PixelRun]

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
  }

  /// Scratch bytes per worker: one row of a 16-column panel (for a last panel narrower than that).
  var workerScratchBytes: Int { shape.width.outputSize * GEMMTile.columns * MemoryLayout<Float>.stride }

  /// True when every kernel the rows call for exists on `kernels` (generated if needed): false
  /// when one was refused a mapping, and then the im2col route runs instead.
  func canRun(on kernels: GeneratedFloatKernels) -> Bool {
    runs.allSatisfy { kernels.canRun(rowCount: $0.count) }
  }

  /// Reserves the kernels the rows call for on `kernels` (mapped with the other nodes' at the end
  /// of `allocateTensors()`).
  func reserveKernels(on kernels: GeneratedFloatKernels) {
    for run in runs { kernels.reserve(rowCount: run.count) }
  }

  /// Computes the convolution on `kernels`, which `canRun` must have accepted.
  ///
  /// - Parameters:
  ///   - filter: the packed filter (`PanelPacking`, depth `shape.gemmDepth`).
  ///   - bias: padded to whole panels, or nil.
  ///   - scratch: `workerScratchBytes` × workers, 64-byte aligned.
  func run(
    kernels: GeneratedFloatKernels, input: UnsafePointer<Float>, filter: UnsafePointer<Float>,
    bias: UnsafePointer<Float>?, activation: FloatClampRange, output: UnsafeMutablePointer<Float>, threadCount: Int,
    scratch: UnsafeMutableRawPointer
  ) {
    let rows = shape.batch * shape.height.outputSize
    ParallelWork.run(itemCount: rows, threadCount: threadCount) { row, worker in
      let buffer = (scratch + worker * workerScratchBytes).assumingMemoryBound(to: Float.self)
      runRow(
        row, kernels: kernels, input: input, filter: filter, bias: bias, activation: activation, output: output,
        buffer: buffer)
    }
  }

  /// Output row `row` (image-major) over every panel and run.
  private func runRow(
    _ row: Int, kernels: GeneratedFloatKernels, input: UnsafePointer<Float>, filter: UnsafePointer<Float>,
    bias: UnsafePointer<Float>?, activation: FloatClampRange, output: UnsafeMutablePointer<Float>,
    buffer: UnsafeMutablePointer<Float>
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
    for panel in 0..<PanelPacking.panelCount(columns: outputChannels) {
      let column = panel * width
      let columns = min(width, outputChannels - column)
      // A whole panel is written in place; a narrower one into the buffer, then copied.
      let (c, ldc) = columns == width ? (outputRow + column, outputChannels) : (buffer, width)
      let start = bias.map { $0 + column }
      for run in runs {
        let cRun = c + run.start * ldc
        guard filterRows.first < filterRows.end, !run.columns.isEmpty else {
          fillWithClampedStart(cRun, ldc: ldc, pixels: run.count, start: start, activation: activation)
          continue
        }
        let a = image + (shape.width.inputOrigin(run.start) + run.columns.lowerBound) * channels
        let inputRowFloats = shape.width.inputSize * channels
        let depthStart = (filterRows.first * shape.width.filterSize + run.columns.lowerBound) * channels
        // Runs: `canRun` found its kernels, and made kernels are kept. One segment per filter row.
        _ = kernels.run(
          a: a + (originY + filterRows.first) * inputRowFloats, lda: shape.width.stride * channels,
          rowCount: run.count, b: filter + panel * panelStride + depthStart * width, depth: run.columns.count * channels,
          c: cRun, ldc: ldc, start: start, accumulates: false, clamp: activation,
          segments: filterRows.end - filterRows.first, aSegmentStride: inputRowFloats,
          bSegmentStride: shape.width.filterSize * channels * width)
      }
      if columns < width {
        for x in 0..<outputWidth {
          copyFloats(from: buffer + x * width, to: outputRow + x * outputChannels + column, count: columns)
        }
      }
    }
  }

  /// Pixels whose windows hold no input: the bias (or zero), clamped.
  private func fillWithClampedStart(
    _ c: UnsafeMutablePointer<Float>, ldc: Int, pixels: Int, start: UnsafePointer<Float>?, activation: FloatClampRange
  ) {
    for pixel in 0..<pixels {
      for lane in 0..<GEMMTile.columns {
        c[pixel * ldc + lane] = min(max(start?[lane] ?? 0, activation.lower), activation.upper)
      }
    }
  }
}
