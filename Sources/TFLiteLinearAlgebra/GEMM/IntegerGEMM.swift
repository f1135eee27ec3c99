// The 8-bit integer GEMM of the quantized CONV_2D and FULLY_CONNECTED kernels.
//
// C = requantize(A · B + bias): A holds 8-bit activations in unsigned form (uint8 as they are,
// int8 with the sign bit flipped, i.e. plus 128), B the weights minus their zero points. The
// input offset is not applied to A: every column's Σ_k B[k, n] times the offset is folded into
// its bias once, at prepare time, so the inner loop only multiplies and adds.
//
// Two routes compute the Int32 sums, both wrapping as LiteRT's int32 accumulators do, so they are
// equal to the bit and share the requantization below:
// - the Swift kernel over `PairedPanelMatrices` (16-bit weights, two depths per 32-bit lane, the
//   depth padded to even): the products of an unsigned byte and a 16-bit weight compile to
//   pmaddwd (vpdpwssd with AVX-512 VNNI); any 8-bit weights minus their zero point fit;
// - the run-time generated `vpdpbusd` kernels over `QuadPanelMatrices` (signed bytes, four depths
//   per lane, the depth padded to a multiple of four), when the CPU has AVX512-VNNI or AVX-VNNI
//   and the weights fit a signed byte (int8 weights always do, their zero point being 0).
//
// The Swift route requantizes with `IntegerEpilogue.requantize`; the generated route requantizes in
// the generated code (RequantizationEmission.swift), bit for bit the same, from the same constants
// laid out as `RequantizationTable` records.

/// The per-output-channel constants of an integer kernel's requantization, padded with zeros to
/// whole 16-channel blocks per group so every block loads full vectors.
@usableFromInline package final class IntegerChannelConstants {
  /// Channels of one group after padding: the distance between the groups' first channels.
  @usableFromInline package let paddedGroupChannels: Int
  /// Padded channels of all groups.
  @usableFromInline internal let count: Int
  /// The bias, the multipliers and the left shifts, `count` of each.
  @usableFromInline internal let words: UnsafeMutablePointer<Int32>
  /// The `QuantizedMultiplierLanes` parts first, second, negative and shift, `count` of each.
  @usableFromInline internal let wideWords: UnsafeMutablePointer<Int64>
  /// The same constants as one `RequantizationTable` record per 16-channel block, for generated code.
  @usableFromInline internal let table: UnsafeMutableRawPointer
  /// True when some channel shifts its biased sum left (its multiplier is above one).
  @usableFromInline internal let shiftsLeft: Bool
  /// The output zero point.
  @usableFromInline internal let outputZeroPoint: Int32
  /// The fused activation's clamp in raw output values.
  @usableFromInline internal let clamp: ClosedRange<Int32>
  /// Zero point and clamp as the generated requantization reads them, made once here: built per
  /// run and copied into every tile call (448 bytes each), they were 3 % of mobilenet_mini_int8.
  @usableFromInline internal let lanes: UnsafeMutablePointer<RequantizationLanes>

  /// Collects the constants of `groups × groupChannels` channels; channel `c` of the whole op has
  /// bias `bias(c)` (already an Int32 sum term) and multiplier `multipliers[c]`, applied with
  /// `rounding`, then the output zero point `outputZeroPoint` and the clamp `clamp`.
  @inlinable package init(
    groups: Int, groupChannels: Int, multipliers: [QuantizedMultiplier], rounding: RoundingPolicy,
    outputZeroPoint: Int32, clamp: ClosedRange<Int32>, bias: (Int) -> Int32
  ) {
    self.outputZeroPoint = outputZeroPoint
    self.clamp = clamp
    lanes = .allocate(capacity: 1)
    lanes.initialize(to: RequantizationLanes(outputZeroPoint: outputZeroPoint, lower: clamp.lowerBound, upper: clamp.upperBound))
    paddedGroupChannels = PanelPacking.panelCount(columns: groupChannels) * GEMMTile.columns
    count = max(1, groups * paddedGroupChannels)
    words = UnsafeMutablePointer<Int32>.allocate(capacity: 3 * count)
    words.initialize(repeating: 0, count: 3 * count)
    wideWords = UnsafeMutablePointer<Int64>.allocate(capacity: 4 * count)
    wideWords.initialize(repeating: 0, count: 4 * count)
    let blocks = (count + GEMMTile.columns - 1) / GEMMTile.columns
    table = UnsafeMutableRawPointer.allocate(byteCount: blocks * RequantizationTable.blockBytes, alignment: 64)
    table.initializeMemory(as: UInt8.self, repeating: 0, count: blocks * RequantizationTable.blockBytes)
    for block in 0..<blocks {
      for lane in 0..<GEMMTile.columns {
        // Padding channels get the zero multiplier's constants, so every lane's arithmetic is defined.
        RequantizationTable.write(
          lane: lane, of: table + block * RequantizationTable.blockBytes, bias: 0,
          multiplier: QuantizedMultiplier(multiplier: 0, shift: 0), rounding: rounding)
      }
    }
    var shiftsLeft = false
    for group in 0..<groups {
      for channel in 0..<groupChannels {
        let source = group * groupChannels + channel
        let index = group * paddedGroupChannels + channel
        let lane = QuantizedMultiplierLanes.parts(multipliers[source], rounding: rounding)
        words[index] = bias(source)
        words[count + index] = lane.multiplier
        words[2 * count + index] = lane.leftShift
        if lane.leftShift != 0 { shiftsLeft = true }
        wideWords[index] = lane.first
        wideWords[count + index] = lane.second
        wideWords[2 * count + index] = lane.negative
        wideWords[3 * count + index] = lane.shift
        RequantizationTable.write(
          lane: index % GEMMTile.columns, of: table + index / GEMMTile.columns * RequantizationTable.blockBytes,
          bias: words[index], multiplier: multipliers[source], rounding: rounding)
      }
    }
    self.shiftsLeft = shiftsLeft
  }

  deinit {
    words.deallocate()
    wideWords.deallocate()
    table.deallocate()
    lanes.deallocate()
  }

  /// The requantization of group `group`'s channels (column 0 = the group's first channel); it
  /// points into this object's storage, which must outlive it.
  @inlinable package func epilogue(group: Int) -> IntegerEpilogue {
    let first = group * paddedGroupChannels
    return IntegerEpilogue(
      bias: words + first, multipliers: words + count + first, leftShifts: words + 2 * count + first,
      wide: wideWords + first, wideStride: count,
      outputZeroPoint: SIMD8(repeating: outputZeroPoint), lower: SIMD8(repeating: clamp.lowerBound),
      upper: SIMD8(repeating: clamp.upperBound),
      table: UnsafeRawPointer(table + first / GEMMTile.columns * RequantizationTable.blockBytes),
      lanes: UnsafeRawPointer(lanes), shiftsLeft: shiftsLeft)
  }
}

/// What becomes of an int32 sum: plus the channel's bias, rescaled by the channel's multiplier,
/// plus the output zero point, clamped to the activation's range.
@usableFromInline package struct IntegerEpilogue {
  /// Bias per channel.
  @usableFromInline package let bias: UnsafePointer<Int32>
  /// `QuantizedMultiplierLanes.multiplier` per channel.
  @usableFromInline package let multipliers: UnsafePointer<Int32>
  /// `QuantizedMultiplierLanes.leftShift` per channel.
  @usableFromInline package let leftShifts: UnsafePointer<Int32>
  /// The 64-bit lane parts per channel: first, second, negative, shift, `wideStride` apart.
  @usableFromInline package let wide: UnsafePointer<Int64>
  /// Distance between the 64-bit parts.
  @usableFromInline package let wideStride: Int
  /// The output zero point in every lane.
  @usableFromInline package let outputZeroPoint: SIMD8<Int32>
  /// The clamp's lower bound in every lane.
  @usableFromInline package let lower: SIMD8<Int32>
  /// The clamp's upper bound in every lane.
  @usableFromInline package let upper: SIMD8<Int32>
  /// The `RequantizationTable` record of channels 0–15 (channel `c`'s block is `c / 16` records on).
  @usableFromInline package let table: UnsafeRawPointer
  /// Zero point and clamp as the generated requantization reads them (a `RequantizationLanes`).
  @usableFromInline package let lanes: UnsafeRawPointer
  /// False when no channel shifts its biased sum left (the generated requantization skips that step).
  @usableFromInline package let shiftsLeft: Bool

  /// Creates the value from its parts.
  @inlinable package init(
    bias: UnsafePointer<Int32>, multipliers: UnsafePointer<Int32>, leftShifts: UnsafePointer<Int32>,
    wide: UnsafePointer<Int64>, wideStride: Int, outputZeroPoint: SIMD8<Int32>, lower: SIMD8<Int32>,
    upper: SIMD8<Int32>, table: UnsafeRawPointer, lanes: UnsafeRawPointer, shiftsLeft: Bool = true
  ) {
    self.bias = bias
    self.multipliers = multipliers
    self.leftShifts = leftShifts
    self.wide = wide
    self.wideStride = wideStride
    self.outputZeroPoint = outputZeroPoint
    self.lower = lower
    self.upper = upper
    self.table = table
    self.lanes = lanes
    self.shiftsLeft = shiftsLeft
  }

  /// The requantization steps generated kernels storing `Output` need: the left shift only where
  /// a channel has one, the clamp only when it is narrower than `Output`'s range.
  @inlinable package func form<Output: QuantizedInteger>(storing _: Output.Type) -> RequantizationForm {
    RequantizationForm(
      shiftsLeft: shiftsLeft,
      saturates: lower[0] == Int32(Output.min) && upper[0] == Int32(Output.max))
  }

  /// The `RequantizationTable` record of channels `channel ..< channel + 16` (`channel` a multiple of 16).
  @inlinable package func table(channel: Int) -> UnsafeRawPointer {
    table + channel / GEMMTile.columns * RequantizationTable.blockBytes
  }

  /// The raw outputs of channels `channel ..< channel + 16` for their sums (`@inline(always)` where
  /// the compiler has it: with `__always` Swift 6.3's specialized micro-kernels in the runtime
  /// called it out of line).
  #if compiler(>=6.3)
    @inline(always)
  #else
    @inline(__always)
  #endif
  @inlinable
  package func requantize(_ sums: SIMD16<Int32>, channel: Int) -> SIMD16<Int32> {
    SIMD16(lowHalf: requantize(sums.lowHalf, channel: channel), highHalf: requantize(sums.highHalf, channel: channel &+ 8))
  }

  /// The raw outputs of channels `channel ..< channel + 8` for their sums.
  #if compiler(>=6.3)
    @inline(always)
  #else
    @inline(__always)
  #endif
  @inlinable
  package func requantize(_ sums: SIMD8<Int32>, channel: Int) -> SIMD8<Int32> {
    let parts = wide + channel
    let lanes = QuantizedMultiplierLanes(
      multiplier: Self.load(multipliers + channel), leftShift: Self.load(leftShifts + channel), first: Self.load(parts),
      second: Self.load(parts + wideStride), negative: Self.load(parts + 2 &* wideStride),
      shift: Self.load(parts + 3 &* wideStride))
    let scaled = lanes.apply(sums &+ Self.load(bias + channel)) &+ outputZeroPoint
    // Lane by lane: the generic `clamped(lowerBound:upperBound:)` stays an out-of-line call here.
    var result = scaled
    for lane in 0..<8 { result[lane] = min(max(scaled[lane], lower[lane]), upper[lane]) }
    return result
  }

  /// Eight consecutive values.
  @inline(__always)
  @inlinable static func load<Scalar: SIMDScalar>(_ pointer: UnsafePointer<Scalar>) -> SIMD8<Scalar> {
    UnsafeRawPointer(pointer).loadUnaligned(as: SIMD8<Scalar>.self)
  }
}

/// The 8-bit integer GEMM.
@usableFromInline package enum IntegerGEMM {
  /// Bytes of a packed A block of depth `depth`: 16 KiB (it stays in L1 beside a few panels, and
  /// the packing scratch, part of the node's activation arena, stays small next to the
  /// activations), but at least 24 rows, so the generated kernels' tiles of several panels (6 or 8
  /// rows) split the block evenly however deep it is.
  @inlinable package static func packedBlockBytes(depth: Int) -> Int { max(16 * 1024, 24 * depth) }

  /// Weights of this many bytes or more do not stay in L2 (2 MiB per core here, shared with A and
  /// C) from one row block to the next: each block reads them again from L3.
  @inlinable package static var largeWeightBytes: Int { 1024 * 1024 }

  /// The largest packed A block of all rows (`wholeProductBlockBytes`): it stays in L2 beside the
  /// weight panels of one tile group.
  @inlinable package static var wholeProductBytes: Int { 256 * 1024 }

  /// Bytes of a packed A block holding all `rows` rows of depth `depth` (in whole tiles), for a
  /// product whose `depth × columns` weights are large (`largeWeightBytes` or more) while its rows
  /// are few (at most `wholeProductBytes` in all): one row block reads the weights once, where
  /// blocks of `packedBlockBytes` read them once each (the 7 × 7 layers of ResNet50: 49 rows, 1–2.4 MB
  /// of weights, three blocks). nil for other products.
  @inlinable package static func wholeProductBlockBytes(rows: Int, depth: Int, columns: Int) -> Int? {
    let bytes = (rows + GEMMTile.rows - 1) / GEMMTile.rows * GEMMTile.rows * depth
    return depth * columns >= largeWeightBytes && bytes <= wholeProductBytes ? bytes : nil
  }

  /// The plan of an `rows × paddedDepth` by `paddedDepth × columns` product (`paddedDepth` that
  /// of the packed weights): the depth stays whole, since 8-bit outputs cannot hold partial sums.
  @inlinable package static func plan(rows: Int, columns: Int, paddedDepth: Int, threadCount: Int) -> GEMMPlan {
    GEMMPlan(
      rows: rows, columns: columns, depth: paddedDepth, threadCount: threadCount, splitsDepth: false,
      rowBlockElements: packedBlockBytes(depth: paddedDepth))
  }

  /// Computes `output = requantize(A · B)` with the Swift kernel.
  ///
  /// - Parameters:
  ///   - lhs: A in unsigned form, `plan.depth` values per row; a value past the real depth meets a
  ///     zero weight.
  ///   - rhs: one matrix of a `PairedPanelMatrices`.
  ///   - output: C's element (0, 0); rows are `outputStride` apart.
  ///   - scratch: `plan.scratchBytes(leftOperandPacks:threadCount:lhs:output:)` bytes, 64-byte aligned.
  @inlinable package static func multiply<LHS: GEMMLeftOperand, Output: QuantizedInteger>(
    plan: GEMMPlan, lhs: LHS, rhs: UnsafePointer<Int16>, output: UnsafeMutablePointer<Output>, outputStride: Int,
    epilogue: IntegerEpilogue, threadCount: Int, scratch: UnsafeMutableRawPointer
  ) where LHS.Element == UInt8 {
    GEMMDriver.multiply(
      plan: plan, lhs: lhs, rhs: rhs, output: output, outputStride: outputStride,
      kernel: IntegerMicroKernel<Output>(epilogue: epilogue), threadCount: threadCount, scratch: scratch)
  }

  /// Computes `output = requantize(A · B)` with the generated dot-product kernels `kernels`; the
  /// parameters are those of the Swift route, with `rhs` one matrix of a `QuadPanelMatrices`. With
  /// `flipsSign` (only where `kernels.flipsSigns`) A holds int8 bytes, which the kernels read as A + 128.
  /// A partial last panel is stored straight into C by a store-masking family where the kernels
  /// have one (`masksPartialPanel(kernels:plan:)`, whose family the prepare reserved).
  @inlinable package static func multiply<LHS: GEMMLeftOperand, Output: QuantizedInteger>(
    plan: GEMMPlan, lhs: LHS, rhs: UnsafePointer<Int8>, output: UnsafeMutablePointer<Output>, outputStride: Int,
    epilogue: IntegerEpilogue, kernels: GeneratedDotProductKernels, flipsSign: Bool = false, threadCount: Int,
    scratch: UnsafeMutableRawPointer
  ) where LHS.Element == UInt8 {
    GEMMDriver.multiply(
      plan: plan, lhs: lhs, rhs: rhs, output: output, outputStride: outputStride,
      kernel: DotProductMicroKernel<Output>(
        epilogue: epilogue, kernels: kernels, flipsSign: flipsSign,
        masksPartialPanel: masksPartialPanel(kernels: kernels, plan: plan)),
      threadCount: threadCount, scratch: scratch)
  }

  /// True when `plan`'s columns end in a partial panel that `kernels` store under a column mask.
  @inlinable package static func masksPartialPanel(kernels: GeneratedDotProductKernels, plan: GEMMPlan) -> Bool {
    kernels.masksStores && plan.columns % GEMMTile.columns != 0
  }
}

/// The generated `vpdpbusd` kernels as a `GEMMDriver` micro-kernel: a run of full panels is cut
/// into groups of at most `kernels.maximumColumns` panels (sizes within one of each other), and
/// each group's rows into tiles of at most `kernels.maximumRows(columns:)` rows (heights within one
/// row of each other), which the generated code sums, requantizes with the epilogue's
/// `RequantizationTable` records and stores as bytes. The plan never splits the depth, so every
/// call is the first and last block.
/// (`Output`'s requirement is on the conformance, not the type: a constrained generic type makes the
/// Swift runtime check `Output: QuantizedInteger` by a scan of every protocol conformance record
/// the first time it builds the type's metadata, mid-invoke.)
/// The families are held unretained (families live as long as the process, or as a test keeps
/// them), so that making, copying and calling the kernel per GEMM and tile retains nothing.
@usableFromInline package struct DotProductMicroKernel<Output> {
  /// Bias, rescale and clamp of the product.
  @usableFromInline package let epilogue: IntegerEpilogue
  /// The generated kernels computing and requantizing the tiles.
  @usableFromInline package let kernels: Unmanaged<DotProductTiles>
  /// The store-masking family writing a partial last panel straight into C, or nil (the driver's
  /// scratch tile then takes it).
  @usableFromInline package let maskedTiles: Unmanaged<DotProductTiles>?
}

extension DotProductMicroKernel: GEMMMicroKernel where Output: QuantizedInteger {
  /// A kernel on `kernels`' family storing `Output` (reading int8 A as A + 128 when `flipsSign`)
  /// finishing its tiles with `epilogue`, in its own requantization form or, where the OS refused
  /// that family, the complete form, which must have been mapped at prepare
  /// (`GeneratedDotProductKernels/tiles(_:form:flipsSign:)` not nil); this only looks them up.
  /// With `masksPartialPanel` (only where `kernels.masksStores`) a partial last panel runs on the
  /// store-masking family of the same form, when it maps (reserved at prepare).
  @inlinable package init(
    epilogue: IntegerEpilogue, kernels: GeneratedDotProductKernels, flipsSign: Bool = false,
    masksPartialPanel: Bool = false
  ) {
    let output: RequantizedOutput = Output.isSigned ? .int8 : .uint8
    let form = epilogue.form(storing: Output.self)
    guard
      let tiles = kernels.tiles(output, form: form, flipsSign: flipsSign)
        ?? kernels.tiles(output, form: .complete, flipsSign: flipsSign)
    else {
      preconditionFailure("the generated dot-product kernels were not mapped at prepare")
    }
    let maskedTiles =
      masksPartialPanel ? kernels.tiles(output, form: tiles.form, flipsSign: flipsSign, masksStore: true) : nil
    self.init(
      epilogue: epilogue, tiles: Unmanaged.passUnretained(tiles), maskedTiles: maskedTiles.map { Unmanaged.passUnretained($0) })
  }

  /// A kernel on the family `tiles`, which must store `Output`, be mapped (`mapsFirstTile`) and
  /// outlive the kernel: a convolution's family found at prepare, or a test's own; with
  /// `maskedTiles` (a store-masking family storing `Output`) for a partial last panel.
  @inlinable package init(
    epilogue: IntegerEpilogue, tiles: Unmanaged<DotProductTiles>, maskedTiles: Unmanaged<DotProductTiles>? = nil
  ) {
    self.epilogue = epilogue
    self.kernels = tiles
    self.maskedTiles = maskedTiles
  }

  @inlinable package func panelsRows(
    a: UnsafePointer<UInt8>, lda: Int, rowCount: Int, b: UnsafePointer<Int8>, panels: Int, panelStride: Int,
    depth: Int, output: UnsafeMutablePointer<Output>, ldc: Int, column: Int, isFirstBlock: Bool, isLastBlock: Bool
  ) {
    guard rowCount > 0 && panels > 0 else { return }
    kernels._withUnsafeGuaranteedRef { kernels in
      kernels.forEachTile(rowCount: rowCount, panels: panels) { firstPanel, columns, firstRow, rows in
        kernels.requantizedTile(
          a: a + firstRow * lda, lda: lda, rows: rows, b: b + firstPanel * panelStride, steps: depth / 4,
          table: epilogue.table(channel: column + firstPanel * GEMMTile.columns), lanes: epilogue.lanes,
          c: output + firstRow * ldc + firstPanel * GEMMTile.columns, ldc: ldc, columns: columns,
          panelBytes: panelStride)
      }
    }
  }

  @inlinable package func panelRows(
    a: UnsafePointer<UInt8>, lda: Int, rowCount: Int, b: UnsafePointer<Int8>, depth: Int,
    output: UnsafeMutablePointer<Output>, ldc: Int, column: Int, isFirstBlock: Bool, isLastBlock: Bool
  ) {
    panelsRows(
      a: a, lda: lda, rowCount: rowCount, b: b, panels: 1, panelStride: 0, depth: depth, output: output, ldc: ldc,
      column: column, isFirstBlock: isFirstBlock, isLastBlock: isLastBlock)
  }

  /// The partial last panel straight into C's `validColumns` real columns, in the tallest masked
  /// tiles, when there is a store-masking family; else false (the driver's scratch tile).
  @inlinable package func partialPanelRows(
    a: UnsafePointer<UInt8>, lda: Int, rowCount: Int, b: UnsafePointer<Int8>, depth: Int,
    output: UnsafeMutablePointer<Output>, ldc: Int, column: Int, validColumns: Int, isFirstBlock: Bool,
    isLastBlock: Bool
  ) -> Bool {
    guard let maskedTiles else { return false }
    maskedTiles._withUnsafeGuaranteedRef { maskedTiles in
      maskedTiles.forEachTile(rowCount: rowCount, panels: 1) { _, _, firstRow, rows in
        maskedTiles.requantizedTile(
          a: a + firstRow * lda, lda: lda, rows: rows, b: b, steps: depth / 4, table: epilogue.table(channel: column),
          lanes: epilogue.lanes, c: output + firstRow * ldc, ldc: ldc, validColumns: validColumns)
      }
    }
    return true
  }

  @inlinable package func tile(
    a: UnsafePointer<UInt8>, lda: Int, validRows: Int, b: UnsafePointer<Int8>, depth: Int,
    output: UnsafeMutablePointer<Output>, ldc: Int, column: Int, isFirstBlock: Bool, isLastBlock: Bool
  ) {
    panelRows(
      a: a, lda: lda, rowCount: validRows, b: b, depth: depth, output: output, ldc: ldc, column: column,
      isFirstBlock: isFirstBlock, isLastBlock: isLastBlock)
  }
}

/// The 8-bit micro-kernels: a 4×16 register tile of `SIMD16<Int32>` sums (called twice per
/// 8-row driver tile), and a one-row tile for matrix × vector products. Both requantize and store
/// the tile at the end; the plan never splits the depth, so every call is the first and last block.
/// (`Output`'s requirement is on the conformance, not the type: a constrained generic type makes the
/// Swift runtime check `Output: QuantizedInteger` by a scan of every protocol conformance record
/// the first time it builds the type's metadata, mid-invoke.)
@usableFromInline package struct IntegerMicroKernel<Output> {
  /// Bias, rescale and clamp of the product.
  @usableFromInline package let epilogue: IntegerEpilogue
}

extension IntegerMicroKernel: GEMMMicroKernel where Output: QuantizedInteger {
  /// A kernel finishing its tiles with `epilogue`.
  @inlinable package init(epilogue: IntegerEpilogue) { self.epilogue = epilogue }

  @inlinable package func tile(
    a: UnsafePointer<UInt8>, lda: Int, validRows: Int, b: UnsafePointer<Int16>, depth: Int,
    output: UnsafeMutablePointer<Output>, ldc: Int, column: Int, isFirstBlock: Bool, isLastBlock: Bool
  ) {
    let pairs = depth / 2
    if validRows == 1 {
      let sums = Self.singleRowSums(a: a, b: b, pairs: pairs)
      Self.store(epilogue.requantize(sums, channel: column), to: output)
      return
    }
    var first = 0
    while first < validRows {
      microKernel(
        a: a + first * lda, lda: lda, validRows: min(Self.kernelRows, validRows - first), b: b, pairs: pairs,
        c: output + first * ldc, ldc: ldc, column: column)
      first += Self.kernelRows
    }
  }

  /// Rows of the register tile (four `SIMD16<Int32>` sums, as the float kernel).
  @inlinable package static var kernelRows: Int { 4 }

  /// `value` in every lane.
  @inlinable @inline(__always)
  package static func broadcast(_ value: UInt8) -> SIMD16<Int32> { SIMD16(repeating: Int32(value)) }

  /// The weights of depths 2p and 2p + 1 from one packed pair of 16 columns.
  @inlinable @inline(__always)
  package static func loadPair(_ panel: UnsafeRawPointer) -> (even: SIMD16<Int32>, odd: SIMD16<Int32>) {
    let pair = panel.loadUnaligned(as: SIMD16<Int32>.self)
    return ((pair &<< 16) &>> 16, pair &>> 16)
  }

  /// Narrows raw output values (inside the output type's range) and stores 16 of them.
  @inlinable @inline(__always)
  package static func store(_ values: SIMD16<Int32>, to pointer: UnsafeMutablePointer<Output>) {
    UnsafeMutableRawPointer(pointer).storeBytes(of: values.narrowed(to: Output.self), as: SIMD16<Output>.self)
  }

  /// The sums of one row of 16 columns, over four accumulators so that consecutive multiply-adds
  /// do not wait on each other.
  @inlinable package static func singleRowSums(a: UnsafePointer<UInt8>, b: UnsafePointer<Int16>, pairs: Int) -> SIMD16<Int32> {
    var r0 = SIMD16<Int32>()
    var r1 = SIMD16<Int32>()
    var r2 = SIMD16<Int32>()
    var r3 = SIMD16<Int32>()
    var panel = UnsafeRawPointer(b)
    var row = a
    var remaining = pairs
    while remaining >= 2 {
      let (even0, odd0) = loadPair(panel)
      let (even1, odd1) = loadPair(panel + 64)
      r0 &+= broadcast(row[0]) &* even0
      r1 &+= broadcast(row[1]) &* odd0
      r2 &+= broadcast(row[2]) &* even1
      r3 &+= broadcast(row[3]) &* odd1
      panel += 128
      row += 4
      remaining &-= 2
    }
    if remaining == 1 {
      let (even, odd) = loadPair(panel)
      r0 &+= broadcast(row[0]) &* even
      r1 &+= broadcast(row[1]) &* odd
    }
    return (r0 &+ r1) &+ (r2 &+ r3)
  }

  /// The 4×16 register tile. Rows past `validRows` repeat the last valid row of A and are not stored.
  @inlinable package func microKernel(
    a: UnsafePointer<UInt8>, lda: Int, validRows: Int, b: UnsafePointer<Int16>, pairs: Int,
    c: UnsafeMutablePointer<Output>, ldc: Int, column: Int
  ) {
    let last = validRows - 1
    var a0 = a
    var a1 = a + min(1, last) * lda
    var a2 = a + min(2, last) * lda
    var a3 = a + min(3, last) * lda
    var r0 = SIMD16<Int32>()
    var r1 = SIMD16<Int32>()
    var r2 = SIMD16<Int32>()
    var r3 = SIMD16<Int32>()
    var panel = UnsafeRawPointer(b)
    for _ in 0..<pairs {
      let (even, odd) = Self.loadPair(panel)
      r0 &+= Self.broadcast(a0[0]) &* even &+ Self.broadcast(a0[1]) &* odd
      r1 &+= Self.broadcast(a1[0]) &* even &+ Self.broadcast(a1[1]) &* odd
      r2 &+= Self.broadcast(a2[0]) &* even &+ Self.broadcast(a2[1]) &* odd
      r3 &+= Self.broadcast(a3[0]) &* even &+ Self.broadcast(a3[1]) &* odd
      panel += 64
      a0 += 2
      a1 += 2
      a2 += 2
      a3 += 2
    }
    Self.store(epilogue.requantize(r0, channel: column), to: c)
    if validRows > 1 { Self.store(epilogue.requantize(r1, channel: column), to: c + ldc) }
    if validRows > 2 { Self.store(epilogue.requantize(r2, channel: column), to: c + 2 * ldc) }
    if validRows > 3 { Self.store(epilogue.requantize(r3, channel: column), to: c + 3 * ldc) }
  }
}

// Lane-by-lane widening and narrowing of 16-lane integer vectors. The standard library's generic
// `init(truncatingIfNeeded:)` is often left as an out-of-line call in these kernels (always for
// Int16), which passes every vector through memory; spelled out, LLVM emits one instruction.
extension SIMD16 where Scalar == Int32 {
  /// The lanes of `x`, sign- or zero-extended as its type says.
  @inlinable @inline(__always)
  package init<Source: FixedWidthInteger & SIMDScalar>(widening x: SIMD16<Source>) {
    self.init(
      Int32(x[0]), Int32(x[1]), Int32(x[2]), Int32(x[3]), Int32(x[4]), Int32(x[5]), Int32(x[6]), Int32(x[7]),
      Int32(x[8]), Int32(x[9]), Int32(x[10]), Int32(x[11]), Int32(x[12]), Int32(x[13]), Int32(x[14]), Int32(x[15]))
  }

  /// The low bits of every lane, as `Output` values.
  @inlinable @inline(__always)
  package func narrowed<Output: FixedWidthInteger & SIMDScalar>(to type: Output.Type) -> SIMD16<Output> {
    SIMD16<Output>(
      Output(truncatingIfNeeded: self[0]), Output(truncatingIfNeeded: self[1]), Output(truncatingIfNeeded: self[2]),
      Output(truncatingIfNeeded: self[3]), Output(truncatingIfNeeded: self[4]), Output(truncatingIfNeeded: self[5]),
      Output(truncatingIfNeeded: self[6]), Output(truncatingIfNeeded: self[7]), Output(truncatingIfNeeded: self[8]),
      Output(truncatingIfNeeded: self[9]), Output(truncatingIfNeeded: self[10]), Output(truncatingIfNeeded: self[11]),
      Output(truncatingIfNeeded: self[12]), Output(truncatingIfNeeded: self[13]), Output(truncatingIfNeeded: self[14]),
      Output(truncatingIfNeeded: self[15]))
  }
}
