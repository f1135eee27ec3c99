// ONE_HOT: the output holds `off_value` everywhere except, along a new axis of `depth` entries,
// at the position named by each index, which holds `on_value`. Values are moved as raw elements,
// so every element type of the copy routines works.

import TFLiteFormat

/// How ONE_HOT lays out its output: indices split into `outerCount × innerCount` around the new
/// axis of `depth` entries.
struct OneHotPlan: Equatable {
  /// Output shape: the indices shape with `depth` inserted at the axis.
  var outputShape: [Int]
  /// Product of the indices axes before the new axis.
  var outerCount: Int
  /// Length of the new axis.
  var depth: Int
  /// Product of the indices axes after the new axis.
  var innerCount: Int

  /// Plans the output for `indicesShape`, `depth` and the option `axis` (−1 appends the new axis).
  init(indicesShape: [Int], depth: Int, axis requestedAxis: Int) throws {
    guard depth >= 0 else { throw KernelError.invalid("ONE_HOT: depth \(depth) is negative") }
    let rank = indicesShape.count
    let axis = requestedAxis == -1 ? rank : requestedAxis
    guard axis >= 0, axis <= rank else {
      throw KernelError.invalid("ONE_HOT: axis \(requestedAxis) is out of range for indices of rank \(rank)")
    }
    outputShape = Array(indicesShape[..<axis]) + [depth] + Array(indicesShape[axis...])
    _ = try checkedElementCount(outputShape, op: "ONE_HOT")
    outerCount = indicesShape[..<axis].reduce(1, *)
    self.depth = depth
    innerCount = indicesShape[axis...].reduce(1, *)
  }

  /// Fills the output with `off`, then writes `on` where each index in `[0, depth)` points.
  func run<Index: BinaryInteger>(
    indices: UnsafePointer<Index>, on: UnsafeRawPointer, off: UnsafeRawPointer, output: UnsafeMutableRawPointer,
    elementSize: Int
  ) {
    fillElements(output, count: outerCount &* depth &* innerCount, value: off, elementSize: elementSize)
    for outer in 0..<outerCount {
      for inner in 0..<innerCount {
        let index = indices[outer &* innerCount &+ inner]
        guard index >= 0, index < depth else { continue }
        let position = (outer &* depth &+ Int(index)) &* innerCount &+ inner
        (output + position &* elementSize).copyMemory(from: on, byteCount: elementSize)
      }
    }
  }
}

// MARK: - Kernel

/// ONE_HOT (inputs: int32 or int64 indices, a constant depth, on value, off value).
final class OneHotKernel: Kernel {
  private static let opName = "ONE_HOT"
  private let indices: RuntimeTensor
  private let depth: RuntimeTensor
  private let onValue: RuntimeTensor
  private let offValue: RuntimeTensor
  private let output: RuntimeTensor
  private let axis: Int
  private let elementSize: Int
  private var plan: OneHotPlan?

  init(node: Node) throws {
    try node.expect(inputs: 4, outputs: 1)
    indices = try node.input(0)
    depth = try node.input(1)
    onValue = try node.input(2)
    offValue = try node.input(3)
    output = try node.output(0)
    guard indices.type == .int32 || indices.type == .int64 else {
      throw KernelError.unsupported("ONE_HOT with \(indices.type.name) indices")
    }
    try requireSameType([onValue, offValue, output], op: Self.opName)
    try requireSameQuantization([onValue, offValue, output], op: Self.opName)
    elementSize = try movableElementSize(output, op: Self.opName)
    axis = Int(
      try FloatOperands.options(of: node, op: Self.opName, defaults: OneHotOptions(axis: -1)) {
        if case .oneHotOptions(let options) = $0 { options } else { nil }
      }.axis)
  }

  func prepare(_ context: inout PrepareContext) throws {
    guard onValue.elementCount == 1, offValue.elementCount == 1 else {
      throw KernelError.invalid("ONE_HOT: on and off values must be scalars, got \(onValue.shape) and \(offValue.shape)")
    }
    let depthValues = try constantIntegers(depth, op: Self.opName, operand: "depth")
    guard depthValues.count == 1 else { throw KernelError.invalid("ONE_HOT: depth must be a scalar, got \(depth.shape)") }
    let plan = try OneHotPlan(indicesShape: indices.shape, depth: depthValues[0], axis: axis)
    output.shape = plan.outputShape
    self.plan = plan
  }

  func eval(_ context: EvalContext) throws {
    guard let plan else { throw KernelError.invalid("ONE_HOT: eval before prepare") }
    let on = try tensorData(onValue)
    let off = try tensorData(offValue)
    let destination = try tensorData(output)
    let source = try tensorData(indices)
    if indices.type == .int32 {
      plan.run(
        indices: source.assumingMemoryBound(to: Int32.self), on: on, off: off, output: destination,
        elementSize: elementSize)
    } else {
      plan.run(
        indices: source.assumingMemoryBound(to: Int64.self), on: on, off: off, output: destination,
        elementSize: elementSize)
    }
  }
}
