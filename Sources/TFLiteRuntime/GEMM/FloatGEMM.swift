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
  static func multiply<LHS: GEMMLeftOperand>(
    plan: GEMMPlan, lhs: LHS, rhs: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>, outputStride: Int,
    epilogue: FloatEpilogue, threadCount: Int, scratch: UnsafeMutableRawPointer
  ) where LHS.Element == Float {
    GEMMDriver.multiply(
      plan: plan, lhs: lhs, rhs: rhs, output: output, outputStride: outputStride,
      kernel: FloatMicroKernel(epilogue: epilogue), threadCount: threadCount, scratch: scratch)
  }
}

/// The float32 micro-kernels: a 4×16 register tile (called twice per 8-row driver tile), and a
/// one-row tile for matrix × vector products.
/// The first depth block starts from the bias (or zero), later ones from the partial sums in C;
/// the last one applies the clamp.
struct FloatMicroKernel: GEMMMicroKernel {
  /// Bias and clamp of the product.
  let epilogue: FloatEpilogue

  func tile(
    a: UnsafePointer<Float>, lda: Int, validRows: Int, b: UnsafePointer<Float>, depth: Int,
    output: UnsafeMutablePointer<Float>, ldc: Int, column: Int, isFirstBlock: Bool, isLastBlock: Bool
  ) {
    let bias = isFirstBlock ? epilogue.bias.map { $0 + column } : nil
    let activation = isLastBlock ? epilogue.activation : nil
    let accumulate = !isFirstBlock
    if validRows == 1 {
      Self.singleRowKernel(a: a, b: b, depth: depth, c: output, accumulate: accumulate, bias: bias, activation: activation)
      return
    }
    var first = 0
    while first < validRows {
      Self.microKernel(
        a: a + first * lda, lda: lda, validRows: min(Self.kernelRows, validRows - first), b: b, depth: depth,
        c: output + first * ldc, ldc: ldc, accumulate: accumulate, bias: bias, activation: activation)
      first += Self.kernelRows
    }
  }

  /// Rows of the register tile. Four SIMD16 accumulators fit both targets: measured in the GEMM
  /// driver, 8 rows are 15% slower with default flags (32 SSE registers of accumulators spill),
  /// 2 rows 35% slower with `-target-cpu native`; 4 rows are within 3% of the best on each.
  static let kernelRows = 4

  /// `acc += a * b`. A separate multiply and add on x86-64: the baseline target has no FMA and
  /// `addingProduct` would become a libm `fmaf` call per lane; AArch64 always has a fused form.
  @inline(__always)
  static func multiplyAdd(_ accumulator: inout SIMD16<Float>, _ a: Float, _ b: SIMD16<Float>) {
    #if arch(arm64)
      accumulator = accumulator.addingProduct(a, b)
    #else
      accumulator += a * b
    #endif
  }

  /// One output row of 16 columns (matrix × vector products, FULLY_CONNECTED with batch 1): the
  /// depth is split over four accumulators so consecutive multiply-adds do not wait on each other.
  static func singleRowKernel(
    a: UnsafePointer<Float>, b: UnsafePointer<Float>, depth: Int, c: UnsafeMutablePointer<Float>,
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
    while k + 4 <= depth {
      multiplyAdd(&r0, a[k], panel.loadUnaligned(fromByteOffset: k * stride, as: Vector.self))
      multiplyAdd(&r1, a[k + 1], panel.loadUnaligned(fromByteOffset: (k + 1) * stride, as: Vector.self))
      multiplyAdd(&r2, a[k + 2], panel.loadUnaligned(fromByteOffset: (k + 2) * stride, as: Vector.self))
      multiplyAdd(&r3, a[k + 3], panel.loadUnaligned(fromByteOffset: (k + 3) * stride, as: Vector.self))
      k += 4
    }
    while k < depth {
      multiplyAdd(&r0, a[k], panel.loadUnaligned(fromByteOffset: k * stride, as: Vector.self))
      k += 1
    }
    var sum = (r0 + r1) + (r2 + r3)
    if let activation { sum = activation.apply(sum) }
    output.storeBytes(of: sum, as: Vector.self)
  }

  /// The 4×16 register tile: four `SIMD16<Float>` accumulators, one B vector and one broadcast A
  /// value per row and depth step. Rows past `validRows` repeat the last valid row of A and are
  /// neither read from nor stored to C.
  ///
  /// The tile starts from C (`accumulate`), from the bias, or from zero; it is clamped when
  /// `activation` is given (the last depth block) and stored back to C.
  static func microKernel(
    a: UnsafePointer<Float>, lda: Int, validRows: Int, b: UnsafePointer<Float>, depth: Int,
    c: UnsafeMutablePointer<Float>, ldc: Int, accumulate: Bool, bias: UnsafePointer<Float>?,
    activation: FloatClampRange?
  ) {
    let last = validRows - 1
    let a0 = a
    let a1 = a + min(1, last) * lda
    let a2 = a + min(2, last) * lda
    let a3 = a + min(3, last) * lda
    let c0 = UnsafeMutableRawPointer(c)
    let c1 = UnsafeMutableRawPointer(c + ldc)
    let c2 = UnsafeMutableRawPointer(c + 2 * ldc)
    let c3 = UnsafeMutableRawPointer(c + 3 * ldc)
    typealias Vector = SIMD16<Float>
    var r0: Vector, r1: Vector, r2: Vector, r3: Vector
    if accumulate {
      // Rows past `validRows` are not part of C: they start from zero and are never stored.
      r0 = c0.loadUnaligned(as: Vector.self)
      r1 = validRows > 1 ? c1.loadUnaligned(as: Vector.self) : Vector()
      r2 = validRows > 2 ? c2.loadUnaligned(as: Vector.self) : Vector()
      r3 = validRows > 3 ? c3.loadUnaligned(as: Vector.self) : Vector()
    } else {
      let start = bias.map { UnsafeRawPointer($0).loadUnaligned(as: Vector.self) } ?? Vector()
      r0 = start
      r1 = start
      r2 = start
      r3 = start
    }
    var bp = UnsafeRawPointer(b)
    for k in 0..<depth {
      let bv = bp.loadUnaligned(as: Vector.self)
      multiplyAdd(&r0, a0[k], bv)
      multiplyAdd(&r1, a1[k], bv)
      multiplyAdd(&r2, a2[k], bv)
      multiplyAdd(&r3, a3[k], bv)
      bp += MemoryLayout<Vector>.stride
    }
    if let activation {
      r0 = activation.apply(r0)
      r1 = activation.apply(r1)
      r2 = activation.apply(r2)
      r3 = activation.apply(r3)
    }
    c0.storeBytes(of: r0, as: Vector.self)
    if validRows > 1 { c1.storeBytes(of: r1, as: Vector.self) }
    if validRows > 2 { c2.storeBytes(of: r2, as: Vector.self) }
    if validRows > 3 { c3.storeBytes(of: r3, as: Vector.self) }
  }
}
