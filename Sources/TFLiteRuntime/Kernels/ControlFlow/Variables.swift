import TFLiteFormat

// Resource variables: VAR_HANDLE gives the 32-bit id of a variable named by (container, shared
// name), ASSIGN_VARIABLE stores a copy of a tensor under an id and READ_VARIABLE copies it out.
// The values live in the model runner's `ModelResources`, shared by all its subgraphs, so an
// initialization subgraph run by CALL_ONCE can assign what the main subgraph reads.

/// VAR_HANDLE: outputs the id of the variable its options name. The id depends only on the name,
/// so the node is computed once at prepare time.
final class VarHandleKernel: Kernel {
  private let output: RuntimeTensor
  private let id: Int32

  init(node: Node) throws {
    try node.expect(inputs: 0, outputs: 1)
    output = try node.output(0)
    try checkHandleType(output, op: "VAR_HANDLE")
    switch node.options {
    case .varHandleOptions(let options):
      id = node.resources.variableID(container: options.container ?? "", sharedName: options.sharedName ?? "")
    case .none:
      id = node.resources.variableID(container: "", sharedName: "")
    default:
      throw KernelError.invalid("VAR_HANDLE needs VarHandleOptions")
    }
  }

  func prepare(_ context: inout PrepareContext) throws {
    if output.elementCount != 1 { output.shape = [1] }
  }

  func eval(_ context: EvalContext) throws {
    guard let data = output.data else { throw KernelError.invalid("the VAR_HANDLE output has no memory") }
    data.storeBytes(of: id, as: Int32.self)
  }
}

/// READ_VARIABLE: copies the current value of the variable whose id is input 0.
///
/// The output takes the variable's shape. Before the variable has a value (it is assigned while
/// running, often by CALL_ONCE), the node is prepared while running, right before it reads.
final class ReadVariableKernel: Kernel {
  /// The value read changes with every ASSIGN_VARIABLE, so it is never read ahead at prepare time.
  static var hasSideEffects: Bool { true }

  private let resources: ModelResources
  private let handle: RuntimeTensor
  private let output: RuntimeTensor

  init(node: Node) throws {
    try node.expect(inputs: 1, outputs: 1)
    handle = try handleOperand(of: node)
    output = try node.output(0)
    try refuseStrings([output], op: node.opName)
    resources = node.resources
  }

  func prepare(_ context: inout PrepareContext) throws {
    guard handle.hasValuesForPrepare else {
      throw KernelError.needsInputValues("the READ_VARIABLE handle is computed at run time")
    }
    let id = try variableID(in: handle, op: "READ_VARIABLE")
    guard let value = resources.variable(id) else {
      guard context.preparesWhileRunning else {
        throw KernelError.needsInputValues("variable \(id) gets its value while running")
      }
      throw KernelError.invalid("READ_VARIABLE of variable \(id), which no ASSIGN_VARIABLE has given a value")
    }
    guard value.type == output.type else {
      throw KernelError.invalid("variable \(id) holds \(value.type.name), READ_VARIABLE gives \(output.type.name)")
    }
    output.shape = value.shape
  }

  func eval(_ context: EvalContext) throws {
    let id = try variableID(in: handle, op: "READ_VARIABLE")
    guard let value = resources.variable(id) else {
      throw KernelError.invalid("READ_VARIABLE of variable \(id), which no ASSIGN_VARIABLE has given a value")
    }
    try copyContents(of: value, into: output, what: "variable \(id)")
  }
}

/// ASSIGN_VARIABLE: gives the variable whose id is input 0 a copy of input 1 (its type, shape and
/// values), creating the variable on first use.
final class AssignVariableKernel: Kernel {
  /// Changing the variable is its whole point.
  static var hasSideEffects: Bool { true }

  private let resources: ModelResources
  private let handle: RuntimeTensor
  private let value: RuntimeTensor

  init(node: Node) throws {
    try node.expect(inputs: 2, outputs: 0)
    handle = try handleOperand(of: node)
    value = try node.input(1)
    try refuseStrings([value], op: node.opName)
    resources = node.resources
  }

  func prepare(_ context: inout PrepareContext) throws {
    guard handle.elementCount == 1 else {
      throw KernelError.invalid("ASSIGN_VARIABLE needs a handle with one element, got \(handle.summary)")
    }
  }

  func eval(_ context: EvalContext) throws {
    try resources.assign(variable: variableID(in: handle, op: "ASSIGN_VARIABLE"), from: value)
  }
}

/// Throws unless `tensor` can hold a variable id (RESOURCE, or INT32 as TFLite also accepts).
private func checkHandleType(_ tensor: RuntimeTensor, op: String) throws {
  guard tensor.type == .resource || tensor.type == .int32 else {
    throw KernelError.invalid("\(op) needs a RESOURCE or INT32 variable handle, got \(tensor.type.name)")
  }
}

/// Input 0 of `node`, the handle of the variable it reads or assigns.
private func handleOperand(of node: Node) throws -> RuntimeTensor {
  let handle = try node.input(0)
  try checkHandleType(handle, op: node.opName)
  return handle
}

/// The variable id held by `handle`, which must have one element.
private func variableID(in handle: RuntimeTensor, op: String) throws -> Int32 {
  guard handle.elementCount == 1, let data = handle.data else {
    throw KernelError.invalid("\(op) needs a variable handle with one element, got \(handle.summary)")
  }
  return data.loadUnaligned(as: Int32.self)
}
