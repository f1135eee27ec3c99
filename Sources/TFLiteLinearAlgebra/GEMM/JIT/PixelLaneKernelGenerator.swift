// int8 1×1 stride-1 convolutions into very few output channels (segmentation and score heads:
// N = 1–4 channels from K ≤ 32) with output *bytes* on the vector lanes instead of output channels.
// The GEMM tiles put 16 channels on a zmm's lanes, so N = 1 wastes 15 of 16 lanes; here the 16·N
// output bytes of 16 pixels are N vectors of 16 lanes, lane ℓ of vector j holding output byte
// 16j + ℓ: pixel (16j + ℓ) / N, channel (16j + ℓ) mod N. Per block of 16 pixels (AVX512-VNNI):
// 1. the block's 16·K input bytes are loaded (K / 4 zmm) and their sign bits flipped (int8 → the
//    unsigned form the dot products read, as everywhere else: the input offset is in the bias);
// 2. where a quad's 16 pixels span more than two loaded vectors (N = 1 from K = 16 or 32, N = 2
//    from K = 24 or 32), one or two stages split the vectors into even and odd dwords first
//    (`PixelLaneLayout`); then for every output vector j and depth quad d, `vpermi2d` gathers into
//    lane ℓ the quad d of lane ℓ's pixel from two adjacent vectors (indices constant per N and K), and
//    `vpdpbusd` adds its dot product with the weight vector whose lane ℓ holds quad d of lane ℓ's
//    channel (constant per convolution: the channel pattern repeats every `period` vectors);
// 3. the sums, started from the biases of the lanes' channels, are requantized by the shared
//    emission (`RequantizationEmission`, from a `RequantizationTable` record whose lane ℓ holds
//    lane ℓ's channel) and stored as 16 contiguous output bytes.
// The function is `void kernel(const PixelLaneKernelArguments *)` (System V); registers: rdi the
// arguments, rax the input, rdx the output, rcx the block counter, r8 the weights, r9 the indices,
// rsi the table, r11 the lanes; zmm0… the loaded input (and the stages' second bank), then the
// weights, zmm27 the gathered quad, zmm28 the sums, zmm29–30 the emission's scratch, zmm31 the
// sign flip; `vzeroupper` before returning.

/// The arguments of a pixel-lane kernel, passed by pointer (the kernel reads each field at its
/// `MemoryLayout` offset).
@usableFromInline package struct PixelLaneKernelArguments {
  /// The first block's input: 16 pixels of K int8 bytes each, contiguous.
  @usableFromInline package var input: UnsafeRawPointer
  /// Blocks of 16 pixels (0 or more).
  @usableFromInline package var blocks: Int
  /// The first block's 16·N output bytes.
  @usableFromInline package var output: UnsafeMutableRawPointer
  /// `period × K/4` weight vectors of 64 bytes (`PixelLaneKernelGenerator.weightVectors`).
  @usableFromInline package var weights: UnsafeRawPointer
  /// `N × K/4 + 2` index vectors of 64 bytes (`PixelLaneKernelGenerator.indices`).
  @usableFromInline package var indices: UnsafeRawPointer
  /// `period` `RequantizationTable` records, record t for output vectors j with j mod period = t.
  @usableFromInline package var table: UnsafeRawPointer
  /// The `RequantizationLanes`.
  @usableFromInline package var lanes: UnsafeRawPointer
  /// What the input bytes are XOR-ed with: 0x80 in every byte.
  @usableFromInline package var signFlip: UInt32 = 0x8080_8080
}

/// Generates the pixel-lane kernels described at the top of this file.
@usableFromInline package enum PixelLaneKernelGenerator {
  /// Pixels per block (one zmm of output lanes per output channel).
  @usableFromInline package static let blockPixels = 16
  /// Most output channels.
  @usableFromInline package static let maximumOutputs = 4
  /// Most input channels.
  @usableFromInline package static let maximumDepth = 32

  /// Why a kernel cannot be generated.
  @usableFromInline package enum Failure: Error, Equatable {
    /// `supports(outputs:depth:)` is false.
    case unsupported(outputs: Int, depth: Int)
  }

  /// Output vectors after which the lanes' channels repeat: N / gcd(N, 16).
  @usableFromInline package static func period(outputs: Int) -> Int {
    var (a, b) = (outputs, blockPixels)
    while b != 0 { (a, b) = (b, a % b) }
    return outputs / a
  }

  /// True when `outputs` channels from `depth` int8 channels have a kernel (`PixelLaneLayout`):
  /// 1–4 outputs, a depth that is a multiple of 4 up to `maximumDepth`, each gathered quad within
  /// two adjacent vectors after at most two deinterleaving stages, and every vector in a register.
  @usableFromInline package static func supports(outputs: Int, depth: Int) -> Bool {
    PixelLaneLayout(outputs: outputs, depth: depth) != nil
  }

  /// The constant vectors a kernel reads through `PixelLaneKernelArguments.indices`: the `vpermi2d`
  /// indices of output vector j and quad d at j · K/4 + d (lane ℓ's source dword relative to the
  /// first of its two vectors), then those of the deinterleaving stages' even and odd dwords.
  /// Only for supported shapes.
  @usableFromInline package static func indices(outputs: Int, depth: Int) -> [Int32] {
    guard let layout = PixelLaneLayout(outputs: outputs, depth: depth) else { return [] }
    var indices: [Int32] = []
    for vector in 0..<outputs {
      for quad in 0..<layout.quads {
        let first = layout.firstSource(vector: vector, quad: quad) ?? 0
        for lane in 0..<16 {
          indices.append(Int32(layout.position[layout.sourceQuad(vector: vector, lane: lane, quad: quad)] - 16 * first))
        }
      }
    }
    let evenLanes: [Int32] = (0..<16).map { Int32(2 * $0) }
    let oddLanes: [Int32] = (0..<16).map { Int32(2 * $0 + 1) }
    return indices + evenLanes + oddLanes
  }

  /// The weight vectors, (t, d) at t · K/4 + d for t < period: lane ℓ holds the four weights of
  /// depths 4d…4d + 3 of channel (16t + ℓ) mod N; `weight(channel, k)` is the int8 weight.
  @usableFromInline package static func weightVectors(
    outputs: Int, depth: Int, weight: (_ channel: Int, _ k: Int) -> Int8
  ) -> [Int8] {
    var bytes: [Int8] = []
    for vector in 0..<period(outputs: outputs) {
      for quad in 0..<depth / 4 {
        for lane in 0..<16 {
          for k in 4 * quad..<4 * quad + 4 { bytes.append(weight((blockPixels * vector + lane) % outputs, k)) }
        }
      }
    }
    return bytes
  }

  /// The channel of lane `lane` of the record of output vectors j with j mod period = `record`.
  @usableFromInline package static func channel(outputs: Int, record: Int, lane: Int) -> Int {
    (blockPixels * record + lane) % outputs
  }

  /// The machine code of the kernel of `outputs` int8 channels from `depth` int8 channels whose
  /// requantization takes the steps of `form`.
  @usableFromInline package static func code(outputs: Int, depth: Int, form: RequantizationForm) throws(Failure) -> [UInt8] {
    guard let layout = PixelLaneLayout(outputs: outputs, depth: depth) else {
      throw .unsupported(outputs: outputs, depth: depth)
    }
    let quads = layout.quads
    let flip = VectorRegister(31)
    let gathered = VectorRegister(27)
    let sums = VectorRegister(28)
    /// Loaded vector `index` after `level` stages: the stages go back and forth between two banks.
    func source(_ index: Int, level: Int) -> VectorRegister { VectorRegister(level % 2 * quads + index) }
    func weight(_ record: Int, _ quad: Int) -> VectorRegister {
      VectorRegister(layout.banks * quads + record * quads + quad)
    }
    let vectorBytes = Int(RequantizationTable.fieldBytes)
    /// The constant vector `index` of `indices(outputs:depth:)`.
    func constant(_ index: Int) -> MemoryOperand { MemoryOperand(.r9, Int32(index * vectorBytes)) }
    let stageIndices = outputs * quads
    var assembler = X86Assembler()
    assembler.loadArguments(
      of: PixelLaneKernelArguments.self,
      [
        .rax: \.input, .rcx: \.blocks, .rdx: \.output, .r8: \.weights, .r9: \.indices, .rsi: \.table,
        .r11: \.lanes,
      ])
    assembler.vpbroadcastdZMM(flip, argumentOperand(\PixelLaneKernelArguments.signFlip))
    for record in 0..<layout.records {
      for quad in 0..<quads {
        assembler.load(.zmm, weight(record, quad), MemoryOperand(.r8, Int32((record * quads + quad) * vectorBytes)))
      }
    }
    let emission = RequantizationEmission(
      width: .zmm, output: .int8, table: .rsi, lanes: .r11, scratch: (VectorRegister(29), VectorRegister(30)),
      addsBias: false, form: form)
    let blocks = CountedLoop(&assembler, counting: .rcx)
    for index in 0..<quads {
      assembler.load(.zmm, source(index, level: 0), MemoryOperand(.rax, Int32(index * vectorBytes)))
      assembler.vpxordZMM(source(index, level: 0), source(index, level: 0), flip)
    }
    // Stage by stage, each run of `run` vectors splits into its even dwords, then its odd ones.
    for level in 0..<layout.levels {
      let run = quads >> level
      for start in stride(from: 0, to: quads, by: run) {
        for pair in 0..<run / 2 {
          for (half, parity) in [(pair, 0), (run / 2 + pair, 1)] {
            let target = source(start + half, level: level + 1)
            assembler.load(.zmm, target, constant(stageIndices + parity))
            assembler.vpermi2dZMM(
              target, source(start + 2 * pair, level: level), source(start + 2 * pair + 1, level: level))
          }
        }
      }
    }
    var record = 0
    for vector in 0..<outputs {
      let vectorRecord = vector % layout.records
      if vectorRecord != record {
        assembler.add(.rsi, Int32((vectorRecord - record) * RequantizationTable.blockBytes))
        record = vectorRecord
      }
      assembler.load(.zmm, sums, MemoryOperand(.rsi, RequantizationTable.Field.bias.offset))
      for quad in 0..<quads {
        let first = layout.firstSource(vector: vector, quad: quad) ?? 0
        assembler.load(.zmm, gathered, constant(vector * quads + quad))
        assembler.vpermi2dZMM(
          gathered, source(first, level: layout.levels), source(min(first + 1, quads - 1), level: layout.levels))
        assembler.vpdpbusdZMM(sums, gathered, weight(vectorRecord, quad))
      }
      emission.emit(&assembler, sums: [sums], to: MemoryOperand(.rdx, Int32(vector * blockPixels)))
    }
    if record != 0 { assembler.sub(.rsi, Int32(record * RequantizationTable.blockBytes)) }
    assembler.add(.rax, Int32(quads * vectorBytes))
    assembler.add(.rdx, Int32(outputs * blockPixels))
    blocks.end(&assembler)
    assembler.returnFromKernel(restoring: [])
    return assembler.finishedCode()
  }
}

/// Where a pixel-lane kernel's input quads sit. A block's 16 pixels of K/4 quads are K/4 loaded
/// vectors, dword s = pixel · K/4 + quad; output vector j gathers for quad d the dwords of its
/// lanes' pixels with one `vpermi2d`, so they must lie in two adjacent vectors. Where they do not
/// (one channel from 16 or 32 input channels: a quad's 16 pixels span four or eight vectors), up
/// to two deinterleaving stages first split each run of vectors into its even and then its odd
/// dwords (two `vpermi2d` per pair), which brings every quad's pixels together.
struct PixelLaneLayout {
  /// Output channels N.
  let outputs: Int
  /// Depth quads K/4.
  let quads: Int
  /// Output vectors after which the lanes' channels repeat.
  let records: Int
  /// Deinterleaving stages (0–2).
  let levels: Int
  /// Register banks of K/4 vectors: 1, or 2 when stages go back and forth.
  var banks: Int { levels == 0 ? 1 : 2 }
  /// Where the block's dword s sits after the stages (vector `position[s] / 16`, lane `% 16`).
  let position: [Int]

  /// The layout of the fewest stages that gathers every quad from two vectors within the
  /// registers (27 below the fixed ones: the loaded banks and the weight vectors); nil when there is none.
  init?(outputs: Int, depth: Int) {
    guard (1...PixelLaneKernelGenerator.maximumOutputs).contains(outputs), depth > 0, depth % 4 == 0,
      depth <= PixelLaneKernelGenerator.maximumDepth
    else { return nil }
    let quads = depth / 4
    let records = PixelLaneKernelGenerator.period(outputs: outputs)
    self.outputs = outputs
    self.quads = quads
    self.records = records
    var held = Array(0..<16 * quads)  // held[place] = the dword there
    var levels = 0
    while true {
      var position = held
      for (place, dword) in held.enumerated() { position[dword] = place }
      guard ((levels == 0 ? 1 : 2) + records) * quads <= 27 else { return nil }
      let gathersFromPairs = (0..<outputs).allSatisfy { vector in
        (0..<quads).allSatisfy {
          Self.firstSource(outputs: outputs, quads: quads, position: position, vector: vector, quad: $0) != nil
        }
      }
      if gathersFromPairs {
        self.levels = levels
        self.position = position
        return
      }
      let run = quads >> levels
      guard levels < 2, run % 2 == 0 else { return nil }
      var next = held
      for start in stride(from: 0, to: quads, by: run) {
        for pair in 0..<run / 2 {
          let joined = Array(held[16 * (start + 2 * pair)..<16 * (start + 2 * pair + 2)])
          for lane in 0..<16 {
            next[16 * (start + pair) + lane] = joined[2 * lane]
            next[16 * (start + run / 2 + pair) + lane] = joined[2 * lane + 1]
          }
        }
      }
      held = next
      levels += 1
    }
  }

  /// The block's input dword (pixel · K/4 + quad) that lane `lane` of output vector `vector` reads
  /// for depth quad `quad`.
  static func sourceQuad(outputs: Int, quads: Int, vector: Int, lane: Int, quad: Int) -> Int {
    (PixelLaneKernelGenerator.blockPixels * vector + lane) / outputs * quads + quad
  }

  /// `firstSource(vector:quad:)` of the dwords' places `position`.
  static func firstSource(outputs: Int, quads: Int, position: [Int], vector: Int, quad: Int) -> Int? {
    let vectors = (0..<16).map {
      position[sourceQuad(outputs: outputs, quads: quads, vector: vector, lane: $0, quad: quad)] / 16
    }
    let first = vectors.min() ?? 0
    return (vectors.max() ?? 0) - first <= 1 ? first : nil
  }

  /// The block's input dword that lane `lane` of output vector `vector` reads for quad `quad`.
  func sourceQuad(vector: Int, lane: Int, quad: Int) -> Int {
    Self.sourceQuad(outputs: outputs, quads: quads, vector: vector, lane: lane, quad: quad)
  }

  /// The first of the two adjacent vectors (after the stages) that hold every dword output vector
  /// `vector` reads for `quad`; nil when they span more than two.
  func firstSource(vector: Int, quad: Int) -> Int? {
    Self.firstSource(outputs: outputs, quads: quads, position: position, vector: vector, quad: quad)
  }
}

/// The pixel-lane kernels of the process, one per (outputs, depth, requantization form), each
/// generated when a convolution first reserves it and mapped with the other reserved kernels (a
/// bounded cache: at most 4 × 8 × 4 kernels, none over about a kilobyte). AVX512-VNNI only: the
/// `GeneratedDotProductKernels` of that level hold them.
@usableFromInline package final class PixelLaneKernels: @unchecked Sendable {
  // @unchecked Sendable: `LazyExecutableKernels` guards the kernels.

  /// The kernels, by `index(outputs:depth:form:)`.
  @usableFromInline let kernels: LazyExecutableKernels

  /// The kernels, none generated yet.
  init() {
    let forms = RequantizationForm.all
    kernels = LazyExecutableKernels(
      count: PixelLaneKernelGenerator.maximumOutputs * PixelLaneKernelGenerator.maximumDepth / 4 * forms.count
    ) { index in
      let outputs = index / forms.count / (PixelLaneKernelGenerator.maximumDepth / 4) + 1
      let depth = (index / forms.count % (PixelLaneKernelGenerator.maximumDepth / 4) + 1) * 4
      return try? PixelLaneKernelGenerator.code(outputs: outputs, depth: depth, form: forms[index % forms.count])
    }
  }

  /// The kernel's index in `kernels` (only for supported shapes).
  @inlinable @inline(__always) static func index(outputs: Int, depth: Int, form: RequantizationForm) -> Int {
    ((outputs - 1) * (PixelLaneKernelGenerator.maximumDepth / 4) + depth / 4 - 1) * RequantizationForm.all.count
      + form.index
  }

  /// Generates the kernel of a supported shape, to be mapped with the process's other reserved
  /// kernels (at the end of `allocateTensors()` or its first `entry`).
  package func reserve(outputs: Int, depth: Int, form: RequantizationForm) {
    kernels.reserve([Self.index(outputs: outputs, depth: depth, form: form)])
  }

  /// The kernel's first instruction; nil when the OS refuses executable memory for it.
  @inlinable package func entry(outputs: Int, depth: Int, form: RequantizationForm) -> UnsafeRawPointer? {
    kernels.entry(Self.index(outputs: outputs, depth: depth, form: form))
  }
}
