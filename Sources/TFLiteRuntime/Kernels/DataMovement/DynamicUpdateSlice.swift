// DYNAMIC_UPDATE_SLICE (XLA semantics, as TFLite runs it): the output is the operand with the
// block `update` written at `start_indices` (int32 or int64, one per axis). Each start is clamped
// to [0, operand extent − update extent] so the block always fits; the update may not be larger
// than the operand on any axis. Any fixed-size element type.
import TFLiteLinearAlgebra


/// DYNAMIC_UPDATE_SLICE of any movable element type.
final class DynamicUpdateSliceKernel: Kernel {
  private static let opName = "DYNAMIC_UPDATE_SLICE"
  private let operands: MovableOperands
  private let update: RuntimeTensor
  private let startIndices: RuntimeTensor

  init(node: Node) throws {
    operands = try MovableOperands(node, inputs: 3, op: Self.opName)
    update = try node.input(1)
    startIndices = try node.input(2)
    try requireSameType([operands.input, update], op: Self.opName)
    guard startIndices.type == .int32 || startIndices.type == .int64 else {
      throw KernelError.unsupported("\(Self.opName) with \(startIndices.type.name) start indices")
    }
  }

  func prepare(_ context: inout PrepareContext) throws {
    let shape = operands.input.shape
    guard startIndices.shape == [shape.count] else {
      throw KernelError.invalid("\(Self.opName): start indices \(startIndices.shape) for an operand of rank \(shape.count)")
    }
    guard update.shape.count == shape.count, zip(update.shape, shape).allSatisfy({ $0 <= $1 }) else {
      throw KernelError.invalid("\(Self.opName): update \(update.shape) does not fit in operand \(shape)")
    }
    operands.output.shape = shape
  }

  /// The clamped start of the block on `axis`.
  private func start(_ indices: UnsafeRawPointer, axis: Int) -> Int {
    let requested =
      startIndices.type == .int32
      ? Int64(indices.load(fromByteOffset: axis * 4, as: Int32.self))
      : indices.load(fromByteOffset: axis * 8, as: Int64.self)
    let limit = Int64(operands.input.shape[axis] - update.shape[axis])
    return Int(min(max(0, requested), limit))
  }

  func eval(_ context: EvalContext) throws {
    let (source, destination) = try evalPointers(operands.input, operands.output, op: Self.opName)
    let indices = UnsafeRawPointer(try tensorData(startIndices))
    let elementSize = operands.elementSize
    if source != UnsafeRawPointer(destination) {
      copyMemoryInThrowingCode(to: destination, from: source, byteCount: operands.output.byteCount)
    }
    guard update.elementCount > 0 else { return }
    let blockData = UnsafeRawPointer(try tensorData(update))
    let shape = operands.input.shape
    let rank = shape.count
    guard rank > 0 else {
      copyMemoryInThrowingCode(to: destination, from: blockData, byteCount: elementSize)
      return
    }
    // One innermost row of the update per step: its output offset from its coordinates.
    let rowLength = update.shape[rank - 1]
    let rowBytes = rowLength * elementSize
    for row in 0..<(update.elementCount / rowLength) {
      var remaining = row
      var offset = start(indices, axis: rank - 1)
      var axisStride = shape[rank - 1]
      for axis in stride(from: rank - 2, through: 0, by: -1) {
        let coordinate = remaining % update.shape[axis]
        remaining /= update.shape[axis]
        offset += (coordinate + start(indices, axis: axis)) * axisStride
        axisStride *= shape[axis]
      }
      copyMemoryInThrowingCode(
        to: destination + offset * elementSize, from: blockData + row * rowBytes, byteCount: rowBytes)
    }
  }
}
