/// The integer values of an int32 or int64 tensor that `prepare` needs to size an output (a shape,
/// axis or paddings operand). When the values are only known at run time, throws
/// ``KernelError/needsInputValues(_:)`` and the runtime prepares the node again during `invoke()`.
func constantIntegers(_ tensor: RuntimeTensor, op: String, operand: String) throws -> [Int] {
  guard tensor.hasValuesForPrepare, let data = tensor.data else {
    throw KernelError.needsInputValues("\(op) \(operand) is computed at run time")
  }
  let count = tensor.elementCount
  switch tensor.type {
  case .int32: return UnsafeBufferPointer(start: data.assumingMemoryBound(to: Int32.self), count: count).map { Int($0) }
  case .int64: return UnsafeBufferPointer(start: data.assumingMemoryBound(to: Int64.self), count: count).map { Int($0) }
  default: throw KernelError.invalid("\(op) needs an INT32 or INT64 \(operand), got \(tensor.type.name)")
  }
}
