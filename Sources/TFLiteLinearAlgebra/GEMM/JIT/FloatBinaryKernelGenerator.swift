// The generated float ADD, SUB and MUL loops (AVX2 and AVX-512) with the fused activation's clamp,
// over the rows of a two-dimensional broadcast: row r, element i is clamp(lhs(r, i) ∘ rhs(r, i)),
// where each operand either streams along the row or repeats one value over it (a per-row or
// whole-tensor scalar), and moves by its own byte stride from row to row (0 for a per-channel
// operand that every row reads again). A row runs in whole blocks of 16 floats and one masked
// block for its last 1–15 (`vmovups` with a mask register on AVX-512, `vmaskmovps` on AVX2), so
// no element is read or written past the row. One IEEE operation per element and the clamp as
// `ActivationRange.clamp` does it: the same bits as the Swift kernels.

/// The arguments of a generated float binary kernel, passed by pointer (the kernel reads each
/// field at its `MemoryLayout` offset).
@usableFromInline package struct FloatBinaryKernelArguments {
  /// The left operand of the first row: the row's elements, or the one value it repeats.
  @usableFromInline package var lhs: UnsafePointer<Float>
  /// The right operand of the first row, as `lhs`.
  @usableFromInline package var rhs: UnsafePointer<Float>
  /// The first row's outputs.
  @usableFromInline package var output: UnsafeMutablePointer<Float>
  /// Rows.
  @usableFromInline package var rowCount: Int
  /// Whole blocks of 16 floats in a row.
  @usableFromInline package var blockCount: Int
  /// Bytes from one row's left operand to the next.
  @usableFromInline package var lhsRowBytes: Int
  /// Bytes from one row's right operand to the next.
  @usableFromInline package var rhsRowBytes: Int
  /// Bytes from one row's outputs to the next.
  @usableFromInline package var outputRowBytes: Int
  /// Floats after the whole blocks of a row (0..<16).
  @usableFromInline package var tailCount: Int
  /// The AVX-512 mask of the tail: bit i set for i < `tailCount`.
  @usableFromInline package var tailMask: Int
  /// The AVX2 masks of the tail: 16 lanes, all ones for i < `tailCount`, zero after.
  @usableFromInline package var tailLanes: UnsafePointer<Int32>
  /// Lowest output of the clamp.
  @usableFromInline package var lower: Float
  /// Highest output of the clamp.
  @usableFromInline package var upper: Float
}

/// Writes the float binary kernels `void kernel(const FloatBinaryKernelArguments *)` in the
/// System V ABI. Registers: rdi the arguments; rsi, rdx, r8 the current row's operands and
/// outputs; r10, r11, rax the same inside the row; rcx the row counter, r9 the block counter;
/// vectors 0–1 the lanes computed, 2–3 the repeated values, 12–13 the AVX2 tail masks, 14–15 the
/// clamp bounds, k1 the AVX-512 tail mask. No callee-saved register is used.
@usableFromInline package enum FloatBinaryKernelGenerator {
  /// The lane-wise operation.
  @usableFromInline package enum Operation: Int, Sendable, CaseIterable {
    /// lhs + rhs.
    case add
    /// lhs − rhs.
    case subtract
    /// lhs · rhs.
    case multiply

    var instruction: PackedFloatOperation {
      switch self {
      case .add: .vaddps
      case .subtract: .vsubps
      case .multiply: .vmulps
      }
    }
  }

  /// What one kernel computes.
  @usableFromInline package struct Variant: Equatable, Sendable {
    /// The operation.
    @usableFromInline package var operation: Operation
    /// True when the left operand is one value per row (its row pointer is read, not streamed).
    @usableFromInline package var lhsRepeats: Bool
    /// True when the right operand is one value per row.
    @usableFromInline package var rhsRepeats: Bool
    /// True when the outputs are clamped to `lower...upper`.
    @usableFromInline package var clamps: Bool

    @inlinable package init(operation: Operation, lhsRepeats: Bool, rhsRepeats: Bool, clamps: Bool) {
      self.operation = operation
      self.lhsRepeats = lhsRepeats
      self.rhsRepeats = rhsRepeats
      self.clamps = clamps
    }

    /// Position in `all`.
    @usableFromInline package var index: Int {
      ((operation.rawValue * 2 + (lhsRepeats ? 1 : 0)) * 2 + (rhsRepeats ? 1 : 0)) * 2 + (clamps ? 1 : 0)
    }

    /// Every variant, in `index` order.
    @usableFromInline package static let all: [Variant] = Operation.allCases.flatMap { operation in
      [false, true].flatMap { lhsRepeats in
        [false, true].flatMap { rhsRepeats in
          [false, true].map { Variant(operation: operation, lhsRepeats: lhsRepeats, rhsRepeats: rhsRepeats, clamps: $0) }
        }
      }
    }
  }

  /// Floats per block (one zmm, two ymm).
  @usableFromInline package static let blockFloats = 16

  /// The machine code of `variant` for `isa`.
  @usableFromInline package static func code(_ variant: Variant, isa: GeneratedKernelISA) -> [UInt8] {
    let width: VectorWidth = isa == .avx512 ? .zmm : .ymm
    var assembler = X86Assembler()
    assembler.loadArguments(
      of: FloatBinaryKernelArguments.self, [.rsi: \.lhs, .rdx: \.rhs, .r8: \.output, .rcx: \.rowCount])
    let left = VectorRegister(0), right = VectorRegister(1)
    let repeatedLeft = VectorRegister(2), repeatedRight = VectorRegister(3)
    let tailLanes = [VectorRegister(12), VectorRegister(13)]
    let lower = VectorRegister(14), upper = VectorRegister(15)
    let tailMask = MaskRegister(1)
    if variant.clamps {
      assembler.broadcast(width, lower, argumentOperand(\FloatBinaryKernelArguments.lower))
      assembler.broadcast(width, upper, argumentOperand(\FloatBinaryKernelArguments.upper))
    }
    if width == .zmm {
      assembler.kmovw(tailMask, argumentOperand(\FloatBinaryKernelArguments.tailMask))
    } else {
      assembler.loadVectors(
        width, tailLanes, pointedToBy: argumentOperand(\FloatBinaryKernelArguments.tailLanes), through: .rax)
    }
    let done = assembler.makeLabel(), row = assembler.makeLabel(), block = assembler.makeLabel()
    let tail = assembler.makeLabel(), nextRow = assembler.makeLabel()
    assembler.test(.rcx, .rcx)
    assembler.jump(if: .zero, to: done)
    assembler.bind(row)
    assembler.mov(.r10, .rsi)
    assembler.mov(.r11, .rdx)
    assembler.mov(.rax, .r8)
    if variant.lhsRepeats { assembler.broadcast(width, repeatedLeft, MemoryOperand(.rsi)) }
    if variant.rhsRepeats { assembler.broadcast(width, repeatedRight, MemoryOperand(.rdx)) }

    /// One block (or the tail block when `masked`): load, operate, clamp, store.
    func emitBlock(masked: Bool) {
      for part in 0..<width.vectorsPerRow {
        let offset = Int32(part) * width.bytes
        func operand(_ repeats: Bool, _ repeated: VectorRegister, _ register: VectorRegister, _ base: GPRegister)
          -> VectorRegister
        {
          guard !repeats else { return repeated }
          let memory = MemoryOperand(base, offset)
          if !masked {
            assembler.load(width, register, memory)
          } else if width == .zmm {
            assembler.vmovupsZMM(register, memory, mask: tailMask)
          } else {
            assembler.vmaskmovpsYMM(register, mask: tailLanes[part], memory)
          }
          return register
        }
        let lhs = operand(variant.lhsRepeats, repeatedLeft, left, .r10)
        let rhs = operand(variant.rhsRepeats, repeatedRight, right, .r11)
        assembler.packed(width, variant.operation.instruction, left, lhs, rhs)
        if variant.clamps { assembler.clamp(width, left, lower: lower, upper: upper) }
        let destination = MemoryOperand(.rax, offset)
        if !masked {
          assembler.store(width, destination, left)
        } else if width == .zmm {
          assembler.vmovupsZMM(destination, left, mask: tailMask)
        } else {
          assembler.vmaskmovpsYMM(destination, mask: tailLanes[part], left)
        }
      }
    }

    let blockBytes = Int32(blockFloats * MemoryLayout<Float>.stride)
    assembler.mov(.r9, argumentOperand(\FloatBinaryKernelArguments.blockCount))
    assembler.test(.r9, .r9)
    assembler.jump(if: .zero, to: tail)
    assembler.bind(block)
    emitBlock(masked: false)
    if !variant.lhsRepeats { assembler.add(.r10, blockBytes) }
    if !variant.rhsRepeats { assembler.add(.r11, blockBytes) }
    assembler.add(.rax, blockBytes)
    assembler.dec(.r9)
    assembler.jump(if: .notZero, to: block)
    assembler.bind(tail)
    assembler.mov(.r9, argumentOperand(\FloatBinaryKernelArguments.tailCount))
    assembler.test(.r9, .r9)
    assembler.jump(if: .zero, to: nextRow)
    emitBlock(masked: true)
    assembler.bind(nextRow)
    assembler.add(.rsi, argumentOperand(\FloatBinaryKernelArguments.lhsRowBytes))
    assembler.add(.rdx, argumentOperand(\FloatBinaryKernelArguments.rhsRowBytes))
    assembler.add(.r8, argumentOperand(\FloatBinaryKernelArguments.outputRowBytes))
    assembler.dec(.rcx)
    assembler.jump(if: .notZero, to: row)
    assembler.bind(done)
    assembler.returnFromKernel(restoring: [])
    return assembler.finishedCode()
  }
}

extension X86Assembler {
  /// `vbroadcastss register, [m32]` in `width`.
  mutating func broadcast(_ width: VectorWidth, _ register: VectorRegister, _ memory: MemoryOperand) {
    width == .ymm ? vbroadcastssYMM(register, memory) : vbroadcastssZMM(register, memory)
  }
}

/// The generated float binary kernels of one instruction set: each `FloatBinaryKernelGenerator`
/// variant (100–200 bytes) generated and mapped on its first request (`LazyExecutableKernels`), or
/// reserved by a node's prepare and mapped with the other reserved kernels, and kept for the life
/// of the process. Where the CPU lacks AVX2+FMA, where the OS refuses executable memory, or where
/// generated kernels are turned off (`SWIFTTFLITE_JIT=0`, ``RunnerOptions/usesGeneratedKernels``),
/// the Swift code runs.
@usableFromInline package final class GeneratedFloatBinaryKernels: GeneratedKernelFamily, @unchecked Sendable {
  // @unchecked Sendable: `kernels` is safe to share.

  /// The instruction set of the kernels.
  @usableFromInline package let isa: GeneratedKernelISA
  /// The kernel of each variant, by `Variant.index`.
  private let kernels: LazyExecutableKernels
  /// The AVX2 masks of a row's tail.
  private let tailLanes = AVX2LaneMasks.shared

  /// The kernels of `isa`, none generated yet.
  @usableFromInline package init(isa: GeneratedKernelISA) {
    self.isa = isa
    let variants = FloatBinaryKernelGenerator.Variant.all
    kernels = LazyExecutableKernels(count: variants.count) { FloatBinaryKernelGenerator.code(variants[$0], isa: isa) }
  }

  @usableFromInline package static let avx2Set: GeneratedFloatBinaryKernels? = GeneratedFloatBinaryKernels(isa: .avx2)
  @usableFromInline package static let avx512Set: GeneratedFloatBinaryKernels? = GeneratedFloatBinaryKernels(isa: .avx512)
  @usableFromInline package static let preferred: GeneratedFloatBinaryKernels? = preferredSet()

  /// A set of `isa`'s kernels of its own, none made, or nil when this CPU, OS or platform cannot
  /// run them (for tests of what a prepare reserves).
  package static func unshared(_ isa: GeneratedKernelISA) -> GeneratedFloatBinaryKernels? {
    kernels(for: isa).map { GeneratedFloatBinaryKernels(isa: $0.isa) }
  }

  /// Reserves (`LazyExecutableKernels/reserve(_:)`) the kernel of `variant`, so that a prepare has
  /// it mapped with the other reserved kernels at the end of `allocateTensors()` instead of in a
  /// page of its own at its first request mid-invoke.
  package func reserve(_ variant: FloatBinaryKernelGenerator.Variant) { kernels.reserve([variant.index]) }

  /// Computes `rowCount` rows of `rowLength` outputs: output row r (at `output + r · outputRowStride`)
  /// element i is `variant`'s operation on the operands' row r elements i, clamped to
  /// `lower...upper` when the variant clamps. A repeating operand's row r is its one value at
  /// `operand + r · rowStride`; a streamed one's elements follow it. Strides are in floats. False,
  /// with nothing written, when the kernel could not be mapped.
  @usableFromInline package func run(
    _ variant: FloatBinaryKernelGenerator.Variant, lhs: UnsafePointer<Float>, lhsRowStride: Int,
    rhs: UnsafePointer<Float>, rhsRowStride: Int, output: UnsafeMutablePointer<Float>, outputRowStride: Int,
    rowCount: Int, rowLength: Int, lower: Float = -.infinity, upper: Float = .infinity
  ) -> Bool {
    precondition(rowCount >= 0 && rowLength >= 0, "negative row count or length")
    guard let entry = kernels.entry(variant.index) else { return false }
    let blockFloats = FloatBinaryKernelGenerator.blockFloats
    let tailCount = rowLength % blockFloats
    let floatBytes = MemoryLayout<Float>.stride
    var arguments = FloatBinaryKernelArguments(
      lhs: lhs, rhs: rhs, output: output, rowCount: rowCount, blockCount: rowLength / blockFloats,
      lhsRowBytes: lhsRowStride * floatBytes, rhsRowBytes: rhsRowStride * floatBytes,
      outputRowBytes: outputRowStride * floatBytes, tailCount: tailCount, tailMask: (1 << tailCount) - 1,
      tailLanes: tailLanes.firstLanes(tailCount), lower: lower, upper: upper)
    callKernel(at: entry, &arguments)
    return true
  }
}
