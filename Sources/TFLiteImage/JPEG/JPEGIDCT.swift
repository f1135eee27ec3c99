// The inverse DCT of one 8×8 block, bit-exact with libjpeg-turbo's default "islow" method
// (jidctint.c, JDCT_ISLOW; its SIMD versions give the same results).
//
// It is the Loeffler–Ligtenberg–Moschytz factorisation with 13-bit fixed-point constants
// (`Fixed13`): a column pass that keeps 2 extra fraction bits, then a row pass that removes them
// and the factor 8, rounding half up at each descale. The result, centred on 128, goes through
// libjpeg's range-limit table: the value is taken modulo 1024 as a signed 10-bit number and then
// clamped to 0...255 (so only absurdly large values of corrupt data wrap).
//
// Both passes run on all eight columns (rows) at once in SIMD8<Int32> lanes, with one transpose
// between them through a workspace. libjpeg's short cut for columns and rows without AC terms
// gives the same numbers as the full transform (the shifts of a lone DC term are exact), so only
// the whole-block case is taken: a block whose 63 AC coefficients are zero is one flat value.

/// The 13-bit fixed-point multipliers of jidctint.c, `round(x × 2^13)` of the constants named.
private enum Fixed13 {
  static let c0_298631336: Int32 = 2446
  static let c0_390180644: Int32 = 3196
  static let c0_541196100: Int32 = 4433
  static let c0_765366865: Int32 = 6270
  static let c0_899976223: Int32 = 7373
  static let c1_175875602: Int32 = 9633
  static let c1_501321110: Int32 = 12299
  static let c1_847759065: Int32 = 15137
  static let c1_961570560: Int32 = 16069
  static let c2_053119869: Int32 = 16819
  static let c2_562915447: Int32 = 20995
  static let c3_072711026: Int32 = 25172
}

/// The eight outputs of a 1-D inverse DCT of `x0...x7` before descaling, lane by lane: the even
/// part from x0, x2, x4, x6 and the odd part from x1, x3, x5, x7, combined as (even ± odd).
@inline(__always)
private func inverseDCT8(
  _ x0: SIMD8<Int32>, _ x1: SIMD8<Int32>, _ x2: SIMD8<Int32>, _ x3: SIMD8<Int32>, _ x4: SIMD8<Int32>,
  _ x5: SIMD8<Int32>, _ x6: SIMD8<Int32>, _ x7: SIMD8<Int32>, _ emit: (Int, SIMD8<Int32>) -> Void
) {
  // Even part.
  let rotated = (x2 &+ x6) &* Fixed13.c0_541196100
  let even2 = rotated &- x6 &* Fixed13.c1_847759065
  let even3 = rotated &+ x2 &* Fixed13.c0_765366865
  let even0 = (x0 &+ x4) &<< 13
  let even1 = (x0 &- x4) &<< 13
  let sum10 = even0 &+ even3
  let sum13 = even0 &- even3
  let sum11 = even1 &+ even2
  let sum12 = even1 &- even2
  // Odd part.
  let z1 = x7 &+ x1
  let z2 = x5 &+ x3
  var z3 = x7 &+ x3
  var z4 = x5 &+ x1
  let z5 = (z3 &+ z4) &* Fixed13.c1_175875602
  var odd0 = x7 &* Fixed13.c0_298631336
  var odd1 = x5 &* Fixed13.c2_053119869
  var odd2 = x3 &* Fixed13.c3_072711026
  var odd3 = x1 &* Fixed13.c1_501321110
  let w1 = z1 &* -Fixed13.c0_899976223
  let w2 = z2 &* -Fixed13.c2_562915447
  z3 = z3 &* -Fixed13.c1_961570560 &+ z5
  z4 = z4 &* -Fixed13.c0_390180644 &+ z5
  odd0 = odd0 &+ w1 &+ z3
  odd1 = odd1 &+ w2 &+ z4
  odd2 = odd2 &+ w2 &+ z3
  odd3 = odd3 &+ w1 &+ z4
  emit(0, sum10 &+ odd3)
  emit(7, sum10 &- odd3)
  emit(1, sum11 &+ odd2)
  emit(6, sum11 &- odd2)
  emit(2, sum12 &+ odd1)
  emit(5, sum12 &- odd1)
  emit(3, sum13 &+ odd0)
  emit(4, sum13 &- odd0)
}

/// Each lane clamped to 0...255 with shifts and masks (generic `clamped`, `pointwiseMin` and
/// `pointwiseMax` are left out of line by the optimizer).
@inline(__always)
func clampedToByteRange<Vector: SIMD>(_ value: Vector) -> Vector where Vector.Scalar == Int32 {
  let nonNegative = value & ~(value &>> 31)
  let above = (255 &- nonNegative) &>> 31
  return (nonNegative | above) & 255
}

/// libjpeg's post-IDCT range limit, per lane: `value` (not yet centred) modulo 1024 read as a
/// signed 10-bit number, plus 128, clamped to 0...255.
@inline(__always)
private func rangeLimited(_ value: SIMD8<Int32>) -> SIMD8<Int32> {
  clampedToByteRange(((value & 1023) ^ 512) &- 384)
}

/// Dequantizes `coefficients` (natural order) with `quantization` and writes the 8×8 samples
/// to `output`, rows `stride` bytes apart.
@inline(__always)
func inverseDCT(
  coefficients: UnsafePointer<Int16>, quantization: UnsafePointer<Int32>,
  output: UnsafeMutablePointer<UInt8>, stride: Int
) {
  @inline(__always) func coefficientRow(_ row: Int) -> SIMD8<Int16> {
    UnsafeRawPointer(coefficients + 8 * row).loadUnaligned(as: SIMD8<Int16>.self)
  }
  var acTerms = coefficientRow(0) & SIMD8(0, -1, -1, -1, -1, -1, -1, -1)
  for row in 1..<8 { acTerms |= coefficientRow(row) }
  if unsafeBitCast(acTerms, to: (UInt64, UInt64).self) == (0, 0) {
    // Column pass: DC × 4; row pass: (that + 16) >> 5.
    let dc = SIMD8<Int32>(repeating: Int32(coefficients[0]) &* quantization[0] &<< 2)
    let sample = UInt8(truncatingIfNeeded: rangeLimited((dc &+ 16) &>> 5)[0])
    for row in 0..<8 { (output + row * stride).update(repeating: sample, count: 8) }
    return
  }
  withUnsafeTemporaryAllocation(of: Int32.self, capacity: 64) { workspaceBuffer in
    let workspace = workspaceBuffer.baseAddress!
    // Widened lane by lane: `SIMD8<Int32>(truncatingIfNeeded:)` stays an out-of-line call.
    @inline(__always) func input(_ row: Int) -> SIMD8<Int32> {
      let c = coefficients + 8 * row
      return SIMD8(Int32(c[0]), Int32(c[1]), Int32(c[2]), Int32(c[3]), Int32(c[4]), Int32(c[5]), Int32(c[6]), Int32(c[7]))
        &* UnsafeRawPointer(quantization + 8 * row).loadUnaligned(as: SIMD8<Int32>.self)
    }
    // Pass 1: columns (lane = column), keeping 2 extra fraction bits (descale by 13 - 2).
    inverseDCT8(input(0), input(1), input(2), input(3), input(4), input(5), input(6), input(7)) { row, values in
      UnsafeMutableRawPointer(workspace + 8 * row).storeBytes(of: (values &+ (1 << 10)) &>> 11, as: SIMD8<Int32>.self)
    }
    // Pass 2: rows (lane = row), removing the 2 fraction bits and the factor 8 (descale by 13 + 2 + 3).
    @inline(__always) func column(_ index: Int) -> SIMD8<Int32> {
      SIMD8(
        workspace[index], workspace[8 + index], workspace[16 + index], workspace[24 + index], workspace[32 + index],
        workspace[40 + index], workspace[48 + index], workspace[56 + index])
    }
    // The samples go back into the workspace (column-major: the arguments were read first) and
    // from there to the output as bytes; reading lanes of the vectors directly spills them anew for
    // every lane.
    inverseDCT8(column(0), column(1), column(2), column(3), column(4), column(5), column(6), column(7)) {
      columnIndex, values in
      UnsafeMutableRawPointer(workspace + 8 * columnIndex).storeBytes(
        of: rangeLimited((values &+ (1 << 17)) &>> 18), as: SIMD8<Int32>.self)
    }
    for row in 0..<8 {
      let out = output + row * stride
      for columnIndex in 0..<8 { out[columnIndex] = UInt8(truncatingIfNeeded: workspace[8 * columnIndex + row]) }
    }
  }
}
