/// Generates the 8-bit dot-product micro-kernels: `rows` rows × `columns` panels of 16 columns of
/// Int32 sums C = A · B, A unsigned bytes, B signed bytes, with `vpdpbusd` (AVX512-VNNI on one zmm
/// per row and panel, or AVX-VNNI on two ymm per row, one panel). The function is
/// `void kernel(const DotProductKernelArguments *)` in the System V ABI.
///
/// B is `columns` consecutive panels of `QuadPanelMatrices`, `panelBytes` apart: per step of four
/// depths, 16 columns × 4 signed bytes (the four depths of one column fill one 32-bit lane), so one
/// `vpdpbusd` adds four depth steps of one row and panel, the row's four A bytes broadcast to every
/// lane. Each step:
/// 1. the 64 bytes of every panel are loaded (one zmm, or two ymm);
/// 2. for every row, its four A bytes are broadcast once and `acc[r][p] += dot(A quad, B quad)`
///    for every panel p: one broadcast serves `columns` multiply-adds, so a tile of several panels
///    loads less per multiply-add than a single-panel one.
/// The sums wrap in Int32 as `vpdpbusd` does (and LiteRT's int32 accumulators); afterwards the 16
/// sums of each row and panel are stored to C (panel p at column 16p), or, in the requantizing
/// variants, requantized in registers (`RequantizationEmission`, with panel p's record `p` records
/// after the arguments' table, and the lanes; the sums start from the record's biases) and stored
/// as 16 bytes per row and panel, or, in the store-masking variants (one panel, zmm), as the bytes
/// of the columns the arguments' `storeMask` sets (a partial last panel written straight to C).
///
/// Registers: rdi arguments, rax and r10 the bases of rows 0–4 and 5–9 (row r is
/// `base + {0, 1, 2, 3, 4} × stride` through the SIB byte), r8/r9 the row stride ×1/×3, rdx the
/// first panel, rsi/r11 the panel distance ×1/×3 during the steps, rcx the step counter; in the
/// requantizing variants rsi the table and r11 the lanes afterwards, the panel registers the
/// emission's scratch, and one more zmm the sign flip of the variants reading int8 A; only
/// caller-saved registers, `vzeroupper` before returning.
@usableFromInline package enum DotProductKernelGenerator {
  /// Why a kernel cannot be generated.
  @usableFromInline package enum Failure: Error, Equatable {
    /// `rows` is outside `1...maximumRows(isa, columns:)`.
    case unsupportedRows(Int, DotProductISA)
    /// `columns` is outside `1...maximumColumns(isa)`.
    case unsupportedColumns(Int, DotProductISA)
    /// Flipping A's sign bits in the kernel needs AVX-512's broadcast operands.
    case unsupportedSignFlip(DotProductISA)
    /// Masked byte stores need AVX-512's mask registers, a requantizing kernel and one panel.
    case unsupportedStoreMask(DotProductISA)
  }

  /// True when `isa`'s kernels can read int8 A as it is, flipping its sign bits (A + 128) as they
  /// broadcast it: one `vpxord` with a broadcast operand in place of `vpbroadcastd`, no extra instruction.
  @usableFromInline package static func flipsSigns(_ isa: DotProductISA) -> Bool { isa == .avx512VNNI }

  /// True when `isa`'s one-panel requantizing kernels can store only some of a row's 16 bytes
  /// (`vpmovdb` under a mask register), so that a partial last panel of N < 16 columns (or N mod 16)
  /// is written straight to C.
  @usableFromInline package static func masksStores(_ isa: DotProductISA) -> Bool { isa == .avx512VNNI }

  /// Most panels of one tile: AVX-512's 32 registers hold up to four panels' accumulators, AVX-VNNI's
  /// 16 only one.
  @usableFromInline package static func maximumColumns(_ isa: DotProductISA) -> Int {
    switch isa {
    case .avxVNNI: 1
    case .avx512VNNI: 4
    }
  }

  /// Most rows of one tile of `columns` panels: the accumulators (at most 24 zmm past one panel,
  /// whose tile stays at 10 rows, the most the two row bases address) must leave registers for
  /// the panels, the broadcasts and the sign flip.
  @usableFromInline package static func maximumRows(_ isa: DotProductISA, columns: Int = 1) -> Int {
    switch isa {
    case .avxVNNI: 6
    case .avx512VNNI: columns <= 2 ? 10 : 24 / columns
    }
  }

  /// The machine code of the `rows` × `columns`-panel kernel for `isa`: storing Int32 sums, or
  /// requantized `output` bytes when `output` is given (with the steps of `form`); reading A as
  /// int8 bytes to flip when `flipsSign`; storing only the columns of the arguments' `storeMask`
  /// when `masksStore`.
  @usableFromInline package static func code(
    isa: DotProductISA, rows: Int, columns: Int = 1, output: RequantizedOutput? = nil,
    form: RequantizationForm = .complete, flipsSign: Bool = false, masksStore: Bool = false
  ) throws(Failure) -> [UInt8] {
    guard (1...maximumColumns(isa)).contains(columns) else { throw .unsupportedColumns(columns, isa) }
    guard (1...maximumRows(isa, columns: columns)).contains(rows) else { throw .unsupportedRows(rows, isa) }
    guard !flipsSign || flipsSigns(isa) else { throw .unsupportedSignFlip(isa) }
    guard !masksStore || (masksStores(isa) && output != nil && columns == 1) else { throw .unsupportedStoreMask(isa) }
    var emitter = DotProductEmitter(
      isa: isa, rows: rows, columns: columns, output: output, form: form, flipsSign: flipsSign, masksStore: masksStore)
    emitter.emitKernel()
    return emitter.assembler.finishedCode()
  }
}

/// The arguments of a generated dot-product kernel, passed by pointer (the kernel reads each field
/// at its `MemoryLayout` offset). Strides are in bytes.
@usableFromInline package struct DotProductKernelArguments {
  /// Row 0 of A at depth 0; each row holds `4 × steps` bytes.
  @usableFromInline package var a: UnsafePointer<UInt8>
  /// Bytes between rows of A.
  @usableFromInline package var aRowBytes: Int
  /// The first packed panel (64 bytes per step).
  @usableFromInline package var b: UnsafePointer<Int8>
  /// Steps of four depths (0 or more).
  @usableFromInline package var steps: Int
  /// Row 0 of C (16 sums, or 16 requantized bytes, written per row and panel).
  @usableFromInline package var c: UnsafeMutableRawPointer
  /// Bytes between rows of C.
  @usableFromInline package var cRowBytes: Int
  /// The requantizing variants' `RequantizationTable` record of the 16 columns.
  @usableFromInline package var table: UnsafeRawPointer?
  /// The requantizing variants' `RequantizationLanes`.
  @usableFromInline package var lanes: UnsafeRawPointer?
  /// What the sign-flipping variants XOR each A quad with: 0x80 in every byte.
  @usableFromInline package var signFlip: UInt32 = 0x8080_8080
  /// The store-masking variants' columns to store: bit c for column c (the low 16 bits are read).
  @usableFromInline package var storeMask: UInt32 = 0xFFFF
  /// Bytes from one panel to the next (read by the kernels of more than one panel).
  @usableFromInline package var panelBytes: Int

  /// The arguments from their parts.
  @usableFromInline package init(
    a: UnsafePointer<UInt8>, aRowBytes: Int, b: UnsafePointer<Int8>, steps: Int, c: UnsafeMutableRawPointer,
    cRowBytes: Int, table: UnsafeRawPointer? = nil, lanes: UnsafeRawPointer? = nil, panelBytes: Int = 0
  ) {
    self.panelBytes = panelBytes
    self.a = a
    self.aRowBytes = aRowBytes
    self.b = b
    self.steps = steps
    self.c = c
    self.cRowBytes = cRowBytes
    self.table = table
    self.lanes = lanes
  }

  /// Byte offsets of the fields, as constants: a key path's first use in a process builds its
  /// metadata at run time, which every 8-bit model's load paid for in the emitter. (Checked
  /// against `MemoryLayout.offset(of:)` by `BatchedMappingTests.testDotProductArgumentOffsetsMatchTheLayout`.)
  package enum Field: Int32, CaseIterable {
    case a = 0, aRowBytes = 8, b = 16, steps = 24, c = 32, cRowBytes = 40, table = 48, lanes = 56, signFlip = 64
    case storeMask = 68
    case panelBytes = 72

    /// The field in the arguments structure rdi points to (the kernels' only parameter).
    var operand: MemoryOperand { MemoryOperand(.rdi, rawValue) }
  }
}

/// Emits one kernel (see `DotProductKernelGenerator`).
private struct DotProductEmitter {
  let isa: DotProductISA
  let rows: Int
  /// Panels of 16 columns.
  let columns: Int
  /// The requantized output type, or nil to store the Int32 sums.
  let output: RequantizedOutput?
  /// The requantization's steps.
  let form: RequantizationForm
  /// A holds int8 bytes whose sign bits the kernel flips (zmm only).
  let flipsSign: Bool
  /// The requantized bytes are stored under the arguments' `storeMask` (zmm, one panel only).
  let masksStore: Bool
  var assembler = X86Assembler()
  /// ymm (AVX-VNNI, two per row) or zmm (AVX512-VNNI, one per row).
  let width: VectorWidth
  /// Rows 5g ..< 5g + 5 of A or C are addressed from rax (g = 0) and r10 (g = 1).
  let bases: RowBases

  init(
    isa: DotProductISA, rows: Int, columns: Int, output: RequantizedOutput?, form: RequantizationForm, flipsSign: Bool,
    masksStore: Bool
  ) {
    self.isa = isa
    self.masksStore = masksStore
    self.rows = rows
    self.columns = columns
    self.output = output
    self.form = form
    self.flipsSign = flipsSign
    width = isa == .avxVNNI ? .ymm : .zmm
    bases = RowBases(registers: [.rax, .r10], rows: rows)
  }

  /// Vectors of one row across the tile's panels.
  var vectorsPerRow: Int { columns * width.vectorsPerRow }

  /// Accumulator of row `row`, vector `vector` (panel `vector / width.vectorsPerRow`).
  func accumulator(_ row: Int, _ vector: Int) -> VectorRegister { VectorRegister(row * vectorsPerRow + vector) }

  /// Panel vector `vector` of the current step (after every accumulator and the sign flip: zmm26–29).
  func panelRegister(_ vector: Int) -> VectorRegister { VectorRegister(width == .ymm ? 12 + vector : 26 + vector) }

  /// Vector `vector` of the current step's panels: panel `vector / width.vectorsPerRow` is rsi
  /// (its distance), twice that or r11 (three times it) past the first.
  func panelAddress(_ vector: Int) -> MemoryOperand {
    let part = Int32(vector % width.vectorsPerRow) * width.bytes
    switch vector / width.vectorsPerRow {
    case 0: return MemoryOperand(.rdx, part)
    case 1: return MemoryOperand(.rdx, index: .rsi, scale: 1, part)
    case 2: return MemoryOperand(.rdx, index: .rsi, scale: 2, part)
    default: return MemoryOperand(.rdx, index: .r11, scale: 1, part)
    }
  }

  /// The broadcast A quad of row `row` (two registers in turn, so consecutive rows do not wait).
  func broadcastRegister(row: Int) -> VectorRegister { VectorRegister(width == .ymm ? 14 + row % 2 : 30 + row % 2) }

  /// Row `row`'s address (r8 = stride, r9 = 3 × stride).
  func rowAddress(_ row: Int, plus displacement: Int32 = 0) -> MemoryOperand {
    bases.address(row, stride: .r8, triple: .r9, plus: displacement)
  }

  /// Loads the origin and stride of A or C into rax/r8 and derives r9 and (past five rows) r10.
  mutating func setBases(origin: DotProductKernelArguments.Field, stride: DotProductKernelArguments.Field) {
    assembler.mov(.rax, origin.operand)
    assembler.mov(.r8, stride.operand)
    assembler.lea(.r9, MemoryOperand(.r8, index: .r8, scale: 2))
    bases.point(&assembler, at: .rax, stride: .r8)
  }

  mutating func emitKernel() {
    if output != nil {
      // The requantizing variants start every row's sums from its channels' biases (step 1 of the
      // requantization, which then skips it; Int32 sums wrap either way).
      assembler.mov(.rsi, DotProductKernelArguments.Field.table.operand)
      for row in 0..<rows {
        for vector in 0..<vectorsPerRow {
          let panel = Int32(vector / width.vectorsPerRow)
          let part = Int32(vector % width.vectorsPerRow) * width.bytes
          assembler.load(
            width, accumulator(row, vector),
            MemoryOperand(
              .rsi, panel * Int32(RequantizationTable.blockBytes) + RequantizationTable.Field.bias.offset + part))
        }
      }
    } else {
      for row in 0..<rows {
        for vector in 0..<vectorsPerRow { assembler.zero(width, accumulator(row, vector)) }
      }
    }
    // zmm25 (past the at most 24 accumulators of the zmm kernels) holds the sign flip of every lane.
    let flip = VectorRegister(25)
    if flipsSign { assembler.vpbroadcastdZMM(flip, DotProductKernelArguments.Field.signFlip.operand) }
    setBases(origin: .a, stride: .aRowBytes)
    assembler.mov(.rdx, DotProductKernelArguments.Field.b.operand)
    if columns > 1 {
      assembler.mov(.rsi, DotProductKernelArguments.Field.panelBytes.operand)
      assembler.lea(.r11, MemoryOperand(.rsi, index: .rsi, scale: 2))
    }
    assembler.mov(.rcx, DotProductKernelArguments.Field.steps.operand)
    let done = assembler.makeLabel()
    let step = assembler.makeLabel()
    assembler.test(.rcx, .rcx)
    assembler.jump(if: .zero, to: done)
    assembler.bind(step)
    for vector in 0..<vectorsPerRow { assembler.load(width, panelRegister(vector), panelAddress(vector)) }
    for row in 0..<rows {
      let quad = broadcastRegister(row: row)
      if flipsSign {
        assembler.vpxordZMM(quad, flip, broadcast: rowAddress(row))
      } else {
        width == .ymm ? assembler.vpbroadcastdYMM(quad, rowAddress(row)) : assembler.vpbroadcastdZMM(quad, rowAddress(row))
      }
      for vector in 0..<vectorsPerRow {
        width == .ymm
          ? assembler.vpdpbusdYMM(accumulator(row, vector), quad, panelRegister(vector))
          : assembler.vpdpbusdZMM(accumulator(row, vector), quad, panelRegister(vector))
      }
    }
    assembler.add(.rdx, 64)
    bases.advance(&assembler, by: 4)
    assembler.dec(.rcx)
    assembler.jump(if: .notZero, to: step)
    assembler.bind(done)
    setBases(origin: .c, stride: .cRowBytes)
    if let output {
      // The panel registers are free now: they are the emission's scratch.
      assembler.mov(.rsi, DotProductKernelArguments.Field.table.operand)
      assembler.mov(.r11, DotProductKernelArguments.Field.lanes.operand)
      let storeMask: MaskRegister? = masksStore ? MaskRegister(1) : nil
      if let storeMask { assembler.kmovw(storeMask, DotProductKernelArguments.Field.storeMask.operand) }
      let emission = RequantizationEmission(
        width: width, output: output, table: .rsi, lanes: .r11,
        scratch: (panelRegister(0), panelRegister(1)), storeMask: storeMask, addsBias: false, form: form)
      for column in 0..<columns {
        // Panel `column`'s 16 channels: the next record of the table, 16 bytes further in each row.
        if column > 0 { assembler.add(.rsi, Int32(RequantizationTable.blockBytes)) }
        for row in 0..<rows {
          emission.emit(
            &assembler, sums: (0..<width.vectorsPerRow).map { accumulator(row, column * width.vectorsPerRow + $0) },
            to: rowAddress(row, plus: Int32(column * GEMMTile.columns)))
        }
      }
    } else {
      for row in 0..<rows {
        for vector in 0..<vectorsPerRow {
          assembler.store(width, rowAddress(row, plus: Int32(vector) * width.bytes), accumulator(row, vector))
        }
      }
    }
    assembler.returnFromKernel(restoring: [])
  }
}
