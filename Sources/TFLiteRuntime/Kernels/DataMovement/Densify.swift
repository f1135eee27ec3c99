// DENSIFY: the dense form of a sparse constant. Lowering expands every sparse constant when the
// model is loaded (`SparseConstants.swift`), so this kernel copies its already dense input; its
// input is constant, so the runtime runs it once at prepare time.

/// DENSIFY of a (lowered, now dense) sparse constant of any movable type.
final class DensifyKernel: Kernel {
  private static let opName = "DENSIFY"
  private let input: RuntimeTensor
  private let output: RuntimeTensor
  private let elementSize: Int

  init(node: Node) throws {
    let operands = try MovableOperands(node, inputs: 1, op: Self.opName)
    (input, output, elementSize) = (operands.input, operands.output, operands.elementSize)
    guard input.isModelConstant else {
      throw KernelError.unsupported("DENSIFY: \(input.summary) is not a constant of the model")
    }
  }

  func prepare(_ context: inout PrepareContext) throws {
    output.shape = input.shape
  }

  func eval(_ context: EvalContext) throws {
    let (source, destination) = try evalPointers(input, output, op: Self.opName)
    destination.copyMemory(from: source, byteCount: output.elementCount &* elementSize)
  }
}
