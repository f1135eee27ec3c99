import TFLiteFormat
import TFLiteLinearAlgebra

// Control flow: IF runs one of two branch subgraphs, WHILE repeats a body subgraph while a
// condition subgraph gives true, CALL_ONCE runs an initialization subgraph on the first invoke of
// the model runner.
//
// `prepare` resizes a called subgraph's inputs to the values the node passes and allocates it;
// `eval` copies the values in, invokes the subgraph and copies its outputs out. When the node's
// output shapes are only known by running (branches of different shapes, a body that changes the
// shapes of the loop variables, subgraphs whose own shapes depend on values), `prepare` asks to be
// called while running and then computes the result itself, which `eval` copies out.

/// IF: runs the `then` subgraph when the bool input 0 is true, the `else` subgraph otherwise, on
/// inputs 1…; the branch's outputs are the node's outputs.
final class IfKernel: Kernel {
  /// A branch may assign variables, so IF is never computed ahead at prepare time.
  static var hasSideEffects: Bool { true }

  private let node: Node
  private let condition: RuntimeTensor
  private let arguments: [RuntimeTensor]
  private let thenIndex: Int
  private let elseIndex: Int
  /// The branch that `prepare` already ran (while running, for value-dependent shapes), whose
  /// outputs `eval` only copies; nil when `eval` runs the branch.
  private var branchRunByPrepare: SubgraphExecutor?

  init(node: Node) throws {
    guard case .ifOptions(let options) = node.options else { throw KernelError.invalid("IF needs IfOptions") }
    condition = try node.input(0)
    guard condition.type == .bool else {
      throw KernelError.invalid("IF needs a BOOL condition, got \(condition.type.name)")
    }
    arguments = try (1..<node.inputs.count).map { try node.input($0) }
    try refuseStrings(arguments + node.outputs, op: "IF")
    thenIndex = Int(options.thenSubgraphIndex)
    elseIndex = Int(options.elseSubgraphIndex)
    self.node = node
  }

  func prepare(_ context: inout PrepareContext) throws {
    branchRunByPrepare = nil
    guard condition.elementCount == 1 else {
      throw KernelError.invalid("IF needs a condition with one element, got \(condition.summary)")
    }
    if context.preparesWhileRunning {
      let branch = try chosenBranch()
      try run(branch)
      for (output, result) in zip(node.outputs, branch.outputs) { output.shape = result.shape }
      branchRunByPrepare = branch
      return
    }
    let thenBranch = try calledSubgraph(node, thenIndex, role: "then")
    let elseBranch = try calledSubgraph(node, elseIndex, role: "else")
    try prepareCall(of: thenBranch)
    try prepareCall(of: elseBranch)
    let sameStaticShapes =
      !thenBranch.preparesNodesWhileRunning && !elseBranch.preparesNodesWhileRunning
      && zip(thenBranch.outputs, elseBranch.outputs).allSatisfy { $0.shape == $1.shape }
    guard sameStaticShapes else {
      throw KernelError.needsInputValues("the IF branches give outputs of different or value-dependent shapes")
    }
    for (output, result) in zip(node.outputs, thenBranch.outputs) { output.shape = result.shape }
  }

  func eval(_ context: EvalContext) throws {
    if let branch = branchRunByPrepare {
      try copyAll(branch.outputs, into: node.outputs, what: "IF branch output")
      return
    }
    let branch = try chosenBranch()
    try run(branch)
    try copyAll(branch.outputs, into: node.outputs, what: "IF branch output")
  }

  /// Runs `branch` on the node's arguments, preparing it first when it is not prepared for them
  /// (another node may have prepared the same subgraph for other shapes since).
  private func run(_ branch: SubgraphExecutor) throws {
    try prepareCall(of: branch)
    try copyAll(arguments, into: branch.inputs, what: "IF input")
    try branch.invoke()
  }

  /// The subgraph the condition selects.
  private func chosenBranch() throws -> SubgraphExecutor {
    guard let value = condition.data else { throw KernelError.invalid("the IF condition has no memory") }
    let isTrue = value.load(as: UInt8.self) != 0
    return try calledSubgraph(node, isTrue ? thenIndex : elseIndex, role: isTrue ? "then" : "else")
  }

  /// Checks that `branch` takes the node's arguments and gives its outputs, and prepares it for them.
  private func prepareCall(of branch: SubgraphExecutor) throws {
    try checkResults(of: branch, against: node.outputs, op: "IF")
    try bind(arguments, to: branch, op: "IF")
  }
}

/// WHILE: starting from its inputs, replaces the loop variables by the outputs of the body
/// subgraph as long as the condition subgraph (given the same variables) outputs true; the node's
/// outputs are the final variables.
final class WhileKernel: Kernel {
  /// The body may assign variables, so WHILE is never computed ahead at prepare time.
  static var hasSideEffects: Bool { true }

  private let node: Node
  private let initialValues: [RuntimeTensor]
  private let conditionIndex: Int
  private let bodyIndex: Int
  /// The final loop variables when `prepare` ran the loop (while running, for shapes that change
  /// from one iteration to the next); `eval` then only copies them out.
  private var heldValues: [TensorValue] = []
  private var loopRunByPrepare = false

  init(node: Node) throws {
    guard case .whileOptions(let options) = node.options else { throw KernelError.invalid("WHILE needs WhileOptions") }
    initialValues = try node.inputs.indices.map { try node.input($0) }
    guard node.outputs.count == initialValues.count else {
      throw KernelError.invalid(
        "WHILE needs as many outputs as inputs, got \(initialValues.count) inputs and \(node.outputs.count) outputs")
    }
    for (position, (input, output)) in zip(initialValues, node.outputs).enumerated() where input.type != output.type {
      throw KernelError.invalid("WHILE loop variable \(position) is \(input.type.name) in and \(output.type.name) out")
    }
    try refuseStrings(initialValues, op: "WHILE")
    conditionIndex = Int(options.condSubgraphIndex)
    bodyIndex = Int(options.bodySubgraphIndex)
    guard conditionIndex != bodyIndex else {
      throw KernelError.invalid("WHILE needs different condition and body subgraphs, both are \(bodyIndex)")
    }
    self.node = node
  }

  func prepare(_ context: inout PrepareContext) throws {
    loopRunByPrepare = false
    let condition = try calledSubgraph(node, conditionIndex, role: "condition")
    let body = try calledSubgraph(node, bodyIndex, role: "body")
    guard condition.outputs.count == 1, condition.outputs[0].type == .bool else {
      throw KernelError.invalid(
        "the WHILE condition subgraph \(conditionIndex) must give one BOOL output, "
          + "it gives \(condition.outputs.map(\.summary))")
    }
    try checkResults(of: body, against: node.outputs, op: "WHILE")
    if context.preparesWhileRunning {
      try runHoldingValues(condition: condition, body: body)
      for (output, value) in zip(node.outputs, heldValues) { output.shape = value.shape }
      loopRunByPrepare = true
      return
    }
    try bind(initialValues, to: condition, op: "WHILE")
    try bind(initialValues, to: body, op: "WHILE")
    let shapesStay =
      !body.preparesNodesWhileRunning && zip(body.outputs, initialValues).allSatisfy { $0.shape == $1.shape }
    guard shapesStay else {
      throw KernelError.needsInputValues(
        "the WHILE body changes the loop variables' shapes or has value-dependent shapes")
    }
    for (output, input) in zip(node.outputs, initialValues) { output.shape = input.shape }
  }

  /// With shapes that stay the same, the node's outputs hold the loop variables between iterations.
  func eval(_ context: EvalContext) throws {
    if loopRunByPrepare {
      try copyAll(heldValues, into: node.outputs, what: "WHILE result")
      return
    }
    let condition = try calledSubgraph(node, conditionIndex, role: "condition")
    let body = try calledSubgraph(node, bodyIndex, role: "body")
    // Another node may have prepared the same subgraphs for other shapes since.
    try bind(initialValues, to: condition, op: "WHILE")
    try bind(initialValues, to: body, op: "WHILE")
    try copyAll(initialValues, into: node.outputs, what: "WHILE input")
    var iterations = 0
    while try holds(condition, for: node.outputs) {
      try countIteration(&iterations)
      try copyAll(node.outputs, into: body.inputs, what: "WHILE loop variable")
      try body.invoke()
      try copyAll(body.outputs, into: node.outputs, what: "WHILE body output")
    }
  }

  /// Runs the loop on copies of the variables that may change shape between iterations; the
  /// condition and body are prepared again whenever the shapes change.
  private func runHoldingValues(condition: SubgraphExecutor, body: SubgraphExecutor) throws {
    if heldValues.count == initialValues.count {
      for (held, initial) in zip(heldValues, initialValues) { try held.assign(from: initial) }
    } else {
      heldValues = try initialValues.map { try TensorValue(copying: $0) }
    }
    var iterations = 0
    while true {
      try bind(heldValues, to: condition, op: "WHILE")
      guard try holds(condition, for: heldValues) else { return }
      try countIteration(&iterations)
      try bind(heldValues, to: body, op: "WHILE")
      try copyAll(heldValues, into: body.inputs, what: "WHILE loop variable")
      try body.invoke()
      for (held, result) in zip(heldValues, body.outputs) { try held.assign(from: result) }
    }
  }

  /// Counts one more iteration; throws when that goes beyond ``RunnerOptions/maximumLoopIterations``.
  private func countIteration(_ iterations: inout Int) throws {
    iterations += 1
    if let limit = node.resources.maximumLoopIterations, iterations > limit {
      throw KernelError.invalid("WHILE did not finish within the \(limit) iterations allowed (RunnerOptions.maximumLoopIterations)")
    }
  }

  /// Runs `condition` on `values` and returns its boolean output.
  private func holds(_ condition: SubgraphExecutor, for values: [some TensorContents]) throws -> Bool {
    try copyAll(values, into: condition.inputs, what: "WHILE loop variable")
    try condition.invoke()
    let result = condition.outputs[0]
    let shape = result.shape
    guard result.type == .bool, shape.isEmpty || (shape.count == 1 && shape[0] == 1), let value = result.data else {
      throw KernelError.invalid("the WHILE condition must give a BOOL scalar, it gave \(result.summary)")
    }
    return value.load(as: UInt8.self) != 0
  }
}

/// CALL_ONCE: runs the initialization subgraph (no inputs, no outputs) on the first invoke of the
/// model runner, and does nothing afterwards.
final class CallOnceKernel: Kernel {
  /// Its whole point is the effect of the subgraph it runs.
  static var hasSideEffects: Bool { true }

  private let node: Node
  private let initializationIndex: Int

  init(node: Node) throws {
    guard case .callOnceOptions(let options) = node.options else {
      throw KernelError.invalid("CALL_ONCE needs CallOnceOptions")
    }
    try node.expect(inputs: 0, outputs: 0)
    initializationIndex = Int(options.initSubgraphIndex)
    self.node = node
  }

  func prepare(_ context: inout PrepareContext) throws {
    guard !node.resources.hasInitialized(subgraph: initializationIndex) else { return }
    try preparedInitialization()
  }

  func eval(_ context: EvalContext) throws {
    guard !node.resources.hasInitialized(subgraph: initializationIndex) else { return }
    try preparedInitialization().invoke()
    node.resources.markInitialized(subgraph: initializationIndex)
  }

  /// The initialization subgraph, checked and allocated.
  @discardableResult
  private func preparedInitialization() throws -> SubgraphExecutor {
    let subgraph = try calledSubgraph(node, initializationIndex, role: "initialization")
    guard subgraph.inputs.isEmpty, subgraph.outputs.isEmpty else {
      throw KernelError.invalid(
        "the CALL_ONCE subgraph \(initializationIndex) must have no inputs and outputs, "
          + "it has \(subgraph.inputs.count) and \(subgraph.outputs.count)")
    }
    if !subgraph.isAllocated { try subgraph.allocateTensors() }
    return subgraph
  }
}

/// The executor of subgraph `index`, which `node` calls as its `role` subgraph.
private func calledSubgraph(_ node: Node, _ index: Int, role: String) throws -> SubgraphExecutor {
  do {
    return try node.subgraph(index)
  } catch RuntimeError.indexOutOfRange(_, _, let count) {
    throw KernelError.invalid(
      "\(node.opName) \(role) subgraph \(index) does not exist: the model has \(count) subgraphs")
  }
}

/// Throws unless `subgraph` gives as many outputs as `results`, with the same element types.
private func checkResults(of subgraph: SubgraphExecutor, against results: [RuntimeTensor], op: String) throws {
  guard subgraph.outputs.count == results.count else {
    throw KernelError.invalid(
      "\(op) subgraph \(subgraph.subgraphIndex) gives \(subgraph.outputs.count) outputs, the node has \(results.count)")
  }
  for (position, (given, expected)) in zip(subgraph.outputs, results).enumerated() where given.type != expected.type {
    throw KernelError.invalid(
      "\(op) subgraph \(subgraph.subgraphIndex) output \(position) is \(given.type.name), "
        + "the node's is \(expected.type.name)")
  }
}

/// Checks that `subgraph` takes `arguments` (their count and element types), gives its inputs the
/// arguments' shapes and allocates it, unless it is already allocated for those shapes.
private func bind(_ arguments: [some TensorContents], to subgraph: SubgraphExecutor, op: String) throws {
  guard subgraph.inputs.count == arguments.count else {
    throw KernelError.invalid(
      "\(op) subgraph \(subgraph.subgraphIndex) takes \(subgraph.inputs.count) inputs, "
        + "the node passes \(arguments.count)")
  }
  for (position, (argument, input)) in zip(arguments, subgraph.inputs).enumerated() {
    guard argument.type == input.type else {
      throw KernelError.invalid(
        "\(op) subgraph \(subgraph.subgraphIndex) input \(position) is \(input.type.name), "
          + "the node passes \(argument.type.name)")
    }
    if input.shape != argument.shape { try subgraph.resizeInput(at: position, to: argument.shape) }
  }
  if !subgraph.isAllocated { try subgraph.allocateTensors() }
}

/// Copies each of `sources` into the destination at the same position.
private func copyAll(_ sources: [some TensorContents], into destinations: [RuntimeTensor], what: String) throws {
  for (position, (source, destination)) in zip(sources, destinations).enumerated() {
    try copyContents(of: source, into: destination, what: "\(what) \(position)")
  }
}

/// Throws ``KernelError/unsupported(_:)`` for STRING tensors, whose values control flow and
/// variables cannot copy.
func refuseStrings(_ tensors: [RuntimeTensor], op: String) throws {
  if let text = tensors.first(where: { $0.type == .string }) {
    throw KernelError.unsupported("\(op) does not copy STRING tensors: \(text.summary)")
  }
}
