// The 8-bit GEMM on the dot-product sums (generated `vpdpbusd` kernels) for weights whose
// difference from their zero point zw does not fit a signed byte: legacy uint8 weights, whose
// w − zw spans −255 ... 255. B holds w − 128 instead (a signed byte for every uint8 w), and
//
//   Σ_k u_k · (w_k − zw) = Σ_k u_k · (w_k − 128) + (128 − zw) · Σ_k u_k
//
// for the unsigned input bytes u of one row, over the product's real depth. The left operand
// computes each row's Σ u once, while it gathers the row, and stores it as a little-endian Int32
// in the row's last four bytes, which meet a step of zero weights in B (the packed depth has one
// step more than the real depth needs). This kernel adds (128 − zw) · Σ u to every sum of the row
// and hands the sums to the same `IntegerEpilogue` as every 8-bit GEMM: all in wrapping Int32, so
// they equal the 16-bit route's sums to the bit. With generated sums, the corrected tile is
// requantized by the generated requantization kernel of the same vector width (one call per
// tile, bit for bit `IntegerEpilogue.requantize`); the Swift route requantizes in Swift.

/// A `GEMMMicroKernel` over `DotProductSums` whose rows carry their byte sums in their last four
/// bytes (see the file comment); the plan never splits the depth, so every call is the first and
/// last block.
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
  /// The generated requantization of the corrected tiles, or nil for `IntegerEpilogue.requantize`.
  @usableFromInline package let requantizer: GeneratedRequantizationKernels?
}

extension RowCorrectedDotProductMicroKernel: GEMMMicroKernel where Output: QuantizedInteger {
  /// A kernel summing on `sums`, correcting by `rowSumFactor` times each row's byte sum and
  /// finishing with `epilogue`: in the generated requantization kernel of the sums' vector width
  /// when the sums are generated, unless `requantizer` names another (nil for Swift).
  @inlinable package init(
    epilogue: IntegerEpilogue, sums: DotProductSums, rowSumFactor: Int32,
    requantizer: GeneratedRequantizationKernels?? = nil
  ) {
    self.epilogue = epilogue
    self.sums = sums
    self.rowSumFactor = rowSumFactor
    self.requantizer =
      requantizer
      ?? sums.generated.flatMap {
        GeneratedRequantizationKernels.kernels(for: $0.isa == .avx512VNNI ? .avx512 : .avx2)
      }
  }

  /// Bytes at the end of every left-hand row that hold its byte sum.
  @inlinable package static var rowSumBytes: Int { MemoryLayout<Int32>.size }

  @inlinable package func panelRows(
    a: UnsafePointer<UInt8>, lda: Int, rowCount: Int, b: UnsafePointer<Int8>, depth: Int,
    output: UnsafeMutablePointer<Output>, ldc: Int, column: Int, isFirstBlock: Bool, isLastBlock: Bool
  ) {
    guard rowCount > 0 else { return }
    withUnsafeTemporaryAllocation(of: SIMD16<Int32>.self, capacity: rowCount) { buffer in
      let tile = buffer.baseAddress!
      sums.sums(
        a: a, lda: lda, rowCount: rowCount, b: b, steps: depth / 4,
        c: UnsafeMutableRawPointer(tile).assumingMemoryBound(to: Int32.self), ldc: GEMMTile.columns)
      for row in 0..<rowCount {
        let rowSum = UnsafeRawPointer(a + row &* lda).loadUnaligned(
          fromByteOffset: depth &- Self.rowSumBytes, as: Int32.self)
        tile[row] &+= SIMD16(repeating: rowSumFactor &* Int32(littleEndian: rowSum))
      }
      if let requantizer {
        requantizer.requantize(
          sums: UnsafeRawPointer(tile).assumingMemoryBound(to: Int32.self), sumsStride: GEMMTile.columns, rows: rowCount,
          table: epilogue.table(channel: column), lanes: epilogue.lanes, output: output, outputStride: ldc)
        return
      }
      for row in 0..<rowCount {
        IntegerMicroKernel<Output>.store(epilogue.requantize(tile[row], channel: column), to: output + row &* ldc)
      }
    }
  }

  @inlinable package func tile(
    a: UnsafePointer<UInt8>, lda: Int, validRows: Int, b: UnsafePointer<Int8>, depth: Int,
    output: UnsafeMutablePointer<Output>, ldc: Int, column: Int, isFirstBlock: Bool, isLastBlock: Bool
  ) {
    panelRows(
      a: a, lda: lda, rowCount: validRows, b: b, depth: depth, output: output, ldc: ldc, column: column,
      isFirstBlock: isFirstBlock, isLastBlock: isLastBlock)
  }
}

/// The sum of `count` bytes (at most 2^23 of them, so the sum fits an Int32), eight lanes of
/// 16-bit partial sums per 16 bytes, flushed into 32 bits before they can overflow.
@inlinable package func byteSum(_ bytes: UnsafePointer<UInt8>, count: Int) -> Int32 {
  let raw = UnsafeRawPointer(bytes)
  var total: UInt32 = 0
  var offset = 0
  while offset &+ 16 <= count {
    // At most 128 steps of two bytes (510 each) per 16-bit lane before a flush.
    let end = min(count & ~15, offset &+ 128 &* 16)
    var partial = SIMD8<UInt16>()
    while offset < end {
      let pairs = raw.loadUnaligned(fromByteOffset: offset, as: SIMD8<UInt16>.self)
      partial &+= (pairs & 0x00FF) &+ (pairs &>> 8)
      offset &+= 16
    }
    for lane in 0..<8 { total &+= UInt32(partial[lane]) }
  }
  while offset < count {
    total &+= UInt32(bytes[offset])
    offset &+= 1
  }
  return Int32(bitPattern: total)
}
