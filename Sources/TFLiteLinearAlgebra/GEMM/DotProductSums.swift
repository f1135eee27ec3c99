// Int32 sums C = A · B of unsigned-byte rows A and signed-byte `QuadPanelMatrices` panels B, with
// no requantization: the caller turns each 16-column tile of sums into its outputs (the hybrid
// kernels into floats). The generated `vpdpbusd` kernels compute them when this CPU and OS run
// them and the runner allows generated code; otherwise Swift code reads the same layout. Both
// wrap in Int32, so the sums are equal to the bit.

/// The route of 8-bit dot-product sums: generated VNNI kernels or the Swift loop.
@usableFromInline package struct DotProductSums {
  /// The generated kernels used, or nil for the Swift loop. Held unretained: the families of
  /// ``GeneratedDotProductKernels/tiles(_:form:flipsSign:)`` live as long as the process, and a
  /// retained reference costs a retain and a release around every `sums` call.
  @usableFromInline let unretainedTiles: Unmanaged<DotProductTiles>?

  /// The generated kernels used, or nil for the Swift loop.
  @inlinable package var generated: DotProductTiles? { unretainedTiles?.takeUnretainedValue() }

  /// Sums over the Int32-sum family of `generated` (nil, or a family the OS refuses to map: the Swift loop).
  @inlinable package init(generated: GeneratedDotProductKernels?) {
    unretainedTiles = generated?.tiles(nil).map { Unmanaged.passUnretained($0) }
  }

  /// Rows of the Swift loop's register tile.
  @inlinable package static var swiftTileRows: Int { 4 }

  /// The route a product started on this thread takes: the generated kernels
  /// (``GeneratedDotProductKernels/current``) where allowed and available, else the Swift loop.
  @inlinable package static var current: DotProductSums {
    DotProductSums(generated: GeneratedDotProductKernels.current)
  }

  /// Rows one call of the route's micro-kernel computes together: row blocks that are multiples
  /// of it waste no tile.
  @inlinable package var tileRows: Int { generated?.maximumRows(columns: 1) ?? Self.swiftTileRows }

  /// Panels one call of the route's micro-kernel sums together (the Swift loop: one).
  @inlinable package var tilePanels: Int { generated?.maximumColumns ?? 1 }

  /// The most `tilePanels` of any route.
  package static let mostTilePanels = DotProductISA.allCases.map { DotProductKernelGenerator.maximumColumns($0) }.max() ?? 1

  /// `generated AVX512-VNNI`, or nil for the Swift loop.
  package var generatedLevel: String? { generated.map { "generated \($0.isa)" } }

  /// Int32 sums of rows `0 ..< rowCount` of A (`4 × steps` unsigned bytes each, rows `lda` bytes
  /// apart) times `columns` (1 through `tilePanels`) panels of a `QuadPanelMatrices` (`steps` steps
  /// of 64 bytes, `panelBytes` apart from `b`), 16 per row and panel into C (panel p at column
  /// 16p, rows `ldc` apart).
  @inlinable package func sums(
    a: UnsafePointer<UInt8>, lda: Int, rowCount: Int, b: UnsafePointer<Int8>, steps: Int,
    c: UnsafeMutablePointer<Int32>, ldc: Int, columns: Int = 1, panelBytes: Int = 0
  ) {
    if let unretainedTiles {
      unretainedTiles._withUnsafeGuaranteedRef { tiles in
        tiles.sums(
          a: a, lda: lda, rowCount: rowCount, b: b, steps: steps, c: c, ldc: ldc, columns: columns,
          panelBytes: panelBytes)
      }
      return
    }
    for panel in 0..<columns {
      var row = 0
      while row < rowCount {
        Self.swiftTile(
          a: a + row &* lda, lda: lda, validRows: min(Self.swiftTileRows, rowCount &- row), b: b + panel &* panelBytes,
          steps: steps, c: c + (row &* ldc &+ panel &* GEMMTile.columns), ldc: ldc)
        row &+= Self.swiftTileRows
      }
    }
  }

  /// Up to four rows × 16 columns in Swift. Each 32-bit lane of a panel step holds the four depths
  /// of one column, sign-extended here by shifts; rows past `validRows` repeat the last valid row
  /// and are not stored.
  @inlinable @inline(__always)
  package static func swiftTile(
    a: UnsafePointer<UInt8>, lda: Int, validRows: Int, b: UnsafePointer<Int8>, steps: Int,
    c: UnsafeMutablePointer<Int32>, ldc: Int
  ) {
    let last = validRows &- 1
    let rows = (a, a + min(1, last) &* lda, a + min(2, last) &* lda, a + min(3, last) &* lda)
    var sums = (SIMD16<Int32>(), SIMD16<Int32>(), SIMD16<Int32>(), SIMD16<Int32>())
    var panel = UnsafeRawPointer(b)
    var offset = 0
    for _ in 0..<steps {
      let quads = panel.loadUnaligned(as: SIMD16<Int32>.self)
      let depths = ((quads &<< 24) &>> 24, (quads &<< 16) &>> 24, (quads &<< 8) &>> 24, quads &>> 24)
      @inline(__always) func products(_ row: UnsafePointer<UInt8>) -> SIMD16<Int32> {
        SIMD16(repeating: Int32(row[offset])) &* depths.0 &+ SIMD16(repeating: Int32(row[offset &+ 1])) &* depths.1
          &+ SIMD16(repeating: Int32(row[offset &+ 2])) &* depths.2 &+ SIMD16(repeating: Int32(row[offset &+ 3]))
          &* depths.3
      }
      sums.0 &+= products(rows.0)
      sums.1 &+= products(rows.1)
      sums.2 &+= products(rows.2)
      sums.3 &+= products(rows.3)
      panel += 64
      offset &+= 4
    }
    @inline(__always) func store(_ values: SIMD16<Int32>, row: Int) {
      UnsafeMutableRawPointer(c + row &* ldc).storeBytes(of: values, as: SIMD16<Int32>.self)
    }
    store(sums.0, row: 0)
    if validRows > 1 { store(sums.1, row: 1) }
    if validRows > 2 { store(sums.2, row: 2) }
    if validRows > 3 { store(sums.3, row: 3) }
  }
}
