import Dispatch

/// Clamp bounds of a fused activation: TFLite applies `min(max(x, lower), upper)` after the bias.
struct FloatClampRange: Equatable {
  /// Lower bound (`-Float.greatestFiniteMagnitude` when unbounded, as TFLite's `lowest()`).
  var lower: Float
  /// Upper bound (`Float.greatestFiniteMagnitude` when unbounded).
  var upper: Float

  /// No activation: TFLite still clamps to the finite float range.
  static let none = FloatClampRange(lower: -.greatestFiniteMagnitude, upper: .greatestFiniteMagnitude)
  /// RELU.
  static let relu = FloatClampRange(lower: 0, upper: .greatestFiniteMagnitude)
  /// RELU_N1_TO_1.
  static let reluMinusOneToOne = FloatClampRange(lower: -1, upper: 1)
  /// RELU6.
  static let relu6 = FloatClampRange(lower: 0, upper: 6)

  /// `min(max(value, lower), upper)` lane by lane, keeping NaN as TFLite's `std::max`/`std::min` do.
  // `@_transparent` rather than `@inline(__always)`: reached through a protocol witness in the
  // channel-vectorised kernels, the latter was left as an out-of-line call per vector.
  @_transparent
  func apply<Vector: SIMD>(_ value: Vector) -> Vector where Vector.Scalar == Float {
    // Written lane by lane on purpose: LLVM turns this exact form into maxps/minps, while
    // `replacing(with:where:)` with `.<` masks was partly scalarised inside the GEMM tile.
    var result = value
    for lane in 0..<Vector.scalarCount { result[lane] = apply(value[lane]) }
    return result
  }

  /// Scalar form of `apply`.
  @inline(__always)
  func apply(_ value: Float) -> Float {
    let raised = value < lower ? lower : value
    return raised > upper ? upper : raised
  }
}

/// What happens when a float tile is written back: bias (first depth block) and clamp (last).
struct FloatEpilogue {
  /// Bias per output column, padded with zeros to whole panels; nil for no bias.
  var bias: UnsafePointer<Float>?
  /// Fused activation clamp; nil for none at all (BATCH_MATMUL does not clamp).
  var activation: FloatClampRange?
}

/// Single-precision GEMM over packed right-hand panels: `C = clamp(A · B + bias)`.
enum FloatGEMM {
  /// Computes the product planned by `plan` with the float micro-kernel.
  ///
  /// - Parameters:
  ///   - rhs: B packed by `PanelPacking` (`plan.depth × plan.columns`).
  ///   - output: C's element (0, 0); rows are `outputStride` apart.
  ///   - scratch: `plan.scratchBytes(leftOperandPacks:threadCount:)` bytes, 64-byte aligned.
  ///   - usesFusedMultiplyAdd: the arithmetic form (`FloatMicroKernel`); the fastest one by default.
  static func multiply<LHS: GEMMLeftOperand>(
    plan: GEMMPlan, lhs: LHS, rhs: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>, outputStride: Int,
    epilogue: FloatEpilogue, threadCount: Int, scratch: UnsafeMutableRawPointer,
    usesFusedMultiplyAdd: Bool = FusedMultiplyAdd.isHardware
  ) where LHS.Element == Float {
    GEMMDriver.multiply(
      plan: plan, lhs: lhs, rhs: rhs, output: output, outputStride: outputStride,
      kernel: FloatMicroKernel(epilogue: epilogue, usesFusedMultiplyAdd: usesFusedMultiplyAdd),
      threadCount: threadCount, scratch: scratch)
  }
}

/// The float32 micro-kernels: register tiles of 16 columns (one `SIMD16<Float>` per row), and a
/// one-row tile for matrix × vector products.
///
/// Two arithmetic forms, chosen once per process (`FusedMultiplyAdd.isHardware`):
/// - separate multiply and add (baseline x86-64 has no FMA: `addingProduct` would call libm's
///   `fmaf` per lane) in a 2-row tile, whose 8 accumulators, 4 panel vectors and a broadcast fit the
///   16 SSE registers without spilling;
/// - fused `addingProduct` (a `-target-cpu` build with FMA, AArch64) in an 8-row tile: eight
///   independent accumulators cover the FMA latency on both FMA ports with AVX-512.
///
/// The first depth block starts from the bias (or zero), later ones from the partial sums in C;
/// the last one applies the clamp.
struct FloatMicroKernel: GEMMMicroKernel {
  /// Bias and clamp of the product.
  let epilogue: FloatEpilogue
  /// True for the fused form (see the type's documentation).
  let usesFusedMultiplyAdd: Bool

  /// A kernel with the arithmetic form this build runs fastest.
  init(epilogue: FloatEpilogue, usesFusedMultiplyAdd: Bool = FusedMultiplyAdd.isHardware) {
    self.epilogue = epilogue
    self.usesFusedMultiplyAdd = usesFusedMultiplyAdd
  }

  func tile(
    a: UnsafePointer<Float>, lda: Int, validRows: Int, b: UnsafePointer<Float>, depth: Int,
    output: UnsafeMutablePointer<Float>, ldc: Int, column: Int, isFirstBlock: Bool, isLastBlock: Bool
  ) {
    let bias = isFirstBlock ? epilogue.bias.map { $0 + column } : nil
    let activation = isLastBlock ? epilogue.activation : nil
    let accumulate = !isFirstBlock
    if usesFusedMultiplyAdd {
      if validRows == 1 {
        Self.singleRowTile(
          FusedArithmetic.self, a: a, b: b, depth: depth, c: output, accumulate: accumulate, bias: bias,
          activation: activation)
      } else {
        Self.rowTile(
          EightRows.self, FusedArithmetic.self, a: a, lda: lda, validRows: validRows, b: b, depth: depth, c: output,
          ldc: ldc, accumulate: accumulate, bias: bias, activation: activation)
      }
      return
    }
    if validRows == 1 {
      Self.singleRowTile(
        SeparateArithmetic.self, a: a, b: b, depth: depth, c: output, accumulate: accumulate, bias: bias,
        activation: activation)
      return
    }
    var first = 0
    while first < validRows {
      Self.rowTile(
        TwoRows.self, SeparateArithmetic.self, a: a + first &* lda, lda: lda, validRows: min(2, validRows &- first),
        b: b, depth: depth, c: output + first &* ldc, ldc: ldc, accumulate: accumulate, bias: bias,
        activation: activation)
      first &+= 2
    }
  }

  /// One output row of 16 columns (matrix × vector products, FULLY_CONNECTED with batch 1): the
  /// depth is split over four accumulators so consecutive multiply-adds do not wait on each other.
  @inline(__always)
  static func singleRowTile<Arithmetic: MultiplyAddForm>(
    _: Arithmetic.Type, a: UnsafePointer<Float>, b: UnsafePointer<Float>, depth: Int, c: UnsafeMutablePointer<Float>,
    accumulate: Bool, bias: UnsafePointer<Float>?, activation: FloatClampRange?
  ) {
    typealias Vector = SIMD16<Float>
    let output = UnsafeMutableRawPointer(c)
    var r0 = accumulate ? output.loadUnaligned(as: Vector.self) : bias.map { UnsafeRawPointer($0).loadUnaligned(as: Vector.self) } ?? Vector()
    var r1 = Vector()
    var r2 = Vector()
    var r3 = Vector()
    let panel = UnsafeRawPointer(b)
    let stride = MemoryLayout<Vector>.stride
    var k = 0
    while k &+ 4 <= depth {
      Arithmetic.multiplyAdd(&r0, a[k], panel.loadUnaligned(fromByteOffset: k &* stride, as: Vector.self))
      Arithmetic.multiplyAdd(&r1, a[k &+ 1], panel.loadUnaligned(fromByteOffset: (k &+ 1) &* stride, as: Vector.self))
      Arithmetic.multiplyAdd(&r2, a[k &+ 2], panel.loadUnaligned(fromByteOffset: (k &+ 2) &* stride, as: Vector.self))
      Arithmetic.multiplyAdd(&r3, a[k &+ 3], panel.loadUnaligned(fromByteOffset: (k &+ 3) &* stride, as: Vector.self))
      k &+= 4
    }
    while k < depth {
      Arithmetic.multiplyAdd(&r0, a[k], panel.loadUnaligned(fromByteOffset: k &* stride, as: Vector.self))
      k &+= 1
    }
    var sum = (r0 + r1) + (r2 + r3)
    if let activation { sum = activation.apply(sum) }
    output.storeBytes(of: sum, as: Vector.self)
  }

  /// A register tile of `Height.rows` rows × 16 columns: one accumulator per row, one panel vector
  /// and one broadcast A value per row and depth step. Rows past `validRows` repeat the last valid
  /// row of A and are neither read from nor stored to C.
  ///
  /// The tile starts from C (`accumulate`), from the bias, or from zero; it is clamped when
  /// `activation` is given (the last depth block) and stored back to C.
  @inline(__always)
  static func rowTile<Height: TileHeight, Arithmetic: MultiplyAddForm>(
    _: Height.Type, _: Arithmetic.Type, a: UnsafePointer<Float>, lda: Int, validRows: Int, b: UnsafePointer<Float>,
    depth: Int, c: UnsafeMutablePointer<Float>, ldc: Int, accumulate: Bool, bias: UnsafePointer<Float>?,
    activation: FloatClampRange?
  ) {
    typealias Vector = SIMD16<Float>
    let last = validRows &- 1
    @inline(__always) func rowOfA(_ row: Int) -> UnsafePointer<Float> { a + min(row, last) &* lda }
    @inline(__always) func rowOfC(_ row: Int) -> UnsafeMutableRawPointer { UnsafeMutableRawPointer(c + row &* ldc) }
    var tile: RowAccumulators<Height>
    if accumulate {
      // Rows past `validRows` are not part of C: they start from zero and are never stored.
      tile = RowAccumulators { row in row <= last ? rowOfC(row).loadUnaligned(as: Vector.self) : Vector() }
    } else {
      let start = bias.map { UnsafeRawPointer($0).loadUnaligned(as: Vector.self) } ?? Vector()
      tile = RowAccumulators { _ in start }
    }
    var panel = UnsafeRawPointer(b)
    for k in 0..<depth {
      let bv = panel.loadUnaligned(as: Vector.self)
      tile.update { row, accumulator in
        var sum = accumulator
        Arithmetic.multiplyAdd(&sum, rowOfA(row)[k], bv)
        return sum
      }
      panel += MemoryLayout<Vector>.stride
    }
    if let activation { tile.update { _, accumulator in activation.apply(accumulator) } }
    tile.forEach { row, accumulator in
      if row <= last { rowOfC(row).storeBytes(of: accumulator, as: Vector.self) }
    }
  }
}

/// How `acc += a · b` is computed.
protocol MultiplyAddForm {
  /// `accumulator += a * b` on 16 lanes.
  static func multiplyAdd(_ accumulator: inout SIMD16<Float>, _ a: Float, _ b: SIMD16<Float>)
}

/// A multiply, then an add (two roundings): the fast form without hardware FMA.
enum SeparateArithmetic: MultiplyAddForm {
  @inline(__always)
  static func multiplyAdd(_ accumulator: inout SIMD16<Float>, _ a: Float, _ b: SIMD16<Float>) {
    accumulator += a * b
  }
}

/// One fused multiply-add per lane (one rounding).
enum FusedArithmetic: MultiplyAddForm {
  @inline(__always)
  static func multiplyAdd(_ accumulator: inout SIMD16<Float>, _ a: Float, _ b: SIMD16<Float>) {
    accumulator = accumulator.addingProduct(a, b)
  }
}

/// The number of rows of a register tile.
protocol TileHeight {
  /// Rows, 1 to 8.
  static var rows: Int { get }
}

/// Two rows (the separate-arithmetic tile).
enum TwoRows: TileHeight {
  static var rows: Int { 2 }
}

/// Eight rows (the fused tile).
enum EightRows: TileHeight {
  static var rows: Int { 8 }
}

/// The accumulators of a register tile of `Height.rows` rows. The rows are named fields rather
/// than an array so that they live in registers; fields past the height are never touched and
/// disappear once the tile is specialised.
struct RowAccumulators<Height: TileHeight> {
  private var r0 = SIMD16<Float>(), r1 = SIMD16<Float>(), r2 = SIMD16<Float>(), r3 = SIMD16<Float>()
  private var r4 = SIMD16<Float>(), r5 = SIMD16<Float>(), r6 = SIMD16<Float>(), r7 = SIMD16<Float>()

  /// Row `row` starts as `start(row)`.
  @inline(__always)
  init(_ start: (Int) -> SIMD16<Float>) {
    update { row, _ in start(row) }
  }

  /// Replaces every row's accumulator by `body(row, accumulator)`.
  @inline(__always)
  mutating func update(_ body: (Int, SIMD16<Float>) -> SIMD16<Float>) {
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
  @inline(__always)
  func forEach(_ body: (Int, SIMD16<Float>) -> Void) {
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
/// (no FMA), `addingProduct` becomes a libm `fmaf` call per lane, about a hundred times slower
/// than a separate multiply and add; built with `-target-cpu` for a CPU with FMA it is one
/// instruction, as on AArch64. The two forms are timed once against each other.
enum FusedMultiplyAdd {
  /// True when fused multiply-adds are at least as cheap as separate ones (always on AArch64).
  static let isHardware: Bool = {
    #if arch(arm64)
      return true
    #else
      // The fused form must be well below the 100× of a libm call; the best of a few trials
      // discounts preemption.
      var fused = UInt64.max
      var separate = UInt64.max
      for _ in 0..<5 {
        fused = min(fused, nanoseconds { _ = chains(FusedArithmetic.self, seed: 0.25) })
        separate = min(separate, nanoseconds { _ = chains(SeparateArithmetic.self, seed: 0.25) })
      }
      return fused < 4 &* max(separate, 1)
    #endif
  }()

  /// Wall-clock nanoseconds of one call of `body`.
  private static func nanoseconds(_ body: () -> Void) -> UInt64 {
    let start = DispatchTime.now().uptimeNanoseconds
    body()
    return DispatchTime.now().uptimeNanoseconds &- start
  }

  /// Four interleaved chains of 128 multiply-adds on 16 lanes; the values grow slowly but stay
  /// finite and normal, and the result is returned so the work is not optimised away.
  @inline(never)
  private static func chains<Arithmetic: MultiplyAddForm>(_: Arithmetic.Type, seed: Float) -> SIMD16<Float> {
    let start = SIMD16<Float>(repeating: seed)
    var chain0 = start, chain1 = start + 1, chain2 = start + 2, chain3 = start + 3
    for _ in 0..<128 {
      Arithmetic.multiplyAdd(&chain0, seed, chain1)
      Arithmetic.multiplyAdd(&chain1, seed, chain2)
      Arithmetic.multiplyAdd(&chain2, seed, chain3)
      Arithmetic.multiplyAdd(&chain3, seed, chain0)
    }
    return chain0 + chain1 + chain2 + chain3
  }
}
