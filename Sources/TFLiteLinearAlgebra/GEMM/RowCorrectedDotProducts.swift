// The 8-bit GEMM on the dot-product sums (generated `vpdpbusd` kernels) for weights whose
// difference from their zero point zw does not fit a signed byte: legacy uint8 weights, whose
// w − zw spans −255 ... 255. B holds w − 128 instead (a signed byte for every uint8 w), and
//
//   Σ_k u_k · (w_k − zw) = Σ_k u_k · (w_k − 128) + (128 − zw) · Σ_k u_k
//
// for the unsigned input bytes u of one row, over the product's real depth. The kernel reads
// each row of A where the left operand leaves it (the input itself for a 1×1 convolution, the
// im2col block otherwise), sums its first `rowSumDepth` bytes (`byteSum`: SSE2 `psadbw`, eight
// bytes per instruction), adds (128 − zw) · Σ u to every sum of the row and hands the sums to the
// same requantization as every 8-bit GEMM: all in wrapping Int32, so they equal the 16-bit
// route's sums to the bit. With generated sums, the corrected sums are requantized by the
// generated requantization kernel of the same vector width (one call per block of rows and
// panel, bit for bit `IntegerEpilogue.requantize`); the Swift route requantizes in Swift. Rows go
// in blocks of `blockRows`, each block's sums and row sums in the thread's `ThreadWorkspace`,
// every panel of the block summed before the next block, and a partial last panel's outputs
// written straight to C (only its real columns), so the driver never runs this kernel tile by tile.

/// A `GEMMMicroKernel` over `DotProductSums` that corrects every row's sums by its byte sum (see
/// the file comment); the plan never splits the depth, so every call is the first and last block.
/// (`Output`'s requirement is on the conformance, not the type: a constrained generic type makes the
/// Swift runtime check `Output: QuantizedInteger` by a scan of every protocol conformance record
/// the first time it builds the type's metadata, mid-invoke.)
@usableFromInline package struct RowCorrectedDotProductMicroKernel<Output> {
  /// Bias, rescale and clamp of the product.
  @usableFromInline package let epilogue: IntegerEpilogue
  /// The route computing the sums.
  @usableFromInline package let sums: DotProductSums
  /// What each row's byte sum is multiplied by before it is added: 128 − the weight zero point.
  @usableFromInline package let rowSumFactor: Int32
  /// How many leading bytes of each row the byte sum covers: the product's real depth (the bytes
  /// past it, up to the packed depth, meet zero weights and are left out).
  @usableFromInline package let rowSumDepth: Int
  /// The generated requantization of the corrected tiles, or nil for `IntegerEpilogue.requantize`.
  /// Held unretained (the kernel sets are the process's singletons,
  /// ``GeneratedRequantizationKernels/kernels(for:)``): no retain and release per requantized tile.
  @usableFromInline let requantizer: Unmanaged<GeneratedRequantizationKernels>?
}

extension RowCorrectedDotProductMicroKernel: GEMMMicroKernel where Output: QuantizedInteger {
  /// A kernel summing on `sums`, correcting by `rowSumFactor` times the byte sum of each row's
  /// first `rowSumDepth` bytes and finishing with `epilogue`: in the generated requantization
  /// kernel of the sums' vector width when the sums are generated, unless `requantizer` names
  /// another (nil for Swift).
  @inlinable package init(
    epilogue: IntegerEpilogue, sums: DotProductSums, rowSumFactor: Int32, rowSumDepth: Int,
    requantizer: GeneratedRequantizationKernels?? = nil
  ) {
    self.epilogue = epilogue
    self.sums = sums
    self.rowSumFactor = rowSumFactor
    self.rowSumDepth = rowSumDepth
    let kernels =
      requantizer
      ?? sums.generated.flatMap {
        GeneratedRequantizationKernels.kernels(for: $0.isa == .avx512VNNI ? .avx512 : .avx2)
      }
    self.requantizer = kernels.map { Unmanaged.passUnretained($0) }
  }

  /// Rows whose sums one block keeps in the workspace (for every panel the sums route takes at once).
  @inlinable package static var blockRows: Int { 24 }

  @inlinable package func panelRows(
    a: UnsafePointer<UInt8>, lda: Int, rowCount: Int, b: UnsafePointer<Int8>, depth: Int,
    output: UnsafeMutablePointer<Output>, ldc: Int, column: Int, isFirstBlock: Bool, isLastBlock: Bool
  ) {
    correctedRows(
      a: a, lda: lda, rowCount: rowCount, b: b, panels: 1, panelStride: 0, validColumns: GEMMTile.columns, depth: depth,
      output: output, ldc: ldc, column: column)
  }

  @inlinable package func panelsRows(
    a: UnsafePointer<UInt8>, lda: Int, rowCount: Int, b: UnsafePointer<Int8>, panels: Int, panelStride: Int,
    depth: Int, output: UnsafeMutablePointer<Output>, ldc: Int, column: Int, isFirstBlock: Bool, isLastBlock: Bool
  ) {
    correctedRows(
      a: a, lda: lda, rowCount: rowCount, b: b, panels: panels, panelStride: panelStride,
      validColumns: GEMMTile.columns, depth: depth, output: output, ldc: ldc, column: column)
  }

  @inlinable package func partialPanelRows(
    a: UnsafePointer<UInt8>, lda: Int, rowCount: Int, b: UnsafePointer<Int8>, depth: Int,
    output: UnsafeMutablePointer<Output>, ldc: Int, column: Int, validColumns: Int, isFirstBlock: Bool,
    isLastBlock: Bool
  ) -> Bool {
    correctedRows(
      a: a, lda: lda, rowCount: rowCount, b: b, panels: 1, panelStride: 0, validColumns: validColumns, depth: depth,
      output: output, ldc: ldc, column: column)
    return true
  }

  @inlinable package func tile(
    a: UnsafePointer<UInt8>, lda: Int, validRows: Int, b: UnsafePointer<Int8>, depth: Int,
    output: UnsafeMutablePointer<Output>, ldc: Int, column: Int, isFirstBlock: Bool, isLastBlock: Bool
  ) {
    panelRows(
      a: a, lda: lda, rowCount: validRows, b: b, depth: depth, output: output, ldc: ldc, column: column,
      isFirstBlock: isFirstBlock, isLastBlock: isLastBlock)
  }

  /// Rows `0 ..< rowCount` of `panels` panels (`panelStride` bytes apart from `b`) into C's
  /// columns `column ...`: per block of `blockRows` rows, the row corrections, then the sums of
  /// up to `sums.tilePanels` panels at a time, corrected and requantized panel by panel. Only the
  /// first `validColumns` columns of the last panel are written (all 16 when it is whole).
  @inlinable func correctedRows(
    a: UnsafePointer<UInt8>, lda: Int, rowCount: Int, b: UnsafePointer<Int8>, panels: Int, panelStride: Int,
    validColumns: Int, depth: Int, output: UnsafeMutablePointer<Output>, ldc: Int, column: Int
  ) {
    guard rowCount > 0, panels > 0 else { return }
    let panelsPerCall = min(panels, sums.tilePanels)
    let sumStride = panelsPerCall &* GEMMTile.columns
    let wordBytes = Self.blockRows &* (sumStride &+ 1) &* MemoryLayout<Int32>.stride
    let partialBytes = Self.blockRows &* GEMMTile.columns &* MemoryLayout<Output>.stride
    ThreadWorkspace.with(byteCount: wordBytes &+ partialBytes) { words in
      let corrections = words.bindMemory(to: Int32.self, capacity: wordBytes / MemoryLayout<Int32>.stride)
      let tile = corrections + Self.blockRows
      // A partial panel's 16 outputs per row, before its real columns are copied to C.
      let partial = (words + wordBytes).bindMemory(to: Output.self, capacity: Self.blockRows &* GEMMTile.columns)
      var blockStart = 0
      while blockStart < rowCount {
        let rows = min(Self.blockRows, rowCount &- blockStart)
        let blockA = a + blockStart &* lda
        for row in 0..<rows {
          corrections[row] = rowSumFactor &* byteSum(blockA + row &* lda, count: rowSumDepth)
        }
        var panel = 0
        while panel < panels {
          let count = min(panelsPerCall, panels &- panel)
          sums.sums(
            a: blockA, lda: lda, rowCount: rows, b: b + panel &* panelStride, steps: depth / 4, c: tile, ldc: sumStride,
            columns: count, panelBytes: panelStride)
          for row in 0..<rows {
            let rowSums = tile + row &* sumStride
            let correction = corrections[row]
            for lane in 0..<count &* GEMMTile.columns { rowSums[lane] &+= correction }
          }
          for offset in 0..<count {
            let columnOffset: Int = (panel &+ offset) &* GEMMTile.columns
            let blockOutput: UnsafeMutablePointer<Output> = output + (blockStart &* ldc &+ columnOffset)
            let rowSums: UnsafeMutablePointer<Int32> = tile + offset &* GEMMTile.columns
            guard panel &+ offset == panels &- 1 && validColumns < GEMMTile.columns else {
              requantize(
                rowSums, stride: sumStride, rows: rows, column: column &+ columnOffset, to: blockOutput, outputStride: ldc)
              continue
            }
            requantize(
              rowSums, stride: sumStride, rows: rows, column: column &+ columnOffset, to: partial,
              outputStride: GEMMTile.columns)
            for row in 0..<rows {
              GEMMDriver.copyRun(from: partial + row &* GEMMTile.columns, to: blockOutput + row &* ldc, count: validColumns)
            }
          }
          panel &+= count
        }
        blockStart &+= rows
      }
    }
  }

  /// Requantizes `rows` rows of 16 corrected sums (`stride` apart) of output columns
  /// `column ..< column + 16` into `output` (rows `outputStride` apart), all 16 bytes per row.
  @inlinable func requantize(
    _ rowSums: UnsafeMutablePointer<Int32>, stride: Int, rows: Int, column: Int, to output: UnsafeMutablePointer<Output>,
    outputStride: Int
  ) {
    if let requantizer {
      requantizer._withUnsafeGuaranteedRef { kernels in
        kernels.requantize(
          sums: rowSums, sumsStride: stride, rows: rows, table: epilogue.table(channel: column), lanes: epilogue.lanes,
          output: output, outputStride: outputStride)
      }
      return
    }
    for row in 0..<rows {
      let values = UnsafeRawPointer(rowSums + row &* stride).loadUnaligned(as: SIMD16<Int32>.self)
      IntegerMicroKernel<Output>.store(epilogue.requantize(values, channel: column), to: output + row &* outputStride)
    }
  }
}

/// The sum of `count` bytes (at most 2^23 of them, so the sum fits an Int32): eight bytes at a
/// time as one 64-bit word, whose byte sum the baseline x86-64 build turns into one `psadbw`;
/// the last 1–7 bytes as the word ending at the last byte shifted past the bytes already summed
/// (when the row has eight bytes or more), else byte by byte.
@inlinable package func byteSum(_ bytes: UnsafePointer<UInt8>, count: Int) -> Int32 {
  /// The sum of the eight bytes of `word`.
  @inline(__always) func wordSum(_ word: UInt64) -> UInt32 {
    SIMD8<UInt32>(truncatingIfNeeded: unsafeBitCast(word, to: SIMD8<UInt8>.self)).wrappedSum()
  }
  let raw = UnsafeRawPointer(bytes)
  var total: UInt32 = 0
  var offset = 0
  while offset &+ 8 <= count {
    total &+= wordSum(UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)))
    offset &+= 8
  }
  let rest = count &- offset
  if rest > 0 && count >= 8 {
    let last = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: count &- 8, as: UInt64.self))
    total &+= wordSum(last &>> UInt64(truncatingIfNeeded: (8 &- rest) &* 8))
  } else {
    while offset < count {
      total &+= UInt32(bytes[offset])
      offset &+= 1
    }
  }
  return Int32(bitPattern: total)
}
