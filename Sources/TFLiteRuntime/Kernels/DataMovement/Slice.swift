// SLICE and STRIDED_SLICE: both become a StridedLayout over the input, computed at prepare time.

import TFLiteFormat
import TFLiteLinearAlgebra

/// The view SLICE copies: `size[i]` elements from `begin[i]` on each axis (`size` −1 means "to the end").
func sliceLayout(inputShape: [Int], begin: [Int], size: [Int]) throws -> StridedLayout {
  let rank = inputShape.count
  guard begin.count == rank, size.count == rank else {
    throw KernelError.invalid("SLICE: begin (\(begin.count)) and size (\(size.count)) must have one value per input axis (\(rank))")
  }
  let strides = denseStrides(inputShape)
  var extents: [Int] = []
  var offset = 0
  for axis in 0..<rank {
    let start = begin[axis]
    guard start >= 0, start <= inputShape[axis] else {
      throw KernelError.invalid("SLICE: begin \(start) is outside axis \(axis) of \(inputShape)")
    }
    let count = size[axis] == -1 ? inputShape[axis] - start : size[axis]
    guard count >= 0, count <= inputShape[axis] - start else {
      throw KernelError.invalid("SLICE: size \(size[axis]) from \(start) does not fit axis \(axis) of \(inputShape)")
    }
    extents.append(count)
    offset += start * strides[axis]
  }
  return StridedLayout(extents: extents, strides: strides, offset: offset)
}

/// A STRIDED_SLICE specification as stored in the model: per-entry begin/end/stride and the
/// five bit masks (bit `i` refers to entry `i`), plus the `offset` flag of newer versions
/// (then `end` holds sizes relative to `begin`).
struct StridedSliceSpec {
  /// Start index per entry (negative counts from the end).
  var begin: [Int]
  /// End index (exclusive) per entry, or the size when `offset` is set.
  var end: [Int]
  /// Step per entry (non-zero; negative walks backwards).
  var strides: [Int]
  /// Entries whose begin is ignored (the full range in that direction).
  var beginMask = 0
  /// Entries whose end is ignored (the full range in that direction).
  var endMask = 0
  /// The entry that stands for "all remaining axes" (at most one bit).
  var ellipsisMask = 0
  /// Entries that insert a new axis of size 1.
  var newAxisMask = 0
  /// Entries that take a single index and drop the axis from the output.
  var shrinkAxisMask = 0
  /// True when `end` holds sizes counted from `begin`.
  var offset = false

  /// The element view of an input of `inputShape` and the output shape (without shrunk axes).
  func resolve(inputShape: [Int]) throws -> (layout: StridedLayout, outputShape: [Int]) {
    let count = begin.count
    guard end.count == count, strides.count == count else {
      throw KernelError.invalid("STRIDED_SLICE: begin, end and strides have \(begin.count), \(end.count), \(strides.count) values")
    }
    guard count <= 31 else { throw KernelError.invalid("STRIDED_SLICE: at most 31 indices are supported, got \(count)") }
    guard ellipsisMask & (ellipsisMask - 1) == 0 else {
      throw KernelError.invalid("STRIDED_SLICE: more than one ellipsis in mask \(ellipsisMask)")
    }
    let axes = try effectiveAxes(inputRank: inputShape.count)
    let inputStrides = denseStrides(inputShape)
    var extents: [Int] = []
    var steps: [Int] = []
    var outputShape: [Int] = []
    var start = 0
    for axis in axes {
      switch axis {
      case .newAxis:
        extents.append(1)
        steps.append(0)
        outputShape.append(1)
      case .full(let inputAxis):
        extents.append(inputShape[inputAxis])
        steps.append(inputStrides[inputAxis])
        outputShape.append(inputShape[inputAxis])
      case .entry(let entry, let inputAxis):
        let range = try self.range(entry: entry, size: inputShape[inputAxis])
        extents.append(range.count)
        steps.append(range.stride * inputStrides[inputAxis])
        if range.count > 0 { start += range.first * inputStrides[inputAxis] }
        if shrinkAxisMask & (1 << entry) == 0 { outputShape.append(range.count) }
      }
    }
    return (StridedLayout(extents: extents, strides: steps, offset: start), outputShape)
  }

  /// What one axis of the expanded (effective) index space stands for.
  private enum EffectiveAxis {
    /// A size-1 axis inserted by `newAxisMask`.
    case newAxis
    /// An input axis taken whole (covered by the ellipsis or past the last entry).
    case full(inputAxis: Int)
    /// An input axis sliced by spec entry `entry`.
    case entry(Int, inputAxis: Int)
  }

  /// Expands the ellipsis and new axes into one description per effective axis.
  private func effectiveAxes(inputRank: Int) throws -> [EffectiveAxis] {
    let count = begin.count
    let ellipsisEntry = (0..<count).first { ellipsisMask & (1 << $0) != 0 }
    let addedAxes = (0..<count).filter { newAxisMask & (1 << $0) != 0 && ellipsisMask & (1 << $0) == 0 }.count
    let effectiveRank = inputRank + addedAxes
    var axes: [EffectiveAxis] = []
    var inputAxis = 0
    var entry = 0
    while entry < count || axes.count < effectiveRank {
      if entry == ellipsisEntry {
        // The ellipsis covers every input axis that the entries after it do not claim.
        let covered = effectiveRank - axes.count - (count - entry - 1)
        guard covered >= 0, inputAxis + covered <= inputRank else { break }
        for _ in 0..<covered {
          axes.append(.full(inputAxis: inputAxis))
          inputAxis += 1
        }
        entry += 1
      } else if entry < count && newAxisMask & (1 << entry) != 0 {
        axes.append(.newAxis)
        entry += 1
      } else if entry < count {
        guard inputAxis < inputRank, axes.count < effectiveRank else { break }
        axes.append(.entry(entry, inputAxis: inputAxis))
        inputAxis += 1
        entry += 1
      } else {
        guard inputAxis < inputRank, axes.count < effectiveRank else { break }
        axes.append(.full(inputAxis: inputAxis))
        inputAxis += 1
      }
    }
    guard entry >= count, inputAxis == inputRank else {
      throw KernelError.invalid(
        "STRIDED_SLICE: \(count) indices (ellipsis \(ellipsisMask), new axes \(newAxisMask)) do not fit an input of rank \(inputRank)")
    }
    return axes
  }

  /// First index, stride and element count of spec entry `entry` on an axis of `size` elements.
  private func range(entry: Int, size: Int) throws -> (first: Int, stride: Int, count: Int) {
    let stride = strides[entry]
    guard stride != 0 else { throw KernelError.invalid("STRIDED_SLICE: stride of index \(entry) is zero") }
    guard abs(stride) <= Int(Int32.max), abs(begin[entry]) <= Int(Int32.max), abs(end[entry]) <= Int(Int32.max) else {
      throw KernelError.invalid("STRIDED_SLICE: index \(entry) holds values outside the int32 range")
    }
    let forward = stride > 0
    func clamped(_ index: Int) -> Int {
      let wrapped = index < 0 ? index + size : index
      return forward ? min(max(wrapped, 0), size) : min(max(wrapped, -1), size - 1)
    }
    var first = clamped(begin[entry])
    if beginMask & (1 << entry) != 0 { first = forward ? 0 : size - 1 }
    if shrinkAxisMask & (1 << entry) != 0 {
      guard first >= 0, first < size else {
        throw KernelError.invalid("STRIDED_SLICE: index \(begin[entry]) is outside an axis of \(size) elements")
      }
      return (first, 1, 1)
    }
    var last = clamped(offset ? first + end[entry] : end[entry])
    if endMask & (1 << entry) != 0 { last = forward ? size : -1 }
    let distance = last - first
    if distance == 0 || (distance < 0) != (stride < 0) { return (first, stride, 0) }
    let count = forward ? (distance - 1) / stride + 1 : (distance + 1) / stride + 1
    return (first, stride, count)
  }
}

// MARK: - Kernels

/// STRIDED_SLICE with constant begin, end and strides, every mask and the `offset` flag.
final class StridedSliceKernel: ViewCopyKernel {
  static let opName = "STRIDED_SLICE"
  let op = opName
  let input: RuntimeTensor
  let output: RuntimeTensor
  private let begin: RuntimeTensor
  private let end: RuntimeTensor
  private let strides: RuntimeTensor
  private let options: StridedSliceOptions
  private let elementSize: Int
  private(set) var copy: StridedCopy?

  init(node: Node) throws {
    let operands = try MovableOperands(node, inputs: 4, op: Self.opName)
    (input, output, elementSize) = (operands.input, operands.output, operands.elementSize)
    begin = try node.input(1)
    end = try node.input(2)
    strides = try node.input(3)
    guard case .stridedSliceOptions(let options) = node.options else {
      throw KernelError.invalid("STRIDED_SLICE: missing options")
    }
    self.options = options
  }

  func prepare(_ context: inout PrepareContext) throws {
    let spec = StridedSliceSpec(
      begin: try constantIntegers(begin, op: Self.opName, operand: "begin"),
      end: try constantIntegers(end, op: Self.opName, operand: "end"),
      strides: try constantIntegers(strides, op: Self.opName, operand: "strides"),
      beginMask: Int(UInt32(bitPattern: options.beginMask)), endMask: Int(UInt32(bitPattern: options.endMask)),
      ellipsisMask: Int(UInt32(bitPattern: options.ellipsisMask)),
      newAxisMask: Int(UInt32(bitPattern: options.newAxisMask)),
      shrinkAxisMask: Int(UInt32(bitPattern: options.shrinkAxisMask)), offset: options.offset)
    let (layout, shape) = try spec.resolve(inputShape: input.shape)
    output.shape = shape
    copy = StridedCopy(layout, elementSize: elementSize)
  }
}
