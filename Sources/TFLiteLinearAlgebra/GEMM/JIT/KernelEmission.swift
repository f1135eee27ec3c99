// What the generated kernels share: the vector width they work in, the System V prologue and
// return, the float clamp, the argument fields read through rdi, vectors loaded through a pointer
// argument, the counted loop, and the addressing of a tile's rows from a few base registers.

/// The vector registers a generated kernel works in: ymm (AVX2, AVX-VNNI) or zmm (AVX-512).
enum VectorWidth {
  /// 256-bit registers: two per 16-lane row.
  case ymm
  /// 512-bit registers: one per 16-lane row.
  case zmm

  /// Bytes of one register.
  var bytes: Int32 { self == .ymm ? 32 : 64 }

  /// Registers per row of 16 four-byte lanes.
  var vectorsPerRow: Int { self == .ymm ? 2 : 1 }
}

extension X86Assembler {
  /// `vmovups register, [memory]` in `width`.
  mutating func load(_ width: VectorWidth, _ register: VectorRegister, _ memory: MemoryOperand) {
    width == .ymm ? vmovupsYMM(register, memory) : vmovupsZMM(register, memory)
  }

  /// `vmovups [memory], register` in `width`.
  mutating func store(_ width: VectorWidth, _ memory: MemoryOperand, _ register: VectorRegister) {
    width == .ymm ? vmovupsYMM(memory, register) : vmovupsZMM(memory, register)
  }

  /// The kernels' System V prologue: pushes the callee-saved registers in `saved`.
  mutating func saveRegisters(_ saved: [GPRegister]) {
    for register in saved { push(register) }
  }

  /// The kernels' return: `vzeroupper` (no AVX-SSE transition penalty in the caller), the
  /// registers `saveRegisters` pushed popped in reverse, `ret`.
  mutating func returnFromKernel(restoring saved: [GPRegister]) {
    vzeroupper()
    for register in saved.reversed() { pop(register) }
    ret()
  }

  /// `value = min(max(lower, value), upper)` in `width`, lane by lane: `value` is the second
  /// operand of both, so a NaN passes through as the Swift clamps let it.
  mutating func clamp(_ width: VectorWidth, _ value: VectorRegister, lower: VectorRegister, upper: VectorRegister) {
    if width == .ymm {
      packedYMM(.vmaxps, value, lower, value)
      packedYMM(.vminps, value, upper, value)
    } else {
      packedZMM(.vmaxps, value, lower, value)
      packedZMM(.vminps, value, upper, value)
    }
  }

  /// Sets `register` to zero in `width` (`vxorps` ymm, `vpxord` zmm).
  mutating func zero(_ width: VectorWidth, _ register: VectorRegister) {
    width == .ymm ? vxorpsYMM(register, register, register) : vpxordZMM(register, register, register)
  }
}

/// The operand of `field` in the arguments structure rdi points to (the kernels' only parameter).
func argumentOperand<Arguments>(_ field: PartialKeyPath<Arguments>) -> MemoryOperand {
  MemoryOperand(.rdi, Int32(MemoryLayout<Arguments>.offset(of: field)!))
}

extension X86Assembler {
  /// Reads fields of the `Arguments` structure rdi points to into registers, in the order given
  /// (`mov register, [rdi + offset]` each): a kernel's preamble.
  mutating func loadArguments<Arguments>(
    of _: Arguments.Type, _ fields: KeyValuePairs<GPRegister, PartialKeyPath<Arguments>>
  ) {
    for (register, field) in fields { mov(register, argumentOperand(field)) }
  }

  /// Loads `registers.count` consecutive vectors of `width` (lane masks, per-channel constants)
  /// from the address in the argument at `pointer`, read into `scratch`.
  mutating func loadVectors(
    _ width: VectorWidth, _ registers: [VectorRegister], pointedToBy pointer: MemoryOperand, through scratch: GPRegister
  ) {
    mov(scratch, pointer)
    for (index, register) in registers.enumerated() {
      load(width, register, MemoryOperand(scratch, Int32(index) * width.bytes))
    }
  }
}

/// A loop that runs its body `counter` times, and not at all when the counter is zero: the
/// head `test counter, counter; jz done; top:`, the body, then `end`'s `dec counter; jnz top; done:`.
struct CountedLoop {
  /// The register counting down.
  let counter: GPRegister
  /// The body's first instruction.
  private let top: AssemblerLabel
  /// Past the loop.
  private let done: AssemblerLabel

  /// Emits the loop's head.
  init(_ assembler: inout X86Assembler, counting counter: GPRegister) {
    self.counter = counter
    done = assembler.makeLabel()
    top = assembler.makeLabel()
    assembler.test(counter, counter)
    assembler.jump(if: .zero, to: done)
    assembler.bind(top)
  }

  /// Emits the loop's tail, after the body.
  func end(_ assembler: inout X86Assembler) {
    assembler.dec(counter)
    assembler.jump(if: .notZero, to: top)
    assembler.bind(done)
  }
}

/// The rows of a tile addressed in groups of five: row `r` is `registers[r / 5]` plus 0, 1, 2, 3 or
/// 4 row strides, reached through the SIB byte with the stride (scales 1, 2, 4) and a register
/// holding three strides.
struct RowBases {
  /// One base register per group of five rows.
  let registers: [GPRegister]
  /// Rows of the tile.
  let rows: Int

  /// Base registers the tile's rows need.
  var groupCount: Int { (rows + 4) / 5 }

  /// Row `row`'s address plus `displacement`, with the row stride in `stride` and its triple in `triple`.
  func address(_ row: Int, stride: GPRegister, triple: GPRegister, plus displacement: Int32 = 0) -> MemoryOperand {
    let base = registers[row / 5]
    switch row % 5 {
    case 0: return MemoryOperand(base, displacement)
    case 1: return MemoryOperand(base, index: stride, scale: 1, displacement)
    case 2: return MemoryOperand(base, index: stride, scale: 2, displacement)
    case 3: return MemoryOperand(base, index: triple, scale: 1, displacement)
    default: return MemoryOperand(base, index: stride, scale: 4, displacement)
    }
  }

  /// Points the bases at `origin`, `origin + 5·stride`, `origin + 10·stride`, … (`origin` may be
  /// the first base already).
  func point(_ assembler: inout X86Assembler, at origin: GPRegister, stride: GPRegister) {
    if origin != registers[0] { assembler.mov(registers[0], origin) }
    for group in 1..<groupCount {
      assembler.lea(registers[group], MemoryOperand(registers[group - 1], index: stride, scale: 4))
      assembler.add(registers[group], stride)
    }
  }

  /// Advances every base by `bytes`.
  func advance(_ assembler: inout X86Assembler, by bytes: Int32) {
    for group in 0..<groupCount { assembler.add(registers[group], bytes) }
  }
}

/// The AVX2 lane masks of a block's first lanes (`vmaskmovps` reads a lane where its mask's sign
/// bit is set), from one table of sixteen all-ones lanes then sixteen zero lanes made once for the
/// process: the mask of the first `count` lanes is the 16 lanes from `16 − count` on.
package struct AVX2LaneMasks: @unchecked Sendable {
  // @unchecked Sendable: the table is written once, before `shared` is published, then only read.
  private let table: UnsafePointer<Int32>

  /// The process's table (never freed).
  package static let shared: AVX2LaneMasks = {
    let table = UnsafeMutablePointer<Int32>.allocate(capacity: 32)
    table.initialize(repeating: -1, count: 16)
    (table + 16).initialize(repeating: 0, count: 16)
    return AVX2LaneMasks(table: UnsafePointer(table))
  }()

  private init(table: UnsafePointer<Int32>) { self.table = table }

  /// The 16 lanes whose first `count` (0...16) are all ones and the rest zero.
  @inline(__always) package func firstLanes(_ count: Int) -> UnsafePointer<Int32> { table + (16 &- count) }
}
