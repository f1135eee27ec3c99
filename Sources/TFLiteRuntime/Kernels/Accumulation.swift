// Sums along a list of tensors or an axis: ADD_N (the elementwise sum of its inputs) and CUMSUM
// (running sums along one axis, optionally exclusive and/or from the end). Both add contiguous
// runs 16 lanes at a time, in the order TFLite adds (so float rounding matches); integers wrap.

import TFLiteFormat

/// `output[i] = lhs[i] + rhs[i]` for `count` elements; `output` may be `lhs` or `rhs`.
@inline(__always)
func addRuns<Scalar: ArithmeticScalar>(
  _ lhs: UnsafePointer<Scalar>, _ rhs: UnsafePointer<Scalar>, into output: UnsafeMutablePointer<Scalar>, count: Int
) {
  let left = StreamedOperand(lhs, offset: 0)
  let right = StreamedOperand(rhs, offset: 0)
  storeEachVector(count: count, into: output) { index, lanes in
    Scalar.add(left.vector(at: index, lanes: lanes), right.vector(at: index, lanes: lanes))
  }
}

/// The axis layout of CUMSUM: `outerCount` independent blocks of `length` rows of `innerCount` elements.
struct CumulativeSumPlan: Equatable {
  /// Product of the axes before the summed axis.
  var outerCount: Int
  /// Extent of the summed axis.
  var length: Int
  /// Product of the axes after the summed axis (one contiguous row).
  var innerCount: Int
  /// Sum only the elements strictly before each position.
  var exclusive: Bool
  /// Sum from the end of the axis towards its start.
  var reverse: Bool

  /// Plans the sums along `axis` (may be negative) of a tensor of `shape`.
  init(shape: [Int], axis requestedAxis: Int, exclusive: Bool, reverse: Bool) throws {
    let axis = try normalizedAxis(requestedAxis, rank: shape.count, op: "CUMSUM")
    outerCount = shape[..<axis].reduce(1, *)
    length = shape[axis]
    innerCount = shape[(axis + 1)...].reduce(1, *)
    self.exclusive = exclusive
    self.reverse = reverse
  }

  /// Computes blocks `blocks` of the output: each row is the previous output row plus the
  /// current input row (inclusive) or the previous input row (exclusive); the first row is the
  /// first input row or zeros.
  func run<Scalar: ArithmeticScalar>(
    input: UnsafePointer<Scalar>, output: UnsafeMutablePointer<Scalar>, blocks: Range<Int>
  ) {
    guard length > 0, innerCount > 0 else { return }
    let rowStep = reverse ? -innerCount : innerCount
    let firstRow = reverse ? (length - 1) * innerCount : 0
    for block in blocks {
      let start = block &* length &* innerCount &+ firstRow
      if exclusive {
        (output + start).update(repeating: .zero, count: innerCount)
      } else {
        (output + start).update(from: input + start, count: innerCount)
      }
      var previous = start
      for _ in 1..<length {
        let current = previous &+ rowStep
        let addend = exclusive ? input + previous : input + current
        addRuns(UnsafePointer(output + previous), addend, into: output + current, count: innerCount)
        previous = current
      }
    }
  }
}

// MARK: - Kernels

extension KernelRegistry {
  /// ADD_N and CUMSUM.
  // Written once by its initializer and only read afterwards.
  nonisolated(unsafe) static let accumulation: [String: any Kernel.Type] = [
    "ADD_N": AddNKernel.self, "CUMSUM": CumulativeSumKernel.self,
  ]
}

/// ADD_N: the elementwise sum of one or more float32 or int32 tensors of one shape.
final class AddNKernel: Kernel {
  private static let opName = "ADD_N"
  private let inputs: [RuntimeTensor]
  private let output: RuntimeTensor

  init(node: Node) throws {
    guard !node.inputs.isEmpty else { throw KernelError.invalid("ADD_N needs at least one input") }
    try node.expect(inputs: node.inputs.count, outputs: 1)
    inputs = try node.inputs.indices.map { try node.input($0) }
    output = try node.output(0)
    _ = try commonElementType(inputs + [output], allowed: [.float32, .int32], operatorName: Self.opName)
  }

  func prepare(_ context: inout PrepareContext) throws {
    let shape = inputs[0].shape
    for input in inputs where input.shape != shape {
      throw KernelError.invalid("ADD_N: inputs must share one shape, got \(shape) and \(input.shape)")
    }
    output.shape = shape
  }

  func eval(_ context: EvalContext) throws {
    for input in inputs { _ = try tensorData(input) }
    let destination = try tensorData(output)
    if output.type == .float32 {
      run(context, destination.assumingMemoryBound(to: Float.self))
    } else {
      run(context, destination.assumingMemoryBound(to: Int32.self))
    }
  }

  /// Adds the inputs in order into `output`, chunk by chunk.
  private func run<Scalar: ArithmeticScalar>(_ context: EvalContext, _ output: UnsafeMutablePointer<Scalar>) {
    let inputs = inputs
    context.forEachChunk(of: self.output.elementCount, minimumChunk: cheapElementwiseChunk) { range in
      let first = UnsafePointer(inputs[0].pointer(as: Scalar.self) + range.lowerBound)
      let destination = output + range.lowerBound
      guard inputs.count > 1 else {
        destination.update(from: first, count: range.count)
        return
      }
      addRuns(first, inputs[1].pointer(as: Scalar.self) + range.lowerBound, into: destination, count: range.count)
      for input in inputs.dropFirst(2) {
        addRuns(UnsafePointer(destination), input.pointer(as: Scalar.self) + range.lowerBound, into: destination, count: range.count)
      }
    }
  }
}

/// CUMSUM of float32, int32 or int64 along the axis given by a scalar int32 input (read at eval).
final class CumulativeSumKernel: Kernel {
  private static let opName = "CUMSUM"
  private let input: RuntimeTensor
  private let axis: RuntimeTensor
  private let output: RuntimeTensor
  private let options: CumsumOptions

  init(node: Node) throws {
    try node.expect(inputs: 2, outputs: 1)
    input = try node.input(0)
    axis = try node.input(1)
    output = try node.output(0)
    _ = try commonElementType([input, output], allowed: [.float32, .int32, .int64], operatorName: Self.opName)
    guard axis.type == .int32 else { throw KernelError.unsupported("CUMSUM with a \(axis.type.name) axis") }
    options = try FloatOperands.options(of: node, op: Self.opName, defaults: CumsumOptions()) {
      if case .cumsumOptions(let options) = $0 { options } else { nil }
    }
  }

  func prepare(_ context: inout PrepareContext) throws {
    guard axis.elementCount == 1 else { throw KernelError.invalid("CUMSUM: axis must be a scalar, got \(axis.shape)") }
    output.shape = input.shape
  }

  func eval(_ context: EvalContext) throws {
    let axisValue = Int(try tensorData(axis).loadUnaligned(as: Int32.self))
    let plan = try CumulativeSumPlan(
      shape: input.shape, axis: axisValue, exclusive: options.exclusive, reverse: options.reverse)
    let source = try tensorData(input)
    let destination = try tensorData(output)
    switch input.type {
    case .float32: run(context, plan, source, destination, Float.self)
    case .int32: run(context, plan, source, destination, Int32.self)
    default: run(context, plan, source, destination, Int64.self)
    }
  }

  private func run<Scalar: ArithmeticScalar>(
    _ context: EvalContext, _ plan: CumulativeSumPlan, _ source: UnsafeMutableRawPointer,
    _ destination: UnsafeMutableRawPointer, _ type: Scalar.Type
  ) {
    let input = UnsafePointer(source.assumingMemoryBound(to: Scalar.self))
    let output = destination.assumingMemoryBound(to: Scalar.self)
    let blockElements = max(plan.length &* plan.innerCount, 1)
    context.forEachChunk(of: plan.outerCount, minimumChunk: max(1, cheapElementwiseChunk / blockElements)) { blocks in
      plan.run(input: input, output: output, blocks: blocks)
    }
  }
}
