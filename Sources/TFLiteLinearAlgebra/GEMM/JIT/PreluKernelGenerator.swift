// The generated float PRELU loop (AVX2 and AVX-512): out = x ≥ 0 ? x : α·x over rows of 16 floats,
// with α read from a repeating pattern of rows (a per-channel α of C channels laid out over
// lcm(C, 16) floats, or one α repeated), so no broadcast walk runs per element.
//
// Each row is computed as max(0, x) + α·min(0, x) with one fused multiply-add: for x < 0 that is
// α·x rounded once, for x ≥ 0 it is x, the same values as the Swift `x ≥ 0 ? x : α·x` (only the sign
// of a zero result may differ, −0 becoming +0). `0` is the first operand of the max and the min, so
// a NaN input stays NaN. An infinite α would turn α·0 into NaN for x ≥ 0: the runtime gives such
// alphas to the Swift code instead.

/// The arguments of a generated PRELU kernel, passed by pointer (the kernel reads each field at its
/// `MemoryLayout` offset).
@usableFromInline package struct PreluKernelArguments {
  /// The first of `rowCount` × 16 inputs.
  @usableFromInline package var input: UnsafePointer<Float>
  /// The first of `rowCount` × 16 outputs (may be `input`: each row is read before it is written).
  @usableFromInline package var output: UnsafeMutablePointer<Float>
  /// Rows of 16 floats.
  @usableFromInline package var rowCount: Int
  /// The first of `patternRows` × 16 alphas; the row after the last is the first again.
  @usableFromInline package var pattern: UnsafePointer<Float>
  /// Rows of the pattern (≥ 1).
  @usableFromInline package var patternRows: Int
  /// The alphas of the first input row: a row of the pattern.
  @usableFromInline package var position: UnsafePointer<Float>
  /// Rows from `position` to the end of the pattern (1...`patternRows`).
  @usableFromInline package var rowsBeforeWrap: Int

  /// The arguments from their parts.
  @inlinable package init(
    input: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>, rowCount: Int, pattern: UnsafePointer<Float>,
    patternRows: Int, position: UnsafePointer<Float>, rowsBeforeWrap: Int
  ) {
    self.input = input
    self.output = output
    self.rowCount = rowCount
    self.pattern = pattern
    self.patternRows = patternRows
    self.position = position
    self.rowsBeforeWrap = rowsBeforeWrap
  }
}

/// Writes `void kernel(const PreluKernelArguments *)` in the System V ABI. Registers: rdi the
/// arguments, rsi the input, rdx the output, rcx the row counter, r8 the pattern, r9 the current
/// alphas, r10 the pattern's rows, r11 the rows before the pattern wraps; vector 0 zero, 1–3 the
/// lanes being computed. No callee-saved register is used.
@usableFromInline package enum PreluKernelGenerator {
  /// Floats per row (one zmm, two ymm).
  @usableFromInline package static let rowFloats = 16

  /// The machine code for `isa`.
  @usableFromInline package static func code(isa: GeneratedKernelISA) -> [UInt8] {
    let width: VectorWidth = isa == .avx512 ? .zmm : .ymm
    var assembler = X86Assembler()
    assembler.loadArguments(
      of: PreluKernelArguments.self,
      [
        .rsi: \.input, .rdx: \.output, .rcx: \.rowCount, .r8: \.pattern, .r10: \.patternRows, .r9: \.position,
        .r11: \.rowsBeforeWrap,
      ])
    let zero = VectorRegister(0), x = VectorRegister(1), positive = VectorRegister(2), negative = VectorRegister(3)
    assembler.zero(width, zero)
    let samePattern = assembler.makeLabel()
    let rows = CountedLoop(&assembler, counting: .rcx)
    for part in 0..<width.vectorsPerRow {
      let offset = Int32(part) * width.bytes
      assembler.load(width, x, MemoryOperand(.rsi, offset))
      assembler.packed(width, .vmaxps, positive, zero, x)
      assembler.packed(width, .vminps, negative, zero, x)
      assembler.multiplyAdd(width, positive, negative, MemoryOperand(.r9, offset))
      assembler.store(width, MemoryOperand(.rdx, offset), positive)
    }
    let rowBytes = Int32(rowFloats * MemoryLayout<Float>.stride)
    assembler.add(.rsi, rowBytes)
    assembler.add(.rdx, rowBytes)
    assembler.add(.r9, rowBytes)
    assembler.dec(.r11)
    assembler.jump(if: .notZero, to: samePattern)
    assembler.mov(.r9, .r8)
    assembler.mov(.r11, .r10)
    assembler.bind(samePattern)
    rows.end(&assembler)
    assembler.returnFromKernel(restoring: [])
    return assembler.finishedCode()
  }
}

extension X86Assembler {
  /// `op destination, left, right` for a lane-wise single-precision operation in `width`.
  mutating func packed(
    _ width: VectorWidth, _ operation: PackedFloatOperation, _ destination: VectorRegister, _ left: VectorRegister,
    _ right: VectorRegister
  ) {
    width == .ymm ? packedYMM(operation, destination, left, right) : packedZMM(operation, destination, left, right)
  }

  /// `vfmadd231ps accumulator, left, [memory]` in `width`: accumulator += left · memory, rounded once.
  mutating func multiplyAdd(_ width: VectorWidth, _ accumulator: VectorRegister, _ left: VectorRegister, _ memory: MemoryOperand) {
    width == .ymm ? vfmadd231psYMM(accumulator, left, memory) : vfmadd231psZMM(accumulator, left, memory)
  }
}

/// The generated PRELU kernel of one instruction set, made on first use and kept for the life of
/// the process (one kernel of about 100 bytes per level). Where the CPU lacks AVX2+FMA, where the
/// OS refuses executable memory, or where generated kernels are turned off (`SWIFTTFLITE_JIT=0`,
/// ``RunnerOptions/usesGeneratedKernels``), the Swift code runs.
@usableFromInline package final class GeneratedPreluKernel: GeneratedKernelFamily, @unchecked Sendable {
  // @unchecked Sendable: everything is immutable after `init`.

  /// The instruction set of the kernel.
  @usableFromInline package let isa: GeneratedKernelISA
  private let kernel: ExecutableCode

  /// Generates the kernel of `isa`; nil when the OS refuses executable memory.
  @usableFromInline package init?(isa: GeneratedKernelISA) {
    guard let kernel = ExecutableCode(PreluKernelGenerator.code(isa: isa)) else { return nil }
    self.isa = isa
    self.kernel = kernel
  }

  @usableFromInline package static let avx2Set = GeneratedPreluKernel(isa: .avx2)
  @usableFromInline package static let avx512Set = GeneratedPreluKernel(isa: .avx512)
  @usableFromInline package static let preferred: GeneratedPreluKernel? = preferredSet()

  /// Runs the kernel on `arguments`.
  @usableFromInline package func run(_ arguments: PreluKernelArguments) {
    precondition(
      arguments.rowCount >= 0 && arguments.patternRows >= 1
        && (1...arguments.patternRows).contains(arguments.rowsBeforeWrap), "PRELU rows out of range")
    var arguments = arguments
    callKernel(at: kernel.entry, &arguments)
  }
}
