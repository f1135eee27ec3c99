import Dispatch

/// Clamp bounds of a fused activation: TFLite applies `min(max(x, lower), upper)` after the bias.
@usableFromInline package struct FloatClampRange: Sendable, Equatable {
  /// Lower bound (`-Float.greatestFiniteMagnitude` when unbounded, as TFLite's `lowest()`).
  @usableFromInline package var lower: Float
  /// Upper bound (`Float.greatestFiniteMagnitude` when unbounded).
  @usableFromInline package var upper: Float

  /// Values clamped to `lower...upper`.
  @inlinable package init(lower: Float, upper: Float) {
    self.lower = lower
    self.upper = upper
  }

  /// No activation: TFLite still clamps to the finite float range.
  @usableFromInline package static let none = FloatClampRange(lower: -.greatestFiniteMagnitude, upper: .greatestFiniteMagnitude)
  /// RELU.
  @usableFromInline package static let relu = FloatClampRange(lower: 0, upper: .greatestFiniteMagnitude)
  /// RELU_N1_TO_1.
  @usableFromInline package static let reluMinusOneToOne = FloatClampRange(lower: -1, upper: 1)
  /// RELU6.
  @usableFromInline package static let relu6 = FloatClampRange(lower: 0, upper: 6)

  /// `min(max(value, lower), upper)` lane by lane, keeping NaN as TFLite's `std::max`/`std::min` do.
  // `@_transparent` rather than `@inline(__always)`: reached through a protocol witness in the
  // channel-vectorised kernels, the latter was left as an out-of-line call per vector.
  @_transparent
  @inlinable package func apply<Vector: SIMD>(_ value: Vector) -> Vector where Vector.Scalar == Float {
    // Written lane by lane on purpose: LLVM turns this exact form into maxps/minps, while
    // `replacing(with:where:)` with `.<` masks was partly scalarised inside the GEMM tile.
    var result = value
    for lane in 0..<Vector.scalarCount { result[lane] = apply(value[lane]) }
    return result
  }

  /// Scalar form of `apply`.
  @inlinable @inline(__always)
  package func apply(_ value: Float) -> Float {
    let raised = value < lower ? lower : value
    return raised > upper ? upper : raised
  }
}

/// What happens when a float tile is written back: bias (first depth block), clamp and negative
/// slopes (last).
@usableFromInline package struct FloatEpilogue {
  /// Bias per output column, padded with zeros to whole panels; nil for no bias.
  @usableFromInline package var bias: UnsafePointer<Float>?
  /// Fused activation clamp; nil for none at all (BATCH_MATMUL does not clamp).
  @usableFromInline package var activation: FloatClampRange?
  /// A folded PRELU's α per output column, padded with zeros to whole panels: after the clamp,
  /// `x < 0 ? x · α : x`; nil for none.
  @usableFromInline package var negativeSlopes: UnsafePointer<Float>?

  /// Creates an epilogue adding `bias` (or none), clamping to `activation` (or not at all) and
  /// applying `negativeSlopes` (or none).
  @inlinable package init(
    bias: UnsafePointer<Float>?, activation: FloatClampRange?, negativeSlopes: UnsafePointer<Float>? = nil
  ) {
    self.bias = bias
    self.activation = activation
    self.negativeSlopes = negativeSlopes
  }
}

/// `x < 0 ? x · slope : x` lane by lane (PRELU with TFLite's `x >= 0 ? x : x · α`: NaN, +0 and −0
/// pass unchanged).
@inlinable @inline(__always)
package func applyingNegativeSlopes<Vector: SIMD>(_ value: Vector, _ slopes: Vector) -> Vector where Vector.Scalar == Float {
  value.replacing(with: value * slopes, where: value .< 0)
}

/// Single-precision GEMM over packed right-hand panels: `C = clamp(A · B + bias)`.
@usableFromInline package enum FloatGEMM {
  /// Computes the product planned by `plan` with the float micro-kernel.
  ///
  /// - Parameters:
  ///   - rhs: B packed by `PanelPacking` (`plan.depth × plan.columns`).
  ///   - output: C's element (0, 0); rows are `outputStride` apart.
  ///   - scratch: `plan.scratchBytes(leftOperandPacks:threadCount:)` bytes, 64-byte aligned.
  ///   - usesFusedMultiplyAdd: the arithmetic form of the Swift kernel (`FloatMicroKernel`); by
  ///     default the fastest one, found only when the Swift kernel runs.
  ///   - generatedKernels: run-time generated kernels to use instead of the Swift ones; by default
  ///     those of the newest instruction set this machine runs, unless turned off.
  @inlinable package static func multiply<LHS: GEMMLeftOperand>(
    plan: GEMMPlan, lhs: LHS, rhs: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>, outputStride: Int,
    epilogue: FloatEpilogue, threadCount: Int, scratch: UnsafeMutableRawPointer,
    usesFusedMultiplyAdd: Bool? = nil,
    generatedKernels: GeneratedFloatKernels? = GeneratedFloatKernels.current
  ) where LHS.Element == Float {
    GEMMDriver.multiply(
      plan: plan, lhs: lhs, rhs: rhs, output: output, outputStride: outputStride,
      kernel: FloatMicroKernel(
        epilogue: epilogue, usesFusedMultiplyAdd: usesFusedMultiplyAdd, generatedKernels: generatedKernels),
      threadCount: threadCount, scratch: scratch)
  }
}

/// The float32 micro-kernels: register tiles of one vector per row, 16 columns wide (8 or 4 for a
/// last panel with that few real columns, so small N do not pay for the padding), and a one-row
/// tile for matrix × vector products.
///
/// Two arithmetic forms, chosen once per process (`FusedMultiplyAdd.isHardware`):
/// - separate multiply and add (baseline x86-64 has no FMA: `addingProduct` would call libm's
///   `fmaf` per lane) in tiles of 8 SSE accumulators (2 rows × 16, 4 × 8 or 8 × 4 columns), which
///   with the panel vectors and a broadcast fit the 16 SSE registers without spilling;
/// - fused `addingProduct` (a `-target-cpu` build with FMA, AArch64) in 8-row tiles: eight
///   independent accumulators cover the FMA latency on both FMA ports with AVX-512.
///
/// The first depth block starts from the bias (or zero), later ones from the partial sums in C;
/// the last one applies the clamp.
///
/// With `generatedKernels`, every tile runs the run-time generated AVX2/AVX-512 code instead
/// (`GeneratedFloatKernels`), in its own tile heights; rows whose kernel could not be mapped (only
/// exhausted memory or the code budget refuses one) run the Swift tiles.
@usableFromInline package struct FloatMicroKernel: GEMMMicroKernel {
  /// Bias and clamp of the product.
  @usableFromInline package let epilogue: FloatEpilogue
  /// True for the fused form (see the type's documentation).
  @usableFromInline package let usesFusedMultiplyAdd: Bool
  /// Generated kernels that replace the Swift ones, or nil. Held unretained: the sets are the
  /// process's singletons (``GeneratedFloatKernels/kernels(for:)``), never freed, and a retained
  /// reference costs a retain and a release (two atomic operations) around every tile call.
  @usableFromInline package let generatedKernels: Unmanaged<GeneratedFloatKernels>?

  /// A kernel on the generated kernels given, or else in the arithmetic form given (by default the
  /// one this build runs fastest). The default is not looked up when generated kernels run: finding
  /// it times both forms once per process (`FusedMultiplyAdd.isHardware`), a cost at load.
  @inlinable package init(
    epilogue: FloatEpilogue, usesFusedMultiplyAdd: Bool? = nil, generatedKernels: GeneratedFloatKernels? = nil
  ) {
    self.epilogue = epilogue
    self.usesFusedMultiplyAdd = usesFusedMultiplyAdd ?? (generatedKernels == nil && FusedMultiplyAdd.isHardware)
    self.generatedKernels = generatedKernels.map { Unmanaged.passUnretained($0) }
  }

  @inlinable package func panelRows(
    a: UnsafePointer<Float>, lda: Int, rowCount: Int, b: UnsafePointer<Float>, depth: Int,
    output: UnsafeMutablePointer<Float>, ldc: Int, column: Int, isFirstBlock: Bool, isLastBlock: Bool
  ) {
    if runsGenerated(
      a: a, lda: lda, rowCount: rowCount, b: b, depth: depth, output: output, ldc: ldc, column: column,
      columns: GEMMTile.columns, isFirstBlock: isFirstBlock, isLastBlock: isLastBlock)
    {
      return
    }
    var row = 0
    while row < rowCount {
      swiftTile(
        a: a + row * lda, lda: lda, validRows: min(GEMMTile.rows, rowCount - row), b: b, depth: depth,
        output: output + row * ldc, ldc: ldc, column: column, validColumns: GEMMTile.columns,
        isFirstBlock: isFirstBlock, isLastBlock: isLastBlock)
      row += GEMMTile.rows
    }
  }

  /// With generated kernels, the partial panel runs on their column-masked form, in place.
  @inlinable package func partialPanelRows(
    a: UnsafePointer<Float>, lda: Int, rowCount: Int, b: UnsafePointer<Float>, depth: Int,
    output: UnsafeMutablePointer<Float>, ldc: Int, column: Int, validColumns: Int, isFirstBlock: Bool,
    isLastBlock: Bool
  ) -> Bool {
    runsGenerated(
      a: a, lda: lda, rowCount: rowCount, b: b, depth: depth, output: output, ldc: ldc, column: column,
      columns: validColumns, isFirstBlock: isFirstBlock, isLastBlock: isLastBlock)
  }

  /// Runs the rows on the generated kernels, the first `columns` of the panel; false (nothing
  /// done) without generated kernels or when the OS refused the rows' kernel.
  @inlinable func runsGenerated(
    a: UnsafePointer<Float>, lda: Int, rowCount: Int, b: UnsafePointer<Float>, depth: Int,
    output: UnsafeMutablePointer<Float>, ldc: Int, column: Int, columns: Int, isFirstBlock: Bool, isLastBlock: Bool
  ) -> Bool {
    guard let generatedKernels else { return false }
    return generatedKernels._withUnsafeGuaranteedRef { kernels in
      kernels.run(
        a: a, lda: lda, rowCount: rowCount, b: b, depth: depth, c: output, ldc: ldc,
        start: isFirstBlock ? epilogue.bias.map { $0 + column } : nil, accumulates: !isFirstBlock,
        clamp: isLastBlock ? epilogue.activation : nil,
        negativeSlopes: isLastBlock ? epilogue.negativeSlopes.map { $0 + column } : nil, columns: columns)
    }
  }

  @inlinable package func tile(
    a: UnsafePointer<Float>, lda: Int, validRows: Int, b: UnsafePointer<Float>, depth: Int,
    output: UnsafeMutablePointer<Float>, ldc: Int, column: Int, isFirstBlock: Bool, isLastBlock: Bool
  ) {
    tile(
      a: a, lda: lda, validRows: validRows, b: b, depth: depth, output: output, ldc: ldc, column: column,
      validColumns: GEMMTile.columns, isFirstBlock: isFirstBlock, isLastBlock: isLastBlock)
  }

  @inlinable package func tile(
    a: UnsafePointer<Float>, lda: Int, validRows: Int, b: UnsafePointer<Float>, depth: Int,
    output: UnsafeMutablePointer<Float>, ldc: Int, column: Int, validColumns: Int, isFirstBlock: Bool,
    isLastBlock: Bool
  ) {
    if runsGenerated(
      a: a, lda: lda, rowCount: validRows, b: b, depth: depth, output: output, ldc: ldc, column: column,
      columns: GEMMTile.columns, isFirstBlock: isFirstBlock, isLastBlock: isLastBlock)
    {
      return
    }
    swiftTile(
      a: a, lda: lda, validRows: validRows, b: b, depth: depth, output: output, ldc: ldc, column: column,
      validColumns: validColumns, isFirstBlock: isFirstBlock, isLastBlock: isLastBlock)
  }

  /// One tile of at most `GEMMTile.rows` rows in Swift.
  @inlinable func swiftTile(
    a: UnsafePointer<Float>, lda: Int, validRows: Int, b: UnsafePointer<Float>, depth: Int,
    output: UnsafeMutablePointer<Float>, ldc: Int, column: Int, validColumns: Int, isFirstBlock: Bool,
    isLastBlock: Bool
  ) {
    let operands = TileOperands(
      a: a, lda: lda, validRows: validRows, b: b, depth: depth, c: output, ldc: ldc, accumulate: !isFirstBlock,
      bias: isFirstBlock ? epilogue.bias.map { $0 + column } : nil, activation: isLastBlock ? epilogue.activation : nil,
      negativeSlopes: isLastBlock ? epilogue.negativeSlopes.map { $0 + column } : nil)
    if usesFusedMultiplyAdd {
      Self.run(operands, FusedArithmetic.self, validColumns: validColumns)
    } else {
      Self.run(operands, SeparateArithmetic.self, validColumns: validColumns)
    }
  }

  /// Runs the tile with the narrowest vector that holds `validColumns`, in row tiles sized for the
  /// arithmetic form.
  @inline(__always)
  @inlinable static func run<Arithmetic: MultiplyAddForm>(
    _ operands: TileOperands, _: Arithmetic.Type, validColumns: Int
  ) {
    if operands.validRows == 1 {
      singleRowTile(operands, Arithmetic.self)
    } else if validColumns <= 4 {
      rowTiles(operands, EightRows.self, SIMD4<Float>.self, Arithmetic.self)
    } else if validColumns <= 8 {
      if Arithmetic.isFused {
        rowTiles(operands, EightRows.self, SIMD8<Float>.self, Arithmetic.self)
      } else {
        rowTiles(operands, FourRows.self, SIMD8<Float>.self, Arithmetic.self)
      }
    } else if Arithmetic.isFused {
      rowTiles(operands, EightRows.self, SIMD16<Float>.self, Arithmetic.self)
    } else {
      rowTiles(operands, TwoRows.self, SIMD16<Float>.self, Arithmetic.self)
    }
  }

  /// Covers the tile's rows with register tiles of `Height.rows` rows (one call per driver tile:
  /// the per-call setup is not repeated for each register tile).
  @inline(never)
  @inlinable static func rowTiles<Height: TileHeight, Vector: SIMD, Arithmetic: MultiplyAddForm>(
    _ operands: TileOperands, _: Height.Type, _: Vector.Type, _: Arithmetic.Type
  ) where Vector.Scalar == Float {
    var first = 0
    while first < operands.validRows {
      rowTile(operands.rows(from: first, count: Height.rows), Height.self, Vector.self, Arithmetic.self)
      first &+= Height.rows
    }
  }

  /// One output row of 16 columns (matrix × vector products, FULLY_CONNECTED with batch 1): the
  /// depth is split over several accumulators so consecutive multiply-adds do not wait on each
  /// other (two with the separate form, whose 16-lane vector already spans four SSE registers,
  /// four with the fused form).
  @inline(__always)
  @inlinable static func singleRowTile<Arithmetic: MultiplyAddForm>(_ operands: TileOperands, _: Arithmetic.Type) {
    if Arithmetic.isFused {
      singleRowTile(operands, FourRows.self, Arithmetic.self)
    } else {
      singleRowTile(operands, TwoRows.self, Arithmetic.self)
    }
  }

  /// `singleRowTile` with the depth split over `Splits.rows` accumulators.
  @inline(__always)
  @inlinable static func singleRowTile<Splits: TileHeight, Arithmetic: MultiplyAddForm>(
    _ operands: TileOperands, _: Splits.Type, _: Arithmetic.Type
  ) {
    typealias Vector = SIMD16<Float>
    let output = UnsafeMutableRawPointer(operands.c)
    let a = operands.a
    let start =
      operands.accumulate
      ? output.loadUnaligned(as: Vector.self)
      : operands.bias.map { UnsafeRawPointer($0).loadUnaligned(as: Vector.self) } ?? Vector()
    var partial = RowAccumulators<Splits, Vector> { split in split == 0 ? start : Vector() }
    let panel = UnsafeRawPointer(operands.b)
    let stride = MemoryLayout<Vector>.stride
    let depth = operands.depth
    var k = 0
    while k &+ Splits.rows <= depth {
      partial.update { split, accumulator in
        var sum = accumulator
        Arithmetic.multiplyAdd(&sum, a[k &+ split], panel.loadUnaligned(fromByteOffset: (k &+ split) &* stride, as: Vector.self))
        return sum
      }
      k &+= Splits.rows
    }
    var sum = Vector()
    partial.forEach { _, accumulator in sum += accumulator }
    while k < depth {
      Arithmetic.multiplyAdd(&sum, a[k], panel.loadUnaligned(fromByteOffset: k &* stride, as: Vector.self))
      k &+= 1
    }
    if let activation = operands.activation { sum = activation.apply(sum) }
    if let slopes = operands.negativeSlopes {
      sum = applyingNegativeSlopes(sum, UnsafeRawPointer(slopes).loadUnaligned(as: Vector.self))
    }
    output.storeBytes(of: sum, as: Vector.self)
  }

  /// A register tile of up to `Height.rows` rows × `Vector.scalarCount` columns: one accumulator
  /// per row, one panel vector and one broadcast A value per row and depth step. Rows past
  /// `validRows` repeat the last valid row of A and are neither read from nor stored to C.
  ///
  /// The tile starts from C (`accumulate`), from the bias, or from zero; it is clamped when
  /// `activation` is given and its negative values scaled when `negativeSlopes` are (the last
  /// depth block), and stored back to C.
  @inline(__always)
  @inlinable static func rowTile<Height: TileHeight, Vector: SIMD, Arithmetic: MultiplyAddForm>(
    _ operands: TileOperands, _: Height.Type, _: Vector.Type, _: Arithmetic.Type
  ) where Vector.Scalar == Float {
    let last = operands.validRows &- 1
    let a = operands.a
    let lda = operands.lda
    let c = operands.c
    let ldc = operands.ldc
    @inline(__always) func rowOfA(_ row: Int) -> UnsafePointer<Float> { a + min(row, last) &* lda }
    @inline(__always) func rowOfC(_ row: Int) -> UnsafeMutableRawPointer { UnsafeMutableRawPointer(c + row &* ldc) }
    var tile: RowAccumulators<Height, Vector>
    if operands.accumulate {
      // Rows past `validRows` are not part of C: they start from zero and are never stored.
      tile = RowAccumulators { row in row <= last ? rowOfC(row).loadUnaligned(as: Vector.self) : Vector() }
    } else {
      let start = operands.bias.map { UnsafeRawPointer($0).loadUnaligned(as: Vector.self) } ?? Vector()
      tile = RowAccumulators { _ in start }
    }
    var panel = UnsafeRawPointer(operands.b)
    let panelStride = GEMMTile.columns &* MemoryLayout<Float>.stride
    for k in 0..<operands.depth {
      let bv = panel.loadUnaligned(as: Vector.self)
      tile.update { row, accumulator in
        var sum = accumulator
        Arithmetic.multiplyAdd(&sum, rowOfA(row)[k], bv)
        return sum
      }
      panel += panelStride
    }
    if let activation = operands.activation { tile.update { _, accumulator in activation.apply(accumulator) } }
    if let negativeSlopes = operands.negativeSlopes {
      let slopes = UnsafeRawPointer(negativeSlopes).loadUnaligned(as: Vector.self)
      tile.update { _, accumulator in applyingNegativeSlopes(accumulator, slopes) }
    }
    tile.forEach { row, accumulator in
      if row <= last { rowOfC(row).storeBytes(of: accumulator, as: Vector.self) }
    }
  }
}

/// What one micro-kernel call works on (see `GEMMMicroKernel.tile`), with the epilogue resolved:
/// the bias for a first depth block, the clamp for a last one.
@usableFromInline package struct TileOperands {
  /// Row 0 of A at the block's first depth; rows `lda` apart.
  @usableFromInline package var a: UnsafePointer<Float>
  /// Distance between rows of A.
  @usableFromInline package var lda: Int
  /// Rows of the tile that exist.
  @usableFromInline package var validRows: Int
  /// The packed panel at the block's first depth.
  @usableFromInline package var b: UnsafePointer<Float>
  /// Depth steps.
  @usableFromInline package var depth: Int
  /// The tile's first output element; rows `ldc` apart.
  @usableFromInline package var c: UnsafeMutablePointer<Float>
  /// Distance between rows of C.
  @usableFromInline package var ldc: Int
  /// Continue from the partial sums in C (every depth block but the first).
  @usableFromInline package var accumulate: Bool
  /// The bias of the tile's columns (first depth block), or nil for none.
  @usableFromInline package var bias: UnsafePointer<Float>?
  /// The clamp (last depth block), or nil for none.
  @usableFromInline package var activation: FloatClampRange?
  /// The negative slopes of the tile's columns (last depth block), or nil for none.
  @usableFromInline package var negativeSlopes: UnsafePointer<Float>?

  /// Creates the value from its parts.
  @inlinable package init(a: UnsafePointer<Float>, lda: Int, validRows: Int, b: UnsafePointer<Float>, depth: Int, c: UnsafeMutablePointer<Float>, ldc: Int, accumulate: Bool, bias: UnsafePointer<Float>?, activation: FloatClampRange?, negativeSlopes: UnsafePointer<Float>?) {
    self.a = a
    self.lda = lda
    self.validRows = validRows
    self.b = b
    self.depth = depth
    self.c = c
    self.ldc = ldc
    self.accumulate = accumulate
    self.bias = bias
    self.activation = activation
    self.negativeSlopes = negativeSlopes
  }

  /// The same tile restricted to rows `first ..< first + count` (fewer when the tile ends sooner).
  @inlinable @inline(__always)
  package func rows(from first: Int, count: Int) -> TileOperands {
    var rows = self
    rows.a = a + first &* lda
    rows.c = c + first &* ldc
    rows.validRows = min(count, validRows &- first)
    return rows
  }
}

/// How `acc += a · b` is computed (GEMM tiles, depthwise convolution).
@usableFromInline package protocol MultiplyAddForm {
  /// True for a single fused operation.
  static var isFused: Bool { get }
  /// `accumulator += a * b` lane by lane, with a broadcast `a`.
  static func multiplyAdd<Vector: SIMD>(_ accumulator: inout Vector, _ a: Float, _ b: Vector)
  where Vector.Scalar == Float
  /// `accumulator += a * b` lane by lane.
  static func multiplyAdd<Vector: ChannelVector>(_ accumulator: inout Vector, _ a: Vector, _ b: Vector)
}

/// A multiply, then an add (two roundings): the fast form without hardware FMA.
@usableFromInline package enum SeparateArithmetic: MultiplyAddForm {
  @inlinable package static var isFused: Bool { false }
  @inlinable @inline(__always)
  package static func multiplyAdd<Vector: SIMD>(_ accumulator: inout Vector, _ a: Float, _ b: Vector)
  where Vector.Scalar == Float {
    accumulator += a * b
  }
  @inlinable @inline(__always)
  package static func multiplyAdd<Vector: ChannelVector>(_ accumulator: inout Vector, _ a: Vector, _ b: Vector) {
    accumulator = accumulator + a * b
  }
}

/// One fused multiply-add per lane (one rounding).
@usableFromInline package enum FusedArithmetic: MultiplyAddForm {
  @inlinable package static var isFused: Bool { true }
  @inlinable @inline(__always)
  package static func multiplyAdd<Vector: SIMD>(_ accumulator: inout Vector, _ a: Float, _ b: Vector)
  where Vector.Scalar == Float {
    accumulator = accumulator.addingProduct(a, b)
  }
  @inlinable @inline(__always)
  package static func multiplyAdd<Vector: ChannelVector>(_ accumulator: inout Vector, _ a: Vector, _ b: Vector) {
    accumulator = accumulator.addingProduct(a, b)
  }
}

/// The number of rows of a register tile.
@usableFromInline package protocol TileHeight {
  /// Rows, 1 to 8.
  static var rows: Int { get }
}

/// Two rows.
@usableFromInline package enum TwoRows: TileHeight {
  @inlinable package static var rows: Int { 2 }
}

/// Four rows.
@usableFromInline package enum FourRows: TileHeight {
  @inlinable package static var rows: Int { 4 }
}

/// Eight rows.
@usableFromInline package enum EightRows: TileHeight {
  @inlinable package static var rows: Int { 8 }
}

/// The accumulators of a register tile of `Height.rows` rows. The rows are named fields rather
/// than an array so that they live in registers; fields past the height are never touched and
/// disappear once the tile is specialised.
@usableFromInline package struct RowAccumulators<Height: TileHeight, Vector: SIMD> where Vector.Scalar == Float {
  @usableFromInline internal var r0 = Vector(), r1 = Vector(), r2 = Vector(), r3 = Vector()
  @usableFromInline internal var r4 = Vector(), r5 = Vector(), r6 = Vector(), r7 = Vector()

  /// Row `row` starts as `start(row)`.
  @inlinable @inline(__always)
  package init(_ start: (Int) -> Vector) {
    update { row, _ in start(row) }
  }

  /// Replaces every row's accumulator by `body(row, accumulator)`.
  @inlinable @inline(__always)
  package mutating func update(_ body: (Int, Vector) -> Vector) {
    let rows = Height.rows
    r0 = body(0, r0)
    if rows > 1 { r1 = body(1, r1) }
    if rows > 2 { r2 = body(2, r2) }
    if rows > 3 { r3 = body(3, r3) }
    if rows > 4 { r4 = body(4, r4) }
    if rows > 5 { r5 = body(5, r5) }
    if rows > 6 { r6 = body(6, r6) }
    if rows > 7 { r7 = body(7, r7) }
  }

  /// Calls `body(row, accumulator)` for every row.
  @inlinable @inline(__always)
  package func forEach(_ body: (Int, Vector) -> Void) {
    let rows = Height.rows
    body(0, r0)
    if rows > 1 { body(1, r1) }
    if rows > 2 { body(2, r2) }
    if rows > 3 { body(3, r3) }
    if rows > 4 { body(4, r4) }
    if rows > 5 { body(5, r5) }
    if rows > 6 { body(6, r6) }
    if rows > 7 { body(7, r7) }
  }
}

/// Whether `addingProduct` on floats is a hardware instruction in this binary.
///
/// Swift has no compile-time test for the target's CPU features. Built for baseline x86-64
/// (no FMA), `addingProduct` becomes a libm `fmaf` call per lane, tens of times slower than a
/// separate multiply and add; built with `-target-cpu` for a CPU with FMA it is one instruction,
/// as on AArch64. The two forms are timed once against each other.
@usableFromInline package enum FusedMultiplyAdd {
  /// True when fused multiply-adds are about as cheap as separate ones (always on AArch64).
  @usableFromInline package static let isHardware: Bool = {
    #if arch(arm64)
      return true
    #elseif DEBUG
      // Unoptimised code spends its time in generic calls, which would drown the difference.
      return false
    #else
      // A value the optimizer cannot see, so neither loop is folded at compile time.
      let seed = Float(DispatchTime.now().uptimeNanoseconds & 1) * 0.001 + 0.001
      // The fused form must be well below the cost of a libm call per lane; the best of a few
      // trials discounts preemption.
      var fused = UInt64.max
      var separate = UInt64.max
      var results = SIMD4<Float>()
      withUnsafeMutablePointer(to: &results) { results in
        for _ in 0..<5 {
          fused = min(fused, nanoseconds { chains(FusedArithmetic.self, seed: seed, into: results) })
          separate = min(separate, nanoseconds { chains(SeparateArithmetic.self, seed: seed, into: results) })
        }
      }
      return fused < 4 &* separate
    #endif
  }()

  /// Wall-clock nanoseconds of one call of `body`.
  private static func nanoseconds(_ body: () -> Void) -> UInt64 {
    let start = DispatchTime.now().uptimeNanoseconds
    body()
    return DispatchTime.now().uptimeNanoseconds &- start
  }

  /// Four independent chains of 256 steps `x += seed · x` on 4 lanes (one SSE register, so no
  /// splitting of wide vectors muddles the comparison), added to `result`. Each step needs the
  /// previous one, so nothing can be hoisted or folded, and the store keeps every call in place
  /// between the clock reads; with a small seed the values stay near 1.
  @inline(never)
  private static func chains<Arithmetic: MultiplyAddForm>(
    _: Arithmetic.Type, seed: Float, into result: UnsafeMutablePointer<SIMD4<Float>>
  ) {
    var chain0 = SIMD4<Float>(repeating: 1), chain1 = chain0 + seed, chain2 = chain1 + seed, chain3 = chain2 + seed
    for _ in 0..<256 {
      Arithmetic.multiplyAdd(&chain0, seed, chain0)
      Arithmetic.multiplyAdd(&chain1, seed, chain1)
      Arithmetic.multiplyAdd(&chain2, seed, chain2)
      Arithmetic.multiplyAdd(&chain3, seed, chain3)
    }
    result.pointee += chain0 + chain1 + chain2 + chain3
  }
}
