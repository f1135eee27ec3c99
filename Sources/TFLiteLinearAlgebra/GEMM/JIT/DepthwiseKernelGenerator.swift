/// Generates the depthwise-convolution micro-kernels: one block of 16 channels for a run of output
/// pixels, each the sum over a list of taps of input vector × weight vector, channel by channel.
/// AVX2 uses two ymm per 16 channels, AVX-512 one zmm. The function is
/// `void kernel(const DepthwiseKernelArguments *)` in the System V ABI.
///
/// Two element kinds:
/// - `float`: float32 inputs and weights, `acc += input · weight` fused (FMA), then TFLite's clamp
///   `min(max(acc, lower), upper)`, stored as float32;
/// - `unsignedBytes`: unsigned 8-bit inputs zero-extended and int16 weights sign-extended to
///   32-bit lanes, `acc += input · weight` wrapping in Int32 (exact: |u8 · s16| < 2²³), stored as
///   Int32 sums for the caller to requantize.
///
/// For each output pixel p of `pixelCount` (inputs `inputPixelBytes` apart, outputs
/// `outputPixelBytes` apart), the accumulators start from the 16 values at `start`; for each tap t
/// of the table, the input vector at `input + p · inputPixelBytes + taps[2t]` is multiplied by the
/// weight vector at `weights + taps[2t + 1]`. Pixels go four at a time (the four share each weight
/// load), then one at a time.
///
/// Registers: rdi arguments, rsi/r10 the input/output of the current pixels, r8/r9 the input pixel
/// stride ×1/×3, r11/rbp the output pixel stride ×1/×3, r13 the weights, r14 the pixel counter, rdx
/// the tap cursor, rcx the tap counter, rax/rbx the tap's input/weight offset, r12 the tap's input
/// address. rbx, rbp, r12, r13 and r14 are callee-saved and pushed; `vzeroupper` before returning.
@usableFromInline package enum DepthwiseKernelGenerator {
  /// What the kernel multiplies.
  @usableFromInline package enum ElementKind: Int, Sendable, CaseIterable {
    /// float32 inputs and weights, clamped float32 results.
    case float
    /// Unsigned-byte inputs and int16 weights, Int32 sums.
    case unsignedBytes
  }

  /// Channels of one block: one zmm or two ymm of 32-bit lanes.
  @usableFromInline package static let blockChannels = 16

  /// The machine code of the `kind` kernel for `isa`.
  @usableFromInline package static func code(isa: GeneratedKernelISA, kind: ElementKind) -> [UInt8] {
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
  /// `tapCount` pairs (input offset, weight offset).
  @usableFromInline package var taps: UnsafePointer<Int>
  /// Taps of every pixel (0 leaves the start values).
  @usableFromInline package var tapCount: Int
  /// The weights at the block's first channel.
  @usableFromInline package var weights: UnsafeRawPointer
  /// Sixteen starting values: the float bias of the block, or Int32 zeros.
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

  /// The arguments from their parts.
  @inlinable package init(
    input: UnsafeRawPointer, inputPixelBytes: Int, taps: UnsafePointer<Int>, tapCount: Int, weights: UnsafeRawPointer,
    start: UnsafeRawPointer, output: UnsafeMutableRawPointer, outputPixelBytes: Int, pixelCount: Int,
    lower: Float = -.infinity, upper: Float = .infinity
  ) {
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
  }
}

/// Emits one kernel (see `DepthwiseKernelGenerator`).
private struct DepthwiseEmitter {
  let isa: GeneratedKernelISA
  let kind: DepthwiseKernelGenerator.ElementKind
  var assembler = X86Assembler()

  /// Vector registers per 16 channels: 2 ymm or 1 zmm.
  var vectorsPerBlock: Int { isa == .avx2 ? 2 : 1 }
  /// Channels per vector register.
  var lanes: Int { isa == .avx2 ? 8 : 16 }
  /// Pixels of the unrolled group.
  let groupPixels = 4

  let saved: [GPRegister] = [.rbx, .rbp, .r12, .r13, .r14]

  /// Accumulator of pixel `pixel`, vector `vector`: registers 0 ..< 8 (ymm) or 0 ..< 4 (zmm).
  func accumulator(_ pixel: Int, _ vector: Int) -> VectorRegister { VectorRegister(pixel * vectorsPerBlock + vector) }
  /// The weight vector `vector` of the current tap.
  func weight(_ vector: Int) -> VectorRegister { VectorRegister(groupPixels * vectorsPerBlock + vector) }
  /// The input vector `vector` of pixel `pixel`: one pair reused (ymm), one per pixel (zmm).
  func inputRegister(_ pixel: Int, _ vector: Int) -> VectorRegister {
    isa == .avx2 ? VectorRegister(10 + vector) : VectorRegister(5 + pixel)
  }
  var lowerRegister: VectorRegister { VectorRegister(isa == .avx2 ? 12 : 9) }
  var upperRegister: VectorRegister { VectorRegister(isa == .avx2 ? 13 : 10) }

  /// Offset of an argument field.
  func argument(_ field: PartialKeyPath<DepthwiseKernelArguments>) -> MemoryOperand {
    MemoryOperand(.rdi, Int32(MemoryLayout<DepthwiseKernelArguments>.offset(of: field)!))
  }

  /// Pixel `pixel` (0 to 3) of the group from `base`, pixels `stride` apart (`triple` = 3 × stride).
  func pixelAddress(_ base: GPRegister, _ pixel: Int, stride: GPRegister, triple: GPRegister, plus displacement: Int32)
    -> MemoryOperand
  {
    switch pixel {
    case 0: MemoryOperand(base, displacement)
    case 1: MemoryOperand(base, index: stride, scale: 1, displacement)
    case 2: MemoryOperand(base, index: stride, scale: 2, displacement)
    default: MemoryOperand(base, index: triple, scale: 1, displacement)
    }
  }

  /// Bytes of one vector's worth of inputs, weights and outputs.
  var inputVectorBytes: Int32 { Int32(kind == .float ? lanes * 4 : lanes) }
  var weightVectorBytes: Int32 { Int32(kind == .float ? lanes * 4 : lanes * 2) }
  var outputVectorBytes: Int32 { Int32(lanes * 4) }

  mutating func loadVector(_ register: VectorRegister, _ memory: MemoryOperand) {
    isa == .avx2 ? assembler.vmovupsYMM(register, memory) : assembler.vmovupsZMM(register, memory)
  }

  /// Loads (and widens) input or weight elements into 32-bit lanes.
  mutating func loadElements(_ register: VectorRegister, _ memory: MemoryOperand, weights: Bool) {
    switch (kind, isa, weights) {
    case (.float, _, _): loadVector(register, memory)
    case (.unsignedBytes, .avx2, false): assembler.vpmovzxbdYMM(register, memory)
    case (.unsignedBytes, .avx512, false): assembler.vpmovzxbdZMM(register, memory)
    case (.unsignedBytes, .avx2, true): assembler.vpmovsxwdYMM(register, memory)
    case (.unsignedBytes, .avx512, true): assembler.vpmovsxwdZMM(register, memory)
    }
  }

  /// `accumulator += input · weight`; the input register may be overwritten.
  mutating func multiplyAdd(_ accumulator: VectorRegister, _ input: VectorRegister, _ weight: VectorRegister) {
    switch (kind, isa) {
    case (.float, .avx2): assembler.vfmadd231psYMM(accumulator, input, weight)
    case (.float, .avx512): assembler.vfmadd231psZMM(accumulator, input, weight)
    case (.unsignedBytes, .avx2):
      assembler.vpmulldYMM(input, input, weight)
      assembler.vpadddYMM(accumulator, accumulator, input)
    case (.unsignedBytes, .avx512):
      assembler.vpmulldZMM(input, input, weight)
      assembler.vpadddZMM(accumulator, accumulator, input)
    }
  }

  /// The clamp of the float kernel: the accumulator is the second operand, so a NaN passes through.
  mutating func clamp(_ value: VectorRegister) {
    guard kind == .float else { return }
    if isa == .avx2 {
      assembler.vmaxpsYMM(value, lowerRegister, value)
      assembler.vminpsYMM(value, upperRegister, value)
    } else {
      assembler.vmaxpsZMM(value, lowerRegister, value)
      assembler.vminpsZMM(value, upperRegister, value)
    }
  }

  /// Computes and stores `pixels` (1 or 4) pixels at rsi/r10.
  mutating func emitPixels(_ pixels: Int) {
    assembler.mov(.rax, argument(\.start))
    for pixel in 0..<pixels {
      for vector in 0..<vectorsPerBlock {
        loadVector(accumulator(pixel, vector), MemoryOperand(.rax, Int32(vector) * outputVectorBytes))
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
    assembler.mov(.rbx, MemoryOperand(.rdx, 8))
    for vector in 0..<vectorsPerBlock {
      loadElements(weight(vector), MemoryOperand(.r13, index: .rbx, scale: 1, Int32(vector) * weightVectorBytes), weights: true)
    }
    assembler.lea(.r12, MemoryOperand(.rsi, index: .rax, scale: 1))
    for pixel in 0..<pixels {
      for vector in 0..<vectorsPerBlock {
        let input = inputRegister(pixel, vector)
        loadElements(
          input, pixelAddress(.r12, pixel, stride: .r8, triple: .r9, plus: Int32(vector) * inputVectorBytes), weights: false)
        multiplyAdd(accumulator(pixel, vector), input, weight(vector))
      }
    }
    assembler.add(.rdx, 16)
    assembler.dec(.rcx)
    assembler.jump(if: .notZero, to: tapLoop)
    assembler.bind(tapsDone)
    for pixel in 0..<pixels {
      for vector in 0..<vectorsPerBlock {
        let value = accumulator(pixel, vector)
        clamp(value)
        let address = pixelAddress(.r10, pixel, stride: .r11, triple: .rbp, plus: Int32(vector) * outputVectorBytes)
        isa == .avx2 ? assembler.vmovupsYMM(address, value) : assembler.vmovupsZMM(address, value)
      }
    }
  }

  mutating func emitKernel() {
    let exit = assembler.makeLabel()
    assembler.saveRegisters(saved)
    assembler.mov(.r14, argument(\.pixelCount))
    assembler.test(.r14, .r14)
    assembler.jump(if: .zero, to: exit)
    assembler.mov(.rsi, argument(\.input))
    assembler.mov(.r8, argument(\.inputPixelBytes))
    assembler.lea(.r9, MemoryOperand(.r8, index: .r8, scale: 2))
    assembler.mov(.r10, argument(\.output))
    assembler.mov(.r11, argument(\.outputPixelBytes))
    assembler.lea(.rbp, MemoryOperand(.r11, index: .r11, scale: 2))
    assembler.mov(.r13, argument(\.weights))
    if kind == .float {
      isa == .avx2
        ? assembler.vbroadcastssYMM(lowerRegister, argument(\.lower))
        : assembler.vbroadcastssZMM(lowerRegister, argument(\.lower))
      isa == .avx2
        ? assembler.vbroadcastssYMM(upperRegister, argument(\.upper))
        : assembler.vbroadcastssZMM(upperRegister, argument(\.upper))
    }

    // Groups of four pixels.
    let singles = assembler.makeLabel()
    assembler.cmp(.r14, Int32(groupPixels))
    assembler.jump(if: .below, to: singles)
    let group = assembler.makeLabel()
    assembler.bind(group)
    emitPixels(groupPixels)
    assembler.lea(.rsi, MemoryOperand(.rsi, index: .r8, scale: 4))
    assembler.lea(.r10, MemoryOperand(.r10, index: .r11, scale: 4))
    assembler.sub(.r14, Int32(groupPixels))
    assembler.cmp(.r14, Int32(groupPixels))
    assembler.jump(if: .aboveOrEqual, to: group)

    // The last pixels one at a time.
    assembler.bind(singles)
    assembler.test(.r14, .r14)
    assembler.jump(if: .zero, to: exit)
    let single = assembler.makeLabel()
    assembler.bind(single)
    emitPixels(1)
    assembler.add(.rsi, .r8)
    assembler.add(.r10, .r11)
    assembler.dec(.r14)
    assembler.jump(if: .notZero, to: single)

    assembler.bind(exit)
    assembler.returnFromKernel(restoring: saved)
  }
}

/// The generated depthwise kernels (`DepthwiseKernelGenerator`) of one instruction set, both
/// element kinds, made together on first use and kept for the life of the process (a bounded
/// cache: two kernels of a few hundred bytes per instruction set).
///
/// They follow the float GEMM's switches (``GeneratedFloatKernels/current``): off with
/// `SWIFTTFLITE_JIT=0`, for a runner with ``RunnerOptions/usesGeneratedKernels`` false, when the OS
/// refuses executable memory, on CPUs without AVX2+FMA and off x86-64.
@usableFromInline package final class GeneratedDepthwiseKernels: @unchecked Sendable {
  // @unchecked Sendable: everything is immutable after `init` (the zero vector is never written).

  /// The instruction set of the kernels.
  @usableFromInline package let isa: GeneratedKernelISA
  /// The kernel of each element kind, by raw value.
  private let kernels: [ExecutableCode]
  /// Sixteen zeros (as floats and as Int32): the start of sums without bias.
  @usableFromInline package let zeros: UnsafeRawPointer

  private typealias Entry = @convention(c) (UnsafeRawPointer) -> Void

  /// Generates both kernels of `isa`; nil when the OS refuses executable memory.
  private init?(isa: GeneratedKernelISA) {
    var kernels: [ExecutableCode] = []
    for kind in DepthwiseKernelGenerator.ElementKind.allCases {
      guard let executable = ExecutableCode(DepthwiseKernelGenerator.code(isa: isa, kind: kind)) else { return nil }
      kernels.append(executable)
    }
    self.isa = isa
    self.kernels = kernels
    let zeros = UnsafeMutableRawPointer.allocate(byteCount: 64, alignment: 64)
    zeros.initializeMemory(as: UInt8.self, repeating: 0, count: 64)
    self.zeros = UnsafeRawPointer(zeros)
  }

  deinit { zeros.deallocate() }

  private static let avx2 = GeneratedDepthwiseKernels(isa: .avx2)
  private static let avx512 = GeneratedDepthwiseKernels(isa: .avx512)

  /// The kernels of `isa`, or nil when this CPU, OS or platform cannot run them.
  @usableFromInline package static func kernels(for isa: GeneratedKernelISA) -> GeneratedDepthwiseKernels? {
    guard let supported = GeneratedKernelISA.supported, isa <= supported else { return nil }
    switch isa {
    case .avx2: return avx2
    case .avx512: return avx512
    }
  }

  /// The kernels a depthwise convolution started on this thread uses: those of the float GEMM's
  /// instruction set (``GeneratedFloatKernels/currentISA``), or nil when generated kernels are off.
  @usableFromInline package static var current: GeneratedDepthwiseKernels? {
    GeneratedFloatKernels.currentISA.flatMap { kernels(for: $0) }
  }

  /// Runs the `kind` kernel on `arguments`.
  @usableFromInline package func run(_ kind: DepthwiseKernelGenerator.ElementKind, _ arguments: inout DepthwiseKernelArguments) {
    let entry = unsafeBitCast(kernels[kind.rawValue].entry, to: Entry.self)
    withUnsafePointer(to: &arguments) { entry(UnsafeRawPointer($0)) }
  }
}
