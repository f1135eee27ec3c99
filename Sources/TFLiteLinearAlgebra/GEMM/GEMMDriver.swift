/// The left-hand matrix of a GEMM as the driver reads it: one block of rows × depth at a time,
/// either in place or copied into the worker's scratch (im2col, transposition).
@usableFromInline package protocol GEMMLeftOperand {
  /// The element type of A.
  associatedtype Element
  /// True when `block` writes into the scratch it is given (the plan then reserves room for it).
  var packsIntoScratch: Bool { get }
  /// Rows `rowStart ..< rowStart+rowCount`, depth `depthStart ..< depthStart+depthCount` of A as a
  /// pointer to the first element and the distance between rows. `scratch` holds
  /// `rowCount * depthCount` elements when `packsIntoScratch`.
  func block(
    rowStart: Int, rowCount: Int, depthStart: Int, depthCount: Int, scratch: UnsafeMutablePointer<Element>
  ) -> (pointer: UnsafePointer<Element>, rowStride: Int)
}

/// A row-major left-hand matrix read in place.
@usableFromInline package struct RowMajorLeftOperand<Element>: GEMMLeftOperand {
  /// Element (0, 0).
  @usableFromInline package let base: UnsafePointer<Element>
  /// Distance between rows.
  @usableFromInline package let rowStride: Int

  /// A matrix whose element (r, d) is at `base + r · rowStride + d`.
  @inlinable package init(base: UnsafePointer<Element>, rowStride: Int) {
    self.base = base
    self.rowStride = rowStride
  }

  @inlinable package var packsIntoScratch: Bool { false }

  @inlinable package func block(
    rowStart: Int, rowCount: Int, depthStart: Int, depthCount: Int, scratch: UnsafeMutablePointer<Element>
  ) -> (pointer: UnsafePointer<Element>, rowStride: Int) {
    (base + rowStart * rowStride + depthStart, rowStride)
  }
}

/// A left-hand matrix stored transposed (K×M row-major), copied into row-major blocks.
@usableFromInline package struct TransposedLeftOperand<Element>: GEMMLeftOperand {
  /// Element (row 0, depth 0).
  @usableFromInline package let base: UnsafePointer<Element>
  /// Distance between consecutive depth indices (the stored rows).
  @usableFromInline package let depthStride: Int

  /// A matrix whose element (r, d) is at `base + d · depthStride + r`.
  @inlinable package init(base: UnsafePointer<Element>, depthStride: Int) {
    self.base = base
    self.depthStride = depthStride
  }

  @inlinable package var packsIntoScratch: Bool { true }

  @inlinable package func block(
    rowStart: Int, rowCount: Int, depthStart: Int, depthCount: Int, scratch: UnsafeMutablePointer<Element>
  ) -> (pointer: UnsafePointer<Element>, rowStride: Int) {
    for d in 0..<depthCount {
      let source = base + (depthStart + d) * depthStride + rowStart
      for r in 0..<rowCount { scratch[r * depthCount + d] = source[r] }
    }
    return (UnsafePointer(scratch), depthCount)
  }
}

/// A register-tiled micro-kernel with its write-back, run by `GEMMDriver` over the blocks of a
/// `GEMMPlan`. One call computes a tile of up to `GEMMTile.rows` rows × `GEMMTile.columns` columns
/// over one depth block.
///
/// The float kernel is `FloatMicroKernel`; an integer kernel (int8 × int8 → int32, widened to
/// `SIMD16<Int32>`) plugs in the same way, with its requantisation in the last depth block.
@usableFromInline package protocol GEMMMicroKernel {
  /// Element type of the left-hand matrix A.
  associatedtype LHSElement
  /// Element type of the packed right-hand panels of B.
  associatedtype RHSElement
  /// Element type of the output C.
  associatedtype OutputElement

  /// Computes rows `0 ..< validRows` of one tile over `depth` steps.
  ///
  /// - Parameters:
  ///   - a: row 0 of the tile in A at the block's first depth; rows are `lda` apart.
  ///   - b: the packed panel (`GEMMTile.columns` wide) at the block's first depth.
  ///   - output: the tile's first element, rows `ldc` apart; all `GEMMTile.columns` columns are
  ///     writable (the driver passes a scratch tile for a partial last panel).
  ///   - column: the tile's first output column (for per-column bias or requantisation).
  ///   - isFirstBlock: the first depth block (start from the bias); otherwise continue from `output`.
  ///   - isLastBlock: the last depth block (finish: clamp, requantise).
  func tile(
    a: UnsafePointer<LHSElement>, lda: Int, validRows: Int, b: UnsafePointer<RHSElement>, depth: Int,
    output: UnsafeMutablePointer<OutputElement>, ldc: Int, column: Int, isFirstBlock: Bool, isLastBlock: Bool)

  /// `tile` for a panel whose first `validColumns` columns are real and the rest zero padding
  /// (the last panel of an N that is not a multiple of `GEMMTile.columns`): the kernel may compute
  /// only those. `output` is still writable across the whole panel width. By default, `tile`.
  func tile(
    a: UnsafePointer<LHSElement>, lda: Int, validRows: Int, b: UnsafePointer<RHSElement>, depth: Int,
    output: UnsafeMutablePointer<OutputElement>, ldc: Int, column: Int, validColumns: Int, isFirstBlock: Bool,
    isLastBlock: Bool)

  /// Rows `0 ..< rowCount` (any number) of a panel whose columns are all real; see the extension.
  func panelRows(
    a: UnsafePointer<LHSElement>, lda: Int, rowCount: Int, b: UnsafePointer<RHSElement>, depth: Int,
    output: UnsafeMutablePointer<OutputElement>, ldc: Int, column: Int, isFirstBlock: Bool, isLastBlock: Bool)

  /// Rows `0 ..< rowCount` (any number) of the last panel, whose first `validColumns` columns are
  /// real, straight into C: only those columns of C are read and written. Returns false when the
  /// kernel cannot (the default); the driver then runs `tile` through a scratch tile.
  func partialPanelRows(
    a: UnsafePointer<LHSElement>, lda: Int, rowCount: Int, b: UnsafePointer<RHSElement>, depth: Int,
    output: UnsafeMutablePointer<OutputElement>, ldc: Int, column: Int, validColumns: Int, isFirstBlock: Bool,
    isLastBlock: Bool) -> Bool

  /// Rows `0 ..< rowCount` of `panels` consecutive panels whose columns are all real, `panelStride`
  /// elements apart from `b`, into C's columns `column ..< column + 16 · panels`; see the extension.
  func panelsRows(
    a: UnsafePointer<LHSElement>, lda: Int, rowCount: Int, b: UnsafePointer<RHSElement>, panels: Int,
    panelStride: Int, depth: Int, output: UnsafeMutablePointer<OutputElement>, ldc: Int, column: Int,
    isFirstBlock: Bool, isLastBlock: Bool)
}

extension GEMMMicroKernel {
  /// Computes rows `0 ..< rowCount` of one panel whose columns are all real, over one depth block,
  /// with the arguments of `tile`. By default tiles of `GEMMTile.rows` rows, one `tile` call each;
  /// a kernel with register tiles of another height (the generated float kernels) covers the rows
  /// its own way.
  @inlinable package func panelRows(
    a: UnsafePointer<LHSElement>, lda: Int, rowCount: Int, b: UnsafePointer<RHSElement>, depth: Int,
    output: UnsafeMutablePointer<OutputElement>, ldc: Int, column: Int, isFirstBlock: Bool, isLastBlock: Bool
  ) {
    tileByTile(
      a: a, lda: lda, rowCount: rowCount, b: b, depth: depth, output: output, ldc: ldc, column: column,
      isFirstBlock: isFirstBlock, isLastBlock: isLastBlock)
  }

  /// Computes rows `0 ..< rowCount` of `panels` full panels, with the arguments of `panelRows`. By
  /// default panel after panel; a kernel whose register tiles span several panels (the generated
  /// dot-product kernels) covers them its own way.
  @inlinable package func panelsRows(
    a: UnsafePointer<LHSElement>, lda: Int, rowCount: Int, b: UnsafePointer<RHSElement>, panels: Int,
    panelStride: Int, depth: Int, output: UnsafeMutablePointer<OutputElement>, ldc: Int, column: Int,
    isFirstBlock: Bool, isLastBlock: Bool
  ) {
    for panel in 0..<panels {
      panelRows(
        a: a, lda: lda, rowCount: rowCount, b: b + panel * panelStride, depth: depth,
        output: output + panel * GEMMTile.columns, ldc: ldc, column: column + panel * GEMMTile.columns,
        isFirstBlock: isFirstBlock, isLastBlock: isLastBlock)
    }
  }

  /// By default a partial panel goes through the driver's scratch tile.
  @inlinable package func partialPanelRows(
    a: UnsafePointer<LHSElement>, lda: Int, rowCount: Int, b: UnsafePointer<RHSElement>, depth: Int,
    output: UnsafeMutablePointer<OutputElement>, ldc: Int, column: Int, validColumns: Int, isFirstBlock: Bool,
    isLastBlock: Bool
  ) -> Bool { false }

  /// The default `panelRows`: one `tile` call per `GEMMTile.rows` rows.
  @inlinable package func tileByTile(
    a: UnsafePointer<LHSElement>, lda: Int, rowCount: Int, b: UnsafePointer<RHSElement>, depth: Int,
    output: UnsafeMutablePointer<OutputElement>, ldc: Int, column: Int, isFirstBlock: Bool, isLastBlock: Bool
  ) {
    var row = 0
    while row < rowCount {
      tile(
        a: a + row * lda, lda: lda, validRows: min(GEMMTile.rows, rowCount - row), b: b, depth: depth,
        output: output + row * ldc, ldc: ldc, column: column, isFirstBlock: isFirstBlock, isLastBlock: isLastBlock)
      row += GEMMTile.rows
    }
  }

  @inlinable package func tile(
    a: UnsafePointer<LHSElement>, lda: Int, validRows: Int, b: UnsafePointer<RHSElement>, depth: Int,
    output: UnsafeMutablePointer<OutputElement>, ldc: Int, column: Int, validColumns: Int, isFirstBlock: Bool,
    isLastBlock: Bool
  ) {
    tile(
      a: a, lda: lda, validRows: validRows, b: b, depth: depth, output: output, ldc: ldc, column: column,
      isFirstBlock: isFirstBlock, isLastBlock: isLastBlock)
  }
}

/// Runs a micro-kernel over a planned GEMM: work items spread over threads, depth blocks, panels,
/// row tiles, with a scratch tile for the columns past N in the last panel.
@usableFromInline package enum GEMMDriver {
  /// Computes `C = A · B` (with the kernel's epilogue) as `plan` lays it out.
  ///
  /// - Parameters:
  ///   - rhs: B packed by `PanelPacking` (`plan.depth × plan.columns`).
  ///   - output: C's element (0, 0); rows are `outputStride` apart.
  ///   - scratch: `plan.scratchBytes(...)` bytes for these element types, 64-byte aligned.
  @inlinable package static func multiply<Kernel: GEMMMicroKernel, LHS: GEMMLeftOperand>(
    plan: GEMMPlan, lhs: LHS, rhs: UnsafePointer<Kernel.RHSElement>,
    output: UnsafeMutablePointer<Kernel.OutputElement>, outputStride: Int, kernel: Kernel, threadCount: Int,
    scratch: UnsafeMutableRawPointer
  ) where LHS.Element == Kernel.LHSElement {
    let tileBytes = GEMMPlan.tileScratchBytes(output: Kernel.OutputElement.self)
    let workerBytes = plan.scratchBytesPerWorker(
      leftOperandPacks: lhs.packsIntoScratch, lhs: LHS.Element.self, output: Kernel.OutputElement.self)
    ParallelWork.run(itemCount: plan.itemCount, threadCount: threadCount) { item, worker in
      let workerScratch = scratch + worker * workerBytes
      runItem(
        item, plan: plan, lhs: lhs, rhs: rhs, output: output, outputStride: outputStride, kernel: kernel,
        tile: workerScratch.assumingMemoryBound(to: Kernel.OutputElement.self),
        lhsScratch: (workerScratch + tileBytes).assumingMemoryBound(to: LHS.Element.self))
    }
  }

  /// One work item: a block of rows against a group of panels, over the whole depth.
  @inlinable static func runItem<Kernel: GEMMMicroKernel, LHS: GEMMLeftOperand>(
    _ item: Int, plan: GEMMPlan, lhs: LHS, rhs: UnsafePointer<Kernel.RHSElement>,
    output: UnsafeMutablePointer<Kernel.OutputElement>, outputStride: Int, kernel: Kernel,
    tile: UnsafeMutablePointer<Kernel.OutputElement>, lhsScratch: UnsafeMutablePointer<LHS.Element>
  ) where LHS.Element == Kernel.LHSElement {
    let rowRange = plan.rowRange(ofBlock: item / plan.panelGroupCount)
    let (rowStart, rowEnd) = (rowRange.lowerBound, rowRange.upperBound)
    let panels = plan.panelRange(ofGroup: item % plan.panelGroupCount)
    let (firstPanel, panelEnd) = (panels.lowerBound, panels.upperBound)
    guard rowStart < rowEnd, firstPanel < panelEnd else { return }
    var depthStart = 0
    repeat {
      let depthCount = min(plan.depthBlock, plan.depth - depthStart)
      let (a, lda) = lhs.block(
        rowStart: rowStart, rowCount: rowEnd - rowStart, depthStart: depthStart, depthCount: depthCount,
        scratch: lhsScratch)
      runPanels(
        a: a, lda: lda, rowCount: rowEnd - rowStart, rhs: rhs, panels: firstPanel..<panelEnd, columns: plan.columns,
        depth: plan.depth, depthStart: depthStart, depthCount: depthCount, output: output + rowStart * outputStride,
        outputStride: outputStride, kernel: kernel, tile: tile)
      depthStart += depthCount
    } while depthStart < plan.depth
  }

  /// Rows `0 ..< rowCount` of A (`a`, rows `lda` apart, at depth `depthStart`) against `panels` of
  /// B (`rhs`: `columns` columns packed `depth` deep) over depths `depthStart ..< depthStart +
  /// depthCount`, into C (`output`: row 0 and column 0, rows `outputStride` apart): the panels whose
  /// columns are all real in one call, then a partial last one in place when the kernel can, else
  /// through `tile` (`GEMMPlan.tileScratchBytes(output:)` bytes). One call of a product whose
  /// depth is not split computes and finishes its rows (the 8-bit routes gather their own A).
  @inlinable package static func runPanels<Kernel: GEMMMicroKernel>(
    a: UnsafePointer<Kernel.LHSElement>, lda: Int, rowCount: Int, rhs: UnsafePointer<Kernel.RHSElement>,
    panels: Range<Int>, columns: Int, depth: Int, depthStart: Int, depthCount: Int,
    output: UnsafeMutablePointer<Kernel.OutputElement>, outputStride: Int, kernel: Kernel,
    tile: UnsafeMutablePointer<Kernel.OutputElement>
  ) {
    let width = GEMMTile.columns
    let height = GEMMTile.rows
    let (firstPanel, panelEnd) = (panels.lowerBound, panels.upperBound)
    let panelStride = depth * width
    let isFirst = depthStart == 0
    let isLast = depthStart + depthCount == depth
    let fullPanelEnd = min(panelEnd, columns / width)
    if fullPanelEnd > firstPanel {
      kernel.panelsRows(
        a: a, lda: lda, rowCount: rowCount, b: rhs + firstPanel * panelStride + depthStart * width,
        panels: fullPanelEnd - firstPanel, panelStride: panelStride, depth: depthCount,
        output: output + firstPanel * width, ldc: outputStride, column: firstPanel * width,
        isFirstBlock: isFirst, isLastBlock: isLast)
    }
    for panel in max(firstPanel, fullPanelEnd)..<panelEnd {
      let b = rhs + panel * panelStride + depthStart * width
      let column = panel * width
      let validColumns = min(width, columns - column)
      // The last panel of an N that is not a multiple of the panel width: in place when the
      // kernel can, else through a scratch tile.
      if kernel.partialPanelRows(
        a: a, lda: lda, rowCount: rowCount, b: b, depth: depthCount, output: output + column, ldc: outputStride,
        column: column, validColumns: validColumns, isFirstBlock: isFirst, isLastBlock: isLast)
      {
        continue
      }
      var row = 0
      while row < rowCount {
        let validRows = min(height, rowCount - row)
        let c = output + row * outputStride + column
        if !isFirst { copyTile(from: c, fromStride: outputStride, to: tile, toStride: width, validRows, validColumns) }
        kernel.tile(
          a: a + row * lda, lda: lda, validRows: validRows, b: b, depth: depthCount, output: tile,
          ldc: width, column: column, validColumns: validColumns, isFirstBlock: isFirst, isLastBlock: isLast)
        copyTile(from: tile, fromStride: width, to: c, toStride: outputStride, validRows, validColumns)
        row += height
      }
    }
  }

  /// Copies the valid `rows × columns` corner of a tile.
  @inline(__always)
  @inlinable static func copyTile<Element>(
    from source: UnsafePointer<Element>, fromStride: Int, to destination: UnsafeMutablePointer<Element>,
    toStride: Int, _ rows: Int, _ columns: Int
  ) {
    for r in 0..<rows {
      copyRun(from: source + r * fromStride, to: destination + r * toStride, count: columns)
    }
  }

  /// Copies `count` elements of a trivial type (source and destination apart): a run of 1–16
  /// bytes (a partial panel's 8-bit outputs) as two overlapping words or single bytes, without a
  /// `memmove` call per row (which cost more than the copy in few-channel first layers, one call
  /// per output pixel); longer runs with `update(from:count:)`.
  @inline(__always)
  @inlinable package static func copyRun<Element>(
    from source: UnsafePointer<Element>, to destination: UnsafeMutablePointer<Element>, count: Int
  ) {
    let bytes = count &* MemoryLayout<Element>.stride
    guard bytes > 0 && bytes <= 16 else {
      destination.update(from: source, count: count)
      return
    }
    let from = UnsafeRawPointer(source)
    let to = UnsafeMutableRawPointer(destination)
    /// The words at the run's start and end (the same bytes twice where they overlap).
    @inline(__always) func copyEnds<Word: FixedWidthInteger>(_: Word.Type) {
      let last = bytes &- MemoryLayout<Word>.size
      let (first, end) = (from.loadUnaligned(as: Word.self), from.loadUnaligned(fromByteOffset: last, as: Word.self))
      to.storeBytes(of: first, as: Word.self)
      to.storeBytes(of: end, toByteOffset: last, as: Word.self)
    }
    if bytes >= 8 {
      copyEnds(UInt64.self)
    } else if bytes >= 4 {
      copyEnds(UInt32.self)
    } else {
      for offset in 0..<bytes { to.storeBytes(of: from.load(fromByteOffset: offset, as: UInt8.self), toByteOffset: offset, as: UInt8.self) }
    }
  }
}
