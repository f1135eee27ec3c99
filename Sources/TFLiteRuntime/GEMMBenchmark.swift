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
          run()
          for _ in 0..<repetitions {
            var calls = 0
            let start = threadCPUSeconds()
            var elapsed = 0.0
            repeat {
              run()
              calls += 1
              elapsed = threadCPUSeconds() - start
            } while elapsed < minimumSeconds
            best = max(best, flops * Double(calls) / elapsed / 1e9)
          }
        }
      }
    }
    return best
  }

  /// CPU time of the calling thread in seconds.
  private static func threadCPUSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) * 1e-9
  }
}
