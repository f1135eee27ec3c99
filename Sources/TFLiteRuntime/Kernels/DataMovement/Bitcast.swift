// BITCAST: the input's bytes read as the output's element type. Equal sizes keep the shape; a
// wider input element adds a last axis of (input size / output size); a narrower one needs a last
// axis of (output size / input size), which disappears.

/// BITCAST between fixed-size element types.
final class BitcastKernel: Kernel {
  private static let opName = "BITCAST"
  private let input: RuntimeTensor
  private let output: RuntimeTensor

  init(node: Node) throws {
    (input, output) = try node.singleInputAndOutput()
    _ = try movableElementSize(input, op: Self.opName)
    _ = try movableElementSize(output, op: Self.opName)
  }

  func prepare(_ context: inout PrepareContext) throws {
    let (inputSize, outputSize) = (input.type.byteCount, output.type.byteCount)
    if inputSize == outputSize {
      output.shape = input.shape
    } else if inputSize > outputSize {
      output.shape = input.shape + [inputSize / outputSize]
    } else {
      guard input.shape.last == outputSize / inputSize else {
        throw KernelError.invalid(
          "\(Self.opName): \(input.type.name) \(input.shape) to \(output.type.name) needs a last axis of \(outputSize / inputSize)")
      }
      output.shape = Array(input.shape.dropLast())
    }
  }

  func eval(_ context: EvalContext) throws {
    let (source, destination) = try evalPointers(input, output, op: Self.opName)
    if source != UnsafeRawPointer(destination) {
      destination.copyMemory(from: source, byteCount: min(input.byteCount, output.byteCount))
    }
  }
}
