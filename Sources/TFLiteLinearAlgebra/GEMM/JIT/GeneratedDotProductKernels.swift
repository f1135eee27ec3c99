// The generated 8-bit dot-product kernels (`DotProductKernelGenerator`), kept for the process,
// and which of them a runner uses. They read weights packed by `QuadPanelMatrices` (PanelPacking.swift).
//
// The sums are those of `IntegerGEMM` exactly: A unsigned (uint8 as is, int8 plus 128), B the
// weights minus their zero points, Σ A·B wrapping in Int32. `vpdpbusd` multiplies unsigned by
// *signed bytes*, so B must fit an Int8: true for int8 weights, whose zero point is 0 in TFLite;
// uint8 weights minus their zero point can reach ±255 and stay on the 16-bit Swift panels. The
// input offset (128 for int8) is folded into the bias through the column sums, as FBGEMM does.

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// The generated dot-product kernels of one instruction set, in families: the family storing
/// Int32 sums, and per output type (AVX512-VNNI: also per output type reading int8 A, and the
/// one-panel families storing under a column mask) a requantizing family per
/// `RequantizationForm`. A family (`DotProductTiles`: one kernel per tile of 1 through
/// `maximumColumns` panels and 1 through `maximumRows(columns:)` rows, in one executable mapping)
/// is generated the first time a convolution asks for it and kept for the life of the process, so
/// a model pays only for the families it uses (a bounded cache: at most 33 families of at most 34
/// kernels of a few kilobytes each, each kernel itself made on first use).
///
/// The 8-bit CONV_2D and FULLY_CONNECTED kernels use them (`IntegerGEMM` with
/// `DotProductMicroKernel`) wherever the CPU and OS allow and the weights fit signed bytes; the
/// Swift kernel on 16-bit panels runs when generated code is turned off (`SWIFTTFLITE_JIT=0`, or
/// ``RunnerOptions/usesGeneratedKernels`` false), when the OS refuses executable memory, on CPUs
/// without VNNI, on other architectures and on iOS, tvOS, watchOS and visionOS.
@usableFromInline package final class GeneratedDotProductKernels: @unchecked Sendable {
  // @unchecked Sendable: `families` is read and written only under `mutex`; the rest is immutable.

  /// The instruction set of the kernels.
  @usableFromInline package let isa: DotProductISA
  /// Rows of the tallest one-panel kernel.
  @usableFromInline package let maximumRows: Int
  /// Most panels of a tile.
  @usableFromInline package let maximumColumns: Int
  /// True when a requantizing family can read int8 A as it is (`flipsSign`).
  @usableFromInline package let flipsSigns: Bool
  /// True when one-panel requantizing families can store only some columns (`masksStore`).
  @usableFromInline package let masksStores: Bool
  /// AVX512-VNNI: the kernels of int8 1×1 convolutions into 1–4 channels with output bytes on the
  /// lanes (`PixelLaneKernelGenerator`); nil on AVX-VNNI.
  @usableFromInline package let pixelLanes: PixelLaneKernels?
  /// The families made so far, by `familyIndex` (each usable once its first tile maps).
  private var families: [DotProductTiles?]
  /// Guards `families`.
  private let mutex: UnsafeMutablePointer<pthread_mutex_t>

  /// The kernels of `isa`, none generated yet.
  private init(isa: DotProductISA) {
    self.isa = isa
    maximumRows = DotProductKernelGenerator.maximumRows(isa)
    maximumColumns = DotProductKernelGenerator.maximumColumns(isa)
    flipsSigns = DotProductKernelGenerator.flipsSigns(isa)
    masksStores = DotProductKernelGenerator.masksStores(isa)
    pixelLanes = isa == .avx512VNNI ? PixelLaneKernels() : nil
    families = Array(repeating: nil, count: 1 + 4 * RequantizedOutput.allCases.count * RequantizationForm.all.count)
    mutex = .allocate(capacity: 1)
    pthread_mutex_init(mutex, nil)
  }

  deinit {
    pthread_mutex_destroy(mutex)
    mutex.deallocate()
  }

  /// Index into `families` of the family storing `output` (Int32 sums when nil) with the steps of
  /// `form`, reading int8 A when `flipsSign`, under a column mask when `masksStore`.
  private static func familyIndex(
    _ output: RequantizedOutput?, form: RequantizationForm, flipsSign: Bool, masksStore: Bool
  ) -> Int {
    guard let output else { return 0 }
    let outputs = RequantizedOutput.allCases.count
    let variant = (masksStore ? 2 : 0) + (flipsSign ? 1 : 0)
    return 1 + (variant * RequantizationForm.all.count + form.index) * outputs + output.rawValue
  }

  /// The family storing `output` (Int32 sums when nil) with the requantization steps of `form`,
  /// reading int8 A as A + 128 when `flipsSign` (only where `flipsSigns`), with one-panel tiles
  /// storing the columns of a mask when `masksStore` (only where `masksStores`), generated on first
  /// use; nil when the OS refuses executable memory. Callers on a hot path ask once (at prepare or
  /// per product) and keep the result.
  @usableFromInline package func tiles(
    _ output: RequantizedOutput?, form: RequantizationForm = .complete, flipsSign: Bool = false,
    masksStore: Bool = false
  ) -> DotProductTiles? {
    let family = reservedTiles(output, form: form, flipsSign: flipsSign, masksStore: masksStore)
    return family.mapsFirstTile ? family : nil
  }

  /// The family `tiles(output, form:, flipsSign:)` gives, with its one-row one-panel tile only
  /// reserved (`LazyExecutableKernels/reserve(_:)`), not yet known to map: a prepare that needs
  /// several families, or tiles of them, reserves them all first, so that one mapping takes them
  /// together (at the first `tiles` call, or at the end of `allocateTensors()`).
  package func reservedTiles(
    _ output: RequantizedOutput?, form: RequantizationForm = .complete, flipsSign: Bool = false,
    masksStore: Bool = false
  ) -> DotProductTiles {
    precondition(!flipsSign || (flipsSigns && output != nil), "this family cannot read int8 A")
    precondition(!masksStore || (masksStores && output != nil), "this family cannot mask its stores")
    let index = Self.familyIndex(output, form: form, flipsSign: flipsSign, masksStore: masksStore)
    pthread_mutex_lock(mutex)
    defer { pthread_mutex_unlock(mutex) }
    if let family = families[index] { return family }
    let family = DotProductTiles(isa: isa, output: output, form: form, flipsSign: flipsSign, masksStore: masksStore)
    families[index] = family
    return family
  }

  /// A family as `tiles(output, flipsSign:)` gives, made anew with only its first tile, apart from the
  /// process's own (for tests of a refused mapping); nil when the OS refuses that tile.
  package func unsharedTiles(
    _ output: RequantizedOutput?, form: RequantizationForm = .complete, flipsSign: Bool = false,
    masksStore: Bool = false
  ) -> DotProductTiles? {
    precondition(!masksStore || (masksStores && output != nil), "this family cannot mask its stores")
    let family = DotProductTiles(isa: isa, output: output, form: form, flipsSign: flipsSign, masksStore: masksStore)
    return family.mapsFirstTile ? family : nil
  }

  /// Rows of the tallest requantizing tile of `columns` panels.
  @inlinable package func maximumRows(columns: Int) -> Int {
    DotProductKernelGenerator.maximumRows(isa, columns: columns)
  }

  private static let avxVNNI = GeneratedDotProductKernels(isa: .avxVNNI)
  private static let avx512VNNI = GeneratedDotProductKernels(isa: .avx512VNNI)

  /// The kernels of `isa`, or nil when this CPU, OS or platform cannot run them.
  @usableFromInline package static func kernels(for isa: DotProductISA) -> GeneratedDotProductKernels? {
    guard DotProductISA.supported.contains(isa) else { return nil }
    switch isa {
    case .avxVNNI: return avxVNNI
    case .avx512VNNI: return avx512VNNI
    }
  }

  /// The kernels of the newest dot-product instruction set this machine runs (AVX512-VNNI before
  /// AVX-VNNI), or nil; nil too when `SWIFTTFLITE_JIT` turns generated code off. Decided once per process.
  @usableFromInline package static let preferred: GeneratedDotProductKernels? =
    GeneratedFloatKernels.isTurnedOffByEnvironment ? nil : kernels(for: .avx512VNNI) ?? kernels(for: .avxVNNI)

  /// The instruction set that convolutions prepared in this task use in place of `preferred`'s
  /// (tests run every level this machine has through the convolutions); nil: `preferred`.
  @TaskLocal package static var forcedISA: DotProductISA?

  /// The kernels a convolution prepared on this thread uses: `preferred` (or those of `forcedISA`),
  /// unless the runner turned generated code off (``GeneratedFloatKernels/areAllowed``, the policy
  /// of every generated kernel).
  @usableFromInline package static var current: GeneratedDotProductKernels? {
    guard GeneratedFloatKernels.areAllowed else { return nil }
    guard let forcedISA else { return preferred }
    return GeneratedFloatKernels.isTurnedOffByEnvironment ? nil : kernels(for: forcedISA)
  }

  /// `DotProductTiles/sums` on the family storing Int32 sums (resolved on every call).
  @usableFromInline package func sums(
    a: UnsafePointer<UInt8>, lda: Int, rowCount: Int, b: UnsafePointer<Int8>, steps: Int,
    c: UnsafeMutablePointer<Int32>, ldc: Int, columns: Int = 1, panelBytes: Int = 0
  ) {
    family(nil).sums(
      a: a, lda: lda, rowCount: rowCount, b: b, steps: steps, c: c, ldc: ldc, columns: columns, panelBytes: panelBytes)
  }

  /// `DotProductTiles/tileSums` on the family storing Int32 sums (resolved on every call).
  @usableFromInline package func tileSums(
    a: UnsafePointer<UInt8>, lda: Int, rows: Int, b: UnsafePointer<Int8>, steps: Int,
    c: UnsafeMutablePointer<Int32>, ldc: Int, columns: Int = 1, panelBytes: Int = 0
  ) {
    family(nil).tileSums(
      a: a, lda: lda, rows: rows, b: b, steps: steps, c: c, ldc: ldc, columns: columns, panelBytes: panelBytes)
  }

  /// `DotProductTiles/requantizedTile` on the family storing `Output` (resolved on every call).
  @usableFromInline package func requantizedTile<Output: QuantizedInteger>(
    a: UnsafePointer<UInt8>, lda: Int, rows: Int, b: UnsafePointer<Int8>, steps: Int, table: UnsafeRawPointer,
    lanes: UnsafeRawPointer, c: UnsafeMutablePointer<Output>, ldc: Int, form: RequantizationForm = .complete,
    flipsSign: Bool = false, columns: Int = 1, panelBytes: Int = 0
  ) {
    family(Output.isSigned ? .int8 : .uint8, form: form, flipsSign: flipsSign).requantizedTile(
      a: a, lda: lda, rows: rows, b: b, steps: steps, table: table, lanes: lanes, c: c, ldc: ldc, columns: columns,
      panelBytes: panelBytes)
  }

  /// `tiles(output, form:, flipsSign:)`, which must be mappable (as it was when a prepare asked for it).
  private func family(
    _ output: RequantizedOutput?, form: RequantizationForm = .complete, flipsSign: Bool = false
  ) -> DotProductTiles {
    guard let family = tiles(output, form: form, flipsSign: flipsSign) else {
      preconditionFailure("the generated dot-product kernels could not be mapped")
    }
    return family
  }
}

/// One family of generated dot-product kernels (see `GeneratedDotProductKernels`): every tile of
/// 1 through `maximumColumns` panels and 1 through `maximumRows(columns:)` rows, storing Int32 sums
/// (`output` nil) or requantized `output` bytes. Each tile is generated the first time it runs
/// (`LazyExecutableKernels`), so a model pays for the tile shapes its products call for (a few of
/// the 34 on AVX512-VNNI), not for the whole family.
@usableFromInline package final class DotProductTiles: @unchecked Sendable {
  // @unchecked Sendable: everything is immutable after `init` but the lazily made tiles, which
  // `LazyExecutableKernels` guards.

  /// The instruction set of the kernels.
  @usableFromInline package let isa: DotProductISA
  /// Most panels of a tile.
  @usableFromInline package let maximumColumns: Int
  /// What the kernels store: nil for Int32 sums.
  @usableFromInline package let output: RequantizedOutput?
  /// True when the kernels read int8 A as A + 128.
  @usableFromInline package let flipsSign: Bool
  /// True when the (one-panel) kernels store only the columns of a mask.
  @usableFromInline package let masksStore: Bool
  /// The requantization steps of the requantizing kernels.
  @usableFromInline package let form: RequantizationForm
  /// The tiles, panel count after panel count, tile height after tile height, made on first use.
  private let kernels: LazyExecutableKernels
  /// Index in `kernels` of the one-row tile of `columns` panels, at `columns - 1`.
  private let firstTile: [Int]

  /// The family with only its one-row one-panel tile reserved, to be mapped with the process's
  /// other reserved kernels (whether it maps shows whether the OS maps the family's code).
  fileprivate init(
    isa: DotProductISA, output: RequantizedOutput?, form: RequantizationForm, flipsSign: Bool, masksStore: Bool
  ) {
    let maximumColumns = masksStore ? 1 : DotProductKernelGenerator.maximumColumns(isa)
    var shapes: [(columns: Int, rows: Int)] = []
    var firstTile: [Int] = []
    for columns in 1...maximumColumns {
      firstTile.append(shapes.count)
      for rows in 1...DotProductKernelGenerator.maximumRows(isa, columns: columns) { shapes.append((columns, rows)) }
    }
    let tileShapes = shapes
    let kernels = LazyExecutableKernels(count: tileShapes.count) { index in
      try? DotProductKernelGenerator.code(
        isa: isa, rows: tileShapes[index].rows, columns: tileShapes[index].columns, output: output, form: form,
        flipsSign: flipsSign, masksStore: masksStore)
    }
    kernels.reserve([0])
    self.kernels = kernels
    self.firstTile = firstTile
    self.isa = isa
    self.maximumColumns = maximumColumns
    self.output = output
    self.form = form
    self.flipsSign = flipsSign
    self.masksStore = masksStore
  }

  /// Rows of the tallest tile of `columns` panels.
  @inlinable package func maximumRows(columns: Int) -> Int {
    DotProductKernelGenerator.maximumRows(isa, columns: columns)
  }

  /// True when the one-row one-panel tile is mapped (mapping it now, with every kernel reserved in
  /// the process, if it is not yet): the family can run. Families are handed out only then, and a
  /// mapped tile stays, so it covers, a row and a panel per call, any tile whose own kernel the OS
  /// refuses later.
  package var mapsFirstTile: Bool { kernels.entry(0) != nil }

  /// The tiles `rowCount` rows × `panels` panels are computed in, calling `body(firstPanel,
  /// columns, firstRow, rows)` for each: the panels in groups of at most `maximumColumns` (sizes
  /// within one of each other), each group's rows in tiles of at most `maximumRows(columns:)` rows
  /// (heights within one row of each other).
  @inline(__always)
  @inlinable package func forEachTile(
    rowCount: Int, panels: Int, _ body: (_ firstPanel: Int, _ columns: Int, _ firstRow: Int, _ rows: Int) -> Void
  ) {
    let groups = (panels + maximumColumns - 1) / maximumColumns
    var firstPanel = 0
    for group in 0..<groups {
      let columns = panels / groups + (group < panels % groups ? 1 : 0)
      let tallest = maximumRows(columns: columns)
      let tiles = (rowCount + tallest - 1) / tallest
      var firstRow = 0
      for tile in 0..<tiles {
        let rows = rowCount / tiles + (tile < rowCount % tiles ? 1 : 0)
        body(firstPanel, columns, firstRow, rows)
        firstRow += rows
      }
      firstPanel += columns
    }
  }

  /// Reserves (`LazyExecutableKernels/reserve(_:)`) the tiles a product laid out by `plan` runs
  /// through `DotProductMicroKernel`, so that a prepare has them mapped together at the end of
  /// `allocateTensors()` instead of one mapping each mid-invoke: per work item, the tiles of its
  /// whole panels, and the one-panel tiles of a partial last panel, which the driver runs
  /// `GEMMTile.rows` rows at a time, unless `masksPartialPanel` (a store-masking family then runs
  /// them: `reservePartialPanelTiles(for:)`). A tile left out is still made on its first call.
  package func reserveTiles(for plan: GEMMPlan, masksPartialPanel: Bool = false) {
    var wanted = [Bool](repeating: false, count: firstTile[maximumColumns - 1] + maximumRows(columns: maximumColumns))
    func want(rowCount: Int, panels: Int) {
      forEachTile(rowCount: rowCount, panels: panels) { _, columns, _, rows in wanted[firstTile[columns - 1] + rows - 1] = true }
    }
    let wholePanels = plan.columns / GEMMTile.columns
    for item in 0..<plan.itemCount {
      let rowCount = plan.rowRange(ofBlock: item / plan.panelGroupCount).count
      let panels = plan.panelRange(ofGroup: item % plan.panelGroupCount)
      guard rowCount > 0 else { continue }
      let whole = min(panels.upperBound, wholePanels) - panels.lowerBound
      if whole > 0 { want(rowCount: rowCount, panels: whole) }
      if panels.upperBound > max(panels.lowerBound, wholePanels) && !masksPartialPanel {
        for start in stride(from: 0, to: rowCount, by: GEMMTile.rows) {
          want(rowCount: min(GEMMTile.rows, rowCount - start), panels: 1)
        }
      }
    }
    kernels.reserve(wanted.indices.filter { wanted[$0] })
  }

  /// Reserves the tiles of this store-masking family that `DotProductMicroKernel` runs on the
  /// partial last panel of a product laid out by `plan`: per work item holding it, all its rows.
  package func reservePartialPanelTiles(for plan: GEMMPlan) {
    precondition(masksStore, "only a store-masking family writes partial panels")
    let wholePanels = plan.columns / GEMMTile.columns
    var wanted = [Bool](repeating: false, count: maximumRows(columns: 1))
    for item in 0..<plan.itemCount {
      let rowCount = plan.rowRange(ofBlock: item / plan.panelGroupCount).count
      let panels = plan.panelRange(ofGroup: item % plan.panelGroupCount)
      guard rowCount > 0, panels.upperBound > max(panels.lowerBound, wholePanels) else { continue }
      forEachTile(rowCount: rowCount, panels: 1) { _, _, _, rows in wanted[rows - 1] = true }
    }
    kernels.reserve(wanted.indices.filter { wanted[$0] })
  }

  /// Reserves the tiles a product laid out by `plan` runs through `RowCorrectedDotProductMicroKernel`
  /// on this (Int32-sum) family: per work item and block of `blockRows` rows, `sums` over its whole
  /// panels at most `maximumColumns` at a time, and over a partial last panel alone.
  package func reserveCorrectedTiles(for plan: GEMMPlan, blockRows: Int) {
    let wholePanels = plan.columns / GEMMTile.columns
    for item in 0..<plan.itemCount {
      let rowCount = plan.rowRange(ofBlock: item / plan.panelGroupCount).count
      let panels = plan.panelRange(ofGroup: item % plan.panelGroupCount)
      let whole = max(0, min(panels.upperBound, wholePanels) - panels.lowerBound)
      let hasPartialPanel = panels.upperBound > max(panels.lowerBound, wholePanels)
      for blockStart in stride(from: 0, to: rowCount, by: blockRows) {
        let rows = min(blockRows, rowCount - blockStart)
        for first in stride(from: 0, to: whole, by: maximumColumns) {
          reserveSums(rowCount: rows, columns: min(maximumColumns, whole - first))
        }
        if hasPartialPanel { reserveSums(rowCount: rows, columns: 1) }
      }
    }
  }

  /// Reserves the tiles `sums(rowCount:columns:)` calls: the tallest of `columns` panels, and one
  /// for the rows left over.
  private func reserveSums(rowCount: Int, columns: Int) {
    let tallest = maximumRows(columns: columns)
    let first = firstTile[columns - 1]
    var tiles: [Int] = []
    if rowCount >= tallest { tiles.append(first + tallest - 1) }
    if rowCount % tallest > 0 { tiles.append(first + rowCount % tallest - 1) }
    kernels.reserve(tiles)
  }

  /// Calls the kernel of `columns` panels and `rows` rows on `arguments`, generated on its first
  /// call. When its mapping is refused (only exhausted memory or the code budget can, after the
  /// family's first tile was mapped), the one-row one-panel tile computes it a row and a panel per
  /// call: the same arithmetic, so the same bytes.
  private func run(columns: Int, rows: Int, _ arguments: inout DotProductKernelArguments) {
    if let entry = kernels.entry(firstTile[columns - 1] + rows - 1) { return callKernel(at: entry, &arguments) }
    guard let singleTile = kernels.entry(0) else {
      preconditionFailure("a dot-product family ran before its first tile mapped")
    }
    let outputBytes = output == nil ? MemoryLayout<Int32>.stride : 1
    for row in 0..<rows {
      for panel in 0..<columns {
        var single = arguments
        single.a = arguments.a + row * arguments.aRowBytes
        single.b = arguments.b + panel * arguments.panelBytes
        single.c = arguments.c + row * arguments.cRowBytes + panel * GEMMTile.columns * outputBytes
        single.table = arguments.table.map { $0 + panel * RequantizationTable.blockBytes }
        callKernel(at: singleTile, &single)
      }
    }
  }

  /// Int32 sums of rows `0 ..< rowCount` of A (`4 × steps` unsigned bytes each, rows `lda` apart)
  /// times `columns` `QuadPanelMatrices` panels (`steps` steps of 64 bytes each, `panelBytes`
  /// apart from `b`), 16 per row and panel into C (panel p at column 16p, rows `ldc` apart), in
  /// tiles of at most `maximumRows(columns:)` rows.
  @usableFromInline package func sums(
    a: UnsafePointer<UInt8>, lda: Int, rowCount: Int, b: UnsafePointer<Int8>, steps: Int,
    c: UnsafeMutablePointer<Int32>, ldc: Int, columns: Int = 1, panelBytes: Int = 0
  ) {
    precondition(rowCount >= 0 && (1...maximumColumns).contains(columns), "invalid dot-product extent")
    let tallest = maximumRows(columns: columns)
    var row = 0
    while row < rowCount {
      let rows = min(tallest, rowCount - row)
      tileSums(
        a: a + row * lda, lda: lda, rows: rows, b: b, steps: steps, c: c + row * ldc, ldc: ldc, columns: columns,
        panelBytes: panelBytes)
      row += rows
    }
  }

  /// `sums` of one tile: `rows` (1 through `maximumRows(columns:)`) rows in one call of the generated code.
  @usableFromInline package func tileSums(
    a: UnsafePointer<UInt8>, lda: Int, rows: Int, b: UnsafePointer<Int8>, steps: Int,
    c: UnsafeMutablePointer<Int32>, ldc: Int, columns: Int = 1, panelBytes: Int = 0
  ) {
    precondition(
      output == nil && (1...maximumColumns).contains(columns) && (1...maximumRows(columns: columns)).contains(rows)
        && steps >= 0 && lda >= 0 && ldc >= columns * GEMMTile.columns,
      "invalid dot-product extent")
    var arguments = DotProductKernelArguments(
      a: a, aRowBytes: lda, b: b, steps: steps, c: UnsafeMutableRawPointer(c),
      cRowBytes: ldc * MemoryLayout<Int32>.stride, panelBytes: panelBytes)
    run(columns: columns, rows: rows, &arguments)
  }

  /// One tile as `tileSums`, requantized in the generated code of a family storing `Output`: the 16 columns' `RequantizationTable`
  /// record `table` and `lanes` give bias, rescale, zero point and clamp, and each row's 16 outputs
  /// go to C (rows `ldc` apart) as `Output` bytes, bit for bit as `IntegerEpilogue.requantize` and
  /// a narrowing store. With `columns` panels (1 through `maximumColumns`, `panelBytes` apart from
  /// `b`), `rows` at most `maximumRows(columns:)`, panel p's 16 columns use the record p records
  /// after `table` and go to C's columns 16p ..< 16p + 16. In a `flipsSign` family, A holds int8
  /// bytes, read as A + 128. In a `masksStore` family only the first `validColumns` (1 through 16)
  /// of each row's 16 outputs are stored, and rows may be as close as `validColumns` apart.
  @inlinable package func requantizedTile<Output: QuantizedInteger>(
    a: UnsafePointer<UInt8>, lda: Int, rows: Int, b: UnsafePointer<Int8>, steps: Int, table: UnsafeRawPointer,
    lanes: UnsafeRawPointer, c: UnsafeMutablePointer<Output>, ldc: Int, columns: Int = 1, panelBytes: Int = 0,
    validColumns: Int = GEMMTile.columns
  ) {
    requantizedTile(
      a: a, lda: lda, rows: rows, b: b, steps: steps, table: table, lanes: lanes, c: UnsafeMutableRawPointer(c),
      storing: Output.isSigned ? .int8 : .uint8, ldc: ldc, columns: columns, panelBytes: panelBytes,
      validColumns: validColumns)
  }

  /// `requantizedTile` storing `stored` bytes into C: not generic, so that a call does not ask the
  /// output type's witness table whether it is signed (two calls through the PLT per tile).
  @usableFromInline package func requantizedTile(
    a: UnsafePointer<UInt8>, lda: Int, rows: Int, b: UnsafePointer<Int8>, steps: Int, table: UnsafeRawPointer,
    lanes: UnsafeRawPointer, c: UnsafeMutableRawPointer, storing stored: RequantizedOutput, ldc: Int, columns: Int,
    panelBytes: Int, validColumns: Int
  ) {
    precondition(
      output == stored && (1...maximumColumns).contains(columns)
        && (1...maximumRows(columns: columns)).contains(rows) && steps >= 0 && lda >= 0
        && (masksStore ? (1...GEMMTile.columns).contains(validColumns) : validColumns == GEMMTile.columns)
        && ldc >= (masksStore ? validColumns : columns * GEMMTile.columns),
      "invalid dot-product extent")
    var arguments = DotProductKernelArguments(
      a: a, aRowBytes: lda, b: b, steps: steps, c: c, cRowBytes: ldc, table: table, lanes: lanes,
      panelBytes: panelBytes)
    arguments.storeMask = (1 << UInt32(validColumns)) - 1
    run(columns: columns, rows: rows, &arguments)
  }
}
