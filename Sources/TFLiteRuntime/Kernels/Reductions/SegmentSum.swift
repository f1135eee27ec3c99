// SEGMENT_SUM: rows of data [n, …] added into the output row named by their segment id. As TFLite
// requires, ids start at 0 and grow by 0 or 1 from one row to the next; the output has (last id
// + 1) rows, so the node is prepared once the ids are known. Rows are added in order (float
// rounding as TFLite's); integers wrap.

/// Checks SEGMENT_SUM ids and returns the number of segments.
func segmentCount(_ ids: UnsafePointer<Int32>, count: Int) throws -> Int {
  var previous: Int32 = -1
  for position in 0..<count {
    let id = ids[position]
    guard position == 0 ? id == 0 : (id == previous || id == previous &+ 1) else {
      throw KernelError.invalid("SEGMENT_SUM: segment ids must start at 0 and grow by at most 1, got \(id) after \(previous)")
    }
    previous = id
  }
  return Int(previous) + 1
}

/// Adds each row of `data` into the output row named by its id (the output starts zeroed).
func sumSegments<Scalar: ArithmeticScalar>(
  _ data: UnsafePointer<Scalar>, ids: UnsafePointer<Int32>, rowCount: Int, rowElements: Int,
  into output: UnsafeMutablePointer<Scalar>, segments: Int
) {
  output.update(repeating: .zero, count: segments &* rowElements)
  let addition = ArithmeticOperation<Scalar, Addition>(activation: Scalar.unboundedRange)
  for row in 0..<rowCount {
    let target = output + Int(ids[row]) &* rowElements
    storeEachVector(
      CombinedVectors(StreamedOperand(UnsafePointer(target), offset: 0), StreamedOperand(data, offset: row &* rowElements), addition),
      count: rowElements, into: target)
  }
}

// MARK: - Kernel

/// SEGMENT_SUM of float32 or int32 data with int32 segment ids.
final class SegmentSumKernel: Kernel {
  private let data: RuntimeTensor
  private let ids: RuntimeTensor
  private let output: RuntimeTensor

  init(node: Node) throws {
    (data, ids, output) = try node.twoInputsAndOutput()
    _ = try commonElementType([data, output], allowed: [.float32, .int32], operatorName: "SEGMENT_SUM")
    guard ids.type == .int32 else { throw KernelError.unsupported("SEGMENT_SUM with \(ids.type.name) segment ids") }
  }

  func prepare(_ context: inout PrepareContext) throws {
    guard let rows = data.shape.first, ids.shape == [rows] else {
      throw KernelError.invalid("SEGMENT_SUM needs data [n, …] and ids [n], got \(data.shape) and \(ids.shape)")
    }
    guard ids.hasValuesForPrepare, let idData = ids.data else {
      throw KernelError.needsInputValues("SEGMENT_SUM segment ids are computed at run time")
    }
    output.shape = [try segmentCount(idData.assumingMemoryBound(to: Int32.self), count: rows)] + data.shape[1...]
  }

  func eval(_ context: EvalContext) throws {
    let idValues = UnsafePointer(try tensorData(ids).assumingMemoryBound(to: Int32.self))
    let rows = data.shape.first ?? 0
    let segments = try segmentCount(idValues, count: rows)
    guard segments == output.shape.first ?? 0 else {
      throw KernelError.invalid("SEGMENT_SUM: the segment ids changed after the output was sized")
    }
    let rowElements = data.shape.dropFirst().reduce(1, *)
    let (source, destination) = try evalPointers(data, output, op: "SEGMENT_SUM")
    if data.type == .float32 {
      sumSegments(
        source.assumingMemoryBound(to: Float.self), ids: idValues, rowCount: rows, rowElements: rowElements,
        into: destination.assumingMemoryBound(to: Float.self), segments: segments)
    } else {
      sumSegments(
        source.assumingMemoryBound(to: Int32.self), ids: idValues, rowCount: rows, rowElements: rowElements,
        into: destination.assumingMemoryBound(to: Int32.self), segments: segments)
    }
  }
}
