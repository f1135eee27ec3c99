// CONCATENATION of quantized inputs whose scales or zero points differ from the output's: each
// such input is requantized on the way, as LiteRT's reference kernel does for uint8
// (`round(q · s_in/s_out − z_in · s_in/s_out) + z_out` in float, clamped); inputs that share the
// output's quantization are copied. (LiteRT itself refuses int8 inputs with other parameters and
// copies int16 inputs unchanged; converters never produce either.) Concatenations whose operands
// all share one quantization are plain copies and run in the data-movement kernel.

import TFLiteFormat
import TFLiteLinearAlgebra

/// How one input reaches the output: copied, or requantized by `value · scale + bias`.
private enum ConcatenationPart {
  case copy
  case requantize(scale: Float, bias: Float)
}

/// Joins the parts block by block, requantizing where needed.
private struct TypedRequantizingJoin<Element: QuantizedInteger> {
  let partition: AxisPartition
  let parts: [ConcatenationPart]
  let outputZeroPoint: Int32

  /// Joins `inputs` (whose memory the caller checked) into `output`.
  func run(inputs: [RuntimeTensor], output: UnsafeMutableRawPointer) {
    withUnsafeTemporaryAllocation(of: UnsafePointer<Element>.self, capacity: inputs.count) { sources in
      for (part, input) in inputs.enumerated() {
        sources[part] = UnsafePointer(input.data.unsafelyUnwrapped.assumingMemoryBound(to: Element.self))
      }
      parts.withUnsafeBufferPointer { parts in
        var destination = output.assumingMemoryBound(to: Element.self)
        for block in 0..<partition.outerCount {
          for part in parts.indices {
            let count = partition.partExtents[part] * partition.innerCount
            let source = sources[part] + block * count
            switch parts[part] {
            case .copy:
              destination.update(from: source, count: count)
            case .requantize(let scale, let bias):
              for index in 0..<count {
                let quantized = FixedPoint.roundingConversion(Float(source[index]) * scale + bias) &+ outputZeroPoint
                destination[index] = Element(clamping: quantized)
              }
            }
            destination += count
          }
        }
      }
    }
  }
}

/// Builds the typed join (a closure formed where the element type is concrete).
private struct RequantizingJoinFactory: QuantizedTypeVisitor {
  let partition: AxisPartition
  let parts: [ConcatenationPart]
  let outputZeroPoint: Int32
  func visit<Element: QuantizedInteger>(_ type: Element.Type) throws -> ([RuntimeTensor], UnsafeMutableRawPointer) -> Void {
    let join = TypedRequantizingJoin<Element>(partition: partition, parts: parts, outputZeroPoint: outputZeroPoint)
    return { join.run(inputs: $0, output: $1) }
  }
}

/// CONCATENATION of int8, uint8 or int16 tensors with differing quantization parameters.
final class RequantizingConcatenationKernel: Kernel {
  private static let opName = "CONCATENATION"
  private let inputs: [RuntimeTensor]
  private let output: RuntimeTensor
  private let axis: Int
  /// The typed join: inputs, output memory.
  private var join: (([RuntimeTensor], UnsafeMutableRawPointer) -> Void)?

  init(node: Node) throws {
    guard !node.inputs.isEmpty else { throw KernelError.invalid("CONCATENATION: no inputs") }
    try node.expect(inputs: node.inputs.count, outputs: 1)
    inputs = try node.inputs.indices.map { try node.input($0) }
    let output = try node.output(0)
    self.output = output
    guard [.int8, .uint8, .int16].contains(output.type), inputs.allSatisfy({ $0.type == output.type }),
      inputs.contains(where: { $0.quantization != output.quantization })
    else {
      throw KernelError.unsupported("CONCATENATION without requantization belongs to the data-movement kernel")
    }
    guard case .concatenationOptions(let options) = node.options else {
      throw KernelError.invalid("CONCATENATION: missing options")
    }
    guard options.fusedActivationFunction == .none else {
      throw KernelError.unsupported("CONCATENATION: fused activation \(options.fusedActivationFunction.name) on quantized tensors")
    }
    axis = Int(options.axis)
  }

  func prepare(_ context: inout PrepareContext) throws {
    let result = try QuantizedOperand(output, op: Self.opName)
    let operands = try inputs.map { try QuantizedOperand($0, op: Self.opName) }
    let shapes = inputs.map { $0.shape.isEmpty ? [1] : $0.shape }
    let resolvedAxis = try normalizedAxis(axis, rank: shapes[0].count, op: Self.opName)
    output.shape = try concatenatedShape(inputShapes: shapes, axis: resolvedAxis)
    let partition = AxisPartition(shape: output.shape, axis: resolvedAxis, partExtents: shapes.map { $0[resolvedAxis] })
    let inverseOutputScale = 1 / result.scale
    let parts = operands.map { operand -> ConcatenationPart in
      if operand.scale == result.scale && operand.zeroPoint == result.zeroPoint { return .copy }
      let scale = operand.scale * inverseOutputScale
      return .requantize(scale: scale, bias: Float(-operand.zeroPoint) * scale)
    }
    join = try output.type.visitQuantized(
      RequantizingJoinFactory(partition: partition, parts: parts, outputZeroPoint: result.zeroPoint))
  }

  func eval(_ context: EvalContext) throws {
    guard let join else { throw KernelError.invalid("CONCATENATION evaluated before prepare") }
    for input in inputs { _ = try tensorData(input) }
    join(inputs, try tensorData(output))
  }
}
