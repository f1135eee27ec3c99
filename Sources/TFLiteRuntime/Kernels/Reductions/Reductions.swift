// Reductions over axes: MEAN, SUM, REDUCE_PROD, REDUCE_MAX, REDUCE_MIN, and ARG_MAX / ARG_MIN.
//
// Axes may be negative (counted from the end) and repeated; keep_dims keeps reduced dimensions
// as 1. `ReductionDriver` walks the input once with a `BroadcastLayout` whose operand is the
// output: when the innermost collapsed dimension is reduced, each row is reduced with four SIMD
// accumulators; when it is kept, rows are combined lane-wise into the output. Running maxima
// start from the lowest finite value and minima from the highest (as TFLite does); MEAN of an
// empty tensor is NaN. ARG_MAX / ARG_MIN return the first index of the extreme value.
// REDUCE_ANY / REDUCE_ALL reduce bool tensors the same way. CUMSUM keeps running sums.

import TFLiteFormat
import TFLiteLinearAlgebra

/// SUM.
struct SumReduction<Scalar: ArithmeticScalar>: ReductionOperation {
  var identity: Scalar { 0 }
  @inline(__always)
  func combine(_ lhs: SIMD16<Scalar>, _ rhs: SIMD16<Scalar>) -> SIMD16<Scalar> { Scalar.add(lhs, rhs) }
}

/// REDUCE_PROD.
struct ProductReduction<Scalar: ArithmeticScalar>: ReductionOperation {
  var identity: Scalar { 1 }
  @inline(__always)
  func combine(_ lhs: SIMD16<Scalar>, _ rhs: SIMD16<Scalar>) -> SIMD16<Scalar> { Scalar.multiply(lhs, rhs) }
}

/// REDUCE_MAX.
struct MaximumReduction<Scalar: ArithmeticScalar>: ReductionOperation {
  var identity: Scalar { Scalar.leastFiniteValue }
  @inline(__always)
  func combine(_ lhs: SIMD16<Scalar>, _ rhs: SIMD16<Scalar>) -> SIMD16<Scalar> {
    Scalar.maximum(rhs, lhs)
  }
}

/// REDUCE_MIN.
struct MinimumReduction<Scalar: ArithmeticScalar>: ReductionOperation {
  var identity: Scalar { Scalar.greatestFiniteValue }
  @inline(__always)
  func combine(_ lhs: SIMD16<Scalar>, _ rhs: SIMD16<Scalar>) -> SIMD16<Scalar> {
    Scalar.minimum(rhs, lhs)
  }
}

/// REDUCE_ANY on bool bytes.
struct AnyReduction: ReductionOperation {
  var identity: UInt8 { 0 }
  @inline(__always)
  func combine(_ lhs: SIMD16<UInt8>, _ rhs: SIMD16<UInt8>) -> SIMD16<UInt8> { lhs | rhs }
}

/// REDUCE_ALL on bool bytes.
struct AllReduction: ReductionOperation {
  var identity: UInt8 { 1 }
  @inline(__always)
  func combine(_ lhs: SIMD16<UInt8>, _ rhs: SIMD16<UInt8>) -> SIMD16<UInt8> { lhs & rhs }
}

/// A reduction's lane-wise combination as a binary operation (accumulating rows into rows).
struct CombineOperation<Reduction: ReductionOperation>: BinaryLanewiseOperation {
  /// The reduction.
  let reduction: Reduction

  @inline(__always)
  init(_ reduction: Reduction) { self.reduction = reduction }

  @inline(__always)
  func callAsFunction(_ lhs: SIMD16<Reduction.Scalar>, _ rhs: SIMD16<Reduction.Scalar>) -> SIMD16<Reduction.Scalar> {
    reduction.combine(lhs, rhs)
  }
}

/// Which axes a reduction removes, and the resulting output shape.
struct ReductionAxes: Equatable, Sendable {
  /// For each input dimension, whether it is reduced.
  let isReduced: [Bool]
  /// The output shape (reduced dimensions dropped, or kept as 1 with keep_dims).
  let outputShape: [Int]

  /// Resolves `axes` (each in −rank ..< rank; repeats allowed) against `inputShape`.
  init(axes: [Int], inputShape: [Int], keepDimensions: Bool) throws {
    let rank = inputShape.count
    var isReduced = [Bool](repeating: false, count: rank)
    for axis in axes {
      guard axis >= -rank && axis < rank else {
        throw KernelError.invalid("reduction axis \(axis) is out of range for a tensor of rank \(rank)")
      }
      isReduced[axis < 0 ? axis + rank : axis] = true
    }
    self.isReduced = isReduced
    var outputShape: [Int] = []
    for (dimension, size) in inputShape.enumerated() {
      if !isReduced[dimension] {
        outputShape.append(size)
      } else if keepDimensions {
        outputShape.append(1)
      }
    }
    self.outputShape = outputShape
  }
}

/// Runs reductions.
enum ReductionDriver {
  /// Reduces `input` walked by `layout` (from `BroadcastLayout(reducing:axes:)`) into `output`,
  /// which holds `outputCount` elements.
  static func run<Operation: ReductionOperation>(
    _ operation: Operation, layout: BroadcastLayout,
    input: UnsafePointer<Operation.Scalar>, output: UnsafeMutablePointer<Operation.Scalar>, outputCount: Int,
    threadCount: Int
  ) {
    output.update(repeating: operation.identity, count: outputCount)
    let everything = 0..<layout.elementCount
    if layout.innerStride(of: 0) == 0 {
      layout.forEachSegment(in: everything) { start, outputOffset, _, _, count in
        let reduced = reduceVectors(operation, StreamedOperand(input, offset: start), count: count)
        output[outputOffset] = operation.combine(output[outputOffset], reduced)
      }
    } else if layout.rank == 2 && layout.strides0[0] == 0 {
      // Rows reduced into one kept row (MEAN over height and width): each block of columns sums
      // in registers down the rows, in the same order as row after row into the output.
      reduceColumnChunks(
        operation, input: input, rows: layout.dimensions[0], columns: layout.dimensions[1], into: output,
        threadCount: threadCount)
    } else {
      layout.forEachSegment(in: everything) { start, outputOffset, _, _, count in
        let accumulated = StreamedOperand(UnsafePointer(output), offset: outputOffset)
        storeEachVector(
          CombinedVectors(accumulated, StreamedOperand(input, offset: start), CombineOperation(operation)),
          count: count, into: output + outputOffset)
      }
    }
  }

  /// `reduceColumns` on `threadCount` threads: consecutive chunks of rows (`ChunkSplit`, each at
  /// least `cheapElementwiseChunk` elements), each combined into a row of its own (chunk 0's in
  /// `output`), then the chunks' rows into `output` in chunk order. With one chunk (one thread, or
  /// a small input) the rows combine in the serial order; several chunks round float sums in
  /// another order (exact for the extrema).
  private static func reduceColumnChunks<Operation: ReductionOperation>(
    _ operation: Operation, input: UnsafePointer<Operation.Scalar>, rows: Int, columns: Int,
    into output: UnsafeMutablePointer<Operation.Scalar>, threadCount: Int
  ) {
    let chunks = ChunkSplit(count: rows, minimumChunk: cheapElementwiseChunk / max(columns, 1), threadCount: threadCount)
    guard chunks.count > 1, columns > 0 else {
      reduceColumns(operation, input: input, rows: rows, columns: columns, into: output)
      return
    }
    withUnsafeTemporaryAllocation(of: Operation.Scalar.self, capacity: (chunks.count - 1) * columns) { buffer in
      guard let partials = buffer.baseAddress else { return }
      ParallelWork.run(itemCount: chunks.count, threadCount: threadCount) { chunk, _ in
        let range = chunks.range(chunk)
        reduceColumns(
          operation, input: input + range.lowerBound &* columns, rows: range.count, columns: columns,
          into: chunk == 0 ? output : partials + (chunk - 1) &* columns)
      }
      for chunk in 1..<chunks.count {
        let combined = CombinedVectors(
          StreamedOperand(UnsafePointer(output), offset: 0),
          StreamedOperand(UnsafePointer(partials + (chunk - 1) &* columns), offset: 0), CombineOperation(operation))
        storeEachVector(combined, count: columns, into: output)
      }
    }
  }

  /// Combines the `rows` rows of `columns` elements of `input` lane by lane into `output`, which
  /// holds the identity: 16 columns at a time, two blocks side by side, in registers.
  private static func reduceColumns<Operation: ReductionOperation>(
    _ operation: Operation, input: UnsafePointer<Operation.Scalar>, rows: Int, columns: Int,
    into output: UnsafeMutablePointer<Operation.Scalar>
  ) {
    let identity = SIMD16<Operation.Scalar>(repeating: operation.identity)
    var column = 0
    while columns &- column >= 2 &* vectorLaneCount {
      var left = identity, right = identity
      var row = input + column
      for _ in 0..<rows {
        left = operation.combine(left, loadVector(row))
        right = operation.combine(right, loadVector(row + vectorLaneCount))
        row += columns
      }
      storeVector(left, output + column)
      storeVector(right, output + (column &+ vectorLaneCount))
      column &+= 2 &* vectorLaneCount
    }
    while column < columns {
      let lanes = min(vectorLaneCount, columns &- column)
      var sum = identity
      var row = input + column
      for _ in 0..<rows {
        sum = operation.combine(sum, lanes == vectorLaneCount ? loadVector(row) : loadPartialVector(row, count: lanes))
        row += columns
      }
      storeVector(sum, output + column, lanes: lanes)
      column &+= lanes
    }
  }

  /// MEAN: the sum divided by the number of reduced elements; NaN everywhere for an empty input.
  static func mean(
    layout: BroadcastLayout, input: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>, outputCount: Int,
    threadCount: Int
  ) {
    guard layout.elementCount > 0 else {
      output.update(repeating: .nan, count: outputCount)
      return
    }
    run(
      SumReduction<Float>(), layout: layout, input: input, output: output, outputCount: outputCount,
      threadCount: threadCount)
    let divisor = Float(layout.elementCount / max(outputCount, 1))
    storeEachVector(
      MappedVectors(StreamedOperand(UnsafePointer(output), offset: 0), DivisionByScalarOperation(divisor: divisor)),
      count: outputCount, into: output)
  }
}

/// Whether ARG_MAX or ARG_MIN is computed.
enum ExtremumKind: Sendable {
  /// ARG_MAX.
  case maximum
  /// ARG_MIN.
  case minimum
}

/// ARG_MAX / ARG_MIN over one axis of a tensor viewed as [outer, axis, inner].
enum ArgumentExtremum {
  /// Writes, for each (outer, inner) pair, the first index along the axis holding the extreme value.
  static func run<Scalar: Comparable, Index: FixedWidthInteger>(
    _ kind: ExtremumKind, input: UnsafePointer<Scalar>, outerCount: Int, axisCount: Int, innerCount: Int,
    output: UnsafeMutablePointer<Index>
  ) {
    switch kind {
    case .maximum: run(input, outerCount, axisCount, innerCount, output, prefers: >)
    case .minimum: run(input, outerCount, axisCount, innerCount, output, prefers: <)
    }
  }

  @inline(__always)
  private static func run<Scalar: Comparable, Index: FixedWidthInteger>(
    _ input: UnsafePointer<Scalar>, _ outerCount: Int, _ axisCount: Int, _ innerCount: Int,
    _ output: UnsafeMutablePointer<Index>, prefers: (Scalar, Scalar) -> Bool
  ) {
    guard axisCount > 0 else {
      output.update(repeating: 0, count: outerCount * innerCount)
      return
    }
    for outer in 0..<outerCount {
      let block = input + outer * axisCount * innerCount
      for inner in 0..<innerCount {
        var best = block[inner]
        var bestIndex = 0
        var element = block + inner + innerCount
        for index in 1..<axisCount {
          if prefers(element.pointee, best) {
            best = element.pointee
            bestIndex = index
          }
          element += innerCount
        }
        output[outer * innerCount + inner] = Index(truncatingIfNeeded: bestIndex)
      }
    }
  }
}

/// What a reduction kernel computes for its element type.
protocol ReductionDefinition {
  /// The TFLite operator name.
  static var operatorName: String { get }
  /// Checks that the operator runs on `type` (once, when the interpreter is built).
  init(type: ElementType) throws
  /// Reduces `input` (walked by `layout`) into `output` of `outputCount` elements.
  func run(
    layout: BroadcastLayout, input: UnsafeRawPointer, output: UnsafeMutableRawPointer, outputCount: Int, threadCount: Int)
}

/// SUM, REDUCE_PROD, REDUCE_MAX, REDUCE_MIN: which combination they apply to any element type.
protocol ArithmeticReductionKind {
  /// The TFLite operator name.
  static var operatorName: String { get }
  /// The element types the kernel runs.
  static var elementTypes: [ElementType] { get }
  /// How the kind combines two values.
  static var combination: ArithmeticCombination { get }
}

/// How SUM, REDUCE_PROD, REDUCE_MAX and REDUCE_MIN combine values (the `ReductionOperation`
/// each runs: `SumReduction`, `ProductReduction`, `MaximumReduction`, `MinimumReduction`).
enum ArithmeticCombination {
  case sum, product, maximum, minimum
}

/// SUM.
enum SumKind: ArithmeticReductionKind {
  static let operatorName = "SUM"
  static let elementTypes: [ElementType] = [.float32, .int32, .int64]
  static var combination: ArithmeticCombination { .sum }
}

/// REDUCE_PROD.
enum ProductKind: ArithmeticReductionKind {
  static let operatorName = "REDUCE_PROD"
  static let elementTypes: [ElementType] = [.float32, .int32, .int64]
  static var combination: ArithmeticCombination { .product }
}

/// REDUCE_MAX (quantized operands compare raw, as TFLite does).
enum MaximumKind: ArithmeticReductionKind {
  static let operatorName = "REDUCE_MAX"
  static let elementTypes: [ElementType] = [.float32, .int32, .int64, .int8, .int16]
  static var combination: ArithmeticCombination { .maximum }
}

/// REDUCE_MIN (quantized operands compare raw, as TFLite does).
enum MinimumKind: ArithmeticReductionKind {
  static let operatorName = "REDUCE_MIN"
  static let elementTypes: [ElementType] = [.float32, .int32, .int64, .int8, .int16]
  static var combination: ArithmeticCombination { .minimum }
}

/// The reduction definition of SUM, REDUCE_PROD, REDUCE_MAX and REDUCE_MIN.
struct ArithmeticReductionDefinition<Kind: ArithmeticReductionKind>: ReductionDefinition {
  static var operatorName: String { Kind.operatorName }
  private let type: ElementType

  init(type: ElementType) throws {
    guard Kind.elementTypes.contains(type) else {
      throw KernelError.unsupported("\(Kind.operatorName) on \(type.name) tensors")
    }
    self.type = type
  }

  func run(
    layout: BroadcastLayout, input: UnsafeRawPointer, output: UnsafeMutableRawPointer, outputCount: Int, threadCount: Int
  ) {
    switch type {
    case .float32: run(Float.self, layout, input, output, outputCount, threadCount)
    case .int32: run(Int32.self, layout, input, output, outputCount, threadCount)
    case .int64: run(Int64.self, layout, input, output, outputCount, threadCount)
    case .int16: run(Int16.self, layout, input, output, outputCount, threadCount)
    default: run(Int8.self, layout, input, output, outputCount, threadCount)
    }
  }

  private func run<Scalar: ArithmeticScalar>(
    _: Scalar.Type, _ layout: BroadcastLayout, _ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer,
    _ outputCount: Int, _ threadCount: Int
  ) {
    let (input, output) = (input.assumingMemoryBound(to: Scalar.self), output.assumingMemoryBound(to: Scalar.self))
    func reduce<Operation: ReductionOperation>(_ operation: Operation) where Operation.Scalar == Scalar {
      ReductionDriver.run(
        operation, layout: layout, input: input, output: output, outputCount: outputCount, threadCount: threadCount)
    }
    switch Kind.combination {
    case .sum: reduce(SumReduction<Scalar>())
    case .product: reduce(ProductReduction<Scalar>())
    case .maximum: reduce(MaximumReduction<Scalar>())
    case .minimum: reduce(MinimumReduction<Scalar>())
    }
  }
}

/// The reduction definition of MEAN (float32).
struct MeanDefinition: ReductionDefinition {
  static let operatorName = "MEAN"

  init(type: ElementType) throws {
    guard type == .float32 else { throw KernelError.unsupported("MEAN on \(type.name) tensors") }
  }

  func run(
    layout: BroadcastLayout, input: UnsafeRawPointer, output: UnsafeMutableRawPointer, outputCount: Int, threadCount: Int
  ) {
    ReductionDriver.mean(
      layout: layout, input: input.assumingMemoryBound(to: Float.self),
      output: output.assumingMemoryBound(to: Float.self), outputCount: outputCount, threadCount: threadCount)
  }
}

/// A reduction of bool tensors.
protocol BooleanReduction: ReductionOperation where Scalar == UInt8 {
  /// The TFLite operator name.
  static var operatorName: String { get }
  /// The reduction.
  init()
}

extension AnyReduction: BooleanReduction {
  static let operatorName = "REDUCE_ANY"
}

extension AllReduction: BooleanReduction {
  static let operatorName = "REDUCE_ALL"
}

/// The reduction definition of REDUCE_ANY and REDUCE_ALL.
struct BooleanReductionDefinition<Operation: BooleanReduction>: ReductionDefinition {
  static var operatorName: String { Operation.operatorName }

  init(type: ElementType) throws {
    guard type == .bool else { throw KernelError.unsupported("\(Operation.operatorName) on \(type.name) tensors") }
  }

  func run(
    layout: BroadcastLayout, input: UnsafeRawPointer, output: UnsafeMutableRawPointer, outputCount: Int, threadCount: Int
  ) {
    ReductionDriver.run(
      Operation(), layout: layout, input: input.assumingMemoryBound(to: UInt8.self),
      output: output.assumingMemoryBound(to: UInt8.self), outputCount: outputCount, threadCount: threadCount)
  }
}

/// The kernel of the reductions over axes (MEAN, SUM, REDUCE_*).
final class ReductionKernel<Definition: ReductionDefinition>: Kernel {
  private let input: RuntimeTensor
  private let axes: RuntimeTensor
  private let output: RuntimeTensor
  private let keepDimensions: Bool
  private let definition: Definition
  /// The layout once prepared, read in place by `eval` (see `PreparedBroadcastLayout`).
  private var prepared: PreparedBroadcastLayout?

  init(node: Node) throws {
    (input, axes, output) = try node.twoInputsAndOutput()
    _ = try commonElementType([input, output], allowed: [input.type], operatorName: Definition.operatorName)
    if input.type == .int8 || input.type == .int16 {
      try requireSharedQuantization([input, output], operatorName: Definition.operatorName)
    }
    definition = try Definition(type: input.type)
    if case .reducerOptions(let options) = node.options {
      keepDimensions = options.keepDims
    } else {
      keepDimensions = false
    }
  }

  func prepare(_ context: inout PrepareContext) throws {
    let axisValues = try constantIntegers(axes, op: Definition.operatorName, operand: "axis")
    let resolved = try ReductionAxes(axes: axisValues, inputShape: input.shape, keepDimensions: keepDimensions)
    prepared = PreparedBroadcastLayout(try BroadcastLayout(reducing: input.shape, axes: resolved.isReduced))
    output.shape = resolved.outputShape
  }

  func eval(_ context: EvalContext) throws {
    guard let prepared else { throw KernelError.invalid("evaluated before prepare") }
    definition.run(
      layout: prepared.layout, input: try tensorData(input), output: try tensorData(output), outputCount: output.elementCount,
      threadCount: context.threadCount)
  }
}

/// ARG_MAX and ARG_MIN: the kind and its options.
protocol ArgumentExtremumVariant {
  /// The TFLite operator name.
  static var operatorName: String { get }
  /// Which extreme.
  static var kind: ExtremumKind { get }
  /// The output type requested by the options (INT64 when absent, as in TFLite's schema default).
  static func outputType(in options: BuiltinOptions) -> TensorType
}

/// ARG_MAX.
enum ArgumentMaximum: ArgumentExtremumVariant {
  static let operatorName = "ARG_MAX"
  static let kind = ExtremumKind.maximum
  static func outputType(in options: BuiltinOptions) -> TensorType {
    if case .argMaxOptions(let argMax) = options { return argMax.outputType }
    return .int64
  }
}

/// ARG_MIN.
enum ArgumentMinimum: ArgumentExtremumVariant {
  static let operatorName = "ARG_MIN"
  static let kind = ExtremumKind.minimum
  static func outputType(in options: BuiltinOptions) -> TensorType {
    if case .argMinOptions(let argMin) = options { return argMin.outputType }
    return .int64
  }
}

/// The ARG_MAX / ARG_MIN kernel.
final class ArgumentExtremumKernel<Variant: ArgumentExtremumVariant>: Kernel {
  private let input: RuntimeTensor
  private let axis: RuntimeTensor
  private let output: RuntimeTensor
  private var outerCount = 0
  private var axisCount = 0
  private var innerCount = 0

  init(node: Node) throws {
    (input, axis, output) = try node.twoInputsAndOutput()
    guard [.float32, .int32, .int64, .int8, .uint8, .int16, .bool].contains(input.type) else {
      throw KernelError.unsupported("\(Variant.operatorName) on \(input.type.name) tensors")
    }
    guard output.type == .int32 || output.type == .int64 else {
      throw KernelError.unsupported("\(Variant.operatorName) writing \(output.type.name) indices")
    }
    let requested = Variant.outputType(in: node.options)
    guard requested == (output.type == .int32 ? .int32 : .int64) else {
      throw KernelError.invalid("\(Variant.operatorName) options ask for \(requested.name), the output is \(output.type.name)")
    }
  }

  func prepare(_ context: inout PrepareContext) throws {
    let values = try constantIntegers(axis, op: Variant.operatorName, operand: "axis")
    let shape = input.shape
    guard values.count == 1, let value = values.first, value >= -shape.count, value < shape.count else {
      throw KernelError.invalid("\(Variant.operatorName) needs one axis in -\(shape.count)..<\(shape.count), got \(values)")
    }
    let resolved = value < 0 ? value + shape.count : value
    outerCount = shape[..<resolved].reduce(1, *)
    axisCount = shape[resolved]
    innerCount = shape[(resolved + 1)...].reduce(1, *)
    var outputShape = shape
    outputShape.remove(at: resolved)
    output.shape = outputShape
  }

  func eval(_ context: EvalContext) throws {
    let source = try tensorData(input)
    let destination = try tensorData(output)
    switch input.type {
    case .float32: run(source.assumingMemoryBound(to: Float.self), destination)
    case .int32: run(source.assumingMemoryBound(to: Int32.self), destination)
    case .int64: run(source.assumingMemoryBound(to: Int64.self), destination)
    case .int16: run(source.assumingMemoryBound(to: Int16.self), destination)
    case .int8: run(source.assumingMemoryBound(to: Int8.self), destination)
    default: run(source.assumingMemoryBound(to: UInt8.self), destination)
    }
  }

  private func run<Scalar: Comparable>(_ source: UnsafePointer<Scalar>, _ destination: UnsafeMutableRawPointer) {
    if output.type == .int32 {
      ArgumentExtremum.run(
        Variant.kind, input: source, outerCount: outerCount, axisCount: axisCount, innerCount: innerCount,
        output: destination.assumingMemoryBound(to: Int32.self))
    } else {
      ArgumentExtremum.run(
        Variant.kind, input: source, outerCount: outerCount, axisCount: axisCount, innerCount: innerCount,
        output: destination.assumingMemoryBound(to: Int64.self))
    }
  }
}

/// CUMSUM: running sums along one axis, optionally exclusive (each output leaves its own input
/// out) and reversed (summing from the end). Each output row is the previous output row plus one
/// input row, so the additions happen in TFLite's order and are vectorized across the inner axes.
final class CumulativeSumKernel: Kernel {
  private let input: RuntimeTensor
  private let axis: RuntimeTensor
  private let output: RuntimeTensor
  private let type: ElementType
  private let exclusive: Bool
  private let reverse: Bool
  private var outerCount = 0
  private var axisCount = 0
  private var innerCount = 0

  init(node: Node) throws {
    (input, axis, output) = try node.twoInputsAndOutput()
    type = try commonElementType([input, output], allowed: [.float32, .int32, .int64], operatorName: "CUMSUM")
    if case .cumsumOptions(let options) = node.options {
      exclusive = options.exclusive
      reverse = options.reverse
    } else {
      exclusive = false
      reverse = false
    }
  }

  func prepare(_ context: inout PrepareContext) throws {
    let values = try constantIntegers(axis, op: "CUMSUM", operand: "axis")
    let shape = input.shape
    guard values.count == 1, let value = values.first, value >= -shape.count, value < shape.count else {
      throw KernelError.invalid("CUMSUM needs one axis in -\(shape.count)..<\(shape.count), got \(values)")
    }
    let resolved = value < 0 ? value + shape.count : value
    outerCount = shape[..<resolved].reduce(1, *)
    axisCount = shape[resolved]
    innerCount = shape[(resolved + 1)...].reduce(1, *)
    output.shape = shape
  }

  func eval(_ context: EvalContext) throws {
    let source = try tensorData(input)
    let destination = try tensorData(output)
    switch type {
    case .float32: run(source.assumingMemoryBound(to: Float.self), destination.assumingMemoryBound(to: Float.self))
    case .int32: run(source.assumingMemoryBound(to: Int32.self), destination.assumingMemoryBound(to: Int32.self))
    default: run(source.assumingMemoryBound(to: Int64.self), destination.assumingMemoryBound(to: Int64.self))
    }
  }

  private func run<Scalar: ArithmeticScalar>(_ input: UnsafePointer<Scalar>, _ output: UnsafeMutablePointer<Scalar>) {
    let inner = innerCount
    for outer in 0..<outerCount {
      let block = outer * axisCount * inner
      for step in 0..<axisCount {
        let row = reverse ? axisCount - 1 - step : step
        let destination = output + block + row * inner
        let source = input + block + row * inner
        guard step > 0 else {
          if exclusive {
            destination.update(repeating: 0, count: inner)
          } else {
            destination.update(from: source, count: inner)
          }
          continue
        }
        let previous = reverse ? row + 1 : row - 1
        let runningSum = StreamedOperand(UnsafePointer(output), offset: block + previous * inner)
        let addend = StreamedOperand(input, offset: block + (exclusive ? previous : row) * inner)
        storeEachVector(
          CombinedVectors(runningSum, addend, CombineOperation(SumReduction<Scalar>())), count: inner,
          into: destination)
      }
    }
  }
}
