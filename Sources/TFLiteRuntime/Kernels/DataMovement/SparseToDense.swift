import TFLiteFormat
import TFLiteLinearAlgebra

// SPARSE_TO_DENSE: a tensor of `output_shape` (int32 or int64 values) filled with the scalar
// `default_value`, then each index of `indices` set to its value. Indices are one point per entry
// of a 0-D / 1-D tensor (a 1-D output) or one row per point of a 2-D tensor [n, rank]; `values`
// holds one value per point or a single value for all. Types as in TFLite: float32, int32, int64,
// int8, uint8 values; int32 or int64 indices. An index outside the output is an error.

/// SPARSE_TO_DENSE.
final class SparseToDenseKernel: Kernel {
  private static let opName = "SPARSE_TO_DENSE"
  private let indices: RuntimeTensor
  private let outputShape: RuntimeTensor
  private let values: RuntimeTensor
  private let defaultValue: RuntimeTensor
  private let output: RuntimeTensor

  init(node: Node) throws {
    try node.expect(inputs: 4, outputs: 1)
    indices = try node.input(0)
    outputShape = try node.input(1)
    values = try node.input(2)
    defaultValue = try node.input(3)
    output = try node.output(0)
    _ = try commonElementType(
      [values, defaultValue, output], allowed: [.float32, .int32, .int64, .int8, .uint8], operatorName: Self.opName)
    guard [.int32, .int64].contains(indices.type), [.int32, .int64].contains(outputShape.type) else {
      throw KernelError.unsupported("\(Self.opName) with \(indices.type.name) indices and \(outputShape.type.name) shape")
    }
  }

  /// Number of points and the rank each index addresses.
  private var points: (count: Int, rank: Int) {
    indices.shape.count == 2 ? (indices.shape[0], indices.shape[1]) : (indices.elementCount, 1)
  }

  /// Element `position` of an int32 or int64 tensor.
  private func integer(_ tensor: RuntimeTensor, _ data: UnsafeRawPointer, _ position: Int) -> Int64 {
    tensor.type == .int32
      ? Int64(data.load(fromByteOffset: position * 4, as: Int32.self)) : data.load(fromByteOffset: position * 8, as: Int64.self)
  }

  func prepare(_ context: inout PrepareContext) throws {
    guard indices.shape.count < 3, outputShape.shape.count == 1, values.shape.count < 2, defaultValue.elementCount == 1
    else {
      throw KernelError.invalid(
        "\(Self.opName): indices \(indices.shape), output_shape \(outputShape.shape), values \(values.shape), default \(defaultValue.shape)")
    }
    let (count, rank) = points
    guard rank == outputShape.elementCount, values.shape.isEmpty || values.elementCount == count else {
      throw KernelError.invalid(
        "\(Self.opName): \(count) points of rank \(rank) with values \(values.shape) for an output of rank \(outputShape.elementCount)")
    }
    guard outputShape.hasValuesForPrepare, let shapeData = outputShape.data else {
      throw KernelError.needsInputValues("\(Self.opName) output_shape is computed at run time")
    }
    let shape = try (0..<outputShape.elementCount).map { axis in
      let extent = integer(outputShape, shapeData, axis)
      guard extent >= 0, extent <= Int64(Int32.max) else { throw KernelError.invalid("\(Self.opName): extent \(extent)") }
      return Int(extent)
    }
    _ = try checkedElementCount(shape, op: Self.opName)
    output.shape = shape
  }

  func eval(_ context: EvalContext) throws {
    let (source, destination) = try evalPointers(values, output, op: Self.opName)
    let indexData = UnsafeRawPointer(try tensorData(indices))
    let fill = UnsafeRawPointer(try tensorData(defaultValue))
    let size = output.type.byteCount
    fillElements(destination, count: output.elementCount, value: fill, elementSize: size)
    let (count, rank) = points
    let shape = output.shape
    for point in 0..<count {
      var offset = 0
      for axis in 0..<rank {
        let coordinate = integer(indices, indexData, point * rank + axis)
        guard coordinate >= 0, coordinate < Int64(shape[axis]) else {
          throw KernelError.invalid("\(Self.opName): index \(coordinate) of point \(point) is outside extent \(shape[axis])")
        }
        offset = offset * shape[axis] + Int(coordinate)
      }
      let from = values.shape.isEmpty ? 0 : point
      (destination + offset * size).copyMemory(from: source + from * size, byteCount: size)
    }
  }
}
