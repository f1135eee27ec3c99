// DILATE: spreads the input's elements apart, `dilations[i] − 1` copies of the scalar
// `padding_value` between neighbours along axis i: an extent d becomes (d − 1)·dilation + 1.
// Any fixed-size element type; int32 dilations, each ≥ 1, one per axis of a rank ≥ 1 input.

/// DILATE over any movable element type.
final class DilateKernel: Kernel {
  private static let opName = "DILATE"
  private let operands: MovableOperands
  private let dilations: RuntimeTensor
  private let paddingValue: RuntimeTensor

  init(node: Node) throws {
    operands = try MovableOperands(node, inputs: 3, op: Self.opName)
    dilations = try node.input(1)
    paddingValue = try node.input(2)
    try requireSameType([operands.input, paddingValue], op: Self.opName)
    guard dilations.type == .int32 else { throw KernelError.unsupported("\(Self.opName) with \(dilations.type.name) dilations") }
  }

  func prepare(_ context: inout PrepareContext) throws {
    let shape = operands.input.shape
    guard !shape.isEmpty, dilations.shape == [shape.count], paddingValue.elementCount == 1 else {
      throw KernelError.invalid(
        "\(Self.opName) needs dilations [\(shape.count)] and one padding value, got \(dilations.shape) and \(paddingValue.shape)")
    }
    guard dilations.hasValuesForPrepare, let factors = dilations.data?.assumingMemoryBound(to: Int32.self) else {
      throw KernelError.needsInputValues("\(Self.opName) dilations are computed at run time")
    }
    var outputShape: [Int] = []
    for (axis, extent) in shape.enumerated() {
      let factor = Int(factors[axis])
      guard factor >= 1, extent >= 1 else {
        throw KernelError.invalid("\(Self.opName): extent \(extent) with dilation \(factor) on axis \(axis)")
      }
      let (spread, overflow) = (extent - 1).multipliedReportingOverflow(by: factor)
      guard !overflow else { throw KernelError.invalid("\(Self.opName): axis \(axis) grows too large") }
      outputShape.append(spread + 1)
    }
    _ = try checkedElementCount(outputShape, op: Self.opName)
    operands.output.shape = outputShape
  }

  func eval(_ context: EvalContext) throws {
    let (source, destination) = try evalPointers(operands.input, operands.output, op: Self.opName)
    let factors = try tensorData(dilations).assumingMemoryBound(to: Int32.self)
    let padding = UnsafeRawPointer(try tensorData(paddingValue))
    let size = operands.elementSize
    fillElements(destination, count: operands.output.elementCount, value: padding, elementSize: size)
    let inputShape = operands.input.shape
    let outputShape = operands.output.shape
    for element in 0..<operands.input.elementCount {
      // The output position of input element `element`: each coordinate times its dilation.
      var remaining = element
      var target = 0
      var outputStride = 1
      for axis in stride(from: inputShape.count - 1, through: 0, by: -1) {
        target += (remaining % inputShape[axis]) * Int(factors[axis]) * outputStride
        remaining /= inputShape[axis]
        outputStride *= outputShape[axis]
      }
      (destination + target * size).copyMemory(from: source + element * size, byteCount: size)
    }
  }
}
