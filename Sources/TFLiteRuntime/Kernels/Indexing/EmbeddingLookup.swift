// EMBEDDING_LOOKUP: rows of a table [rows, …] picked by int32 ids [n]. Rows are copied as bytes
// (any element type, quantized tables keep their quantization), or — for an int8 / uint8 table
// with a float32 output (hybrid models) — dequantized with the table's scale or the row's own
// scale. As TFLite does, hybrid tables are symmetric and their bytes are read as int8.

/// EMBEDDING_LOOKUP's row copies, planned for one table shape.
struct EmbeddingRows {
  /// Rows in the table.
  let rowCount: Int
  /// Elements per row (the product of the table axes after the first).
  let rowElements: Int

  /// Checks every id before any row is written.
  func validate(_ ids: UnsafePointer<Int32>, count: Int) throws {
    for position in 0..<count where ids[position] < 0 || Int(ids[position]) >= rowCount {
      throw KernelError.invalid("EMBEDDING_LOOKUP: id \(ids[position]) is out of range [0, \(rowCount))")
    }
  }

  /// Copies row `ids[i]` of `table` to row `i` of `output`, elements of `elementSize` bytes.
  func copy(ids: UnsafePointer<Int32>, count: Int, table: UnsafeRawPointer, output: UnsafeMutableRawPointer, elementSize: Int) {
    let rowBytes = rowElements &* elementSize
    for position in 0..<count {
      (output + position &* rowBytes).copyMemory(from: table + Int(ids[position]) &* rowBytes, byteCount: rowBytes)
    }
  }

  /// Dequantizes row `ids[i]` of an int8 `table` into row `i` of `output`, with `scales[row]`
  /// (one scale when `scales` holds one).
  func dequantize(ids: UnsafePointer<Int32>, count: Int, table: UnsafeRawPointer, scales: UnsafePointer<Float>, scaleCount: Int, output: UnsafeMutablePointer<Float>) {
    for position in 0..<count {
      let row = Int(ids[position])
      dequantizePerTensor(
        table + row &* rowElements, Int8.self, to: output + position &* rowElements, count: rowElements,
        scale: scales[scaleCount == 1 ? 0 : row], zeroPoint: 0)
    }
  }
}

// MARK: - Kernel

/// EMBEDDING_LOOKUP of int32 ids [n] in a table of rank ≥ 2.
final class EmbeddingLookupKernel: Kernel {
  private static let opName = "EMBEDDING_LOOKUP"
  private let ids: RuntimeTensor
  private let table: RuntimeTensor
  private let output: RuntimeTensor
  /// The row scales of a hybrid table (empty when rows are copied).
  private let scales: [Float]
  private let elementSize: Int
  private var rows: EmbeddingRows?

  init(node: Node) throws {
    (ids, table, output) = try node.twoInputsAndOutput()
    guard ids.type == .int32 else { throw KernelError.unsupported("EMBEDDING_LOOKUP with \(ids.type.name) ids") }
    if (table.type == .int8 || table.type == .uint8) && output.type == .float32 {
      guard let quantization = table.quantization, quantization.zeroPoints.allSatisfy({ $0 == 0 }) else {
        throw KernelError.unsupported("EMBEDDING_LOOKUP of a hybrid table without symmetric quantization")
      }
      guard quantization.scales.count == 1 || quantization.axis == 0 else {
        throw KernelError.unsupported("EMBEDDING_LOOKUP with scales along axis \(quantization.axis)")
      }
      scales = quantization.scales
      elementSize = 1
    } else {
      try requireSameType([table, output], op: Self.opName)
      try requireSameQuantization([table, output], op: Self.opName)
      scales = []
      elementSize = try movableElementSize(table, op: Self.opName)
    }
  }

  func prepare(_ context: inout PrepareContext) throws {
    guard ids.shape.count == 1, table.shape.count >= 2 else {
      throw KernelError.invalid("EMBEDDING_LOOKUP needs 1-D ids and a table of rank ≥ 2, got \(ids.shape) and \(table.shape)")
    }
    guard scales.count == 1 || scales.isEmpty || scales.count == table.shape[0] else {
      throw KernelError.invalid("EMBEDDING_LOOKUP: \(scales.count) scales for \(table.shape[0]) rows")
    }
    output.shape = [ids.shape[0]] + table.shape[1...]
    _ = try checkedElementCount(output.shape, op: Self.opName)
    rows = EmbeddingRows(rowCount: table.shape[0], rowElements: table.shape[1...].reduce(1, *))
  }

  func eval(_ context: EvalContext) throws {
    guard let rows else { throw KernelError.invalid("EMBEDDING_LOOKUP: eval before prepare") }
    let idValues = UnsafePointer(try tensorData(ids).assumingMemoryBound(to: Int32.self))
    let (source, destination) = try evalPointers(table, output, op: Self.opName)
    let count = ids.elementCount
    try rows.validate(idValues, count: count)
    if scales.isEmpty {
      rows.copy(ids: idValues, count: count, table: source, output: destination, elementSize: elementSize)
    } else {
      scales.withUnsafeBufferPointer { scales in
        guard let base = scales.baseAddress else { return }
        rows.dequantize(
          ids: idValues, count: count, table: source, scales: base, scaleCount: scales.count,
          output: destination.assumingMemoryBound(to: Float.self))
      }
    }
  }
}
