// Quantized BATCH_MATMUL, bit-exact with LiteRT's reference kernel: int8 × int8 → int8 and
// int16 × int16 → int16 (zero points 0), both operands quantized per tensor. (uint8 graphs reach
// it through QUANTIZE nodes: LiteRT has no uint8 BATCH_MATMUL.)
//
// Every output element is Σ_k (lhs − lhs zero point) · (rhs − rhs zero point), rescaled by
// lhs_scale · rhs_scale / output_scale, offset by the output zero point and clamped to the output
// type (the op has no fused activation). 8-bit sums wrap in 32 bits and rescale with the run's
// rounding policy; 16-bit sums accumulate in 64 bits and use the 64-bit rescale.

import TFLiteFormat
import TFLiteLinearAlgebra

/// The rescale of a BATCH_MATMUL sum into a raw output value.
private struct MatMulRescale {
  /// lhs_scale · rhs_scale / output_scale.
  let multiplier: QuantizedMultiplier
  /// How the 32-bit rescale rounds.
  let rounding: RoundingPolicy
  /// True for 16-bit operands: the sum stays 64-bit and uses the 64-bit rescale.
  let wideAccumulator: Bool
  /// The output zero point.
  let outputZeroPoint: Int32
  /// The output type's range.
  let clamp: ClosedRange<Int32>

  /// The raw output for the accumulated `sum`.
  @inline(__always)
  func apply(_ sum: Int64) -> Int32 {
    let scaled =
      wideAccumulator
      ? multiplier.apply(sum) : multiplier.apply(Int32(truncatingIfNeeded: sum), rounding: rounding)
    return min(max(scaled &+ outputZeroPoint, clamp.lowerBound), clamp.upperBound)
  }
}

/// BATCH_MATMUL on quantized tensors: `lhs [..., M, K]` (`[..., K, M]` with adj_x) times
/// `rhs [..., K, N]` (`[..., N, K]` with adj_y), batch dimensions broadcast. Both operands are
/// widened to Int32 minus their zero points, rows of K values each (the right operand as N rows);
/// a constant right operand is widened once in `prepare`.
final class IntegerBatchMatMulKernel: Kernel {
  private let lhs: RuntimeTensor
  private let rhs: RuntimeTensor
  private let output: RuntimeTensor
  private let adjX: Bool
  private let adjY: Bool
  private var shape: BatchMatMulShape?
  private var rescale: MatMulRescale?
  private var lhsOffset: Int32 = 0
  private var rhsOffset: Int32 = 0
  /// The widened constant right operand (empty when it is computed at run time).
  private var constantRight: [Int32] = []
  /// Scratch offsets of the widened left operand and, for a run-time right operand, of its rows.
  private var lhsScratchOffset = 0
  private var rhsScratchOffset: Int?

  init(node: Node) throws {
    let op = "BATCH_MATMUL"
    (lhs, rhs, output) = try node.twoInputsAndOutput()
    guard [.int8, .int16].contains(lhs.type), rhs.type == lhs.type, output.type == lhs.type else {
      throw KernelError.unsupported(
        "\(op) with \(lhs.type.name) × \(rhs.type.name) → \(output.type.name) in the integer kernels")
    }
    let options = try FloatOperands.options(of: node, op: op, defaults: BatchMatMulOptions()) {
      if case .batchMatMulOptions(let options) = $0 { options } else { nil }
    }
    (adjX, adjY) = (options.adjX, options.adjY)
  }

  func prepare(_ context: inout PrepareContext) throws {
    let op = "BATCH_MATMUL"
    let sixteenBit = lhs.type == .int16
    let lhsOperand = try QuantizedOperand(lhs, op: op, symmetric: sixteenBit)
    let rhsOperand = try QuantizedOperand(rhs, op: op, symmetric: sixteenBit)
    let outputOperand = try QuantizedOperand(output, op: op, symmetric: sixteenBit)
    let shape = try BatchMatMulShape(op: op, lhs: lhs.shape, rhs: rhs.shape, adjX: adjX, adjY: adjY, memory: context)
    rescale = MatMulRescale(
      multiplier: QuantizedMultiplier(
        Double(lhsOperand.scale) * Double(rhsOperand.scale) / Double(outputOperand.scale),
        rounding: context.roundingPolicy),
      rounding: context.roundingPolicy, wideAccumulator: sixteenBit, outputZeroPoint: outputOperand.zeroPoint,
      clamp: outputOperand.range)
    lhsOffset = -lhsOperand.zeroPoint
    rhsOffset = -rhsOperand.zeroPoint
    var scratch = ScratchLayout()
    lhsScratchOffset = scratch.reserve(bytes: lhs.elementCount * MemoryLayout<Int32>.stride)
    if rhs.isConstant, rhs.data != nil {
      rhsScratchOffset = nil
      constantRight = [Int32](repeating: 0, count: rhs.elementCount)
      try constantRight.withUnsafeMutableBufferPointer { buffer in
        guard let base = buffer.baseAddress else { return }
        try widenRight(shape, into: base)
      }
    } else {
      constantRight = []
      rhsScratchOffset = scratch.reserve(bytes: rhs.elementCount * MemoryLayout<Int32>.stride)
    }
    context.requestScratch(bytes: scratch.byteCount)
    self.shape = shape
    output.shape = shape.outputShape
  }

  /// Widens the right operand into N rows of K values per stored matrix.
  private func widenRight(_ shape: BatchMatMulShape, into destination: UnsafeMutablePointer<Int32>) throws {
    try widenMatrices(
      rhs, count: shape.rhsMatrixCount, rows: shape.columns, columns: shape.depth, transposed: !adjY, offset: rhsOffset,
      into: destination)
  }

  func eval(_ context: EvalContext) throws {
    guard output.elementCount > 0 else { return }
    guard let shape, let broadcast = shape.broadcast, let rescale, let scratch = context.scratch else {
      throw KernelError.invalid("BATCH_MATMUL was not prepared")
    }
    let left = (scratch + lhsScratchOffset).assumingMemoryBound(to: Int32.self)
    try widenMatrices(
      lhs, count: shape.lhsMatrixCount, rows: shape.rows, columns: shape.depth, transposed: adjX, offset: lhsOffset,
      into: left)
    let destination = try tensorData(output)
    func run(_ right: UnsafePointer<Int32>) throws {
      try output.type.visitQuantized(
        IntegerBatchMatMul(
          shape: shape, broadcast: broadcast, lhs: left, rhs: right, rescale: rescale, output: destination,
          context: context))
    }
    if let rhsScratchOffset {
      let right = (scratch + rhsScratchOffset).assumingMemoryBound(to: Int32.self)
      try widenRight(shape, into: right)
      try run(right)
    } else {
      try constantRight.withUnsafeBufferPointer { buffer in
        if let base = buffer.baseAddress { try run(base) }
      }
    }
  }
}

/// Copies the `count` matrices of `tensor` (int8 or int16) as `rows × columns` Int32 matrices in
/// row-major order, each value plus `offset`; with `transposed` every stored matrix is
/// `columns × rows`.
private func widenMatrices(
  _ tensor: RuntimeTensor, count: Int, rows: Int, columns: Int, transposed: Bool, offset: Int32,
  into destination: UnsafeMutablePointer<Int32>
) throws {
  let source = try tensorData(tensor)
  if tensor.type == .int16 {
    widenMatrices(
      UnsafePointer(source.assumingMemoryBound(to: Int16.self)), count: count, rows: rows, columns: columns,
      transposed: transposed, offset: offset, into: destination)
  } else {
    widenMatrices(
      UnsafePointer(source.assumingMemoryBound(to: Int8.self)), count: count, rows: rows, columns: columns,
      transposed: transposed, offset: offset, into: destination)
  }
}

/// ``widenMatrices(_:count:rows:columns:transposed:offset:into:)`` for one element type.
private func widenMatrices<Element: QuantizedInteger>(
  _ source: UnsafePointer<Element>, count: Int, rows: Int, columns: Int, transposed: Bool, offset: Int32,
  into destination: UnsafeMutablePointer<Int32>
) {
  let matrixSize = rows * columns
  for matrix in 0..<count {
    let from = source + matrix * matrixSize
    let to = destination + matrix * matrixSize
    if transposed {
      for row in 0..<rows {
        for column in 0..<columns {
          to[row * columns + column] = Int32(truncatingIfNeeded: from[column * rows + row]) &+ offset
        }
      }
    } else {
      for index in 0..<matrixSize { to[index] = Int32(truncatingIfNeeded: from[index]) &+ offset }
    }
  }
}

/// One evaluation of a quantized batch matrix product over widened operands (every left matrix
/// as M rows of K values, every right one as N rows of K values), specialised for the output
/// element type.
private struct IntegerBatchMatMul: QuantizedTypeVisitor {
  let shape: BatchMatMulShape
  let broadcast: BatchBroadcast
  let lhs: UnsafePointer<Int32>
  let rhs: UnsafePointer<Int32>
  let rescale: MatMulRescale
  let output: UnsafeMutableRawPointer
  let context: EvalContext

  /// Computes every output row (one task each): dot products of a left row with every right row.
  func visit<Output: QuantizedInteger>(_ type: Output.Type) {
    let output = self.output.assumingMemoryBound(to: Output.self)
    let (lhs, rhs, rescale) = (self.lhs, self.rhs, self.rescale)
    let (rows, depth, columns) = (shape.rows, shape.depth, shape.columns)
    broadcast.lhsIndices.withUnsafeBufferPointer { lhsIndices in
      broadcast.rhsIndices.withUnsafeBufferPointer { rhsIndices in
        context.parallelFor(lhsIndices.count * rows) { outputRow in
          let batch = outputRow / rows
          let left = lhs + (lhsIndices[batch] * rows + outputRow % rows) * depth
          let rightMatrix = rhs + rhsIndices[batch] * columns * depth
          let out = output + outputRow * columns
          for column in 0..<columns {
            let right = rightMatrix + column * depth
            var sum: Int64 = 0
            for k in 0..<depth { sum &+= Int64(left[k]) &* Int64(right[k]) }
            out[column] = Output(truncatingIfNeeded: rescale.apply(sum))
          }
        }
      }
    }
  }
}
