/// Generates the 8-bit dot-product micro-kernels: `rows` rows × 16 columns of Int32 sums
/// C = A · B, A unsigned bytes, B signed bytes, with `vpdpbusd` (AVX512-VNNI on one zmm per row,
/// or AVX-VNNI on two ymm per row). The function is `void kernel(const DotProductKernelArguments *)`
/// in the System V ABI.
///
/// B is a panel of `QuadPanelMatrices`: per step of four depths, 16 columns × 4 signed bytes (the
/// four depths of one column fill one 32-bit lane), so one `vpdpbusd` adds four depth steps of one
/// row, the row's four A bytes broadcast to every lane. Each step:
/// 1. the 64 panel bytes are loaded (one zmm or two ymm);
/// 2. for every row, its four A bytes are broadcast and `acc[r] += dot(A quad, B quad)` per lane.
/// The sums wrap in Int32 as `vpdpbusd` does (and LiteRT's int32 accumulators); afterwards the 16
/// sums of each row are stored to C, or, in the requantizing variants, requantized in registers
/// (`RequantizationEmission`, with the arguments' table and lanes) and stored as 16 bytes per row.
///
/// Registers: rdi arguments, rax and r10 the bases of rows 0–4 and 5–9 (row r is
/// `base + {0, 1, 2, 3, 4} × stride` through the SIB byte), r8/r9 the row stride ×1/×3, rdx the
/// panel, rcx the step counter; in the requantizing variants rsi the table and r11 the lanes, the
/// panel registers the emission's scratch, and zmm27 the sign flip of the variants reading int8 A;
/// only caller-saved registers, `vzeroupper` before returning.
@usableFromInline package enum DotProductKernelGenerator {
  /// Why a kernel cannot be generated.
  @usableFromInline package enum Failure: Error, Equatable {
    /// `rows` is outside `1...maximumRows(isa)`.
    case unsupportedRows(Int, DotProductISA)
    /// Flipping A's sign bits in the kernel needs AVX-512's broadcast operands.
    case unsupportedSignFlip(DotProductISA)
  }

  /// True when `isa`'s kernels can read int8 A as it is, flipping its sign bits (A + 128) as they
  /// broadcast it: one `vpxord` with a broadcast operand in place of `vpbroadcastd`, no extra instruction.
  @usableFromInline package static func flipsSigns(_ isa: DotProductISA) -> Bool { isa == .avx512VNNI }

  /// Most rows of one tile: the accumulators must leave registers for the panel and the broadcast.
  @usableFromInline package static func maximumRows(_ isa: DotProductISA) -> Int {
    switch isa {
    case .avxVNNI: 6
    case .avx512VNNI: 10
    }
  }

  /// The machine code of the `rows`-row kernel for `isa`: storing Int32 sums, or requantized
  /// `output` bytes when `output` is given; reading A as int8 bytes to flip when `flipsSign`.
  @usableFromInline package static func code(
    isa: DotProductISA, rows: Int, output: RequantizedOutput? = nil, flipsSign: Bool = false
  ) throws(Failure) -> [UInt8] {
    guard (1...maximumRows(isa)).contains(rows) else { throw .unsupportedRows(rows, isa) }
    guard !flipsSign || flipsSigns(isa) else { throw .unsupportedSignFlip(isa) }
    var emitter = DotProductEmitter(isa: isa, rows: rows, output: output, flipsSign: flipsSign)
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
  /// The packed panel (64 bytes per step).
  @usableFromInline package var b: UnsafePointer<Int8>
  /// Steps of four depths (0 or more).
  @usableFromInline package var steps: Int
  /// Row 0 of C (16 sums, or 16 requantized bytes, written per row).
  @usableFromInline package var c: UnsafeMutableRawPointer
  /// Bytes between rows of C.
  @usableFromInline package var cRowBytes: Int
  /// The requantizing variants' `RequantizationTable` record of the 16 columns.
  @usableFromInline package var table: UnsafeRawPointer?
  /// The requantizing variants' `RequantizationLanes`.
  @usableFromInline package var lanes: UnsafeRawPointer?
  /// What the sign-flipping variants XOR each A quad with: 0x80 in every byte.
  @usableFromInline package var signFlip: UInt32 = 0x8080_8080

  /// The arguments from their parts.
  @usableFromInline package init(
    a: UnsafePointer<UInt8>, aRowBytes: Int, b: UnsafePointer<Int8>, steps: Int, c: UnsafeMutableRawPointer,
    cRowBytes: Int, table: UnsafeRawPointer? = nil, lanes: UnsafeRawPointer? = nil
  ) {
    self.a = a
    self.aRowBytes = aRowBytes
    self.b = b
    self.steps = steps
    self.c = c
    self.cRowBytes = cRowBytes
    self.table = table
    self.lanes = lanes
  }
}

/// Emits one kernel (see `DotProductKernelGenerator`).
private struct DotProductEmitter {
  let isa: DotProductISA
  let rows: Int
  /// The requantized output type, or nil to store the Int32 sums.
  let output: RequantizedOutput?
  /// A holds int8 bytes whose sign bits the kernel flips (zmm only).
  let flipsSign: Bool
  var assembler = X86Assembler()
  /// ymm (AVX-VNNI, two per row) or zmm (AVX512-VNNI, one per row).
  let width: VectorWidth
  /// Rows 5g ..< 5g + 5 of A or C are addressed from rax (g = 0) and r10 (g = 1).
  let bases: RowBases

  init(isa: DotProductISA, rows: Int, output: RequantizedOutput?, flipsSign: Bool) {
    self.isa = isa
    self.rows = rows
    self.output = output
    self.flipsSign = flipsSign
    width = isa == .avxVNNI ? .ymm : .zmm
    bases = RowBases(registers: [.rax, .r10], rows: rows)
  }

  /// Accumulator of row `row`, vector `vector`.
  func accumulator(_ row: Int, _ vector: Int) -> VectorRegister { VectorRegister(row * width.vectorsPerRow + vector) }

  /// Panel vector `vector` of the current step (after every accumulator).
  func panelRegister(_ vector: Int) -> VectorRegister { VectorRegister(width == .ymm ? 12 + vector : 28 + vector) }

  /// The broadcast A quad of row `row` (two registers in turn, so consecutive rows do not wait).
  func broadcastRegister(row: Int) -> VectorRegister { VectorRegister(width == .ymm ? 14 + row % 2 : 30 + row % 2) }

  /// Row `row`'s address (r8 = stride, r9 = 3 × stride).
  func rowAddress(_ row: Int, plus displacement: Int32 = 0) -> MemoryOperand {
    bases.address(row, stride: .r8, triple: .r9, plus: displacement)
  }

  /// Loads the origin and stride of A or C into rax/r8 and derives r9 and (past five rows) r10.
  mutating func setBases<Origin>(
    origin: KeyPath<DotProductKernelArguments, Origin>, stride: KeyPath<DotProductKernelArguments, Int>
  ) {
    assembler.mov(.rax, argumentOperand(origin))
    assembler.mov(.r8, argumentOperand(stride))
    assembler.lea(.r9, MemoryOperand(.r8, index: .r8, scale: 2))
    bases.point(&assembler, at: .rax, stride: .r8)
  }

  mutating func emitKernel() {
    for row in 0..<rows {
      for vector in 0..<width.vectorsPerRow { assembler.zero(width, accumulator(row, vector)) }
    }
    // zmm27 (free in the zmm kernels) holds the sign flip of every lane.
    let flip = VectorRegister(27)
    if flipsSign { assembler.vpbroadcastdZMM(flip, argumentOperand(\DotProductKernelArguments.signFlip)) }
    setBases(origin: \.a, stride: \.aRowBytes)
    assembler.mov(.rdx, argumentOperand(\DotProductKernelArguments.b))
    assembler.mov(.rcx, argumentOperand(\DotProductKernelArguments.steps))
    let done = assembler.makeLabel()
    let step = assembler.makeLabel()
    assembler.test(.rcx, .rcx)
    assembler.jump(if: .zero, to: done)
    assembler.bind(step)
    for vector in 0..<width.vectorsPerRow {
      assembler.load(width, panelRegister(vector), MemoryOperand(.rdx, Int32(vector) * width.bytes))
    }
    for row in 0..<rows {
      let quad = broadcastRegister(row: row)
      if flipsSign {
        assembler.vpxordZMM(quad, flip, broadcast: rowAddress(row))
      } else {
        width == .ymm ? assembler.vpbroadcastdYMM(quad, rowAddress(row)) : assembler.vpbroadcastdZMM(quad, rowAddress(row))
      }
      for vector in 0..<width.vectorsPerRow {
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
    setBases(origin: \.c, stride: \.cRowBytes)
    if let output {
      // The panel registers are free now: they are the emission's scratch.
      assembler.mov(.rsi, argumentOperand(\DotProductKernelArguments.table))
      assembler.mov(.r11, argumentOperand(\DotProductKernelArguments.lanes))
      let emission = RequantizationEmission(
        width: width, output: output, table: .rsi, lanes: .r11,
        scratch: (panelRegister(0), panelRegister(1)))
      for row in 0..<rows {
        emission.emit(
          &assembler, sums: (0..<width.vectorsPerRow).map { accumulator(row, $0) }, to: rowAddress(row))
      }
    } else {
      for row in 0..<rows {
        for vector in 0..<width.vectorsPerRow {
          assembler.store(width, rowAddress(row, plus: Int32(vector) * width.bytes), accumulator(row, vector))
        }
      }
    }
    assembler.returnFromKernel(restoring: [])
  }
}
