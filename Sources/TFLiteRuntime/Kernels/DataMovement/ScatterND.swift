// SCATTER_ND: a tensor of the given shape, zero except where `updates` slices are added at the
// positions `indices` name (repeated positions add up, as in TFLite).
import TFLiteLinearAlgebra


/// SCATTER_ND for float32, int32 and int64 updates with int32 or int64 indices.
final class ScatterNDKernel: Kernel {
  private static let opName = "SCATTER_ND"
  private let indices: RuntimeTensor
  private let updates: RuntimeTensor
  private let shape: RuntimeTensor
  private let output: RuntimeTensor
  /// Elements of the output each index tuple addresses (the trailing dimensions it leaves out).
  private var sliceSize = 0
  /// Element stride of each indexed output dimension.
  private var strides: [Int] = []

  init(node: Node) throws {
    try node.expect(inputs: 3, outputs: 1)
    indices = try node.input(0)
    updates = try node.input(1)
    shape = try node.input(2)
    output = try node.output(0)
    guard [.int32, .int64].contains(indices.type), [.int32, .int64].contains(shape.type) else {
      throw KernelError.unsupported("\(Self.opName): indices \(indices.type.name) and shape \(shape.type.name) must be INT32 or INT64")
    }
    guard [.float32, .int32, .int64].contains(updates.type), updates.type == output.type else {
      throw KernelError.unsupported("\(Self.opName): updates \(updates.type.name) into \(output.type.name)")
    }
  }

  func prepare(_ context: inout PrepareContext) throws {
    let outputShape = try constantIntegers(shape, op: Self.opName, operand: "shape")
    _ = try checkedElementCount(outputShape, op: Self.opName)
    guard let depth = indices.shape.last, depth >= 1, depth <= outputShape.count else {
      throw KernelError.invalid("\(Self.opName): indices \(indices.shape) must end in 1...\(outputShape.count) coordinates")
    }
    let expectedUpdates = Array(indices.shape.dropLast()) + Array(outputShape[depth...])
    guard updates.shape == expectedUpdates else {
      throw KernelError.invalid("\(Self.opName): updates have shape \(updates.shape), expected \(expectedUpdates)")
    }
    sliceSize = outputShape[depth...].reduce(1, *)
    strides = (0..<depth).map { axis in outputShape[(axis + 1)...].reduce(1, *) }
    output.shape = outputShape
  }

  func eval(_ context: EvalContext) throws {
    switch output.type {
    case .float32: try scatter(Float.self)
    case .int32: try scatter(Int32.self)
    default: try scatter(Int64.self)
    }
  }

  /// Zeroes the output and adds every update slice at its position.
  private func scatter<Element: AdditiveArithmetic>(_: Element.Type) throws {
    guard let indexData = indices.data, let updateData = updates.data, let outputData = output.data else {
      throw KernelError.invalid("\(Self.opName): eval before allocation")
    }
    let target = outputData.assumingMemoryBound(to: Element.self)
    let source = updateData.assumingMemoryBound(to: Element.self)
    let outputCount = output.elementCount
    target.initialize(repeating: .zero, count: outputCount)
    let depth = strides.count
    let sliceCount = depth == 0 ? 0 : indices.elementCount / depth
    for slice in 0..<sliceCount {
      var position = 0
      for axis in 0..<depth {
        let flat = slice * depth + axis
        let coordinate =
          indices.type == .int32
          ? Int(indexData.load(fromByteOffset: flat * 4, as: Int32.self))
          : Int(indexData.load(fromByteOffset: flat * 8, as: Int64.self))
        guard coordinate >= 0, coordinate < output.shape[axis] else {
          throw KernelError.invalid("\(Self.opName): index \(coordinate) is out of range for dimension \(axis) of \(output.shape)")
        }
        position += coordinate * strides[axis]
      }
      for offset in 0..<sliceSize { target[position + offset] += source[slice * sliceSize + offset] }
    }
  }
}
