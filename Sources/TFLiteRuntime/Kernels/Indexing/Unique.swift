// UNIQUE: the distinct values of a 1-D tensor in order of first appearance, and for every element
// the position of its value among them. Values are equal when neither is less than the other (as
// TFLite's ordered map has it, so −0 and 0 are one value). The count depends on the values, so the
// node is prepared once its input is known.
//
// Without allocating: sort the positions by value (heap sort, equal values by position), give each
// run of equal values its first position, then number the first positions in input order.

/// Finds the distinct values of `values[0..<count]`: writes each element's value number into
/// `ids`, the distinct values into `distinct` (when given), and returns how many there are.
/// `order` is scratch for `count` positions.
func distinctValues<Value: Comparable>(
  _ values: UnsafePointer<Value>, count: Int, order: UnsafeMutablePointer<Int32>, ids: UnsafeMutablePointer<Int32>,
  distinct: UnsafeMutablePointer<Value>?
) -> Int {
  rankTop(row: values, length: count, k: count, indices: order)
  // ids[i] first holds the first position of the value at i.
  var runStart = 0
  for position in 0..<count {
    let (current, previous) = (values[Int(order[position])], values[Int(order[runStart])])
    if current < previous || previous < current { runStart = position }
    ids[Int(order[position])] = order[runStart]
  }
  var found = 0
  for index in 0..<count {
    let first = Int(ids[index])
    if first == index {
      distinct?[found] = values[index]
      ids[index] = Int32(truncatingIfNeeded: found)
      found &+= 1
    } else {
      ids[index] = ids[first]
    }
  }
  return found
}

// MARK: - Kernel

/// UNIQUE of a 1-D float32, int8, uint8, int16, uint16, int32 or int64 tensor; int32 or int64 indices.
final class UniqueKernel: Kernel {
  private let input: RuntimeTensor
  private let distinct: RuntimeTensor
  private let indices: RuntimeTensor
  private var orderOffset = 0
  private var idsOffset = 0

  init(node: Node) throws {
    try node.expect(inputs: 1, outputs: 2)
    input = try node.input(0)
    distinct = try node.output(0)
    indices = try node.output(1)
    _ = try commonElementType(
      [input, distinct], allowed: [.float32, .int8, .uint8, .int16, .uint16, .int32, .int64], operatorName: "UNIQUE")
    try requireSameQuantization([input, distinct], op: "UNIQUE")
    guard indices.type == .int32 || indices.type == .int64 else {
      throw KernelError.unsupported("UNIQUE with \(indices.type.name) indices")
    }
  }

  func prepare(_ context: inout PrepareContext) throws {
    guard input.shape.count == 1 else { throw KernelError.invalid("UNIQUE needs a 1-D input, got \(input.shape)") }
    guard input.hasValuesForPrepare, let data = input.data else {
      throw KernelError.needsInputValues("UNIQUE input is computed at run time")
    }
    let count = input.elementCount
    var scratch = ScratchLayout()
    orderOffset = scratch.reserve(bytes: count * 4)
    idsOffset = scratch.reserve(bytes: count * 4)
    context.requestScratch(bytes: scratch.byteCount)
    let memory = UnsafeMutableRawPointer.allocate(byteCount: max(scratch.byteCount, 64), alignment: 64)
    defer { memory.deallocate() }
    distinct.shape = [run(data, scratch: memory, distinct: nil)]
    indices.shape = input.shape
  }

  func eval(_ context: EvalContext) throws {
    let source = try tensorData(input)
    let values = try tensorData(distinct)
    let positions = try tensorData(indices)
    guard let scratch = context.scratch else { throw KernelError.invalid("UNIQUE: eval before prepare") }
    let found = run(source, scratch: scratch, distinct: values)
    guard found == distinct.elementCount else {
      throw KernelError.invalid("UNIQUE: the input changed after its output was sized")
    }
    let ids = (scratch + idsOffset).assumingMemoryBound(to: Int32.self)
    if indices.type == .int32 {
      copyMemoryInThrowingCode(to: positions, from: ids, byteCount: input.elementCount * 4)
    } else {
      let wide = positions.assumingMemoryBound(to: Int64.self)
      for index in 0..<input.elementCount { wide[index] = Int64(ids[index]) }
    }
  }

  /// `distinctValues` over the input typed by its element type; `distinct` receives the values when given.
  private func run(_ data: UnsafeMutableRawPointer, scratch: UnsafeMutableRawPointer, distinct: UnsafeMutableRawPointer?) -> Int {
    let order = (scratch + orderOffset).assumingMemoryBound(to: Int32.self)
    let ids = (scratch + idsOffset).assumingMemoryBound(to: Int32.self)
    let count = input.elementCount
    func typed<Value: Comparable>(_ type: Value.Type) -> Int {
      distinctValues(
        data.assumingMemoryBound(to: Value.self), count: count, order: order, ids: ids,
        distinct: distinct?.assumingMemoryBound(to: Value.self))
    }
    switch input.type {
    case .float32: return typed(Float.self)
    case .int8: return typed(Int8.self)
    case .uint8: return typed(UInt8.self)
    case .int16: return typed(Int16.self)
    case .uint16: return typed(UInt16.self)
    case .int32: return typed(Int32.self)
    default: return typed(Int64.self)
    }
  }
}
