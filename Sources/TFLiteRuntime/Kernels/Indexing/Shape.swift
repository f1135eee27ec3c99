// SHAPE: the input's shape as an int32 or int64 vector. It needs only the input's shape, so the
// runtime computes it at prepare time even when the input's values are not known yet.

/// SHAPE, writing int32 or int64 as the output tensor's type says.
final class ShapeKernel: Kernel {
  static let dependsOnlyOnInputShapes = true
  private let input: RuntimeTensor
  private let output: RuntimeTensor

  init(node: Node) throws {
    (input, output) = try node.singleInputAndOutput()
    guard output.type == .int32 || output.type == .int64 else {
      throw KernelError.unsupported("SHAPE: output of type \(output.type.name)")
    }
  }

  func prepare(_ context: inout PrepareContext) throws {
    output.shape = [input.shape.count]
  }

  func eval(_ context: EvalContext) throws {
    guard let destination = output.data else { throw KernelError.invalid("SHAPE: output has no memory") }
    for (axis, extent) in input.shape.enumerated() {
      if output.type == .int32 {
        storeElement(Int32(truncatingIfNeeded: extent), destination, axis)
      } else {
        storeElement(Int64(extent), destination, axis)
      }
    }
  }
}
