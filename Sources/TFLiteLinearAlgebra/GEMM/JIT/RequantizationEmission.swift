// The requantization of 8-bit kernels' Int32 sums in generated code, bit for bit as
// `IntegerEpilogue.requantize` (and so LiteRT's reference kernels) computes it, then narrowed and
// stored as 16 bytes per row. The dot-product GEMM kernels and the 8-bit depthwise kernels emit it
// as their fused epilogue (the sums never leave registers).
//
// Per lane (channel c), with x the Int32 sum:
// 1. x = (x + bias) << left (wrapping; left is the Swift epilogue's shift count, taken mod 32 as
//    its `&<<` does);
// 2. p = x · multiplier, exact in 64 bits (`vpmuldq` on the even lanes, and on the odd lanes
//    moved down by 32 bits);
// 3. h = bits 32…63 of ((p + rounding) << align): the low 32 bits of (p + rounding) >> (32 − align).
//    Two roundings (LiteRT's default): rounding 2^30 and align 1, i.e. the saturating rounding
//    doubling high multiply (its nudge toward zero for negative products included: truncating
//    (p + 1 − 2^30) / 2^31 equals flooring (p + 2^30) / 2^31; it cannot saturate since the
//    multiplier is never negative). One rounding by 2^t: rounding 2^(t−1), align max(32 − t, 0);
// 4. the rounding division by 2^r with halves away from zero: (h >> r) + 1 + s, where
//    s = ((h & mask) − (h < 0) − threshold) >> 31 is −1 exactly when the remainder does not exceed
//    (mask >> 1) + (h < 0), mask = 2^r − 1 and threshold = (mask >> 1) + 1. One rounding uses it as
//    a plain arithmetic shift by max(t − 32, 0) with mask 0 (s is then always −1);
// 5. plus the output zero point (the "+ 1" of step 4 is folded into it), clamped, narrowed.
// Every intermediate of steps 3–5 fits 32 bits (|h| < 2^31, remainder terms within ±2^31), and the
// Swift epilogue wraps the same way wherever it can wrap, so the two agree on every input.
//
// AVX-512 has a 64-bit arithmetic shift (`vpsravq`), which folds steps 3 and 4 into one rounding
// division of the 64-bit product (fewer instructions per 16 outputs: what thin layers, whose
// multiply-adds are few per output, spend most of their time on):
// - two roundings with right shift r: h = floor((p + 2^30) / 2^31) (step 3, as above), and
//   rounding h to nearest by 2^r with halves away from zero is floor((h + 2^(r−1) − [h < 0]) / 2^r)
//   for r ≥ 1. Nested floors merge (floor((floor(a / m) + b) / n) = floor((a + b·m) / (m·n)) for
//   integer b), and [h < 0] may be replaced by [p < 0] (they differ only where h = 0, which rounds
//   to 0 either way), so the result is floor((p + 2^30 + 2^(30+r) − 2^31·[p < 0]) / 2^(31+r));
//   for r = 0 it is h itself, floor((p + 2^30) / 2^31). The sum stays below 2^62 + 2^61 + 2^30 in
//   magnitude, inside 64 bits;
// - one rounding by 2^t: floor((p + 2^(t−1)) / 2^t), whose low 32 bits are what steps 3–4 give;
// then the output zero point, the clamp and the narrowing as in step 5. The table holds each
// channel's offset (the sum's constant part for p < 0), its sign term (added where p ≥ 0: 2^31, or
// 0 for r = 0 and for one rounding) and the total shift, per 64-bit lane as the other 64-bit
// fields; `vpermi2d` puts the low halves of the even and odd lanes back in channel order.

/// The per-channel constants of the generated requantization: one record of `blockBytes` per
/// 16-channel block, each field 16 lanes (64 bytes) in channel order, or for 64-bit fields 8 lanes
/// of the block's even channels then 8 of its odd ones (for AVX2, vector v of the block reads
/// 32 bytes at `field + 32v` in either layout).
@usableFromInline package enum RequantizationTable {
  /// A field of a block's record, by index.
  @usableFromInline package enum Field: Int32, CaseIterable {
    /// Bias added to the sum (Int32).
    case bias
    /// Left shift of the biased sum (Int32, 0…31).
    case leftShift
    /// The multiplier mantissa (Int32).
    case multiplier
    /// At lane 2j the multiplier of channel 2j + 1 (what `vpmuldq` reads for the odd lanes).
    case oddMultiplier
    /// Rounding term of the even channels' products (Int64).
    case evenRounding
    /// Rounding term of the odd channels' products (Int64).
    case oddRounding
    /// Left shift aligning the even channels' rounded products (Int64).
    case evenAlignment
    /// Left shift aligning the odd channels' rounded products (Int64).
    case oddAlignment
    /// 2^r − 1 (Int32).
    case remainderMask
    /// (mask >> 1) + 1 (Int32).
    case threshold
    /// r (Int32).
    case rightShift
    /// AVX-512: the constant added to the even channels' products when negative (Int64).
    case evenOffset
    /// AVX-512: the constant added to the odd channels' products when negative (Int64).
    case oddOffset
    /// AVX-512: what is added besides to the even channels' products that are not negative (Int64).
    case evenSignTerm
    /// AVX-512: what is added besides to the odd channels' products that are not negative (Int64).
    case oddSignTerm
    /// AVX-512: the arithmetic right shift of the even channels' offset products (Int64).
    case evenTotalShift
    /// AVX-512: the arithmetic right shift of the odd channels' offset products (Int64).
    case oddTotalShift

    /// The field's byte offset in a record.
    @usableFromInline package var offset: Int32 { rawValue * RequantizationTable.fieldBytes }
  }

  /// Bytes of one field: 16 channels of 4 bytes, or 8 of 8.
  @usableFromInline package static let fieldBytes: Int32 = 64
  /// Bytes of one 16-channel block's record.
  @usableFromInline package static let blockBytes = Field.allCases.count * Int(fieldBytes)

  /// Writes channel `lane` (0…15) of the record at `block`: `bias`, then `multiplier` applied as
  /// `rounding` says.
  @usableFromInline package static func write(
    lane: Int, of block: UnsafeMutableRawPointer, bias: Int32, multiplier: QuantizedMultiplier, rounding: RoundingPolicy
  ) {
    let left: Int32
    let roundingTerm: Int64
    let alignment: Int64
    let right: Int32
    let mask: Int32
    // The AVX-512 form: floor((p + offset + signTerm·[p ≥ 0]) / 2^totalShift).
    let offset: Int64
    let signTerm: Int64
    let totalShift: Int64
    switch rounding {
    case .doubleRounding:
      left = Int32(truncatingIfNeeded: max(multiplier.shift, 0)) & 31
      roundingTerm = 1 << 30
      alignment = 1
      right = Int32(min(max(-multiplier.shift, 0), 31))
      mask = Int32(truncatingIfNeeded: (Int64(1) << right) - 1)
      signTerm = right > 0 ? 1 << 31 : 0
      offset = (1 << 30) + (right > 0 ? 1 << (30 + Int64(right)) : 0) - signTerm
      totalShift = 31 + Int64(right)
    case .singleRounding:
      let total = Int64(min(max(31 - multiplier.shift, 1), 62))
      left = 0
      roundingTerm = 1 << (total - 1)
      alignment = max(32 - total, 0)
      right = Int32(max(total - 32, 0))
      mask = 0
      offset = roundingTerm
      signTerm = 0
      totalShift = total
    }
    func store<Value>(_ value: Value, _ field: Field, index: Int) {
      block.storeBytes(of: value, toByteOffset: Int(field.offset) + index * MemoryLayout<Value>.stride, as: Value.self)
    }
    let isOdd = lane % 2 == 1
    store(bias, .bias, index: lane)
    store(left, .leftShift, index: lane)
    store(multiplier.multiplier, .multiplier, index: lane)
    if isOdd { store(multiplier.multiplier, .oddMultiplier, index: lane - 1) }
    store(roundingTerm, isOdd ? .oddRounding : .evenRounding, index: lane / 2)
    store(alignment, isOdd ? .oddAlignment : .evenAlignment, index: lane / 2)
    store(mask, .remainderMask, index: lane)
    store((mask >> 1) + 1, .threshold, index: lane)
    store(right, .rightShift, index: lane)
    store(offset, isOdd ? .oddOffset : .evenOffset, index: lane / 2)
    store(signTerm, isOdd ? .oddSignTerm : .evenSignTerm, index: lane / 2)
    store(totalShift, isOdd ? .oddTotalShift : .evenTotalShift, index: lane / 2)
  }
}

/// The per-call values of the generated requantization, 16 lanes each: output zero point plus one,
/// the clamp's bounds, the mask of every 64-bit lane's high half, and for the AVX-512 form the
/// output zero point, −1 in every lane and the `vpermi2d` indices that interleave the low halves
/// of the even and odd 64-bit lanes.
@usableFromInline package struct RequantizationLanes {
  /// The lanes, `Field` by `Field`.
  @usableFromInline package var storage:
    (SIMD16<Int32>, SIMD16<Int32>, SIMD16<Int32>, SIMD16<Int32>, SIMD16<Int32>, SIMD16<Int32>, SIMD16<Int32>)

  /// The fields, in storage order.
  enum Field: Int32 {
    case zeroPointPlusOne, lower, upper, highHalves, zeroPoint, minusOne, interleave

    /// Byte offset in the storage.
    var offset: Int32 { rawValue * 64 }
  }

  /// The lanes for `outputZeroPoint` and the clamp `lower...upper`.
  @inlinable package init(outputZeroPoint: Int32, lower: Int32, upper: Int32) {
    // Constants, not a lane loop (every 8-bit convolution and depthwise run makes these lanes).
    // Lane 2j: the even lanes' low half j (index 2j); lane 2j + 1: the odd lanes' (16 + 2j).
    let interleave = SIMD16<Int32>(0, 16, 2, 18, 4, 20, 6, 22, 8, 24, 10, 26, 12, 28, 14, 30)
    let highHalves = SIMD16<Int32>(0, -1, 0, -1, 0, -1, 0, -1, 0, -1, 0, -1, 0, -1, 0, -1)
    storage = (
      SIMD16(repeating: outputZeroPoint &+ 1), SIMD16(repeating: lower), SIMD16(repeating: upper), highHalves,
      SIMD16(repeating: outputZeroPoint), SIMD16(repeating: -1), interleave
    )
  }
}

/// What the generated code stores: the clamped lanes as signed or unsigned bytes.
@usableFromInline package enum RequantizedOutput: Int, CaseIterable, Sendable {
  /// int8 outputs.
  case int8
  /// uint8 outputs.
  case uint8
}

/// Which steps of the requantization a kernel may leave out, known per operation at prepare: the
/// left shift when every channel's is 0, the clamp when it is the output type's whole range (the
/// saturating narrowing then clamps: `vpackssdw`/`vpacksswb`/`vpackuswb` on ymm, `vpmovsdb` on
/// zmm, or for uint8 `vpmovusdb` after the lower bound, which reads negative lanes as large).
@usableFromInline package struct RequantizationForm: Hashable, Sendable {
  /// Some channel shifts its biased sum left (step 1).
  @usableFromInline package var shiftsLeft: Bool
  /// The clamp is the output type's whole range.
  @usableFromInline package var saturates: Bool

  /// The form from its parts.
  @inlinable package init(shiftsLeft: Bool, saturates: Bool) {
    self.shiftsLeft = shiftsLeft
    self.saturates = saturates
  }

  /// Every step.
  @usableFromInline package static let complete = RequantizationForm(shiftsLeft: true, saturates: false)

  /// The four forms, `index` by `index`.
  @usableFromInline package static let all = (0..<4).map { RequantizationForm(shiftsLeft: $0 & 1 != 0, saturates: $0 & 2 != 0) }

  /// The form's position in `all`.
  @inlinable package var index: Int { (shiftsLeft ? 1 : 0) + (saturates ? 2 : 0) }
}

/// Emits the requantization of one row of 16 sums and the store of its 16 bytes.
struct RequantizationEmission {
  /// ymm (two registers per row) or zmm (one).
  let width: VectorWidth
  /// The output type.
  let output: RequantizedOutput
  /// Holds the address of the 16-channel block's `RequantizationTable` record.
  let table: GPRegister
  /// Holds the address of the `RequantizationLanes`.
  let lanes: GPRegister
  /// Two vector registers the emission may overwrite.
  let scratch: (VectorRegister, VectorRegister)
  /// zmm only: the mask register whose set bits choose the bytes stored (all 16 when nil).
  var storeMask: MaskRegister? = nil
  /// False when the sums already hold the bias (the dot-product tiles start from it): step 1 then
  /// only shifts.
  var addsBias = true
  /// The steps this kernel needs.
  var form = RequantizationForm.complete
  /// zmm only: the mask registers the rescale overwrites (the signs of the even and odd lanes' products).
  let signMasks = (even: MaskRegister(2), odd: MaskRegister(3))

  /// `operation destination, left, right` in the emission's width.
  private func packed(
    _ assembler: inout X86Assembler, _ operation: PackedIntegerOperation, _ destination: VectorRegister,
    _ left: VectorRegister, _ right: MemoryOperand
  ) {
    width == .ymm
      ? assembler.packedYMM(operation, destination, left, right) : assembler.packedZMM(operation, destination, left, right)
  }

  /// `operation destination, left, right` with a register source.
  private func packed(
    _ assembler: inout X86Assembler, _ operation: PackedIntegerOperation, _ destination: VectorRegister,
    _ left: VectorRegister, _ right: VectorRegister
  ) {
    width == .ymm
      ? assembler.packedYMM(operation, destination, left, right) : assembler.packedZMM(operation, destination, left, right)
  }

  /// `shift destination, source, count`.
  private func shift(
    _ assembler: inout X86Assembler, _ shift: PackedShift, _ destination: VectorRegister, _ source: VectorRegister,
    _ count: UInt8
  ) {
    width == .ymm
      ? assembler.shiftYMM(shift, destination, source, by: count) : assembler.shiftZMM(shift, destination, source, by: count)
  }

  /// Requantizes the sums in `sums` (overwritten: one register per `width.vectorsPerRow`) and stores
  /// the 16 output bytes at `destination`.
  func emit(_ assembler: inout X86Assembler, sums: [VectorRegister], to destination: MemoryOperand) {
    for (vector, value) in sums.enumerated() { requantize(&assembler, value, vector: vector) }
    narrowAndStore(&assembler, sums, to: destination)
  }

  /// Stores the 16 clamped lanes of `values` (one register per `width.vectorsPerRow`) as 16
  /// output bytes at `destination`.
  func narrowAndStore(_ assembler: inout X86Assembler, _ values: [VectorRegister], to destination: MemoryOperand) {
    let (first, second) = scratch
    if width == .zmm {
      if let storeMask {
        assembler.vpmovdbZMM(destination, values[0], mask: storeMask)
      } else if form.saturates {
        output == .int8 ? assembler.vpmovsdbZMM(destination, values[0]) : assembler.vpmovusdbZMM(destination, values[0])
      } else {
        assembler.vpmovdbZMM(destination, values[0])
      }
      return
    }
    // Words [A0–3 B0–3 | A4–7 B4–7] → [A0–3 A4–7 | B0–3 B4–7] → 16 bytes in channel order.
    assembler.packedYMM(.vpackssdw, first, values[0], values[1])
    assembler.vpermqYMM(first, first, 0b11_01_10_00)
    assembler.vextracti128(second, first, half: 1)
    output == .int8
      ? assembler.vpacksswbXMM(first, first, second) : assembler.vpackuswbXMM(first, first, second)
    assembler.vmovupsXMM(destination, first)
  }

  /// Steps 1–5 of the file's description on vector `vector` of a row, in place (Int32 lanes, not
  /// yet narrowed: the elementwise kernels also use it to rescale their inputs); on zmm in the
  /// AVX-512 form, which also overwrites `signMasks`.
  func requantize(_ assembler: inout X86Assembler, _ value: VectorRegister, vector: Int) {
    let (odd, even) = scratch
    let step = Int32(vector) * width.bytes
    func field(_ field: RequantizationTable.Field) -> MemoryOperand { MemoryOperand(table, field.offset + step) }
    func lane(_ field: RequantizationLanes.Field) -> MemoryOperand { MemoryOperand(lanes, field.offset) }
    if addsBias { packed(&assembler, .vpaddd, value, value, field(.bias)) }
    if form.shiftsLeft { packed(&assembler, .vpsllvd, value, value, field(.leftShift)) }
    if width == .zmm {
      shift(&assembler, .vpsrlq, odd, value, 32)
      packed(&assembler, .vpmuldq, even, value, field(.multiplier))
      packed(&assembler, .vpmuldq, odd, odd, field(.oddMultiplier))
      assembler.vpcmpgtqZMM(signMasks.even, even, lane(.minusOne))
      assembler.vpcmpgtqZMM(signMasks.odd, odd, lane(.minusOne))
      packed(&assembler, .vpaddq, even, even, field(.evenOffset))
      packed(&assembler, .vpaddq, odd, odd, field(.oddOffset))
      assembler.packedZMM(.vpaddq, even, even, field(.evenSignTerm), mask: signMasks.even)
      assembler.packedZMM(.vpaddq, odd, odd, field(.oddSignTerm), mask: signMasks.odd)
      packed(&assembler, .vpsravq, even, even, field(.evenTotalShift))
      packed(&assembler, .vpsravq, odd, odd, field(.oddTotalShift))
      assembler.load(.zmm, value, lane(.interleave))
      assembler.vpermi2dZMM(value, even, odd)
      packed(&assembler, .vpaddd, value, value, lane(.zeroPoint))
      clamp(&assembler, value, lane(.lower), lane(.upper))
      return
    }
    shift(&assembler, .vpsrlq, odd, value, 32)
    packed(&assembler, .vpmuldq, even, value, field(.multiplier))
    packed(&assembler, .vpmuldq, odd, odd, field(.oddMultiplier))
    packed(&assembler, .vpaddq, even, even, field(.evenRounding))
    packed(&assembler, .vpaddq, odd, odd, field(.oddRounding))
    packed(&assembler, .vpsllvq, even, even, field(.evenAlignment))
    packed(&assembler, .vpsllvq, odd, odd, field(.oddAlignment))
    shift(&assembler, .vpsrlq, even, even, 32)
    packed(&assembler, .vpand, odd, odd, lane(.highHalves))
    packed(&assembler, .vpor, value, even, odd)
    // value = h; now the rounding division: odd = remainder − (h < 0) − threshold, sign only.
    packed(&assembler, .vpand, odd, value, field(.remainderMask))
    shift(&assembler, .vpsrad, even, value, 31)
    packed(&assembler, .vpaddd, odd, odd, even)
    packed(&assembler, .vpsubd, odd, odd, field(.threshold))
    shift(&assembler, .vpsrad, odd, odd, 31)
    packed(&assembler, .vpsravd, value, value, field(.rightShift))
    packed(&assembler, .vpaddd, value, value, odd)
    packed(&assembler, .vpaddd, value, value, lane(.zeroPointPlusOne))
    clamp(&assembler, value, lane(.lower), lane(.upper))
  }

  /// Step 5's clamp, or what the saturating narrowing of `form.saturates` leaves to do.
  private func clamp(_ assembler: inout X86Assembler, _ value: VectorRegister, _ lower: MemoryOperand, _ upper: MemoryOperand) {
    let saturates = form.saturates && storeMask == nil
    if !saturates || (width == .zmm && output == .uint8) { packed(&assembler, .vpmaxsd, value, value, lower) }
    if !saturates { packed(&assembler, .vpminsd, value, value, upper) }
  }
}

/// The arguments of a standalone requantization kernel, passed by pointer (the kernel reads each
/// field at its `MemoryLayout` offset). Strides are in bytes.
@usableFromInline package struct RequantizationKernelArguments {
  /// Row 0's 16 Int32 sums.
  @usableFromInline package var sums: UnsafePointer<Int32>
  /// Bytes between rows of sums.
  @usableFromInline package var sumsRowBytes: Int
  /// Row 0's 16 output bytes.
  @usableFromInline package var output: UnsafeMutableRawPointer
  /// Bytes between output rows.
  @usableFromInline package var outputRowBytes: Int
  /// Rows (0 or more).
  @usableFromInline package var rows: Int
  /// The 16-channel block's `RequantizationTable` record.
  @usableFromInline package var table: UnsafeRawPointer
  /// The `RequantizationLanes`.
  @usableFromInline package var lanes: UnsafeRawPointer

  /// The arguments from their parts.
  @inlinable package init(
    sums: UnsafePointer<Int32>, sumsRowBytes: Int, output: UnsafeMutableRawPointer, outputRowBytes: Int, rows: Int,
    table: UnsafeRawPointer, lanes: UnsafeRawPointer
  ) {
    self.sums = sums
    self.sumsRowBytes = sumsRowBytes
    self.output = output
    self.outputRowBytes = outputRowBytes
    self.rows = rows
    self.table = table
    self.lanes = lanes
  }
}

/// Generates the standalone requantization kernel `void kernel(const RequantizationKernelArguments *)`:
/// for each row, load 16 sums, requantize them (`RequantizationEmission`) and store 16 bytes.
/// Registers: rdi arguments, rax the sums, rdx the output, rcx the row counter, rsi the table, r11
/// the lanes; vector registers 0–3; `vzeroupper` before returning.
@usableFromInline package enum RequantizationKernelGenerator {
  /// The machine code for `isa` and `output`.
  @usableFromInline package static func code(isa: GeneratedKernelISA, output: RequantizedOutput) -> [UInt8] {
    var assembler = X86Assembler()
    let width: VectorWidth = isa == .avx2 ? .ymm : .zmm
    let emission = RequantizationEmission(
      width: width, output: output, table: .rsi, lanes: .r11, scratch: (VectorRegister(2), VectorRegister(3)))
    let sums = (0..<width.vectorsPerRow).map { VectorRegister($0) }
    assembler.loadArguments(
      of: RequantizationKernelArguments.self, [.rax: \.sums, .rdx: \.output, .rcx: \.rows, .rsi: \.table, .r11: \.lanes])
    let rows = CountedLoop(&assembler, counting: .rcx)
    for (vector, register) in sums.enumerated() {
      assembler.load(width, register, MemoryOperand(.rax, Int32(vector) * width.bytes))
    }
    emission.emit(&assembler, sums: sums, to: MemoryOperand(.rdx))
    assembler.add(.rax, argumentOperand(\RequantizationKernelArguments.sumsRowBytes))
    assembler.add(.rdx, argumentOperand(\RequantizationKernelArguments.outputRowBytes))
    rows.end(&assembler)
    assembler.returnFromKernel(restoring: [])
    return assembler.finishedCode()
  }
}

/// The standalone requantization kernels of one instruction set, one per output type, made on
/// first use and kept for the process. The legacy uint8 row-corrected tiles and the 8-bit
/// TRANSPOSE_CONV run them on their Int32 sums.
@usableFromInline package final class GeneratedRequantizationKernels: GeneratedKernelFamily, @unchecked Sendable {
  // @unchecked Sendable: everything is immutable after `init`.

  /// The instruction set.
  @usableFromInline package let isa: GeneratedKernelISA
  /// The kernel for each `RequantizedOutput`, by raw value.
  private let kernels: [ExecutableCode]

  /// Generates both kernels of `isa`; nil when the OS refuses executable memory.
  @usableFromInline package init?(isa: GeneratedKernelISA) {
    guard
      let kernels = ExecutableCode.mapped(
        RequantizedOutput.allCases.map { RequantizationKernelGenerator.code(isa: isa, output: $0) })
    else { return nil }
    self.isa = isa
    self.kernels = kernels
  }

  @usableFromInline package static let avx2Set = GeneratedRequantizationKernels(isa: .avx2)
  @usableFromInline package static let avx512Set = GeneratedRequantizationKernels(isa: .avx512)
  @usableFromInline package static let preferred: GeneratedRequantizationKernels? = preferredSet()

  /// Requantizes `rows` rows of 16 sums (`sumsStride` Int32 apart) of the channel block whose
  /// record is `table`, with the `RequantizationLanes` at `lanes`, and stores 16 `Output` bytes per
  /// row (`outputStride` apart).
  @inlinable package func requantize<Output: QuantizedInteger>(
    sums: UnsafePointer<Int32>, sumsStride: Int, rows: Int, table: UnsafeRawPointer, lanes: UnsafeRawPointer,
    output: UnsafeMutablePointer<Output>, outputStride: Int
  ) {
    var arguments = RequantizationKernelArguments(
      sums: sums, sumsRowBytes: sumsStride * 4, output: UnsafeMutableRawPointer(output),
      outputRowBytes: outputStride * MemoryLayout<Output>.stride, rows: rows, table: table, lanes: lanes)
    run(output: Output.isSigned ? .int8 : .uint8, &arguments)
  }

  /// Runs the kernel for `output` on `arguments`.
  @usableFromInline package func run(output: RequantizedOutput, _ arguments: inout RequantizationKernelArguments) {
    precondition(arguments.rows >= 0, "negative row count")
    callKernel(at: kernels[output.rawValue].entry, &arguments)
  }
}
