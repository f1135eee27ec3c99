// Quantized reductions over axes: MEAN, SUM, REDUCE_MAX and REDUCE_MIN on int8, uint8 and int16,
// REDUCE_PROD on int8 and int16.
//
// Raw values are accumulated in int32 (sums; 8-bit sums over the leading axes, as squeeze-excite's
// MEAN over H and W, on the generated column-sum kernels) or compared (extremes) into scratch
// memory, then each output is finished: MEAN and uint8 SUM as LiteRT's reference kernel does (the
// sum minus the zero points, rescaled by a quantized multiplier, which for MEAN folds in 1/count),
// int8 and int16 SUM as LiteRT's builtin kernel does (in float: LiteRT's reference SUM reads int8
// and int16 data as uint8, so its outputs are not the sums), and the extremes unchanged (TFLite
// requires the input's quantization on the output). REDUCE_PROD multiplies the offset values in
// input order, rescaling every product by input scale / output scale^(1/count) so that the running
// product stays in int32, and rescales once more at the end.

import TFLiteFormat
import TFLiteLinearAlgebra

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// How the quantized reductions combine and finish.
enum IntegerReductionKind {
  case mean, sum, maximum, minimum
}

/// The typed loop of a quantized reduction: input, output, int32 scratch values, the evaluation's threads.
typealias IntegerReductionRunner = (UnsafeRawPointer, UnsafeMutableRawPointer, UnsafeMutablePointer<Int32>, EvalContext) -> Void

/// A quantized reduction over axes.
protocol IntegerReductionOperator {
  static var operatorName: String { get }
  /// The element types it runs.
  static var elementTypes: [ElementType] { get }
  /// How it accumulates when it is an ``AccumulatingReductionOperator``, nil otherwise (a static
  /// answer: casting the operator type to that protocol at prepare would cost a scan of every
  /// protocol conformance record of the process).
  static var accumulatingKind: IntegerReductionKind? { get }
  /// Validates the quantization and builds the typed reduction of `layout` (`reducedCount`
  /// input values per output); returns it with the number of int32 scratch values it needs on
  /// `threadCount` threads.
  static func makeReduction(
    input: RuntimeTensor, output: RuntimeTensor, layout: BroadcastLayout, reducedCount: Int, rounding: RoundingPolicy,
    threadCount: Int
  ) throws -> (runner: IntegerReductionRunner, scratchCount: Int)
}

/// MEAN, SUM, REDUCE_MAX or REDUCE_MIN: accumulated in one int32 per output.
protocol AccumulatingReductionOperator: IntegerReductionOperator {
  static var kind: IntegerReductionKind { get }
}

extension BroadcastLayout {
  /// `rows` and `channels` when a reduction of this layout sums rows of `channels` elements into
  /// one accumulator per channel (MEAN or SUM over the leading axes).
  var columnSumShape: (rows: Int, channels: Int)? {
    guard rank == 2, strides0[0] == 0, strides0[1] == 1 else { return nil }
    return (dimensions[0], dimensions[1])
  }

  /// True when `kind` on `type` elements over this layout runs the generated column sums (where
  /// generated kernels run).
  func sumsColumns(_ kind: IntegerReductionKind, of type: ElementType) -> Bool {
    (kind == .mean || kind == .sum) && (type == .int8 || type == .uint8) && columnSumShape != nil
  }
}

/// MEAN.
enum QuantizedMean: AccumulatingReductionOperator {
  static let operatorName = "MEAN"
  static let kind = IntegerReductionKind.mean
}

/// SUM.
enum QuantizedSum: AccumulatingReductionOperator {
  static let operatorName = "SUM"
  static let kind = IntegerReductionKind.sum
}

/// REDUCE_MAX.
enum QuantizedReduceMaximum: AccumulatingReductionOperator {
  static let operatorName = "REDUCE_MAX"
  static let kind = IntegerReductionKind.maximum
}

/// REDUCE_MIN.
enum QuantizedReduceMinimum: AccumulatingReductionOperator {
  static let operatorName = "REDUCE_MIN"
  static let kind = IntegerReductionKind.minimum
}

/// Turns an int32 accumulator into an output value.
enum IntegerReductionFinish {
  /// MEAN and uint8 SUM: `(sum − zeroPoint · count)` rescaled, plus the output zero point.
  case rescale(
    multiplier: QuantizedMultiplier, inputZeroPoint: Int32, count: Int, outputZeroPoint: Int32, rounding: RoundingPolicy)
  /// int8 and int16 SUM: `round(sum · scale + bias)` in float, plus the output zero point.
  case floatSum(scale: Float, bias: Float, outputZeroPoint: Int32)
  /// The extremes: the accumulator itself.
  case identity

  /// The output for `accumulator`, clamped to `range`.
  @inline(__always)
  func callAsFunction(_ accumulator: Int32, range: ClosedRange<Int32>) -> Int32 {
    let value: Int32
    switch self {
    case .rescale(let multiplier, let inputZeroPoint, let count, let outputZeroPoint, let rounding):
      let shifted = Int32(truncatingIfNeeded: Int64(accumulator) - Int64(inputZeroPoint) * Int64(count))
      value = multiplier.apply(shifted, rounding: rounding) &+ outputZeroPoint
    case .floatSum(let scale, let bias, let outputZeroPoint):
      value = FixedPoint.truncatingConversion((Float(accumulator) * scale + bias).rounded()) &+ outputZeroPoint
    case .identity:
      value = accumulator
    }
    return min(max(value, range.lowerBound), range.upperBound)
  }

  /// `callAsFunction` of `count` accumulators into `Element` outputs, clamped to the type's range.
  /// A rescale takes eight outputs at a time (`QuantizedMultiplierLanes`, bit for bit the scalar
  /// rescale for shifts in −31...30, which the lanes cover; a shift outside them takes the scalar
  /// rescale throughout): MEAN's 64 to 1280 outputs after a network's last convolution were one
  /// rescale call each, 1.9 % of mobilenet_mini_int8's invoke.
  func finish<Element: QuantizedInteger>(
    _ accumulators: UnsafePointer<Int32>, count: Int, into destination: UnsafeMutablePointer<Element>
  ) {
    let range = Int32(Element.min)...Int32(Element.max)
    var index = 0
    if case .rescale(let multiplier, let inputZeroPoint, let reducedCount, let outputZeroPoint, let rounding) = self,
      (-31...30).contains(multiplier.shift)
    {
      let lanes = QuantizedMultiplierLanes(repeating: multiplier, rounding: rounding)
      // The scalar rescale's Int64 difference truncated to Int32 is this wrapping Int32 difference.
      let offset = SIMD8<Int32>(repeating: Int32(truncatingIfNeeded: Int64(inputZeroPoint) * Int64(reducedCount)))
      while index &+ 8 <= count {
        let sums = UnsafeRawPointer(accumulators + index).loadUnaligned(as: SIMD8<Int32>.self)
        let values = lanes.apply(sums &- offset) &+ SIMD8(repeating: outputZeroPoint)
        Element.storeNarrowed(values.clamped(to: range), to: destination + index)
        index &+= 8
      }
    }
    while index < count {
      destination[index] = Element(truncatingIfNeeded: self(accumulators[index], range: range))
      index &+= 1
    }
  }

  /// The reference rescaling of MEAN (`averages`) or SUM: the multiplier of
  /// `inputScale / outputScale`, for MEAN with 1/count folded into the mantissa as far as 32 bits
  /// allow and the rest into the shift (TFLite's reference `QuantizedMeanOrSum`).
  static func rescale(
    input: QuantizedOperand, output: QuantizedOperand, count: Int, averages: Bool, rounding: RoundingPolicy
  ) -> IntegerReductionFinish {
    var multiplier = QuantizedMultiplier(Double(input.scale) / Double(output.scale), rounding: rounding)
    if averages {
      let divisor = max(count, 1)
      let shift = min(Int.bitWidth - 1 - divisor.leadingZeroBitCount, 32, 31 + multiplier.shift)
      multiplier = QuantizedMultiplier(
        multiplier: Int32(truncatingIfNeeded: (Int64(multiplier.multiplier) << shift) / Int64(divisor)),
        shift: multiplier.shift - shift)
    }
    return .rescale(
      multiplier: multiplier, inputZeroPoint: input.zeroPoint, count: count, outputZeroPoint: output.zeroPoint,
      rounding: rounding)
  }
}

/// Accumulates and finishes a reduction of `Element` tensors.
private struct TypedIntegerReduction<Element: QuantizedInteger> {
  let kind: IntegerReductionKind
  let layout: BroadcastLayout
  let outputCount: Int
  let finish: IntegerReductionFinish

  @inline(__always)
  private func combine(_ accumulator: Int32, _ value: Int32) -> Int32 {
    switch kind {
    case .mean, .sum: accumulator &+ value
    case .maximum: value > accumulator ? value : accumulator
    case .minimum: value < accumulator ? value : accumulator
    }
  }

  /// Eight lanes of `combine`.
  @inline(__always)
  private func combine(_ accumulator: SIMD8<Int32>, _ values: SIMD8<Int32>) -> SIMD8<Int32> {
    switch kind {
    case .mean, .sum: accumulator &+ values
    case .maximum: pointwiseMax(accumulator, values)
    case .minimum: pointwiseMin(accumulator, values)
    }
  }

  /// The lanes combined into one value.
  @inline(__always)
  private func reduce(_ lanes: SIMD8<Int32>) -> Int32 {
    switch kind {
    case .mean, .sum: lanes.wrappedSum()
    case .maximum: lanes.max()
    case .minimum: lanes.min()
    }
  }

  func run(
    input: UnsafeRawPointer, output: UnsafeMutableRawPointer, accumulators: UnsafeMutablePointer<Int32>,
    context: EvalContext
  ) {
    let source = input.assumingMemoryBound(to: Element.self)
    let destination = output.assumingMemoryBound(to: Element.self)
    guard layout.elementCount > 0 else {
      destination.update(repeating: 0, count: outputCount)
      return
    }
    let identity: Int32 =
      switch kind {
      case .mean, .sum: 0
      case .maximum: Int32(Element.min)
      case .minimum: Int32(Element.max)
      }
    accumulators.update(repeating: identity, count: outputCount)
    if let (rows, channels) = columnSumShape, let kernels = GeneratedColumnSumKernels.current {
      sumColumns(kernels, source, rows: rows, channels: channels, into: accumulators, context: context)
    } else {
      accumulate(source, into: accumulators, identity: identity)
    }
    finish.finish(accumulators, count: outputCount, into: destination)
  }

  /// `rows` and `channels` when the reduction sums 8-bit rows of `channels` elements into one
  /// accumulator per channel (MEAN or SUM over the leading axes): the generated column sums' case.
  var columnSumShape: (rows: Int, channels: Int)? {
    guard kind == .mean || kind == .sum, Element.bitWidth == 8 else { return nil }
    return layout.columnSumShape
  }

  /// The channel sums of `rows` rows into `accumulators` (zeros): on several threads, chunks of
  /// rows summed into a set of sums each (chunk 0's in `accumulators`, chunk c's `c · channels`
  /// further), then added up; wrapping Int32 additions, so the sums do not depend on the cut.
  private func sumColumns(
    _ kernels: GeneratedColumnSumKernels, _ source: UnsafePointer<Element>, rows: Int, channels: Int,
    into accumulators: UnsafeMutablePointer<Int32>, context: EvalContext
  ) {
    let chunks = ChunkSplit(
      count: rows, minimumChunk: cheapElementwiseChunk / max(channels, 1), threadCount: context.threadCount)
    context.parallelFor(chunks.count) { chunk in
      let sums = accumulators + chunk &* channels
      if chunk > 0 { sums.update(repeating: 0, count: channels) }
      let range = chunks.range(chunk)
      sumColumns(kernels, source + range.lowerBound &* channels, rows: range.count, channels: channels, into: sums)
    }
    for chunk in 1..<max(chunks.count, 1) {
      let sums = accumulators + chunk &* channels
      for channel in 0..<channels { accumulators[channel] &+= sums[channel] }
    }
  }

  /// The channel sums of `rows` rows: whole 16-channel blocks on the generated kernels, the last
  /// channels in Swift (the same wrapping Int32 sums); all of them in Swift when the kernel could
  /// not be mapped (it then sums nothing).
  private func sumColumns(
    _ kernels: GeneratedColumnSumKernels, _ source: UnsafePointer<Element>, rows: Int, channels: Int,
    into accumulators: UnsafeMutablePointer<Int32>
  ) {
    let blocks = channels / ColumnSumKernelGenerator.blockChannels
    let summed = kernels.run(
      Element.isSigned ? .int8 : .uint8, from: UnsafeRawPointer(source), rowBytes: channels, rows: rows,
      into: accumulators, blockCount: blocks)
    let firstSwiftChannel = summed ? blocks * ColumnSumKernelGenerator.blockChannels : 0
    for row in 0..<rows {
      let values = source + row &* channels
      for channel in firstSwiftChannel..<channels {
        accumulators[channel] &+= Int32(truncatingIfNeeded: values[channel])
      }
    }
  }

  /// Combines every input element into its accumulator, row segment by row segment.
  private func accumulate(_ source: UnsafePointer<Element>, into accumulators: UnsafeMutablePointer<Int32>, identity: Int32) {
    let outputStride = layout.innerStride(of: 0)
    layout.forEachSegment(in: 0..<layout.elementCount) { start, outputOffset, _, _, count in
      var index = 0
      if outputStride == 0 {
        // A reduced row: eight lanes, then the lanes and the tail into the one accumulator.
        var lanes = SIMD8<Int32>(repeating: identity)
        while index &+ 8 <= count {
          lanes = combine(lanes, Element.loadWidened(source + (start &+ index)))
          index &+= 8
        }
        var accumulator = combine(accumulators[outputOffset], reduce(lanes))
        while index < count {
          accumulator = combine(accumulator, Int32(truncatingIfNeeded: source[start &+ index]))
          index &+= 1
        }
        accumulators[outputOffset] = accumulator
      } else {
        // A kept row: combined lane by lane into consecutive accumulators.
        while index &+ 8 <= count {
          let target = UnsafeMutableRawPointer(accumulators + (outputOffset &+ index))
          let current = target.loadUnaligned(as: SIMD8<Int32>.self)
          target.storeBytes(of: combine(current, Element.loadWidened(source + (start &+ index))), as: SIMD8<Int32>.self)
          index &+= 8
        }
        while index < count {
          accumulators[outputOffset &+ index] = combine(
            accumulators[outputOffset &+ index], Int32(truncatingIfNeeded: source[start &+ index]))
          index &+= 1
        }
      }
    }
  }
}

/// Builds the typed reduction (a closure formed where the element type is concrete).
private struct IntegerReductionFactory: QuantizedTypeVisitor {
  let kind: IntegerReductionKind
  let layout: BroadcastLayout
  let outputCount: Int
  let finish: IntegerReductionFinish
  func visit<Element: QuantizedInteger>(_ type: Element.Type) throws -> IntegerReductionRunner {
    let reduction = TypedIntegerReduction<Element>(kind: kind, layout: layout, outputCount: outputCount, finish: finish)
    // The generated column sums it runs, mapped with the other nodes' kernels at the end of allocateTensors().
    if reduction.columnSumShape != nil { GeneratedColumnSumKernels.current?.reserve(Element.isSigned ? .int8 : .uint8) }
    return { reduction.run(input: $0, output: $1, accumulators: $2, context: $3) }
  }
}

extension AccumulatingReductionOperator {
  static var elementTypes: [ElementType] { [.int8, .uint8, .int16] }
  static var accumulatingKind: IntegerReductionKind? { kind }

  static func makeReduction(
    input: RuntimeTensor, output: RuntimeTensor, layout: BroadcastLayout, reducedCount: Int, rounding: RoundingPolicy,
    threadCount: Int
  ) throws -> (runner: IntegerReductionRunner, scratchCount: Int) {
    let op = operatorName
    let finish: IntegerReductionFinish
    switch kind {
    case .mean, .sum:
      let symmetric = input.type == .int16
      let inputOperand = try QuantizedOperand(input, op: op, symmetric: symmetric)
      let outputOperand = try QuantizedOperand(output, op: op, symmetric: symmetric)
      if kind == .mean || input.type == .uint8 {
        finish = .rescale(
          input: inputOperand, output: outputOperand, count: reducedCount, averages: kind == .mean, rounding: rounding)
      } else {
        let scale = inputOperand.scale / outputOperand.scale
        finish = .floatSum(
          scale: scale, bias: Float(-inputOperand.zeroPoint) * scale * Float(reducedCount),
          outputZeroPoint: outputOperand.zeroPoint)
      }
    case .maximum, .minimum:
      guard input.quantization == output.quantization else {
        throw KernelError.invalid(
          "\(op): \(QuantizationValidation.describe(output)) must have the quantization of \(QuantizationValidation.describe(input))")
      }
      finish = .identity
    }
    let outputCount = output.elementCount
    let runner = try input.type.visitQuantized(
      IntegerReductionFactory(kind: kind, layout: layout, outputCount: outputCount, finish: finish))
    // Column sums on several threads keep one set of sums per row chunk.
    let sumSets = layout.sumsColumns(kind, of: input.type) ? ChunkSplit.mostChunks(threadCount: threadCount) : 1
    return (runner, outputCount * sumSets)
  }
}

/// REDUCE_PROD (int8, and int16 with zero points 0).
enum QuantizedReduceProduct: IntegerReductionOperator {
  static let operatorName = "REDUCE_PROD"
  static let elementTypes: [ElementType] = [.int8, .int16]
  static let accumulatingKind: IntegerReductionKind? = nil

  static func makeReduction(
    input: RuntimeTensor, output: RuntimeTensor, layout: BroadcastLayout, reducedCount: Int, rounding: RoundingPolicy,
    threadCount: Int
  ) throws -> (runner: IntegerReductionRunner, scratchCount: Int) {
    let symmetric = input.type == .int16
    let inputOperand = try QuantizedOperand(input, op: operatorName, symmetric: symmetric)
    let outputOperand = try QuantizedOperand(output, op: operatorName, symmetric: symmetric)
    // Each of the `reducedCount` products is rescaled by input scale / output scale^(1/count).
    let real = Double(inputOperand.scale) / pow(Double(outputOperand.scale), 1 / Double(max(reducedCount, 1)))
    let product = TypedIntegerProductFactory(
      layout: layout, outputCount: output.elementCount, multiplier: QuantizedMultiplier(real, rounding: rounding),
      inputZeroPoint: inputOperand.zeroPoint, outputZeroPoint: outputOperand.zeroPoint)
    // A running product and a started flag per output.
    return (try input.type.visitQuantized(product), 2 * output.elementCount)
  }
}

/// Builds the typed product (a closure formed where the element type is concrete).
private struct TypedIntegerProductFactory: QuantizedTypeVisitor {
  let layout: BroadcastLayout
  let outputCount: Int
  let multiplier: QuantizedMultiplier
  let inputZeroPoint: Int32
  let outputZeroPoint: Int32

  func visit<Element: QuantizedInteger>(_ type: Element.Type) throws -> IntegerReductionRunner {
    let factory = self
    return { input, output, scratch, _ in factory.run(Element.self, input: input, output: output, scratch: scratch) }
  }

  /// Multiplies in input order, as TFLite's reference walks the input: each output's first value
  /// starts its product, every later one multiplies it and the result is rescaled (TFLite's
  /// 64-bit rescaling, which has one rounding whatever the rounding policy).
  private func run<Element: QuantizedInteger>(
    _: Element.Type, input: UnsafeRawPointer, output: UnsafeMutableRawPointer, scratch: UnsafeMutablePointer<Int32>
  ) {
    let source = input.assumingMemoryBound(to: Element.self)
    let destination = output.assumingMemoryBound(to: Element.self)
    let products = scratch
    let started = scratch + outputCount
    started.update(repeating: 0, count: outputCount)
    let outputStride = layout.innerStride(of: 0)
    layout.forEachSegment(in: 0..<layout.elementCount) { start, outputOffset, _, _, count in
      for index in 0..<count {
        let target = outputOffset &+ index &* outputStride
        let value = Int32(truncatingIfNeeded: source[start &+ index]) &- inputZeroPoint
        products[target] = started[target] == 0 ? value : multiplier.apply(Int64(products[target]) &* Int64(value))
        started[target] = 1
      }
    }
    for index in 0..<outputCount {
      let value = multiplier.apply(Int64(products[index])) &+ outputZeroPoint
      destination[index] = Element(clamping: value)
    }
  }
}

/// The quantized reductions over axes: input, constant axes, output of the input's type.
final class IntegerReductionKernel<Operator: IntegerReductionOperator>: Kernel {
  private let input: RuntimeTensor
  private let axes: RuntimeTensor
  private let output: RuntimeTensor
  private let keepDimensions: Bool
  private var runner: IntegerReductionRunner?
  /// True when `eval` sums columns on the generated kernels where they run.
  private var sumsColumns = false

  init(node: Node) throws {
    (input, axes, output) = try node.twoInputsAndOutput()
    guard input.type == output.type, Operator.elementTypes.contains(input.type) else {
      throw KernelError.unsupported(
        "\(Operator.operatorName) from \(input.type.name) to \(output.type.name) in the quantized kernels")
    }
    if case .reducerOptions(let options) = node.options {
      keepDimensions = options.keepDims
    } else {
      keepDimensions = false
    }
  }

  func prepare(_ context: inout PrepareContext) throws {
    let axisValues = try constantIntegers(axes, op: Operator.operatorName, operand: "axis")
    let resolved = try ReductionAxes(axes: axisValues, inputShape: input.shape, keepDimensions: keepDimensions)
    let layout = try BroadcastLayout(reducing: input.shape, axes: resolved.isReduced)
    var reducedCount = 1
    for (size, isReduced) in zip(input.shape, resolved.isReduced) where isReduced { reducedCount *= size }
    output.shape = resolved.outputShape
    let (runner, scratchCount) = try Operator.makeReduction(
      input: input, output: output, layout: layout, reducedCount: reducedCount, rounding: context.roundingPolicy,
      threadCount: context.threadCount)
    context.requestScratch(bytes: max(scratchCount, 1) * MemoryLayout<Int32>.stride)
    self.runner = runner
    sumsColumns = Operator.accumulatingKind.map { layout.sumsColumns($0, of: input.type) } ?? false
  }

  var kernelDescription: String? {
    sumsColumns ? GeneratedColumnSumKernels.current.map { "column sums, generated \($0.isa)" } : nil
  }

  func eval(_ context: EvalContext) throws {
    guard let runner, let scratch = context.scratch else {
      throw KernelError.invalid("\(Operator.operatorName) evaluated before prepare")
    }
    runner(try tensorData(input), try tensorData(output), scratch.assumingMemoryBound(to: Int32.self), context)
  }
}
