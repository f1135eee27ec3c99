// The elementwise kernels' routes onto generated code. Float ADD, SUB and MUL
// (FloatBinaryKernelGenerator.swift): `GeneratedFloatBinaryRows` runs a broadcast layout of at most
// two collapsed dimensions as kernel rows (the same bits as the Swift driver). The 8-bit ones
// (ElementwiseKernelGenerator.swift):
// - `ByteTable`: an 8-bit to 8-bit function's 256 outputs by input bit pattern, mapped in whole
//   64-byte blocks by the generated look-up where it runs, byte by byte in Swift otherwise and for
//   the last bytes. Same bytes either way: both read the one table.
// - `GeneratedBinaryPlan`: ADD, SUB and MUL on the generated kernels, for broadcast layouts where
//   each operand is a stream (element i of the output reads its element i) or repeats with a
//   period (element i mod p: a per-channel [..., C] operand, or a scalar). A repeating operand is
//   laid out at every invoke as a buffer of the repeated pattern (at least 4 KiB, a few KiB per
//   node), so the kernel only ever reads streams; the last elements of a piece (fewer than 16)
//   run the Swift kernel, which gives the same bytes. An operation large enough to have a table
//   of its outputs for every input pair (`PairTable`) looks its blocks up in that table with the
//   AVX-512 gather kernel instead (same bytes: the table holds the Swift function's outputs).

import TFLiteLinearAlgebra

/// The 256 outputs of an 8-bit to 8-bit function, entry i for the input byte whose bit pattern is
/// i, in 64-byte-aligned memory the generated look-up reads.
final class ByteTable: @unchecked Sendable {
  // @unchecked Sendable: written only in `init`.

  /// The entries.
  let entries: UnsafeMutablePointer<UInt8>

  /// The table whose entry i is `output(i)`.
  init(_ output: (UInt8) -> UInt8) {
    entries = UnsafeMutableRawPointer.allocate(byteCount: 256, alignment: 64).bindMemory(to: UInt8.self, capacity: 256)
    for pattern in 0...255 { entries[pattern] = output(UInt8(pattern)) }
  }

  deinit { entries.deallocate() }

  /// Maps bytes `range` of `input` into the same bytes of `output` (which may be `input`), whole
  /// 64-byte blocks on `generated` when given.
  func map(input: UnsafeRawPointer, output: UnsafeMutableRawPointer, range: Range<Int>, generated: GeneratedByteTableKernel?) {
    var start = range.lowerBound
    if let generated {
      let blocks = range.count / ByteTableKernelGenerator.blockBytes
      generated.run(input: input + start, output: output + start, blockCount: blocks, table: UnsafeRawPointer(entries))
      start += blocks * ByteTableKernelGenerator.blockBytes
    }
    let source = input.assumingMemoryBound(to: UInt8.self)
    let destination = output.assumingMemoryBound(to: UInt8.self)
    for index in start..<range.upperBound { destination[index] = entries[Int(source[index])] }
  }
}

/// ADD, SUB or MUL of a broadcast layout on the generated kernels (see the file's description).
final class GeneratedBinaryPlan {
  /// How the kernel reads one operand.
  private struct Operand {
    /// The repeating period in elements, nil for a stream.
    let period: Int?
    /// The repeated pattern laid out (`bufferLength` bytes), for a repeating operand.
    let buffer: UnsafeMutableRawPointer?
    /// Bytes of `buffer`: at least the period plus 15, so 16 bytes can be read from any phase.
    let bufferLength: Int

    /// The stream or repeating operand whose element strides in `layout` are `strides`; nil for
    /// other patterns (a stride-0 inner dimension under a walked outer one).
    init?(strides: SIMD8<Int>, layout: BroadcastLayout) {
      var period = 1
      var dimension = layout.rank - 1
      while dimension >= 0 && strides[dimension] == period {
        period *= layout.dimensions[dimension]
        dimension -= 1
      }
      guard (0..<max(dimension + 1, 0)).allSatisfy({ strides[$0] == 0 }) else { return nil }
      if dimension < 0 {
        self.period = nil
        buffer = nil
        bufferLength = 0
        return
      }
      self.period = period
      bufferLength = max(period + 15, min(4096, layout.elementCount + 15))
      buffer = .allocate(byteCount: bufferLength, alignment: 64)
    }

    /// Lays out the repeated pattern from `data` (the operand's `period` elements).
    func expand(_ data: UnsafeRawPointer) {
      guard let buffer, let period else { return }
      var filled = 0
      while filled < bufferLength {
        let count = min(period, bufferLength - filled)
        (buffer + filled).copyMemory(from: data, byteCount: count)
        filled += count
      }
    }

    /// Where the kernel reads output element `index`'s operand and how many contiguous elements
    /// follow there.
    func position(of index: Int, in data: UnsafeRawPointer) -> (UnsafeRawPointer, available: Int) {
      guard let buffer, let period else { return (data + index, .max) }
      let phase = index % period
      return (UnsafeRawPointer(buffer + phase), bufferLength - phase)
    }
  }

  private let constants: QuantizedBinaryConstants
  private let outputType: RequantizedOutput
  private let lhs: Operand
  private let rhs: Operand
  /// The outputs of every input pair, looked up by the gather kernel where it runs.
  private let pairTable: PairTable?

  /// The plan for `layout` (operand 0 the left input; both inputs and the output of `outputType`),
  /// looking its outputs up in `pairTable` where the gather kernel runs; nil when an operand is
  /// neither a stream nor repeating.
  init?(
    layout: BroadcastLayout, constants: QuantizedBinaryConstants, outputType: RequantizedOutput,
    pairTable: PairTable? = nil
  ) {
    guard let lhs = Operand(strides: layout.strides0, layout: layout),
      let rhs = Operand(strides: layout.strides1, layout: layout)
    else { return nil }
    self.constants = constants
    self.outputType = outputType
    self.lhs = lhs
    self.rhs = rhs
    self.pairTable = pairTable
  }

  /// True when `lookUp` serves this plan from its pair table.
  func looksUp(with lookUp: GeneratedPairTableKernels?) -> Bool { lookUp != nil && pairTable != nil }

  /// Reserves the kernel `run` calls on `kernels` unless it looks its outputs up with `lookUp`
  /// (mapped with the other nodes' kernels at the end of `allocateTensors()`).
  func reserveKernel(on kernels: GeneratedQuantizedBinaryKernels, lookUp: GeneratedPairTableKernels?) {
    if !looksUp(with: lookUp) { kernels.reserve(constants.operation, output: outputType) }
  }

  deinit {
    lhs.buffer?.deallocate()
    rhs.buffer?.deallocate()
  }

  /// Lays out the repeating operands from the inputs' current values (once per invoke, before
  /// the work is split).
  func expandOperands(lhs lhsData: UnsafeRawPointer, rhs rhsData: UnsafeRawPointer) {
    lhs.expand(lhsData)
    rhs.expand(rhsData)
  }

  /// Computes the whole 16-element blocks of output elements `range` on `kernels`, or by looking
  /// them up in the pair table on `lookUp` when both are there; returns the first element it left
  /// (fewer than 16 before `range.upperBound`, or `range.lowerBound` when the kernel could not be
  /// mapped: the caller computes the rest in Swift).
  func run(
    _ kernels: GeneratedQuantizedBinaryKernels, lookUp: GeneratedPairTableKernels? = nil, lhs lhsData: UnsafeRawPointer,
    rhs rhsData: UnsafeRawPointer, output: UnsafeMutableRawPointer, range: Range<Int>
  ) -> Int {
    let block = QuantizedBinaryKernelGenerator.blockElements
    var index = range.lowerBound
    while range.upperBound - index >= block {
      let (left, leftAvailable) = lhs.position(of: index, in: lhsData)
      let (right, rightAvailable) = rhs.position(of: index, in: rhsData)
      let blocks = min(range.upperBound - index, leftAvailable, rightAvailable) / block
      if let lookUp, let pairTable {
        lookUp.run(
          inputs: outputType, lhs: left, rhs: right, output: output + index, blockCount: blocks, table: pairTable.origin)
      } else if !kernels.run(
        constants, output: outputType, lhs: left, rhs: right, output: output + index, blockCount: blocks)
      {
        return index
      }
      index += blocks * block
    }
    return index
  }
}

/// A float broadcast layout as the rows of the generated float binary kernels: at most two
/// collapsed dimensions, the innermost one a row along which each operand streams (stride 1) or
/// repeats one value (stride 0), and the outer one stepping each operand by its own stride (0 for a
/// per-channel operand).
struct GeneratedFloatBinaryRows {
  /// Floats per row.
  private let rowLength: Int
  /// Each operand's float stride along a row: 1 streamed, 0 repeated.
  private let lhsStep: Int, rhsStep: Int
  /// Each operand's float stride from row to row.
  private let lhsRowStride: Int, rhsRowStride: Int

  /// Fewest elements worth a kernel call: below it the Swift driver's loop costs less than reading
  /// the generated kernels and calling one (`tflite profile`, default build: a 512-float ADD
  /// 0.27 µs in Swift, 0.32 µs generated; 2048 floats about equal; 8192 floats 1.37 → 1.18 µs).
  static let minimumElements = 1024

  /// The rows of `layout`; nil for layouts of more than two collapsed dimensions or fewer than
  /// `minimumElements` elements.
  init?(_ layout: BroadcastLayout) {
    guard layout.rank <= 2, layout.elementCount >= Self.minimumElements else { return nil }
    let inner = layout.rank - 1
    rowLength = layout.dimensions[inner]
    lhsStep = layout.strides0[inner]
    rhsStep = layout.strides1[inner]
    lhsRowStride = inner > 0 ? layout.strides0[0] : 0
    rhsRowStride = inner > 0 ? layout.strides1[0] : 0
  }

  /// The kernel variant computing `operation` clamped to `clamp` on these rows.
  private func variant(_ operation: FloatBinaryKernelGenerator.Operation, clamp: ActivationRange<Float>)
    -> FloatBinaryKernelGenerator.Variant
  {
    let unbounded = Float.unboundedRange
    return FloatBinaryKernelGenerator.Variant(
      operation: operation, lhsRepeats: lhsStep == 0, rhsRepeats: rhsStep == 0,
      clamps: clamp.lower != unbounded.lower || clamp.upper != unbounded.upper)
  }

  /// Reserves on `kernels` the kernel `run` calls for `operation` clamped to `clamp`.
  func reserveKernel(
    _ operation: FloatBinaryKernelGenerator.Operation, clamp: ActivationRange<Float>, on kernels: GeneratedFloatBinaryKernels
  ) {
    kernels.reserve(variant(operation, clamp: clamp))
  }

  /// Computes output elements `range` of `operation`, clamped to `clamp`, on `kernels`: a partial
  /// first row, the whole rows and a partial last row, one kernel call each. False, with nothing
  /// written, when the kernel could not be mapped.
  func run(
    _ operation: FloatBinaryKernelGenerator.Operation, clamp: ActivationRange<Float>, on kernels: GeneratedFloatBinaryKernels,
    lhs: UnsafePointer<Float>, rhs: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>, range: Range<Int>
  ) -> Bool {
    guard rowLength > 0 else { return true }
    let variant = variant(operation, clamp: clamp)
    var start = range.lowerBound
    /// Runs `rows` rows of `length` outputs from `start` (a whole row each when `rows` > 1).
    func call(rows: Int, length: Int) -> Bool {
      let (row, column) = start.quotientAndRemainder(dividingBy: rowLength)
      guard
        kernels.run(
          variant, lhs: lhs + row * lhsRowStride + column * lhsStep, lhsRowStride: lhsRowStride,
          rhs: rhs + row * rhsRowStride + column * rhsStep, rhsRowStride: rhsRowStride, output: output + start,
          outputRowStride: rowLength, rowCount: rows, rowLength: length, lower: clamp.lower, upper: clamp.upper)
      else { return false }
      start += rows * length
      return true
    }
    // Every call runs the same kernel: if the first one ran, so do the others.
    if start % rowLength != 0 && start < range.upperBound {
      guard call(rows: 1, length: min(rowLength - start % rowLength, range.upperBound - start)) else { return false }
    }
    let wholeRows = (range.upperBound - start) / rowLength
    if wholeRows > 0 {
      guard call(rows: wholeRows, length: rowLength) else { return false }
    }
    if start < range.upperBound {
      guard call(rows: 1, length: range.upperBound - start) else { return false }
    }
    return true
  }
}
