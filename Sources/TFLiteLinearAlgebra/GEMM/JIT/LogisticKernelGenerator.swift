// The float logistic 1 / (1 + e^−x) and SiLU x · logistic(x) as one approximation, written twice
// from the same constants (`LogisticApproximation`): as Swift SIMD code in the runtime
// (`VectorMath.logistic`: separate multiplies and adds, one division, as the SSE2 baseline has no
// fused multiply-add) and as a generated AVX-512 loop here, which fuses the reduction steps and
// the polynomial's multiply-adds and replaces the division, the loop's bottleneck (one `vdivps` of
// 16 lanes every 8–16 cycles), by a reciprocal estimate and one fused Newton step. So the two
// routes no longer give the same bits: both stay within the stated accuracy of the exact values
// and of LiteRT (the tests check each route against double precision and LiteRT, and the
// generated one against the Swift one: within 3 ulp for the logistic and the SiLU).
//
// The approximation: e = e^−|x| with |x| capped at 87, from −|x| = n·ln2 + r (n = round(−|x|·log2 e)
// by the 1.5·2^23 shifter, |r| ≤ ln2/2, ln2 in two parts), e^r by a degree-5 polynomial and 2^n
// built in the exponent bits; then 1/(1 + e) for x ≥ 0 and e/(1 + e) below, selected by the sign
// bit of x. NaN stays NaN. Accuracy (tests): within 1e-7 of the exact value everywhere, relative
// error ≤ 3.2e-7 (4 ulp) for x ≥ −87; below −87 the result stays e^−87 (1.6e-38) where the exact
// value is smaller (LiteRT gives it down to 0).

/// The constants of the logistic approximation, shared by the Swift and the generated code.
@usableFromInline package enum LogisticApproximation {
  /// log2(e), for n = round(t · log2(e)).
  @inlinable package static var log2OfE: Float { 1.442_695_04 }
  /// ln(2) split in a part with few significant bits (n · ln2High is exact for |n| ≤ 126) and
  /// the rest, so that r = (t − n · ln2High) − n · ln2Low keeps its relative accuracy for large n.
  @inlinable package static var ln2High: Float { 0.693_359_375 }
  /// ln(2) − `ln2High`.
  @inlinable package static var ln2Low: Float { -2.121_944_4e-4 }
  /// 1.5 · 2^23: adding it rounds a float of magnitude < 2^22 to an integer, which then sits in
  /// the low mantissa bits.
  @inlinable package static var roundingShifter: Float { 12_582_912 }
  /// −|x| is raised to this, so e^−|x| stays a normal float.
  @inlinable package static var lowestExponent: Float { -87 }
  /// The polynomial for e^r on |r| ≤ ln2/2, highest degree first (fitted by weighted least squares
  /// for relative error: 2.1e-7 with float rounding; close to 1/k!).
  @inlinable package static var coefficients: (Float, Float, Float, Float, Float, Float) {
    (0.008_297_654, 0.041_915_383, 0.166_675_75, 0.499_988_94, 0.999_999_70, 1.000_000_1)
  }
  /// The bits of `roundingShifter` minus the float exponent bias: subtracted from the shifter's
  /// sum, it leaves n + 127, the exponent field of 2^n.
  @inlinable package static var exponentBias: Int32 { Int32(bitPattern: roundingShifter.bitPattern) &- 127 }
}

/// Generates the AVX-512 logistic and SiLU loops: `void kernel(const LogisticKernelArguments *)`
/// in the System V ABI, over `vectorCount` vectors of 16 floats.
///
/// Registers: rdi arguments, rsi input, rdx output, rcx the vector counter, rax the constants;
/// zmm0–zmm6 and zmm8–zmm14 the two vectors of a pair being computed (a pair per loop iteration,
/// then a last single vector), zmm16–zmm28 the constants, zmm30/zmm31 the clamp bounds, k1 the
/// negative lanes. No callee-saved register is used; `vzeroupper` before returning.
@usableFromInline package enum LogisticKernelGenerator {
  /// What a kernel computes from x.
  @usableFromInline package enum Form: Int, Sendable, CaseIterable {
    /// logistic(x).
    case logistic
    /// x · logistic(x).
    case sigmoidLinearUnit
    /// min(max(x · logistic(x), lower), upper), as `ActivationRange.clamp` does it.
    case clampedSigmoidLinearUnit
  }

  /// The constants table the kernels read, as 32-bit patterns, in register order from zmm16.
  @usableFromInline package static let constantBits: [UInt32] = {
    let c = LogisticApproximation.coefficients
    let floats: [Float] = [
      LogisticApproximation.lowestExponent, LogisticApproximation.log2OfE, LogisticApproximation.roundingShifter,
      LogisticApproximation.ln2High, LogisticApproximation.ln2Low, c.0, c.1, c.2, c.3, c.4, c.5, 1,
    ]
    return [0x8000_0000] + floats.map(\.bitPattern)
  }()

  /// The machine code of the `form` kernel.
  @usableFromInline package static func code(_ form: Form) -> [UInt8] {
    var assembler = X86Assembler()
    assembler.loadArguments(
      of: LogisticKernelArguments.self, [.rsi: \.input, .rdx: \.output, .rcx: \.vectorCount, .rax: \.constants])
    let signBit = VectorRegister(16), lowestExponent = VectorRegister(17)
    let log2OfE = VectorRegister(18), shifter = VectorRegister(19), ln2High = VectorRegister(20)
    let ln2Low = VectorRegister(21), coefficients = (22...27).map { VectorRegister($0) }
    let one = VectorRegister(28), lower = VectorRegister(30), upper = VectorRegister(31)
    for index in constantBits.indices {
      assembler.vbroadcastssZMM(VectorRegister(16 + index), MemoryOperand(.rax, Int32(4 * index)))
    }
    if form == .clampedSigmoidLinearUnit {
      assembler.vbroadcastssZMM(lower, argumentOperand(\LogisticKernelArguments.lower))
      assembler.vbroadcastssZMM(upper, argumentOperand(\LogisticKernelArguments.upper))
    }
    let negative = MaskRegister(1)
    /// Emits `lanes`: each instruction of the computation once per vector in flight, so the two
    /// vectors of a pair run as independent chains side by side.
    func emitVectors(_ lanes: [LaneRegisters]) {
      func each(_ body: (LaneRegisters) -> Void) { lanes.forEach(body) }
      each { assembler.vmovupsZMM($0.x, MemoryOperand(.rsi, $0.offset)) }
      // t = max(−|x|, −87); NaN stays NaN (vmaxps returns its second operand then).
      each { assembler.packedZMM(.vpor, $0.t, $0.x, signBit) }
      each { assembler.packedZMM(.vmaxps, $0.t, lowestExponent, $0.t) }
      // shifted = t · log2e + shifter; n = shifted − shifter; r = (t − n · ln2High) − n · ln2Low,
      // each step of r one fused multiply-add (r is built in t's register).
      each { assembler.packedZMM(.vmulps, $0.shifted, $0.t, log2OfE) }
      each { assembler.packedZMM(.vaddps, $0.shifted, $0.shifted, shifter) }
      each { assembler.packedZMM(.vsubps, $0.n, $0.shifted, shifter) }
      each { assembler.packedZMM(.vfnmadd231ps, $0.t, $0.n, ln2High) }
      each { assembler.packedZMM(.vfnmadd231ps, $0.t, $0.n, ln2Low) }
      // e^r by Horner: p = c5 · r + c4, then p = r · p + c_k fused.
      each { assembler.packedZMM(.vmulps, $0.polynomial, coefficients[0], $0.t) }
      each { assembler.packedZMM(.vaddps, $0.polynomial, $0.polynomial, coefficients[1]) }
      for coefficient in coefficients[2...] {
        each { assembler.packedZMM(.vfmadd213ps, $0.polynomial, $0.t, coefficient) }
      }
      // e = p · 2^n: n is a whole number with 2^n a normal float (−126 ≤ n ≤ 0), so scaling the
      // exponent rounds exactly as the product with 2^n built in the exponent bits.
      each { assembler.vscalefpsZMM($0.polynomial, $0.polynomial, $0.n) }
      // reciprocal = 1 / (1 + e) without a division: the 14-bit estimate y of 1/d (d in [1, 2]) and
      // one Newton step y + y · (1 − d · y), fused, within about an ulp of the quotient.
      each { assembler.packedZMM(.vaddps, $0.reciprocal, one, $0.polynomial) }
      each { assembler.vrcp14psZMM($0.estimate, $0.reciprocal) }
      each { assembler.packedZMM(.vfnmadd213ps, $0.reciprocal, $0.estimate, one) }
      each { assembler.packedZMM(.vfmadd213ps, $0.reciprocal, $0.estimate, $0.estimate) }
      // The result, built in the reciprocal's register: e · reciprocal in the lanes where the sign
      // bit of x is set (one merge-masked multiply), the reciprocal elsewhere.
      each { lane in
        assembler.vptestmdZMM(negative, lane.x, signBit)
        assembler.packedZMM(.vmulps, lane.reciprocal, lane.reciprocal, lane.polynomial, mask: negative)
      }
      if form != .logistic { each { assembler.packedZMM(.vmulps, $0.reciprocal, $0.x, $0.reciprocal) } }
      if form == .clampedSigmoidLinearUnit {
        each { assembler.packedZMM(.vmaxps, $0.reciprocal, lower, $0.reciprocal) }
        each { assembler.packedZMM(.vminps, $0.reciprocal, upper, $0.reciprocal) }
      }
      each { assembler.vmovupsZMM(MemoryOperand(.rdx, $0.offset), $0.reciprocal) }
    }
    let first = LaneRegisters(firstRegister: 0, offset: 0)
    let second = LaneRegisters(firstRegister: 8, offset: 64)
    let done = assembler.makeLabel()
    let pair = assembler.makeLabel()
    let single = assembler.makeLabel()
    assembler.cmp(.rcx, 2)
    assembler.jump(if: .below, to: single)
    assembler.bind(pair)
    emitVectors([first, second])
    assembler.add(.rsi, 128)
    assembler.add(.rdx, 128)
    assembler.sub(.rcx, 2)
    assembler.cmp(.rcx, 2)
    assembler.jump(if: .aboveOrEqual, to: pair)
    assembler.bind(single)
    assembler.test(.rcx, .rcx)
    assembler.jump(if: .zero, to: done)
    emitVectors([first])
    assembler.bind(done)
    assembler.returnFromKernel(restoring: [])
    return assembler.finishedCode()
  }
}

/// The registers of one vector of 16 lanes in the logistic loop (eight from `firstRegister`) and
/// the byte offset of its lanes from the loop's input and output pointers.
private struct LaneRegisters {
  let x, t, shifted, n, polynomial, reciprocal, estimate: VectorRegister
  let offset: Int32

  init(firstRegister: Int, offset: Int32) {
    (x, t, shifted, n) = (
      VectorRegister(firstRegister), VectorRegister(firstRegister + 1), VectorRegister(firstRegister + 2),
      VectorRegister(firstRegister + 3)
    )
    (polynomial, reciprocal, estimate) = (
      VectorRegister(firstRegister + 4), VectorRegister(firstRegister + 5), VectorRegister(firstRegister + 6)
    )
    self.offset = offset
  }
}

/// The arguments of a generated logistic kernel, passed by pointer (the kernel reads each field at
/// its `MemoryLayout` offset).
@usableFromInline package struct LogisticKernelArguments {
  /// The first of `vectorCount` × 16 inputs.
  @usableFromInline package var input: UnsafePointer<Float>
  /// The first of `vectorCount` × 16 outputs (may be `input`: each vector is read before it is written).
  @usableFromInline package var output: UnsafeMutablePointer<Float>
  /// Vectors of 16 floats.
  @usableFromInline package var vectorCount: Int
  /// `LogisticKernelGenerator.constantBits`.
  @usableFromInline package var constants: UnsafePointer<UInt32>
  /// Lowest output of the clamped SiLU.
  @usableFromInline package var lower: Float
  /// Highest output of the clamped SiLU.
  @usableFromInline package var upper: Float
}

/// The generated logistic and SiLU kernels, made together on first use and kept for the life of
/// the process (three kernels of about 300 bytes). AVX-512 only: where the CPU lacks it, where the
/// OS refuses executable memory, or where generated kernels are turned off (`SWIFTTFLITE_JIT=0`,
/// ``RunnerOptions/usesGeneratedKernels``), the Swift SIMD code runs (within 3 ulp of these).
@usableFromInline package final class GeneratedLogisticKernels: AVX512KernelFamily, @unchecked Sendable {
  // @unchecked Sendable: everything is immutable after `init`.

  /// The instruction set of the kernels.
  @usableFromInline package let isa = GeneratedKernelISA.avx512
  /// The kernel of each form, by `Form.rawValue`.
  private let kernels: [ExecutableCode]
  /// `LogisticKernelGenerator.constantBits`, where the kernels read them.
  private let constants: UnsafeMutablePointer<UInt32>

  /// Generates every form; nil when the OS refuses executable memory.
  private init?() {
    guard let kernels = ExecutableCode.mapped(LogisticKernelGenerator.Form.allCases.map { LogisticKernelGenerator.code($0) })
    else { return nil }
    self.kernels = kernels
    let bits = LogisticKernelGenerator.constantBits
    constants = .allocate(capacity: bits.count)
    constants.initialize(from: bits, count: bits.count)
  }

  deinit { constants.deallocate() }

  @usableFromInline package static let runnable: GeneratedLogisticKernels? =
    GeneratedKernelISA.supported == .avx512 ? GeneratedLogisticKernels() : nil
  @usableFromInline package static let preferred: GeneratedLogisticKernels? = preferredSet()

  /// Computes `form` of `vectorCount` × 16 floats from `input` into `output` (which may be `input`);
  /// `lower`/`upper` bound the clamped SiLU.
  @usableFromInline package func run(
    _ form: LogisticKernelGenerator.Form, input: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>,
    vectorCount: Int, lower: Float = -.infinity, upper: Float = .infinity
  ) {
    precondition(vectorCount >= 0, "negative vector count")
    var arguments = LogisticKernelArguments(
      input: input, output: output, vectorCount: vectorCount, constants: UnsafePointer(constants), lower: lower,
      upper: upper)
    callKernel(at: kernels[form.rawValue].entry, &arguments)
  }
}
