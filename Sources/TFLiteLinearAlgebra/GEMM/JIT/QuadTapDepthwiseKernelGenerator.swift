#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Generates the four-tap form of the 8-bit depthwise kernel (AVX512-VNNI with AVX512_VBMI): each
/// 32-bit lane of a zmm is one channel, and one `vpdpbusd` adds four of its taps, u8 × s8, where the
/// pair form (`DepthwiseKernelGenerator`) adds two with `vpdpwssd` after widening every byte.
///
/// The input is a window laid out channel-block-first: per filter row a pointer (`rows`) to
/// `[block][column][16]` unsigned bytes (`rowBlockBytes` between blocks), so the 16 channels of four
/// neighbouring columns are one 64-byte load. For output pixel p of a row, quad q of filter row r
/// reads the 64 bytes at `rows[r] + p · stride · 16 + 64 q` (columns p · stride + 4q … + 3, i.e.
/// filter taps 4q … 4q + 3 of that row), and `vpermb` (one instruction, load included) turns
/// `[tap][channel]` into `[channel][tap]`. Every column of every quad counts (taps past the
/// filter's width carry weight 0, stored as 0 − k_c below; the window has their columns). The
/// weights are, per block,
/// `[row][quad][channel][tap]` signed bytes (`filterRows · quadsPerRow` zmm, loaded into registers
/// once per block), then, when `correctsWeights`, 16 Int32 corrections k_c.
///
/// Per pixel and channel the Int32 sum is Σ u · w over the quads' taps (wrapping): for weights that fit a
/// signed byte (int8; uint8 minus its zero point when it fits) w is stored as it is; otherwise
/// (`correctsWeights`: legacy uint8 weights minus a zero point reach ±255) the stored weight is
/// w − k_c (which fits) and a second `vpdpbusd` per quad sums u · 1, so Σ u · w = Σ u · (w − k_c) +
/// k_c · Σ u (`vpmulld` + `vpaddd` per pixel). The sums then go through the shared requantization
/// (`RequantizationEmission`, the block's `RequantizationTable` record) and 16 bytes per pixel are
/// stored, the last block through the k-mask `lastBlockMask`. One call covers `blockCount` blocks
/// of a whole output row, pixels in groups of 8 (or 4 when the registers do not hold 8), then 4,
/// then 1.
///
/// Registers: rdi the arguments; rcx, rdx, rsi, r9, r12, r13, r15 the filter rows' input pointers;
/// r10/r8 the outputs of pixels 0 and 4 of the group, r11/rbp the output pixel stride ×1/×3; r14
/// the pixels left; rax/rbx the requantization record and lanes. The block loop keeps its state on
/// the stack. rbx, rbp, r12 to r15 are callee-saved and pushed; `vzeroupper` before returning.
@usableFromInline package enum QuadTapDepthwiseKernelGenerator {
  /// What a kernel is specialized for.
  @usableFromInline package struct Shape: Hashable, Sendable, CustomStringConvertible {
    /// Filter rows (1 through `maximumFilterRows`).
    @usableFromInline package let filterRows: Int
    /// Quads of taps per filter row: ⌈filter width / 4⌉.
    @usableFromInline package let quadsPerRow: Int
    /// Horizontal stride in pixels (1 through `maximumStride`).
    @usableFromInline package let stride: Int
    /// The stored type.
    @usableFromInline package let output: RequantizedOutput
    /// True when the weights are stored minus a per-channel k_c and k_c · Σ u is added back.
    @usableFromInline package let correctsWeights: Bool

    /// A kernel shape.
    @inlinable package init(filterRows: Int, quadsPerRow: Int, stride: Int, output: RequantizedOutput, correctsWeights: Bool) {
      self.filterRows = filterRows
      self.quadsPerRow = quadsPerRow
      self.stride = stride
      self.output = output
      self.correctsWeights = correctsWeights
    }

    /// Weight registers: one per quad of every filter row.
    @inlinable package var weightVectors: Int { filterRows * quadsPerRow }

    /// Bytes of one block's weights (and corrections).
    @inlinable package var blockWeightBytes: Int { (weightVectors + (correctsWeights ? 1 : 0)) * 64 }

    /// Vector registers a group of `pixels` needs: sums (and Σ u sums), four permuted inputs, the
    /// weights, the permutation (and the ones and corrections), two requantization scratch.
    @inlinable package func registers(pixels: Int) -> Int {
      pixels * (correctsWeights ? 2 : 1) + 4 + weightVectors + 1 + (correctsWeights ? 2 : 0) + 2
    }

    /// Pixels of the widest group: 8, or 4 when 8 do not fit the 32 zmm.
    @inlinable package var groupPixels: Int { registers(pixels: 8) <= 32 ? 8 : 4 }

    /// True when a kernel of this shape can be generated.
    @inlinable package var isGenerated: Bool {
      (1...QuadTapDepthwiseKernelGenerator.maximumFilterRows).contains(filterRows) && quadsPerRow >= 1
        && (1...QuadTapDepthwiseKernelGenerator.maximumStride).contains(stride) && registers(pixels: 4) <= 32
    }

    @usableFromInline package var description: String {
      "\(filterRows) rows × \(quadsPerRow) quads, stride \(stride), \(output)\(correctsWeights ? ", corrected" : "")"
    }
  }

  /// Most filter rows: one general-purpose register each.
  @usableFromInline package static let maximumFilterRows = 7
  /// Largest horizontal stride.
  @usableFromInline package static let maximumStride = 4
  /// Taps per quad.
  @usableFromInline package static let tapsPerQuad = 4

  /// The 128 constant bytes a kernel reads at `constants`: the `vpermb` indices taking byte
  /// 4c + t from byte 16t + c (`[tap][channel]` → `[channel][tap]`), then 64 bytes of 1.
  @usableFromInline package static let constantBytes: [UInt8] =
    (0..<64).map { (byte: Int) -> UInt8 in UInt8((byte % 4) * 16 + byte / 4) } + [UInt8](repeating: 1, count: 64)

  /// The machine code of the kernel of `shape` (one that `isGenerated`).
  @usableFromInline package static func code(_ shape: Shape) -> [UInt8] {
    precondition(shape.isGenerated, "no four-tap depthwise kernel for \(shape)")
    var emitter = QuadTapDepthwiseEmitter(shape: shape)
    emitter.emitKernel()
    return emitter.assembler.finishedCode()
  }
}

/// The arguments of a four-tap depthwise kernel, passed by pointer (the kernel reads each field at
/// its `MemoryLayout` offset). Offsets and strides are in bytes.
@usableFromInline package struct QuadTapDepthwiseArguments {
  /// `filterRows` pointers to the window rows of the output row's taps, each at block 0, column 0
  /// (the first column output pixel 0 reads).
  @usableFromInline package var rows: UnsafePointer<UnsafeRawPointer>
  /// Bytes between the blocks of a window row.
  @usableFromInline package var rowBlockBytes: Int
  /// The weights of block 0 (`Shape.blockWeightBytes` per block).
  @usableFromInline package var weights: UnsafeRawPointer
  /// `QuadTapDepthwiseKernelGenerator.constantBytes`.
  @usableFromInline package var constants: UnsafeRawPointer
  /// The output of pixel 0 at channel 0.
  @usableFromInline package var output: UnsafeMutableRawPointer
  /// Bytes between the outputs of consecutive pixels.
  @usableFromInline package var outputPixelBytes: Int
  /// Pixels of the row (0 or more).
  @usableFromInline package var pixelCount: Int
  /// 16-channel blocks (1 or more).
  @usableFromInline package var blockCount: Int
  /// Block 0's `RequantizationTable` record (the next blocks' follow it).
  @usableFromInline package var requantization: UnsafeRawPointer
  /// The `RequantizationLanes` (output zero point and clamp).
  @usableFromInline package var requantizationLanes: UnsafeRawPointer
  /// The lanes every block but the last stores, as bits (all 16).
  @usableFromInline package var fullBlockMask: Int
  /// The lanes the last block stores, as bits.
  @usableFromInline package var lastBlockMask: Int

  /// The arguments from their parts.
  @inlinable package init(
    rows: UnsafePointer<UnsafeRawPointer>, rowBlockBytes: Int, weights: UnsafeRawPointer, constants: UnsafeRawPointer,
    output: UnsafeMutableRawPointer, outputPixelBytes: Int, pixelCount: Int, blockCount: Int,
    requantization: UnsafeRawPointer, requantizationLanes: UnsafeRawPointer, lastBlockLanes: Int
  ) {
    precondition(blockCount >= 1 && (1...16).contains(lastBlockLanes), "invalid depthwise blocks")
    self.rows = rows
    self.rowBlockBytes = rowBlockBytes
    self.weights = weights
    self.constants = constants
    self.output = output
    self.outputPixelBytes = outputPixelBytes
    self.pixelCount = pixelCount
    self.blockCount = blockCount
    self.requantization = requantization
    self.requantizationLanes = requantizationLanes
    fullBlockMask = 0xFFFF
    lastBlockMask = (1 << lastBlockLanes) - 1
  }
}

/// Emits one four-tap kernel (see `QuadTapDepthwiseKernelGenerator`).
private struct QuadTapDepthwiseEmitter {
  let shape: QuadTapDepthwiseKernelGenerator.Shape
  var assembler = X86Assembler()

  /// The store mask of the requantization.
  let storeMask = MaskRegister(1)
  /// The filter rows' input pointers.
  let rowRegisters: [GPRegister] = [.rcx, .rdx, .rsi, .r9, .r12, .r13, .r15]
  let saved: [GPRegister] = [.rbx, .rbp, .r12, .r13, .r14, .r15]

  /// Stack slots of the block loop.
  enum BlockSlot: Int32 {
    /// The current block's output of pixel 0.
    case output = 0
    /// The current block's requantization record.
    case record = 8
    /// The current block's weights.
    case weights = 16
    /// Blocks left, this one included.
    case remaining = 24
    /// The first of `maximumFilterRows` slots: each filter row's input pointer at the current block.
    case rows = 32
    /// Bytes of all slots.
    static let frameBytes = Int32(32 + 8 * QuadTapDepthwiseKernelGenerator.maximumFilterRows)
    /// The slot's stack operand.
    var operand: MemoryOperand { MemoryOperand(.rsp, rawValue) }
    /// The stack operand of filter row `row`'s input pointer.
    static func row(_ row: Int) -> MemoryOperand { MemoryOperand(.rsp, BlockSlot.rows.rawValue + Int32(8 * row)) }
  }

  init(shape: QuadTapDepthwiseKernelGenerator.Shape) { self.shape = shape }

  // The vector registers, in order: sums, Σ u sums, permuted inputs, weights, the permutation,
  // the ones and the corrections, the requantization scratch.
  var groupPixels: Int { shape.groupPixels }
  func sum(_ pixel: Int) -> VectorRegister { VectorRegister(pixel) }
  func inputSum(_ pixel: Int) -> VectorRegister { VectorRegister(groupPixels + pixel) }
  var firstInput: Int { groupPixels * (shape.correctsWeights ? 2 : 1) }
  func permuted(_ pixel: Int) -> VectorRegister { VectorRegister(firstInput + pixel % 4) }
  func weight(row: Int, quad: Int) -> VectorRegister { VectorRegister(firstInput + 4 + row * shape.quadsPerRow + quad) }
  var permutation: VectorRegister { VectorRegister(firstInput + 4 + shape.weightVectors) }
  var ones: VectorRegister { VectorRegister(Int(permutation.number) + 1) }
  var corrections: VectorRegister { VectorRegister(Int(permutation.number) + 2) }
  var requantization: RequantizationEmission {
    let scratch = Int(permutation.number) + (shape.correctsWeights ? 3 : 1)
    return RequantizationEmission(
      width: .zmm, output: shape.output, table: .rax, lanes: .rbx,
      scratch: (VectorRegister(scratch), VectorRegister(scratch + 1)), storeMask: storeMask)
  }

  func argument<Value>(_ field: KeyPath<QuadTapDepthwiseArguments, Value>) -> MemoryOperand { argumentOperand(field) }

  /// The output of pixel `pixel` of the group: from r10 (pixels 0–3) or r8 (pixels 4–7).
  func outputAddress(_ pixel: Int) -> MemoryOperand {
    let base: GPRegister = pixel < 4 ? .r10 : .r8
    switch pixel % 4 {
    case 0: return MemoryOperand(base)
    case 1: return MemoryOperand(base, index: .r11, scale: 1)
    case 2: return MemoryOperand(base, index: .r11, scale: 2)
    default: return MemoryOperand(base, index: .rbp, scale: 1)
    }
  }

  /// Sums, requantizes and stores `pixels` pixels, then moves the row pointers, the output and the
  /// pixel counter past them.
  mutating func emitGroup(_ pixels: Int) {
    for pixel in 0..<pixels {
      assembler.zero(.zmm, sum(pixel))
      if shape.correctsWeights { assembler.zero(.zmm, inputSum(pixel)) }
    }
    let pixelBytes = Int32(shape.stride * DepthwiseKernelGenerator.blockChannels)
    for row in 0..<shape.filterRows {
      for quad in 0..<shape.quadsPerRow {
        for pixel in 0..<pixels {
          let input = permuted(pixel)
          assembler.vpermbZMM(
            input, indices: permutation, MemoryOperand(rowRegisters[row], Int32(pixel) * pixelBytes + Int32(quad) * 64))
          assembler.vpdpbusdZMM(sum(pixel), input, weight(row: row, quad: quad))
          if shape.correctsWeights { assembler.vpdpbusdZMM(inputSum(pixel), input, ones) }
        }
      }
    }
    if shape.correctsWeights {
      for pixel in 0..<pixels {
        assembler.packedZMM(.vpmulld, inputSum(pixel), inputSum(pixel), corrections)
        assembler.packedZMM(.vpaddd, sum(pixel), sum(pixel), inputSum(pixel))
      }
    }
    assembler.mov(.rax, BlockSlot.record.operand)
    assembler.mov(.rbx, argument(\.requantizationLanes))
    if pixels > 4 { assembler.lea(.r8, MemoryOperand(.r10, index: .r11, scale: 4)) }
    for pixel in 0..<pixels {
      requantization.emit(&assembler, sums: [sum(pixel)], to: outputAddress(pixel))
    }
    for row in 0..<shape.filterRows { assembler.add(rowRegisters[row], Int32(pixels) * pixelBytes) }
    switch pixels {
    case 1: assembler.add(.r10, .r11)
    default: assembler.lea(.r10, MemoryOperand(.r10, index: .r11, scale: UInt8(pixels)))
    }
    assembler.sub(.r14, Int32(pixels))
  }

  /// The pixel loops of one block: groups of `groupPixels`, then of 4 (when wider), then single pixels.
  mutating func emitPixelLoops() {
    for pixels in groupPixels > 4 ? [groupPixels, 4, 1] : [4, 1] {
      let loop = assembler.makeLabel()
      let next = assembler.makeLabel()
      assembler.bind(loop)
      assembler.cmp(.r14, Int32(pixels))
      assembler.jump(if: .below, to: next)
      emitGroup(pixels)
      assembler.jump(to: loop)
      assembler.bind(next)
    }
  }

  /// Copies argument `field` into stack slot `slot` (through rax).
  mutating func store<Value>(_ field: KeyPath<QuadTapDepthwiseArguments, Value>, in slot: BlockSlot) {
    assembler.mov(.rax, argument(field))
    assembler.mov(slot.operand, .rax)
  }

  /// Adds `step` to the stack slot at `slot` (through rax).
  mutating func advance(_ slot: MemoryOperand, by step: Int32) {
    assembler.mov(.rax, slot)
    assembler.add(.rax, step)
    assembler.mov(slot, .rax)
  }

  mutating func emitKernel() {
    let exit = assembler.makeLabel()
    assembler.saveRegisters(saved)
    assembler.sub(.rsp, BlockSlot.frameBytes)
    assembler.mov(.rax, argument(\.pixelCount))
    assembler.test(.rax, .rax)
    assembler.jump(if: .zero, to: exit)
    assembler.mov(.rax, argument(\.constants))
    assembler.vmovupsZMM(permutation, MemoryOperand(.rax))
    if shape.correctsWeights { assembler.vmovupsZMM(ones, MemoryOperand(.rax, 64)) }
    store(\.blockCount, in: .remaining)
    store(\.output, in: .output)
    store(\.requantization, in: .record)
    store(\.weights, in: .weights)
    assembler.mov(.rax, argument(\.rows))
    for row in 0..<shape.filterRows {
      assembler.mov(.rbx, MemoryOperand(.rax, Int32(8 * row)))
      assembler.mov(BlockSlot.row(row), .rbx)
    }
    assembler.mov(.r11, argument(\.outputPixelBytes))
    assembler.lea(.rbp, MemoryOperand(.r11, index: .r11, scale: 2))
    assembler.kmovw(storeMask, argument(\.fullBlockMask))

    let block = assembler.makeLabel()
    let fullBlock = assembler.makeLabel()
    assembler.bind(block)
    assembler.mov(.rax, BlockSlot.remaining.operand)
    assembler.cmp(.rax, 1)
    assembler.jump(if: .notZero, to: fullBlock)
    assembler.kmovw(storeMask, argument(\.lastBlockMask))
    assembler.bind(fullBlock)
    assembler.mov(.rax, BlockSlot.weights.operand)
    for row in 0..<shape.filterRows {
      for quad in 0..<shape.quadsPerRow {
        assembler.vmovupsZMM(weight(row: row, quad: quad), MemoryOperand(.rax, Int32(row * shape.quadsPerRow + quad) * 64))
      }
    }
    if shape.correctsWeights { assembler.vmovupsZMM(corrections, MemoryOperand(.rax, Int32(shape.weightVectors) * 64)) }
    for row in 0..<shape.filterRows { assembler.mov(rowRegisters[row], BlockSlot.row(row)) }
    assembler.mov(.r10, BlockSlot.output.operand)
    assembler.mov(.r14, argument(\.pixelCount))
    emitPixelLoops()

    assembler.mov(.rbx, argument(\.rowBlockBytes))
    for row in 0..<shape.filterRows {
      assembler.mov(.rax, BlockSlot.row(row))
      assembler.add(.rax, .rbx)
      assembler.mov(BlockSlot.row(row), .rax)
    }
    advance(BlockSlot.output.operand, by: Int32(DepthwiseKernelGenerator.blockChannels))
    advance(BlockSlot.record.operand, by: Int32(RequantizationTable.blockBytes))
    advance(BlockSlot.weights.operand, by: Int32(shape.blockWeightBytes))
    assembler.mov(.rax, BlockSlot.remaining.operand)
    assembler.dec(.rax)
    assembler.mov(BlockSlot.remaining.operand, .rax)
    assembler.jump(if: .notZero, to: block)

    assembler.bind(exit)
    assembler.add(.rsp, BlockSlot.frameBytes)
    assembler.returnFromKernel(restoring: saved)
  }
}

/// The four-tap depthwise kernels of this process, one per `QuadTapDepthwiseKernelGenerator.Shape`,
/// each generated the first time a convolution is prepared with it and mapped with the other
/// kernels the process's prepares reserved (`LazyExecutableKernels.reserve`: one mapping for the
/// whole `allocateTensors()`, not one per shape), then kept for the life of the process (a bounded
/// cache: a network uses a few shapes of about 2 KB each, and the shapes are finitely many). Only
/// on CPUs and OSes with AVX512-VNNI and AVX512_VBMI; the AVX-512 `GeneratedDepthwiseKernels` carry them.
@usableFromInline package final class GeneratedQuadTapDepthwiseKernels: @unchecked Sendable {
  // @unchecked Sendable: `kernels` is read and written only under `mutex`; the rest is immutable
  // but the kernels' tables, which `LazyExecutableKernels` guards.

  /// The shapes asked for so far, each with its one-kernel table, in the order first asked for. A
  /// list searched linearly, not a dictionary: a network uses a few shapes, and the first
  /// dictionary keyed by `Shape` would cost the Swift runtime a scan of every protocol conformance
  /// record (to check `Shape: Hashable`) at prepare.
  private var kernels: [GeneratedShapeKernel] = []
  /// Guards `kernels`.
  private let mutex: UnsafeMutablePointer<pthread_mutex_t>
  /// `QuadTapDepthwiseKernelGenerator.constantBytes`, 64-byte aligned.
  @usableFromInline package let constants: UnsafeRawPointer

  /// A set with no kernel yet: the process's is `supported`; tests make sets of their own.
  package init() {
    mutex = .allocate(capacity: 1)
    pthread_mutex_init(mutex, nil)
    let bytes = QuadTapDepthwiseKernelGenerator.constantBytes
    let constants = UnsafeMutableRawPointer.allocate(byteCount: bytes.count, alignment: 64)
    constants.copyMemory(from: bytes, byteCount: bytes.count)
    self.constants = UnsafeRawPointer(constants)
  }

  deinit {
    pthread_mutex_destroy(mutex)
    mutex.deallocate()
    constants.deallocate()
  }

  /// The kernels, or nil when this CPU, OS or platform lacks AVX-512 with VNNI and VBMI.
  @usableFromInline package static let supported: GeneratedQuadTapDepthwiseKernels? =
    GeneratedKernelISA.supported == .avx512 && DotProductISA.supported.contains(.avx512VNNI)
      && ProcessorFeatures.hasBytePermutes ? GeneratedQuadTapDepthwiseKernels() : nil

  /// The kernel of `shape` (one that `isGenerated`), its code generated on the process's first
  /// request and reserved, to be mapped with every other reserved kernel by the end of
  /// `allocateTensors()` or at its first run. Convolutions ask once, at prepare, and keep it;
  /// whether the OS maps it shows in `QuadTapDepthwiseKernel/isMapped`.
  @usableFromInline package func kernel(_ shape: QuadTapDepthwiseKernelGenerator.Shape) -> QuadTapDepthwiseKernel {
    pthread_mutex_lock(mutex)
    defer { pthread_mutex_unlock(mutex) }
    let code: LazyExecutableKernels
    if let known = kernels.first(where: { $0.shape == shape }) {
      code = known.code
    } else {
      code = LazyExecutableKernels(count: 1) { _ in QuadTapDepthwiseKernelGenerator.code(shape) }
      kernels.append(GeneratedShapeKernel(shape: shape, code: code))
    }
    code.reserve([0])
    return QuadTapDepthwiseKernel(code: code, constants: constants)
  }

  /// One shape and the table of its kernel.
  private struct GeneratedShapeKernel {
    /// The shape.
    let shape: QuadTapDepthwiseKernelGenerator.Shape
    /// Its kernel, made once.
    let code: LazyExecutableKernels
  }
}

/// One generated four-tap depthwise kernel, ready to run once mapped.
@usableFromInline package struct QuadTapDepthwiseKernel {
  /// The kernel's one-entry table (kept alive by the process-wide cache).
  private let code: LazyExecutableKernels
  /// The constants every call passes.
  @usableFromInline package let constants: UnsafeRawPointer

  fileprivate init(code: LazyExecutableKernels, constants: UnsafeRawPointer) {
    self.code = code
    self.constants = constants
  }

  /// True when the kernel is mapped (mapping it now, with every kernel reserved in the process, if
  /// it is not yet); false when the OS or the code budget refuses it, and the caller takes another
  /// route. A mapped kernel stays mapped.
  @usableFromInline package var isMapped: Bool { code.entry(0) != nil }

  /// Runs the kernel (one that `isMapped`) on `arguments`.
  @usableFromInline package func run(_ arguments: inout QuadTapDepthwiseArguments) {
    guard let mapped = code.entry(0) else { preconditionFailure("the four-tap depthwise kernel is not mapped") }
    callKernel(at: mapped, &arguments)
  }
}
