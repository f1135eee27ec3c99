import TFLiteFormat
import TFLiteLinearAlgebra

// REVERSE_SEQUENCE: for every index b along `batch_dim`, the first seq_lengths[b] elements along
// `seq_dim` are reversed; the rest are copied. Types as in TFLite: float32, uint8, int16, int32,
// int64 data; int32 or int64 lengths, one per batch entry, each in [0, seq extent].

/// REVERSE_SEQUENCE.
final class ReverseSequenceKernel: Kernel {
  private static let opName = "REVERSE_SEQUENCE"
  private let operands: MovableOperands
  private let lengths: RuntimeTensor
  private let sequenceAxis: Int
  private let batchAxis: Int

  init(node: Node) throws {
    operands = try MovableOperands(node, inputs: 2, op: Self.opName)
    lengths = try node.input(1)
    guard [.float32, .uint8, .int16, .int32, .int64].contains(operands.input.type) else {
      throw KernelError.unsupported("\(Self.opName) on \(operands.input.type.name) tensors")
    }
    guard lengths.type == .int32 || lengths.type == .int64 else {
      throw KernelError.unsupported("\(Self.opName) with \(lengths.type.name) lengths")
    }
    let options = try FloatOperands.options(of: node, op: Self.opName, defaults: ReverseSequenceOptions()) {
      if case .reverseSequenceOptions(let options) = $0 { options } else { nil }
    }
    sequenceAxis = Int(options.seqDim)
    batchAxis = Int(options.batchDim)
  }

  func prepare(_ context: inout PrepareContext) throws {
    let shape = operands.input.shape
    guard sequenceAxis >= 0, batchAxis >= 0, sequenceAxis != batchAxis, sequenceAxis < shape.count,
      batchAxis < shape.count
    else {
      throw KernelError.invalid("\(Self.opName): seq_dim \(sequenceAxis), batch_dim \(batchAxis) for rank \(shape.count)")
    }
    guard lengths.shape == [shape[batchAxis]] else {
      throw KernelError.invalid("\(Self.opName): lengths \(lengths.shape) for batch extent \(shape[batchAxis])")
    }
    operands.output.shape = shape
  }

  /// seq_lengths[b].
  private func length(_ values: UnsafeRawPointer, _ b: Int) -> Int {
    lengths.type == .int32
      ? Int(values.load(fromByteOffset: b * 4, as: Int32.self)) : Int(values.load(fromByteOffset: b * 8, as: Int64.self))
  }

  func eval(_ context: EvalContext) throws {
    let (source, destination) = try evalPointers(operands.input, operands.output, op: Self.opName)
    let lengthValues = UnsafeRawPointer(try tensorData(lengths))
    let shape = operands.input.shape
    let sequenceExtent = shape[sequenceAxis]
    for b in 0..<shape[batchAxis] {
      let count = length(lengthValues, b)
      guard count >= 0, count <= sequenceExtent else {
        throw KernelError.invalid("\(Self.opName): length \(count) of batch \(b) is outside [0, \(sequenceExtent)]")
      }
    }
    let sequenceStride = shape[(sequenceAxis + 1)...].reduce(1, *)
    let batchStride = shape[(batchAxis + 1)...].reduce(1, *)
    let size = operands.elementSize
    for element in 0..<operands.output.elementCount {
      let position = (element / sequenceStride) % sequenceExtent
      let count = length(lengthValues, (element / batchStride) % shape[batchAxis])
      let from = position < count ? element + (count - 1 - 2 * position) * sequenceStride : element
      (destination + element * size).copyMemory(from: source + from * size, byteCount: size)
    }
  }
}
