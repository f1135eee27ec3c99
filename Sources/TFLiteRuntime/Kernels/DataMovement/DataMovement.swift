// Type-agnostic copy primitives shared by the shape and data-movement kernels.
//
// Every routine here moves whole elements of 1, 2, 4 or 8 bytes without looking at their
// values, so one implementation serves float32, int8, uint8, int16, int32, int64, bool, ...
// Plans are built in `prepare` (they may allocate); the copy functions only walk pointers.

/// Reads element `index` of width `T` from raw memory without alignment or binding assumptions.
@inline(__always)
func loadElement<T: FixedWidthInteger>(_ base: UnsafeRawPointer, _ index: Int, as type: T.Type) -> T {
  base.loadUnaligned(fromByteOffset: index &* MemoryLayout<T>.stride, as: T.self)
}

/// Writes element `index` of width `T` into raw memory.
@inline(__always)
func storeElement<T: FixedWidthInteger>(_ value: T, _ base: UnsafeMutableRawPointer, _ index: Int) {
  base.storeBytes(of: value, toByteOffset: index &* MemoryLayout<T>.stride, as: T.self)
}

/// Checks that an element size is one the type-agnostic routines can move (1, 2, 4 or 8 bytes).
func validateMovableElementSize(_ byteCount: Int, op: String) throws {
  guard [1, 2, 4, 8].contains(byteCount) else {
    throw KernelError.unsupported("\(op): elements of \(byteCount) bytes cannot be moved")
  }
}

/// Multiplies non-negative dimensions into an element count that fits in Int32, throwing instead
/// of trapping when a dimension is negative or the product is too large.
func checkedElementCount(_ dimensions: [Int], op: String) throws -> Int {
  if let negative = dimensions.first(where: { $0 < 0 }) {
    throw KernelError.invalid("\(op): negative dimension \(negative) in \(dimensions)")
  }
  guard let count = checkedProduct(dimensions, limit: Int(Int32.max)) else {
    throw KernelError.invalid("\(op): shape \(dimensions) has too many elements")
  }
  return count
}

/// Adds sizes and margins taken from tensor values, throwing instead of trapping when the sum overflows.
func checkedSum(_ terms: Int..., op: String) throws -> Int {
  var total = 0
  for term in terms {
    let (next, overflow) = total.addingReportingOverflow(term)
    guard !overflow else { throw KernelError.invalid("\(op): \(terms.map(String.init).joined(separator: " + ")) overflows") }
    total = next
  }
  return total
}

/// Row-major strides (in elements) of a dense tensor of the given shape.
func denseStrides(_ shape: [Int]) -> [Int] {
  var strides = [Int](repeating: 1, count: shape.count)
  var running = 1
  for axis in shape.indices.reversed() {
    strides[axis] = running
    running *= shape[axis]
  }
  return strides
}

/// Normalizes a possibly negative axis against `rank` (`-1` is the last axis), or throws.
func normalizedAxis(_ axis: Int, rank: Int, op: String) throws -> Int {
  let resolved = axis < 0 ? axis + rank : axis
  guard resolved >= 0, resolved < rank else {
    throw KernelError.invalid("\(op): axis \(axis) is out of range for rank \(rank)")
  }
  return resolved
}

// MARK: - Runs of elements

/// Fills `count` elements at `destination` with copies of the single element at `value`.
func fillElements(
  _ destination: UnsafeMutableRawPointer, count: Int, value: UnsafeRawPointer, elementSize: Int
) {
  guard count > 0 else { return }
  switch elementSize {
  case 1: fillRun(destination, count: count, with: loadElement(value, 0, as: UInt8.self))
  case 2: fillRun(destination, count: count, with: loadElement(value, 0, as: UInt16.self))
  case 4: fillRun(destination, count: count, with: loadElement(value, 0, as: UInt32.self))
  default: fillRun(destination, count: count, with: loadElement(value, 0, as: UInt64.self))
  }
}

@inline(__always)
private func fillRun<T: FixedWidthInteger>(_ destination: UnsafeMutableRawPointer, count: Int, with value: T) {
  for index in 0..<count { storeElement(value, destination, index) }
}

/// Copies `count` elements taken every `stride` elements (any sign, zero repeats one element)
/// from `source` into consecutive elements at `destination`.
func gatherElements(
  _ destination: UnsafeMutableRawPointer, from source: UnsafeRawPointer, count: Int, stride: Int,
  elementSize: Int
) {
  if stride == 1 {
    destination.copyMemory(from: source, byteCount: count &* elementSize)
    return
  }
  if stride == 0 {
    fillElements(destination, count: count, value: source, elementSize: elementSize)
    return
  }
  switch elementSize {
  case 1: gatherRun(destination, source, count, stride, UInt8.self)
  case 2: gatherRun(destination, source, count, stride, UInt16.self)
  case 4: gatherRun(destination, source, count, stride, UInt32.self)
  default: gatherRun(destination, source, count, stride, UInt64.self)
  }
}

@inline(__always)
private func gatherRun<T: FixedWidthInteger>(
  _ destination: UnsafeMutableRawPointer, _ source: UnsafeRawPointer, _ count: Int, _ stride: Int,
  _ type: T.Type
) {
  for index in 0..<count {
    storeElement(loadElement(source, index &* stride, as: T.self), destination, index)
  }
}

/// Writes the transpose of a `rows × columns` tile: `destination[r * columns + c] = source[r + c * sourceStride]`.
/// Walks 16×16 blocks so both sides stay in cache.
func transposeTile(
  _ destination: UnsafeMutableRawPointer, from source: UnsafeRawPointer, rows: Int, columns: Int,
  sourceStride: Int, elementSize: Int
) {
  switch elementSize {
  case 1: transposeTile(destination, source, rows, columns, sourceStride, UInt8.self)
  case 2: transposeTile(destination, source, rows, columns, sourceStride, UInt16.self)
  case 4: transposeTile(destination, source, rows, columns, sourceStride, UInt32.self)
  default: transposeTile(destination, source, rows, columns, sourceStride, UInt64.self)
  }
}

@inline(__always)
private func transposeTile<T: FixedWidthInteger>(
  _ destination: UnsafeMutableRawPointer, _ source: UnsafeRawPointer, _ rows: Int, _ columns: Int,
  _ sourceStride: Int, _ type: T.Type
) {
  let block = 16
  var rowStart = 0
  while rowStart < rows {
    let rowEnd = min(rowStart &+ block, rows)
    var columnStart = 0
    while columnStart < columns {
      let columnEnd = min(columnStart &+ block, columns)
      for row in rowStart..<rowEnd {
        for column in columnStart..<columnEnd {
          let value = loadElement(source, row &+ column &* sourceStride, as: T.self)
          storeElement(value, destination, row &* columns &+ column)
        }
      }
      columnStart = columnEnd
    }
    rowStart = rowEnd
  }
}

/// Copies `count` blocks of `blockBytes` bytes, stepping the source and destination by their own strides (bytes).
/// Concatenation, split, pack, unpack and gather are all this loop with different strides.
func copyBlocks(
  count: Int, blockBytes: Int, from source: UnsafeRawPointer, sourceStride: Int,
  to destination: UnsafeMutableRawPointer, destinationStride: Int
) {
  guard blockBytes > 0 else { return }
  guard blockBytes > shortRunBytes else {
    copyRuns(count, bytes: blockBytes, from: source, stride: sourceStride, to: destination, stride: destinationStride, flip: 0)
    return
  }
  for block in 0..<count {
    (destination + block &* destinationStride).copyMemory(from: source + block &* sourceStride, byteCount: blockBytes)
  }
}

// MARK: - Strided views

/// Where each element of a dense row-major output comes from in a source buffer:
/// per-dimension extents and signed source strides (in elements) from a start offset.
///
/// TRANSPOSE, SLICE, STRIDED_SLICE, TILE, BROADCAST_TO, DEPTH_TO_SPACE and SPACE_TO_DEPTH
/// all reduce to one such view.
struct StridedLayout: Equatable {
  /// Output extent of each dimension.
  var extents: [Int]
  /// Source step (elements) per unit of each dimension; 0 repeats, negative walks backwards.
  var strides: [Int]
  /// Source element where output element 0 comes from.
  var offset: Int

  /// Number of output elements.
  var elementCount: Int { extents.reduce(1, *) }

  /// The same element order with size-1 dimensions dropped and neighbours fused wherever the
  /// outer stride is the inner stride times the inner extent (so contiguous runs get long).
  func simplified() -> StridedLayout {
    if extents.contains(0) { return StridedLayout(extents: [0], strides: [1], offset: offset) }
    var fusedExtents: [Int] = []
    var fusedStrides: [Int] = []
    for axis in extents.indices where extents[axis] != 1 {
      if let lastExtent = fusedExtents.last, let lastStride = fusedStrides.last,
        lastStride == strides[axis] * extents[axis]
      {
        fusedExtents[fusedExtents.count - 1] = lastExtent * extents[axis]
        fusedStrides[fusedStrides.count - 1] = strides[axis]
      } else {
        fusedExtents.append(extents[axis])
        fusedStrides.append(strides[axis])
      }
    }
    return StridedLayout(extents: fusedExtents, strides: fusedStrides, offset: offset)
  }

}

/// Copies a `StridedLayout` view of a source into a dense destination, for one element size.
/// Innermost contiguous runs become memory copies, zero strides become fills, and a view whose
/// second-to-last dimension is the contiguous one (the NHWC↔NCHW pattern) is copied by cache blocks.
struct StridedCopy {
  /// The simplified view this copy walks.
  let layout: StridedLayout
  /// Bytes per element (1, 2, 4 or 8).
  let elementSize: Int

  /// Plans the copy of `layout` (simplified here) for elements of `elementSize` bytes.
  init(_ layout: StridedLayout, elementSize: Int) {
    self.layout = layout.simplified()
    self.elementSize = elementSize
  }

  /// Copies every element of the view from `source` into consecutive elements at `destination`.
  func run(from source: UnsafeRawPointer, to destination: UnsafeMutableRawPointer) {
    let start = source + layout.offset &* elementSize
    let rank = layout.extents.count
    if rank == 0 {
      destination.copyMemory(from: start, byteCount: elementSize)
      return
    }
    if layout.extents[0] == 0 { return }
    layout.extents.withUnsafeBufferPointer { extents in
      layout.strides.withUnsafeBufferPointer { strides in
        _ = copyLevel(0, from: start, to: destination, extents: extents, strides: strides)
      }
    }
  }

  /// Copies dimension `level` and everything inside it; returns the destination position after it.
  private func copyLevel(
    _ level: Int, from source: UnsafeRawPointer, to destination: UnsafeMutableRawPointer,
    extents: UnsafeBufferPointer<Int>, strides: UnsafeBufferPointer<Int>
  ) -> UnsafeMutableRawPointer {
    let rank = extents.count
    let extent = extents[level]
    let stride = strides[level]
    if level == rank - 1 {
      gatherElements(destination, from: source, count: extent, stride: stride, elementSize: elementSize)
      return destination + extent &* elementSize
    }
    if level == rank - 2 && stride == 1 && strides[rank - 1] != 0 {
      let columns = extents[rank - 1]
      transposeTile(
        destination, from: source, rows: extent, columns: columns, sourceStride: strides[rank - 1],
        elementSize: elementSize)
      return destination + extent &* columns &* elementSize
    }
    var output = destination
    let stepBytes = stride &* elementSize
    for index in 0..<extent {
      output = copyLevel(level + 1, from: source + index &* stepBytes, to: output, extents: extents, strides: strides)
    }
    return output
  }
}

// MARK: - Kernel plumbing shared by the data-movement kernels

/// Bytes per element of `tensor`, which the type-agnostic routines must be able to move.
func movableElementSize(_ tensor: RuntimeTensor, op: String) throws -> Int {
  // Packed int4 data, strings and resource/variant handles are not plain fixed-size values.
  guard ![.int4, .string, .resource, .variant].contains(tensor.type) else {
    throw KernelError.unsupported("\(op): \(tensor.type.name) tensors")
  }
  try validateMovableElementSize(tensor.type.byteCount, op: op)
  return tensor.type.byteCount
}

/// Throws unless every tensor has the type of the first.
func requireSameType(_ tensors: [RuntimeTensor], op: String) throws {
  guard let first = tensors.first else { return }
  for tensor in tensors where tensor.type != first.type {
    throw KernelError.invalid("\(op): \(tensor.summary) does not have the type \(first.type.name) of \(first.summary)")
  }
}

/// Throws unless every tensor has the quantization of the first: data-movement kernels copy
/// quantized values unchanged, which is only right when scales and zero points agree.
func requireSameQuantization(_ tensors: [RuntimeTensor], op: String) throws {
  guard let first = tensors.first else { return }
  for tensor in tensors where tensor.quantization != first.quantization {
    throw KernelError.unsupported("\(op): rescaling between different quantization parameters (\(tensor.summary))")
  }
}

/// The first input and the single output of a data-movement node, checked to share a movable element type.
struct MovableOperands {
  /// Input 0.
  let input: RuntimeTensor
  /// Output 0.
  let output: RuntimeTensor
  /// Bytes per element of both.
  let elementSize: Int

  /// Checks the operand counts (`inputs` up to `maxInputs` inputs, one output) and the types.
  init(_ node: Node, inputs: Int, maxInputs: Int? = nil, op: String) throws {
    try node.expect(inputs: inputs, maxInputs: maxInputs, outputs: 1)
    input = try node.input(0)
    output = try node.output(0)
    try requireSameType([input, output], op: op)
    elementSize = try movableElementSize(input, op: op)
  }
}

/// The data pointers of a tensor pair checked at eval time.
func evalPointers(_ input: RuntimeTensor, _ output: RuntimeTensor, op: String) throws
  -> (UnsafeRawPointer, UnsafeMutableRawPointer)
{
  guard let source = input.data, let destination = output.data else {
    throw KernelError.invalid("\(op): tensors have no memory; allocateTensors() must run first")
  }
  return (UnsafeRawPointer(source), destination)
}

/// A kernel whose output is its first input's bytes unchanged (RESHAPE, SQUEEZE, EXPAND_DIMS).
protocol ByteCopyKernel: Kernel {
  /// Operator name for errors.
  static var opName: String { get }
  /// The tensor whose bytes are copied.
  var input: RuntimeTensor { get }
  /// The tensor that receives them.
  var output: RuntimeTensor { get }
}

extension ByteCopyKernel {
  /// Copies the input's bytes unless the runtime made both tensors share memory.
  func eval(_ context: EvalContext) throws {
    let (source, destination) = try evalPointers(input, output, op: Self.opName)
    if source != UnsafeRawPointer(destination) {
      destination.copyMemory(from: source, byteCount: min(input.byteCount, output.byteCount))
    }
  }
}

/// A kernel whose output is a StridedLayout view of its first input, planned in `prepare`.
protocol ViewCopyKernel: Kernel {
  /// Operator name for errors.
  var op: String { get }
  /// The tensor the view reads.
  var input: RuntimeTensor { get }
  /// The tensor it fills.
  var output: RuntimeTensor { get }
  /// The copy planned by the last `prepare`.
  var copy: StridedCopy? { get }
}

extension ViewCopyKernel {
  /// Runs the planned copy.
  func eval(_ context: EvalContext) throws {
    guard let copy else { throw KernelError.invalid("\(op): eval before prepare") }
    let (source, destination) = try evalPointers(input, output, op: op)
    copy.run(from: source, to: destination)
  }
}

/// A kernel whose output is a view of its first input fixed by constant integer operands:
/// TRANSPOSE (permutation), TILE (multiples), BROADCAST_TO (shape) and SLICE (begin, size).
final class ConstantViewKernel: ViewCopyKernel {
  /// Builds the view and the output shape from the input shape and the operands' values.
  typealias ViewFunction = (_ inputShape: [Int], _ operands: [[Int]]) throws -> (StridedLayout, [Int])

  let op: String
  let input: RuntimeTensor
  let output: RuntimeTensor
  /// The constant operands after the input, with their names for errors.
  private let parameters: [(name: String, tensor: RuntimeTensor)]
  private let view: ViewFunction
  private let elementSize: Int
  private(set) var copy: StridedCopy?

  init(node: Node) throws {
    op = node.opName
    let names: [String]
    switch op {
    case "TRANSPOSE":
      names = ["permutation"]
      view = { shape, values in
        let axes = try transposePermutation(values[0], rank: shape.count)
        return (.transpose(inputShape: shape, permutation: axes), axes.map { shape[$0] })
      }
    case "TILE":
      names = ["multiples"]
      view = { try tileLayout(inputShape: $0, multiples: $1[0]) }
    case "BROADCAST_TO":
      names = ["shape"]
      view = { (try broadcastLayout(inputShape: $0, outputShape: $1[0], op: "BROADCAST_TO"), $1[0]) }
    case "SLICE":
      names = ["begin", "size"]
      view = { shape, values in
        let layout = try sliceLayout(inputShape: shape, begin: values[0], size: values[1])
        return (layout, layout.extents)
      }
    default:
      throw KernelError.unsupported("\(op) is not a constant view")
    }
    let operands = try MovableOperands(node, inputs: names.count + 1, op: op)
    (input, output, elementSize) = (operands.input, operands.output, operands.elementSize)
    parameters = try names.enumerated().map { ($1, try node.input($0 + 1)) }
  }

  func prepare(_ context: inout PrepareContext) throws {
    let values = try parameters.map { try constantIntegers($0.tensor, op: op, operand: $0.name) }
    let (layout, shape) = try view(input.shape, values)
    output.shape = shape
    copy = StridedCopy(layout, elementSize: elementSize)
  }
}
