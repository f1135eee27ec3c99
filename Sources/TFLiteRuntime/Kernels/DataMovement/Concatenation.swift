// CONCATENATION and PACK (and, through the same partition, SPLIT, SPLIT_V and UNPACK in Split.swift).

import TFLiteFormat

/// A tensor cut into consecutive parts along one axis: `outerCount` blocks, each made of
/// `partExtents[i] * innerCount` elements of every part `i` in turn.
struct AxisPartition: Equatable {
  /// Product of the axes before the cut axis.
  let outerCount: Int
  /// Product of the axes after the cut axis.
  let innerCount: Int
  /// Extent of each part along the cut axis.
  let partExtents: [Int]
  /// Element offset of each part inside one block of the whole.
  let partOffsets: [Int]
  /// Extent of the whole along the cut axis.
  let totalExtent: Int

  /// Describes parts of the given extents along `axis` of a tensor of `shape` (the cut axis of
  /// `shape` itself is ignored; `axis == shape.count` cuts below the last axis, as PACK does).
  init(shape: [Int], axis: Int, partExtents: [Int]) {
    outerCount = shape[..<axis].reduce(1, *)
    innerCount = shape[min(axis + 1, shape.count)...].reduce(1, *)
    self.partExtents = partExtents
    var offsets: [Int] = []
    var running = 0
    for extent in partExtents {
      offsets.append(running * innerCount)
      running += extent
    }
    partOffsets = offsets
    totalExtent = running
  }

  /// Writes the whole from its parts (`source(i)` is part `i`, dense, asked once per part),
  /// block after block so the output is written front to back (short runs inline, `copyRun`).
  func join(into whole: UnsafeMutableRawPointer, elementSize: Int, source: (Int) -> UnsafeRawPointer) {
    withUnsafeTemporaryAllocation(of: (start: UnsafeRawPointer, bytes: Int).self, capacity: partExtents.count) { parts in
      for part in parts.indices {
        parts.initializeElement(at: part, to: (source(part), partExtents[part] &* innerCount &* elementSize))
      }
      var output = whole
      for block in 0..<outerCount {
        for (start, bytes) in parts {
          copyRun(from: start + block &* bytes, to: output, byteCount: bytes)
          output += bytes
        }
      }
    }
  }

  /// Copies part `part` out of the whole into its own dense tensor.
  func extract(part: Int, from whole: UnsafeRawPointer, into destination: UnsafeMutableRawPointer, elementSize: Int) {
    let partBytes = partExtents[part] &* innerCount &* elementSize
    copyBlocks(
      count: outerCount, blockBytes: partBytes, from: whole + partOffsets[part] &* elementSize,
      sourceStride: totalExtent &* innerCount &* elementSize, to: destination, destinationStride: partBytes)
  }
}

/// CONCATENATION's output shape: the inputs must agree on every axis but `axis` (normalized), where they add up.
func concatenatedShape(inputShapes: [[Int]], axis: Int) throws -> [Int] {
  guard var shape = inputShapes.first else { throw KernelError.invalid("CONCATENATION: no inputs") }
  for other in inputShapes.dropFirst() {
    guard other.count == shape.count,
      other.indices.allSatisfy({ $0 == axis || other[$0] == shape[$0] })
    else {
      throw KernelError.invalid("CONCATENATION: \(inputShapes) do not match outside axis \(axis)")
    }
    shape[axis] += other[axis]
  }
  _ = try checkedElementCount(shape, op: "CONCATENATION")
  return shape
}

// MARK: - Kernels

/// Joins the inputs into the output along a partition planned in `prepare`.
private func joinParts(
  _ inputs: [RuntimeTensor], into output: RuntimeTensor, partition: AxisPartition?, elementSize: Int, op: String
) throws {
  guard let partition, let destination = output.data else { throw KernelError.invalid("\(op): eval before prepare") }
  for (part, input) in inputs.enumerated() where input.data == nil {
    throw KernelError.invalid("\(op): input \(part) has no memory")
  }
  partition.join(into: destination, elementSize: elementSize) { UnsafeRawPointer(inputs[$0].data.unsafelyUnwrapped) }
}

/// CONCATENATION along an axis (negative counts from the end), with an optional fused
/// RELU / RELU6 / RELU_N1_TO_1 clamp on float32 outputs.
final class ConcatenationKernel: Kernel {
  private static let opName = "CONCATENATION"
  private let inputs: [RuntimeTensor]
  private let output: RuntimeTensor
  private let axis: Int
  private let elementSize: Int
  private let activation: ClosedRange<Float>?
  private var partition: AxisPartition?

  init(node: Node) throws {
    guard !node.inputs.isEmpty else { throw KernelError.invalid("CONCATENATION: no inputs") }
    try node.expect(inputs: node.inputs.count, outputs: 1)
    inputs = try node.inputs.indices.map { try node.input($0) }
    output = try node.output(0)
    try requireSameType(inputs + [output], op: Self.opName)
    elementSize = try movableElementSize(output, op: Self.opName)
    if output.quantization != nil { try requireSameQuantization(inputs + [output], op: Self.opName) }
    guard case .concatenationOptions(let options) = node.options else {
      throw KernelError.invalid("CONCATENATION: missing options")
    }
    axis = Int(options.axis)
    switch options.fusedActivationFunction {
    case .none: activation = nil
    case .relu: activation = 0...Float.infinity
    case .relu6: activation = 0...6
    case .reluN1To1: activation = -1...1
    default:
      throw KernelError.unsupported("CONCATENATION: fused activation \(options.fusedActivationFunction)")
    }
    if activation != nil && output.type != .float32 {
      throw KernelError.unsupported("CONCATENATION: fused activation on \(output.type.name)")
    }
  }

  func prepare(_ context: inout PrepareContext) throws {
    // Scalars join into a vector, as TFLite allows for constant scalars.
    let shapes = inputs.map { $0.shape.isEmpty ? [1] : $0.shape }
    let resolvedAxis = try normalizedAxis(axis, rank: shapes[0].count, op: Self.opName)
    output.shape = try concatenatedShape(inputShapes: shapes, axis: resolvedAxis)
    partition = AxisPartition(shape: output.shape, axis: resolvedAxis, partExtents: shapes.map { $0[resolvedAxis] })
  }

  func eval(_ context: EvalContext) throws {
    try joinParts(inputs, into: output, partition: partition, elementSize: elementSize, op: Self.opName)
    if let activation {
      let values = output.pointer(as: Float.self)
      for index in 0..<output.elementCount {
        values[index] = min(max(values[index], activation.lowerBound), activation.upperBound)
      }
    }
  }
}

/// PACK: stacks equally shaped inputs along a new axis.
final class PackKernel: Kernel {
  private static let opName = "PACK"
  private let inputs: [RuntimeTensor]
  private let output: RuntimeTensor
  private let axis: Int
  private let elementSize: Int
  private var partition: AxisPartition?

  init(node: Node) throws {
    guard case .packOptions(let options) = node.options else { throw KernelError.invalid("PACK: missing options") }
    try node.expect(inputs: Int(options.valuesCount), outputs: 1)
    inputs = try node.inputs.indices.map { try node.input($0) }
    output = try node.output(0)
    try requireSameType(inputs + [output], op: Self.opName)
    try requireSameQuantization(inputs + [output], op: Self.opName)
    elementSize = try movableElementSize(output, op: Self.opName)
    axis = Int(options.axis)
  }

  func prepare(_ context: inout PrepareContext) throws {
    let shape = inputs[0].shape
    guard inputs.allSatisfy({ $0.shape == shape }) else {
      throw KernelError.invalid("PACK: inputs differ in shape: \(inputs.map(\.shape))")
    }
    let resolvedAxis = try normalizedAxis(axis, rank: shape.count + 1, op: Self.opName)
    var outputShape = shape
    outputShape.insert(inputs.count, at: resolvedAxis)
    _ = try checkedElementCount(outputShape, op: Self.opName)
    output.shape = outputShape
    partition = AxisPartition(shape: outputShape, axis: resolvedAxis, partExtents: [Int](repeating: 1, count: inputs.count))
  }

  func eval(_ context: EvalContext) throws {
    try joinParts(inputs, into: output, partition: partition, elementSize: elementSize, op: Self.opName)
  }
}
