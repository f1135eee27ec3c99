/// How one GEMM `C[M×N] = A[M×K] · B[K×N]` is cut into blocks and work items. Decided at prepare time.
///
/// Work item = one block of `rowBlock` rows × one group of right-hand panels. Within an item the
/// depth is walked in blocks of `depthBlock` so a packed B micro-panel (`depthBlock × 16`) stays in
/// L1 while the rows of the block are swept, and the A block (`rowBlock × depthBlock`) stays in L2.
@usableFromInline package struct GEMMPlan: Equatable {
  /// M.
  @usableFromInline package let rows: Int
  /// N.
  @usableFromInline package let columns: Int
  /// K.
  @usableFromInline package let depth: Int
  /// Depth values per block (the last block may be shorter). At least 1.
  @usableFromInline package let depthBlock: Int
  /// Rows per work item, a multiple of `GEMMTile.rows`.
  @usableFromInline package let rowBlock: Int
  /// Number of row blocks.
  @usableFromInline package let rowBlockCount: Int
  /// Right-hand panels per work item.
  @usableFromInline package let panelsPerGroup: Int
  /// Number of panel groups.
  @usableFromInline package let panelGroupCount: Int

  /// Largest depth block: a 256 × 16 float micro-panel is 16 KiB, half of L1.
  @usableFromInline package static let maxDepthBlock = 256
  /// Floats of an A block that should stay in L2 together with B's block.
  @usableFromInline package static let rowBlockBudget = 32 * 1024
  /// Below this many flops a work item costs more in hand-off than it gains in balance.
  @usableFromInline package static let minimumItemFlops = 400_000.0

  /// Plans a product of the given size for `threadCount` threads. `splitsDepth` false keeps the
  /// whole depth in one block, for kernels whose output cannot hold partial sums (int8 results).
  @inlinable package init(rows: Int, columns: Int, depth: Int, threadCount: Int, splitsDepth: Bool = true) {
    self.rows = rows
    self.columns = columns
    self.depth = depth
    let depthBlocks = splitsDepth ? max(1, (depth + Self.maxDepthBlock - 1) / Self.maxDepthBlock) : 1
    depthBlock = max(1, (depth + depthBlocks - 1) / depthBlocks)
    let tileRows = GEMMTile.rows
    let rowTiles = max(1, (rows + tileRows - 1) / tileRows)
    let panelCount = max(1, PanelPacking.panelCount(columns: columns))
    var tilesPerBlock = min(rowTiles, max(1, Self.rowBlockBudget / (tileRows * depthBlock)))
    let tileFlops = 2.0 * Double(tileRows) * Double(panelCount * GEMMTile.columns) * Double(max(depth, 1))
    let minimumTiles = max(1, Int((Self.minimumItemFlops / tileFlops).rounded(.up)))
    let wantedItems = 4 * threadCount
    if threadCount > 1 {
      let tilesForBalance = max(1, rowTiles / wantedItems)
      tilesPerBlock = min(tilesPerBlock, max(tilesForBalance, minimumTiles))
    }
    rowBlock = tilesPerBlock * tileRows
    rowBlockCount = (rowTiles + tilesPerBlock - 1) / tilesPerBlock
    var groups = 1
    if threadCount > 1 && rowBlockCount < wantedItems {
      let blockFlopsPerPanel = 2.0 * Double(rowBlock) * Double(GEMMTile.columns) * Double(max(depth, 1))
      let panelsForWork = max(1, Int((Self.minimumItemFlops / blockFlopsPerPanel).rounded(.up)))
      let maxGroups = max(1, panelCount / panelsForWork)
      groups = min(maxGroups, (wantedItems + rowBlockCount - 1) / rowBlockCount)
    }
    panelsPerGroup = (panelCount + groups - 1) / groups
    panelGroupCount = (panelCount + panelsPerGroup - 1) / panelsPerGroup
  }

  /// Number of work items.
  @inlinable package var itemCount: Int { rows == 0 || columns == 0 ? 0 : rowBlockCount * panelGroupCount }

  /// Bytes of a worker's scratch tile for partial last panels (64-byte aligned).
  @inlinable package static func tileScratchBytes<Output>(output: Output.Type) -> Int {
    (GEMMTile.rows * GEMMTile.columns * MemoryLayout<Output>.stride + 63) & ~63
  }

  /// Bytes of scratch one worker needs: the edge tile, plus an A block when the left operand packs.
  @inlinable package func scratchBytesPerWorker<LHSElement, Output>(
    leftOperandPacks: Bool, lhs: LHSElement.Type, output: Output.Type
  ) -> Int {
    let block = leftOperandPacks ? rowBlock * depthBlock * MemoryLayout<LHSElement>.stride : 0
    return Self.tileScratchBytes(output: output) + (block + 63) & ~63
  }

  /// Bytes of scratch for `threadCount` workers with float operands, or the given element types.
  @inlinable package func scratchBytes<LHSElement, Output>(
    leftOperandPacks: Bool, threadCount: Int, lhs: LHSElement.Type = Float.self, output: Output.Type = Float.self
  ) -> Int {
    scratchBytesPerWorker(leftOperandPacks: leftOperandPacks, lhs: lhs, output: output)
      * max(1, min(threadCount, max(itemCount, 1)))
  }
}
