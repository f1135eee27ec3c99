// RANGE: start, start + delta, … up to (excluding) limit. The length depends on the input values:
// with constant inputs the node is computed once at prepare time, otherwise the runtime prepares
// it during `invoke()` once its inputs are computed.

/// The number of elements of an integer RANGE: ⌈|limit − start| / |delta|⌉.
func integerRangeCount(start: Int64, limit: Int64, delta: Int64) throws -> Int {
  try validateRangeDirection(isAscending: start < limit, isDescending: start > limit, delta: delta.signum())
  let (distance, overflow) = limit.subtractingReportingOverflow(start)
  let step = delta.magnitude
  let count = distance.magnitude / step + (distance.magnitude % step == 0 ? 0 : 1)
  guard !overflow, let elements = Int(exactly: count) else {
    throw KernelError.invalid("RANGE: from \(start) to \(limit) by \(delta) has too many elements")
  }
  return try checkedElementCount([elements], op: "RANGE")
}

/// The number of elements of a float RANGE: ⌈|(limit − start) / delta|⌉, in float as TFLite computes it.
func floatRangeCount(start: Float, limit: Float, delta: Float) throws -> Int {
  try validateRangeDirection(
    isAscending: start < limit, isDescending: start > limit, delta: delta > 0 ? 1 : delta < 0 ? -1 : 0)
  let count = ((limit - start) / delta).magnitude.rounded(.up)
  guard count.isFinite, count <= Float(Int32.max) else {
    throw KernelError.invalid("RANGE: from \(start) to \(limit) by \(delta) has too many elements")
  }
  return Int(count)
}

/// Throws unless `delta` (its sign: −1, 0 or 1) moves from start towards limit; an empty range is fine.
private func validateRangeDirection(isAscending: Bool, isDescending: Bool, delta: Int64) throws {
  guard delta != 0 else { throw KernelError.invalid("RANGE: delta must not be zero") }
  guard !(isAscending && delta < 0), !(isDescending && delta > 0) else {
    throw KernelError.invalid("RANGE: delta points away from the limit")
  }
}

// MARK: - Kernel

/// RANGE over int32, int64 or float32 scalars.
final class RangeKernel: Kernel {
  private static let opName = "RANGE"
  private let start: RuntimeTensor
  private let limit: RuntimeTensor
  private let delta: RuntimeTensor
  private let output: RuntimeTensor

  init(node: Node) throws {
    try node.expect(inputs: 3, outputs: 1)
    start = try node.input(0)
    limit = try node.input(1)
    delta = try node.input(2)
    output = try node.output(0)
    _ = try commonElementType([start, limit, delta, output], allowed: [.int32, .int64, .float32], operatorName: Self.opName)
  }

  func prepare(_ context: inout PrepareContext) throws {
    for operand in [start, limit, delta] {
      guard operand.hasValuesForPrepare, operand.data != nil else {
        throw KernelError.needsInputValues("RANGE start, limit and delta are computed at run time")
      }
      guard operand.elementCount == 1 else {
        throw KernelError.invalid("RANGE: start, limit and delta must be scalars, got \(operand.shape)")
      }
    }
    let count =
      switch output.type {
      case .float32:
        try floatRangeCount(start: scalar(start, Float.self), limit: scalar(limit, Float.self), delta: scalar(delta, Float.self))
      case .int32:
        try integerRangeCount(
          start: Int64(scalar(start, Int32.self)), limit: Int64(scalar(limit, Int32.self)), delta: Int64(scalar(delta, Int32.self)))
      default:
        try integerRangeCount(start: scalar(start, Int64.self), limit: scalar(limit, Int64.self), delta: scalar(delta, Int64.self))
      }
    output.shape = [count]
  }

  func eval(_ context: EvalContext) throws {
    let destination = try tensorData(output)
    let count = output.elementCount
    switch output.type {
    case .float32: writeSequence(destination, count: count, Float.self) { $0 + $1 }
    case .int32: writeSequence(destination, count: count, Int32.self) { $0 &+ $1 }
    default: writeSequence(destination, count: count, Int64.self) { $0 &+ $1 }
    }
  }

  /// The first element of a scalar operand.
  private func scalar<T: BitwiseCopyable>(_ tensor: RuntimeTensor, _ type: T.Type) -> T {
    tensor.data.unsafelyUnwrapped.loadUnaligned(as: T.self)
  }

  /// Writes start, start + delta, … by repeated addition, as TFLite does (so float rounding matches).
  private func writeSequence<T: BitwiseCopyable>(_ destination: UnsafeMutableRawPointer, count: Int, _ type: T.Type, add: (T, T) -> T) {
    let values = destination.assumingMemoryBound(to: T.self)
    let step: T = scalar(delta, T.self)
    var value: T = scalar(start, T.self)
    for index in 0..<count {
      values[index] = value
      value = add(value, step)
    }
  }
}
