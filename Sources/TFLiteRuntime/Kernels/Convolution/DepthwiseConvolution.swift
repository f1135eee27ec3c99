import TFLiteFormat
import TFLiteLinearAlgebra

/// DEPTHWISE_CONV_2D in float32, vectorised over channels.
///
/// With a multiplier above 1 the input is first expanded (each channel repeated `multiplier` times)
/// into scratch, so the one channel-aligned loop serves every case.
enum FloatDepthwiseConvolution {
  /// Scratch bytes `run` needs (the expanded input when `multiplier > 1`).
  static func scratchBytes(_ shape: DepthwiseShape) -> Int {
    guard shape.multiplier > 1 else { return 0 }
    return shape.batch * shape.height.inputSize * shape.width.inputSize * shape.outputChannels
      * MemoryLayout<Float>.stride
  }

  /// Reserves (``GeneratedDepthwiseKernels/reserve(_:)``) the kinds `run` asks `kernels` for with
  /// `plan`: the tap-table kind, its eight-channel form when the blocks leave eight channels, and
  /// the plan's square-filter kind.
  static func reserveKernels(_ shape: DepthwiseShape, plan: FloatDepthwisePlan?, on kernels: GeneratedDepthwiseKernels) {
    var kinds: [DepthwiseKernelGenerator.ElementKind] = [.float]
    if FloatDepthwisePlan.channelsCovered(shape) % DepthwiseKernelGenerator.blockChannels != 0 {
      kinds.append(.floatEightChannels)
    }
    if let squareKind = plan?.squareKind { kinds.append(squareKind) }
    kernels.reserve(kinds)
  }

  /// Computes the convolution. `bias` has `outputChannels` values or is nil. Whole 16-channel
  /// blocks and a last 8-channel one run on `generatedKernels` when given (by default those this
  /// thread may use, see `GeneratedDepthwiseKernels`) with the calls of `plan` (the kernels make
  /// it at prepare; made here when nil; when the shape has none, every channel runs in Swift), the
  /// other channels on Swift SIMD code whose multiply-adds are fused when `usesFusedMultiplyAdd`
  /// (by default when this build has hardware FMA, see `FusedMultiplyAdd`; only looked up when
  /// Swift channels are left, as finding it times both forms once per process).
  static func run(
    _ shape: DepthwiseShape, input: UnsafePointer<Float>, filter: UnsafePointer<Float>, bias: UnsafePointer<Float>?,
    activation: FloatClampRange, output: UnsafeMutablePointer<Float>, threadCount: Int,
    scratch: UnsafeMutableRawPointer?, usesFusedMultiplyAdd: Bool? = nil,
    generatedKernels: GeneratedDepthwiseKernels? = GeneratedDepthwiseKernels.current, plan: FloatDepthwisePlan? = nil
  ) {
    let rowPlan = generatedKernels == nil ? nil : plan ?? FloatDepthwisePlan(shape)
    // The kernel set and the plan stay alive for the call: the `Prepared` run holds neither.
    withExtendedLifetime((generatedKernels, rowPlan)) {
      run(
        Prepared(shape, plan: rowPlan, kernels: generatedKernels.map { Unmanaged.passUnretained($0) }), input: input,
        filter: filter, bias: bias, activation: activation, output: output, threadCount: threadCount, scratch: scratch,
        usesFusedMultiplyAdd: usesFusedMultiplyAdd)
    }
  }

  /// What a run needs besides the tensors' addresses, worked out once (a kernel keeps it from
  /// prepare): plain values and pointers only, so that a run retains, releases and allocates nothing.
  struct Prepared {
    /// The geometry.
    let shape: DepthwiseShape
    /// The plan's tables (nil: no plan, every channel in Swift); the plan must outlive the runs.
    let tables: FloatDepthwisePlan.Tables?
    /// The generated kernel set to run the tables on, unretained (a process-lifetime set, or one the
    /// caller keeps alive); nil: every channel in Swift.
    var kernels: Unmanaged<GeneratedDepthwiseKernels>?
    /// `ChannelWindowRows` work of one output row.
    let workPerRow: Int

    /// The run of `shape` with `plan`'s calls on `kernels`.
    init(_ shape: DepthwiseShape, plan: FloatDepthwisePlan?, kernels: Unmanaged<GeneratedDepthwiseKernels>?) {
      self.shape = shape
      tables = plan?.tables
      self.kernels = kernels
      workPerRow = ChannelWindowRows.work(
        shape.width.outputSize, shape.outputChannels, shape.height.filterSize, shape.width.filterSize)
    }
  }

  /// `run` on what `prepared` worked out (see `run`; the set and the plan `prepared` was made with
  /// must be alive).
  static func run(
    _ prepared: Prepared, input: UnsafePointer<Float>, filter: UnsafePointer<Float>, bias: UnsafePointer<Float>?,
    activation: FloatClampRange, output: UnsafeMutablePointer<Float>, threadCount: Int,
    scratch: UnsafeMutableRawPointer?, usesFusedMultiplyAdd: Bool? = nil
  ) {
    let shape = prepared.shape
    // A constant (not a variable the row closures capture, which costs an exclusivity check per row).
    let source: UnsafePointer<Float>
    if shape.multiplier > 1, let scratch {
      let expanded = scratch.assumingMemoryBound(to: Float.self)
      let pixels = shape.batch * shape.height.inputSize * shape.width.inputSize
      for pixel in 0..<pixels {
        let from = input + pixel * shape.inputChannels
        var to = expanded + pixel * shape.outputChannels
        for channel in 0..<shape.inputChannels {
          to.update(repeating: from[channel], count: shape.multiplier)
          to += shape.multiplier
        }
      }
      source = UnsafePointer(expanded)
    } else {
      source = input
    }
    // The float kinds are generated on first request (missing only if the OS refused them).
    let generated = prepared.kernels.flatMap { kernels in
      prepared.tables.flatMap { tables in
        GeneratedDepthwiseRows(
          tables: tables, kernels: kernels, input: source, filter: filter, bias: bias, activation: activation,
          output: output)
      }
    }
    let firstSwiftChannel = generated == nil ? 0 : FloatDepthwisePlan.channelsCovered(shape)
    let fusesSwiftChannels =
      firstSwiftChannel < shape.outputChannels && (usesFusedMultiplyAdd ?? FusedMultiplyAdd.isHardware)
    /// The channels from `firstSwiftChannel` on, in Swift.
    func runSwiftChannels(row: Int) {
      guard firstSwiftChannel < shape.outputChannels else { return }
      if fusesSwiftChannels {
        forEachChannelBlock(
          channels: shape.outputChannels, startingAt: firstSwiftChannel,
          DepthwiseRow<FusedArithmetic>(
            shape: shape, row: row, input: source, filter: filter, bias: bias, activation: activation, output: output))
      } else {
        forEachChannelBlock(
          channels: shape.outputChannels, startingAt: firstSwiftChannel,
          DepthwiseRow<SeparateArithmetic>(
            shape: shape, row: row, input: source, filter: filter, bias: bias, activation: activation, output: output))
      }
    }
    let rows = shape.batch * shape.height.outputSize
    // Unwrapped before the row loop: testing and copying the optional rows struct on every row
    // cost about 6 % of face_landmark's depthwise time.
    if let generated {
      ChannelWindowRows.forEachRow(rows: rows, workPerRow: prepared.workPerRow, threadCount: threadCount) { row in
        generated.run(row: row)
        runSwiftChannels(row: row)
      }
    } else {
      ChannelWindowRows.forEachRow(
        rows: rows, workPerRow: prepared.workPerRow, threadCount: threadCount, runSwiftChannels)
    }
  }
}

/// The generated-kernel calls of a float depthwise convolution, worked out once per shape (at
/// prepare) so that `eval` only adds its pointers: per output row (of one image), the interior
/// pixels (every filter column inside the input) in one call, each edge pixel in a call of its own
/// with only its valid filter columns; every call runs once over the whole 16-channel blocks (the
/// kernel loops over them) and once more for a last 8-channel block. The tap tables hold, for each
/// set of valid filter columns, the (input, weight) byte offsets of those columns in every filter
/// row, row after row: a call whose window has only some
/// rows inside the input reads the part of its table for those rows, so no tap reads outside the
/// input. An interior covering a whole 3×3 (or, on AVX-512, 5×5) filter runs on the kernel that
/// keeps the filter's weights in registers; it sums in the same order, so the results are the same
/// bits.
final class FloatDepthwisePlan {
  /// One kernel call, with offsets counted from the image's first input and output element.
  struct Call {
    /// Input element of the call's first pixel at filter row 0 and its first valid filter column,
    /// channel 0 (it may lie outside the input when row 0 does; only valid rows are read).
    let inputOffset: Int
    /// Output element of the call's first pixel, channel 0.
    let outputOffset: Int
    /// First entry of the call's (input byte offset, weight byte offset) pairs in `taps`.
    let firstTap: Int
    /// Pairs the call reads.
    let tapCount: Int
    /// Consecutive output pixels of the call.
    let pixelCount: Int
    /// True when the call covers a whole square filter (`squareKind` may run it).
    let coversWholeSquare: Bool
  }

  /// Most tap pairs a plan holds (16 MiB of tables); a larger filter, which no real network has,
  /// runs on the Swift route.
  static let maximumTapPairs = 1 << 20

  /// The geometry the plan is for.
  let shape: DepthwiseShape
  /// The calls of every output row, row after row.
  let calls: UnsafeMutableBufferPointer<Call>
  /// The calls of output row `y` are `calls[rowStarts[y] ..< rowStarts[y + 1]]`.
  let rowStarts: UnsafeMutableBufferPointer<Int>
  /// The tap tables: (input byte offset, weight byte offset) pairs.
  let taps: UnsafeMutableBufferPointer<Int>
  /// The square-filter kernel kind for this filter size, if there is one.
  let squareKind: DepthwiseKernelGenerator.ElementKind?

  /// The channels the generated kernels compute: whole blocks of 16, then one of 8.
  static func channelsCovered(_ shape: DepthwiseShape) -> Int {
    DepthwiseKernelGenerator.floatChannelsCovered(shape.outputChannels)
  }

  /// The calls for `shape`; nil when no channel block is whole or the tables would hold more than
  /// `maximumTapPairs`.
  init?(_ shape: DepthwiseShape) {
    let (height, width) = (shape.height, shape.width)
    guard Self.channelsCovered(shape) > 0, height.outputSize > 0, width.outputSize > 0 else { return nil }
    let interior = width.interior
    // One table per distinct set of valid columns (the interior's and each edge pixel's), in the
    // order of their keys. Sorted key arrays, not Int-keyed dictionaries: the first such dictionary
    // of a process costs a scan of every protocol conformance record (its `Hashable` check).
    func key(_ columns: (first: Int, end: Int)) -> Int { columns.first &* (width.filterSize &+ 1) &+ columns.end }
    func columns(_ key: Int) -> (first: Int, end: Int) { (key / (width.filterSize + 1), key % (width.filterSize + 1)) }
    var pixelKeys = interior.isEmpty ? [] : [key((0, width.filterSize))]
    for x in 0..<width.outputSize where !interior.contains(x) { pixelKeys.append(key(width.validTaps(x))) }
    pixelKeys.sort()
    var setKeys: [Int] = []
    for setKey in pixelKeys where setKeys.last != setKey { setKeys.append(setKey) }
    let pairCount = setKeys.reduce(0) { total, setKey in
      total + height.filterSize * max(0, columns(setKey).end - columns(setKey).first)
    }
    guard pairCount <= Self.maximumTapPairs else { return nil }
    /// The position of `setKey` in `setKeys` (binary search; every pixel's key is there).
    func setIndex(_ setKey: Int) -> Int {
      var (low, high) = (0, setKeys.count - 1)
      while low < high {
        let middle = (low + high) / 2
        if setKeys[middle] < setKey { low = middle + 1 } else { high = middle }
      }
      return low
    }
    let channelBytes = shape.outputChannels * MemoryLayout<Float>.stride
    var taps: [Int] = []
    taps.reserveCapacity(2 * pairCount)
    var tableStarts: [Int] = []
    for setKey in setKeys {
      let columns = columns(setKey)
      tableStarts.append(taps.count / 2)
      for ky in 0..<height.filterSize {
        for kx in columns.first..<max(columns.first, columns.end) {
          let inputPixel = ky * height.dilation * width.inputSize + (kx - columns.first) * width.dilation
          taps += [inputPixel * channelBytes, (ky * width.filterSize + kx) * channelBytes]
        }
      }
    }
    var calls: [Call] = []
    var rowStarts: [Int] = [0]
    for y in 0..<height.outputSize {
      let rows = height.validTaps(y)
      let validRows = max(0, rows.end - rows.first)
      /// Pixels `x ..< x + count`, whose windows have valid filter columns `columns`.
      func call(x: Int, count: Int, columns: (first: Int, end: Int), isInterior: Bool) -> Call {
        let columnCount = max(0, columns.end - columns.first)
        return Call(
          inputOffset: (height.inputOrigin(y) * width.inputSize + width.inputOrigin(x) + columns.first * width.dilation)
            * shape.outputChannels,
          outputOffset: (y * width.outputSize + x) * shape.outputChannels,
          firstTap: tableStarts[setIndex(key(columns))] + min(rows.first, height.filterSize) * columnCount,
          tapCount: validRows * columnCount, pixelCount: count,
          coversWholeSquare: isInterior && width.filterSize == height.filterSize && validRows == width.filterSize)
      }
      if !interior.isEmpty {
        calls.append(call(x: interior.lowerBound, count: interior.count, columns: (0, width.filterSize), isInterior: true))
      }
      for x in 0..<width.outputSize where !interior.contains(x) {
        calls.append(call(x: x, count: 1, columns: width.validTaps(x), isInterior: false))
      }
      rowStarts.append(calls.count)
    }
    self.shape = shape
    self.calls = .allocate(capacity: calls.count)
    _ = self.calls.initialize(from: calls)
    self.rowStarts = .allocate(capacity: rowStarts.count)
    _ = self.rowStarts.initialize(from: rowStarts)
    self.taps = .allocate(capacity: max(taps.count, 1))
    _ = self.taps.initialize(from: taps)
    squareKind = DepthwiseKernelGenerator.ElementKind.squareFilter(width.filterSize)
  }

  deinit {
    calls.deallocate()
    rowStarts.deallocate()
    taps.deallocate()
  }

  /// The plan's tables as plain pointers, for rows run while the plan is kept alive (nothing to
  /// retain per run or row).
  struct Tables {
    /// The geometry the plan is for.
    let shape: DepthwiseShape
    /// `calls`, `rowStarts` and `taps` of the plan.
    let calls: UnsafePointer<Call>
    let rowStarts: UnsafePointer<Int>
    let taps: UnsafePointer<Int>
    /// The plan's `squareKind`.
    let squareKind: DepthwiseKernelGenerator.ElementKind?
  }

  /// This plan's tables, valid while the plan lives.
  var tables: Tables {
    Tables(
      shape: shape, calls: UnsafePointer(calls.baseAddress.unsafelyUnwrapped),
      rowStarts: UnsafePointer(rowStarts.baseAddress.unsafelyUnwrapped),
      taps: UnsafePointer(taps.baseAddress.unsafelyUnwrapped), squareKind: squareKind)
  }
}

/// The whole 16-channel blocks (and a last 8-channel one) of a float depthwise convolution's rows
/// on the generated kernels, following a `FloatDepthwisePlan`'s tables. It holds plain pointers
/// only (the tables and the kernels' entries), so running a row retains and releases nothing: the
/// caller keeps the plan alive while it runs rows, and kernel sets are the process's singletons
/// (`GeneratedDepthwiseKernels.kernels(for:)`) or kept alive by the caller.
private struct GeneratedDepthwiseRows {
  let shape: DepthwiseShape
  /// The plan's calls, row starts and tap tables (`FloatDepthwisePlan`).
  let calls: UnsafePointer<FloatDepthwisePlan.Call>
  let rowStarts: UnsafePointer<Int>
  let taps: UnsafePointer<Int>
  /// The kernels the calls run on.
  let entries: FloatDepthwiseEntries
  let input: UnsafePointer<Float>
  let filter: UnsafePointer<Float>
  let bias: UnsafePointer<Float>?
  let activation: FloatClampRange
  let output: UnsafeMutablePointer<Float>

  /// The rows of `tables` on `kernels`; nil when `kernels` lack a float kind the rows need (the OS
  /// refused its mapping).
  init?(
    tables: FloatDepthwisePlan.Tables, kernels: Unmanaged<GeneratedDepthwiseKernels>, input: UnsafePointer<Float>,
    filter: UnsafePointer<Float>, bias: UnsafePointer<Float>?, activation: FloatClampRange,
    output: UnsafeMutablePointer<Float>
  ) {
    let needsEightChannels =
      FloatDepthwisePlan.channelsCovered(tables.shape) % DepthwiseKernelGenerator.blockChannels != 0
    guard
      let entries = kernels._withUnsafeGuaranteedRef({
        $0.floatEntries(squareKind: tables.squareKind, needsEightChannels: needsEightChannels)
      })
    else { return nil }
    shape = tables.shape
    calls = tables.calls
    rowStarts = tables.rowStarts
    taps = tables.taps
    self.entries = entries
    self.input = input
    self.filter = filter
    self.bias = bias
    self.activation = activation
    self.output = output
  }

  /// Output row `row` (counted over every image). Inlined into the row loop, which reads the
  /// fields in place (a call copied the whole struct out of the loop's closure for every row).
  @inline(__always)
  func run(row: Int) {
    let channels = shape.outputChannels
    let floatBytes = MemoryLayout<Float>.stride
    let image = row / shape.height.outputSize
    let y = row - image * shape.height.outputSize
    let imageInput = input + image * shape.height.inputSize * shape.width.inputSize * channels
    let imageOutput = output + image * shape.height.outputSize * shape.width.outputSize * channels
    let covered = FloatDepthwisePlan.channelsCovered(shape)
    let blockChannels = DepthwiseKernelGenerator.blockChannels
    let wholeBlocks = channels / blockChannels
    var arguments = DepthwiseKernelArguments(
      input: UnsafeRawPointer(imageInput), inputPixelBytes: shape.width.stride * channels * floatBytes,
      taps: taps, tapCount: 0, weights: UnsafeRawPointer(filter), start: entries.zeros,
      output: UnsafeMutableRawPointer(imageOutput), outputPixelBytes: channels * floatBytes, pixelCount: 0,
      lower: activation.lower, upper: activation.upper, startBlockBytes: bias == nil ? 0 : blockChannels * floatBytes)
    /// Runs the kernel at `entry` over `blocks` blocks from `channel` of `call` (it moves the pointers on).
    func run(_ entry: UnsafeRawPointer, _ call: FloatDepthwisePlan.Call, from channel: Int, blocks: Int) {
      // Wrapping arithmetic: offsets inside tensors `prepare` validated (or unread, with no taps).
      arguments.input = UnsafeRawPointer(imageInput + (call.inputOffset &+ channel))
      arguments.output = UnsafeMutableRawPointer(imageOutput + (call.outputOffset &+ channel))
      arguments.weights = UnsafeRawPointer(filter + channel)
      arguments.start = bias.map { UnsafeRawPointer($0 + channel) } ?? entries.zeros
      arguments.blockCount = blocks
      entries.run(entry, &arguments)
    }
    for index in rowStarts[y]..<rowStarts[y + 1] {
      let call = calls[index]
      arguments.taps = taps + 2 &* call.firstTap
      arguments.tapCount = call.tapCount
      arguments.pixelCount = call.pixelCount
      if wholeBlocks > 0 { run(call.coversWholeSquare ? entries.square : entries.table, call, from: 0, blocks: wholeBlocks) }
      if covered > wholeBlocks &* blockChannels, let eightChannels = entries.eightChannels {
        run(eightChannels, call, from: wholeBlocks &* blockChannels, blocks: 1)
      }
    }
  }
}

/// The four output pixels a Swift depthwise route sums together: `first` and the next three,
/// `step` elements apart. A group past the row's end (`count` real pixels, 1 to 4) repeats its last
/// real pixel, so the loads stay inside the row; callers store only the real ones.
@inline(__always)
func fourPixels<Element>(from first: UnsafePointer<Element>, count: Int, step: Int) -> (
  UnsafePointer<Element>, UnsafePointer<Element>, UnsafePointer<Element>, UnsafePointer<Element>
) {
  (first, first + min(1, count &- 1) &* step, first + min(2, count &- 1) &* step, first + min(3, count &- 1) &* step)
}

/// Work split of the channel-vectorised window kernels: items of whole output rows.
enum ChannelWindowRows {
  /// Multiply-adds (or window reads) below which a work item is not worth handing to another thread.
  static let minimumItemWork = 100_000

  /// The work of one output row, `pixels × channels × filterRows × filterColumns`, as
  /// `work(_:_:)` counts it (pool windows come from options and may be huge). Four parameters, not
  /// variadic: a variadic argument array is a heap allocation per call.
  @inline(__always)
  static func work(_ pixels: Int, _ channels: Int, _ filterRows: Int, _ filterColumns: Int) -> Int {
    work(work(pixels, channels), work(filterRows, filterColumns))
  }

  /// `first × second` with negative factors counted as 0, saturating at `Int.max`.
  @inline(__always)
  static func work(_ first: Int, _ second: Int) -> Int {
    let (product, overflow) = max(first, 0).multipliedReportingOverflow(by: max(second, 0))
    return overflow ? Int.max : product
  }

  /// Calls `body(row)` for every output row in `0..<rows`: about 8 items per thread of rows dealt
  /// evenly (a multiple of the thread count, see `ParallelWork.balancedItemCount`), each at least
  /// `minimumItemWork` of `workPerRow`, all rows inline when single-threaded or small (then in a
  /// loop inlined into the caller, which calls `body` directly rather than through a closure).
  @inline(__always)
  static func forEachRow(rows: Int, workPerRow: Int, threadCount: Int, _ body: (Int) -> Void) {
    if threadCount <= 1 || work(rows, workPerRow) < 2 * minimumItemWork {
      for row in 0..<rows { body(row) }
      return
    }
    forEachRowRange(rows: rows, workPerRow: workPerRow, threadCount: threadCount) { range in
      for row in range { body(row) }
    }
  }

  /// Calls `body(range)` for consecutive ranges of output rows that together cover `0..<rows`,
  /// split as `forEachRow` splits them (one range when single-threaded or small). A range that
  /// starts by filling `setupRows` input rows (a ring window kept along the range) holds about as
  /// many rows where the thread count allows: fewer, longer ranges, so that the fills do not
  /// outweigh the rows (7 rows under a 5-row filter: two ranges on two threads, not seven).
  static func forEachRowRange(
    rows: Int, workPerRow: Int, threadCount: Int, setupRows: Int = 1, _ body: (Range<Int>) -> Void
  ) {
    let affordable = min(rows, work(rows, workPerRow) / minimumItemWork)
    // Fewer rows than items wanted, each worth its own item: one row per item (rows cannot be halved).
    var itemCount =
      threadCount > 1 && affordable == rows && rows < 8 * threadCount
      ? rows : ParallelWork.balancedItemCount(wanted: 8 * threadCount, affordable: affordable, threadCount: threadCount)
    let shortestItem = min(setupRows, rows / max(threadCount, 1))
    if shortestItem > 1 {
      itemCount = ParallelWork.balancedItemCount(wanted: itemCount, affordable: rows / shortestItem, threadCount: threadCount)
    }
    ParallelWork.run(itemCount: rows == 0 ? 0 : itemCount, threadCount: threadCount) { item, _ in
      body(item * rows / itemCount..<(item + 1) * rows / itemCount)
    }
  }

  /// Calls `body(row, blocks)` for every output row in `0..<rows` with every channel block of
  /// `0..<channelBlocks` once: whole rows split as `forEachRow` splits them, unless there are fewer
  /// rows than four per thread and not a multiple of the thread count (and work for an item per
  /// thread); then every row is cut into `threadCount` groups of blocks, so that two threads share
  /// a 7-row layer as 14 equal items instead of 4 rows against 3.
  static func forEachRowAndChannelBlocks(
    rows: Int, channelBlocks: Int, workPerRow: Int, threadCount: Int, _ body: (_ row: Int, _ blocks: Range<Int>) -> Void
  ) {
    let groups = min(threadCount, channelBlocks)
    guard groups > 1, rows < 4 * threadCount, rows % threadCount != 0,
      work(rows, workPerRow) / minimumItemWork >= threadCount
    else {
      forEachRow(rows: rows, workPerRow: workPerRow, threadCount: threadCount) { body($0, 0..<channelBlocks) }
      return
    }
    ParallelWork.run(itemCount: rows * groups, threadCount: threadCount) { item, _ in
      let group = item % groups
      body(item / groups, group * channelBlocks / groups..<(group + 1) * channelBlocks / groups)
    }
  }
}

/// One output row of a depthwise convolution, for one block of channels.
private struct DepthwiseRow<Arithmetic: MultiplyAddForm>: ChannelBlockOperation {
  let shape: DepthwiseShape
  let filter: UnsafePointer<Float>
  let bias: UnsafePointer<Float>?
  let activation: FloatClampRange
  /// First input element of the image, first output element of the row.
  let image: UnsafePointer<Float>
  let outputRow: UnsafeMutablePointer<Float>
  let originY: Int
  let firstTapY: Int
  let endTapY: Int

  init(
    shape: DepthwiseShape, row: Int, input: UnsafePointer<Float>, filter: UnsafePointer<Float>,
    bias: UnsafePointer<Float>?, activation: FloatClampRange, output: UnsafeMutablePointer<Float>
  ) {
    self.shape = shape
    self.filter = filter
    self.bias = bias
    self.activation = activation
    let y = row % shape.height.outputSize
    let imageIndex = row / shape.height.outputSize
    image = input + imageIndex * shape.height.inputSize * shape.width.inputSize * shape.outputChannels
    outputRow = output + row * shape.width.outputSize * shape.outputChannels
    originY = shape.height.inputOrigin(y)
    (firstTapY, endTapY) = shape.height.validTaps(y)
  }

  func run<Vector: ChannelVector>(_ vector: Vector.Type, channel: Int) {
    // Index arithmetic wraps (&+, &*): every offset stays inside tensors whose sizes `prepare`
    // validated, and overflow checks in these loops cost more than the float work with AVX-512.
    let channels = shape.outputChannels
    let width = shape.width
    let filterWidth = width.filterSize
    let channelBias = bias.map { Vector.load($0 + channel) } ?? Vector(repeating: 0)
    let interior = width.interior
    let pixelStride = width.stride &* channels
    let tapStride = width.dilation &* channels
    let rowStride = width.inputSize &* channels
    let tapRowStride = shape.height.dilation &* rowStride
    let filterRowStride = filterWidth &* channels
    let tapRows = endTapY &- firstTapY
    let firstInputRow = image + channel + (originY &+ firstTapY &* shape.height.dilation) &* rowStride
    let firstFilterRow = filter + channel + firstTapY &* filterRowStride

    /// Sums the taps `firstX ..< endX` of the `rows` valid filter rows for one pixel (`pairs` false)
    /// or for two pixels `pixelStride` apart sharing each filter load (`pairs` true), then stores them.
    @inline(__always)
    func convolve(_ x: Int, firstX: Int, endX: Int, rows: Int, pairs: Bool) {
      var sum0 = Vector(repeating: 0)
      var sum1 = sum0
      var inputRow = firstInputRow + (width.inputOrigin(x) &+ firstX &* width.dilation) &* channels
      var filterRow = firstFilterRow + firstX &* channels
      for _ in 0..<rows {
        var source = inputRow
        var weights = filterRow
        for _ in firstX..<endX {
          let w = Vector.load(weights)
          Arithmetic.multiplyAdd(&sum0, Vector.load(source), w)
          if pairs { Arithmetic.multiplyAdd(&sum1, Vector.load(source + pixelStride), w) }
          source += tapStride
          weights += channels
        }
        inputRow += tapRowStride
        filterRow += filterRowStride
      }
      let out = outputRow + (x &* channels &+ channel)
      (sum0 + channelBias).clamped(activation).store(to: out)
      if pairs { (sum1 + channelBias).clamped(activation).store(to: out + channels) }
    }

    for x in 0..<interior.lowerBound {
      let taps = width.validTaps(x)
      convolve(x, firstX: taps.first, endX: taps.end, rows: tapRows, pairs: false)
    }
    var x = interior.lowerBound
    if tapRows == 3 && filterWidth == 3 {
      // A whole 3×3 window: the nine filter vectors stay in registers across the row.
      let w0 = Vector.load(firstFilterRow)
      let w1 = Vector.load(firstFilterRow + channels)
      let w2 = Vector.load(firstFilterRow + 2 &* channels)
      let w3 = Vector.load(firstFilterRow + filterRowStride)
      let w4 = Vector.load(firstFilterRow + (filterRowStride &+ channels))
      let w5 = Vector.load(firstFilterRow + (filterRowStride &+ 2 &* channels))
      let w6 = Vector.load(firstFilterRow + 2 &* filterRowStride)
      let w7 = Vector.load(firstFilterRow + (2 &* filterRowStride &+ channels))
      let w8 = Vector.load(firstFilterRow + (2 &* filterRowStride &+ 2 &* channels))
      var top = firstInputRow + width.inputOrigin(x) &* channels
      var out = outputRow + (x &* channels &+ channel)
      while x < interior.upperBound {
        let middle = top + tapRowStride
        let bottom = middle + tapRowStride
        var sum = Vector(repeating: 0)
        Arithmetic.multiplyAdd(&sum, Vector.load(top), w0)
        Arithmetic.multiplyAdd(&sum, Vector.load(top + tapStride), w1)
        Arithmetic.multiplyAdd(&sum, Vector.load(top + 2 &* tapStride), w2)
        Arithmetic.multiplyAdd(&sum, Vector.load(middle), w3)
        Arithmetic.multiplyAdd(&sum, Vector.load(middle + tapStride), w4)
        Arithmetic.multiplyAdd(&sum, Vector.load(middle + 2 &* tapStride), w5)
        Arithmetic.multiplyAdd(&sum, Vector.load(bottom), w6)
        Arithmetic.multiplyAdd(&sum, Vector.load(bottom + tapStride), w7)
        Arithmetic.multiplyAdd(&sum, Vector.load(bottom + 2 &* tapStride), w8)
        (sum + channelBias).clamped(activation).store(to: out)
        top += pixelStride
        out += channels
        x &+= 1
      }
    }
    // Other interiors: two pixels share each filter load. (Four would save more loads with
    // AVX-512, but their eight SIMD16 accumulators spill on the baseline SSE2 target.)
    while x &+ 2 <= interior.upperBound {
      convolve(x, firstX: 0, endX: filterWidth, rows: tapRows, pairs: true)
      x &+= 2
    }
    if x < interior.upperBound { convolve(x, firstX: 0, endX: filterWidth, rows: tapRows, pairs: false) }
    for x in interior.upperBound..<width.outputSize {
      let taps = width.validTaps(x)
      convolve(x, firstX: taps.first, endX: taps.end, rows: tapRows, pairs: false)
    }
  }
}

/// DEPTHWISE_CONV_2D (float32): inputs `input [N,H,W,C]`, `filter [1,KH,KW,C·multiplier]`, optional bias.
/// The multiplier is taken from the shapes (TFLite checks the option against them). With
/// `explicitPadding` (a zero PAD of the input folded in by `OperatorFusion`), the input is the PAD's
/// input and the node's VALID window runs over it padded by those zeros: the padding taps are
/// skipped instead of read as zeros.
final class DepthwiseConv2DKernel: Kernel {
  private let operands: WeightedOperands
  private var input: RuntimeTensor { operands.input }
  private var filter: RuntimeTensor { operands.weights }
  private var bias: RuntimeTensor? { operands.bias }
  private var output: RuntimeTensor { operands.output }
  private let options: DepthwiseConv2DOptions
  private let activation: FloatClampRange
  /// The geometry once prepared.
  private(set) var shape: DepthwiseShape?
  /// The generated kernels' calls for `shape` (kept alive for `prepared`, which points into it).
  private var plan: FloatDepthwisePlan?
  /// What `eval` runs besides the tensors' addresses, with the process's preferred kernel set.
  private var prepared: FloatDepthwiseConvolution.Prepared?
  /// The filter and bias values `eval` reads when they are copied at prepare (``copiedOperands``;
  /// the bias nil also when there is none).
  private var copiedFilter: UnsafePointer<Float>?
  private var copiedBias: UnsafePointer<Float>?
  /// Zeros around the input's height and width from a folded PAD, or nil.
  private let explicitPadding: SpatialPadding?
  /// The filter's values followed, from the next cache line, by the bias's, copied at prepare when
  /// both are constant (nil: `eval` reads them in place). Reading a few kilobytes of a
  /// memory-mapped model in `eval` maps the file's whole page-cache folio (up to 2 MB on Linux),
  /// and with it neighbouring weights that other kernels packed and released: 21 MB more resident
  /// on Xception, past LiteRT's peak.
  private var copiedOperands: CacheLineValues<Float>?
  /// Where the bias starts in ``copiedOperands``: the filter's count rounded up to whole cache lines.
  private var copiedBiasOffset: Int { (filter.elementCount + 15) & ~15 }

  convenience init(node: Node) throws {
    try self.init(node: node, explicitPadding: nil)
  }

  /// The kernel of `node`, whose input is padded by `explicitPadding` (its padding must be VALID).
  init(node: Node, explicitPadding: SpatialPadding?) throws {
    operands = try WeightedOperands(node, op: "DEPTHWISE_CONV_2D")
    options = try FloatOperands.options(of: node, op: "DEPTHWISE_CONV_2D", defaults: DepthwiseConv2DOptions()) {
      if case .depthwiseConv2DOptions(let options) = $0 { options } else { nil }
    }
    activation = try FloatClampRange(options.fusedActivationFunction, op: "DEPTHWISE_CONV_2D")
    if explicitPadding != nil, options.padding != .valid {
      throw KernelError.invalid("DEPTHWISE_CONV_2D with a folded PAD needs VALID padding")
    }
    self.explicitPadding = explicitPadding
  }

  func prepare(_ context: inout PrepareContext) throws {
    let op = "DEPTHWISE_CONV_2D"
    try FloatOperands.requireRank(input, 4, op: op, role: "input")
    try FloatOperands.requireRank(filter, 4, op: op, role: "filter")
    let (batch, height, width, channels) = (input.shape[0], input.shape[1], input.shape[2], input.shape[3])
    let outputChannels = filter.shape[3]
    guard filter.shape[0] == 1, channels > 0, outputChannels % channels == 0, outputChannels > 0 else {
      throw KernelError.invalid("\(op) filter \(filter.shape) does not fit input channels \(channels)")
    }
    try FloatOperands.requireBias(bias, count: outputChannels, op: op)
    let (heightAxis, widthAxis) = try spatialAxes(height: height, width: width, op: op)
    let outputShape = [batch, heightAxis.outputSize, widthAxis.outputSize, outputChannels]
    _ = try FloatOperands.checkedCount(outputShape, "\(op) output")
    let shape = DepthwiseShape(
      batch: batch, inputChannels: channels, multiplier: outputChannels / channels, height: heightAxis, width: widthAxis)
    if shape.multiplier > 1 {
      _ = try FloatOperands.checkedCount([batch, height, width, outputChannels, 4], "\(op) expanded input")
    }
    output.shape = outputShape
    context.requestScratch(bytes: FloatDepthwiseConvolution.scratchBytes(shape))
    self.shape = shape
    plan = FloatDepthwisePlan(shape)
    if let kernels = GeneratedDepthwiseKernels.current { FloatDepthwiseConvolution.reserveKernels(shape, plan: plan, on: kernels) }
    // The preferred set lives for the process; `eval` drops it where this thread may not use it.
    prepared = FloatDepthwiseConvolution.Prepared(
      shape, plan: plan, kernels: GeneratedDepthwiseKernels.preferred.map { Unmanaged.passUnretained($0) })
    copyConstantOperands(&context)
    copiedFilter = copiedOperands.map { UnsafePointer($0.base) }
    copiedBias = bias == nil ? nil : copiedOperands.map { UnsafePointer($0.base + copiedBiasOffset) }
  }

  /// Copies the filter and bias into ``copiedOperands`` when both are constant, and lets the
  /// runtime release their model pages (or free their folded values).
  private func copyConstantOperands(_ context: inout PrepareContext) {
    copiedOperands = nil
    guard filter.isConstant, bias?.isConstant ?? true else { return }
    let filterCount = filter.elementCount
    let biasOffset = copiedBiasOffset
    copiedOperands = CacheLineValues(count: biasOffset + (bias?.elementCount ?? 0)) { values in
      values.initialize(from: filter.pointer(as: Float.self), count: filterCount)
      (values + filterCount).initialize(repeating: 0, count: biasOffset - filterCount)
      if let bias { (values + biasOffset).initialize(from: bias.pointer(as: Float.self), count: bias.elementCount) }
    }
    context.releaseAfterCopying(filter)
    context.releaseAfterCopying(bias)
  }

  /// The height and width axes of an input of `height` × `width`, padded by `explicitPadding` if given.
  private func spatialAxes(height: Int, width: Int, op: String) throws -> (WindowAxis, WindowAxis) {
    guard let padding = explicitPadding else {
      return (
        try WindowAxis(
          op: op, axis: "height", inputSize: height, filterSize: filter.shape[1], stride: options.strideH,
          dilation: options.dilationHFactor, padding: options.padding),
        try WindowAxis(
          op: op, axis: "width", inputSize: width, filterSize: filter.shape[2], stride: options.strideW,
          dilation: options.dilationWFactor, padding: options.padding)
      )
    }
    guard
      let heightAxis = WindowAxis(
        inputSize: height, filterSize: filter.shape[1], stride: Int(options.strideH),
        dilation: Int(options.dilationHFactor), paddingBefore: padding.top, paddingAfter: padding.bottom),
      let widthAxis = WindowAxis(
        inputSize: width, filterSize: filter.shape[2], stride: Int(options.strideW),
        dilation: Int(options.dilationWFactor), paddingBefore: padding.left, paddingAfter: padding.right)
    else {
      throw KernelError.invalid(
        "\(op): input \(height)×\(width) padded by \(padding), filter \(filter.shape), strides \(options.strideH)×\(options.strideW) give no valid output")
    }
    return (heightAxis, widthAxis)
  }

  var kernelDescription: String? {
    shape.map { shape in
      KernelDescription.depthwise(channels: shape.outputChannels) + (explicitPadding == nil ? "" : ", PAD folded in")
    }
  }

  /// Reads no reference-counted state but the tensors' addresses: the plan, kernel set and
  /// operand pointers were worked out at prepare.
  func eval(_ context: EvalContext) throws {
    guard output.elementCount > 0 else { return }
    guard var prepared else { throw KernelError.invalid("DEPTHWISE_CONV_2D was not prepared") }
    if !GeneratedFloatKernels.areAllowed { prepared.kernels = nil }
    let filterValues = copiedFilter ?? UnsafePointer(filter.pointer(as: Float.self))
    let biasValues = copiedBias ?? bias.map { UnsafePointer($0.pointer(as: Float.self)) }
    FloatDepthwiseConvolution.run(
      prepared, input: input.pointer(as: Float.self), filter: filterValues, bias: biasValues, activation: activation,
      output: output.pointer(as: Float.self), threadCount: context.threadCount, scratch: context.scratch)
  }
}
