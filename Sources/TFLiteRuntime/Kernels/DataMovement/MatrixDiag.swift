// MATRIX_DIAG: each innermost row [n] of the input becomes the diagonal of an n × n matrix whose
// other elements are zero bits (as TFLite writes them, also for quantized types).

/// MATRIX_DIAG over any element type the copy routines move.
final class MatrixDiagKernel: Kernel {
  private static let opName = "MATRIX_DIAG"
  private let input: RuntimeTensor
  private let output: RuntimeTensor
  private let elementSize: Int

  init(node: Node) throws {
    (input, output) = try node.singleInputAndOutput()
    try requireSameType([input, output], op: Self.opName)
    try requireSameQuantization([input, output], op: Self.opName)
    elementSize = try movableElementSize(input, op: Self.opName)
  }

  func prepare(_ context: inout PrepareContext) throws {
    guard let size = input.shape.last else { throw KernelError.invalid("MATRIX_DIAG needs an input of rank ≥ 1") }
    output.shape = input.shape + [size]
    _ = try checkedElementCount(output.shape, op: Self.opName)
  }

  func eval(_ context: EvalContext) throws {
    let (source, destination) = try evalPointers(input, output, op: Self.opName)
    zeroMemoryInThrowingCode(destination, byteCount: output.byteCount)
    let size = input.shape.last ?? 0
    guard size > 0 else { return }
    // Diagonal element i of matrix m sits at output element (m·n + i)·n + i = input element · n + i.
    for element in 0..<input.elementCount {
      let target = element &* size &+ element % size
      copyMemoryInThrowingCode(
        to: destination + target &* elementSize, from: source + element &* elementSize, byteCount: elementSize)
    }
  }
}
