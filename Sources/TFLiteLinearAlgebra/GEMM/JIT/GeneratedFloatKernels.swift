#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// The generated float GEMM kernels of one instruction set (`FloatKernelGenerator`): one kernel
/// per tile height `1...maximumRows`, its column-masked form for the last panel of an N that is
/// not a multiple of 16, and both again applying negative slopes (a folded PRELU), each made the
/// first time a GEMM needs it (`LazyExecutableKernels`) and kept for the life of the process, so
/// the code cache is bounded (24 kernels for AVX2, 56 for AVX-512, a few KiB each) and a model
/// generates only the kernels its shapes call for.
///
/// They are used by default wherever the CPU and OS allow (see `GeneratedKernelFamily/preferred`);
/// the Swift kernels run when the generated ones are turned off (`SWIFTTFLITE_JIT=0` in the
/// environment, or ``RunnerOptions/usesGeneratedKernels`` false), when the OS refuses executable memory, on CPUs
/// without AVX2+FMA, on other architectures and on iOS, tvOS, watchOS and visionOS.
@usableFromInline package final class GeneratedFloatKernels: GeneratedKernelFamily, @unchecked Sendable {
  // @unchecked Sendable: everything is immutable after `init` (the zero vector is never written).

  /// The instruction set of the kernels.
  @usableFromInline package let isa: GeneratedKernelISA
  /// Rows of the tallest kernel; taller row ranges are cut into tiles of this height.
  @usableFromInline package let maximumRows: Int
  /// The kernel for `rows` rows at index `rows - 1`, then the column-masked kernel for `rows`
  /// rows at index `maximumRows + rows - 1`, then the same two applying negative slopes from
  /// index `2 · maximumRows`, each made on first use.
  private let kernels: LazyExecutableKernels
  /// Sixteen zeros: the start of a product without bias.
  private let zeros: UnsafeMutablePointer<Float>
  /// The AVX2 column masks of a tile's first columns.
  private let columnMasks = AVX2LaneMasks.shared

  /// The kernels of `isa`, none generated yet.
  @usableFromInline package init(isa: GeneratedKernelISA) {
    let maximumRows = FloatKernelGenerator.maximumRows(isa)
    self.isa = isa
    self.maximumRows = maximumRows
    kernels = LazyExecutableKernels(count: 4 * maximumRows) { index in
      try? FloatKernelGenerator.code(
        isa: isa, rows: index % maximumRows + 1, masksColumns: index / maximumRows % 2 == 1,
        appliesNegativeSlopes: index >= 2 * maximumRows)
    }
    zeros = .allocate(capacity: GEMMTile.columns)
    zeros.initialize(repeating: 0, count: GEMMTile.columns)
  }

  deinit {
    zeros.deallocate()
  }

  @usableFromInline package static let avx2Set: GeneratedFloatKernels? = GeneratedFloatKernels(isa: .avx2)
  @usableFromInline package static let avx512Set: GeneratedFloatKernels? = GeneratedFloatKernels(isa: .avx512)
  @usableFromInline package static let preferred: GeneratedFloatKernels? = preferredSet()

  /// True when the environment variable `SWIFTTFLITE_JIT` is `0`, `off`, `false` or `no`.
  @usableFromInline package static let isTurnedOffByEnvironment: Bool = {
    guard let value = getenv("SWIFTTFLITE_JIT") else { return false }
    return ["0", "off", "false", "no"].contains(String(cString: value).lowercased())
  }()

  /// The newest instruction set this machine runs, or nil: none, or turned off by the environment.
  /// Decided once per process; every generated-kernel family's `preferred` set is of this level.
  @usableFromInline package static let enabledISA: GeneratedKernelISA? =
    isTurnedOffByEnvironment ? nil : GeneratedKernelISA.supported

  /// False while a runner with ``RunnerOptions/usesGeneratedKernels`` false runs on this thread.
  @TaskLocal @usableFromInline package static var areAllowed = true

  /// The instruction set of ``current``, found without generating the float kernels: for the other
  /// generators, which only need the level (an int8 model's depthwise kernels would otherwise make
  /// the first invoke generate float GEMM kernels it never runs).
  @usableFromInline package static var currentISA: GeneratedKernelISA? { areAllowed ? enabledISA : nil }

  /// Computes rows `0 ..< rowCount` × 16 columns of C over one depth block, in as few tiles as
  /// `maximumRows` allows, of heights that differ by at most one row (128 rows with AVX-512 are
  /// 8 × 13 + 2 × 12 rather than 9 × 14 + 2, whose 2-row tile would run far below peak).
  ///
  /// - Parameters:
  ///   - a: row 0 at the block's first depth, rows `lda` floats apart.
  ///   - b: the packed panel at the block's first depth.
  ///   - c: row 0, rows `ldc` floats apart; the first `columns` floats of each row are read (when
  ///     accumulating) and written, nothing past them.
  ///   - start: 16 starting values (bias) when not `accumulates`; nil for zeros.
  ///   - accumulates: continue from the values in C.
  ///   - clamp: applied before the store; nil for none.
  ///   - negativeSlopes: 16 slopes that multiply the negative results after the clamp (a folded
  ///     PRELU's α of the panel's columns); nil for none.
  ///   - columns: the real columns of the panel, 1 to 16 (fewer than 16 run the column-masked kernels).
  ///   - segments: how many times the `depth` steps run (1 or more), summed into the same tile:
  ///     segment s reads A from `a + s · aSegmentStride` and the panel from `b + s · bSegmentStride`
  ///     (floats; `bSegmentStride` at least `16 · depth`). A convolution's filter rows in one call.
  /// - Returns: false, with nothing read or written, when a kernel the rows call for could not be
  ///   mapped (only exhausted memory or the code budget refuses it after the start-up probe): the
  ///   caller runs its Swift kernel instead.
  @usableFromInline package func run(
    a: UnsafePointer<Float>, lda: Int, rowCount: Int, b: UnsafePointer<Float>, depth: Int,
    c: UnsafeMutablePointer<Float>, ldc: Int, start: UnsafePointer<Float>?, accumulates: Bool, clamp: FloatClampRange?,
    negativeSlopes: UnsafePointer<Float>? = nil, columns: Int = GEMMTile.columns, segments: Int = 1,
    aSegmentStride: Int = 0, bSegmentStride: Int = 0
  ) -> Bool {
    precondition(rowCount >= 0 && depth >= 0, "negative GEMM extent")
    precondition((1...GEMMTile.columns).contains(columns), "a panel has 1 to 16 real columns")
    precondition(segments >= 1 && (segments == 1 || bSegmentStride >= depth * GEMMTile.columns), "overlapping segments")
    guard rowCount > 0 else { return true }
    let tiles = (rowCount + maximumRows - 1) / maximumRows
    let height = rowCount / tiles
    let tallerTiles = rowCount % tiles
    // Both kernels first, so that a refused one leaves C untouched for the Swift kernel.
    guard
      let (kernel, tallerKernel) = tileKernels(
        height: height, hasTallerTiles: tallerTiles > 0, columns: columns,
        appliesNegativeSlopes: negativeSlopes != nil)
    else { return false }
    let floatBytes = MemoryLayout<Float>.stride
    var arguments = FloatKernelArguments(
      a: a, aRowBytes: lda * floatBytes, aTileBytes: (height + 1) * lda * floatBytes, b: b, depth: depth, c: c,
      cRowBytes: ldc * floatBytes, cTileBytes: (height + 1) * ldc * floatBytes, start: start ?? UnsafePointer(zeros),
      tileCount: tallerTiles, accumulates: accumulates ? 1 : 0, lower: clamp?.lower ?? -.infinity,
      upper: clamp?.upper ?? .infinity, columnMask: columnMasks.firstLanes(columns),
      laneMask: (1 << columns) - 1, segmentCount: segments, aSegmentBytes: aSegmentStride * floatBytes,
      bSegmentGapBytes: segments == 1 ? 0 : (bSegmentStride - depth * GEMMTile.columns) * floatBytes,
      negativeSlopes: negativeSlopes ?? UnsafePointer(zeros))
    if tallerTiles > 0 { callKernel(at: tallerKernel, &arguments) }
    let done = tallerTiles * (height + 1)
    arguments.a = a + done * lda
    arguments.c = c + done * ldc
    arguments.aTileBytes = height * lda * floatBytes
    arguments.cTileBytes = height * ldc * floatBytes
    arguments.tileCount = tiles - tallerTiles
    callKernel(at: kernel, &arguments)
    return true
  }

  /// True when the kernels `run` takes for `rowCount` rows (1 or more) of `columns` real columns
  /// (applying negative slopes or not) exist, generating them if needed; false when their mapping
  /// is refused.
  package func canRun(rowCount: Int, columns: Int = GEMMTile.columns, appliesNegativeSlopes: Bool = false) -> Bool {
    let tiles = (rowCount + maximumRows - 1) / maximumRows
    return tileKernels(
      height: rowCount / tiles, hasTallerTiles: rowCount % tiles > 0, columns: columns,
      appliesNegativeSlopes: appliesNegativeSlopes) != nil
  }

  /// Reserves (`LazyExecutableKernels/reserve(_:)`) the kernels `run` calls for `rowCount` rows
  /// (1 or more) of `columns` real columns, to be mapped with the other reserved kernels at the
  /// end of `allocateTensors()` instead of one mapping each on the first invoke.
  package func reserve(rowCount: Int, columns: Int = GEMMTile.columns, appliesNegativeSlopes: Bool = false) {
    guard rowCount > 0 else { return }
    let tiles = (rowCount + maximumRows - 1) / maximumRows
    let index = kernelIndex(height: rowCount / tiles, columns: columns, appliesNegativeSlopes: appliesNegativeSlopes)
    kernels.reserve(rowCount % tiles > 0 ? [index, index + 1] : [index])
  }

  /// Reserves the kernels a product laid out by `plan` runs through `FloatMicroKernel`: per work
  /// item, its rows over whole panels and over a partial last panel (the column-masked kernels),
  /// with `appliesNegativeSlopes` those applying them (the last depth block), and the plain ones
  /// only when the depth is split into several blocks.
  package func reserve(for plan: GEMMPlan, appliesNegativeSlopes: Bool = false) {
    let variants = !appliesNegativeSlopes ? [false] : plan.depth > plan.depthBlock ? [false, true] : [true]
    for item in 0..<plan.itemCount {
      let rowCount = plan.rowRange(ofBlock: item / plan.panelGroupCount).count
      let panels = plan.panelRange(ofGroup: item % plan.panelGroupCount)
      for slopes in variants {
        if panels.lowerBound < plan.columns / GEMMTile.columns {
          reserve(rowCount: rowCount, appliesNegativeSlopes: slopes)
        }
        if panels.upperBound * GEMMTile.columns > plan.columns {
          reserve(rowCount: rowCount, columns: plan.columns % GEMMTile.columns, appliesNegativeSlopes: slopes)
        }
      }
    }
  }

  /// Index in `kernels` of the kernel of tiles `height` rows tall of `columns` real columns.
  private func kernelIndex(height: Int, columns: Int, appliesNegativeSlopes: Bool) -> Int {
    (appliesNegativeSlopes ? 2 * maximumRows : 0) + (columns < GEMMTile.columns ? maximumRows : 0) + height - 1
  }

  /// The kernels of tiles `height` rows tall and, when `hasTallerTiles`, one row taller (else the
  /// same kernel twice), of `columns` real columns; nil when either could not be mapped.
  private func tileKernels(
    height: Int, hasTallerTiles: Bool, columns: Int, appliesNegativeSlopes: Bool
  ) -> (UnsafeRawPointer, UnsafeRawPointer)? {
    let index = kernelIndex(height: height, columns: columns, appliesNegativeSlopes: appliesNegativeSlopes)
    guard let kernel = kernels.entry(index),
      let tallerKernel = hasTallerTiles ? kernels.entry(index + 1) : kernel
    else { return nil }
    return (kernel, tallerKernel)
  }

  /// True when the `rows`-row kernel has been generated (for tests).
  package func isGenerated(rows: Int) -> Bool { kernels.isMade(rows - 1) }
}
