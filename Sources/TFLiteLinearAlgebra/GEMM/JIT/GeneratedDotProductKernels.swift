// The generated 8-bit dot-product kernels (`DotProductKernelGenerator`), kept for the process,
// and which of them a runner uses. They read weights packed by `QuadPanelMatrices` (PanelPacking.swift).
//
// The sums are those of `IntegerGEMM` exactly: A unsigned (uint8 as is, int8 plus 128), B the
// weights minus their zero points, Σ A·B wrapping in Int32. `vpdpbusd` multiplies unsigned by
// *signed bytes*, so B must fit an Int8: true for int8 weights, whose zero point is 0 in TFLite;
// uint8 weights minus their zero point can reach ±255 and stay on the 16-bit Swift panels. The
// input offset (128 for int8) is folded into the bias through the column sums, as FBGEMM does.

/// The generated dot-product kernels of one instruction set: one per tile height
/// `1...maximumRows` storing Int32 sums, and as many per output type requantizing in registers
/// (AVX512-VNNI: also per output type reading int8 A), made together on first use and kept for the
/// life of the process (a bounded cache: 18 or 50 kernels of at most a few kilobytes).
///
/// The 8-bit CONV_2D and FULLY_CONNECTED kernels use them (`IntegerGEMM` with
/// `DotProductMicroKernel`) wherever the CPU and OS allow and the weights fit signed bytes; the
/// Swift kernel on 16-bit panels runs when generated code is turned off (`SWIFTTFLITE_JIT=0`, or
/// ``RunnerOptions/usesGeneratedKernels`` false), when the OS refuses executable memory, on CPUs
/// without VNNI, on other architectures and on iOS, tvOS, watchOS and visionOS.
@usableFromInline package final class GeneratedDotProductKernels: @unchecked Sendable {
  // @unchecked Sendable: everything is immutable after `init`.

  /// The instruction set of the kernels.
  @usableFromInline package let isa: DotProductISA
  /// Rows of the tallest kernel.
  @usableFromInline package let maximumRows: Int
  /// The kernel for `rows` rows at index `rows - 1`.
  private let kernels: [ExecutableCode]
  /// The requantizing kernels: for each `RequantizedOutput` (by raw value), one per tile height.
  private let requantizingKernels: [[ExecutableCode]]
  /// The requantizing kernels reading int8 A and flipping its signs, as `requantizingKernels`;
  /// empty unless `DotProductKernelGenerator.flipsSigns(isa)`.
  private let signFlippingKernels: [[ExecutableCode]]
  /// True when `requantizedTile` can read int8 A as it is (`flipsSign`).
  @usableFromInline package let flipsSigns: Bool

  private typealias Entry = @convention(c) (UnsafeRawPointer) -> Void

  /// Generates every kernel of `isa`; nil when the OS refuses executable memory.
  private init?(isa: DotProductISA) {
    let maximumRows = DotProductKernelGenerator.maximumRows(isa)
    let flipsSigns = DotProductKernelGenerator.flipsSigns(isa)
    // Every family (tile heights 1...maximumRows storing one output), all in one mapping.
    var families: [(output: RequantizedOutput?, flipsSign: Bool)] = [(nil, false)]
    for output in RequantizedOutput.allCases {
      families.append((output, false))
      if flipsSigns { families.append((output, true)) }
    }
    var codes: [[UInt8]] = []
    for family in families {
      for rows in 1...maximumRows {
        guard
          let code = try? DotProductKernelGenerator.code(
            isa: isa, rows: rows, output: family.output, flipsSign: family.flipsSign)
        else { return nil }
        codes.append(code)
      }
    }
    guard let mapped = ExecutableCode.mapped(codes) else { return nil }
    let byFamily = (0..<families.count).map { Array(mapped[$0 * maximumRows..<($0 + 1) * maximumRows]) }
    let kernels = byFamily[0]
    let requantizing = families.indices.filter { families[$0].output != nil && !families[$0].flipsSign }.map { byFamily[$0] }
    let signFlipping = families.indices.filter { families[$0].flipsSign }.map { byFamily[$0] }
    self.isa = isa
    self.maximumRows = maximumRows
    self.kernels = kernels
    requantizingKernels = requantizing
    signFlippingKernels = signFlipping
    self.flipsSigns = flipsSigns
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

  /// The kernels a convolution prepared on this thread uses: `preferred`, unless the runner turned
  /// generated code off (``GeneratedFloatKernels/areAllowed``, the policy of every generated kernel).
  @usableFromInline package static var current: GeneratedDotProductKernels? {
    GeneratedFloatKernels.areAllowed ? preferred : nil
  }

  /// Int32 sums of rows `0 ..< rowCount` of A (`4 × steps` unsigned bytes each, rows `lda` apart)
  /// times one `QuadPanelMatrices` panel (`steps` steps of 64 bytes), 16 per row into C (rows `ldc`
  /// apart), in tiles of at most `maximumRows` rows.
  @usableFromInline package func sums(
    a: UnsafePointer<UInt8>, lda: Int, rowCount: Int, b: UnsafePointer<Int8>, steps: Int,
    c: UnsafeMutablePointer<Int32>, ldc: Int
  ) {
    precondition(rowCount >= 0, "negative row count")
    var row = 0
    while row < rowCount {
      let rows = min(maximumRows, rowCount - row)
      tileSums(a: a + row * lda, lda: lda, rows: rows, b: b, steps: steps, c: c + row * ldc, ldc: ldc)
      row += rows
    }
  }

  /// `sums` of one tile: `rows` (1 through `maximumRows`) rows in one call of the generated code.
  @usableFromInline package func tileSums(
    a: UnsafePointer<UInt8>, lda: Int, rows: Int, b: UnsafePointer<Int8>, steps: Int,
    c: UnsafeMutablePointer<Int32>, ldc: Int
  ) {
    precondition(
      (1...maximumRows).contains(rows) && steps >= 0 && lda >= 0 && ldc >= GEMMTile.columns,
      "invalid dot-product extent")
    var arguments = DotProductKernelArguments(
      a: a, aRowBytes: lda, b: b, steps: steps, c: UnsafeMutableRawPointer(c),
      cRowBytes: ldc * MemoryLayout<Int32>.stride)
    let entry = unsafeBitCast(kernels[rows - 1].entry, to: Entry.self)
    withUnsafePointer(to: &arguments) { entry(UnsafeRawPointer($0)) }
  }

  /// One tile as `tileSums`, requantized in the generated code: the 16 columns' `RequantizationTable`
  /// record `table` and `lanes` give bias, rescale, zero point and clamp, and each row's 16 outputs
  /// go to C (rows `ldc` apart) as `Output` bytes, bit for bit as `IntegerEpilogue.requantize` and
  /// a narrowing store. With `flipsSign` (only where `flipsSigns`), A holds int8 bytes, read as A + 128.
  @usableFromInline package func requantizedTile<Output: QuantizedInteger>(
    a: UnsafePointer<UInt8>, lda: Int, rows: Int, b: UnsafePointer<Int8>, steps: Int, table: UnsafeRawPointer,
    lanes: UnsafeRawPointer, c: UnsafeMutablePointer<Output>, ldc: Int, flipsSign: Bool = false
  ) {
    precondition(
      (1...maximumRows).contains(rows) && steps >= 0 && lda >= 0 && ldc >= GEMMTile.columns
        && (!flipsSign || flipsSigns),
      "invalid dot-product extent")
    var arguments = DotProductKernelArguments(
      a: a, aRowBytes: lda, b: b, steps: steps, c: UnsafeMutableRawPointer(c), cRowBytes: ldc, table: table, lanes: lanes)
    let output: RequantizedOutput = Output.isSigned ? .int8 : .uint8
    let variants = flipsSign ? signFlippingKernels : requantizingKernels
    let entry = unsafeBitCast(variants[output.rawValue][rows - 1].entry, to: Entry.self)
    withUnsafePointer(to: &arguments) { entry(UnsafeRawPointer($0)) }
  }
}
