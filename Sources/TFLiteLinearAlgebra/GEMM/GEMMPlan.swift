/// How one GEMM `C[M×N] = A[M×K] · B[K×N]` is cut into blocks and work items. Decided at prepare time.
///
/// Work item = one block of rows × one group of right-hand panels. Within an item the depth is
/// walked in blocks of `depthBlock` so a packed B micro-panel (`depthBlock × 16`) stays in L1 while
/// the rows of the block are swept, and the A block (`rowBlock × depthBlock`) stays in L2. Rows are
/// dealt to blocks in whole tiles of `GEMMTile.rows`, as evenly as possible (blocks differ by at
/// most one tile), and panels to groups likewise.
///
/// With one thread there is one panel group and as few row blocks as the cache budget allows. With
/// several, the work is cut into about four items per thread (fewer when items would fall below
/// `minimumItemFlops`; none when the whole product is below two such items), so that a thread
/// slowed by another process just claims fewer; of the cuts with that many items, the plan takes
/// the row-block and panel-group counts whose items, claimed in order by the threads, finish
/// soonest under a simple cost model: an item of m rows × n columns costs
/// `depth · (2mn + operandCost · (m + n))` (the multiply-adds, plus reading its A block and its B
/// panels, which is what a split adds: every extra row block reads all of B again, every extra panel
/// group reads or packs A again) plus `itemOverheadFlops`. So a thin layer (few rows, wide B: the
/// 7×7 stages of ResNet) is split along N and keeps tall row tiles, a tall one along M.
@usableFromInline package struct GEMMPlan: Equatable {
  /// M.
  @usableFromInline package let rows: Int
  /// N.
  @usableFromInline package let columns: Int
  /// K.
  @usableFromInline package let depth: Int
  /// Depth values per block (the last block may be shorter). At least 1.
  @usableFromInline package let depthBlock: Int
  /// Rows of the largest row block (what a worker's packed A block must hold), a multiple of `GEMMTile.rows`.
  @usableFromInline package let rowBlock: Int
  /// Number of row blocks.
  @usableFromInline package let rowBlockCount: Int
  /// Number of panel groups.
  @usableFromInline package let panelGroupCount: Int

  /// Largest depth block: a 256 × 16 float micro-panel is 16 KiB, half of L1.
  @usableFromInline package static let maxDepthBlock = 256
  /// Floats of an A block that should stay in L2 together with B's block.
  @usableFromInline package static let rowBlockBudget = 32 * 1024
  /// The cost of one work item beyond its arithmetic (claiming it, cold caches), in flops.
  @usableFromInline package static let itemOverheadFlops = 100_000.0
  /// Below this many flops a work item costs more in hand-off than it gains in balance.
  @usableFromInline package static let minimumItemFlops = 400_000.0
  /// Plans for more threads are made as for this many (at most 64 items), which keeps planning quick.
  @usableFromInline package static let mostPlannedThreads = 16
  /// The cost of reading one operand element an item needs (from L2, L3 or memory), in flops.
  @usableFromInline package static let operandCost = 16.0

  /// Plans a product of the given size for `threadCount` threads. `splitsDepth` false keeps the
  /// whole depth in one block, for kernels whose output cannot hold partial sums (int8 results);
  /// `rowBlockElements` caps the elements of a packed A block (at least one tile of rows).
  @inlinable package init(
    rows: Int, columns: Int, depth: Int, threadCount: Int, splitsDepth: Bool = true,
    rowBlockElements: Int = rowBlockBudget
  ) {
    self.rows = rows
    self.columns = columns
    self.depth = depth
    let depthBlocks = splitsDepth ? max(1, (depth + Self.maxDepthBlock - 1) / Self.maxDepthBlock) : 1
    depthBlock = max(1, (depth + depthBlocks - 1) / depthBlocks)
    let rowTiles = max(1, (rows + GEMMTile.rows - 1) / GEMMTile.rows)
    let tilesPerBlock = min(rowTiles, max(1, rowBlockElements / (GEMMTile.rows * depthBlock)))
    let fewestRowBlocks = (rowTiles + tilesPerBlock - 1) / tilesPerBlock
    let chosen = Self.cut(
      rows: rows, columns: columns, depth: depth, threadCount: threadCount, rowTile: GEMMTile.rows,
      fewestRowBlocks: fewestRowBlocks)
    rowBlockCount = chosen.rowBlocks
    panelGroupCount = chosen.panelGroups
    rowBlock = (rowTiles + rowBlockCount - 1) / rowBlockCount * GEMMTile.rows
  }

  /// Number of work items.
  @inlinable package var itemCount: Int { rows == 0 || columns == 0 ? 0 : rowBlockCount * panelGroupCount }

  /// The rows of row block `block` (whole tiles, the last clipped to M).
  @inlinable package func rowRange(ofBlock block: Int) -> Range<Int> {
    Self.share(block, of: rowBlockCount, units: (rows + GEMMTile.rows - 1) / GEMMTile.rows, unitSize: GEMMTile.rows, limit: rows)
  }

  /// The panels of panel group `group`.
  @inlinable package func panelRange(ofGroup group: Int) -> Range<Int> {
    let panels = PanelPacking.panelCount(columns: columns)
    return Self.share(group, of: panelGroupCount, units: panels, unitSize: 1, limit: panels)
  }

  /// The row-block and panel-group counts of a product whose rows come in tiles of `rowTile`
  /// rows: `fewestRowBlocks` blocks and one panel group on one thread, else the cut whose items
  /// finish soonest (see the type's documentation). For kernels with a tile height of their own
  /// (the dynamic-range GEMM), which then deal rows and panels with `share`.
  @inlinable package static func cut(
    rows: Int, columns: Int, depth: Int, threadCount: Int, rowTile: Int, fewestRowBlocks: Int
  ) -> (rowBlocks: Int, panelGroups: Int) {
    guard threadCount > 1 else { return (fewestRowBlocks, 1) }
    return fastestSplit(
      rows: rows, columns: columns, depth: depth, threadCount: min(threadCount, mostPlannedThreads),
      fewestRowBlocks: fewestRowBlocks, rowTile: rowTile, rowTiles: max(1, (rows + rowTile - 1) / rowTile),
      panelCount: max(1, PanelPacking.panelCount(columns: columns)))
  }

  /// Part `part` of `units` units dealt as evenly as possible to `parts` parts, in elements of
  /// `unitSize`, clipped to `limit`.
  @inlinable package static func share(_ part: Int, of parts: Int, units: Int, unitSize: Int, limit: Int) -> Range<Int> {
    let start = part * units / parts * unitSize
    let end = (part + 1) * units / parts * unitSize
    return min(start, limit)..<min(end, limit)
  }

  /// The row-block and panel-group counts whose items finish soonest on `threadCount` threads (see
  /// the type's documentation); ties go to fewer items. Row blocks never grow past the cache
  /// budget's (`fewestRowBlocks` at least).
  @usableFromInline static func fastestSplit(
    rows: Int, columns: Int, depth: Int, threadCount: Int, fewestRowBlocks: Int, rowTile: Int, rowTiles: Int,
    panelCount: Int
  ) -> (rowBlocks: Int, panelGroups: Int) {
    let enoughItems = 8 * threadCount
    let mostItems = 2 * max(fewestRowBlocks, enoughItems)
    let mostRowBlocks = max(fewestRowBlocks, min(rowTiles, max(fewestRowBlocks + threadCount - 1, enoughItems)))
    let mostPanelGroups = min(panelCount, enoughItems)
    let flops = 2 * Double(rows) * Double(columns) * Double(max(depth, 1))
    let wantedItems = min(
      4 * threadCount, mostRowBlocks * mostPanelGroups, Int(min(flops / minimumItemFlops, Double(Int.max / 2))))
    var best = (rowBlocks: fewestRowBlocks, panelGroups: 1)
    guard wantedItems > 1 else { return best }
    var bestTime = Double.infinity
    var finishTimes = [Double](repeating: 0, count: threadCount)
    for panelGroups in 1...mostPanelGroups {
      for rowBlocks in fewestRowBlocks...mostRowBlocks
      where (wantedItems...mostItems).contains(rowBlocks * panelGroups) {
        let time = finishTime(
          rows: rows, columns: columns, depth: depth, rowBlocks: rowBlocks, rowTile: rowTile, rowTiles: rowTiles,
          panelGroups: panelGroups, panelCount: panelCount, finishTimes: &finishTimes)
        if time < bestTime * (1 - 1e-9) {
          bestTime = time
          best = (rowBlocks, panelGroups)
        }
      }
    }
    return best
  }

  /// When the last of the items of a split finishes, each item claimed in order by whichever of
  /// `finishTimes.count` threads is free first, in the cost model's flops.
  @usableFromInline static func finishTime(
    rows: Int, columns: Int, depth: Int, rowBlocks: Int, rowTile: Int, rowTiles: Int, panelGroups: Int,
    panelCount: Int, finishTimes: inout [Double]
  ) -> Double {
    let items = rowBlocks * panelGroups
    for thread in finishTimes.indices { finishTimes[thread] = 0 }
    let depth = Double(max(depth, 1))
    for item in 0..<items {
      let m = Double(share(item / panelGroups, of: rowBlocks, units: rowTiles, unitSize: rowTile, limit: rows).count)
      let panels = share(item % panelGroups, of: panelGroups, units: panelCount, unitSize: 1, limit: panelCount)
      let n = Double(min(columns, panels.upperBound * GEMMTile.columns) - panels.lowerBound * GEMMTile.columns)
      let cost = depth * (2 * m * n + operandCost * (m + n)) + itemOverheadFlops
      var first = 0
      for thread in finishTimes.indices where finishTimes[thread] < finishTimes[first] { first = thread }
      finishTimes[first] += cost
    }
    return finishTimes.max() ?? 0
  }

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
