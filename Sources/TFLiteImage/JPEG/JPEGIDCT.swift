// The inverse DCT of one 8×8 block, bit-exact with libjpeg-turbo's default "islow" method
// (jidctint.c, JDCT_ISLOW; its SIMD versions give the same results).
//
// It is the Loeffler–Ligtenberg–Moschytz factorisation with 13-bit fixed-point constants
// (`Fixed13`): a column pass that keeps 2 extra fraction bits, then a row pass that removes them
// and the factor 8, rounding half up at each descale. The result, centred on 128, goes through
// libjpeg's range-limit table: the value is taken modulo 1024 as a signed 10-bit number and then
// clamped to 0...255 (so only absurdly large values of corrupt data wrap). Columns or rows whose
// AC terms are all zero take the short cut libjpeg takes, which gives the same numbers.

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

/// The eight outputs of a 1-D inverse DCT of `x0...x7` before descaling: the even part from
/// x0, x2, x4, x6 and the odd part from x1, x3, x5, x7, combined as (even ± odd).
@inline(__always)
private func inverseDCT8(
  _ x0: Int32, _ x1: Int32, _ x2: Int32, _ x3: Int32, _ x4: Int32, _ x5: Int32, _ x6: Int32, _ x7: Int32,
  _ emit: (Int, Int32) -> Void
) {
  // Even part.
  let rotated = (x2 &+ x6) &* Fixed13.c0_541196100
  let even2 = rotated &- x6 &* Fixed13.c1_847759065
  let even3 = rotated &+ x2 &* Fixed13.c0_765366865
  let even0 = (x0 &+ x4) << 13
  let even1 = (x0 &- x4) << 13
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

/// libjpeg's post-IDCT range limit: `value` (not yet centred) modulo 1024 read as a signed
/// 10-bit number, plus 128, clamped to 0...255.
@inline(__always)
private func rangeLimited(_ value: Int32) -> UInt8 {
  let wrapped = ((value & 1023) ^ 512) &- 512
  return wrapped < -128 ? 0 : wrapped > 127 ? 255 : UInt8(truncatingIfNeeded: wrapped &+ 128)
}

/// Dequantizes `coefficients` (natural order) with `quantization` and writes the 8×8 samples
/// to `output`, rows `stride` bytes apart.
@inline(__always)
func inverseDCT(
  coefficients: UnsafePointer<Int16>, quantization: UnsafePointer<Int32>,
  output: UnsafeMutablePointer<UInt8>, stride: Int
) {
  withUnsafeTemporaryAllocation(of: Int32.self, capacity: 64) { workspaceBuffer in
    let workspace = workspaceBuffer.baseAddress!
    // Pass 1: columns, keeping 2 extra fraction bits (descale by 13 - 2).
    for column in 0..<8 {
      @inline(__always) func input(_ row: Int) -> Int32 {
        Int32(coefficients[row * 8 + column]) &* quantization[row * 8 + column]
      }
      if coefficients[8 + column] == 0 && coefficients[16 + column] == 0 && coefficients[24 + column] == 0
        && coefficients[32 + column] == 0 && coefficients[40 + column] == 0 && coefficients[48 + column] == 0
        && coefficients[56 + column] == 0
      {
        let dc = input(0) << 2
        for row in 0..<8 { workspace[row * 8 + column] = dc }
        continue
      }
      inverseDCT8(input(0), input(1), input(2), input(3), input(4), input(5), input(6), input(7)) { row, value in
        workspace[row * 8 + column] = (value &+ (1 << 10)) >> 11
      }
    }
    // Pass 2: rows, removing the 2 fraction bits and the factor 8 (descale by 13 + 2 + 3).
    for row in 0..<8 {
      let line = workspace + row * 8
      let out = output + row * stride
      if line[1] == 0 && line[2] == 0 && line[3] == 0 && line[4] == 0 && line[5] == 0 && line[6] == 0
        && line[7] == 0
      {
        let sample = rangeLimited((line[0] &+ (1 << 4)) >> 5)
        for column in 0..<8 { out[column] = sample }
        continue
      }
      inverseDCT8(line[0], line[1], line[2], line[3], line[4], line[5], line[6], line[7]) { column, value in
        out[column] = rangeLimited((value &+ (1 << 17)) >> 18)
      }
    }
  }
}
