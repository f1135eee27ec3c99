/// The vector instruction sets the generated kernels are written for, from oldest to newest.
///
/// Swift has no inline assembly, so the CPU is asked through two generated stubs of a few bytes
/// (CPUID, and XGETBV for the register state the OS saves on a context switch): an instruction set
/// counts only when the CPU has it *and* the OS has enabled its registers.
@usableFromInline package enum GeneratedKernelISA: Int, Sendable, CaseIterable, Comparable, CustomStringConvertible {
  /// AVX2 with FMA3: sixteen 256-bit ymm registers.
  case avx2 = 1
  /// AVX-512 Foundation: thirty-two 512-bit zmm registers with embedded broadcasts.
  case avx512 = 2

  @inlinable package static func < (left: Self, right: Self) -> Bool { left.rawValue < right.rawValue }

  @usableFromInline package var description: String {
    switch self {
    case .avx2: "AVX2+FMA"
    case .avx512: "AVX-512F"
    }
  }

  /// The newest instruction set this CPU and OS run, or nil (not x86-64, code generation refused,
  /// or no AVX2/FMA). Asked once per process.
  @usableFromInline package static let supported: GeneratedKernelISA? = ProcessorFeatures.detected.float
}

/// The 8-bit dot-product instruction sets of the generated integer kernels (`vpdpbusd`), from
/// oldest to newest.
@usableFromInline package enum DotProductISA: Int, Sendable, CaseIterable, Comparable, CustomStringConvertible {
  /// AVX-VNNI: `vpdpbusd` on ymm registers, VEX-encoded (no AVX-512 needed).
  case avxVNNI = 1
  /// AVX512-VNNI: `vpdpbusd` on zmm registers.
  case avx512VNNI = 2

  @inlinable package static func < (left: Self, right: Self) -> Bool { left.rawValue < right.rawValue }

  @usableFromInline package var description: String {
    switch self {
    case .avxVNNI: "AVX-VNNI"
    case .avx512VNNI: "AVX512-VNNI"
    }
  }

  /// Every dot-product instruction set this CPU and OS run (empty off x86-64). Asked once per process.
  @usableFromInline package static let supported: DotProductISAs = ProcessorFeatures.detected.dotProduct
}

/// A set of `DotProductISA`s as one bit each: a plain struct rather than a `Set`, whose first use
/// in a process builds `Set<DotProductISA>`'s metadata and checks `DotProductISA: Hashable` by a
/// scan of every protocol conformance record (≈ 250 k instructions, paid by the first model load).
@usableFromInline package struct DotProductISAs: Sendable, Equatable, ExpressibleByArrayLiteral {
  /// Bit `isa.rawValue` for each member.
  @usableFromInline var bits: Int

  /// The set of `elements`.
  @inlinable package init(arrayLiteral elements: DotProductISA...) {
    bits = 0
    for isa in elements { insert(isa) }
  }

  /// True when `isa` is a member.
  @inlinable package func contains(_ isa: DotProductISA) -> Bool { bits & (1 << isa.rawValue) != 0 }

  /// Adds `isa`.
  @inlinable package mutating func insert(_ isa: DotProductISA) { bits |= 1 << isa.rawValue }

  /// True when there is no member.
  @inlinable package var isEmpty: Bool { bits == 0 }
}

/// CPUID/XGETBV answers, read through generated stubs.
@usableFromInline package enum ProcessorFeatures {
  /// `(eax, ebx, ecx, edx)` of CPUID leaf `leaf`, sub-leaf `subleaf`.
  @usableFromInline package typealias CPUIDResult = (eax: UInt32, ebx: UInt32, ecx: UInt32, edx: UInt32)

  /// `void stub(uint32_t registers[4])`: eax and ecx in, eax, ebx, ecx, edx out.
  @usableFromInline package static func cpuidStub() -> [UInt8] {
    var assembler = X86Assembler()
    assembler.push(.rbx)
    assembler.mov32(.rax, MemoryOperand(.rdi, 0))
    assembler.mov32(.rcx, MemoryOperand(.rdi, 8))
    assembler.cpuid()
    for (index, register) in [GPRegister.rax, .rbx, .rcx, .rdx].enumerated() {
      assembler.mov32(MemoryOperand(.rdi, Int32(4 * index)), register)
    }
    assembler.pop(.rbx)
    assembler.ret()
    return assembler.finishedCode()
  }

  /// `void stub(uint32_t registers[2])`: ecx in (the XCR number), eax and edx out.
  @usableFromInline package static func xgetbvStub() -> [UInt8] {
    var assembler = X86Assembler()
    assembler.mov32(.rcx, MemoryOperand(.rdi, 0))
    assembler.xgetbv()
    assembler.mov32(MemoryOperand(.rdi, 0), .rax)
    assembler.mov32(MemoryOperand(.rdi, 4), .rdx)
    assembler.ret()
    return assembler.finishedCode()
  }

  private typealias Stub = @convention(c) (UnsafeMutablePointer<UInt32>) -> Void

  /// Runs a stub on a four-word buffer that starts as `input`.
  private static func run(_ code: ExecutableCode, _ input: [UInt32]) -> [UInt32] {
    var registers = input + [UInt32](repeating: 0, count: 4 - input.count)
    let stub = unsafeBitCast(code.entry, to: Stub.self)
    registers.withUnsafeMutableBufferPointer { stub($0.baseAddress!) }
    return registers
  }

  /// What `probe` found, once per process.
  @usableFromInline package static let detected = probe()

  /// The newest usable `GeneratedKernelISA` (or nil), every usable `DotProductISA`, and whether
  /// usable AVX-512 comes with the byte permutes (see `hasBytePermutes`).
  @usableFromInline package static func probe() -> (
    float: GeneratedKernelISA?, dotProduct: DotProductISAs, bytePermutes: Bool
  ) {
    // Both stubs in one mapping: one mmap and one mprotect, the only ones of the probe.
    guard let stubs = ExecutableCode.mapped([cpuidStub(), xgetbvStub()]) else { return (nil, [], false) }
    let (cpuidCode, xgetbvCode) = (stubs[0], stubs[1])
    func cpuid(_ leaf: UInt32, _ subleaf: UInt32 = 0) -> CPUIDResult {
      let r = run(cpuidCode, [leaf, 0, subleaf, 0])
      return (r[0], r[1], r[2], r[3])
    }
    let highestLeaf = cpuid(0).eax
    guard highestLeaf >= 7 else { return (nil, [], false) }
    let leaf1 = cpuid(1)
    let leaf7 = cpuid(7)
    let leaf7Subleaf1 = cpuid(7, 1)
    func bit(_ value: UInt32, _ index: UInt32) -> Bool { value & (1 << index) != 0 }
    // OSXSAVE (the OS manages the extended state, so XGETBV is allowed), AVX, FMA.
    guard bit(leaf1.ecx, 27), bit(leaf1.ecx, 28), bit(leaf1.ecx, 12) else { return (nil, [], false) }
    let xcr0 = run(xgetbvCode, [0])[0]
    // XCR0: SSE and AVX state (bits 1, 2); opmask, upper halves of zmm0-15 and zmm16-31 (bits 5-7).
    guard xcr0 & 0x6 == 0x6, bit(leaf7.ebx, 5) else { return (nil, [], false) }
    var dotProduct: DotProductISAs = []
    // AVX-VNNI: leaf 7 sub-leaf 1 EAX bit 4.
    if bit(leaf7Subleaf1.eax, 4) { dotProduct.insert(.avxVNNI) }
    guard xcr0 & 0xE0 == 0xE0 && bit(leaf7.ebx, 16) else { return (.avx2, dotProduct, false) }
    // AVX512-VNNI: leaf 7 ECX bit 11.
    if bit(leaf7.ecx, 11) { dotProduct.insert(.avx512VNNI) }
    // Byte permutes: leaf 7 EBX bit 30 AVX512BW, ECX bit 1 AVX512_VBMI.
    return (.avx512, dotProduct, bit(leaf7.ebx, 30) && bit(leaf7.ecx, 1))
  }
}

extension ProcessorFeatures {
  /// True when usable AVX-512 comes with AVX512BW and AVX512_VBMI (`vpermi2b` byte permutes
  /// across a whole zmm, byte opmasks): what the generated byte table look-up needs. Found by the
  /// one probe of the process (no stub mapped again for it).
  @usableFromInline package static let hasBytePermutes: Bool = detected.bytePermutes
}
