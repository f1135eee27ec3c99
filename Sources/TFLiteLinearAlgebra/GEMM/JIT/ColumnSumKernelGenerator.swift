// The generated column sums of 8-bit MEAN and SUM over the leading axes (squeeze-excite's MEAN over
// H and W of [1, H, W, C]): for each channel, the wrapping Int32 sum of its bytes over every row,
// exactly what the Swift reduction accumulates. 16 channels per block, widened to Int32 lanes
// (`vpmovsxbd`/`vpmovzxbd`) and added row after row; four blocks share each pass over the rows
// while at least four are left, so a row's cache lines are read once. AVX2 (two ymm per block) and
// AVX-512 (one zmm).

/// The arguments of a column sum kernel, passed by pointer (the kernel reads each field at its
/// `MemoryLayout` offset).
@usableFromInline package struct ColumnSumKernelArguments {
  /// Row 0's first byte of block 0.
  @usableFromInline package var input: UnsafeRawPointer
  /// Bytes between rows.
  @usableFromInline package var rowBytes: Int
  /// Rows to sum (0 or more).
  @usableFromInline package var rows: Int
  /// 16 Int32 sums per block, blocks one after the other.
  @usableFromInline package var sums: UnsafeMutablePointer<Int32>
  /// Blocks of 16 channels.
  @usableFromInline package var blockCount: Int

  /// The arguments from their parts.
  @inlinable package init(
    input: UnsafeRawPointer, rowBytes: Int, rows: Int, sums: UnsafeMutablePointer<Int32>, blockCount: Int
  ) {
    self.input = input
    self.rowBytes = rowBytes
    self.rows = rows
    self.sums = sums
    self.blockCount = blockCount
  }
}

/// Writes the column sum kernels `void kernel(const ColumnSumKernelArguments *)`. Registers: rax
/// the current blocks' row 0, rdx the row stride, r8 the row count, rsi the sums, rcx the blocks
/// left, r9 the current row, r10 the rows left; vector registers 0–7 the sums, 8–15 the widened bytes.
@usableFromInline package enum ColumnSumKernelGenerator {
  /// Channels per block.
  @usableFromInline package static let blockChannels = 16
  /// Blocks summed together in one pass over the rows.
  static let blocksPerPass = 4

  /// The machine code for `isa` on `input` bytes (signed int8 or unsigned uint8).
  @usableFromInline package static func code(isa: GeneratedKernelISA, input: RequantizedOutput) -> [UInt8] {
    var assembler = X86Assembler()
    let width: VectorWidth = isa == .avx2 ? .ymm : .zmm
    assembler.loadArguments(
      of: ColumnSumKernelArguments.self, [.rax: \.input, .rdx: \.rowBytes, .r8: \.rows, .rsi: \.sums, .rcx: \.blockCount])
    let done = assembler.makeLabel()
    for blocks in [blocksPerPass, 1] {
      let pass = assembler.makeLabel()
      let next = assembler.makeLabel()
      assembler.bind(pass)
      assembler.cmp(.rcx, Int32(blocks))
      assembler.jump(if: .below, to: blocks == 1 ? done : next)
      emitPass(&assembler, width: width, input: input, blocks: blocks)
      assembler.sub(.rcx, Int32(blocks))
      assembler.jump(to: pass)
      assembler.bind(next)
    }
    assembler.bind(done)
    assembler.returnFromKernel(restoring: [])
    return assembler.finishedCode()
  }

  /// Sums `blocks` blocks over every row, stores their sums and advances rax and rsi past them.
  private static func emitPass(_ assembler: inout X86Assembler, width: VectorWidth, input: RequantizedOutput, blocks: Int) {
    let registers = blocks * width.vectorsPerRow
    let bytesPerRegister = Int32(blockChannels / width.vectorsPerRow)
    let sums = (0..<registers).map { VectorRegister($0) }
    let widened = (0..<registers).map { VectorRegister(8 + $0) }
    for sum in sums { assembler.zero(width, sum) }
    let row = assembler.makeLabel()
    let stored = assembler.makeLabel()
    assembler.mov(.r9, .rax)
    assembler.mov(.r10, .r8)
    assembler.test(.r10, .r10)
    assembler.jump(if: .zero, to: stored)
    assembler.bind(row)
    for (index, register) in widened.enumerated() {
      let source = MemoryOperand(.r9, Int32(index) * bytesPerRegister)
      switch (width, input) {
      case (.ymm, .int8): assembler.vpmovsxbdYMM(register, source)
      case (.ymm, .uint8): assembler.vpmovzxbdYMM(register, source)
      case (.zmm, .int8): assembler.vpmovsxbdZMM(register, source)
      case (.zmm, .uint8): assembler.vpmovzxbdZMM(register, source)
      }
    }
    for (sum, value) in zip(sums, widened) {
      width == .ymm ? assembler.packedYMM(.vpaddd, sum, sum, value) : assembler.packedZMM(.vpaddd, sum, sum, value)
    }
    assembler.add(.r9, .rdx)
    assembler.dec(.r10)
    assembler.jump(if: .notZero, to: row)
    assembler.bind(stored)
    for (index, sum) in sums.enumerated() {
      assembler.store(width, MemoryOperand(.rsi, Int32(index) * width.bytes), sum)
    }
    assembler.add(.rax, Int32(blocks * blockChannels))
    assembler.add(.rsi, Int32(blocks * blockChannels * 4))
  }
}

/// The generated column sum kernels of one instruction set (int8 and uint8), each made the first
/// time it is asked for (`LazyExecutableKernels`) and kept for the process; they follow the float
/// GEMM's switches (``GeneratedFloatKernels/currentISA``).
@usableFromInline package final class GeneratedColumnSumKernels: GeneratedKernelFamily, @unchecked Sendable {
  // @unchecked Sendable: immutable after `init` but the lazily made kernels, which
  // `LazyExecutableKernels` guards.

  /// The instruction set.
  @usableFromInline package let isa: GeneratedKernelISA
  /// The kernel for each input type, by `RequantizedOutput.rawValue`, made on first use.
  private let kernels: LazyExecutableKernels

  /// The kernels of `isa`, none generated yet.
  @usableFromInline package init(isa: GeneratedKernelISA) {
    let inputs = RequantizedOutput.allCases
    self.isa = isa
    kernels = LazyExecutableKernels(count: inputs.count) { ColumnSumKernelGenerator.code(isa: isa, input: inputs[$0]) }
  }

  @usableFromInline package static let avx2Set: GeneratedColumnSumKernels? = GeneratedColumnSumKernels(isa: .avx2)
  @usableFromInline package static let avx512Set: GeneratedColumnSumKernels? = GeneratedColumnSumKernels(isa: .avx512)
  @usableFromInline package static let preferred: GeneratedColumnSumKernels? = preferredSet()

  /// Writes the sums over `rows` rows (`rowBytes` apart) of `blockCount` × 16 channels of
  /// `input` bytes into `sums`; false, with nothing written, when the kernel could not be mapped
  /// (only exhausted memory or the code budget refuses it after the start-up probe): the caller
  /// sums in Swift instead.
  @usableFromInline package func run(
    _ input: RequantizedOutput, from source: UnsafeRawPointer, rowBytes: Int, rows: Int,
    into sums: UnsafeMutablePointer<Int32>, blockCount: Int
  ) -> Bool {
    precondition(rows >= 0 && blockCount >= 0, "negative column sum extent")
    var arguments = ColumnSumKernelArguments(input: source, rowBytes: rowBytes, rows: rows, sums: sums, blockCount: blockCount)
    // Generated on its first call (unless reserved at prepare).
    guard let entry = kernels.entry(input.rawValue) else { return false }
    callKernel(at: entry, &arguments)
    return true
  }

  /// Reserves (`LazyExecutableKernels/reserve(_:)`) the kernel `run` calls for `input` bytes, to be
  /// mapped with the other reserved kernels at the end of `allocateTensors()`.
  package func reserve(_ input: RequantizedOutput) { kernels.reserve([input.rawValue]) }
}
