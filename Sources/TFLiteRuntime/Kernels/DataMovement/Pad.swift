// PAD, PADV2 (constant padding) and MIRROR_PAD (REFLECT / SYMMETRIC).

import TFLiteFormat

/// Amounts added before and after each axis of a tensor, validated against its shape.
struct Paddings: Equatable {
  /// Elements added in front of each axis.
  var before: [Int]
  /// Elements added after each axis.
  var after: [Int]

  /// Reads an `[rank, 2]` paddings matrix given row-major as `values`.
  init(matrix values: [Int], rank: Int, op: String) throws {
    guard values.count == rank * 2 else {
      throw KernelError.invalid("\(op): paddings hold \(values.count) values, expected \(rank) × 2")
    }
    before = stride(from: 0, to: values.count, by: 2).map { values[$0] }
    after = stride(from: 1, to: values.count, by: 2).map { values[$0] }
    guard values.allSatisfy({ $0 >= 0 && $0 <= Int(Int32.max) }) else {
      throw KernelError.invalid("\(op): paddings must be non-negative, got \(values)")
    }
  }

  /// The padded shape of `inputShape`, or a thrown error when it is too large.
  func outputShape(of inputShape: [Int], op: String) throws -> [Int] {
    var shape = inputShape
    for axis in shape.indices {
      shape[axis] = inputShape[axis] + before[axis] + after[axis]
    }
    _ = try checkedElementCount(shape, op: op)
    return shape
  }

  /// How many trailing axes carry no padding: they travel together as one contiguous unit.
  func unpaddedTrailingAxes() -> Int {
    var count = 0
    for axis in before.indices.reversed() {
      guard before[axis] == 0, after[axis] == 0 else { break }
      count += 1
    }
    return count
  }
}

/// The axes a padding routine recurses over: leading axes of the input, with the unpadded
/// trailing axes folded into a `unit` of contiguous elements that is always copied whole.
private struct PaddedAxes {
  var extents: [Int]
  var before: [Int]
  var after: [Int]
  /// Elements per unit (product of the folded trailing extents).
  var unit: Int
  /// Input elements per step of each axis.
  var inputBlock: [Int]
  /// Output elements per step of each axis.
  var outputBlock: [Int]

  init(inputShape: [Int], paddings: Paddings) {
    let kept = inputShape.count - paddings.unpaddedTrailingAxes()
    extents = Array(inputShape[0..<kept])
    before = Array(paddings.before[0..<kept])
    after = Array(paddings.after[0..<kept])
    unit = inputShape[kept...].reduce(1, *)
    inputBlock = [Int](repeating: unit, count: kept)
    outputBlock = inputBlock
    for axis in stride(from: kept - 2, through: 0, by: -1) {
      inputBlock[axis] = inputBlock[axis + 1] * extents[axis + 1]
      outputBlock[axis] = outputBlock[axis + 1] * (extents[axis + 1] + before[axis + 1] + after[axis + 1])
    }
  }
}

/// Pads with one constant element (PAD, PADV2; quantized kernels pass their zero point).
struct ConstantPad {
  private let axes: PaddedAxes
  /// Bytes per element.
  let elementSize: Int

  /// Plans padding a dense tensor of `inputShape` with elements of `elementSize` bytes.
  init(inputShape: [Int], paddings: Paddings, elementSize: Int) {
    axes = PaddedAxes(inputShape: inputShape, paddings: paddings)
    self.elementSize = elementSize
  }

  /// Writes the padded tensor; `value` points at the one element used for every padded slot.
  func run(from source: UnsafeRawPointer, to destination: UnsafeMutableRawPointer, value: UnsafeRawPointer) {
    if axes.extents.isEmpty {
      destination.copyMemory(from: source, byteCount: axes.unit &* elementSize)
      return
    }
    _ = padLevel(0, source, destination, value)
  }

  private func padLevel(
    _ level: Int, _ source: UnsafeRawPointer, _ destination: UnsafeMutableRawPointer, _ value: UnsafeRawPointer
  ) -> UnsafeMutableRawPointer {
    let block = axes.outputBlock[level]
    var output = destination
    fillElements(output, count: axes.before[level] &* block, value: value, elementSize: elementSize)
    output += axes.before[level] &* block &* elementSize
    if level == axes.extents.count - 1 {
      let bytes = axes.extents[level] &* axes.unit &* elementSize
      output.copyMemory(from: source, byteCount: bytes)
      output += bytes
    } else {
      let step = axes.inputBlock[level] &* elementSize
      for index in 0..<axes.extents[level] {
        output = padLevel(level + 1, source + index &* step, output, value)
      }
    }
    fillElements(output, count: axes.after[level] &* block, value: value, elementSize: elementSize)
    return output + axes.after[level] &* block &* elementSize
  }
}

/// Pads by mirroring the input at its borders (MIRROR_PAD).
struct MirrorPad {
  /// REFLECT leaves the border element out of the mirror image; SYMMETRIC repeats it.
  enum Mode { case reflect, symmetric }

  private let axes: PaddedAxes
  private let mode: Mode
  /// Bytes per element.
  let elementSize: Int

  /// Plans mirror padding; throws when a padding is wider than the mode allows
  /// (REFLECT: at most extent − 1, SYMMETRIC: at most extent).
  init(inputShape: [Int], paddings: Paddings, mode: Mode, elementSize: Int) throws {
    let border = mode == .reflect ? 1 : 0
    for axis in inputShape.indices {
      let limit = inputShape[axis] - border
      guard paddings.before[axis] <= limit, paddings.after[axis] <= limit else {
        throw KernelError.invalid(
          "MIRROR_PAD: paddings (\(paddings.before[axis]), \(paddings.after[axis])) exceed \(limit) on axis \(axis) of \(inputShape)")
      }
    }
    axes = PaddedAxes(inputShape: inputShape, paddings: paddings)
    self.mode = mode
    self.elementSize = elementSize
  }

  /// The input index that output position `position` of an axis copies.
  private func sourceIndex(_ position: Int, extent: Int, before: Int) -> Int {
    let border = mode == .reflect ? 1 : 0
    if position < before { return before - position - 1 + border }
    let inside = position - before
    if inside < extent { return inside }
    return extent - 1 - border - (inside - extent)
  }

  /// Writes the mirror-padded tensor.
  func run(from source: UnsafeRawPointer, to destination: UnsafeMutableRawPointer) {
    if axes.extents.isEmpty {
      destination.copyMemory(from: source, byteCount: axes.unit &* elementSize)
      return
    }
    padLevel(0, source, destination)
  }

  /// Fills one output block of axis `level`: the interior recursively, then the borders as
  /// copies of interior blocks already written.
  private func padLevel(_ level: Int, _ source: UnsafeRawPointer, _ destination: UnsafeMutableRawPointer) {
    let extent = axes.extents[level]
    let before = axes.before[level]
    let outputExtent = before + extent + axes.after[level]
    let blockBytes = axes.outputBlock[level] &* elementSize
    if level == axes.extents.count - 1 {
      for position in 0..<outputExtent {
        let from = sourceIndex(position, extent: extent, before: before)
        (destination + position &* blockBytes).copyMemory(from: source + from &* blockBytes, byteCount: blockBytes)
      }
      return
    }
    let step = axes.inputBlock[level] &* elementSize
    for index in 0..<extent {
      padLevel(level + 1, source + index &* step, destination + (before + index) &* blockBytes)
    }
    for position in 0..<outputExtent where position < before || position >= before + extent {
      let mirrored = before + sourceIndex(position, extent: extent, before: before)
      (destination + position &* blockBytes).copyMemory(from: destination + mirrored &* blockBytes, byteCount: blockBytes)
    }
  }
}

// MARK: - Kernels

/// Reads a constant `[rank, 2]` paddings operand.
func constantPaddings(_ tensor: RuntimeTensor, rank: Int, op: String) throws -> Paddings {
  guard tensor.shape == [rank, 2] else {
    throw KernelError.invalid("\(op): paddings of shape \(tensor.shape), expected [\(rank), 2]")
  }
  return try Paddings(matrix: constantIntegers(tensor, op: op, operand: "paddings"), rank: rank, op: op)
}

/// PAD and PADV2: pads with PADV2's scalar constant, or with zero (the zero point for quantized tensors).
final class PadKernel: Kernel {
  private let op: String
  private let input: RuntimeTensor
  private let paddings: RuntimeTensor
  private let constantValue: RuntimeTensor?
  private let output: RuntimeTensor
  private let elementSize: Int
  /// The padding element when there is no constant operand, in its first `elementSize` bytes.
  private let defaultValue: UInt64
  private var plan: ConstantPad?

  init(node: Node) throws {
    op = node.opName
    let operands = try MovableOperands(node, inputs: 2, maxInputs: 3, op: op)
    (input, output, elementSize) = (operands.input, operands.output, operands.elementSize)
    paddings = try node.input(1)
    constantValue = node.optionalInput(2)
    try requireSameType([input] + (constantValue.map { [$0] } ?? []), op: op)
    if let constantValue, constantValue.elementCount != 1 {
      throw KernelError.invalid("\(op): constant_values must hold one value, got shape \(constantValue.shape)")
    }
    // Little-endian: the low bytes of the widened zero point are the element's bytes.
    defaultValue = UInt64(truncatingIfNeeded: Int64(output.quantization?.zeroPoint ?? 0))
  }

  func prepare(_ context: inout PrepareContext) throws {
    let amounts = try constantPaddings(paddings, rank: input.shape.count, op: op)
    output.shape = try amounts.outputShape(of: input.shape, op: op)
    plan = ConstantPad(inputShape: input.shape, paddings: amounts, elementSize: elementSize)
  }

  func eval(_ context: EvalContext) throws {
    guard let plan else { throw KernelError.invalid("\(op): eval before prepare") }
    let (source, destination) = try evalPointers(input, output, op: op)
    if let value = constantValue?.data {
      plan.run(from: source, to: destination, value: value)
    } else {
      withUnsafeBytes(of: defaultValue) { plan.run(from: source, to: destination, value: $0.baseAddress.unsafelyUnwrapped) }
    }
  }
}

/// MIRROR_PAD in REFLECT or SYMMETRIC mode.
final class MirrorPadKernel: Kernel {
  private static let opName = "MIRROR_PAD"
  private let input: RuntimeTensor
  private let paddings: RuntimeTensor
  private let output: RuntimeTensor
  private let mode: MirrorPad.Mode
  private let elementSize: Int
  private var plan: MirrorPad?

  init(node: Node) throws {
    let operands = try MovableOperands(node, inputs: 2, op: Self.opName)
    (input, output, elementSize) = (operands.input, operands.output, operands.elementSize)
    paddings = try node.input(1)
    guard case .mirrorPadOptions(let options) = node.options else { throw KernelError.invalid("MIRROR_PAD: missing options") }
    mode = options.mode == .symmetric ? .symmetric : .reflect
  }

  func prepare(_ context: inout PrepareContext) throws {
    let amounts = try constantPaddings(paddings, rank: input.shape.count, op: Self.opName)
    output.shape = try amounts.outputShape(of: input.shape, op: Self.opName)
    plan = try MirrorPad(inputShape: input.shape, paddings: amounts, mode: mode, elementSize: elementSize)
  }

  func eval(_ context: EvalContext) throws {
    guard let plan else { throw KernelError.invalid("MIRROR_PAD: eval before prepare") }
    let (source, destination) = try evalPointers(input, output, op: Self.opName)
    plan.run(from: source, to: destination)
  }
}
