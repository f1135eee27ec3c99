import TFLiteLinearAlgebra

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Timing of the float GEMM per kernel kind, for `Benchmarks/` (`gemm-benchmarks`). Not API:
/// reached through `@_spi(Benchmarking) import TFLiteRuntime`.
@_spi(Benchmarking)
public enum FloatGEMMBenchmark {
  /// Which micro-kernel runs.
  public enum KernelKind: String, CaseIterable, Sendable {
    /// The Swift kernel in the arithmetic form this build runs fastest (SSE on baseline x86-64).
    case swift
    /// The generated AVX2+FMA kernels.
    case avx2
    /// The generated AVX-512F kernels.
    case avx512
  }

  /// Whether this machine runs `kind`.
  public static func isAvailable(_ kind: KernelKind) -> Bool {
    switch kind {
    case .swift: true
    case .avx2: GeneratedFloatKernels.kernels(for: .avx2) != nil
    case .avx512: GeneratedFloatKernels.kernels(for: .avx512) != nil
    }
  }

  /// Billions of floating-point operations (2·M·N·K) per second of this thread's CPU time for a
  /// product with pre-packed B, bias and RELU6, on one thread: the best of `repetitions` runs of at
  /// least `minimumSeconds` each. Nil when `kind` is not available.
  public static func gigaflops(
    rows: Int, columns: Int, depth: Int, kind: KernelKind, minimumSeconds: Double = 0.2, repetitions: Int = 5
  ) -> Double? {
    let generated: GeneratedFloatKernels?
    switch kind {
    case .swift: generated = nil
    case .avx2: guard let kernels = GeneratedFloatKernels.kernels(for: .avx2) else { return nil }; generated = kernels
    case .avx512: guard let kernels = GeneratedFloatKernels.kernels(for: .avx512) else { return nil }; generated = kernels
    }
    var seed: UInt32 = 1
    func next() -> Float {
      seed = seed &* 1_664_525 &+ 1_013_904_223
      return Float(seed >> 8) / Float(1 << 24) - 0.5
    }
    let a = (0..<(rows * depth)).map { _ in next() }
    let b = (0..<(depth * columns)).map { _ in next() }
    let bias = (0..<columns).map { _ in next() }
    let packed = b.withUnsafeBufferPointer {
      PackedMatrices($0.baseAddress!, sourceStride: 0, count: 1, layout: .depthMajor(columns: columns), depth: depth, columns: columns)
    }
    let paddedBias = bias.withUnsafeBufferPointer { PanelPacking.paddedBias($0.baseAddress!, groups: 1, columns: columns) }
    let plan = GEMMPlan(rows: rows, columns: columns, depth: depth, threadCount: 1)
    let scratchBytes = plan.scratchBytes(leftOperandPacks: false, threadCount: 1)
    let scratch = UnsafeMutableRawPointer.allocate(byteCount: max(scratchBytes, 64), alignment: 64)
    defer { scratch.deallocate() }
    var output = [Float](repeating: 0, count: rows * columns)
    let flops = 2.0 * Double(rows) * Double(columns) * Double(depth)
    var best = 0.0
    a.withUnsafeBufferPointer { a in
      paddedBias.withUnsafeBufferPointer { paddedBias in
        output.withUnsafeMutableBufferPointer { output in
          let epilogue = FloatEpilogue(bias: paddedBias.baseAddress, activation: .relu6)
          func run() {
            FloatGEMM.multiply(
              plan: plan, lhs: RowMajorLeftOperand(base: a.baseAddress!, rowStride: depth), rhs: packed.matrix(0),
              output: output.baseAddress!, outputStride: columns, epilogue: epilogue, threadCount: 1, scratch: scratch,
              generatedKernels: generated)
          }
          best = bestRate(operations: flops, minimumSeconds: minimumSeconds, repetitions: repetitions, run)
        }
      }
    }
    return best
  }
}

/// Timing of the 8-bit integer GEMM per kernel kind, for `Benchmarks/` (`gemm-benchmarks int8`).
/// Not API: reached through `@_spi(Benchmarking) import TFLiteRuntime`.
@_spi(Benchmarking)
public enum IntegerGEMMBenchmark {
  /// Which micro-kernel computes the Int32 sums.
  public enum KernelKind: String, CaseIterable, Sendable {
    /// The Swift kernel on 16-bit weight panels (what the convolutions run without VNNI).
    case swift
    /// The generated AVX-VNNI kernels (ymm) on signed-byte panels.
    case avxVNNI = "avx-vnni"
    /// The generated AVX512-VNNI kernels (zmm) on signed-byte panels.
    case avx512VNNI = "avx512-vnni"
  }

  /// Whether this machine runs `kind`.
  public static func isAvailable(_ kind: KernelKind) -> Bool { kind == .swift || generatedKernels(kind) != nil }

  private static func generatedKernels(_ kind: KernelKind) -> GeneratedDotProductKernels? {
    switch kind {
    case .swift: nil
    case .avxVNNI: GeneratedDotProductKernels.kernels(for: .avxVNNI)
    case .avx512VNNI: GeneratedDotProductKernels.kernels(for: .avx512VNNI)
    }
  }

  /// Billions of integer operations (2·M·N·K) per second of this thread's CPU time for an int8
  /// product with pre-packed B and the full requantization to int8 (per-channel multipliers,
  /// LiteRT's double rounding), one thread: the best of `repetitions` runs of at least
  /// `minimumSeconds`, through `IntegerGEMM` as the convolutions call it (the generated kinds
  /// requantize in the generated code). Nil when `kind` is not
  /// available or `depth` is not a multiple of 4.
  public static func gigaops(
    rows: Int, columns: Int, depth: Int, kind: KernelKind, minimumSeconds: Double = 0.2, repetitions: Int = 5
  ) -> Double? {
    guard depth % 4 == 0, isAvailable(kind) else { return nil }
    var seed: UInt32 = 7
    func next() -> UInt32 {
      seed = seed &* 1_664_525 &+ 1_013_904_223
      return seed >> 8
    }
    let a = (0..<(rows * depth)).map { _ in UInt8(truncatingIfNeeded: next()) }
    let weights = (0..<(depth * columns)).map { _ in Int32(Int8(truncatingIfNeeded: next())) }
    let multipliers = (0..<columns).map { _ in QuantizedMultiplier(multiplier: Int32(1 << 30) + Int32(next() % 1000), shift: -12) }
    let constants = IntegerChannelConstants(
      groups: 1, groupChannels: columns, multipliers: multipliers, rounding: .doubleRounding, outputZeroPoint: -3,
      clamp: -128...127, bias: { Int32($0) })
    let epilogue = constants.epilogue(group: 0)
    let outputStride = PanelPacking.panelCount(columns: columns) * GEMMTile.columns
    var output = [Int8](repeating: 0, count: rows * outputStride)
    let operations = 2.0 * Double(rows) * Double(columns) * Double(depth)
    /// The best rate of `multiply` (given its plan and scratch) over weights packed to `paddedDepth`.
    func rate(paddedDepth: Int, _ multiply: (GEMMPlan, UnsafeMutableRawPointer) -> Void) -> Double {
      let plan = IntegerGEMM.plan(rows: rows, columns: columns, paddedDepth: paddedDepth, threadCount: 1)
      let scratchBytes = plan.scratchBytes(leftOperandPacks: false, threadCount: 1, lhs: UInt8.self, output: Int8.self)
      let scratch = UnsafeMutableRawPointer.allocate(byteCount: max(scratchBytes, 64), alignment: 64)
      defer { scratch.deallocate() }
      return bestRate(operations: operations, minimumSeconds: minimumSeconds, repetitions: repetitions) {
        multiply(plan, scratch)
      }
    }
    return a.withUnsafeBufferPointer { a in
      output.withUnsafeMutableBufferPointer { output in
        let lhs = RowMajorLeftOperand(base: a.baseAddress!, rowStride: depth)
        let output = output.baseAddress!
        if let generated = generatedKernels(kind) {
          guard let packed = weights.withUnsafeBufferPointer({
            QuadPanelMatrices($0.baseAddress!, sourceStride: 0, count: 1, layout: .depthMajor(columns: columns), depth: depth, columns: columns)
          }) else { return nil }
          return rate(paddedDepth: packed.paddedDepth) { plan, scratch in
            IntegerGEMM.multiply(
              plan: plan, lhs: lhs, rhs: packed.matrix(0), output: output, outputStride: outputStride,
              epilogue: epilogue, kernels: generated, threadCount: 1, scratch: scratch)
          }
        }
        guard let packed = weights.withUnsafeBufferPointer({
          PairedPanelMatrices($0.baseAddress!, sourceStride: 0, count: 1, layout: .depthMajor(columns: columns), depth: depth, columns: columns)
        }) else { return nil }
        return rate(paddedDepth: packed.paddedDepth) { plan, scratch in
          IntegerGEMM.multiply(
            plan: plan, lhs: lhs, rhs: packed.matrix(0), output: output, outputStride: outputStride,
            epilogue: epilogue, threadCount: 1, scratch: scratch)
        }
      }
    }
  }
}

/// Billions of `operations` per second of this thread's CPU time: `run` once to warm up, then the
/// best of `repetitions` runs of at least `minimumSeconds` each.
private func bestRate(operations: Double, minimumSeconds: Double, repetitions: Int, _ run: () -> Void) -> Double {
  run()
  var best = 0.0
  for _ in 0..<repetitions {
    var calls = 0
    let start = threadCPUSeconds()
    var elapsed = 0.0
    repeat {
      run()
      calls += 1
      elapsed = threadCPUSeconds() - start
    } while elapsed < minimumSeconds
    best = max(best, operations * Double(calls) / elapsed / 1e9)
  }
  return best
}

/// CPU time of the calling thread in seconds.
private func threadCPUSeconds() -> Double {
  var time = timespec()
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
  return Double(time.tv_sec) + Double(time.tv_nsec) * 1e-9
}
