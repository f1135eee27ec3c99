// Dynamic-range ("hybrid") quantization: FLOAT32 activations with constant int8 (or packed int4)
// weights, as TensorFlow's converter writes them with the DEFAULT optimization and no
// representative dataset. FULLY_CONNECTED, CONV_2D, DEPTHWISE_CONV_2D and BATCH_MATMUL follow the
// arithmetic of LiteRT 2.3 (BUILTIN_REF on x86-64), so that their outputs match to the bit:
//
// - At every run the float input is quantized to int8: per row of K values (FULLY_CONNECTED,
//   BATCH_MATMUL) or per whole image (the convolutions). Symmetric quantization uses
//   scale = max|x| / 127 and values in −127...127; asymmetric quantization (the ops'
//   `asymmetric_quantize_inputs` option, and always for per-channel convolutions) uses
//   scale = (max(x, 0) − min(x, 0)) / 255 with a nudged zero point and values in −128...127.
// - Weights times quantized inputs accumulate in int32, wrapping; the input zero point comes out
//   through each weight row's sum (in DEPTHWISE_CONV_2D, the filter's sum over all taps, the padding
//   holding the zero point).
// - The sum becomes float through the input scale and the weight scale of its output channel; the
//   float bias is added and the fused activation clamps. Each op multiplies in its own order,
//   kept here because float products round differently.
//
// LiteRT's x86 wheels compile the quantizer from its NEON code through an SSE translation layer.
// Two details of that code change the int8 values and are reproduced: the asymmetric range is
// subtracted in float before it is divided in double, and values are rounded eight at a time by
// adding ±0.5 and truncating; only the last `count % 8` values round half away from zero.

import TFLiteFormat
import TFLiteLinearAlgebra

/// How a hybrid kernel quantizes its float input at run time.
enum HybridInputQuantization {
  /// Zero point 0, scale `max|x| / 127`, values in −127...127.
  case symmetric
  /// Scale `(max(x, 0) − min(x, 0)) / 255` with a nudged zero point, values in −128...127.
  case asymmetric

  /// The scale and zero point chosen for one run of values.
  struct Parameters {
    /// Real value of one quantized step.
    var scale: Float
    /// The quantized value of real 0.
    var zeroPoint: Int32
  }

  /// Values quantized per SIMD block, rounded by adding ±0.5 and truncating.
  private static let blockSize = 8

  /// Quantizes `count` floats into `destination` and returns the scale and zero point used. With
  /// `unsigned`, every value is stored plus 128 (its bit pattern read as UInt8: the left-hand form
  /// of `DotProductSums`); the zero point returned is still the int8 one. `generated` (read on the
  /// thread that runs the node) scans and rounds the whole 16-value blocks, with the same values;
  /// it is held unretained (the caller keeps it alive), so that chunks quantized on several
  /// threads at once do not all write its reference count.
  func quantize(
    _ source: UnsafePointer<Float>, count: Int, into destination: UnsafeMutablePointer<Int8>, unsigned: Bool = false,
    generated: Unmanaged<GeneratedHybridKernels>? = nil
  ) -> Parameters {
    guard count > 0 else { return Parameters(scale: 1, zeroPoint: 0) }
    return quantize(
      source, count: count, range: Self.range(source, span: 0..<count, first: source[0], generated: generated),
      span: 0..<count, into: destination, unsigned: unsigned, generated: generated)
  }

  /// Quantizes values `span` of the `count` values at `source` into the same places of
  /// `destination`, with the parameters (returned) of `range`, the range of all `count` values.
  /// `span` starts at a multiple of 16 and ends at one or at `count`, so that every value is
  /// rounded by the same rule (block or tail) as when all are quantized at once.
  func quantize(
    _ source: UnsafePointer<Float>, count: Int, range: (low: Float, high: Float), span: Range<Int>,
    into destination: UnsafeMutablePointer<Int8>, unsigned: Bool, generated: Unmanaged<GeneratedHybridKernels>? = nil
  ) -> Parameters {
    let (low, high) = range
    let parameters: Parameters
    let inverseScale: Float
    let lowest: Float
    switch self {
    case .symmetric:
      let range = max(abs(low), abs(high))
      guard range != 0 else { return Self.zeroFilled(destination + span.lowerBound, count: span.count, unsigned: unsigned) }
      parameters = Parameters(scale: range / 127, zeroPoint: 0)
      inverseScale = 127 / range
      lowest = -127
    case .asymmetric:
      let rangeLow = min(0, low)
      let rangeHigh = max(0, high)
      guard rangeLow != rangeHigh else {
        return Self.zeroFilled(destination + span.lowerBound, count: span.count, unsigned: unsigned)
      }
      let scale = Double(rangeHigh - rangeLow) / 255
      let fromLow = -128 - Double(rangeLow) / scale
      let fromHigh = 127 - Double(rangeHigh) / scale
      let errorFromLow = 128 + abs(Double(rangeLow) / scale)
      let errorFromHigh = 127 + abs(Double(rangeHigh) / scale)
      let zeroPoint = errorFromLow < errorFromHigh ? fromLow : fromHigh
      let nudged: Int32 =
        zeroPoint <= -128 ? -128 : zeroPoint >= 127 ? 127 : zeroPoint.isNaN ? 0
        : Int32(zeroPoint.rounded(.toNearestOrAwayFromZero))
      let floatScale = Float(scale)
      parameters = Parameters(scale: floatScale, zeroPoint: nudged)
      inverseScale = floatScale == 0 ? 0 : Float(1 / Double(floatScale))
      lowest = -128
    }
    let zeroPoint = Float(parameters.zeroPoint)
    let rounding = BlockRounding(
      inverseScale: inverseScale, lowest: lowest - zeroPoint, highest: 127 - zeroPoint,
      storedOffset: parameters.zeroPoint &+ (unsigned ? 128 : 0))
    let blockEnd = min(span.upperBound, count & ~(Self.blockSize - 1))
    var index = span.lowerBound
    let generatedBlocks = (blockEnd &- index) / 16
    if let generated, generatedBlocks > 0,
      generated._withUnsafeGuaranteedRef({
        $0.quantize(
          HybridQuantizeKernelArguments(
            input: source + index, output: UnsafeMutableRawPointer(destination + index), blockCount: generatedBlocks,
            inverseScale: inverseScale, lowest: rounding.lowest, highest: rounding.highest,
            zeroPoint: parameters.zeroPoint, unsigned: unsigned))
      })
    {
      index &+= generatedBlocks &* 16
    }
    while index &+ 16 <= blockEnd {
      let values = UnsafeRawPointer(source + index).loadUnaligned(as: SIMD16<Float>.self)
      UnsafeMutableRawPointer(destination + index).storeBytes(of: rounding.quantized(values), as: SIMD16<Int8>.self)
      index &+= 16
    }
    if index < blockEnd {
      // One block of eight left: quantized in the low half of a vector.
      let values = SIMD16(lowHalf: UnsafeRawPointer(source + index).loadUnaligned(as: SIMD8<Float>.self), highHalf: .zero)
      UnsafeMutableRawPointer(destination + index).storeBytes(of: rounding.quantized(values).lowHalf, as: SIMD8<Int8>.self)
      index &+= Self.blockSize
    }
    while index < span.upperBound {
      destination[index] = rounding.quantizedTail(source[index])
      index &+= 1
    }
    return parameters
  }

  /// LiteRT's rounding of scaled values to stored int8 values: `x · inverseScale ± 0.5` (with the
  /// sign of the product) truncated toward zero and clamped to `lowest ... highest` (the type's
  /// bounds minus the zero point, whole numbers, so clamping before truncating gives the same value),
  /// NaN giving 0, plus the stored offset (the zero point, plus 128 for the unsigned form), whose low
  /// byte is stored.
  private struct BlockRounding {
    /// 127 / range (symmetric) or 1 / scale (asymmetric).
    let inverseScale: Float
    /// The smallest rounded value kept (−127 or −128, minus the zero point): at most 0.
    let lowest: Float
    /// The largest rounded value kept (127 minus the zero point): at least 0.
    let highest: Float
    /// Added to the rounded value before it is stored.
    let storedOffset: Int32

    /// 1.5 · 2^23: a value in 0 ..< 2^22 plus this keeps its nearest integer (ties to even) in the low
    /// mantissa bits of the sum.
    private static let magic: Float = 12_582_912

    /// Sixteen values, LiteRT's SIMD rule (the values of whole blocks of eight), in SSE2 instructions
    /// only: the standard library's float-to-integer conversions check every lane (or go through an
    /// out-of-line generic), so the truncation works on the float's bits. The product's magnitude
    /// plus 0.5 (the magnitude of product ± 0.5, rounding being symmetric) is clamped to the bound of
    /// its sign, rounded to an integer by the `magic` addition, stepped down by one where that
    /// rounded up (which truncates it), and negated back for negative products. A −0 product ends
    /// as 0, as on the +0.5 side.
    @inline(__always)
    func quantized(_ values: SIMD16<Float>) -> SIMD16<Int8> {
      let bits = unsafeBitCast(values * inverseScale, to: SIMD16<Int32>.self)
      let negative = bits &>> 31
      // The bound of each lane's sign chosen by bits: an integer comparison's mask here was built
      // lane by lane through memory.
      let positiveBound = unsafeBitCast(SIMD16<Float>(repeating: highest), to: SIMD16<Int32>.self)
      let negativeBound = unsafeBitCast(SIMD16<Float>(repeating: -lowest), to: SIMD16<Int32>.self)
      let bound = unsafeBitCast(positiveBound ^ ((positiveBound ^ negativeBound) & negative), to: SIMD16<Float>.self)
      var magnitude = unsafeBitCast(bits & 0x7FFF_FFFF, to: SIMD16<Float>.self) + 0.5
      // A NaN fails the comparison, keeps its value and becomes 0 next.
      magnitude.replace(with: bound, where: magnitude .> bound)
      magnitude.replace(with: 0, where: magnitude .!= magnitude)
      let biased = magnitude + Self.magic
      var truncated = unsafeBitCast(biased, to: SIMD16<Int32>.self) &- Int32(bitPattern: Self.magic.bitPattern)
      truncated.replace(with: truncated &- 1, where: biased - Self.magic .> magnitude)
      let signed = (truncated ^ negative) &- negative
      return (signed &+ storedOffset).narrowed(to: Int8.self)
    }

    /// One of the last `count % 8` values, which LiteRT rounds half away from zero.
    func quantizedTail(_ value: Float) -> Int8 {
      let rounded = (value * inverseScale).rounded(.toNearestOrAwayFromZero)
      let clamped = rounded.isNaN ? 0 : min(max(rounded, lowest), highest)
      return Int8(truncatingIfNeeded: Int32(clamped) &+ storedOffset)
    }
  }

  /// The smallest and largest of values `span` (at least one) of `source` as a scan that starts
  /// from `first` (the first of all the values) finds them with `<` and `>` (a NaN first value
  /// stays; later NaNs are passed over), eight lanes at a time in the `a < b ? a : b` form LLVM
  /// emits as `minps`/`maxps`. The ranges of consecutive spans, all started from the same `first`,
  /// merge (`merged`) into the range of their union. `generated` scans the whole 16-value blocks
  /// (the same range: with a NaN first value every lane stays NaN, with another none ever is).
  static func range(
    _ source: UnsafePointer<Float>, span: Range<Int>, first: Float, generated: Unmanaged<GeneratedHybridKernels>? = nil
  ) -> (low: Float, high: Float) {
    let blocks = span.count / 16
    if let generated, blocks > 0,
      var range = generated._withUnsafeGuaranteedRef({
        $0.range(source + span.lowerBound, blockCount: blocks, first: first, merge: merged)
      })
    {
      for index in (span.lowerBound &+ blocks &* 16)..<span.upperBound { range = merged(range, (source[index], source[index])) }
      return range
    }
    var lows = SIMD8<Float>(repeating: first)
    var highs = lows
    var index = span.lowerBound
    while index &+ 8 <= span.upperBound {
      let values = UnsafeRawPointer(source + index).loadUnaligned(as: SIMD8<Float>.self)
      for lane in 0..<8 {
        lows[lane] = values[lane] < lows[lane] ? values[lane] : lows[lane]
        highs[lane] = values[lane] > highs[lane] ? values[lane] : highs[lane]
      }
      index &+= 8
    }
    var range = (low: lows[0], high: highs[0])
    for lane in 1..<8 { range = merged(range, (lows[lane], highs[lane])) }
    while index < span.upperBound {
      range = merged(range, (source[index], source[index]))
      index &+= 1
    }
    return range
  }

  /// The range of two sets of values from their ranges, by the scan's rule: a value replaces the
  /// kept one only when it is strictly below (above) it, so a NaN kept stays and a NaN met is passed over.
  static func merged(_ kept: (low: Float, high: Float), _ met: (low: Float, high: Float)) -> (low: Float, high: Float) {
    (met.low < kept.low ? met.low : kept.low, met.high > kept.high ? met.high : kept.high)
  }

  /// An all-zero input (an empty range): every value 0, scale 1, zero point 0, as LiteRT sets them.
  private static func zeroFilled(_ destination: UnsafeMutablePointer<Int8>, count: Int, unsigned: Bool) -> Parameters {
    destination.update(repeating: unsigned ? Int8(bitPattern: 128) : 0, count: count)
    return Parameters(scale: 1, zeroPoint: 0)
  }
}

/// Where the weights of a hybrid kernel are in their tensor: element (matrix, row, column) of the
/// kernel's layout — `matrices` matrices of `rows` rows of `columns` values — is tensor element
/// `matrix * matrixStride + row * rowStride + column * columnStride`.
struct HybridWeightLayout: Equatable {
  /// Independent weight matrices (BATCH_MATMUL's right-hand batches; 1 elsewhere).
  var matrices = 1
  /// Rows of each matrix.
  var rows: Int
  /// Values of each row.
  var columns: Int
  /// Tensor elements between matrices.
  var matrixStride = 0
  /// Tensor elements between rows.
  var rowStride: Int
  /// Tensor elements between the values of a row.
  var columnStride = 1

  /// Rows of `columns` values stored one after the other, as FULLY_CONNECTED and CONV_2D keep them.
  static func contiguous(rows: Int, columns: Int) -> HybridWeightLayout {
    HybridWeightLayout(rows: rows, columns: columns, rowStride: columns)
  }
}

/// The constant weights of a hybrid kernel, read and checked once at prepare time into memory the
/// object owns (freed with it), so that `eval` reads them through plain pointers.
final class HybridWeights {
  /// The int8 values in the kernel's layout (packed int4 values unpacked), row after row, followed
  /// by `HybridProducts.rowBlock − 1` zero rows.
  let values: UnsafeMutablePointer<Int8>
  /// The sum of each row of `values`, for taking out the input zero point.
  let rowSums: UnsafeMutablePointer<Int32>
  /// The scale of every output channel (the per-tensor scale repeated).
  let channelScales: UnsafeMutablePointer<Float>
  /// True when the channels do not all share one scale (LiteRT's per-channel CONV_2D path).
  let hasDistinctScales: Bool
  /// The tensor memory and layout the values were read from.
  private let source: (data: UnsafeMutableRawPointer, layout: HybridWeightLayout)

  /// `existing` when it was read from the same memory of `tensor` in the same layout (a repeated
  /// prepare, for example after an input resize), else the weights read anew.
  static func reusing(
    _ existing: HybridWeights?, _ tensor: RuntimeTensor, op: String, layout: HybridWeightLayout, channels: Int,
    channelAxis: Int
  ) throws -> HybridWeights {
    if let existing, tensor.isConstant, existing.source.data == tensor.data, existing.source.layout == layout {
      return existing
    }
    return try HybridWeights(tensor, op: op, layout: layout, channels: channels, channelAxis: channelAxis)
  }

  /// Reads `tensor` (INT8 or INT4, constant, zero points 0, one scale or one per output channel
  /// along `channelAxis`) in `layout`; `channels` is the number of output channels.
  init(_ tensor: RuntimeTensor, op: String, layout: HybridWeightLayout, channels: Int, channelAxis: Int) throws {
    let (data, scales) = try Self.validated(tensor, op: op, channels: channels, channelAxis: channelAxis)
    source = (data, layout)
    let rowCount = layout.matrices * layout.rows
    // Zero rows past the end let the dot products read whole row blocks.
    let paddedCount = (rowCount + HybridProducts.rowBlock - 1) * layout.columns
    values = .allocate(capacity: max(paddedCount, 1))
    values.initialize(repeating: 0, count: max(paddedCount, 1))
    rowSums = .allocate(capacity: max(rowCount, 1))
    channelScales = .allocate(capacity: max(channels, 1))
    let packed = tensor.type == .int4
    for matrix in 0..<layout.matrices {
      for row in 0..<layout.rows {
        let destinationRow = matrix * layout.rows + row
        var sum: Int32 = 0
        for column in 0..<layout.columns {
          let index = matrix * layout.matrixStride + row * layout.rowStride + column * layout.columnStride
          let value = packed ? int4Value(data, at: index) : data.load(fromByteOffset: index, as: Int8.self)
          values[destinationRow * layout.columns + column] = value
          sum &+= Int32(value)
        }
        (rowSums + destinationRow).initialize(to: sum)
      }
    }
    for channel in 0..<channels {
      (channelScales + channel).initialize(to: scales.count == 1 ? scales[0] : scales[channel])
    }
    hasDistinctScales = scales.contains { $0 != scales[0] }
  }

  /// Checks that `tensor` can be a hybrid kernel's weights (INT8 or INT4, constant, zero points 0,
  /// one scale or one per output channel along `channelAxis`) and returns its memory and scales.
  static func validated(_ tensor: RuntimeTensor, op: String, channels: Int, channelAxis: Int) throws -> (
    data: UnsafeMutableRawPointer, scales: [Float]
  ) {
    // Formatted only for an error: describing a tensor (its shape array as text) at every prepare
    // cost more than the checks.
    var name: String { QuantizationValidation.describe(tensor) }
    try QuantizationValidation.validate(tensor, op: op)
    guard let quantization = tensor.quantization else {
      throw KernelError.invalid("\(op): weights \(name) have no quantization scale")
    }
    guard quantization.zeroPoints.allSatisfy({ $0 == 0 }) else {
      throw KernelError.unsupported("\(op): hybrid weights \(name) have a nonzero zero point")
    }
    let scales = quantization.scales
    guard scales.count == 1 || (scales.count == channels && quantization.axis == channelAxis) else {
      throw KernelError.invalid(
        "\(op): weights \(name) have \(scales.count) scales along axis \(quantization.axis) for \(channels)"
          + " output channels along axis \(channelAxis)")
    }
    guard tensor.isConstant, let data = tensor.data else {
      throw KernelError.unsupported("\(op): weights \(name) are not constant; hybrid kernels need constant weights")
    }
    return (data, scales)
  }

  deinit {
    values.deallocate()
    rowSums.deallocate()
    channelScales.deallocate()
  }
}

/// The integer products of the hybrid kernels.
enum HybridProducts {
  /// Rows whose dot products are computed together, sharing each input load.
  static var rowBlock: Int { 4 }

  /// Calls `body(row, sum)` for every row in `rows` of the row-major int8 matrix `weights` (rows of
  /// `depth` values), with `sum` the wrapping int32 dot product of the row and `input`. Rows go
  /// `rowBlock` at a time, so `weights` must stay readable for `rowBlock − 1` rows past `rows`
  /// (``HybridWeights`` pads its values so); the products of those extra rows are dropped.
  @inline(__always)
  static func forEachDotProduct(
    weights: UnsafePointer<Int8>, depth: Int, rows: Range<Int>, input: UnsafePointer<Int8>,
    _ body: (_ row: Int, _ sum: Int32) -> Void
  ) {
    var row = rows.lowerBound
    while row < rows.upperBound {
      let first = weights + row &* depth
      var sums = (SIMD16<Int32>(), SIMD16<Int32>(), SIMD16<Int32>(), SIMD16<Int32>())
      var column = 0
      while column &+ 16 <= depth {
        let values = widenedToInt32(input + column)
        sums.0 &+= values &* widenedToInt32(first + column)
        sums.1 &+= values &* widenedToInt32(first + (depth &+ column))
        sums.2 &+= values &* widenedToInt32(first + (2 &* depth &+ column))
        sums.3 &+= values &* widenedToInt32(first + (3 &* depth &+ column))
        column &+= 16
      }
      var totals = (sums.0.wrappedSum(), sums.1.wrappedSum(), sums.2.wrappedSum(), sums.3.wrappedSum())
      while column < depth {
        let value = Int32(input[column])
        totals.0 &+= value &* Int32(first[column])
        totals.1 &+= value &* Int32(first[depth &+ column])
        totals.2 &+= value &* Int32(first[2 &* depth &+ column])
        totals.3 &+= value &* Int32(first[3 &* depth &+ column])
        column &+= 1
      }
      let remaining = rows.upperBound &- row
      body(row, totals.0)
      if remaining > 1 { body(row &+ 1, totals.1) }
      if remaining > 2 { body(row &+ 2, totals.2) }
      if remaining > 3 { body(row &+ 3, totals.3) }
      row &+= rowBlock
    }
  }

  /// 16 int8 values widened to int32 (the one widening that stays inline and vectorized in hot
  /// loops; 16-bit intermediates became out-of-line conversion calls there).
  @inline(__always)
  private static func widenedToInt32(_ pointer: UnsafePointer<Int8>) -> SIMD16<Int32> {
    SIMD16<Int32>(truncatingIfNeeded: UnsafeRawPointer(pointer).loadUnaligned(as: SIMD16<Int8>.self))
  }
}

/// The input-quantization part of a hybrid kernel's scratch memory: the int8 copy of the input and
/// the scale and zero point of each quantized run (row or image).
struct HybridInputScratch {
  /// Offset of the int8 values.
  let valuesOffset: Int
  /// Offset of the scales (one float per run).
  let scalesOffset: Int
  /// Offset of the zero points (one int32 per run).
  let zeroPointsOffset: Int
  /// Number of runs.
  let runs: Int
  /// Values per run.
  let runLength: Int

  /// Bytes readable past the last value: `DotProductSums` reads rows in steps of four bytes.
  static let trailingBytes = 3

  /// Reserves room for `runs` runs of `runLength` values in `scratch`, and the generated range and
  /// quantization kernels `quantize` calls (mapped with the node's other kernels at the end of
  /// `allocateTensors()`).
  init(runs: Int, runLength: Int, scratch: inout ScratchLayout) {
    self.runs = runs
    self.runLength = runLength
    valuesOffset = scratch.reserve(bytes: runs * runLength + Self.trailingBytes)
    scalesOffset = scratch.reserve(floats: runs)
    zeroPointsOffset = scratch.reserve(bytes: runs * MemoryLayout<Int32>.stride)
    GeneratedHybridKernels.current?.reserve([.range, .quantize])
  }

  /// Quantizes every run of `source` and returns the scratch views; `unsigned` stores the values
  /// plus 128 (see `HybridInputQuantization.quantize`). With at least as many runs as threads the
  /// runs are spread over the threads; with fewer (one image, one row), each run is cut into
  /// chunks of whole 16-value blocks: the threads find the chunks' ranges, then quantize the chunks
  /// with the parameters of the merged range (the same values as quantizing the run at once).
  func quantize(
    _ source: UnsafePointer<Float>, as quantization: HybridInputQuantization, scratch: UnsafeMutableRawPointer,
    context: EvalContext, unsigned: Bool = false
  ) -> HybridQuantizedInput {
    // A process-lifetime family, held unretained (see `HybridInputQuantization.quantize`).
    let generated = GeneratedHybridKernels.current.map { Unmanaged.passUnretained($0) }
    let input = HybridQuantizedInput(
      values: (scratch + valuesOffset).assumingMemoryBound(to: Int8.self),
      scales: (scratch + scalesOffset).assumingMemoryBound(to: Float.self),
      zeroPoints: (scratch + zeroPointsOffset).assumingMemoryBound(to: Int32.self), runLength: runLength)
    let chunks = ChunkSplit(
      count: runLength, alignment: 16, minimumChunk: cheapElementwiseChunk,
      threadCount: runs >= context.threadCount ? 1 : context.threadCount)
    guard chunks.count > 1 else {
      context.parallelFor(runs) { run in
        let parameters = quantization.quantize(
          source + run &* runLength, count: runLength, into: input.values + run &* runLength, unsigned: unsigned,
          generated: generated)
        input.scales[run] = parameters.scale
        input.zeroPoints[run] = parameters.zeroPoint
      }
      return input
    }
    withUnsafeTemporaryAllocation(of: (low: Float, high: Float).self, capacity: chunks.count) { ranges in
      for run in 0..<runs {
        let values = source + run &* runLength
        context.parallelFor(chunks.count) { chunk in
          ranges[chunk] = HybridInputQuantization.range(
            values, span: chunks.range(chunk), first: values[0], generated: generated)
        }
        let range = ranges.dropFirst().reduce(ranges[0], HybridInputQuantization.merged)
        var parameters = HybridInputQuantization.Parameters(scale: 1, zeroPoint: 0)
        context.parallelFor(chunks.count) { chunk in
          let chunkParameters = quantization.quantize(
            values, count: runLength, range: range, span: chunks.range(chunk), into: input.values + run &* runLength,
            unsigned: unsigned, generated: generated)
          if chunk == 0 { parameters = chunkParameters }
        }
        input.scales[run] = parameters.scale
        input.zeroPoints[run] = parameters.zeroPoint
      }
    }
    return input
  }
}

/// A quantized input in scratch memory.
struct HybridQuantizedInput {
  /// The int8 values, run after run.
  let values: UnsafeMutablePointer<Int8>
  /// Scale of each run.
  let scales: UnsafeMutablePointer<Float>
  /// Zero point of each run.
  let zeroPoints: UnsafeMutablePointer<Int32>
  /// Values per run.
  let runLength: Int
}

/// The float bias of a hybrid kernel, or zeros.
@inline(__always)
func hybridBias(_ bias: UnsafePointer<Float>?, _ channel: Int) -> Float { bias?[channel] ?? 0 }

/// How LiteRT turns an int32 sum of a hybrid kernel into float. The orders differ between ops and
/// the float products round differently, so each is kept.
enum HybridRescale {
  /// TRANSPOSE_CONV: `sum · (inputScale · weightScale) + bias`. (CONV_2D, FULLY_CONNECTED and
  /// DEPTHWISE_CONV_2D apply their orders 16 lanes at a time in Convolution+Hybrid.swift.)
  @inline(__always)
  static func combinedScale(_ sum: Int32, inputScale: Float, weightScale: Float, bias: Float) -> Float {
    Float(sum) * (inputScale * weightScale) + bias
  }

  /// BATCH_MATMUL: `(inputScale · weightScale) · (sum − rowSum · zeroPoint)`, the zero point taken
  /// out in float as LiteRT does (exact while the values stay below 2^24).
  @inline(__always)
  static func batchMatMul(
    _ sum: Int32, rowSum: Int32, zeroPoint: Int32, inputScale: Float, weightScale: Float
  ) -> Float {
    (inputScale * weightScale) * (Float(sum) - Float(rowSum) * Float(zeroPoint))
  }
}

/// The operands of a hybrid node: FLOAT32 input (0) and output, weights (1) of an allowed type, and
/// an optional FLOAT32 bias (2).
struct HybridOperands {
  /// Input 0.
  let input: RuntimeTensor
  /// Input 1: the constant weights.
  let weights: RuntimeTensor
  /// Input 2 when present.
  let bias: RuntimeTensor?
  /// The output.
  let output: RuntimeTensor

  /// Reads the operands of `node`; throws `unsupported` unless it is a hybrid node with weights of
  /// one of `weightTypes` (and no bias unless `biasAllowed`).
  init(_ node: Node, op: String, weightTypes: [ElementType], biasAllowed: Bool = true) throws {
    try node.expect(inputs: 2, maxInputs: biasAllowed ? 3 : 2, outputs: 1)
    input = try node.input(0)
    weights = try node.input(1)
    bias = node.optionalInput(2)
    output = try node.output(0)
    guard input.type == .float32, output.type == .float32, weightTypes.contains(weights.type) else {
      throw KernelError.unsupported(
        "\(op) with \(input.type.name) input, \(weights.type.name) weights and \(output.type.name) output"
          + " in the hybrid kernels")
    }
    try FloatOperands.require([bias], op: op)
  }

  /// The float bias in `eval`, or nil.
  var biasPointer: UnsafePointer<Float>? { bias.map { UnsafePointer($0.pointer(as: Float.self)) } }
}
