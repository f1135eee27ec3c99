// FILL and ZEROS_LIKE: outputs made of one repeated element.

/// FILL: a tensor of the constant shape `dims` (int32 or int64) holding the scalar `value` everywhere.
final class FillKernel: Kernel {
  private static let opName = "FILL"
  private let dimensions: RuntimeTensor
  private let value: RuntimeTensor
  private let output: RuntimeTensor
  private let elementSize: Int

  init(node: Node) throws {
    (dimensions, value, output) = try node.twoInputsAndOutput()
    try requireSameType([value, output], op: Self.opName)
    elementSize = try movableElementSize(value, op: Self.opName)
  }

  func prepare(_ context: inout PrepareContext) throws {
    guard value.elementCount == 1 else { throw KernelError.invalid("FILL: value must be a scalar, got shape \(value.shape)") }
    let shape = try constantIntegers(dimensions, op: Self.opName, operand: "dims")
    _ = try checkedElementCount(shape, op: Self.opName)
    output.shape = shape
  }

  func eval(_ context: EvalContext) throws {
    let (source, destination) = try evalPointers(value, output, op: Self.opName)
    fillElements(destination, count: output.elementCount, value: source, elementSize: elementSize)
  }
}

/// ZEROS_LIKE: zeros of the input's shape and type (known from the shape alone, so folded at prepare time).
final class ZerosLikeKernel: Kernel {
  static let dependsOnlyOnInputShapes = true
  private let input: RuntimeTensor
  private let output: RuntimeTensor

  init(node: Node) throws {
    let operands = try MovableOperands(node, inputs: 1, op: "ZEROS_LIKE")
    (input, output) = (operands.input, operands.output)
  }

  func prepare(_ context: inout PrepareContext) throws {
    output.shape = input.shape
  }

  func eval(_ context: EvalContext) throws {
    guard let destination = output.data else { throw KernelError.invalid("ZEROS_LIKE: output has no memory") }
    destination.initializeMemory(as: UInt8.self, repeating: 0, count: output.byteCount)
  }
}
