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

/// An AVX-512 mask register `k1...k7` (k0 in a masked instruction's field means "no mask").
@usableFromInline package struct MaskRegister: Equatable {
  /// The register number, 1 to 7.
  @usableFromInline package let number: UInt8

  /// Register `number` (1 to 7).
  @usableFromInline package init(_ number: Int) {
    precondition((1..<8).contains(number), "mask register k\(number) cannot mask")
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

/// The lane-wise integer operations of the generated requantization, with one register or memory
/// source besides the first: `packedYMM` (VEX, AVX2) and `packedZMM` (EVEX, AVX-512F).
@usableFromInline package enum PackedIntegerOperation: CaseIterable, Sendable {
  /// `vpaddd`: 32-bit sums, wrapping.
  case vpaddd
  /// `vpsubd`: 32-bit differences, wrapping.
  case vpsubd
  /// `vpaddq`: 64-bit sums, wrapping.
  case vpaddq
  /// `vpand` (ymm) / `vpandd` (zmm): bitwise and.
  case vpand
  /// `vpor` (ymm) / `vpord` (zmm): bitwise or.
  case vpor
  /// `vpmuldq`: the exact 64-bit product of the low signed 32 bits of each 64-bit lane.
  case vpmuldq
  /// `vpsllvd`: each 32-bit lane shifted left by the count in the same lane (0 past 31).
  case vpsllvd
  /// `vpsllvq`: each 64-bit lane shifted left by the count in the same lane (0 past 63).
  case vpsllvq
  /// `vpsravd`: each 32-bit lane shifted right arithmetically by the count in the same lane.
  case vpsravd
  /// `vpmaxsd`: signed 32-bit maxima.
  case vpmaxsd
  /// `vpminsd`: signed 32-bit minima.
  case vpminsd
  /// `vpackssdw`: the 32-bit lanes of both sources as saturated words, per 128-bit half.
  case vpackssdw
  /// `vpmaddwd`: each 32-bit lane the sum of the products of its two signed 16-bit word pairs
  /// (the 512-bit form needs AVX512BW).
  case vpmaddwd
  /// `vpmulld`: the low 32 bits of each 32-bit lane's signed product.
  case vpmulld
  /// `vpsubq`: 64-bit differences, wrapping (`packedZMM` only).
  case vpsubq
  /// `vpsravq`: each 64-bit lane shifted right arithmetically by the count in the same lane
  /// (AVX-512F; no VEX form, so `packedZMM` only).
  case vpsravq

  /// The opcode map (0F or 0F38).
  fileprivate var map: X86Assembler.OpcodeMap {
    switch self {
    case .vpaddd, .vpsubd, .vpaddq, .vpsubq, .vpand, .vpor, .vpackssdw, .vpmaddwd: .x0F
    case .vpmuldq, .vpsllvd, .vpsllvq, .vpsravd, .vpsravq, .vpmaxsd, .vpminsd, .vpmulld: .x0F38
    }
  }

  /// The opcode byte.
  fileprivate var opcode: UInt8 {
    switch self {
    case .vpaddd: 0xFE
    case .vpsubd: 0xFA
    case .vpaddq: 0xD4
    case .vpand: 0xDB
    case .vpor: 0xEB
    case .vpmuldq: 0x28
    case .vpsllvd, .vpsllvq: 0x47
    case .vpsravd, .vpsravq: 0x46
    case .vpsubq: 0xFB
    case .vpmaxsd: 0x3D
    case .vpminsd: 0x39
    case .vpackssdw: 0x6B
    case .vpmaddwd: 0xF5
    case .vpmulld: 0x40
    }
  }

  /// VEX.W: only the 64-bit variable shift needs W1 there.
  fileprivate var isWideInVEX: Bool { self == .vpsllvq }

  /// EVEX.W: W1 for the 64-bit element operations.
  fileprivate var isWideInEVEX: Bool {
    self == .vpaddq || self == .vpsubq || self == .vpmuldq || self == .vpsllvq || self == .vpsravq
  }
}

/// Shifts of every lane by an immediate count (`shiftYMM`, `shiftZMM`).
@usableFromInline package enum PackedShift: CaseIterable, Sendable {
  /// `vpsrlq`: 64-bit lanes, logical right shift.
  case vpsrlq
  /// `vpsrad`: 32-bit lanes, arithmetic right shift.
  case vpsrad
  /// `vpslld`: 32-bit lanes, left shift.
  case vpslld

  /// The opcode byte (group 12 or 13).
  fileprivate var opcode: UInt8 { self == .vpsrlq ? 0x73 : 0x72 }

  /// The ModRM.reg opcode extension.
  fileprivate var extensionField: UInt8 {
    switch self {
    case .vpsrlq: 2
    case .vpsrad: 4
    case .vpslld: 6
    }
  }

  /// EVEX.W: W1 for the 64-bit lanes.
  fileprivate var isWideInEVEX: Bool { self == .vpsrlq }
}

/// The lane-wise single-precision operations with two register sources: `packedYMM` (VEX, AVX)
/// and `packedZMM` (EVEX, AVX-512F).
@usableFromInline package enum PackedFloatOperation: CaseIterable, Sendable {
  /// `vaddps`: sums.
  case vaddps
  /// `vsubps`: the first source minus the second.
  case vsubps
  /// `vmulps`: products.
  case vmulps
  /// `vdivps`: the first source divided by the second, correctly rounded.
  case vdivps
  /// `vmaxps`: `left > right ? left : right` lane by lane (the second source when either is NaN).
  case vmaxps
  /// `vminps`: `left < right ? left : right` lane by lane (the second source when either is NaN).
  case vminps
  /// `vfmadd213ps`: destination = left · destination + right, rounded once (FMA3 / AVX-512F).
  case vfmadd213ps
  /// `vfnmadd213ps`: destination = right − left · destination, rounded once (FMA3 / AVX-512F).
  case vfnmadd213ps
  /// `vfnmadd231ps`: destination = destination − left · right, rounded once (FMA3 / AVX-512F).
  case vfnmadd231ps

  /// The opcode byte (in `map`, with `prefix`).
  fileprivate var opcode: UInt8 {
    switch self {
    case .vaddps: 0x58
    case .vsubps: 0x5C
    case .vmulps: 0x59
    case .vdivps: 0x5E
    case .vmaxps: 0x5F
    case .vminps: 0x5D
    case .vfmadd213ps: 0xA8
    case .vfnmadd213ps: 0xAC
    case .vfnmadd231ps: 0xBC
    }
  }

  /// The opcode map: 0F for the arithmetic, 0F38 for the fused multiply-adds.
  fileprivate var map: X86Assembler.OpcodeMap {
    switch self {
    case .vfmadd213ps, .vfnmadd213ps, .vfnmadd231ps: .x0F38
    default: .x0F
    }
  }

  /// The implied prefix: none for the arithmetic, 66 for the fused multiply-adds.
  fileprivate var prefix: X86Assembler.ImpliedPrefix {
    switch self {
    case .vfmadd213ps, .vfnmadd213ps, .vfnmadd231ps: .x66
    default: .none
    }
  }
}

/// The predicate immediate of `vcmpps`.
@usableFromInline package enum FloatComparison: UInt8, CaseIterable, Sendable {
  /// `left < right`, false when either is NaN (LT_OS).
  case lessThan = 1
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

  /// An empty assembler (room for a typical kernel reserved up front).
  @usableFromInline package init() { bytes.reserveCapacity(4096) }

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

  /// `mov [m64], r64`.
  @usableFromInline package mutating func mov(_ destination: MemoryOperand, _ source: GPRegister) {
    legacy(opcode: 0x89, wide: true, reg: source.rawValue, memory: destination)
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

  /// `vmaskmovps ymm, ymm_mask, [m256]`: the lanes whose mask sign bit is set, zero elsewhere;
  /// memory of the other lanes is not read.
  @usableFromInline package mutating func vmaskmovpsYMM(
    _ destination: VectorRegister, mask: VectorRegister, _ source: MemoryOperand
  ) {
    vex(map: .x0F38, prefix: .x66, opcode: 0x2C, reg: destination.number, vvvv: mask.number, memory: source)
  }

  /// `vmaskmovps [m256], ymm_mask, ymm`: stores the lanes whose mask sign bit is set; memory of
  /// the other lanes is not touched.
  @usableFromInline package mutating func vmaskmovpsYMM(
    _ destination: MemoryOperand, mask: VectorRegister, _ source: VectorRegister
  ) {
    vex(map: .x0F38, prefix: .x66, opcode: 0x2E, reg: source.number, vvvv: mask.number, memory: destination)
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

  /// `vcvttps2dq ymm1, ymm2`: each float lane truncated toward zero to Int32 (0x80000000 for NaN
  /// and out-of-range values) (AVX).
  @usableFromInline package mutating func vcvttps2dqYMM(_ destination: VectorRegister, _ source: VectorRegister) {
    vex(map: .x0F, prefix: .xF3, opcode: 0x5B, reg: destination.number, vvvv: 0, rm: source.number)
  }

  /// `vcvtdq2ps ymm1, ymm2`: each Int32 lane converted to float, rounded to nearest (AVX).
  @usableFromInline package mutating func vcvtdq2psYMM(_ destination: VectorRegister, _ source: VectorRegister) {
    vex(map: .x0F, prefix: .none, opcode: 0x5B, reg: destination.number, vvvv: 0, rm: source.number)
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

  /// `vpmovsxbd ymm, [m64]`: eight signed bytes sign-extended to 32-bit lanes (AVX2).
  @usableFromInline package mutating func vpmovsxbdYMM(_ destination: VectorRegister, _ source: MemoryOperand) {
    vex(map: .x0F38, prefix: .x66, opcode: 0x21, reg: destination.number, vvvv: 0, memory: source)
  }

  /// `op ymm1, ymm2, ymm3` for a lane-wise integer operation (AVX2).
  @usableFromInline package mutating func packedYMM(
    _ operation: PackedIntegerOperation, _ destination: VectorRegister, _ left: VectorRegister, _ right: VectorRegister
  ) {
    precondition(operation != .vpsravq, "vpsravq has no VEX form")
    vex(
      map: operation.map, prefix: .x66, opcode: operation.opcode, reg: destination.number, vvvv: left.number,
      operand: .register(right.number), wide: operation.isWideInVEX)
  }

  /// `op ymm1, ymm2, ymm3` for a lane-wise single-precision operation (AVX).
  @usableFromInline package mutating func packedYMM(
    _ operation: PackedFloatOperation, _ destination: VectorRegister, _ left: VectorRegister, _ right: VectorRegister
  ) {
    vex(
      map: operation.map, prefix: operation.prefix, opcode: operation.opcode, reg: destination.number, vvvv: left.number,
      rm: right.number)
  }

  /// `vcmpps ymm1, ymm2, ymm3, predicate` (AVX): each lane of ymm1 all ones where `predicate`
  /// holds between the lanes of ymm2 and ymm3, else zero.
  @usableFromInline package mutating func vcmppsYMM(
    _ destination: VectorRegister, _ left: VectorRegister, _ right: VectorRegister, _ predicate: FloatComparison
  ) {
    vex(map: .x0F, prefix: .none, opcode: 0xC2, reg: destination.number, vvvv: left.number, rm: right.number)
    emit(predicate.rawValue)
  }

  /// `vblendvps ymm1, ymm2, ymm3, ymm4` (AVX): each lane of ymm1 from ymm3 where the top bit of
  /// that lane of `selector` (ymm4) is set, else from ymm2.
  @usableFromInline package mutating func vblendvpsYMM(
    _ destination: VectorRegister, _ unselected: VectorRegister, _ selected: VectorRegister,
    selector: VectorRegister
  ) {
    precondition(selector.number < 16, "VEX reaches only ymm0...ymm15")
    vex(map: .x0F3A, prefix: .x66, opcode: 0x4A, reg: destination.number, vvvv: unselected.number, rm: selected.number)
    emit(selector.number << 4)
  }

  /// `op ymm1, ymm2, [m256]` for a lane-wise integer operation (AVX2).
  @usableFromInline package mutating func packedYMM(
    _ operation: PackedIntegerOperation, _ destination: VectorRegister, _ left: VectorRegister, _ right: MemoryOperand
  ) {
    precondition(operation != .vpsravq, "vpsravq has no VEX form")
    vex(
      map: operation.map, prefix: .x66, opcode: operation.opcode, reg: destination.number, vvvv: left.number,
      operand: .memory(right), wide: operation.isWideInVEX)
  }

  /// `op ymm1, ymm2, imm8` for a shift of every lane by a constant (AVX2).
  @usableFromInline package mutating func shiftYMM(
    _ shift: PackedShift, _ destination: VectorRegister, _ source: VectorRegister, by count: UInt8
  ) {
    vex(map: .x0F, prefix: .x66, opcode: shift.opcode, reg: shift.extensionField, vvvv: destination.number, operand: .register(source.number))
    emit(count)
  }

  /// `vpermq ymm1, ymm2, imm8`: qword `i` of ymm1 is qword `(imm8 >> 2i) & 3` of ymm2 (AVX2).
  @usableFromInline package mutating func vpermqYMM(_ destination: VectorRegister, _ source: VectorRegister, _ order: UInt8) {
    vex(map: .x0F3A, prefix: .x66, opcode: 0x00, reg: destination.number, vvvv: 0, operand: .register(source.number), wide: true)
    emit(order)
  }

  /// `vextracti128 xmm1, ymm2, imm8`: the low (0) or high (1) 128 bits of ymm2 (AVX2).
  @usableFromInline package mutating func vextracti128(_ destination: VectorRegister, _ source: VectorRegister, half: UInt8) {
    vex(map: .x0F3A, prefix: .x66, opcode: 0x39, reg: source.number, vvvv: 0, operand: .register(destination.number))
    emit(half)
  }

  /// `vpacksswb xmm1, xmm2, xmm3`: the 16 words of xmm2 then xmm3 as signed bytes, saturating (AVX).
  @usableFromInline package mutating func vpacksswbXMM(_ destination: VectorRegister, _ left: VectorRegister, _ right: VectorRegister) {
    vex(
      map: .x0F, prefix: .x66, opcode: 0x63, reg: destination.number, vvvv: left.number, operand: .register(right.number),
      length256: false)
  }

  /// `vpackuswb xmm1, xmm2, xmm3`: the 16 words of xmm2 then xmm3 as unsigned bytes, saturating (AVX).
  @usableFromInline package mutating func vpackuswbXMM(_ destination: VectorRegister, _ left: VectorRegister, _ right: VectorRegister) {
    vex(
      map: .x0F, prefix: .x66, opcode: 0x67, reg: destination.number, vvvv: left.number, operand: .register(right.number),
      length256: false)
  }

  /// `vmovups [m128], xmm`.
  @usableFromInline package mutating func vmovupsXMM(_ destination: MemoryOperand, _ source: VectorRegister) {
    vex(map: .x0F, prefix: .none, opcode: 0x11, reg: source.number, vvvv: 0, operand: .memory(destination), length256: false)
  }

  /// `vfmadd231ps ymm1, ymm2, [m256]`: ymm1 += ymm2 · memory, fused.
  @usableFromInline package mutating func vfmadd231psYMM(_ accumulator: VectorRegister, _ left: VectorRegister, _ source: MemoryOperand) {
    vex(map: .x0F38, prefix: .x66, opcode: 0xB8, reg: accumulator.number, vvvv: left.number, memory: source)
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

  /// `vmovups zmm{k}, [m512]`: the lanes whose bit is set in `mask`, the others of `destination`
  /// kept; memory of the other lanes is not read.
  @usableFromInline package mutating func vmovupsZMM(_ destination: VectorRegister, _ source: MemoryOperand, mask: MaskRegister) {
    evex(
      map: .x0F, prefix: .none, opcode: 0x10, reg: destination.number, vvvv: 0, operand: .memory(source),
      elementBytes: 64, broadcast: false, mask: mask.number)
  }

  /// `vmovups [m512]{k}, zmm`: stores the lanes whose bit is set in `mask`; memory of the other
  /// lanes is not touched.
  @usableFromInline package mutating func vmovupsZMM(_ destination: MemoryOperand, _ source: VectorRegister, mask: MaskRegister) {
    evex(
      map: .x0F, prefix: .none, opcode: 0x11, reg: source.number, vvvv: 0, operand: .memory(destination),
      elementBytes: 64, broadcast: false, mask: mask.number)
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

  /// `vcvttps2dq zmm1, zmm2`: each float lane truncated toward zero to Int32 (0x80000000 for NaN
  /// and out-of-range values) (AVX-512F).
  @usableFromInline package mutating func vcvttps2dqZMM(_ destination: VectorRegister, _ source: VectorRegister) {
    evex(map: .x0F, prefix: .xF3, opcode: 0x5B, reg: destination.number, vvvv: 0, rm: source.number)
  }

  /// `vcvtdq2ps zmm1, zmm2`: each Int32 lane converted to float, rounded to nearest (AVX-512F).
  @usableFromInline package mutating func vcvtdq2psZMM(_ destination: VectorRegister, _ source: VectorRegister) {
    evex(map: .x0F, prefix: .none, opcode: 0x5B, reg: destination.number, vvvv: 0, rm: source.number)
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

  /// `vpmovsxbd zmm, [m128]`: sixteen signed bytes sign-extended to 32-bit lanes.
  @usableFromInline package mutating func vpmovsxbdZMM(_ destination: VectorRegister, _ source: MemoryOperand) {
    evex(map: .x0F38, prefix: .x66, opcode: 0x21, reg: destination.number, vvvv: 0, memory: source, elementBytes: 16)
  }

  /// `vpmovb2m k, zmm`: mask bit i is the top bit of byte i (AVX512BW).
  @usableFromInline package mutating func vpmovb2mZMM(_ mask: MaskRegister, _ source: VectorRegister) {
    evex(
      map: .x0F38, prefix: .xF3, opcode: 0x29, reg: mask.number, vvvv: 0, operand: .register(source.number), elementBytes: 64,
      broadcast: false)
  }

  /// `vscalefps zmm1, zmm2, zmm3`: zmm2 · 2^floor(zmm3) lane by lane, rounded once (AVX-512F).
  @usableFromInline package mutating func vscalefpsZMM(_ destination: VectorRegister, _ value: VectorRegister, _ exponent: VectorRegister) {
    evex(map: .x0F38, prefix: .x66, opcode: 0x2C, reg: destination.number, vvvv: value.number, rm: exponent.number)
  }

  /// `vrcp14ps zmm1, zmm2`: each lane's reciprocal estimate, relative error below 2^−14 (AVX-512F).
  @usableFromInline package mutating func vrcp14psZMM(_ destination: VectorRegister, _ source: VectorRegister) {
    evex(map: .x0F38, prefix: .x66, opcode: 0x4C, reg: destination.number, vvvv: 0, rm: source.number)
  }

  /// `vptestmd k, zmm1, zmm2`: mask bit i set where lane i of zmm1 AND zmm2 is not zero (AVX-512F).
  @usableFromInline package mutating func vptestmdZMM(_ mask: MaskRegister, _ left: VectorRegister, _ right: VectorRegister) {
    evex(map: .x0F38, prefix: .x66, opcode: 0x27, reg: mask.number, vvvv: left.number, rm: right.number)
  }

  /// `vpermi2b zmm1, zmm2, zmm3`: each byte of zmm1 (an index; bit 6 picks zmm3 over zmm2, bits
  /// 0–5 the byte) replaced by the byte it picks from the 128-byte table zmm2:zmm3 (AVX512_VBMI).
  @usableFromInline package mutating func vpermi2bZMM(_ indices: VectorRegister, _ low: VectorRegister, _ high: VectorRegister) {
    evex(map: .x0F38, prefix: .x66, opcode: 0x75, reg: indices.number, vvvv: low.number, rm: high.number)
  }

  /// `vpermb zmm1, zmm2, [m512]`: byte i of zmm1 is the byte of the 64-byte memory operand that
  /// bits 0–5 of byte i of zmm2 pick (AVX512_VBMI).
  @usableFromInline package mutating func vpermbZMM(_ destination: VectorRegister, indices: VectorRegister, _ table: MemoryOperand) {
    evex(map: .x0F38, prefix: .x66, opcode: 0x8D, reg: destination.number, vvvv: indices.number, memory: table, elementBytes: 64)
  }

  /// `vpblendmb zmm1{k}, zmm2, zmm3`: byte i from zmm3 where bit i of `mask` is set, else
  /// from zmm2 (AVX512BW).
  @usableFromInline package mutating func vpblendmbZMM(
    _ destination: VectorRegister, mask: MaskRegister, _ unselected: VectorRegister, _ selected: VectorRegister
  ) {
    evex(
      map: .x0F38, prefix: .x66, opcode: 0x66, reg: destination.number, vvvv: unselected.number,
      operand: .register(selected.number), elementBytes: 64, broadcast: false, mask: mask.number)
  }

  /// `op zmm1, zmm2, zmm3` for a lane-wise integer operation (AVX-512F).
  @usableFromInline package mutating func packedZMM(
    _ operation: PackedIntegerOperation, _ destination: VectorRegister, _ left: VectorRegister, _ right: VectorRegister
  ) {
    evex(
      map: operation.map, prefix: .x66, opcode: operation.opcode, reg: destination.number, vvvv: left.number,
      operand: .register(right.number), elementBytes: 64, broadcast: false, wide: operation.isWideInEVEX)
  }

  /// `op zmm1, zmm2, zmm3` for a lane-wise single-precision operation (AVX-512F); with `mask`,
  /// `op zmm1{k}, zmm2, zmm3`: only the lanes whose bit is set are written, the others kept.
  @usableFromInline package mutating func packedZMM(
    _ operation: PackedFloatOperation, _ destination: VectorRegister, _ left: VectorRegister, _ right: VectorRegister,
    mask: MaskRegister? = nil
  ) {
    evex(
      map: operation.map, prefix: operation.prefix, opcode: operation.opcode, reg: destination.number, vvvv: left.number,
      operand: .register(right.number), elementBytes: 64, broadcast: false, mask: mask?.number ?? 0)
  }

  /// `op zmm1, zmm2, [m512]` for a lane-wise integer operation (AVX-512F); with `mask`,
  /// `op zmm1{k}, zmm2, [m512]`: only the lanes whose bit is set are written.
  @usableFromInline package mutating func packedZMM(
    _ operation: PackedIntegerOperation, _ destination: VectorRegister, _ left: VectorRegister, _ right: MemoryOperand,
    mask: MaskRegister? = nil
  ) {
    evex(
      map: operation.map, prefix: .x66, opcode: operation.opcode, reg: destination.number, vvvv: left.number,
      operand: .memory(right), elementBytes: 64, broadcast: false, wide: operation.isWideInEVEX, mask: mask?.number ?? 0)
  }

  /// `vpcmpgtq k, zmm, [m512]` (AVX-512F): mask bit i set where 64-bit lane i of zmm is greater
  /// (signed) than that of memory.
  @usableFromInline package mutating func vpcmpgtqZMM(_ mask: MaskRegister, _ left: VectorRegister, _ right: MemoryOperand) {
    evex(
      map: .x0F38, prefix: .x66, opcode: 0x37, reg: mask.number, vvvv: left.number, operand: .memory(right),
      elementBytes: 64, broadcast: false, wide: true)
  }

  /// `vpermi2d zmm1, zmm2, zmm3` (AVX-512F): each 32-bit lane of zmm1 (an index; bit 4 picks zmm3
  /// over zmm2, bits 0–3 the lane) replaced by the lane it picks from the two tables.
  @usableFromInline package mutating func vpermi2dZMM(_ indices: VectorRegister, _ low: VectorRegister, _ high: VectorRegister) {
    evex(map: .x0F38, prefix: .x66, opcode: 0x76, reg: indices.number, vvvv: low.number, rm: high.number)
  }

  /// `op zmm1, zmm2, imm8` for a shift of every lane by a constant (AVX-512F).
  @usableFromInline package mutating func shiftZMM(
    _ shift: PackedShift, _ destination: VectorRegister, _ source: VectorRegister, by count: UInt8
  ) {
    evex(
      map: .x0F, prefix: .x66, opcode: shift.opcode, reg: shift.extensionField, vvvv: destination.number,
      operand: .register(source.number), elementBytes: 64, broadcast: false, wide: shift.isWideInEVEX)
    emit(count)
  }

  /// `vpxord zmm1, zmm2, dword [m32]{1to16}`: zmm2 XOR the 32-bit value broadcast (AVX-512F).
  @usableFromInline package mutating func vpxordZMM(_ destination: VectorRegister, _ left: VectorRegister, broadcast source: MemoryOperand) {
    evex(
      map: .x0F, prefix: .x66, opcode: 0xEF, reg: destination.number, vvvv: left.number, memory: source,
      elementBytes: 4, broadcast: true)
  }

  /// `vpmovdb [m128], zmm`: the low byte of each of the 16 lanes (AVX-512F).
  @usableFromInline package mutating func vpmovdbZMM(_ destination: MemoryOperand, _ source: VectorRegister) {
    evex(
      map: .x0F38, prefix: .xF3, opcode: 0x31, reg: source.number, vvvv: 0, operand: .memory(destination),
      elementBytes: 16, broadcast: false)
  }

  /// `vpmovsdb [m128], zmm`: each of the 16 lanes as a signed byte, saturated (AVX-512F).
  @usableFromInline package mutating func vpmovsdbZMM(_ destination: MemoryOperand, _ source: VectorRegister) {
    evex(
      map: .x0F38, prefix: .xF3, opcode: 0x21, reg: source.number, vvvv: 0, operand: .memory(destination),
      elementBytes: 16, broadcast: false)
  }

  /// `vpmovusdb [m128], zmm`: each of the 16 lanes, read as unsigned, as an unsigned byte, saturated
  /// (AVX-512F).
  @usableFromInline package mutating func vpmovusdbZMM(_ destination: MemoryOperand, _ source: VectorRegister) {
    evex(
      map: .x0F38, prefix: .xF3, opcode: 0x11, reg: source.number, vvvv: 0, operand: .memory(destination),
      elementBytes: 16, broadcast: false)
  }

  /// `vpmovdb [m128]{k}, zmm`: the low byte of each lane whose bit is set in `mask` (AVX-512F);
  /// the other bytes of memory are neither written nor touched.
  @usableFromInline package mutating func vpmovdbZMM(_ destination: MemoryOperand, _ source: VectorRegister, mask: MaskRegister) {
    evex(
      map: .x0F38, prefix: .xF3, opcode: 0x31, reg: source.number, vvvv: 0, operand: .memory(destination),
      elementBytes: 16, broadcast: false, mask: mask.number)
  }

  /// `vcmpps k, zmm1, zmm2, predicate` (AVX-512F): mask bit i set where `predicate` holds
  /// between lane i of zmm1 and lane i of zmm2.
  @usableFromInline package mutating func vcmppsZMM(
    _ mask: MaskRegister, _ left: VectorRegister, _ right: VectorRegister, _ predicate: FloatComparison
  ) {
    evex(map: .x0F, prefix: .none, opcode: 0xC2, reg: mask.number, vvvv: left.number, rm: right.number)
    emit(predicate.rawValue)
  }

  /// `kmovw k, [m16]` (AVX-512F): the mask register from 16 bits of memory.
  @usableFromInline package mutating func kmovw(_ destination: MaskRegister, _ source: MemoryOperand) {
    vex(map: .x0F, prefix: .none, opcode: 0x90, reg: destination.number, vvvv: 0, operand: .memory(source), length256: false)
  }

  /// `vfmadd231ps zmm1, zmm2, [m512]`: zmm1 += zmm2 · memory, fused.
  @usableFromInline package mutating func vfmadd231psZMM(_ accumulator: VectorRegister, _ left: VectorRegister, _ source: MemoryOperand) {
    evex(map: .x0F38, prefix: .x66, opcode: 0xB8, reg: accumulator.number, vvvv: left.number, memory: source, elementBytes: 64)
  }

  /// `vpdpwssd zmm1, zmm2, zmm3` (AVX512-VNNI): each 32-bit lane of zmm1 += the sum of the two
  /// products of zmm2's and zmm3's signed 16-bit words in that lane (wrapping).
  @usableFromInline package mutating func vpdpwssdZMM(_ accumulator: VectorRegister, _ left: VectorRegister, _ right: VectorRegister) {
    evex(map: .x0F38, prefix: .x66, opcode: 0x52, reg: accumulator.number, vvvv: left.number, rm: right.number)
  }

  /// `kxnorw k1, k2, k3` (AVX-512F): the 16-bit mask NOT (k2 XOR k3); with k2 = k3, all 16 bits set.
  @usableFromInline package mutating func kxnorw(_ destination: MaskRegister, _ left: MaskRegister, _ right: MaskRegister) {
    vex(map: .x0F, prefix: .none, opcode: 0x46, reg: destination.number, vvvv: left.number, operand: .register(right.number))
  }

  /// `vpgatherdd zmm1{k}, [base + zmm2 · scale + displacement]` (AVX-512F): lane i of zmm1 loads
  /// the 32-bit value at base + (lane i of zmm2, signed) · scale + displacement where bit i of
  /// `mask` is set. The gather clears the mask as lanes arrive, so set it again before the next one.
  @usableFromInline package mutating func vpgatherddZMM(
    _ destination: VectorRegister, base: GPRegister, index: VectorRegister, scale: UInt8 = 1, _ displacement: Int32 = 0,
    mask: MaskRegister
  ) {
    precondition([1, 2, 4, 8].contains(scale), "invalid scale \(scale)")
    let invertedR = (~destination.number >> 3) & 1
    let invertedX = (~index.number >> 3) & 1
    let invertedB = ~base.high & 1
    let invertedRPrime = (~destination.number >> 4) & 1
    emit(0x62, invertedR << 7 | invertedX << 6 | invertedB << 5 | invertedRPrime << 4 | OpcodeMap.x0F38.rawValue)
    // W0, no vvvv (1111), the 66 prefix; then 512 bits, bit 4 of the index register (V'), the mask.
    emit(0x7D)
    emit(0b10 << 5 | ((~index.number >> 4) & 1) << 3 | mask.number)
    emit(0x90)
    // The VSIB byte names a vector index, so any of its numbers is valid (also 4, "no index" in a SIB).
    let compressed = displacement % 4 == 0 ? Int8(exactly: displacement / 4) : nil
    let mode: UInt8 = displacement == 0 && base.low != GPRegister.rbp.low ? 0b00 : compressed != nil ? 0b01 : 0b10
    emit(mode << 6 | (destination.number & 7) << 3 | 0b100, UInt8(scale.trailingZeroBitCount) << 6 | (index.number & 7) << 3 | base.low)
    if mode == 0b01, let byte = compressed {
      emit(UInt8(bitPattern: byte))
    } else if mode == 0b10 {
      emit32(displacement)
    }
  }

  // MARK: - Encoding

  /// The opcode map of a VEX/EVEX instruction (its `mmmmm`/`mm` field).
  fileprivate enum OpcodeMap: UInt8 {
    case x0F = 1, x0F38 = 2, x0F3A = 3
  }

  /// The implied legacy prefix of a VEX/EVEX instruction (its `pp` field).
  fileprivate enum ImpliedPrefix: UInt8 {
    case none = 0, x66 = 1, xF3 = 2
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

  /// A VEX instruction, 256-bit unless `length256` is false, W1 when `wide`; two-byte form when
  /// W, X, B and the map allow it.
  private mutating func vex(
    map: OpcodeMap, prefix: ImpliedPrefix, opcode: UInt8, reg: UInt8, vvvv: UInt8, operand: RMOperand,
    wide: Bool = false, length256: Bool = true
  ) {
    precondition(reg < 16 && vvvv < 16, "VEX reaches only ymm0...ymm15")
    if case .register(let number) = operand { precondition(number < 16, "VEX reaches only ymm0...ymm15") }
    let invertedR = (~reg >> 3) & 1
    let invertedX: UInt8 = {
      if case .memory(let memory) = operand { return ~(memory.index?.register.high ?? 0) & 1 }
      return 1
    }()
    let invertedB = ~operand.baseHigh & 1
    let lengthAndPrefix = ((~vvvv & 0xF) << 3) | (length256 ? 0b100 : 0) | prefix.rawValue
    if invertedX == 1 && invertedB == 1 && map == .x0F && !wide {
      emit(0xC5, invertedR << 7 | lengthAndPrefix)
    } else {
      emit(0xC4, invertedR << 7 | invertedX << 6 | invertedB << 5 | map.rawValue, (wide ? 0x80 : 0) | lengthAndPrefix)
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

  /// A 512-bit EVEX instruction (W0 unless `wide`, merge-masked by register `mask` unless it is 0).
  /// `elementBytes` is the N of disp8×N compression: the whole vector for full loads, the element
  /// for a broadcast or scalar operand.
  private mutating func evex(
    map: OpcodeMap, prefix: ImpliedPrefix, opcode: UInt8, reg: UInt8, vvvv: UInt8, operand: RMOperand,
    elementBytes: Int32, broadcast: Bool, wide: Bool = false, mask: UInt8 = 0
  ) {
    let invertedR = (~reg >> 3) & 1
    let invertedX = ~operand.indexHigh & 1
    let invertedB = ~operand.baseHigh & 1
    let invertedRPrime = (~reg >> 4) & 1
    emit(0x62, invertedR << 7 | invertedX << 6 | invertedB << 5 | invertedRPrime << 4 | map.rawValue)
    emit((wide ? 0x80 : 0) | ((~vvvv & 0xF) << 3) | 0b100 | prefix.rawValue)
    let invertedVPrime = (~vvvv >> 4) & 1
    emit(0b10 << 5 | (broadcast ? 1 : 0) << 4 | invertedVPrime << 3 | mask)
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

  // Fixed-arity byte emitters: a variadic one allocated an array per instruction, which made
  // kernel generation (at prepare) several times slower than the encoding itself.
  private mutating func emit(_ first: UInt8) { bytes.append(first) }

  private mutating func emit(_ first: UInt8, _ second: UInt8) {
    bytes.append(first)
    bytes.append(second)
  }

  private mutating func emit(_ first: UInt8, _ second: UInt8, _ third: UInt8) {
    emit(first, second)
    bytes.append(third)
  }

  private mutating func emit(_ first: UInt8, _ second: UInt8, _ third: UInt8, _ fourth: UInt8) {
    emit(first, second)
    emit(third, fourth)
  }

  private mutating func emit32(_ value: Int32) {
    for i in 0..<4 { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * Int32(i)))) }
  }
}
