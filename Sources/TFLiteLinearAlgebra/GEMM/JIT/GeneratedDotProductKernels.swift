// The generated 8-bit dot-product kernels (`DotProductKernelGenerator`), kept for the process,
// and which of them a runner uses. They read weights packed by `QuadPanelMatrices` (PanelPacking.swift).
//
// The sums are those of `IntegerGEMM` exactly: A unsigned (uint8 as is, int8 plus 128), B the
// weights minus their zero points, Σ A·B wrapping in Int32. `vpdpbusd` multiplies unsigned by
// *signed bytes*, so B must fit an Int8: true for int8 weights, whose zero point is 0 in TFLite;
// uint8 weights minus their zero point can reach ±255 and stay on the 16-bit Swift panels. The
// input offset (128 for int8) is folded into the bias through the column sums, as FBGEMM does.

/// The generated dot-product kernels of one instruction set: storing Int32 sums, and per output
/// type (AVX512-VNNI: also per output type reading int8 A) requantizing, one kernel per tile of
/// 1 through `maximumColumns` panels and 1 through `maximumRows(columns:)` rows. All are made
/// together on first use, laid out in one executable mapping, and kept for the life of the process
/// (a bounded cache: 18 or 170 kernels of at most a few kilobytes).
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
  /// Rows of the tallest one-panel kernel.
  @usableFromInline package let maximumRows: Int
  /// Most panels of a requantizing tile.
  @usableFromInline package let maximumColumns: Int
  /// The mapping holding every kernel.
  private let code: ExecutableCode
  /// The kernels storing Int32 sums: per panel count, per tile height.
  private let kernels: [[UnsafeRawPointer]]
  /// The requantizing kernels: per variant (`variantIndex`), per panel count, per tile height.
  private let requantizingKernels: [[[UnsafeRawPointer]]]
  /// True when `requantizedTile` can read int8 A as it is (`flipsSign`).
  @usableFromInline package let flipsSigns: Bool

  private typealias Entry = @convention(c) (UnsafeRawPointer) -> Void

  /// Generates every kernel of `isa`; nil when the OS refuses executable memory.
  private init?(isa: DotProductISA) {
    let flipsSigns = DotProductKernelGenerator.flipsSigns(isa)
    let maximumColumns = DotProductKernelGenerator.maximumColumns(isa)
    // Every kernel's code, each starting on a 64-byte boundary of one buffer.
    var buffer: [UInt8] = []
    /// The offsets of every tile height's kernel of `columns` panels storing `output` (Int32 sums when nil).
    func heights(columns: Int, _ output: RequantizedOutput?, flipsSign: Bool = false) -> [Int]? {
      var offsets: [Int] = []
      for rows in 1...DotProductKernelGenerator.maximumRows(isa, columns: columns) {
        guard
          let kernel = try? DotProductKernelGenerator.code(
            isa: isa, rows: rows, columns: columns, output: output, flipsSign: flipsSign)
        else { return nil }
        buffer.append(contentsOf: repeatElement(0xCC, count: (64 - buffer.count % 64) % 64))
        offsets.append(buffer.count)
        buffer.append(contentsOf: kernel)
      }
      return offsets
    }
    /// Every tile's offsets of the variant storing `output` (Int32 sums when nil), per panel count.
    func tiles(_ output: RequantizedOutput?, flipsSign: Bool = false) -> [[Int]]? {
      var panels: [[Int]] = []
      for columns in 1...maximumColumns {
        guard let offsets = heights(columns: columns, output, flipsSign: flipsSign) else { return nil }
        panels.append(offsets)
      }
      return panels
    }
    guard let sumOffsets = tiles(nil) else { return nil }
    var variantOffsets: [[[Int]]] = []
    for flipsSign in flipsSigns ? [false, true] : [false] {
      for output in RequantizedOutput.allCases {
        guard let panels = tiles(output, flipsSign: flipsSign) else { return nil }
        variantOffsets.append(panels)
      }
    }
    guard let code = ExecutableCode(buffer) else { return nil }
    let entry = code.entry
    self.isa = isa
    maximumRows = DotProductKernelGenerator.maximumRows(isa)
    self.maximumColumns = maximumColumns
    self.code = code
    kernels = sumOffsets.map { $0.map { entry + $0 } }
    requantizingKernels = variantOffsets.map { $0.map { $0.map { entry + $0 } } }
    self.flipsSigns = flipsSigns
  }

  /// Index into `requantizingKernels` of the kernels storing `output`, reading int8 A when `flipsSign`.
  private static func variantIndex(_ output: RequantizedOutput, flipsSign: Bool) -> Int {
    (flipsSign ? RequantizedOutput.allCases.count : 0) + output.rawValue
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
      (1...maximumColumns).contains(columns) && (1...maximumRows(columns: columns)).contains(rows) && steps >= 0
        && lda >= 0 && ldc >= columns * GEMMTile.columns,
      "invalid dot-product extent")
    var arguments = DotProductKernelArguments(
      a: a, aRowBytes: lda, b: b, steps: steps, c: UnsafeMutableRawPointer(c),
      cRowBytes: ldc * MemoryLayout<Int32>.stride, panelBytes: panelBytes)
    let entry = unsafeBitCast(kernels[columns - 1][rows - 1], to: Entry.self)
    withUnsafePointer(to: &arguments) { entry(UnsafeRawPointer($0)) }
  }

  /// One tile as `tileSums`, requantized in the generated code: the 16 columns' `RequantizationTable`
  /// record `table` and `lanes` give bias, rescale, zero point and clamp, and each row's 16 outputs
  /// go to C (rows `ldc` apart) as `Output` bytes, bit for bit as `IntegerEpilogue.requantize` and
  /// a narrowing store. With `columns` panels (1 through `maximumColumns`, `panelBytes` apart from
  /// `b`), `rows` at most `maximumRows(columns:)`, panel p's 16 columns use the record p records
  /// after `table` and go to C's columns 16p ..< 16p + 16. With `flipsSign` (only where
  /// `flipsSigns`), A holds int8 bytes, read as A + 128.
  @usableFromInline package func requantizedTile<Output: QuantizedInteger>(
    a: UnsafePointer<UInt8>, lda: Int, rows: Int, b: UnsafePointer<Int8>, steps: Int, table: UnsafeRawPointer,
    lanes: UnsafeRawPointer, c: UnsafeMutablePointer<Output>, ldc: Int, flipsSign: Bool = false, columns: Int = 1,
    panelBytes: Int = 0
  ) {
    precondition(
      (1...maximumColumns).contains(columns) && (1...maximumRows(columns: columns)).contains(rows) && steps >= 0
        && lda >= 0 && ldc >= columns * GEMMTile.columns && (!flipsSign || flipsSigns),
      "invalid dot-product extent")
    var arguments = DotProductKernelArguments(
      a: a, aRowBytes: lda, b: b, steps: steps, c: UnsafeMutableRawPointer(c), cRowBytes: ldc, table: table,
      lanes: lanes, panelBytes: panelBytes)
    let output: RequantizedOutput = Output.isSigned ? .int8 : .uint8
    let variant = requantizingKernels[Self.variantIndex(output, flipsSign: flipsSign)]
    let entry = unsafeBitCast(variant[columns - 1][rows - 1], to: Entry.self)
    withUnsafePointer(to: &arguments) { entry(UnsafeRawPointer($0)) }
  }
}
