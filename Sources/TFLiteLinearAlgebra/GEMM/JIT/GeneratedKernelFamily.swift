// How every generated-kernel family is chosen: per instruction set (`GeneratedKernelFamily`) or as
// one AVX-512 set (`AVX512KernelFamily`), under the switches of ``GeneratedFloatKernels``
// (`SWIFTTFLITE_JIT`, ``RunnerOptions/usesGeneratedKernels``). A family states only where its
// process-wide sets live (and stores its `preferred` one, which `current` reads on every node's
// eval: one once-initialized global instead of a chain of them); the look-ups below are written
// once for all of them.

/// A family of generated kernels with one set per `GeneratedKernelISA` (float GEMM, float binary,
/// column sums, depthwise, hybrid, PRELU, 8-bit binary, requantization).
@usableFromInline package protocol GeneratedKernelFamily: AnyObject {
  /// The process's AVX2+FMA set, made on its first read (nil where making it failed). Read it
  /// through `kernels(for:)`, which checks that this CPU and OS run the level.
  static var avx2Set: Self? { get }
  /// The process's AVX-512F set, made on its first read (nil where making it failed). Read it
  /// through `kernels(for:)`.
  static var avx512Set: Self? { get }
  /// The set of the newest instruction set this machine runs, or nil: none, or turned off by
  /// `SWIFTTFLITE_JIT`. Stored once: `static let preferred = preferredSet()`.
  static var preferred: Self? { get }
  /// A new set of `isa`, apart from the process's own; nil where making it failed.
  init?(isa: GeneratedKernelISA)
}

extension GeneratedKernelFamily {
  /// The process's set of `isa`, or nil when this CPU, OS or platform cannot run it (a level not
  /// asked for is never made).
  @inlinable package static func kernels(for isa: GeneratedKernelISA) -> Self? {
    guard let supported = GeneratedKernelISA.supported, isa <= supported else { return nil }
    switch isa {
    case .avx2: return avx2Set
    case .avx512: return avx512Set
    }
  }

  /// What `preferred` stores: the set of ``GeneratedFloatKernels/enabledISA``.
  package static func preferredSet() -> Self? { GeneratedFloatKernels.enabledISA.flatMap { kernels(for: $0) } }

  /// The set a node started on this thread uses: `preferred`, unless the runner turned generated
  /// kernels off (``GeneratedFloatKernels/areAllowed``). Read it on the thread that runs the node,
  /// before splitting the work.
  @inlinable package static var current: Self? { GeneratedFloatKernels.areAllowed ? preferred : nil }

  /// A set of `isa` made anew with none of its kernels generated, apart from the process's own (for
  /// tests of a refused or batched mapping); nil when this CPU, OS or platform cannot run `isa`.
  package static func unshared(_ isa: GeneratedKernelISA) -> Self? { kernels(for: isa) == nil ? nil : Self(isa: isa) }
}

/// A family of generated kernels with one set, for AVX-512 CPUs only (logistic and SiLU, the byte
/// and pair tables).
@usableFromInline package protocol AVX512KernelFamily: AnyObject {
  /// The process's set wherever this CPU and OS can run it, whatever the switches (for tests);
  /// made on its first read.
  static var runnable: Self? { get }
  /// The set, or nil when it is not runnable here or `SWIFTTFLITE_JIT` turns generated kernels
  /// off. Stored once: `static let preferred = preferredSet()`.
  static var preferred: Self? { get }
}

extension AVX512KernelFamily {
  /// What `preferred` stores: `runnable` where ``GeneratedFloatKernels/enabledISA`` is AVX-512.
  package static func preferredSet() -> Self? { GeneratedFloatKernels.enabledISA == .avx512 ? runnable : nil }

  /// The set an operator started on this thread uses: `preferred`, unless the runner turned
  /// generated kernels off (``GeneratedFloatKernels/areAllowed``). Read it on the thread that runs
  /// the node, before splitting the work.
  @inlinable package static var current: Self? { GeneratedFloatKernels.areAllowed ? preferred : nil }
}

/// Calls the generated kernel `void kernel(Arguments *)` at `entry` (the one signature every
/// generated kernel has) on `arguments`, which the kernel may update (the float depthwise kinds
/// move their block pointers on). Inlinable, so that callers in other modules holding an entry
/// (``FloatDepthwiseEntries``) call the kernel directly.
@inlinable @inline(__always) func callKernel<Arguments>(at entry: UnsafeRawPointer, _ arguments: inout Arguments) {
  typealias Kernel = @convention(c) (UnsafeRawPointer) -> Void
  withUnsafeMutablePointer(to: &arguments) { unsafeBitCast(entry, to: Kernel.self)(UnsafeRawPointer($0)) }
}
