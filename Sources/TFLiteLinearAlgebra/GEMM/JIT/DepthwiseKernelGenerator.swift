/// Generates the depthwise-convolution micro-kernels: one block of 16 channels for a run of output
/// pixels, each the sum over a list of taps of input vector × weight vector, channel by channel.
/// AVX2 uses two ymm per 16 channels, AVX-512 one zmm. The function is
/// `void kernel(const DepthwiseKernelArguments *)` in the System V ABI.
///
/// Three element kinds:
/// - `float`: float32 inputs and weights over a table of (input offset, weight offset) taps,
///   `acc += input · weight` fused (FMA) in table order, then TFLite's clamp
///   `min(max(acc, lower), upper)`, stored as float32;
/// - `floatEightChannels`: the `float` sums over a block of 8 channels in one ymm (AVX2 code, run on
///   AVX-512 CPUs too): the last 8 channels of a count that is not a multiple of 16 (24, 40, 88
///   channels, or 8 alone, as in MediaPipe's networks);
/// - `float3x3`, `float5x5`: the same sums over a table of exactly 9 (25) taps, a whole square
///   filter, whose weight vectors are loaded into registers once per call and kept there for every
///   pixel, the taps unrolled (`float5x5` only on AVX-512: 25 zmm). The taps are summed in the same
///   order as `float`, so the results are the same bits;
/// - `requantizedInt8`, `requantizedUInt8`: unsigned 8-bit inputs over a table of tap *pairs*
///   (input offset A, input offset B, weight offset); each pair's weights are 16 interleaved int16
///   pairs (wA, wB), one per channel. Each 32-bit lane gets uA | uB << 16 (zero-extended bytes) and
///   the multiply-add of word pairs adds uA·wA + uB·wB to it exactly (`vpmaddwd` + `vpaddd` on
///   AVX2, `vpdpwssd` on AVX-512, which needs AVX512-VNNI): |u · w| ≤ 255 · 255, so no pair sum
///   overflows. The Int32 sums start at zero and wrap like Σ u · w in any order; the kernel's
///   epilogue requantizes them in registers (`RequantizationEmission`, with the block's
///   `RequantizationTable` record) and stores 16 int8 or uint8 bytes per pixel. One call covers
///   `blockCount` 16-channel blocks of a row (block b reads inputs 16·b bytes on, weights 64·b
///   bytes on, record b, and writes outputs 16·b bytes on); on AVX-512 the last block stores only
///   the lanes of `lastBlockMask` (a k-mask), so channel counts need not be multiples of 16.
///
/// For each output pixel p of `pixelCount` (inputs `inputPixelBytes` apart, outputs
/// `outputPixelBytes` apart), the float accumulators start from the 16 values at `start`, and each
/// tap reads its input at `input + p · inputPixelBytes + offset`. The float kinds also cover
/// `blockCount` blocks of a row: after each block they move `input`, `output` and `weights` in the
/// arguments one block of channels on and `start` by `startBlockBytes` (a bias moves, a zero
/// vector does not), and run the next block from there, so one call does what `blockCount` calls
/// of one block did, in the same order. The tap-table kinds take pixels
/// four at a time (the four share each weight vector), then one at a time; the square-filter kinds
/// eight at a time where eight accumulators fit beside the weights (3×3 on AVX-512: eight
/// independent FMA chains hide the FMA latency, four left half the FMA throughput idle), then
/// four, two and one.
///
/// Registers of the table kinds: rdi arguments, rsi/r10 the input/output of the current pixels,
/// r8/r9 the input pixel stride ×1/×3, r11/rbp the output pixel stride ×1/×3 (pixels 4 to 7 of an
/// eight-pixel group from rbx/rdx, four strides on), r13 the weights, r14 the pixel counter, rdx the tap cursor, rcx the tap counter, rax/r15/rbx the tap's input
/// offset(s) and weight offset, r12/r15 the tap's input address(es); after the taps the byte
/// kinds' epilogue holds the record in rax and the lanes in rbx, and their block loop keeps the
/// block's input, output, record and remaining count on the stack (32 bytes below the pushed
/// registers). rbx, rbp, r12 to r15 are callee-saved and pushed; `vzeroupper` before returning.
@usableFromInline package enum DepthwiseKernelGenerator {
  /// What the kernel multiplies.
  @usableFromInline package enum ElementKind: Int, Sendable, CaseIterable {
    /// float32 inputs and weights over a tap table, clamped float32 results.
    case float
    /// Unsigned-byte inputs and interleaved int16 weight pairs over a table of tap pairs, requantized to int8.
    case requantizedInt8
    /// The same sums requantized to uint8.
    case requantizedUInt8
    /// float32 over a whole 3×3 filter with its weights in registers.
    case float3x3
    /// float32 over a whole 5×5 filter with its weights in registers (AVX-512 only).
    case float5x5
    /// float32 over a tap table, 8 channels (AVX2 only).
    case floatEightChannels

    /// The side of the square filter whose weights stay in registers, or nil for a tap table.
    @usableFromInline package var squareFilterSize: Int? {
      switch self {
      case .float, .requantizedInt8, .requantizedUInt8, .floatEightChannels: nil
      case .float3x3: 3
      case .float5x5: 5
      }
    }

    /// What the byte kinds store (nil for the float kinds).
    @usableFromInline package var requantizedOutput: RequantizedOutput? {
      switch self {
      case .requantizedInt8: .int8
      case .requantizedUInt8: .uint8
      case .float, .float3x3, .float5x5, .floatEightChannels: nil
      }
    }

    /// The byte kind storing `output`.
    @usableFromInline package static func requantized(_ output: RequantizedOutput) -> ElementKind {
      output == .int8 ? .requantizedInt8 : .requantizedUInt8
    }

    /// The square-filter kind of side `size`, if there is one.
    @usableFromInline package static func squareFilter(_ size: Int) -> ElementKind? {
      allCases.first { $0.squareFilterSize == size }
    }
  }

  /// Channels of one block: one zmm or two ymm of 32-bit lanes.
  @usableFromInline package static let blockChannels = 16

  /// Channels of a `floatEightChannels` block: one ymm.
  @usableFromInline package static let halfBlockChannels = 8

  /// The channels of `channels` the generated float kinds compute: whole 16-channel blocks, then
  /// one 8-channel block when at least 8 are left.
  @inlinable package static func floatChannelsCovered(_ channels: Int) -> Int {
    channels / blockChannels * blockChannels + (channels % blockChannels >= halfBlockChannels ? halfBlockChannels : 0)
  }

  /// Tap pairs of the byte kernels for `taps` taps (the last pair of an odd count repeats
  /// its input with zero weights).
  @inlinable package static func bytePairCount(taps: Int) -> Int { (taps + 1) / 2 }

  /// True when `kind` is generated for `isa`: all but `float5x5` on AVX2 (a square kind needs its
  /// size² weight vectors, four accumulators and the two clamp bounds in registers: 31 of 32 zmm
  /// for 5×5, more than 16 ymm), all but `floatEightChannels` on AVX-512 (a ymm kind; AVX-512
  /// kernel sets carry the AVX2 one).
  @usableFromInline package static func generates(_ kind: ElementKind, isa: GeneratedKernelISA) -> Bool {
    if kind == .floatEightChannels { return isa == .avx2 }
    guard let size = kind.squareFilterSize else { return true }
    return size * size + 4 + 2 <= (isa == .avx2 ? 16 : 32)
  }

  /// The machine code of the `kind` kernel for `isa` (one that `generates`).
  @usableFromInline package static func code(isa: GeneratedKernelISA, kind: ElementKind) -> [UInt8] {
    precondition(generates(kind, isa: isa), "no \(kind) depthwise kernel for \(isa)")
    var emitter = DepthwiseEmitter(isa: isa, kind: kind)
    emitter.emitKernel()
    return emitter.assembler.finishedCode()
  }
}

/// The arguments of a generated depthwise kernel, passed by pointer (the kernel reads each field at
/// its `MemoryLayout` offset). Offsets and strides are in bytes.
@usableFromInline package struct DepthwiseKernelArguments {
  /// The input of pixel 0 that tap offsets are counted from, at the block's first channel.
  @usableFromInline package var input: UnsafeRawPointer
  /// Bytes between the inputs of consecutive pixels.
  @usableFromInline package var inputPixelBytes: Int
  /// `tapCount` entries: (input offset, weight offset) for the float kinds, (input offset A, input
  /// offset B, weight offset) for the byte kinds.
  @usableFromInline package var taps: UnsafePointer<Int>
  /// Entries of the table (0 leaves the start values; the square-filter kinds need the whole filter).
  @usableFromInline package var tapCount: Int
  /// The weights at the block's first channel.
  @usableFromInline package var weights: UnsafeRawPointer
  /// Sixteen starting values of the float kinds: the float bias of the block (unread by the byte kinds).
  @usableFromInline package var start: UnsafeRawPointer
  /// The output of pixel 0 at the block's first channel (16 values written per pixel).
  @usableFromInline package var output: UnsafeMutableRawPointer
  /// Bytes between the outputs of consecutive pixels.
  @usableFromInline package var outputPixelBytes: Int
  /// Pixels to compute (0 or more).
  @usableFromInline package var pixelCount: Int
  /// Lower clamp bound of the float kernel (`-infinity` for none).
  @usableFromInline package var lower: Float
  /// Upper clamp bound of the float kernel (`infinity` for none).
  @usableFromInline package var upper: Float
  /// Channel blocks of the call (1 or more; the eight-channel kind does one). The float kinds
  /// count it down as they go.
  @usableFromInline package var blockCount: Int
  /// The float kinds: bytes `start` moves from block to block (a bias's 64, or 0 for one vector of
  /// start values shared by every block).
  @usableFromInline package var startBlockBytes: Int
  /// The byte kinds: the first block's `RequantizationTable` record (the next blocks' follow it).
  @usableFromInline package var requantization: UnsafeRawPointer?
  /// The byte kinds: the `RequantizationLanes` (output zero point and clamp).
  @usableFromInline package var requantizationLanes: UnsafeRawPointer?
  /// The AVX-512 byte kinds: the lanes stored by every block but the last, as bits (all 16).
  @usableFromInline package var fullBlockMask: Int
  /// The AVX-512 byte kinds: the lanes stored by the last block, as bits.
  @usableFromInline package var lastBlockMask: Int

  /// The arguments from their parts.
  @inlinable package init(
    input: UnsafeRawPointer, inputPixelBytes: Int, taps: UnsafePointer<Int>, tapCount: Int, weights: UnsafeRawPointer,
    start: UnsafeRawPointer, output: UnsafeMutableRawPointer, outputPixelBytes: Int, pixelCount: Int,
    lower: Float = -.infinity, upper: Float = .infinity, blockCount: Int = 1, startBlockBytes: Int = 0,
    requantization: UnsafeRawPointer? = nil, requantizationLanes: UnsafeRawPointer? = nil, lastBlockLanes: Int = 16
  ) {
    precondition(blockCount >= 1 && (1...16).contains(lastBlockLanes), "invalid depthwise blocks")
    self.input = input
    self.inputPixelBytes = inputPixelBytes
    self.taps = taps
    self.tapCount = tapCount
    self.weights = weights
    self.start = start
    self.output = output
    self.outputPixelBytes = outputPixelBytes
    self.pixelCount = pixelCount
    self.lower = lower
    self.upper = upper
    self.blockCount = blockCount
    self.startBlockBytes = startBlockBytes
    self.requantization = requantization
    self.requantizationLanes = requantizationLanes
    fullBlockMask = 0xFFFF
    lastBlockMask = (1 << lastBlockLanes) - 1
  }
}

/// Emits one kernel (see `DepthwiseKernelGenerator`).
private struct DepthwiseEmitter {
  let isa: GeneratedKernelISA
  let kind: DepthwiseKernelGenerator.ElementKind
  var assembler = X86Assembler()

  /// Vector registers per block: 2 ymm or 1 zmm for 16 channels, 1 ymm for 8.
  var vectorsPerBlock: Int { isa == .avx2 && kind != .floatEightChannels ? 2 : 1 }
  /// Channels per vector register.
  var lanes: Int { isa == .avx2 ? 8 : 16 }
  /// Pixels of the unrolled group of the tap-table kinds.
  let groupPixels = 4
  /// Pixel group sizes of the square-filter kinds, largest first: 8 when the weights, eight
  /// accumulators and the clamp bounds fit the vector registers (3×3 on AVX-512), else 4; then the
  /// smaller powers of two, so a row's last few pixels still run several FMA chains.
  var squareGroupSizes: [Int] {
    let registers = isa == .avx2 ? 16 : 32
    let taps = (kind.squareFilterSize ?? 0) * (kind.squareFilterSize ?? 0)
    let largest = taps + 8 + 2 <= registers ? 8 : 4
    return [8, 4, 2, 1].filter { $0 <= largest }
  }
  /// True for the requantizing byte kinds.
  var isBytes: Bool { kind.requantizedOutput != nil }
  /// The AVX-512 byte kinds' store mask.
  let storeMask = MaskRegister(1)
  /// Stack slots of the byte kinds' block loop: the block's input, output, requantization record,
  /// and the blocks left (this one included).
  enum BlockSlot: Int32 {
    case input = 0, output = 8, record = 16, remaining = 24
    /// Bytes of all slots.
    static let frameBytes: Int32 = 32
    /// The slot's stack operand.
    var operand: MemoryOperand { MemoryOperand(.rsp, rawValue) }
  }

  let saved: [GPRegister] = [.rbx, .rbp, .r12, .r13, .r14, .r15]

  /// Accumulator of pixel `pixel`, vector `vector`: registers 0 ..< 8 (ymm) or 0 ..< 4 (zmm).
  func accumulator(_ pixel: Int, _ vector: Int) -> VectorRegister { VectorRegister(pixel * vectorsPerBlock + vector) }
  /// The weight vector `vector` of the current tap.
  func weight(_ vector: Int) -> VectorRegister { VectorRegister(groupPixels * vectorsPerBlock + vector) }
  /// The input vector `vector` of pixel `pixel` (of tap A for bytes): one pair reused (ymm), one per
  /// pixel (zmm).
  func inputRegister(_ pixel: Int, _ vector: Int) -> VectorRegister {
    isa == .avx2 ? VectorRegister(10 + vector) : VectorRegister(5 + pixel)
  }
  /// The tap-B input vector of the byte kernel (the clamp registers' numbers, unused there).
  func secondInputRegister(_ pixel: Int, _ vector: Int) -> VectorRegister {
    isa == .avx2 ? VectorRegister(12 + vector) : VectorRegister(11 + pixel)
  }
  /// The byte kinds' requantization of one pixel, after the taps (its scratch registers are free
  /// then: the tap-B inputs on AVX2, the clamp registers on AVX-512).
  var requantization: RequantizationEmission? {
    kind.requantizedOutput.map { output in
      isa == .avx2
        ? RequantizationEmission(
          width: .ymm, output: output, table: .rax, lanes: .rbx, scratch: (VectorRegister(14), VectorRegister(15)))
        : RequantizationEmission(
          width: .zmm, output: output, table: .rax, lanes: .rbx, scratch: (VectorRegister(9), VectorRegister(10)),
          storeMask: storeMask)
    }
  }
  /// The clamp bounds: after the table kinds' inputs, or the last two registers of the square-filter kinds.
  var lowerRegister: VectorRegister {
    VectorRegister(kind.squareFilterSize == nil ? (isa == .avx2 ? 12 : 9) : (isa == .avx2 ? 14 : 30))
  }
  var upperRegister: VectorRegister { VectorRegister(lowerRegister.number == 9 ? 10 : Int(lowerRegister.number) + 1) }

  /// Offset of an argument field.
  func argument(_ field: PartialKeyPath<DepthwiseKernelArguments>) -> MemoryOperand {
    MemoryOperand(.rdi, Int32(MemoryLayout<DepthwiseKernelArguments>.offset(of: field)!))
  }

  /// Pixel `pixel` of the group from `base`, pixels `stride` apart (`triple` = 3 × stride); pixels
  /// 4 to 7 from `upper`, which points four strides past `base`.
  func pixelAddress(
    _ base: GPRegister, _ pixel: Int, upper: GPRegister? = nil, stride: GPRegister, triple: GPRegister,
    plus displacement: Int32
  ) -> MemoryOperand {
    if pixel >= 4 {
      guard let upper, pixel < 8 else { preconditionFailure("pixel \(pixel) of a group without an upper base") }
      return pixelAddress(upper, pixel - 4, stride: stride, triple: triple, plus: displacement)
    }
    return switch pixel {
    case 0: MemoryOperand(base, displacement)
    case 1: MemoryOperand(base, index: stride, scale: 1, displacement)
    case 2: MemoryOperand(base, index: stride, scale: 2, displacement)
    default: MemoryOperand(base, index: triple, scale: 1, displacement)
    }
  }

  /// Bytes of one vector's worth of inputs, weights (float, or int16 pairs) and outputs.
  var inputVectorBytes: Int32 { Int32(isBytes ? lanes : lanes * 4) }
  var vectorBytes: Int32 { Int32(lanes * 4) }
  /// Bytes of one entry of the tap table.
  var tapEntryBytes: Int32 { isBytes ? 24 : 16 }

  mutating func loadVector(_ register: VectorRegister, _ memory: MemoryOperand) {
    isa == .avx2 ? assembler.vmovupsYMM(register, memory) : assembler.vmovupsZMM(register, memory)
  }

  mutating func storeVector(_ memory: MemoryOperand, _ register: VectorRegister) {
    isa == .avx2 ? assembler.vmovupsYMM(memory, register) : assembler.vmovupsZMM(memory, register)
  }

  /// `register` = sixteen (eight) bytes zero-extended to 32-bit lanes.
  mutating func loadBytes(_ register: VectorRegister, _ memory: MemoryOperand) {
    isa == .avx2 ? assembler.vpmovzxbdYMM(register, memory) : assembler.vpmovzxbdZMM(register, memory)
  }

  /// One tap (float) or tap pair (bytes) of pixel `pixel`, vector `vector`: the float input at
  /// `first`, or the byte inputs at `first` and `second`, multiplied by the weight vector and added.
  mutating func accumulateTap(
    _ pixel: Int, _ vector: Int, first: MemoryOperand, second: MemoryOperand
  ) {
    let sum = accumulator(pixel, vector)
    let input = inputRegister(pixel, vector)
    switch (isBytes, isa) {
    case (true, _):
      let other = secondInputRegister(pixel, vector)
      loadBytes(input, first)
      loadBytes(other, second)
      if isa == .avx2 {
        assembler.shiftYMM(.vpslld, other, other, by: 16)
        assembler.packedYMM(.vpor, input, input, other)
        assembler.packedYMM(.vpmaddwd, input, input, weight(vector))
        assembler.packedYMM(.vpaddd, sum, sum, input)
      } else {
        assembler.shiftZMM(.vpslld, other, other, by: 16)
        assembler.packedZMM(.vpor, input, input, other)
        assembler.vpdpwssdZMM(sum, input, weight(vector))
      }
    case (_, .avx2):
      assembler.vfmadd231psYMM(sum, weight(vector), first)
    case (_, .avx512):
      assembler.vfmadd231psZMM(sum, weight(vector), first)
    }
  }

  /// The clamp of the float kernels: the accumulator is the second operand, so a NaN passes through.
  mutating func clamp(_ value: VectorRegister) {
    assembler.clamp(isa == .avx2 ? .ymm : .zmm, value, lower: lowerRegister, upper: upperRegister)
  }

  /// Computes and stores `pixels` (1 or 4) pixels at rsi/r10 over the tap table.
  mutating func emitTablePixels(_ pixels: Int) {
    if !isBytes { assembler.mov(.rax, argument(\.start)) }
    for pixel in 0..<pixels {
      for vector in 0..<vectorsPerBlock {
        isBytes
          ? assembler.zero(isa == .avx2 ? .ymm : .zmm, accumulator(pixel, vector))
          : loadVector(accumulator(pixel, vector), MemoryOperand(.rax, Int32(vector) * vectorBytes))
      }
    }
    let tapsDone = assembler.makeLabel()
    assembler.mov(.rcx, argument(\.tapCount))
    assembler.test(.rcx, .rcx)
    assembler.jump(if: .zero, to: tapsDone)
    assembler.mov(.rdx, argument(\.taps))
    let tapLoop = assembler.makeLabel()
    assembler.bind(tapLoop)
    assembler.mov(.rax, MemoryOperand(.rdx, 0))
    assembler.mov(.rbx, MemoryOperand(.rdx, tapEntryBytes - 8))
    for vector in 0..<vectorsPerBlock {
      loadVector(weight(vector), MemoryOperand(.r13, index: .rbx, scale: 1, Int32(vector) * vectorBytes))
    }
    assembler.lea(.r12, MemoryOperand(.rsi, index: .rax, scale: 1))
    if isBytes {
      assembler.mov(.r15, MemoryOperand(.rdx, 8))
      assembler.add(.r15, .rsi)
    }
    for pixel in 0..<pixels {
      for vector in 0..<vectorsPerBlock {
        let displacement = Int32(vector) * inputVectorBytes
        accumulateTap(
          pixel, vector, first: pixelAddress(.r12, pixel, stride: .r8, triple: .r9, plus: displacement),
          second: pixelAddress(.r15, pixel, stride: .r8, triple: .r9, plus: displacement))
      }
    }
    assembler.add(.rdx, tapEntryBytes)
    assembler.dec(.rcx)
    assembler.jump(if: .notZero, to: tapLoop)
    assembler.bind(tapsDone)
    if let requantization {
      assembler.mov(.rax, BlockSlot.record.operand)
      assembler.mov(.rbx, argument(\.requantizationLanes))
      for pixel in 0..<pixels {
        requantization.emit(
          &assembler, sums: (0..<vectorsPerBlock).map { accumulator(pixel, $0) },
          to: pixelAddress(.r10, pixel, stride: .r11, triple: .rbp, plus: 0))
      }
      return
    }
    for pixel in 0..<pixels {
      for vector in 0..<vectorsPerBlock {
        let value = accumulator(pixel, vector)
        clamp(value)
        storeVector(pixelAddress(.r10, pixel, stride: .r11, triple: .rbp, plus: Int32(vector) * vectorBytes), value)
      }
    }
  }

  /// The pixel loops over `counter` pixels from rsi/r10: for each size of `groups` (largest first,
  /// 1 last) a loop over groups of that many pixels (`body(size)`) while that many are left,
  /// advancing rsi and r10 by the pixel strides in r8 and r11.
  mutating func emitPixelLoops(counter: GPRegister, groups: [Int], _ body: (inout Self, Int) -> Void) {
    for size in groups {
      let next = assembler.makeLabel()
      assembler.cmp(counter, Int32(size))
      assembler.jump(if: .below, to: next)
      let group = assembler.makeLabel()
      assembler.bind(group)
      body(&self, size)
      assembler.lea(.rsi, MemoryOperand(.rsi, index: .r8, scale: UInt8(size)))
      assembler.lea(.r10, MemoryOperand(.r10, index: .r11, scale: UInt8(size)))
      assembler.sub(counter, Int32(size))
      assembler.cmp(counter, Int32(size))
      assembler.jump(if: .aboveOrEqual, to: group)
      assembler.bind(next)
    }
  }

  /// Loads the input and output pointers and strides: rsi/r10, r8/r9 (×1/×3), r11/rbp (×1/×3).
  mutating func loadPixelPointers() {
    assembler.mov(.rsi, argument(\.input))
    assembler.mov(.r8, argument(\.inputPixelBytes))
    assembler.lea(.r9, MemoryOperand(.r8, index: .r8, scale: 2))
    assembler.mov(.r10, argument(\.output))
    assembler.mov(.r11, argument(\.outputPixelBytes))
    assembler.lea(.rbp, MemoryOperand(.r11, index: .r11, scale: 2))
  }

  /// The square-filter kinds (`size`² taps): per vector of the block (two halves on AVX2), the
  /// taps' weight vectors into registers 0 ..< size² once, then the pixel loops with the taps
  /// unrolled: each tap's input offset is read from the table (rcx) into r12 (r12 + 4 strides into
  /// rbx for an eight-pixel group), and the pixels' accumulators (registers size² onwards, one per
  /// pixel of the group) add input · weight in table order. r15 counts the pixels of the half, rax
  /// points at the start values, r13 at the weights.
  mutating func emitSquareFilterKernel(size: Int) {
    let taps = size * size
    assembler.mov(.rcx, argument(\.taps))
    assembler.mov(.rax, argument(\.start))
    assembler.mov(.r13, argument(\.weights))
    for vector in 0..<vectorsPerBlock {
      let displacement = Int32(vector) * vectorBytes
      for tap in 0..<taps {
        assembler.mov(.r12, MemoryOperand(.rcx, 16 * Int32(tap) + 8))
        loadVector(VectorRegister(tap), MemoryOperand(.r13, index: .r12, scale: 1, displacement))
      }
      loadPixelPointers()
      assembler.mov(.r15, .r14)
      emitPixelLoops(counter: .r15, groups: squareGroupSizes) { emitter, pixels in
        let sum = { (pixel: Int) in VectorRegister(taps + pixel) }
        for pixel in 0..<pixels { emitter.loadVector(sum(pixel), MemoryOperand(.rax, displacement)) }
        for tap in 0..<taps {
          emitter.assembler.mov(.r12, MemoryOperand(.rcx, 16 * Int32(tap)))
          emitter.assembler.add(.r12, .rsi)
          if pixels > 4 { emitter.assembler.lea(.rbx, MemoryOperand(.r12, index: .r8, scale: 4)) }
          for pixel in 0..<pixels {
            let input = emitter.pixelAddress(.r12, pixel, upper: .rbx, stride: .r8, triple: .r9, plus: displacement)
            emitter.isa == .avx2
              ? emitter.assembler.vfmadd231psYMM(sum(pixel), VectorRegister(tap), input)
              : emitter.assembler.vfmadd231psZMM(sum(pixel), VectorRegister(tap), input)
          }
        }
        if pixels > 4 { emitter.assembler.lea(.rdx, MemoryOperand(.r10, index: .r11, scale: 4)) }
        for pixel in 0..<pixels {
          emitter.clamp(sum(pixel))
          emitter.storeVector(
            emitter.pixelAddress(.r10, pixel, upper: .rdx, stride: .r11, triple: .rbp, plus: displacement), sum(pixel))
        }
      }
    }
  }

  /// The byte kinds' loop over the call's blocks: per block the pixel loops from the block's
  /// slots, then the slots, the weights (r13) and, before the last block, the AVX-512 store mask
  /// moved on. Exits through `exit` when no pixel or block is left.
  mutating func emitBlockLoop(exit: AssemblerLabel) {
    assembler.mov(.rax, argument(\.blockCount))
    assembler.mov(BlockSlot.remaining.operand, .rax)
    for (slot, field) in [
      (BlockSlot.input, \DepthwiseKernelArguments.input), (.output, \.output), (.record, \.requantization),
    ] as [(BlockSlot, PartialKeyPath<DepthwiseKernelArguments>)] {
      assembler.mov(.rcx, argument(field))
      assembler.mov(slot.operand, .rcx)
    }
    assembler.mov(.r13, argument(\.weights))
    loadPixelPointers()
    let block = assembler.makeLabel()
    if isa == .avx512 {
      assembler.kmovw(storeMask, argument(\.fullBlockMask))
      assembler.cmp(.rax, 1)
      assembler.jump(if: .notZero, to: block)
      assembler.kmovw(storeMask, argument(\.lastBlockMask))
    }
    assembler.bind(block)
    assembler.mov(.rsi, BlockSlot.input.operand)
    assembler.mov(.r10, BlockSlot.output.operand)
    assembler.mov(.r14, argument(\.pixelCount))
    emitPixelLoops(counter: .r14, groups: [groupPixels, 1]) { emitter, pixels in emitter.emitTablePixels(pixels) }
    let blockChannels = Int32(DepthwiseKernelGenerator.blockChannels)
    for (slot, step) in [
      (BlockSlot.input, blockChannels), (.output, blockChannels), (.record, Int32(RequantizationTable.blockBytes)),
    ] {
      assembler.mov(.rax, slot.operand)
      assembler.add(.rax, step)
      assembler.mov(slot.operand, .rax)
    }
    assembler.add(.r13, 4 * blockChannels)
    assembler.mov(.rax, BlockSlot.remaining.operand)
    assembler.dec(.rax)
    assembler.mov(BlockSlot.remaining.operand, .rax)
    assembler.jump(if: .zero, to: exit)
    if isa == .avx512 {
      assembler.cmp(.rax, 1)
      assembler.jump(if: .notZero, to: block)
      assembler.kmovw(storeMask, argument(\.lastBlockMask))
    }
    assembler.jump(to: block)
  }

  /// The float kinds' step to the next block: the block's pointers in the arguments moved on
  /// (`start` by `startBlockBytes`), `blockCount` counted down, and back to `loop` (the block's
  /// first instruction) with r14 holding the pixel count again while blocks are left.
  mutating func emitNextFloatBlock(loop: AssemblerLabel) {
    let blockBytes = Int32(vectorsPerBlock) * vectorBytes
    for field in [\DepthwiseKernelArguments.input, \.output, \.weights] as [PartialKeyPath<DepthwiseKernelArguments>] {
      assembler.mov(.rax, argument(field))
      assembler.add(.rax, blockBytes)
      assembler.mov(argument(field), .rax)
    }
    assembler.mov(.rax, argument(\.start))
    assembler.add(.rax, argument(\.startBlockBytes))
    assembler.mov(argument(\.start), .rax)
    assembler.mov(.r14, argument(\.pixelCount))
    assembler.mov(.rax, argument(\.blockCount))
    assembler.dec(.rax)
    assembler.mov(argument(\.blockCount), .rax)
    assembler.jump(if: .notZero, to: loop)
  }

  mutating func emitKernel() {
    let exit = assembler.makeLabel()
    assembler.saveRegisters(saved)
    if isBytes { assembler.sub(.rsp, BlockSlot.frameBytes) }
    assembler.mov(.r14, argument(\.pixelCount))
    assembler.test(.r14, .r14)
    assembler.jump(if: .zero, to: exit)
    if !isBytes {
      isa == .avx2
        ? assembler.vbroadcastssYMM(lowerRegister, argument(\.lower))
        : assembler.vbroadcastssZMM(lowerRegister, argument(\.lower))
      isa == .avx2
        ? assembler.vbroadcastssYMM(upperRegister, argument(\.upper))
        : assembler.vbroadcastssZMM(upperRegister, argument(\.upper))
    }
    if isBytes {
      emitBlockLoop(exit: exit)
    } else {
      let block = assembler.makeLabel()
      assembler.bind(block)
      if let size = kind.squareFilterSize {
        emitSquareFilterKernel(size: size)
      } else {
        loadPixelPointers()
        assembler.mov(.r13, argument(\.weights))
        emitPixelLoops(counter: .r14, groups: [groupPixels, 1]) { emitter, pixels in emitter.emitTablePixels(pixels) }
      }
      emitNextFloatBlock(loop: block)
    }
    assembler.bind(exit)
    if isBytes { assembler.add(.rsp, BlockSlot.frameBytes) }
    assembler.returnFromKernel(restoring: saved)
  }
}

/// The generated depthwise kernels (`DepthwiseKernelGenerator`) of one instruction set, every
/// element kind it has, made together on first use and kept for the life of the process (a bounded
/// cache: six kernels of at most a few hundred bytes per instruction set).
///
/// They follow the float GEMM's switches (``GeneratedFloatKernels/current``): off with
/// `SWIFTTFLITE_JIT=0`, for a runner with ``RunnerOptions/usesGeneratedKernels`` false, when the OS
/// refuses executable memory, on CPUs without AVX2+FMA and off x86-64. The AVX-512 byte kernel
/// needs AVX512-VNNI (`vpdpwssd`); without it the AVX-512 set carries the AVX2 byte kernel.
///
/// Each kind is generated the first time it is asked for (`has` or `run`) and kept, so a float
/// model never generates the byte kinds nor an int8 model the float ones.
@usableFromInline package final class GeneratedDepthwiseKernels: GeneratedKernelFamily, @unchecked Sendable {
  // @unchecked Sendable: everything is immutable after `init` (the zero vector is never written)
  // but the lazily made kernels, which `LazyExecutableKernels` guards.

  /// The instruction set of the kernels.
  @usableFromInline package let isa: GeneratedKernelISA
  /// The instruction set of the byte kinds: `isa`, or AVX2 on AVX-512 CPUs without VNNI.
  @usableFromInline package let byteKernelISA: GeneratedKernelISA
  /// True when the byte kinds store a last partial block through a k-mask (AVX-512); the AVX2 ones
  /// always store 16 lanes.
  @usableFromInline package var masksLastBlock: Bool { byteKernelISA == .avx512 }
  /// The kernel of each element kind, by raw value, made on first request (none where `isa` has none).
  @usableFromInline let kernels: LazyExecutableKernels
  /// Sixteen zeros (as floats and as Int32): the start of sums without bias.
  @usableFromInline package let zeros: UnsafeRawPointer
  /// The four-tap 8-bit kernels (`QuadTapDepthwiseKernelGenerator`) that 3×3, 5×5 and similar
  /// filters without dilation use in place of the pair kind: on AVX-512 CPUs with VNNI and VBMI.
  @usableFromInline package let quadTaps: GeneratedQuadTapDepthwiseKernels?

  /// The kernels of `isa` (the byte kernels of `byteKernelISA`, with `quadTaps`), none generated yet.
  private init(isa: GeneratedKernelISA, byteKernelISA: GeneratedKernelISA, quadTaps: GeneratedQuadTapDepthwiseKernels?) {
    let kinds = DepthwiseKernelGenerator.ElementKind.allCases
    kernels = LazyExecutableKernels(count: kinds.count) { index in
      let kind = kinds[index]
      let kernelISA = kind.requantizedOutput != nil ? byteKernelISA : kind == .floatEightChannels ? .avx2 : isa
      guard DepthwiseKernelGenerator.generates(kind, isa: kernelISA) else { return nil }
      return DepthwiseKernelGenerator.code(isa: kernelISA, kind: kind)
    }
    self.isa = isa
    self.byteKernelISA = byteKernelISA
    self.quadTaps = quadTaps
    let zeros = UnsafeMutableRawPointer.allocate(byteCount: 64, alignment: 64)
    zeros.initializeMemory(as: UInt8.self, repeating: 0, count: 64)
    self.zeros = UnsafeRawPointer(zeros)
  }

  /// The kernels of `isa` with what this CPU adds: on AVX-512, the byte kinds of
  /// `avx512ByteKernelISA` and the four-tap kernels where they run.
  @usableFromInline package convenience init(isa: GeneratedKernelISA) {
    switch isa {
    case .avx2: self.init(isa: .avx2, byteKernelISA: .avx2, quadTaps: nil)
    case .avx512:
      self.init(
        isa: .avx512, byteKernelISA: Self.avx512ByteKernelISA, quadTaps: GeneratedQuadTapDepthwiseKernels.supported)
    }
  }

  deinit { zeros.deallocate() }

  @usableFromInline package static let avx2Set: GeneratedDepthwiseKernels? = GeneratedDepthwiseKernels(isa: .avx2)
  @usableFromInline package static let avx512Set: GeneratedDepthwiseKernels? = GeneratedDepthwiseKernels(isa: .avx512)
  @usableFromInline package static let preferred: GeneratedDepthwiseKernels? = preferredSet()
  /// The AVX-512 set without the four-tap kernels (what CPUs without VBMI run), for tests.
  private static let avx512TapPairs = GeneratedDepthwiseKernels(
    isa: .avx512, byteKernelISA: avx512ByteKernelISA, quadTaps: nil)
  private static var avx512ByteKernelISA: GeneratedKernelISA {
    DotProductISA.supported.contains(.avx512VNNI) ? .avx512 : .avx2
  }

  /// Every set this machine runs, the AVX-512 one also without its four-tap kernels (tests run the
  /// convolutions on each).
  @usableFromInline package static var runnableSets: [GeneratedDepthwiseKernels] {
    GeneratedKernelISA.allCases.compactMap { kernels(for: $0) }
      + (kernels(for: .avx512)?.quadTaps == nil ? [] : [avx512TapPairs])
  }

  /// This set made anew with no kind generated yet, apart from the process's own (for tests of the
  /// batched mapping).
  package func unshared() -> GeneratedDepthwiseKernels {
    GeneratedDepthwiseKernels(isa: isa, byteKernelISA: byteKernelISA, quadTaps: quadTaps)
  }

  /// Reserves (`LazyExecutableKernels/reserve(_:)`) the kernels of `kinds` this set has, so that a
  /// prepare has them mapped with the other reserved kernels at the end of `allocateTensors()`
  /// instead of one mapping each at their first request mid-invoke.
  @usableFromInline package func reserve(_ kinds: [DepthwiseKernelGenerator.ElementKind]) {
    kernels.reserve(kinds.map(\.rawValue))
  }

  /// True when this set has a `kind` kernel (generating it on the first request).
  @usableFromInline package func has(_ kind: DepthwiseKernelGenerator.ElementKind) -> Bool {
    kernels.entry(kind.rawValue) != nil
  }

  /// The entries of the float kinds a convolution calls: the tap-table kind, `squareKind` where
  /// this set has it (else the tap-table kind again) and, when `needsEightChannels`, the
  /// eight-channel kind; nil when a needed kind is missing (the OS refused its mapping). Each kind
  /// is generated on its first request.
  @inlinable package func floatEntries(
    squareKind: DepthwiseKernelGenerator.ElementKind?, needsEightChannels: Bool
  ) -> FloatDepthwiseEntries? {
    guard let table = kernels.entry(DepthwiseKernelGenerator.ElementKind.float.rawValue) else { return nil }
    let eightChannels = needsEightChannels
      ? kernels.entry(DepthwiseKernelGenerator.ElementKind.floatEightChannels.rawValue) : nil
    if needsEightChannels && eightChannels == nil { return nil }
    return FloatDepthwiseEntries(
      table: table, square: squareKind.flatMap { kernels.entry($0.rawValue) } ?? table, eightChannels: eightChannels,
      zeros: zeros)
  }

  /// Runs the `kind` kernel (one the set `has`) on `arguments` (a byte kind's with its
  /// requantization record and lanes). A float kind leaves the block pointers of `arguments` past
  /// the blocks it computed.
  @usableFromInline package func run(_ kind: DepthwiseKernelGenerator.ElementKind, _ arguments: inout DepthwiseKernelArguments) {
    guard let entry = kernels.entry(kind.rawValue) else { preconditionFailure("no \(kind) depthwise kernel for \(isa)") }
    precondition(
      kind.requantizedOutput == nil || (arguments.requantization != nil && arguments.requantizationLanes != nil),
      "the \(kind) depthwise kernel needs its requantization constants")
    precondition(arguments.blockCount >= 1, "a depthwise call covers at least one block")
    // The float kinds move the block pointers on in `arguments` as they go.
    callKernel(at: entry, &arguments)
  }
}

/// The float depthwise kernels one convolution calls, looked up once per run
/// (``GeneratedDepthwiseKernels/floatEntries(squareKind:needsEightChannels:)``), so that its rows
/// call them directly: no look-up and no reference to count per call. Valid while the set lives
/// (the process's sets live for the process).
@usableFromInline package struct FloatDepthwiseEntries {
  /// The tap-table kind (`.float`).
  @usableFromInline package let table: UnsafeRawPointer
  /// The kind of the calls that cover a whole square filter (the tap-table kind where the set has
  /// no square-filter kind for the filter).
  @usableFromInline package let square: UnsafeRawPointer
  /// The eight-channel kind, when it was asked for.
  @usableFromInline package let eightChannels: UnsafeRawPointer?
  /// The set's sixteen zeros: the start of sums without bias.
  @usableFromInline package let zeros: UnsafeRawPointer

  @inlinable init(
    table: UnsafeRawPointer, square: UnsafeRawPointer, eightChannels: UnsafeRawPointer?, zeros: UnsafeRawPointer
  ) {
    self.table = table
    self.square = square
    self.eightChannels = eightChannels
    self.zeros = zeros
  }

  /// Runs the kernel at `entry` (one of this struct's) on `arguments` (`blockCount` at least 1);
  /// it moves the block pointers of `arguments` past the blocks it computed.
  @inlinable @inline(__always) package func run(_ entry: UnsafeRawPointer, _ arguments: inout DepthwiseKernelArguments) {
    callKernel(at: entry, &arguments)
  }
}
