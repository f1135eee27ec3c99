/// What the subgraphs of one model runner share: resource variables (by the id VAR_HANDLE gives
/// them), the initialization subgraphs CALL_ONCE has already run, and how deeply subgraph calls
/// (IF, WHILE, CALL_ONCE) are nested at the moment.
import TFLiteLinearAlgebra

final class ModelResources {
  /// Most subgraph calls that may be nested inside one another; deeper nesting is refused so that
  /// a model cannot exhaust the thread's stack.
  static let maximumCallDepth = 32

  /// Most iterations one WHILE may run (``RunnerOptions/maximumLoopIterations``); nil for no limit.
  let maximumLoopIterations: Int?

  /// False when the runner's GEMMs must use the Swift kernels (``RunnerOptions/usesGeneratedKernels``).
  let usesGeneratedKernels: Bool

  /// Creates the shared state of a runner whose loops may run `maximumLoopIterations` times.
  init(maximumLoopIterations: Int? = nil, usesGeneratedKernels: Bool = true) {
    self.maximumLoopIterations = maximumLoopIterations
    self.usesGeneratedKernels = usesGeneratedKernels
  }

  /// Subgraphs being prepared or run right now, each inside the previous one.
  private(set) var callDepth = 0
  /// The ids handed out for each (container, shared name) pair.
  private var variableIDs: [VariableName: Int32] = [:]
  /// The current value of every variable that has been assigned, by id.
  private var variables: [Int32: TensorValue] = [:]
  /// Initialization subgraphs that CALL_ONCE has run to completion.
  private var completedInitializations: Set<Int> = []

  /// Identifies a resource variable as TensorFlow does.
  private struct VariableName: Hashable {
    var container: String
    var sharedName: String
  }

  /// The id of the variable named `sharedName` in `container`, given out in order of first request.
  func variableID(container: String, sharedName: String) -> Int32 {
    let name = VariableName(container: container, sharedName: sharedName)
    if let id = variableIDs[name] { return id }
    let id = Int32(truncatingIfNeeded: variableIDs.count)
    variableIDs[name] = id
    return id
  }

  /// The value of variable `id`, or nil while it has never been assigned.
  func variable(_ id: Int32) -> TensorValue? { variables[id] }

  /// Gives variable `id` the type, shape and values of `tensor` (creating the variable on first use).
  func assign(variable id: Int32, from tensor: RuntimeTensor) throws {
    if let value = variables[id] {
      try value.assign(from: tensor)
    } else {
      variables[id] = try TensorValue(copying: tensor)
    }
  }

  /// True once CALL_ONCE has run initialization subgraph `index`.
  func hasInitialized(subgraph index: Int) -> Bool { completedInitializations.contains(index) }

  /// Records that initialization subgraph `index` ran to completion.
  func markInitialized(subgraph index: Int) { completedInitializations.insert(index) }

  /// Runs `body` one subgraph call deeper; throws instead when that would nest calls beyond
  /// ``maximumCallDepth``.
  func nestedCall<Result>(into subgraph: Int, _ body: () throws -> Result) throws -> Result {
    guard callDepth < Self.maximumCallDepth else {
      throw RuntimeError.invalidModel(
        "subgraph \(subgraph) would be called \(callDepth + 1) levels deep, "
          + "more than the \(Self.maximumCallDepth) allowed")
    }
    callDepth += 1
    defer { callDepth -= 1 }
    return try underGeneratedKernelPolicy(body)
  }

  /// Runs `body` with the generated GEMM kernels allowed or turned off as the runner's options say.
  func underGeneratedKernelPolicy<Result>(_ body: () throws -> Result) rethrows -> Result {
    if usesGeneratedKernels { return try body() }
    return try GeneratedFloatKernels.$areAllowed.withValue(false, operation: body)
  }
}

/// A copy of a tensor's element type, shape and bytes in memory of its own: the value of a resource
/// variable, or a loop variable kept between iterations of a WHILE.
final class TensorValue: TensorContents {
  /// Element type of the copied tensor.
  private(set) var type: ElementType
  /// Shape of the copied tensor.
  private(set) var shape: [Int]
  /// The copied bytes (at least one byte is allocated).
  private var storage: UnsafeMutableRawBufferPointer
  /// Bytes of the value.
  private(set) var byteCount: Int

  /// Copies `tensor`, which must have memory.
  init(copying tensor: RuntimeTensor) throws {
    let source = try Self.readableData(of: tensor)
    type = tensor.type
    shape = tensor.shape
    byteCount = tensor.byteCount
    storage = UnsafeMutableRawBufferPointer.allocate(byteCount: max(byteCount, 1), alignment: 64)
    copyMemoryInThrowingCode(to: storage.baseAddress.unsafelyUnwrapped, from: source, byteCount: byteCount)
  }

  deinit { storage.deallocate() }

  /// Replaces the value by a copy of `tensor`, reusing the memory while it is large enough.
  func assign(from tensor: RuntimeTensor) throws {
    let source = try Self.readableData(of: tensor)
    let bytes = tensor.byteCount
    if bytes > storage.count {
      storage.deallocate()
      storage = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes, alignment: 64)
    }
    type = tensor.type
    if shape != tensor.shape { shape = tensor.shape }
    byteCount = bytes
    let destination = storage.baseAddress.unsafelyUnwrapped
    if destination != source { copyMemoryInThrowingCode(to: destination, from: source, byteCount: bytes) }
  }

  /// The value's bytes.
  var contents: UnsafeRawPointer? { UnsafeRawPointer(storage.baseAddress) }

  /// The memory of `tensor`, which a value can copy (not a string tensor, not unallocated).
  private static func readableData(of tensor: RuntimeTensor) throws -> UnsafeMutableRawPointer {
    guard tensor.type != .string else {
      throw KernelError.unsupported("STRING values cannot be held: \(tensor.summary)")
    }
    guard let data = tensor.data else { throw KernelError.invalid("\(tensor.summary) has no memory") }
    return data
  }
}

/// Typed bytes with a shape that can be copied into a tensor: a tensor itself or a held ``TensorValue``.
protocol TensorContents: AnyObject {
  /// Element type.
  var type: ElementType { get }
  /// Shape.
  var shape: [Int] { get }
  /// Bytes of the values.
  var byteCount: Int { get }
  /// The values, nil when there is no memory.
  var contents: UnsafeRawPointer? { get }
}

extension RuntimeTensor: TensorContents {
  /// The tensor's data, read-only.
  var contents: UnsafeRawPointer? { UnsafeRawPointer(data) }
}

/// Copies `source` into `destination`, which must have the same element type and byte count;
/// `what` names the source in the error otherwise.
func copyContents(
  of source: some TensorContents, into destination: RuntimeTensor, what: @autoclosure () -> String
) throws {
  guard source.type == destination.type, source.byteCount == destination.byteCount,
    let from = source.contents, let to = destination.data
  else {
    throw KernelError.invalid(
      "\(what()) is \(source.type.name)\(source.shape), which does not fit \(destination.summary)")
  }
  if UnsafeRawPointer(to) != from { copyMemoryInThrowingCode(to: to, from: from, byteCount: source.byteCount) }
}
