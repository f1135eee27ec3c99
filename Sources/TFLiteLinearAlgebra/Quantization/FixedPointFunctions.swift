// Transcendental functions in gemmlowp's fixed-point formats, bit-exact with the reference
// kernels that use them (quantized SOFTMAX and LOG_SOFTMAX).
//
// A value in format Q(m) is a raw Int32 `r` standing for r / 2^(31 − m): m integer bits, 31 − m
// fractional bits. Sums and differences of raw values wrap (as gemmlowp's plain `+` does on
// two's-complement machines); products use the saturating rounding doubling high multiply, so a
// Q(a) × Q(b) product is a Q(a + b) value.

extension FixedPoint {
  /// `x · 2^exponent` for `exponent` in −31...31: a rounding right shift when negative, a left
  /// shift that saturates to the Int32 range when positive.
  @inlinable @inline(__always)
  package static func saturatingRoundingMultiplyByPowerOfTwo(_ x: Int32, _ exponent: Int) -> Int32 {
    if exponent == 0 { return x }
    if exponent < 0 { return roundingDivideByPowerOfTwo(x, -exponent) }
    let threshold = Int32(truncatingIfNeeded: (Int64(1) << (31 - exponent)) - 1)
    if x > threshold { return .max }
    if x < -threshold { return .min }
    return x &<< Int32(exponent)
  }

  /// Converts a raw value from format Q(`from`) to Q(`to`), rounding or saturating.
  @inlinable @inline(__always)
  package static func rescale(_ x: Int32, fromIntegerBits from: Int, toIntegerBits to: Int) -> Int32 {
    saturatingRoundingMultiplyByPowerOfTwo(x, from - to)
  }

  /// `(a + b) / 2` rounded half away from zero, computed without overflow.
  @inlinable @inline(__always)
  package static func roundingHalfSum(_ a: Int32, _ b: Int32) -> Int32 {
    let sum = Int64(a) + Int64(b)
    return Int32(truncatingIfNeeded: (sum + (sum >= 0 ? 1 : -1)) / 2)
  }

  /// `a + b` clamped to the Int32 range.
  @inlinable @inline(__always)
  package static func saturatingAdd(_ a: Int32, _ b: Int32) -> Int32 {
    Int32(clamping: Int64(a) + Int64(b))
  }

  /// `a − b` clamped to the Int32 range.
  @inlinable @inline(__always)
  package static func saturatingSubtract(_ a: Int32, _ b: Int32) -> Int32 {
    Int32(clamping: Int64(a) - Int64(b))
  }

  /// The 16-bit saturating rounding doubling high multiply: the high 16 bits of `2 · a · b`,
  /// rounded to nearest (halves toward +infinity); `Int16.min × Int16.min` saturates.
  @inlinable @inline(__always)
  package static func saturatingRoundingDoublingHighMultiply(_ a: Int16, _ b: Int16) -> Int16 {
    if a == b && a == .min { return .max }
    let product = Int32(a) * Int32(b)
    let nudge: Int32 = product >= 0 ? 1 << 14 : 1 - (1 << 14)
    // Division truncating toward zero, as C++ `/` does.
    return Int16(truncatingIfNeeded: (product + nudge) / (1 << 15))
  }

  // MARK: - Constants (raw values of the real numbers named, rounded to the format)

  /// exp(−1/8) in Q0: round(2^31 · e^(−1/8)).
  @usableFromInline package static let expOfMinusOneEighth: Int32 = 1_895_147_668
  /// 1/3 in Q0.
  @usableFromInline package static let oneThird: Int32 = 715_827_883
  /// e^(−2^k) in Q0 for k = `expOfMinusPowersOfTwoFirstExponent` + index (−2...4): the factors of
  /// the barrel shifter of `expOnNegativeValues`. Plain `Int32`s, not (exponent, multiplier)
  /// tuples: an array of tuples makes the Swift runtime build the tuple's metadata from its mangled
  /// name on first use, in the first int8 SOFTMAX's prepare.
  @usableFromInline package static let expOfMinusPowersOfTwo: [Int32] = [
    1_672_461_947, 1_302_514_674, 790_015_084, 290_630_308, 39_332_535, 720_401, 242,
  ]
  /// The exponent k of `expOfMinusPowersOfTwo[0]`.
  @usableFromInline package static let expOfMinusPowersOfTwoFirstExponent = -2
  /// 48/17 in Q2.
  @usableFromInline package static let fortyEightSeventeenths: Int32 = 1_515_870_810
  /// −32/17 in Q2.
  @usableFromInline package static let minusThirtyTwoSeventeenths: Int32 = -1_010_580_540
  /// ln 2 in Q0.
  @usableFromInline package static let logOfTwo: Int32 = 1_488_522_236
  /// 2^(−1/4) in Q0.
  @usableFromInline package static let fourthRootOfOneHalf: Int32 = 1_805_811_301
  /// 2^(−1/2) in Q0.
  @usableFromInline package static let squareRootOfOneHalf: Int32 = 1_518_500_250
  /// 1/4 in Q0.
  @usableFromInline package static let oneQuarter: Int32 = 536_870_912
  // The coefficients of the rational approximation of the logarithm, in Q0.
  /// 11/240 · 2^(1/4): the cubic term of the numerator.
  @usableFromInline package static let logNumeratorCubic: Int32 = 117_049_297
  /// 1/20 · 2^(1/4): the square term of the denominator.
  @usableFromInline package static let logDenominatorSquare: Int32 = 127_690_142
  /// 2 · 2^(−1/4) − 2^(1/4): the constant of the denominator's second factor.
  @usableFromInline package static let logDenominatorLinear: Int32 = 1_057_819_769
  /// 1/4 · 2^(1/4): the linear term of the denominator.
  @usableFromInline package static let logDenominatorFirst: Int32 = 638_450_708

  // MARK: - Functions

  /// e^a for `a` in [−1/4, 0), all in Q0, by a fourth-order Taylor expansion around −1/8.
  @inlinable package static func expOnIntervalBetweenNegativeOneQuarterAndZero(_ a: Int32) -> Int32 {
    let x = a &+ (1 << 28)
    let x2 = saturatingRoundingDoublingHighMultiply(x, x)
    let x3 = saturatingRoundingDoublingHighMultiply(x2, x)
    let x4 = saturatingRoundingDoublingHighMultiply(x2, x2)
    let x4OverFour = roundingDivideByPowerOfTwo(x4, 2)
    let polynomial = roundingDivideByPowerOfTwo(
      saturatingRoundingDoublingHighMultiply(x4OverFour &+ x3, oneThird) &+ x2, 1)
    return expOfMinusOneEighth &+ saturatingRoundingDoublingHighMultiply(expOfMinusOneEighth, x &+ polynomial)
  }

  /// e^a for `a` ≤ 0 given in Q(`integerBits`), as a Q0 value (1 is the largest raw value).
  @inlinable package static func expOnNegativeValues(_ a: Int32, integerBits: Int) -> Int32 {
    let fractionalBits = 31 - integerBits
    let quarter = Int32(1) << Int32(fractionalBits - 2)
    let moduloQuarterMinusQuarter = (a & (quarter &- 1)) &- quarter
    var result = expOnIntervalBetweenNegativeOneQuarterAndZero(
      rescale(moduloQuarterMinusQuarter, fromIntegerBits: integerBits, toIntegerBits: 0))
    let remainder = moduloQuarterMinusQuarter &- a
    for index in expOfMinusPowersOfTwo.indices {
      let exponent = expOfMinusPowersOfTwoFirstExponent + index
      guard integerBits > exponent else { break }
      let bit = Int32(truncatingIfNeeded: Int64(1) << (fractionalBits + exponent))
      if remainder & bit != 0 { result = saturatingRoundingDoublingHighMultiply(result, expOfMinusPowersOfTwo[index]) }
    }
    if integerBits > 5 {
      let clamp = -(Int32(1) << Int32(36 - integerBits))
      if a < clamp { result = 0 }
    }
    return a == 0 ? .max : result
  }

  /// 1 / (1 + x) for `x` in [0, 1] in Q0, by three Newton–Raphson steps from 48/17 − 32/17 · d.
  @inlinable package static func oneOverOnePlusX(_ x: Int32) -> Int32 {
    let halfDenominator = roundingHalfSum(x, .max)
    var estimate = fortyEightSeventeenths
      &+ saturatingRoundingDoublingHighMultiply(halfDenominator, minusThirtyTwoSeventeenths)
    let oneInQ2 = Int32(1) << 29
    for _ in 0..<3 {
      let product = saturatingRoundingDoublingHighMultiply(halfDenominator, estimate)
      let correction = saturatingRoundingDoublingHighMultiply(estimate, oneInQ2 &- product)
      estimate = estimate &+ rescale(correction, fromIntegerBits: 4, toIntegerBits: 2)
    }
    return rescale(estimate, fromIntegerBits: 1, toIntegerBits: 0)
  }

  /// The reciprocal of a positive Q(`integerBits`) value `x` as a Q0 mantissa of 1/(1 + f) with
  /// `x = (1 + f) · 2^bitsOverUnit`, as TFLite's softmax normalises its sum.
  @inlinable package static func reciprocal(_ x: Int32, integerBits: Int) -> (mantissa: Int32, bitsOverUnit: Int) {
    let headroomPlusOne = UInt32(bitPattern: x).leadingZeroBitCount
    let shifted = UInt32(bitPattern: x) << UInt32(headroomPlusOne)
    let fractionMinusOne = Int32(bitPattern: shifted &- (1 << 31))
    return (oneOverOnePlusX(fractionMinusOne), integerBits - headroomPlusOne)
  }

  /// The number of leading bits of `x` that repeat its sign bit: 31 for 0 and −1, 0 for
  /// `Int32.min` (TFLite's `CountLeadingSignBits`).
  @inlinable @inline(__always)
  package static func countLeadingSignBits(_ x: Int32) -> Int {
    (x < 0 ? ~x : x).leadingZeroBitCount - 1
  }

  /// 1/√x for an integer `x` as a quantized multiplier (TFLite's
  /// `GetInvSqrtQuantizedMultiplierExp` with its shift reversed): five Newton–Raphson steps in Q3 on
  /// x normalized by powers of four. Inputs below 2 give the largest multiplier.
  @inlinable package static func inverseSquareRoot(_ x: Int32) -> QuantizedMultiplier {
    guard x > 1 else { return QuantizedMultiplier(multiplier: .max, shift: 0) }
    var input = x
    // A right shift while the value is computed; the multiplier's exponent is its negation.
    var rightShift = 11
    while input >= 1 << 29 {
      input /= 4
      rightShift += 1
    }
    let leftShiftPairs = (input.leadingZeroBitCount - 1) / 2 - 1
    rightShift -= leftShiftPairs
    input <<= Int32(2 * leftShiftPairs)
    let halfInput = roundingDivideByPowerOfTwo(input >> 1, 1)
    let threeHalves: Int32 = (1 << 28) + (1 << 27)
    var estimate: Int32 = 1 << 28
    for _ in 0..<5 {
      let cube = rescale(
        saturatingRoundingDoublingHighMultiply(saturatingRoundingDoublingHighMultiply(estimate, estimate), estimate),
        fromIntegerBits: 9, toIntegerBits: 3)
      estimate = rescale(
        saturatingRoundingDoublingHighMultiply(threeHalves, estimate)
          &- saturatingRoundingDoublingHighMultiply(halfInput, cube),
        fromIntegerBits: 6, toIntegerBits: 3)
    }
    var multiplier = saturatingRoundingDoublingHighMultiply(estimate, squareRootOfOneHalf)
    if rightShift < 0 {
      multiplier = multiplier &<< Int32(-rightShift)
      rightShift = 0
    }
    return QuantizedMultiplier(multiplier: multiplier, shift: -rightShift)
  }

  /// ln(x) for a Q(`inputIntegerBits`) value x ≥ 1, as a Q(`outputIntegerBits`) value.
  @inlinable package static func logOfValueAtLeastOne(_ x: Int32, inputIntegerBits: Int, outputIntegerBits: Int) -> Int32 {
    let accumulatorBits = outputIntegerBits + 1
    let shiftedQuarter = rescale(oneQuarter, fromIntegerBits: 0, toIntegerBits: accumulatorBits)
    // Normalise x two ways (by its headroom, and by its headroom after · 2^(−1/2)) and keep the
    // mantissa closest to 2^(−1/4) together with its power of two.
    let headroomPlusOneA = UInt32(bitPattern: x).leadingZeroBitCount
    let mantissaAStart = saturatingRoundingMultiplyByPowerOfTwo(x, headroomPlusOneA - 1)
    let mantissaA = saturatingRoundingMultiplyByPowerOfTwo(
      saturatingRoundingDoublingHighMultiply(mantissaAStart, squareRootOfOneHalf), 1)
    let powerA = saturatingAdd(
      saturatingRoundingMultiplyByPowerOfTwo(Int32(inputIntegerBits - headroomPlusOneA), 31 - accumulatorBits),
      shiftedQuarter)
    let scaledB = saturatingRoundingDoublingHighMultiply(x, squareRootOfOneHalf)
    let headroomB = UInt32(bitPattern: scaledB).leadingZeroBitCount - 1
    let mantissaB = saturatingRoundingMultiplyByPowerOfTwo(x, headroomB)
    let powerB = saturatingSubtract(
      saturatingRoundingMultiplyByPowerOfTwo(Int32(inputIntegerBits - headroomB), 31 - accumulatorBits),
      shiftedQuarter)
    let r = min(mantissaA, mantissaB)
    let power = max(powerA, powerB)
    // ln(r) around 2^(−1/4) by a rational approximation in q = 2 · (r − 2^(−1/4)).
    let p = roundingHalfSum(r, fourthRootOfOneHalf)
    var q = r &- fourthRootOfOneHalf
    q = q &+ q
    let qSquared = saturatingRoundingDoublingHighMultiply(q, q)
    let numerator = saturatingRoundingDoublingHighMultiply(q, r)
      &+ saturatingRoundingDoublingHighMultiply(saturatingRoundingDoublingHighMultiply(q, qSquared), logNumeratorCubic)
    let denominatorMinusOne = saturatingRoundingDoublingHighMultiply(
      p, logDenominatorLinear &+ q &+ saturatingRoundingDoublingHighMultiply(logDenominatorSquare, qSquared))
      &+ saturatingRoundingDoublingHighMultiply(logDenominatorFirst, q)
    let reciprocalDenominator = oneOverOnePlusX(denominatorMinusOne)
    let scaledNumerator = rescale(numerator, fromIntegerBits: 0, toIntegerBits: accumulatorBits)
    let sum = saturatingRoundingDoublingHighMultiply(power, logOfTwo)
      &+ saturatingRoundingDoublingHighMultiply(scaledNumerator, reciprocalDenominator)
    return rescale(sum, fromIntegerBits: accumulatorBits, toIntegerBits: outputIntegerBits)
  }
}
