// The generated 8-bit dot-product kernels (`DotProductKernelGenerator`) and the weight layout they
// read.
//
// The sums are those of `IntegerGEMM` exactly: A unsigned (uint8 as is, int8 plus 128), B the
// weights minus their zero points, Σ A·B wrapping in Int32. `vpdpbusd` multiplies unsigned by
// *signed bytes*, so B must fit an Int8: true for int8 weights, whose zero point is 0 in TFLite;
// uint8 weights minus their zero point can reach ±255 and stay on the 16-bit Swift panels. The
// input offset (128 for int8) is folded into the bias through the column sums, as FBGEMM does.

/// Signed-byte right-hand matrices packed into panels of 16 columns whose depth steps are
/// interleaved in fours: one 32-bit lane holds depths 4q ..< 4q + 4 of one column, the layout
/// `vpdpbusd` reads. The depth is padded to a multiple of four with zero weights.
@usableFromInline package final class QuadPanelMatrices {
  /// K of each product rounded up to a multiple of four.
  @usableFromInline package let paddedDepth: Int
  /// N of each product.
  @usableFromInline package let columns: Int
  /// Σ_k B[k, n] of every column, matrix after matrix (wrapping).
  @usableFromInline package let columnSums: [Int32]
  /// Bytes between the starts of consecutive packed matrices.
  @usableFromInline internal let matrixStride: Int
  /// The panels of all matrices.
  @usableFromInline internal let storage: UnsafeMutablePointer<Int8>

  /// `depth` rounded up to a multiple of four.
  @inlinable package static func paddedDepth(_ depth: Int) -> Int { (depth + 3) / 4 * 4 }

  /// Packs `count` matrices of `depth × columns` values; element (k, n) of matrix `i` is
  /// `source[i * sourceStride + k * layout.depthStride + n * layout.columnStride]`. Nil when a value
  /// does not fit an Int8 (then the 16-bit `PairedPanelMatrices` must be used).
  package init?(_ source: UnsafePointer<Int32>, sourceStride: Int, count: Int, layout: MatrixLayout, depth: Int, columns: Int) {
    precondition(count >= 0 && depth >= 0 && columns >= 0, "negative matrix extent")
    let width = GEMMTile.columns
    paddedDepth = Self.paddedDepth(depth)
    self.columns = columns
    matrixStride = PanelPacking.panelCount(columns: columns) * paddedDepth * width
    let total = max(1, matrixStride * count)
    storage = UnsafeMutableRawPointer.allocate(byteCount: total, alignment: 64).bindMemory(to: Int8.self, capacity: total)
    storage.initialize(repeating: 0, count: total)
    var sums = [Int32](repeating: 0, count: count * columns)
    for matrix in 0..<count {
      let base = source + matrix * sourceStride
      let packed = storage + matrix * matrixStride
      for column in 0..<columns {
        // Column n sits in panel n / 16, lane n % 16; depth k in step k / 4, byte k % 4.
        let lane = packed + (column / width) * paddedDepth * width + (column % width) * 4
        var sum: Int32 = 0
        for k in 0..<depth {
          let value = base[k * layout.depthStride + column * layout.columnStride]
          guard let byte = Int8(exactly: value) else {
            storage.deallocate()
            return nil
          }
          lane[(k / 4) * 4 * width + k % 4] = byte
          sum &+= value
        }
        sums[matrix * columns + column] = sum
      }
    }
    columnSums = sums
  }

  /// The packed panels of matrix `index`.
  @inlinable package func matrix(_ index: Int) -> UnsafePointer<Int8> { UnsafePointer(storage + index * matrixStride) }

  deinit { storage.deallocate() }
}

/// The generated dot-product kernels of one instruction set: one per tile height
/// `1...maximumRows`, made together on first use and kept for the life of the process (a bounded
/// cache: 6 or 10 kernels of a few hundred bytes). Not yet called by the convolution kernels.
@usableFromInline package final class GeneratedDotProductKernels: @unchecked Sendable {
  // @unchecked Sendable: everything is immutable after `init`.

  /// The instruction set of the kernels.
  @usableFromInline package let isa: DotProductISA
  /// Rows of the tallest kernel.
  @usableFromInline package let maximumRows: Int
  /// The kernel for `rows` rows at index `rows - 1`.
  private let kernels: [ExecutableCode]

  private typealias Entry = @convention(c) (UnsafeRawPointer) -> Void

  /// Generates every kernel of `isa`; nil when the OS refuses executable memory.
  private init?(isa: DotProductISA) {
    let maximumRows = DotProductKernelGenerator.maximumRows(isa)
    var kernels: [ExecutableCode] = []
    for rows in 1...maximumRows {
      guard let code = try? DotProductKernelGenerator.code(isa: isa, rows: rows), let executable = ExecutableCode(code)
      else { return nil }
      kernels.append(executable)
    }
    self.isa = isa
    self.maximumRows = maximumRows
    self.kernels = kernels
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

  /// Int32 sums of rows `0 ..< rowCount` of A (`4 × steps` unsigned bytes each, rows `lda` apart)
  /// times one `QuadPanelMatrices` panel (`steps` steps of 64 bytes), 16 per row into C (rows `ldc`
  /// apart), in tiles of at most `maximumRows` rows.
  @usableFromInline package func sums(
    a: UnsafePointer<UInt8>, lda: Int, rowCount: Int, b: UnsafePointer<Int8>, steps: Int,
    c: UnsafeMutablePointer<Int32>, ldc: Int
  ) {
    precondition(rowCount >= 0 && steps >= 0 && lda >= 0 && ldc >= GEMMTile.columns, "invalid dot-product extent")
    var row = 0
    while row < rowCount {
      let rows = min(maximumRows, rowCount - row)
      var arguments = DotProductKernelArguments(
        a: a + row * lda, aRowBytes: lda, b: b, steps: steps, c: c + row * ldc,
        cRowBytes: ldc * MemoryLayout<Int32>.stride)
      let entry = unsafeBitCast(kernels[rows - 1].entry, to: Entry.self)
      withUnsafePointer(to: &arguments) { entry(UnsafeRawPointer($0)) }
      row += rows
    }
  }
}
