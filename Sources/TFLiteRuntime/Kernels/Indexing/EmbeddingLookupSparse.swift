import TFLiteFormat

// EMBEDDING_LOOKUP_SPARSE: a sparse tensor (ids [n] int32, indices [n, r] int32, dense_shape [r]
// int32) selects rows of `params` [rows, e1, …] (float32), each scaled by weights[i] (float32)
// and added into the output slot named by the first r − 1 coordinates of its index: the output
// is [dense_shape[0 ..< r − 1], e1, …]. As in TFLite, points of one slot are expected together:
// when the slot changes, MEAN divides the finished slot by its total weight and SQRTN by the
// square root of its sum of squared weights (SUM leaves it). Ids or coordinates out of range are
// errors.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// EMBEDDING_LOOKUP_SPARSE with float32 params and weights.
final class EmbeddingLookupSparseKernel: Kernel {
  private static let opName = "EMBEDDING_LOOKUP_SPARSE"
  private let ids: RuntimeTensor
  private let indices: RuntimeTensor
  private let denseShape: RuntimeTensor
  private let weights: RuntimeTensor
  private let params: RuntimeTensor
  private let output: RuntimeTensor
  private let combiner: CombinerType

  init(node: Node) throws {
    try node.expect(inputs: 5, outputs: 1)
    ids = try node.input(0)
    indices = try node.input(1)
    denseShape = try node.input(2)
    weights = try node.input(3)
    params = try node.input(4)
    output = try node.output(0)
    guard [ids, indices, denseShape].allSatisfy({ $0.type == .int32 }) else {
      throw KernelError.unsupported("\(Self.opName) needs int32 ids, indices and dense shape")
    }
    try FloatOperands.require([weights, params, output], op: Self.opName)
    combiner = try FloatOperands.options(of: node, op: Self.opName, defaults: EmbeddingLookupSparseOptions()) {
      if case .embeddingLookupSparseOptions(let options) = $0 { options } else { nil }
    }.combiner
    guard [.sum, .mean, .sqrtn].contains(combiner) else {
      throw KernelError.unsupported("\(Self.opName) with combiner \(combiner.rawValue)")
    }
  }

  /// Coordinates per point (r).
  private var lookupRank: Int { indices.shape.count == 2 ? indices.shape[1] : 0 }

  func prepare(_ context: inout PrepareContext) throws {
    let count = ids.shape.first ?? -1
    guard ids.shape.count == 1, indices.shape.count == 2, indices.shape[0] == count, weights.shape == [count],
      params.shape.count >= 2, lookupRank >= 1, denseShape.shape == [lookupRank]
    else {
      throw KernelError.invalid(
        "\(Self.opName): ids \(ids.shape), indices \(indices.shape), dense shape \(denseShape.shape), weights \(weights.shape), params \(params.shape)")
    }
    guard denseShape.hasValuesForPrepare, let extents = denseShape.data?.assumingMemoryBound(to: Int32.self) else {
      throw KernelError.needsInputValues("\(Self.opName) dense shape is computed at run time")
    }
    let shape = (0..<(lookupRank - 1)).map { Int(extents[$0]) } + params.shape.dropFirst()
    _ = try checkedElementCount(shape, op: Self.opName)
    output.shape = shape
  }

  func eval(_ context: EvalContext) throws {
    let (table, destination) = try evalPointers(params, output, op: Self.opName)
    let rows = table.assumingMemoryBound(to: Float.self)
    let results = destination.assumingMemoryBound(to: Float.self)
    let idValues = try tensorData(ids).assumingMemoryBound(to: Int32.self)
    let coordinates = try tensorData(indices).assumingMemoryBound(to: Int32.self)
    let weightValues = try tensorData(weights).assumingMemoryBound(to: Float.self)
    let slotShape = output.shape.prefix(lookupRank - 1)
    let embedding = params.shape.dropFirst().reduce(1, *)
    results.update(repeating: 0, count: output.elementCount)
    var slot = 0
    var (members, totalWeight, squaredWeight): (Int, Float, Float) = (0, 0, 0)
    for point in 0..<ids.elementCount {
      let id = Int(idValues[point])
      guard id >= 0, id < params.shape[0] else {
        throw KernelError.invalid("\(Self.opName): id \(id) is outside [0, \(params.shape[0]))")
      }
      var pointSlot = 0
      for (axis, extent) in slotShape.enumerated() {
        let coordinate = Int(coordinates[point * lookupRank + axis])
        guard coordinate >= 0, coordinate < extent else {
          throw KernelError.invalid("\(Self.opName): coordinate \(coordinate) on axis \(axis) is outside [0, \(extent))")
        }
        pointSlot = pointSlot * extent + coordinate
      }
      if pointSlot != slot {
        finish(results + slot * embedding, count: embedding, members: members, total: totalWeight, squares: squaredWeight)
        (slot, members, totalWeight, squaredWeight) = (pointSlot, 0, 0, 0)
      }
      let weight = weightValues[point]
      members += 1
      squaredWeight += weight * weight
      totalWeight += weight
      let target = results + slot * embedding
      let source = rows + id * embedding
      for element in 0..<embedding { target[element] += source[element] * weight }
    }
    finish(results + slot * embedding, count: embedding, members: members, total: totalWeight, squares: squaredWeight)
  }

  /// Divides a finished slot as the combiner says.
  private func finish(_ values: UnsafeMutablePointer<Float>, count: Int, members: Int, total: Float, squares: Float) {
    guard combiner != .sum, members > 0 else { return }
    let divisor = combiner == .mean ? total : sqrtf(squares)
    for element in 0..<count { values[element] /= divisor }
  }
}
