// Generated kernels of the dynamic-range (hybrid) path, giving exactly the values of the runtime's
// Swift code (`HybridInputQuantization`, `HybridTileColumns`), in AVX2 (two ymm per 16 values) and
// AVX-512 (one zmm):
// - The range scan: the smallest and largest of whole blocks of 16 floats, each lane kept as
//   `v < low ? v : low` and `v > high ? v : high` from the run's first value (`vminps`/`vmaxps`
//   with the new value as first operand: a NaN met is passed over, a NaN first value stays). Four
//   vectors are scanned side by side and folded at the end; the lanes are written out and merged
//   by the caller. With a NaN first value every lane is NaN, and with any other first value no lane
//   ever is, so how lanes are grouped cannot change the range (only which of two equal zeros is
//   kept, which no scale depends on).
// - The block quantizer: LiteRT's rounding of whole blocks of eight, `x · inverseScale ± 0.5`
//   (the sign of the product) truncated toward zero and clamped to `lowest ... highest`, NaN giving
//   0, plus the zero point. The clamp runs in float before the truncation (`vmaxps`/`vminps` with
//   the value second, so NaN passes through); `vcvttps2dq` then truncates, giving 0x80000000 only
//   for NaN, which a left shift by one and an arithmetic right shift by one turn into 0 (every other
//   value is within ±255 and keeps its value). The zero point is added and the low byte of each
//   lane stored, XORed with 0x80 for the unsigned form (q + 128): `vpmovdb` on AVX-512, the
//   saturating packs (exact, as every value is within −128...127) on AVX2.
// - The float epilogue of a 16-column tile of GEMM sums: for each row, (sum − correction) converted
//   to float (`vcvtdq2ps`, round to nearest as Swift's conversion), times the first scales, times
//   the second scale, plus the bias, clamped as `FloatClampRange.apply` (NaN passes), and the
//   tile's real columns stored (a k-mask on AVX-512, `vmaskmovps` on AVX2). The caller chooses the
//   factors so that the products are LiteRT's: (sum · weight scale) · input scale, or
//   sum · (input scale · weight scale) · 1, which rounds the same as without the factor 1.

/// The arguments of the range scan kernel, passed by pointer (the kernel reads each field at its
/// `MemoryLayout` offset).
@usableFromInline package struct HybridRangeKernelArguments {
  /// The first of `blockCount` × 16 floats.
  @usableFromInline package var input: UnsafePointer<Float>
  /// Blocks of 16 floats (0 or more).
  @usableFromInline package var blockCount: Int
  /// The value every lane starts from (the run's first value).
  @usableFromInline package var first: Float
  /// Room for the 16 lanes' smallest values (8 written on AVX2).
  @usableFromInline package var lows: UnsafeMutablePointer<Float>
  /// Room for the 16 lanes' largest values (8 written on AVX2).
  @usableFromInline package var highs: UnsafeMutablePointer<Float>
}

/// The arguments of the block quantizer kernel, passed by pointer.
@usableFromInline package struct HybridQuantizeKernelArguments {
  /// The first of `blockCount` × 16 floats.
  @usableFromInline package var input: UnsafePointer<Float>
  /// The first of `blockCount` × 16 stored bytes.
  @usableFromInline package var output: UnsafeMutableRawPointer
  /// Blocks of 16 values (0 or more).
  @usableFromInline package var blockCount: Int
  /// 127 / range (symmetric) or 1 / scale (asymmetric).
  @usableFromInline package var inverseScale: Float
  /// The smallest rounded value kept (a whole number, at most 0).
  @usableFromInline package var lowest: Float
  /// The largest rounded value kept (a whole number, at least 0).
  @usableFromInline package var highest: Float
  /// Added to every rounded value (the int8 zero point).
  @usableFromInline package var zeroPoint: Int32
  /// XORed into every stored byte: 0x80808080 for the unsigned form, else 0.
  @usableFromInline package var flip: UInt32
  /// 0x80000000, the float sign bit.
  @usableFromInline package var signBit: UInt32 = 0x8000_0000
  /// 0.5, given the product's sign before it is added.
  @usableFromInline package var half: Float = 0.5

  /// The arguments from their parts.
  @inlinable package init(
    input: UnsafePointer<Float>, output: UnsafeMutableRawPointer, blockCount: Int, inverseScale: Float, lowest: Float,
    highest: Float, zeroPoint: Int32, unsigned: Bool
  ) {
    self.input = input
    self.output = output
    self.blockCount = blockCount
    self.inverseScale = inverseScale
    self.lowest = lowest
    self.highest = highest
    self.zeroPoint = zeroPoint
    flip = unsigned ? 0x8080_8080 : 0
  }
}

/// The arguments of the float epilogue kernel, passed by pointer.
@usableFromInline package struct HybridEpilogueKernelArguments {
  /// Row 0's 16 Int32 sums.
  @usableFromInline package var sums: UnsafePointer<Int32>
  /// Bytes between rows of sums.
  @usableFromInline package var sumsStride: Int
  /// Row 0's first output.
  @usableFromInline package var output: UnsafeMutablePointer<Float>
  /// Bytes between output rows.
  @usableFromInline package var outputStride: Int
  /// Rows (0 or more).
  @usableFromInline package var rows: Int
  /// 16 Int32 values taken from every row's sums (the stored zero point times each column's weight sum).
  @usableFromInline package var correction: UnsafePointer<Int32>
  /// 16 floats the corrected sums are multiplied by first.
  @usableFromInline package var firstScales: UnsafePointer<Float>
  /// The factor of every lane after that.
  @usableFromInline package var secondScale: Float
  /// 16 floats added after the scales.
  @usableFromInline package var bias: UnsafePointer<Float>
  /// The clamp's lower bound.
  @usableFromInline package var lower: Float
  /// The clamp's upper bound.
  @usableFromInline package var upper: Float
  /// Bit i set when lane i is stored (AVX-512; bits 0–15).
  @usableFromInline package var laneBits: Int
  /// 16 lanes, −1 where the lane is stored, 0 elsewhere (AVX2).
  @usableFromInline package var laneMasks: UnsafePointer<Int32>
}

/// Writes the hybrid kernels `void kernel(const Arguments *)` (System V; no
/// callee-saved register used). Registers: rdi the arguments, rsi the input, rdx the output, rcx
/// the vectors (range) or blocks (quantizer) left.
@usableFromInline package enum HybridKernelGenerator {
  /// Values per block.
  @usableFromInline package static let blockValues = 16

  /// What a kernel computes.
  @usableFromInline package enum Kind: Int, CaseIterable, Sendable {
    /// The range scan (`HybridRangeKernelArguments`).
    case range
    /// The block quantizer (`HybridQuantizeKernelArguments`).
    case quantize
    /// The float epilogue of a tile (`HybridEpilogueKernelArguments`).
    case epilogue
  }

  /// The machine code of `kind` for `isa`.
  @usableFromInline package static func code(_ kind: Kind, isa: GeneratedKernelISA) -> [UInt8] {
    var assembler = X86Assembler()
    let width: VectorWidth = isa == .avx2 ? .ymm : .zmm
    switch kind {
    case .range: emitRange(&assembler, width: width)
    case .quantize: emitQuantize(&assembler, width: width)
    case .epilogue: emitEpilogue(&assembler, width: width)
    }
    assembler.returnFromKernel(restoring: [])
    return assembler.finishedCode()
  }

  /// Vectors scanned side by side in the range kernel.
  private static let rangeVectors = 4

  /// The range scan: lows in registers 0–3, highs in 4–7, loaded values in 8–11.
  private static func emitRange(_ assembler: inout X86Assembler, width: VectorWidth) {
    let lows = (0..<rangeVectors).map { VectorRegister($0) }
    let highs = (0..<rangeVectors).map { VectorRegister(rangeVectors + $0) }
    let values = (0..<rangeVectors).map { VectorRegister(2 * rangeVectors + $0) }
    assembler.loadArguments(of: HybridRangeKernelArguments.self, [.rsi: \.input, .rcx: \.blockCount])
    if width == .ymm { assembler.add(.rcx, .rcx) }
    for register in lows + highs {
      width == .ymm
        ? assembler.vbroadcastssYMM(register, argumentOperand(\HybridRangeKernelArguments.first))
        : assembler.vbroadcastssZMM(register, argumentOperand(\HybridRangeKernelArguments.first))
    }
    /// Scans `count` vectors from rsi into the first `count` lows and highs.
    func scan(_ count: Int) {
      for index in 0..<count {
        assembler.load(width, values[index], MemoryOperand(.rsi, Int32(index) * width.bytes))
        assembler.packed(width, .vminps, lows[index], values[index], lows[index])
        assembler.packed(width, .vmaxps, highs[index], values[index], highs[index])
      }
      assembler.add(.rsi, Int32(count) * width.bytes)
    }
    let single = assembler.makeLabel()
    let wide = assembler.makeLabel()
    let fold = assembler.makeLabel()
    assembler.bind(wide)
    assembler.cmp(.rcx, Int32(rangeVectors))
    assembler.jump(if: .below, to: single)
    scan(rangeVectors)
    assembler.sub(.rcx, Int32(rangeVectors))
    assembler.jump(to: wide)
    let next = assembler.makeLabel()
    assembler.bind(single)
    assembler.test(.rcx, .rcx)
    assembler.jump(if: .zero, to: fold)
    assembler.bind(next)
    scan(1)
    assembler.dec(.rcx)
    assembler.jump(if: .notZero, to: next)
    assembler.bind(fold)
    for (kept, other) in [(0, 1), (2, 3), (0, 2)] {
      assembler.packed(width, .vminps, lows[kept], lows[other], lows[kept])
      assembler.packed(width, .vmaxps, highs[kept], highs[other], highs[kept])
    }
    assembler.mov(.rax, argumentOperand(\HybridRangeKernelArguments.lows))
    assembler.store(width, MemoryOperand(.rax), lows[0])
    assembler.mov(.rax, argumentOperand(\HybridRangeKernelArguments.highs))
    assembler.store(width, MemoryOperand(.rax), highs[0])
  }

  /// The block quantizer: constants in registers 8–14, the block's vectors in 0–1, the signed
  /// halves in 2–3.
  private static func emitQuantize(_ assembler: inout X86Assembler, width: VectorWidth) {
    let inverseScale = VectorRegister(8), lowest = VectorRegister(9), highest = VectorRegister(10)
    let zeroPoint = VectorRegister(11), flip = VectorRegister(12), signBit = VectorRegister(13)
    let half = VectorRegister(14)
    assembler.loadArguments(
      of: HybridQuantizeKernelArguments.self, [.rsi: \.input, .rdx: \.output, .rcx: \.blockCount])
    let constants: [(VectorRegister, MemoryOperand)] = [
      (inverseScale, argumentOperand(\HybridQuantizeKernelArguments.inverseScale)),
      (lowest, argumentOperand(\HybridQuantizeKernelArguments.lowest)),
      (highest, argumentOperand(\HybridQuantizeKernelArguments.highest)),
      (zeroPoint, argumentOperand(\HybridQuantizeKernelArguments.zeroPoint)),
      (flip, argumentOperand(\HybridQuantizeKernelArguments.flip)),
      (signBit, argumentOperand(\HybridQuantizeKernelArguments.signBit)),
      (half, argumentOperand(\HybridQuantizeKernelArguments.half)),
    ]
    for (register, field) in constants {
      width == .ymm ? assembler.vbroadcastssYMM(register, field) : assembler.vbroadcastssZMM(register, field)
    }
    let blocks = CountedLoop(&assembler, counting: .rcx)
    for vector in 0..<width.vectorsPerRow {
      let value = VectorRegister(vector)
      let signedHalf = VectorRegister(2 + vector)
      assembler.load(width, value, MemoryOperand(.rsi, Int32(vector) * width.bytes))
      assembler.packed(width, .vmulps, value, value, inverseScale)
      assembler.packed(width, .vpand, signedHalf, value, signBit)
      assembler.packed(width, .vpor, signedHalf, signedHalf, half)
      assembler.packed(width, .vaddps, value, value, signedHalf)
      assembler.clamp(width, value, lower: lowest, upper: highest)
      if width == .ymm {
        assembler.vcvttps2dqYMM(value, value)
        assembler.shiftYMM(.vpslld, value, value, by: 1)
        assembler.shiftYMM(.vpsrad, value, value, by: 1)
      } else {
        assembler.vcvttps2dqZMM(value, value)
        assembler.shiftZMM(.vpslld, value, value, by: 1)
        assembler.shiftZMM(.vpsrad, value, value, by: 1)
      }
      assembler.packed(width, .vpaddd, value, value, zeroPoint)
    }
    let low = VectorRegister(0), high = VectorRegister(1)
    if width == .ymm {
      // Words [0–3, 8–11 | 4–7, 12–15], then [0–7 | 8–15], then the 16 bytes in order.
      assembler.packedYMM(.vpackssdw, low, low, high)
      assembler.vpermqYMM(low, low, 0xD8)
      assembler.vextracti128(high, low, half: 1)
      assembler.vpacksswbXMM(low, low, high)
      assembler.vxorpsYMM(low, low, flip)
      assembler.vmovupsXMM(MemoryOperand(.rdx), low)
    } else {
      assembler.vpxordZMM(low, low, flip)
      assembler.vpmovdbZMM(MemoryOperand(.rdx), low)
    }
    assembler.add(.rsi, Int32(blockValues * 4))
    assembler.add(.rdx, Int32(blockValues))
    blocks.end(&assembler)
  }
}

extension HybridKernelGenerator {
  /// The float epilogue: per vector of a row, the correction in registers 0–1, the first scales in
  /// 2–3, the second scale in 4, the bias in 5–6, the clamp bounds in 7–8, the AVX2 lane masks in
  /// 9–10 (the AVX-512 one in k1), the values in 11–12. rsi/rdx the current row of sums/outputs,
  /// r8/r9 their strides, rcx the rows left, rax the vector fields' addresses.
  fileprivate static func emitEpilogue(_ assembler: inout X86Assembler, width: VectorWidth) {
    let vectors = width.vectorsPerRow
    let correction = (0..<vectors).map { VectorRegister($0) }
    let firstScales = (0..<vectors).map { VectorRegister(2 + $0) }
    let secondScale = VectorRegister(4)
    let bias = (0..<vectors).map { VectorRegister(5 + $0) }
    let lower = VectorRegister(7), upper = VectorRegister(8)
    let laneMasks = (0..<vectors).map { VectorRegister(9 + $0) }
    let values = (0..<vectors).map { VectorRegister(11 + $0) }
    let storedLanes = MaskRegister(1)
    assembler.loadArguments(
      of: HybridEpilogueKernelArguments.self,
      [.rsi: \.sums, .r8: \.sumsStride, .rdx: \.output, .r9: \.outputStride, .rcx: \.rows])
    /// Loads the 16 lanes the pointer `field` points to into `registers`.
    func loadLanes(_ field: PartialKeyPath<HybridEpilogueKernelArguments>, into registers: [VectorRegister]) {
      assembler.loadVectors(width, registers, pointedToBy: argumentOperand(field), through: .rax)
    }
    loadLanes(\.correction, into: correction)
    loadLanes(\.firstScales, into: firstScales)
    loadLanes(\.bias, into: bias)
    if width == .ymm { loadLanes(\.laneMasks, into: laneMasks) }
    let scalars: [(VectorRegister, MemoryOperand)] = [
      (secondScale, argumentOperand(\HybridEpilogueKernelArguments.secondScale)),
      (lower, argumentOperand(\HybridEpilogueKernelArguments.lower)),
      (upper, argumentOperand(\HybridEpilogueKernelArguments.upper)),
    ]
    for (register, field) in scalars {
      width == .ymm ? assembler.vbroadcastssYMM(register, field) : assembler.vbroadcastssZMM(register, field)
    }
    if width == .zmm { assembler.kmovw(storedLanes, argumentOperand(\HybridEpilogueKernelArguments.laneBits)) }
    let rows = CountedLoop(&assembler, counting: .rcx)
    for vector in 0..<vectors {
      let value = values[vector]
      let offset = Int32(vector) * width.bytes
      assembler.load(width, value, MemoryOperand(.rsi, offset))
      assembler.packed(width, .vpsubd, value, value, correction[vector])
      width == .ymm ? assembler.vcvtdq2psYMM(value, value) : assembler.vcvtdq2psZMM(value, value)
      assembler.packed(width, .vmulps, value, value, firstScales[vector])
      assembler.packed(width, .vmulps, value, value, secondScale)
      assembler.packed(width, .vaddps, value, value, bias[vector])
      assembler.clamp(width, value, lower: lower, upper: upper)
      width == .ymm
        ? assembler.vmaskmovpsYMM(MemoryOperand(.rdx, offset), mask: laneMasks[vector], value)
        : assembler.vmovupsZMM(MemoryOperand(.rdx, offset), value, mask: storedLanes)
    }
    assembler.add(.rsi, .r8)
    assembler.add(.rdx, .r9)
    rows.end(&assembler)
  }
}

extension X86Assembler {
  /// `op register, register, register` for a lane-wise integer operation in `width`.
  fileprivate mutating func packed(
    _ width: VectorWidth, _ operation: PackedIntegerOperation, _ destination: VectorRegister, _ left: VectorRegister,
    _ right: VectorRegister
  ) {
    width == .ymm ? packedYMM(operation, destination, left, right) : packedZMM(operation, destination, left, right)
  }
}

/// The generated hybrid quantization kernels of one instruction set, each made the first time it is
/// asked for (`LazyExecutableKernels`) and kept for the process; they follow the float GEMM's
/// switches (``GeneratedFloatKernels/currentISA``). Where a kernel's mapping is refused, its call
/// says so and the caller runs the Swift code, which gives the same values.
@usableFromInline package final class GeneratedHybridKernels: GeneratedKernelFamily, @unchecked Sendable {
  // @unchecked Sendable: immutable after `init` but the lazily made kernels, which
  // `LazyExecutableKernels` guards.

  /// The instruction set.
  @usableFromInline package let isa: GeneratedKernelISA
  /// The kernel of each `Kind`, by its raw value, made on first use.
  private let kernels: LazyExecutableKernels
  /// The AVX2 masks of a tile's first columns.
  private let laneMasks = AVX2LaneMasks.shared

  /// The kernels of `isa`, none generated yet.
  @usableFromInline package init(isa: GeneratedKernelISA) {
    self.isa = isa
    kernels = LazyExecutableKernels(count: HybridKernelGenerator.Kind.allCases.count) {
      HybridKernelGenerator.code(HybridKernelGenerator.Kind(rawValue: $0)!, isa: isa)
    }
  }

  @usableFromInline package static let avx2Set: GeneratedHybridKernels? = GeneratedHybridKernels(isa: .avx2)
  @usableFromInline package static let avx512Set: GeneratedHybridKernels? = GeneratedHybridKernels(isa: .avx512)
  @usableFromInline package static let preferred: GeneratedHybridKernels? = preferredSet()

  /// Reserves (`LazyExecutableKernels/reserve(_:)`) the kernels of `kinds`, to be mapped with the
  /// other reserved kernels at the end of `allocateTensors()` instead of one mapping each at their
  /// first call mid-invoke.
  package func reserve(_ kinds: [HybridKernelGenerator.Kind]) { kernels.reserve(kinds.map(\.rawValue)) }

  /// Lanes of the range scan's result.
  private var rangeLanes: Int { isa == .avx2 ? 8 : 16 }

  /// The smallest and largest of `blockCount` × 16 floats from `source` as the Swift scan from
  /// `first` finds them, merged over the lanes by `merge` (the caller's rule); nil, with nothing
  /// read, when the kernel could not be mapped.
  package func range(
    _ source: UnsafePointer<Float>, blockCount: Int, first: Float,
    merge: ((low: Float, high: Float), (low: Float, high: Float)) -> (low: Float, high: Float)
  ) -> (low: Float, high: Float)? {
    precondition(blockCount >= 0, "negative block count")
    guard let entry = kernels.entry(HybridKernelGenerator.Kind.range.rawValue) else { return nil }
    var lows = SIMD16<Float>()
    var highs = SIMD16<Float>()
    withUnsafeMutableBytes(of: &lows) { lows in
      withUnsafeMutableBytes(of: &highs) { highs in
        var arguments = HybridRangeKernelArguments(
          input: source, blockCount: blockCount, first: first,
          lows: lows.baseAddress!.assumingMemoryBound(to: Float.self),
          highs: highs.baseAddress!.assumingMemoryBound(to: Float.self))
        callKernel(at: entry, &arguments)
      }
    }
    var range = (low: lows[0], high: highs[0])
    for lane in 1..<rangeLanes { range = merge(range, (lows[lane], highs[lane])) }
    return range
  }

  /// Quantizes `arguments.blockCount` × 16 floats as the arguments say; false, with nothing
  /// written, when the kernel could not be mapped.
  package func quantize(_ arguments: HybridQuantizeKernelArguments) -> Bool {
    precondition(arguments.blockCount >= 0, "negative block count")
    guard let entry = kernels.entry(HybridKernelGenerator.Kind.quantize.rawValue) else { return false }
    var arguments = arguments
    callKernel(at: entry, &arguments)
    return true
  }

  /// Writes the floats of `rows` rows of a 16-column tile of sums (`sumsStride` Int32 values
  /// apart) to `output` (rows `outputStride` floats apart, the first `lanes` columns of each): per
  /// lane ((sum − correction) · firstScales) · secondScale + bias, clamped to `clamp`; false, with
  /// nothing written, when the kernel could not be mapped.
  package func storeFloats(
    sums: UnsafePointer<Int32>, sumsStride: Int, rows: Int, correction: SIMD16<Int32>, firstScales: SIMD16<Float>,
    secondScale: Float, bias: SIMD16<Float>, clamp: FloatClampRange, lanes: Int, output: UnsafeMutablePointer<Float>,
    outputStride: Int
  ) -> Bool {
    precondition(rows >= 0 && (1...16).contains(lanes), "bad epilogue extent")
    guard let entry = kernels.entry(HybridKernelGenerator.Kind.epilogue.rawValue) else { return false }
    withUnsafePointer(to: correction) { correction in
      withUnsafePointer(to: firstScales) { firstScales in
        withUnsafePointer(to: bias) { bias in
          var arguments = HybridEpilogueKernelArguments(
            sums: sums, sumsStride: sumsStride &* 4, output: output, outputStride: outputStride &* 4, rows: rows,
            correction: UnsafeRawPointer(correction).assumingMemoryBound(to: Int32.self),
            firstScales: UnsafeRawPointer(firstScales).assumingMemoryBound(to: Float.self), secondScale: secondScale,
            bias: UnsafeRawPointer(bias).assumingMemoryBound(to: Float.self), lower: clamp.lower, upper: clamp.upper,
            laneBits: (1 << lanes) &- 1, laneMasks: laneMasks.firstLanes(lanes))
          callKernel(at: entry, &arguments)
        }
      }
    }
    return true
  }
}
