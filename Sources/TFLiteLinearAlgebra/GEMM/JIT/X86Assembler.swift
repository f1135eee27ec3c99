/// A minimal x86-64 machine-code encoder for the generated GEMM micro-kernels.
///
/// It encodes exactly the instructions the kernels and the CPUID probe need, in the forms a
/// standard assembler picks for the same source (NASM: the shortest displacement, two-byte VEX
/// when the operands allow it, EVEX disp8×N compression, the `83` immediate form for values that
/// fit a signed byte). `Tests/TFLiteRuntimeTests/X86EncodingTable.swift`, made by
/// `Scripts/make_x86_encoding_table.py` with NASM, pins every form byte for byte.
///
/// Operand order follows Intel syntax: destination first. Jumps always use 32-bit displacements
/// and are resolved when their label is bound, in either order.

/// A 64-bit general-purpose register (its number is the hardware encoding).
@usableFromInline package enum GPRegister: UInt8 {
  case rax, rcx, rdx, rbx, rsp, rbp, rsi, rdi, r8, r9, r10, r11, r12, r13, r14, r15

  /// The low three bits that go into ModRM or SIB.
  @usableFromInline package var low: UInt8 { rawValue & 7 }
  /// The fourth bit, carried by REX/VEX/EVEX.
  @usableFromInline package var high: UInt8 { rawValue >> 3 }
}

/// A vector register: `ymm0...ymm15` (VEX) or `zmm0...zmm31` (EVEX); the width is the instruction's.
@usableFromInline package struct VectorRegister: Equatable {
  /// The register number, 0 to 31.
  @usableFromInline package let number: UInt8

  /// Register `number` (0 to 31).
  @usableFromInline package init(_ number: Int) {
    precondition((0..<32).contains(number), "vector register \(number) does not exist")
    self.number = UInt8(number)
  }
}

/// A memory operand `[base + index * scale + displacement]`.
@usableFromInline package struct MemoryOperand {
  /// The base register.
  @usableFromInline package var base: GPRegister
  /// The index register and its scale (1, 2, 4 or 8); rsp cannot be an index.
  @usableFromInline package var index: (register: GPRegister, scale: UInt8)?
  /// The signed byte displacement.
  @usableFromInline package var displacement: Int32

  /// `[base + displacement]`.
  @usableFromInline package init(_ base: GPRegister, _ displacement: Int32 = 0) {
    self.base = base
    self.displacement = displacement
  }

  /// `[base + index * scale + displacement]`.
  @usableFromInline package init(_ base: GPRegister, index: GPRegister, scale: UInt8, _ displacement: Int32 = 0) {
    precondition(index != .rsp && [1, 2, 4, 8].contains(scale), "invalid index \(index) * \(scale)")
    self.base = base
    self.index = (index, scale)
    self.displacement = displacement
  }
}

/// Conditions of `jcc`, by their encoding.
@usableFromInline package enum JumpCondition: UInt8 {
  /// Unsigned below (CF = 1).
  case below = 0x2
  /// Unsigned above or equal (CF = 0).
  case aboveOrEqual = 0x3
  /// Zero / equal.
  case zero = 0x4
  /// Not zero / not equal.
  case notZero = 0x5
}

/// A position in the code that jumps refer to.
@usableFromInline package struct AssemblerLabel {
  fileprivate let id: Int
}

/// Appends encoded instructions to a byte buffer.
@usableFromInline package struct X86Assembler {
  /// The code so far.
  private(set) var bytes: [UInt8] = []
  /// Offset of each bound label, by id (nil while unbound).
  private var labelOffsets: [Int?] = []
  /// Jumps waiting for their label: the offset of the 32-bit displacement and the label's id.
  private var pendingJumps: [(displacementOffset: Int, label: Int)] = []

  /// An empty assembler.
  @usableFromInline package init() {}

  /// The finished code; every label a jump refers to must have been bound.
  @usableFromInline package func finishedCode() -> [UInt8] {
    precondition(pendingJumps.isEmpty, "a jump refers to a label that was never bound")
    return bytes
  }

  // MARK: - Labels and jumps

  /// A new, unbound label.
  @usableFromInline package mutating func makeLabel() -> AssemblerLabel {
    labelOffsets.append(nil)
    return AssemblerLabel(id: labelOffsets.count - 1)
  }

  /// Binds `label` to the current position and patches the jumps already waiting for it.
  @usableFromInline package mutating func bind(_ label: AssemblerLabel) {
    precondition(labelOffsets[label.id] == nil, "label bound twice")
    labelOffsets[label.id] = bytes.count
    for jump in pendingJumps where jump.label == label.id {
      patchDisplacement(at: jump.displacementOffset, target: bytes.count)
    }
    pendingJumps.removeAll { $0.label == label.id }
  }

  /// `jcc rel32`.
  @usableFromInline package mutating func jump(if condition: JumpCondition, to label: AssemblerLabel) {
    emit(0x0F, 0x80 | condition.rawValue)
    emitDisplacement(to: label)
  }

  /// `jmp rel32`.
  @usableFromInline package mutating func jump(to label: AssemblerLabel) {
    emit(0xE9)
    emitDisplacement(to: label)
  }

  private mutating func emitDisplacement(to label: AssemblerLabel) {
    let offset = bytes.count
    emit(0, 0, 0, 0)
    if let target = labelOffsets[label.id] {
      patchDisplacement(at: offset, target: target)
    } else {
      pendingJumps.append((offset, label.id))
    }
  }

  private mutating func patchDisplacement(at offset: Int, target: Int) {
    let relative = Int32(target - (offset + 4))
    for i in 0..<4 { bytes[offset + i] = UInt8(truncatingIfNeeded: relative >> (8 * Int32(i))) }
  }

  // MARK: - General-purpose instructions

  /// `push r64`.
  @usableFromInline package mutating func push(_ register: GPRegister) {
    if register.high != 0 { emit(0x41) }
    emit(0x50 | register.low)
  }

  /// `pop r64`.
  @usableFromInline package mutating func pop(_ register: GPRegister) {
    if register.high != 0 { emit(0x41) }
    emit(0x58 | register.low)
  }

  /// `ret`.
  @usableFromInline package mutating func ret() { emit(0xC3) }

  /// `cpuid`.
  @usableFromInline package mutating func cpuid() { emit(0x0F, 0xA2) }

  /// `xgetbv`.
  @usableFromInline package mutating func xgetbv() { emit(0x0F, 0x01, 0xD0) }

  /// `vzeroupper`.
  @usableFromInline package mutating func vzeroupper() { emit(0xC5, 0xF8, 0x77) }

  /// `mov r64, [m64]`.
  @usableFromInline package mutating func mov(_ destination: GPRegister, _ source: MemoryOperand) {
    legacy(opcode: 0x8B, wide: true, reg: destination.rawValue, memory: source)
  }

  /// `mov r64, r64`.
  @usableFromInline package mutating func mov(_ destination: GPRegister, _ source: GPRegister) {
    legacy(opcode: 0x89, wide: true, reg: source.rawValue, register: destination)
  }

  /// `mov r32, [m32]` (the upper half of the register is cleared).
  @usableFromInline package mutating func mov32(_ destination: GPRegister, _ source: MemoryOperand) {
    legacy(opcode: 0x8B, wide: false, reg: destination.rawValue, memory: source)
  }

  /// `mov [m32], r32`.
  @usableFromInline package mutating func mov32(_ destination: MemoryOperand, _ source: GPRegister) {
    legacy(opcode: 0x89, wide: false, reg: source.rawValue, memory: destination)
  }

  /// `lea r64, [m]`.
  @usableFromInline package mutating func lea(_ destination: GPRegister, _ source: MemoryOperand) {
    legacy(opcode: 0x8D, wide: true, reg: destination.rawValue, memory: source)
  }

  /// `add r64, r64`.
  @usableFromInline package mutating func add(_ destination: GPRegister, _ source: GPRegister) {
    legacy(opcode: 0x01, wide: true, reg: source.rawValue, register: destination)
  }

  /// `add r64, [m64]`.
  @usableFromInline package mutating func add(_ destination: GPRegister, _ source: MemoryOperand) {
    legacy(opcode: 0x03, wide: true, reg: destination.rawValue, memory: source)
  }

  /// `add r64, imm32`.
  @usableFromInline package mutating func add(_ destination: GPRegister, _ immediate: Int32) {
    arithmetic(extension: 0, accumulatorOpcode: 0x05, destination, immediate)
  }

  /// `sub r64, imm32`.
  @usableFromInline package mutating func sub(_ destination: GPRegister, _ immediate: Int32) {
    arithmetic(extension: 5, accumulatorOpcode: 0x2D, destination, immediate)
  }

  /// `cmp r64, imm32`.
  @usableFromInline package mutating func cmp(_ destination: GPRegister, _ immediate: Int32) {
    arithmetic(extension: 7, accumulatorOpcode: 0x3D, destination, immediate)
  }

  /// `dec r64`.
  @usableFromInline package mutating func dec(_ register: GPRegister) {
    legacy(opcode: 0xFF, wide: true, reg: 1, register: register)
  }

  /// `test r64, r64`.
  @usableFromInline package mutating func test(_ left: GPRegister, _ right: GPRegister) {
    legacy(opcode: 0x85, wide: true, reg: right.rawValue, register: left)
  }

  /// The group-1 immediate forms: `83 /n ib` for a signed byte, `rax`'s short form or `81 /n id`.
  private mutating func arithmetic(extension: UInt8, accumulatorOpcode: UInt8, _ register: GPRegister, _ immediate: Int32) {
    if let byte = Int8(exactly: immediate) {
      legacy(opcode: 0x83, wide: true, reg: `extension`, register: register)
      emit(UInt8(bitPattern: byte))
    } else {
      if register == .rax {
        emit(0x48, accumulatorOpcode)
      } else {
        legacy(opcode: 0x81, wide: true, reg: `extension`, register: register)
      }
      emit32(immediate)
    }
  }

  // MARK: - AVX (VEX, 256-bit)

  /// `vmovups ymm, [m256]`.
  @usableFromInline package mutating func vmovupsYMM(_ destination: VectorRegister, _ source: MemoryOperand) {
    vex(map: .x0F, prefix: .none, opcode: 0x10, reg: destination.number, vvvv: 0, memory: source)
  }

  /// `vmovups [m256], ymm`.
  @usableFromInline package mutating func vmovupsYMM(_ destination: MemoryOperand, _ source: VectorRegister) {
    vex(map: .x0F, prefix: .none, opcode: 0x11, reg: source.number, vvvv: 0, memory: destination)
  }

  /// `vbroadcastss ymm, [m32]`.
  @usableFromInline package mutating func vbroadcastssYMM(_ destination: VectorRegister, _ source: MemoryOperand) {
    vex(map: .x0F38, prefix: .x66, opcode: 0x18, reg: destination.number, vvvv: 0, memory: source)
  }

  /// `vfmadd231ps ymm1, ymm2, ymm3`: ymm1 += ymm2 · ymm3.
  @usableFromInline package mutating func vfmadd231psYMM(_ accumulator: VectorRegister, _ left: VectorRegister, _ right: VectorRegister) {
    vex(map: .x0F38, prefix: .x66, opcode: 0xB8, reg: accumulator.number, vvvv: left.number, rm: right.number)
  }

  /// `vxorps ymm1, ymm2, ymm3`.
  @usableFromInline package mutating func vxorpsYMM(_ destination: VectorRegister, _ left: VectorRegister, _ right: VectorRegister) {
    vex(map: .x0F, prefix: .none, opcode: 0x57, reg: destination.number, vvvv: left.number, rm: right.number)
  }

  /// `vaddps ymm1, ymm2, ymm3`.
  @usableFromInline package mutating func vaddpsYMM(_ destination: VectorRegister, _ left: VectorRegister, _ right: VectorRegister) {
    vex(map: .x0F, prefix: .none, opcode: 0x58, reg: destination.number, vvvv: left.number, rm: right.number)
  }

  /// `vmaxps ymm1, ymm2, ymm3`: `ymm2 > ymm3 ? ymm2 : ymm3` lane by lane (ymm3 when either is NaN).
  @usableFromInline package mutating func vmaxpsYMM(_ destination: VectorRegister, _ left: VectorRegister, _ right: VectorRegister) {
    vex(map: .x0F, prefix: .none, opcode: 0x5F, reg: destination.number, vvvv: left.number, rm: right.number)
  }

  /// `vminps ymm1, ymm2, ymm3`: `ymm2 < ymm3 ? ymm2 : ymm3` lane by lane (ymm3 when either is NaN).
  @usableFromInline package mutating func vminpsYMM(_ destination: VectorRegister, _ left: VectorRegister, _ right: VectorRegister) {
    vex(map: .x0F, prefix: .none, opcode: 0x5D, reg: destination.number, vvvv: left.number, rm: right.number)
  }

  /// `vpbroadcastd ymm, [m32]` (AVX2).
  @usableFromInline package mutating func vpbroadcastdYMM(_ destination: VectorRegister, _ source: MemoryOperand) {
    vex(map: .x0F38, prefix: .x66, opcode: 0x58, reg: destination.number, vvvv: 0, memory: source)
  }

  /// `{vex} vpdpbusd ymm1, ymm2, ymm3` (AVX-VNNI): each 32-bit lane of ymm1 += the sum of the four
  /// products of ymm2's unsigned bytes and ymm3's signed bytes in that lane (wrapping).
  @usableFromInline package mutating func vpdpbusdYMM(_ accumulator: VectorRegister, _ unsigned: VectorRegister, _ signed: VectorRegister) {
    vex(map: .x0F38, prefix: .x66, opcode: 0x50, reg: accumulator.number, vvvv: unsigned.number, rm: signed.number)
  }

  /// `vpmovzxbd ymm, [m64]`: eight unsigned bytes zero-extended to 32-bit lanes (AVX2).
  @usableFromInline package mutating func vpmovzxbdYMM(_ destination: VectorRegister, _ source: MemoryOperand) {
    vex(map: .x0F38, prefix: .x66, opcode: 0x31, reg: destination.number, vvvv: 0, memory: source)
  }

  /// `vpmovsxwd ymm, [m128]`: eight signed 16-bit words sign-extended to 32-bit lanes (AVX2).
  @usableFromInline package mutating func vpmovsxwdYMM(_ destination: VectorRegister, _ source: MemoryOperand) {
    vex(map: .x0F38, prefix: .x66, opcode: 0x23, reg: destination.number, vvvv: 0, memory: source)
  }

  /// `vpmulld ymm1, ymm2, ymm3`: the low 32 bits of each lane's product (AVX2).
  @usableFromInline package mutating func vpmulldYMM(_ destination: VectorRegister, _ left: VectorRegister, _ right: VectorRegister) {
    vex(map: .x0F38, prefix: .x66, opcode: 0x40, reg: destination.number, vvvv: left.number, rm: right.number)
  }

  /// `vpaddd ymm1, ymm2, ymm3`: 32-bit lane sums, wrapping (AVX2).
  @usableFromInline package mutating func vpadddYMM(_ destination: VectorRegister, _ left: VectorRegister, _ right: VectorRegister) {
    vex(map: .x0F, prefix: .x66, opcode: 0xFE, reg: destination.number, vvvv: left.number, rm: right.number)
  }

  // MARK: - AVX-512F (EVEX, 512-bit)

  /// `vmovups zmm, [m512]`.
  @usableFromInline package mutating func vmovupsZMM(_ destination: VectorRegister, _ source: MemoryOperand) {
    evex(map: .x0F, prefix: .none, opcode: 0x10, reg: destination.number, vvvv: 0, memory: source, elementBytes: 64)
  }

  /// `vmovups [m512], zmm`.
  @usableFromInline package mutating func vmovupsZMM(_ destination: MemoryOperand, _ source: VectorRegister) {
    evex(map: .x0F, prefix: .none, opcode: 0x11, reg: source.number, vvvv: 0, memory: destination, elementBytes: 64)
  }

  /// `vbroadcastss zmm, [m32]`.
  @usableFromInline package mutating func vbroadcastssZMM(_ destination: VectorRegister, _ source: MemoryOperand) {
    evex(map: .x0F38, prefix: .x66, opcode: 0x18, reg: destination.number, vvvv: 0, memory: source, elementBytes: 4)
  }

  /// `vfmadd231ps zmm1, zmm2, zmm3`.
  @usableFromInline package mutating func vfmadd231psZMM(_ accumulator: VectorRegister, _ left: VectorRegister, _ right: VectorRegister) {
    evex(map: .x0F38, prefix: .x66, opcode: 0xB8, reg: accumulator.number, vvvv: left.number, rm: right.number)
  }

  /// `vfmadd231ps zmm1, zmm2, dword [m32]{1to16}`: zmm1 += zmm2 · broadcast(m32).
  @usableFromInline package mutating func vfmadd231psZMM(_ accumulator: VectorRegister, _ left: VectorRegister, broadcast source: MemoryOperand) {
    evex(
      map: .x0F38, prefix: .x66, opcode: 0xB8, reg: accumulator.number, vvvv: left.number, memory: source,
      elementBytes: 4, broadcast: true)
  }

  /// `vpxord zmm1, zmm2, zmm3` (AVX-512F; `vxorps zmm` would need AVX-512DQ).
  @usableFromInline package mutating func vpxordZMM(_ destination: VectorRegister, _ left: VectorRegister, _ right: VectorRegister) {
    evex(map: .x0F, prefix: .x66, opcode: 0xEF, reg: destination.number, vvvv: left.number, rm: right.number)
  }

  /// `vaddps zmm1, zmm2, zmm3`.
  @usableFromInline package mutating func vaddpsZMM(_ destination: VectorRegister, _ left: VectorRegister, _ right: VectorRegister) {
    evex(map: .x0F, prefix: .none, opcode: 0x58, reg: destination.number, vvvv: left.number, rm: right.number)
  }

  /// `vmaxps zmm1, zmm2, zmm3` (zmm3 when either is NaN).
  @usableFromInline package mutating func vmaxpsZMM(_ destination: VectorRegister, _ left: VectorRegister, _ right: VectorRegister) {
    evex(map: .x0F, prefix: .none, opcode: 0x5F, reg: destination.number, vvvv: left.number, rm: right.number)
  }

  /// `vminps zmm1, zmm2, zmm3` (zmm3 when either is NaN).
  @usableFromInline package mutating func vminpsZMM(_ destination: VectorRegister, _ left: VectorRegister, _ right: VectorRegister) {
    evex(map: .x0F, prefix: .none, opcode: 0x5D, reg: destination.number, vvvv: left.number, rm: right.number)
  }

  /// `vpbroadcastd zmm, [m32]`.
  @usableFromInline package mutating func vpbroadcastdZMM(_ destination: VectorRegister, _ source: MemoryOperand) {
    evex(map: .x0F38, prefix: .x66, opcode: 0x58, reg: destination.number, vvvv: 0, memory: source, elementBytes: 4)
  }

  /// `vpdpbusd zmm1, zmm2, zmm3` (AVX512-VNNI): each 32-bit lane of zmm1 += the sum of the four
  /// products of zmm2's unsigned bytes and zmm3's signed bytes in that lane (wrapping).
  @usableFromInline package mutating func vpdpbusdZMM(_ accumulator: VectorRegister, _ unsigned: VectorRegister, _ signed: VectorRegister) {
    evex(map: .x0F38, prefix: .x66, opcode: 0x50, reg: accumulator.number, vvvv: unsigned.number, rm: signed.number)
  }

  /// `vpmovzxbd zmm, [m128]`: sixteen unsigned bytes zero-extended to 32-bit lanes.
  @usableFromInline package mutating func vpmovzxbdZMM(_ destination: VectorRegister, _ source: MemoryOperand) {
    evex(map: .x0F38, prefix: .x66, opcode: 0x31, reg: destination.number, vvvv: 0, memory: source, elementBytes: 16)
  }

  /// `vpmovsxwd zmm, [m256]`: sixteen signed 16-bit words sign-extended to 32-bit lanes.
  @usableFromInline package mutating func vpmovsxwdZMM(_ destination: VectorRegister, _ source: MemoryOperand) {
    evex(map: .x0F38, prefix: .x66, opcode: 0x23, reg: destination.number, vvvv: 0, memory: source, elementBytes: 32)
  }

  /// `vpmulld zmm1, zmm2, zmm3`: the low 32 bits of each lane's product.
  @usableFromInline package mutating func vpmulldZMM(_ destination: VectorRegister, _ left: VectorRegister, _ right: VectorRegister) {
    evex(map: .x0F38, prefix: .x66, opcode: 0x40, reg: destination.number, vvvv: left.number, rm: right.number)
  }

  /// `vpaddd zmm1, zmm2, zmm3`: 32-bit lane sums, wrapping.
  @usableFromInline package mutating func vpadddZMM(_ destination: VectorRegister, _ left: VectorRegister, _ right: VectorRegister) {
    evex(map: .x0F, prefix: .x66, opcode: 0xFE, reg: destination.number, vvvv: left.number, rm: right.number)
  }

  /// `vmulps zmm1, zmm2, zmm3`.
  @usableFromInline package mutating func vmulpsZMM(_ destination: VectorRegister, _ left: VectorRegister, _ right: VectorRegister) {
    evex(map: .x0F, prefix: .none, opcode: 0x59, reg: destination.number, vvvv: left.number, rm: right.number)
  }

  /// `vsubps zmm1, zmm2, zmm3`: zmm2 − zmm3.
  @usableFromInline package mutating func vsubpsZMM(_ destination: VectorRegister, _ left: VectorRegister, _ right: VectorRegister) {
    evex(map: .x0F, prefix: .none, opcode: 0x5C, reg: destination.number, vvvv: left.number, rm: right.number)
  }

  /// `vdivps zmm1, zmm2, zmm3`: zmm2 / zmm3, correctly rounded.
  @usableFromInline package mutating func vdivpsZMM(_ destination: VectorRegister, _ left: VectorRegister, _ right: VectorRegister) {
    evex(map: .x0F, prefix: .none, opcode: 0x5E, reg: destination.number, vvvv: left.number, rm: right.number)
  }

  /// `vpandd zmm1, zmm2, zmm3`: bitwise and.
  @usableFromInline package mutating func vpanddZMM(_ destination: VectorRegister, _ left: VectorRegister, _ right: VectorRegister) {
    evex(map: .x0F, prefix: .x66, opcode: 0xDB, reg: destination.number, vvvv: left.number, rm: right.number)
  }

  /// `vpord zmm1, zmm2, zmm3`: bitwise or.
  @usableFromInline package mutating func vpordZMM(_ destination: VectorRegister, _ left: VectorRegister, _ right: VectorRegister) {
    evex(map: .x0F, prefix: .x66, opcode: 0xEB, reg: destination.number, vvvv: left.number, rm: right.number)
  }

  /// `vpsubd zmm1, zmm2, zmm3`: 32-bit lane differences zmm2 − zmm3, wrapping.
  @usableFromInline package mutating func vpsubdZMM(_ destination: VectorRegister, _ left: VectorRegister, _ right: VectorRegister) {
    evex(map: .x0F, prefix: .x66, opcode: 0xFA, reg: destination.number, vvvv: left.number, rm: right.number)
  }

  /// `vpslld zmm1, zmm2, imm8`: each 32-bit lane shifted left by `count` bits.
  @usableFromInline package mutating func vpslldZMM(_ destination: VectorRegister, _ source: VectorRegister, _ count: UInt8) {
    evex(map: .x0F, prefix: .x66, opcode: 0x72, reg: 6, vvvv: destination.number, rm: source.number)
    emit(count)
  }

  /// `vpsrad zmm1, zmm2, imm8`: each 32-bit lane shifted right by `count` bits, copying the sign bit.
  @usableFromInline package mutating func vpsradZMM(_ destination: VectorRegister, _ source: VectorRegister, _ count: UInt8) {
    evex(map: .x0F, prefix: .x66, opcode: 0x72, reg: 4, vvvv: destination.number, rm: source.number)
    emit(count)
  }

  // MARK: - Encoding

  /// The opcode map of a VEX/EVEX instruction (its `mmmmm`/`mm` field).
  private enum OpcodeMap: UInt8 {
    case x0F = 1, x0F38 = 2
  }

  /// The implied legacy prefix of a VEX/EVEX instruction (its `pp` field).
  private enum ImpliedPrefix: UInt8 {
    case none = 0, x66 = 1
  }

  /// The r/m operand of an instruction: a register number or memory.
  private enum RMOperand {
    case register(UInt8)
    case memory(MemoryOperand)

    /// Bit 3 of the base (or the register), for REX.B / VEX.B / EVEX.B.
    var baseHigh: UInt8 {
      switch self {
      case .register(let number): (number >> 3) & 1
      case .memory(let memory): memory.base.high
      }
    }

    /// Bit 3 of the index, for REX.X / VEX.X; EVEX also uses it for bit 4 of a register operand.
    var indexHigh: UInt8 {
      switch self {
      case .register(let number): (number >> 4) & 1
      case .memory(let memory): memory.index?.register.high ?? 0
      }
    }
  }

  /// A legacy (REX-prefixed) instruction with a register r/m operand.
  private mutating func legacy(opcode: UInt8, wide: Bool, reg: UInt8, register: GPRegister) {
    legacy(opcode: opcode, wide: wide, reg: reg, rm: .register(register.rawValue))
  }

  /// A legacy (REX-prefixed) instruction with a memory operand.
  private mutating func legacy(opcode: UInt8, wide: Bool, reg: UInt8, memory: MemoryOperand) {
    legacy(opcode: opcode, wide: wide, reg: reg, rm: .memory(memory))
  }

  private mutating func legacy(opcode: UInt8, wide: Bool, reg: UInt8, rm: RMOperand) {
    let rex = (wide ? 8 : 0) | ((reg >> 3) & 1) << 2 | rm.indexHigh << 1 | rm.baseHigh
    if rex != 0 { emit(0x40 | rex) }
    emit(opcode)
    modRM(reg: reg, rm, compression: 1)
  }

  private mutating func vex(
    map: OpcodeMap, prefix: ImpliedPrefix, opcode: UInt8, reg: UInt8, vvvv: UInt8, rm: UInt8
  ) {
    vex(map: map, prefix: prefix, opcode: opcode, reg: reg, vvvv: vvvv, operand: .register(rm))
  }

  private mutating func vex(
    map: OpcodeMap, prefix: ImpliedPrefix, opcode: UInt8, reg: UInt8, vvvv: UInt8, memory: MemoryOperand
  ) {
    vex(map: map, prefix: prefix, opcode: opcode, reg: reg, vvvv: vvvv, operand: .memory(memory))
  }

  /// A 256-bit VEX instruction (W0), two-byte form when X, B and the map allow it.
  private mutating func vex(
    map: OpcodeMap, prefix: ImpliedPrefix, opcode: UInt8, reg: UInt8, vvvv: UInt8, operand: RMOperand
  ) {
    precondition(reg < 16 && vvvv < 16, "VEX reaches only ymm0...ymm15")
    if case .register(let number) = operand { precondition(number < 16, "VEX reaches only ymm0...ymm15") }
    let invertedR = (~reg >> 3) & 1
    let invertedX: UInt8 = {
      if case .memory(let memory) = operand { return ~(memory.index?.register.high ?? 0) & 1 }
      return 1
    }()
    let invertedB = ~operand.baseHigh & 1
    let lengthAndPrefix = ((~vvvv & 0xF) << 3) | 0b100 | prefix.rawValue
    if invertedX == 1 && invertedB == 1 && map == .x0F {
      emit(0xC5, invertedR << 7 | lengthAndPrefix)
    } else {
      emit(0xC4, invertedR << 7 | invertedX << 6 | invertedB << 5 | map.rawValue, lengthAndPrefix)
    }
    emit(opcode)
    modRM(reg: reg, operand, compression: 1)
  }

  private mutating func evex(
    map: OpcodeMap, prefix: ImpliedPrefix, opcode: UInt8, reg: UInt8, vvvv: UInt8, rm: UInt8
  ) {
    evex(
      map: map, prefix: prefix, opcode: opcode, reg: reg, vvvv: vvvv, operand: .register(rm), elementBytes: 64,
      broadcast: false)
  }

  private mutating func evex(
    map: OpcodeMap, prefix: ImpliedPrefix, opcode: UInt8, reg: UInt8, vvvv: UInt8, memory: MemoryOperand,
    elementBytes: Int32, broadcast: Bool = false
  ) {
    evex(
      map: map, prefix: prefix, opcode: opcode, reg: reg, vvvv: vvvv, operand: .memory(memory),
      elementBytes: elementBytes, broadcast: broadcast)
  }

  /// A 512-bit EVEX instruction (W0, no masking). `elementBytes` is the N of disp8×N compression:
  /// the whole vector for full loads, the element for a broadcast or scalar operand.
  private mutating func evex(
    map: OpcodeMap, prefix: ImpliedPrefix, opcode: UInt8, reg: UInt8, vvvv: UInt8, operand: RMOperand,
    elementBytes: Int32, broadcast: Bool
  ) {
    let invertedR = (~reg >> 3) & 1
    let invertedX = ~operand.indexHigh & 1
    let invertedB = ~operand.baseHigh & 1
    let invertedRPrime = (~reg >> 4) & 1
    emit(0x62, invertedR << 7 | invertedX << 6 | invertedB << 5 | invertedRPrime << 4 | map.rawValue)
    emit(((~vvvv & 0xF) << 3) | 0b100 | prefix.rawValue)
    let invertedVPrime = (~vvvv >> 4) & 1
    emit(0b10 << 5 | (broadcast ? 1 : 0) << 4 | invertedVPrime << 3)
    emit(opcode)
    modRM(reg: reg, operand, compression: elementBytes)
  }

  /// ModRM, SIB and displacement. `compression` is EVEX's N (1 for legacy and VEX): a
  /// displacement that is a multiple of N and fits a signed byte once divided is stored as disp8.
  private mutating func modRM(reg: UInt8, _ operand: RMOperand, compression: Int32) {
    let regField = (reg & 7) << 3
    switch operand {
    case .register(let number):
      emit(0b11 << 6 | regField | (number & 7))
    case .memory(let memory):
      let displacement = memory.displacement
      let compressed = displacement % compression == 0 ? Int8(exactly: displacement / compression) : nil
      let mode: UInt8
      if displacement == 0 && memory.base.low != GPRegister.rbp.low {
        mode = 0b00
      } else if compressed != nil {
        mode = 0b01
      } else {
        mode = 0b10
      }
      if let (index, scale) = memory.index {
        emit(mode << 6 | regField | 0b100)
        emit(UInt8(scale.trailingZeroBitCount) << 6 | index.low << 3 | memory.base.low)
      } else if memory.base.low == GPRegister.rsp.low {
        emit(mode << 6 | regField | 0b100, 0x24)
      } else {
        emit(mode << 6 | regField | memory.base.low)
      }
      if mode == 0b01, let byte = compressed {
        emit(UInt8(bitPattern: byte))
      } else if mode == 0b10 {
        emit32(displacement)
      }
    }
  }

  private mutating func emit(_ values: UInt8...) { bytes.append(contentsOf: values) }

  private mutating func emit32(_ value: Int32) {
    for i in 0..<4 { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * Int32(i)))) }
  }
}
