// SELECT and SELECT_V2: output = condition ? x : y, element by element.
//
// SELECT_V2 broadcasts all three operands. SELECT (version 1) accepts a condition of the same
// shape as x, a scalar, or a vector matching x's first dimension (selecting whole slices); the
// kernel expresses the last case as a condition of shape [n, 1, …, 1] and uses the same layout.
// Values are moved as raw bit patterns, so one specialization per element width serves all types.

/// One operand of a select, streamed or repeated along a segment (decided per layout, not per
/// element, so the branch is perfectly predictable).
private struct SelectOperand<Scalar: SIMDScalar & BitwiseCopyable>: LaneVectors {
  let base: UnsafePointer<Scalar>
  let isRepeated: Bool

  @inline(__always)
  func vector(at index: Int, lanes: Int) -> SIMD16<Scalar> {
    if isRepeated { return SIMD16(repeating: base[0]) }
    return StreamedOperand(base, offset: index).vector(at: 0, lanes: lanes)
  }
}

/// condition ? x : y over three runs.
private struct SelectedVectors<Scalar: SelectableLanes>: LaneVectors {
  let condition: SelectOperand<UInt8>
  let x: SelectOperand<Scalar>
  let y: SelectOperand<Scalar>

  @inline(__always)
  func vector(at index: Int, lanes: Int) -> SIMD16<Scalar> {
    Scalar.select(condition.vector(at: index, lanes: lanes), x.vector(at: index, lanes: lanes), y.vector(at: index, lanes: lanes))
  }
}

/// Runs selects over broadcast operands.
enum SelectDriver {
  /// Computes output elements `range` of `layout` (built from the shapes of condition, x, y);
  /// `Scalar` is any type of the elements' width.
  static func run<Scalar: SelectableLanes>(
    layout: BroadcastLayout, condition: UnsafePointer<UInt8>,
    x: UnsafePointer<Scalar>, y: UnsafePointer<Scalar>,
    output: UnsafeMutablePointer<Scalar>, range: Range<Int>
  ) {
    let conditionRepeats = layout.innerStride(of: 0) == 0
    let xRepeats = layout.innerStride(of: 1) == 0
    let yRepeats = layout.innerStride(of: 2) == 0
    layout.forEachSegment(in: range) { start, conditionOffset, xOffset, yOffset, count in
      let selected = SelectedVectors(
        condition: SelectOperand(base: condition + conditionOffset, isRepeated: conditionRepeats),
        x: SelectOperand(base: x + xOffset, isRepeated: xRepeats),
        y: SelectOperand(base: y + yOffset, isRepeated: yRepeats))
      storeEachVector(selected, count: count, into: output + start)
    }
  }
}

/// SELECT (`broadcastsAll` false) or SELECT_V2 (true).
protocol SelectVariant {
  /// The TFLite operator name.
  static var operatorName: String { get }
  /// True when all three operands broadcast (SELECT_V2).
  static var broadcastsAll: Bool { get }
}

/// SELECT: the condition has x's shape, is a scalar, or is a vector over x's first dimension.
enum SelectVersion1: SelectVariant {
  static let operatorName = "SELECT"
  static let broadcastsAll = false
}

/// SELECT_V2: condition, x and y broadcast together.
enum SelectVersion2: SelectVariant {
  static let operatorName = "SELECT_V2"
  static let broadcastsAll = true
}

/// The SELECT and SELECT_V2 kernel, for elements of any fixed width.
final class SelectKernel<Variant: SelectVariant>: Kernel {
  private let condition: RuntimeTensor
  private let x: RuntimeTensor
  private let y: RuntimeTensor
  private let output: RuntimeTensor
  /// The layout once prepared, read in place by `eval` (see `PreparedBroadcastLayout`).
  private var prepared: PreparedBroadcastLayout?

  init(node: Node) throws {
    try node.expect(inputs: 3, outputs: 1)
    condition = try node.input(0)
    x = try node.input(1)
    y = try node.input(2)
    output = try node.output(0)
    guard condition.type == .bool else {
      throw KernelError.invalid("\(Variant.operatorName) needs a BOOL condition, got \(condition.type.name)")
    }
    let type = x.type
    guard y.type == type, output.type == type else {
      throw KernelError.invalid("\(Variant.operatorName) needs x, y and the output of one type")
    }
    guard [1, 2, 4, 8].contains(type.byteCount), type != .int4 else {
      throw KernelError.unsupported("\(Variant.operatorName) on \(type.name) tensors")
    }
  }

  func prepare(_ context: inout PrepareContext) throws {
    var conditionShape = condition.shape
    if !Variant.broadcastsAll {
      guard x.shape == y.shape else {
        throw KernelError.invalid("\(Variant.operatorName) needs x and y of one shape, got \(x.shape) and \(y.shape)")
      }
      if conditionShape.count == 1, x.shape.count > 1, conditionShape[0] == x.shape[0] {
        // One condition per slice along the first dimension.
        conditionShape += [Int](repeating: 1, count: x.shape.count - 1)
      } else if !conditionShape.isEmpty && conditionShape != x.shape {
        throw KernelError.invalid(
          "\(Variant.operatorName) needs a condition of shape \(x.shape), a scalar or [\(x.shape.first ?? 0)], got \(conditionShape)")
      }
    }
    let layout = try BroadcastLayout(broadcasting: [conditionShape, x.shape, y.shape])
    prepared = PreparedBroadcastLayout(layout)
    output.shape = layout.shape
  }

  func eval(_ context: EvalContext) throws {
    guard let prepared else { throw KernelError.invalid("evaluated before prepare") }
    let conditionData = try tensorData(condition).assumingMemoryBound(to: UInt8.self)
    let xData = try tensorData(x)
    let yData = try tensorData(y)
    let outputData = try tensorData(output)
    let width = output.type.byteCount
    context.forEachChunk(of: prepared.layout.elementCount, minimumChunk: cheapElementwiseChunk) { range in
      switch width {
      case 1: run(UInt8.self, prepared.layout, conditionData, xData, yData, outputData, range)
      case 2: run(UInt16.self, prepared.layout, conditionData, xData, yData, outputData, range)
      case 4: run(UInt32.self, prepared.layout, conditionData, xData, yData, outputData, range)
      default: run(UInt64.self, prepared.layout, conditionData, xData, yData, outputData, range)
      }
    }
  }

  private func run<Scalar: SelectableLanes>(
    _: Scalar.Type, _ layout: BroadcastLayout, _ condition: UnsafePointer<UInt8>, _ x: UnsafeRawPointer,
    _ y: UnsafeRawPointer, _ output: UnsafeMutableRawPointer, _ range: Range<Int>
  ) {
    SelectDriver.run(
      layout: layout, condition: condition, x: x.assumingMemoryBound(to: Scalar.self),
      y: y.assumingMemoryBound(to: Scalar.self), output: output.assumingMemoryBound(to: Scalar.self), range: range)
  }
}
