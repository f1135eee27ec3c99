// MATRIX_SET_DIAG: the input's innermost matrices [m, n] with their main diagonal replaced by the
// rows of `diagonal` [..., min(m, n)]. Any fixed-size element type (quantized values are copied
// unchanged, so input, diagonal and output share quantization).

/// MATRIX_SET_DIAG over any movable element type.
final class MatrixSetDiagKernel: Kernel {
  private static let opName = "MATRIX_SET_DIAG"
  private let operands: MovableOperands
  private let diagonal: RuntimeTensor

  init(node: Node) throws {
    operands = try MovableOperands(node, inputs: 2, op: Self.opName)
    diagonal = try node.input(1)
    try requireSameType([operands.input, diagonal], op: Self.opName)
    try requireSameQuantization([operands.input, diagonal, operands.output], op: Self.opName)
  }

  func prepare(_ context: inout PrepareContext) throws {
    let shape = operands.input.shape
    guard shape.count >= 2 else { throw KernelError.invalid("\(Self.opName) needs an input of rank ≥ 2, got \(shape)") }
    let expected = Array(shape.dropLast(2)) + [min(shape[shape.count - 2], shape[shape.count - 1])]
    guard diagonal.shape == expected else {
      throw KernelError.invalid("\(Self.opName): diagonal \(diagonal.shape) for input \(shape), expected \(expected)")
    }
    operands.output.shape = shape
  }

  func eval(_ context: EvalContext) throws {
    let (source, destination) = try evalPointers(operands.input, operands.output, op: Self.opName)
    let values = UnsafeRawPointer(try tensorData(diagonal))
    if source != UnsafeRawPointer(destination) {
      destination.copyMemory(from: source, byteCount: operands.output.byteCount)
    }
    let shape = operands.input.shape
    let (rows, columns) = (shape[shape.count - 2], shape[shape.count - 1])
    let length = min(rows, columns)
    guard length > 0 else { return }
    let size = operands.elementSize
    // Diagonal element i of matrix m sits at output element m·rows·columns + i·(columns + 1).
    for element in 0..<diagonal.elementCount {
      let target = (element / length) * rows * columns + (element % length) * (columns + 1)
      (destination + target * size).copyMemory(from: values + element * size, byteCount: size)
    }
  }
}
