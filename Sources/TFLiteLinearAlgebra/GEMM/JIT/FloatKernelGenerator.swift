/// Generates the float GEMM micro-kernels: `rows` output rows × 16 columns (one packed panel of
/// `PanelPacking`) over a depth block, with AVX2+FMA (two ymm per row) or AVX-512F (one zmm per
/// row, the A value broadcast inside the FMA). The function is
/// `void kernel(const FloatKernelArguments *)` in the System V ABI.
///
/// One call computes `tileCount` tiles of `rows` rows, each `aTileBytes`/`cTileBytes` below the
/// previous one. For each tile:
/// 1. the accumulators start from C (`accumulates` ≠ 0) or from the 16 values at `start` (the bias,
///    or zeros);
/// 2. `depth` steps `acc[r] += A[r][k] · B[k]`, four steps per loop iteration; with few rows the
///    depth is split over two or four accumulator sets (steps k ≡ s mod sets), so that at least
///    eight independent FMA chains hide the FMA latency, and the sets are added at the end. The
///    depth steps run once per segment (`segmentCount`, 1 for a plain GEMM): segment s reads A
///    from `a + s · aSegmentBytes` and continues the panel `bSegmentGapBytes` after the point where
///    segment s − 1 stopped (a convolution's filter rows: the taps of one filter row are contiguous
///    in the input, the rows are not);
/// 3. `min(max(acc, lower), upper)` as TFLite's clamp (NaN passes through; ±infinity for none);
///    then, in the kernels that apply negative slopes (a PRELU folded into the convolution),
///    `acc < 0 ? acc · slope : acc` with the 16 slopes at `negativeSlopes`: an ordered compare, so
///    NaN, +0 and −0 pass unchanged, as in TFLite's `x >= 0 ? x : x · α`;
/// 4. the 16 values of each row are stored to C.
///
/// The column-masked form (`masksColumns`) is for the last panel of an N that is not a multiple of
/// 16: it reads (when accumulating) and writes only the first columns of C, those `columnMask`
/// (AVX2: 16 lane masks) or `laneMask` (AVX-512: 16 bits in k1) select, so it runs on C in place.
///
/// Registers: rdi arguments, rsi/r10 the A/C tile, r8/r9 the A row stride ×1/×3, r11/rbx the C row
/// stride ×1/×3, rdx the panel, rcx the depth counter, r14 the tile counter, r15 the segment
/// counter, rbp the A tile's current segment, rax/r12/r13 the bases of rows 0–4, 5–9, 10–14 (row r
/// is `base + {0, 1, 2, 3, 4} × stride` through the SIB byte). rbx, rbp, r12–r15 are callee-saved
/// and pushed; `vzeroupper` before returning.
@usableFromInline package enum FloatKernelGenerator {
  /// Why a kernel cannot be generated.
  @usableFromInline package enum Failure: Error, Equatable {
    /// `rows` is outside `1...isa.maximumRows`.
    case unsupportedRows(Int, GeneratedKernelISA)
  }

  /// Most rows of one tile: the accumulators (`rows × vectorsPerRow`) must leave registers for the
  /// panel vectors and the broadcast A value.
  @usableFromInline package static func maximumRows(_ isa: GeneratedKernelISA) -> Int {
    switch isa {
    case .avx2: 6
    case .avx512: 14
    }
  }

  /// The machine code of the `rows`-row kernel for `isa`, column-masked when `masksColumns`,
  /// applying the negative slopes after the clamp when `appliesNegativeSlopes`.
  @usableFromInline package static func code(
    isa: GeneratedKernelISA, rows: Int, masksColumns: Bool = false, appliesNegativeSlopes: Bool = false
  ) throws(Failure) -> [UInt8] {
    guard (1...maximumRows(isa)).contains(rows) else { throw .unsupportedRows(rows, isa) }
    var emitter = KernelEmitter(
      isa: isa, rows: rows, masksColumns: masksColumns, appliesNegativeSlopes: appliesNegativeSlopes)
    emitter.emitKernel()
    return emitter.assembler.finishedCode()
  }
}

/// The arguments of a generated float kernel, passed by pointer (the kernel reads each field at its
/// `MemoryLayout` offset). Strides are in bytes.
@usableFromInline package struct FloatKernelArguments {
  /// Row 0 of the first tile of A at the block's first depth.
  @usableFromInline package var a: UnsafePointer<Float>
  /// Bytes between rows of A.
  @usableFromInline package var aRowBytes: Int
  /// Bytes between consecutive tiles of A.
  @usableFromInline package var aTileBytes: Int
  /// The packed panel at the block's first depth (16 floats per depth step).
  @usableFromInline package var b: UnsafePointer<Float>
  /// Depth steps (0 or more).
  @usableFromInline package var depth: Int
  /// Row 0 of the first tile of C (16 floats written per row).
  @usableFromInline package var c: UnsafeMutablePointer<Float>
  /// Bytes between rows of C.
  @usableFromInline package var cRowBytes: Int
  /// Bytes between consecutive tiles of C.
  @usableFromInline package var cTileBytes: Int
  /// 16 starting values (bias or zeros), read when `accumulates` is 0.
  @usableFromInline package var start: UnsafePointer<Float>
  /// Tiles to compute (0 computes nothing).
  @usableFromInline package var tileCount: Int
  /// Nonzero: start from the values in C.
  @usableFromInline package var accumulates: Int
  /// Lower clamp bound (`-infinity` for none).
  @usableFromInline package var lower: Float
  /// Upper clamp bound (`infinity` for none).
  @usableFromInline package var upper: Float
  /// The column-masked AVX2 kernels: 16 lanes, all bits set for the columns to read and write,
  /// zero for the others.
  @usableFromInline package var columnMask: UnsafePointer<Int32>
  /// The column-masked AVX-512 kernels: bit c set for each column c to read and write.
  @usableFromInline package var laneMask: Int
  /// Times the `depth` steps run (1 or more), each segment over its own part of A and the panel.
  @usableFromInline package var segmentCount: Int
  /// Bytes between the first A element of one segment and the next one's.
  @usableFromInline package var aSegmentBytes: Int
  /// Bytes of the panel skipped between a segment's last depth step and the next segment's first.
  @usableFromInline package var bSegmentGapBytes: Int
  /// 16 slopes multiplying the negative results, read by the kernels that apply them.
  @usableFromInline package var negativeSlopes: UnsafePointer<Float>
}

/// Emits one kernel (see `FloatKernelGenerator`).
private struct KernelEmitter {
  let isa: GeneratedKernelISA
  let rows: Int
  /// Reads and writes only the columns of C the arguments' mask selects.
  let masksColumns: Bool
  /// Multiplies the negative results by the arguments' per-column slopes after the clamp.
  let appliesNegativeSlopes: Bool
  var assembler = X86Assembler()

  /// ymm (AVX2, two per row of 16 floats) or zmm (AVX-512, one per row).
  let width: VectorWidth
  /// Vector registers per row.
  var vectorsPerRow: Int { width.vectorsPerRow }
  /// Accumulator sets the depth is split over (1, 2 or 4).
  let sets: Int
  /// Depth steps per main-loop iteration (a multiple of `sets`).
  let unroll = 4
  /// Bytes of one vector register.
  var vectorBytes: Int32 { width.bytes }

  /// Row bases: rows 5g ..< 5g + 5 are addressed from rax, r12 and r13.
  let bases: RowBases
  /// Callee-saved registers the kernel uses, in push order.
  let saved: [GPRegister]

  init(isa: GeneratedKernelISA, rows: Int, masksColumns: Bool, appliesNegativeSlopes: Bool) {
    self.isa = isa
    self.rows = rows
    self.masksColumns = masksColumns
    self.appliesNegativeSlopes = appliesNegativeSlopes
    let width: VectorWidth = isa == .avx2 ? .ymm : .zmm
    let bases = RowBases(registers: [.rax, .r12, .r13], rows: rows)
    let accumulatorBudget = 12
    self.width = width
    self.bases = bases
    sets = [4, 2, 1].first { rows * width.vectorsPerRow * $0 <= accumulatorBudget } ?? 1
    saved = [.rbx, .rbp, .r14, .r15] + Array(bases.registers.dropFirst().prefix(bases.groupCount - 1))
  }

  /// Accumulator of set `set`, row `row`, vector `vector`.
  func accumulator(_ set: Int, _ row: Int, _ vector: Int) -> VectorRegister {
    VectorRegister((set * rows + row) * vectorsPerRow + vector)
  }

  /// The panel vector `vector` of unrolled step `step`.
  func panelRegister(step: Int, vector: Int) -> VectorRegister {
    isa == .avx2 ? VectorRegister(12 + vector) : VectorRegister(28 + step % 4)
  }

  /// The broadcast A value of row `row` (AVX2 only; AVX-512 broadcasts inside the FMA).
  func broadcastRegister(row: Int) -> VectorRegister { VectorRegister(14 + row % 2) }

  /// The clamp bounds, once the panel registers are free.
  var lowerRegister: VectorRegister { isa == .avx2 ? VectorRegister(12) : VectorRegister(26) }
  var upperRegister: VectorRegister { isa == .avx2 ? VectorRegister(13) : VectorRegister(27) }

  /// Offset of an argument field.
  func argument<Value>(_ field: KeyPath<FloatKernelArguments, Value>) -> MemoryOperand { argumentOperand(field) }

  /// Row `row` from the bases set by `setBases`, with the row stride in `stride` and its triple in `triple`.
  func rowAddress(_ row: Int, stride: GPRegister, triple: GPRegister, plus displacement: Int32) -> MemoryOperand {
    bases.address(row, stride: stride, triple: triple, plus: displacement)
  }

  /// Points the row bases at `origin`, `origin + 5·stride`, `origin + 10·stride`.
  mutating func setBases(origin: GPRegister, stride: GPRegister) { bases.point(&assembler, at: origin, stride: stride) }

  /// Advances the A row bases by `bytes`.
  mutating func advanceBases(by bytes: Int32) { bases.advance(&assembler, by: bytes) }

  mutating func load(_ register: VectorRegister, _ memory: MemoryOperand) { assembler.load(width, register, memory) }

  mutating func store(_ memory: MemoryOperand, _ register: VectorRegister) { assembler.store(width, memory, register) }

  mutating func zero(_ register: VectorRegister) { assembler.zero(width, register) }

  /// The column mask of the AVX2 vector `vector` of a row (its lanes of `columnMask`).
  func maskRegister(vector: Int) -> VectorRegister { VectorRegister(14 + vector) }

  /// Loads the AVX2 column masks (through rcx, which is free wherever this is called); the
  /// AVX-512 mask stays in k1 from the start.
  mutating func loadColumnMasks() {
    guard masksColumns, isa == .avx2 else { return }
    let masks = (0..<vectorsPerRow).map { maskRegister(vector: $0) }
    assembler.loadVectors(width, masks, pointedToBy: argument(\.columnMask), through: .rcx)
  }

  /// Loads the accumulator of row vector `vector` from C, only the masked columns when `masksColumns`.
  mutating func loadFromC(_ register: VectorRegister, vector: Int, _ memory: MemoryOperand) {
    guard masksColumns else { return load(register, memory) }
    if isa == .avx2 {
      assembler.vmaskmovpsYMM(register, mask: maskRegister(vector: vector), memory)
    } else {
      zero(register)
      assembler.vmovupsZMM(register, memory, mask: columnMaskRegister)
    }
  }

  /// Stores row vector `vector` to C, only the masked columns when `masksColumns`.
  mutating func storeToC(_ memory: MemoryOperand, vector: Int, _ register: VectorRegister) {
    guard masksColumns else { return store(memory, register) }
    if isa == .avx2 {
      assembler.vmaskmovpsYMM(memory, mask: maskRegister(vector: vector), register)
    } else {
      assembler.vmovupsZMM(memory, register, mask: columnMaskRegister)
    }
  }

  /// The AVX-512 column mask.
  let columnMaskRegister = MaskRegister(1)

  /// Every accumulator of set 0 for all rows and vectors, in order.
  var rowVectors: [(row: Int, vector: Int)] {
    (0..<rows).flatMap { row in (0..<vectorsPerRow).map { (row, $0) } }
  }

  /// One depth step with accumulator set `set`: A at `aDisplacement` bytes from the bases, the
  /// panel at `panelDisplacement` bytes from rdx.
  mutating func depthStep(step: Int, set: Int, aDisplacement: Int32, panelDisplacement: Int32) {
    for vector in 0..<vectorsPerRow {
      load(panelRegister(step: step, vector: vector), MemoryOperand(.rdx, panelDisplacement + Int32(vector) * vectorBytes))
    }
    for row in 0..<rows {
      let a = rowAddress(row, stride: .r8, triple: .r9, plus: aDisplacement)
      if isa == .avx2 {
        let broadcast = broadcastRegister(row: row)
        assembler.vbroadcastssYMM(broadcast, a)
        for vector in 0..<vectorsPerRow {
          assembler.vfmadd231psYMM(accumulator(set, row, vector), panelRegister(step: step, vector: vector), broadcast)
        }
      } else {
        assembler.vfmadd231psZMM(accumulator(set, row, 0), panelRegister(step: step, vector: 0), broadcast: a)
      }
    }
  }

  /// `acc < 0 ? acc · slope : acc` on every accumulator of set 0, the slopes read through rcx
  /// (free after the depth loop). AVX-512: a compare into k2 and a multiply merge-masked by it,
  /// with the slopes and zero in the clamp registers. AVX2: per row vector, the slopes in ymm15,
  /// zero in ymm12, the compare in ymm13 and the product in ymm14, blended by the compare.
  mutating func emitNegativeSlopes() {
    assembler.mov(.rcx, argument(\.negativeSlopes))
    if isa == .avx512 {
      let slopes = lowerRegister, zero = upperRegister, negative = MaskRegister(2)
      load(slopes, MemoryOperand(.rcx))
      self.zero(zero)
      for row in 0..<rows {
        let value = accumulator(0, row, 0)
        assembler.vcmppsZMM(negative, value, zero, .lessThan)
        assembler.packedZMM(.vmulps, value, value, slopes, mask: negative)
      }
      return
    }
    let zero = VectorRegister(12), negative = VectorRegister(13), product = VectorRegister(14)
    let slopes = VectorRegister(15)
    self.zero(zero)
    for vector in 0..<vectorsPerRow {
      load(slopes, MemoryOperand(.rcx, Int32(vector) * vectorBytes))
      for row in 0..<rows {
        let value = accumulator(0, row, vector)
        assembler.vcmppsYMM(negative, value, zero, .lessThan)
        assembler.packedYMM(.vmulps, product, value, slopes)
        assembler.vblendvpsYMM(value, value, product, selector: negative)
      }
    }
  }

  mutating func emitKernel() {
    let panelStep = Int32(GEMMTile.columns * MemoryLayout<Float>.stride)
    let floatBytes = Int32(MemoryLayout<Float>.stride)
    let exit = assembler.makeLabel()
    assembler.saveRegisters(saved)
    if masksColumns && isa == .avx512 { assembler.kmovw(columnMaskRegister, argument(\.laneMask)) }
    assembler.mov(.r14, argument(\.tileCount))
    assembler.test(.r14, .r14)
    assembler.jump(if: .zero, to: exit)
    assembler.mov(.rsi, argument(\.a))
    assembler.mov(.r8, argument(\.aRowBytes))
    assembler.lea(.r9, MemoryOperand(.r8, index: .r8, scale: 2))
    assembler.mov(.r10, argument(\.c))
    assembler.mov(.r11, argument(\.cRowBytes))
    assembler.lea(.rbx, MemoryOperand(.r11, index: .r11, scale: 2))

    let tile = assembler.makeLabel()
    assembler.bind(tile)
    // 1. Start values.
    let fromC = assembler.makeLabel()
    let started = assembler.makeLabel()
    assembler.mov(.rcx, argument(\.accumulates))
    assembler.test(.rcx, .rcx)
    assembler.jump(if: .notZero, to: fromC)
    assembler.mov(.rax, argument(\.start))
    for (row, vector) in rowVectors {
      load(accumulator(0, row, vector), MemoryOperand(.rax, Int32(vector) * vectorBytes))
    }
    assembler.jump(to: started)
    assembler.bind(fromC)
    setBases(origin: .r10, stride: .r11)
    loadColumnMasks()
    for (row, vector) in rowVectors {
      loadFromC(
        accumulator(0, row, vector), vector: vector,
        rowAddress(row, stride: .r11, triple: .rbx, plus: Int32(vector) * vectorBytes))
    }
    assembler.bind(started)
    for set in 1..<sets {
      for (row, vector) in rowVectors { zero(accumulator(set, row, vector)) }
    }

    // 2. The depth loop: `unroll` steps per iteration, then one at a time, once per segment.
    assembler.mov(.rdx, argument(\.b))
    assembler.mov(.rbp, .rsi)
    assembler.mov(.r15, argument(\.segmentCount))
    let segment = assembler.makeLabel()
    assembler.bind(segment)
    setBases(origin: .rbp, stride: .r8)
    assembler.mov(.rcx, argument(\.depth))
    let remainder = assembler.makeLabel()
    let single = assembler.makeLabel()
    let depthDone = assembler.makeLabel()
    assembler.cmp(.rcx, Int32(unroll))
    assembler.jump(if: .below, to: remainder)
    let main = assembler.makeLabel()
    assembler.bind(main)
    for step in 0..<unroll {
      depthStep(
        step: step, set: step % sets, aDisplacement: Int32(step) * floatBytes, panelDisplacement: Int32(step) * panelStep)
    }
    assembler.add(.rdx, Int32(unroll) * panelStep)
    advanceBases(by: Int32(unroll) * floatBytes)
    assembler.sub(.rcx, Int32(unroll))
    assembler.cmp(.rcx, Int32(unroll))
    assembler.jump(if: .aboveOrEqual, to: main)
    assembler.bind(remainder)
    assembler.test(.rcx, .rcx)
    assembler.jump(if: .zero, to: depthDone)
    assembler.bind(single)
    depthStep(step: 0, set: 0, aDisplacement: 0, panelDisplacement: 0)
    assembler.add(.rdx, panelStep)
    advanceBases(by: floatBytes)
    assembler.dec(.rcx)
    assembler.jump(if: .notZero, to: single)
    assembler.bind(depthDone)
    assembler.add(.rbp, argument(\.aSegmentBytes))
    assembler.add(.rdx, argument(\.bSegmentGapBytes))
    assembler.dec(.r15)
    assembler.jump(if: .notZero, to: segment)
    for set in 1..<sets {
      for (row, vector) in rowVectors {
        let sum = accumulator(0, row, vector)
        let part = accumulator(set, row, vector)
        isa == .avx2 ? assembler.packedYMM(.vaddps, sum, sum, part) : assembler.packedZMM(.vaddps, sum, sum, part)
      }
    }

    // 3. Clamp: the accumulator is the second operand, so a NaN in it is what comes out.
    isa == .avx2
      ? assembler.vbroadcastssYMM(lowerRegister, argument(\.lower))
      : assembler.vbroadcastssZMM(lowerRegister, argument(\.lower))
    isa == .avx2
      ? assembler.vbroadcastssYMM(upperRegister, argument(\.upper))
      : assembler.vbroadcastssZMM(upperRegister, argument(\.upper))
    for (row, vector) in rowVectors {
      assembler.clamp(width, accumulator(0, row, vector), lower: lowerRegister, upper: upperRegister)
    }
    if appliesNegativeSlopes { emitNegativeSlopes() }

    // 4. Store, then the next tile.
    setBases(origin: .r10, stride: .r11)
    loadColumnMasks()
    for (row, vector) in rowVectors {
      storeToC(
        rowAddress(row, stride: .r11, triple: .rbx, plus: Int32(vector) * vectorBytes), vector: vector,
        accumulator(0, row, vector))
    }
    assembler.add(.rsi, argument(\.aTileBytes))
    assembler.add(.r10, argument(\.cTileBytes))
    assembler.dec(.r14)
    assembler.jump(if: .notZero, to: tile)
    assembler.bind(exit)
    assembler.returnFromKernel(restoring: saved)
  }
}
