// SPLIT, SPLIT_V and UNPACK: each output is one part of an AxisPartition of the input.

import TFLiteFormat

/// SPLIT_V's part sizes: `sizes` with at most one −1 filled so that they add up to `extent`.
func splitSizes(_ sizes: [Int], extent: Int) throws -> [Int] {
  var resolved = sizes
  let free = sizes.indices.filter { sizes[$0] == -1 }
  guard free.count <= 1, sizes.allSatisfy({ $0 >= -1 && $0 <= Int(Int32.max) }) else {
    throw KernelError.invalid("SPLIT_V: size_splits \(sizes) may hold one -1 and otherwise non-negative int32 sizes")
  }
  let known = sizes.filter { $0 >= 0 }.reduce(0, +)
  if let free = free.first {
    guard known <= extent else { throw KernelError.invalid("SPLIT_V: size_splits \(sizes) exceed the axis size \(extent)") }
    resolved[free] = extent - known
  } else {
    guard known == extent else { throw KernelError.invalid("SPLIT_V: size_splits \(sizes) do not add up to \(extent)") }
  }
  return resolved
}

// MARK: - Kernels

/// The input, outputs and the partition that cuts one into the others.
private struct PartitionedOutputs {
  let input: RuntimeTensor
  let outputs: [RuntimeTensor]
  let elementSize: Int
  var partition: AxisPartition?

  init(node: Node, input position: Int, op: String) throws {
    input = try node.input(position)
    outputs = node.outputs
    guard !outputs.isEmpty else { throw KernelError.invalid("\(op): no outputs") }
    try requireSameType([input] + outputs, op: op)
    elementSize = try movableElementSize(input, op: op)
  }

  /// Cuts the input along `axis` into parts of `extents`, giving each output its shape
  /// (with the axis removed when `dropAxis`, as UNPACK does).
  mutating func plan(axis: Int, extents: [Int], dropAxis: Bool = false) {
    for (output, extent) in zip(outputs, extents) {
      var shape = input.shape
      if dropAxis { shape.remove(at: axis) } else { shape[axis] = extent }
      output.shape = shape
    }
    partition = AxisPartition(shape: input.shape, axis: axis, partExtents: extents)
  }

  func eval(op: String) throws {
    guard let partition, let source = input.data else { throw KernelError.invalid("\(op): eval before prepare") }
    for (part, output) in outputs.enumerated() {
      guard let destination = output.data else { throw KernelError.invalid("\(op): output \(part) has no memory") }
      partition.extract(part: part, from: source, into: destination, elementSize: elementSize)
    }
  }
}

/// The single value of a constant axis operand, normalized against `rank`.
private func constantAxis(_ tensor: RuntimeTensor, rank: Int, op: String) throws -> Int {
  let values = try constantIntegers(tensor, op: op, operand: "axis")
  guard values.count == 1 else { throw KernelError.invalid("\(op): axis must hold one value, got \(values)") }
  return try normalizedAxis(values[0], rank: rank, op: op)
}

/// SPLIT into `num_splits` equal parts; operands are (axis, input).
final class SplitKernel: Kernel {
  private static let opName = "SPLIT"
  private var operands: PartitionedOutputs
  private let axis: RuntimeTensor

  init(node: Node) throws {
    guard case .splitOptions(let options) = node.options else { throw KernelError.invalid("SPLIT: missing options") }
    try node.expect(inputs: 2, outputs: Int(options.numSplits))
    axis = try node.input(0)
    operands = try PartitionedOutputs(node: node, input: 1, op: Self.opName)
  }

  func prepare(_ context: inout PrepareContext) throws {
    let resolvedAxis = try constantAxis(axis, rank: operands.input.shape.count, op: Self.opName)
    let extent = operands.input.shape[resolvedAxis]
    let parts = operands.outputs.count
    guard extent % parts == 0 else {
      throw KernelError.invalid("SPLIT: axis of size \(extent) does not split into \(parts) equal parts")
    }
    operands.plan(axis: resolvedAxis, extents: [Int](repeating: extent / parts, count: parts))
  }

  func eval(_ context: EvalContext) throws { try operands.eval(op: Self.opName) }
}

/// SPLIT_V into parts of the given sizes (one may be −1); operands are (input, size_splits, axis).
final class SplitVKernel: Kernel {
  private static let opName = "SPLIT_V"
  private var operands: PartitionedOutputs
  private let sizes: RuntimeTensor
  private let axis: RuntimeTensor

  init(node: Node) throws {
    guard case .splitVOptions(let options) = node.options else { throw KernelError.invalid("SPLIT_V: missing options") }
    try node.expect(inputs: 3, outputs: Int(options.numSplits))
    operands = try PartitionedOutputs(node: node, input: 0, op: Self.opName)
    sizes = try node.input(1)
    axis = try node.input(2)
  }

  func prepare(_ context: inout PrepareContext) throws {
    let resolvedAxis = try constantAxis(axis, rank: operands.input.shape.count, op: Self.opName)
    let requested = try constantIntegers(sizes, op: Self.opName, operand: "size_splits")
    guard requested.count == operands.outputs.count else {
      throw KernelError.invalid("SPLIT_V: \(requested.count) sizes for \(operands.outputs.count) outputs")
    }
    operands.plan(axis: resolvedAxis, extents: try splitSizes(requested, extent: operands.input.shape[resolvedAxis]))
  }

  func eval(_ context: EvalContext) throws { try operands.eval(op: Self.opName) }
}

/// UNPACK: one output per index of an axis, with that axis removed.
final class UnpackKernel: Kernel {
  private static let opName = "UNPACK"
  private var operands: PartitionedOutputs
  private let axis: Int

  init(node: Node) throws {
    guard case .unpackOptions(let options) = node.options else { throw KernelError.invalid("UNPACK: missing options") }
    try node.expect(inputs: 1, outputs: Int(options.num))
    operands = try PartitionedOutputs(node: node, input: 0, op: Self.opName)
    try requireSameQuantization([operands.input] + operands.outputs, op: Self.opName)
    axis = Int(options.axis)
  }

  func prepare(_ context: inout PrepareContext) throws {
    let resolvedAxis = try normalizedAxis(axis, rank: operands.input.shape.count, op: Self.opName)
    let count = operands.input.shape[resolvedAxis]
    guard count == operands.outputs.count else {
      throw KernelError.invalid("UNPACK: axis of size \(count) for \(operands.outputs.count) outputs")
    }
    operands.plan(axis: resolvedAxis, extents: [Int](repeating: 1, count: count), dropAxis: true)
  }

  func eval(_ context: EvalContext) throws { try operands.eval(op: Self.opName) }
}
