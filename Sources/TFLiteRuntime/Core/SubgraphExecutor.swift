import TFLiteFormat

/// Runs one subgraph of a model: its tensors, its kernels in execution order and its arena.
///
/// Not thread-safe: use one executor from one thread at a time.
public final class SubgraphExecutor {
  /// Index of the subgraph in the model.
  public let subgraphIndex: Int
  /// Every tensor of the subgraph, by index.
  public let tensors: [RuntimeTensor]
  /// The subgraph's input tensors, in order.
  public let inputs: [RuntimeTensor]
  /// The subgraph's output tensors, in order.
  public let outputs: [RuntimeTensor]
  /// The nodes in execution order.
  public let nodes: [Node]
  /// The current memory plan (valid after ``allocateTensors()``).
  public private(set) var memoryPlan = MemoryPlan(requests: [])
  /// True once tensors are allocated and no resize has happened since.
  public private(set) var isAllocated = false

  private let kernels: [any Kernel]
  private let threadCount: Int
  private let roundingPolicy: RoundingPolicy
  /// The most bytes one block of memory may have (``RunnerOptions/memoryLimit``).
  private let memoryLimit: Int
  /// Tensors no node writes and the model gives no data (the subgraph inputs, variables, and
  /// tensors read but never computed): their shapes come from the model or the caller.
  private let unwrittenTensors: [RuntimeTensor]
  /// Scratch offset in the arena per node (nil when the node needs none).
  private var scratchOffsets: [Int?]
  /// Nodes computed at prepare time (their outputs are constants until the next allocation).
  private var isFolded: [Bool]
  /// Nodes whose work a later node's fused kernel does (`OperatorFusion`): prepared, never run.
  private let isFusedAway: [Bool]
  /// The first node whose output shape depends on values only known while running: it and every
  /// later node are prepared during `invoke()` and their outputs get memory of their own.
  private var firstRunTimePreparedNode: Int?
  /// Scratch memory of the nodes prepared during `invoke()`, grown as needed.
  private var runTimeScratch: UnsafeMutableRawBufferPointer?
  private var arena: ArenaMemory?
  /// The model bytes, kept alive for the constant tensors that point into them.
  private let model: TFLiteModel
  /// What every subgraph of the model shares (variables, initialization status, call depth).
  let resources: ModelResources
  /// True while the subgraph is being prepared or run, so that a model whose control flow calls
  /// this subgraph from inside itself is refused instead of recursing.
  private var isInUse = false
  /// The bytes a variable tensor starts from when the model gives it constant data (LiteRT refuses
  /// such variables; this runtime starts from the data), by tensor index.
  private var variableInitialValues: [Int: [UInt8]] = [:]

  /// Builds the tensors and kernels of subgraph `subgraphIndex`.
  /// Throws ``RuntimeError/unsupportedOperators(_:)`` listing every node the runtime cannot run.
  init(
    model: TFLiteModel, subgraphIndex: Int, threadCount: Int, roundingPolicy: RoundingPolicy = .doubleRounding,
    memoryLimit: Int = RunnerOptions.defaultMemoryLimit, resources: ModelResources,
    subgraphProvider: @escaping (Int) throws -> SubgraphExecutor
  ) throws {
    let schema = model.model
    guard subgraphIndex >= 0, subgraphIndex < schema.subgraphs.count else {
      throw RuntimeError.indexOutOfRange(what: "subgraph", index: subgraphIndex, count: schema.subgraphs.count)
    }
    let subgraph = schema.subgraphs[subgraphIndex]
    self.model = model
    self.resources = resources
    self.subgraphIndex = subgraphIndex
    self.threadCount = max(threadCount, 1)
    self.roundingPolicy = roundingPolicy
    self.memoryLimit = memoryLimit
    let tensors = try subgraph.tensors.enumerated().map { index, tensor in
      try Self.makeTensor(tensor, index: index, model: model)
    }
    self.tensors = tensors
    func tensor(_ index: Int32, role: String) throws -> RuntimeTensor {
      guard index >= 0, Int(index) < tensors.count else {
        throw RuntimeError.invalidModel("subgraph \(subgraphIndex) \(role) refers to tensor \(index) of \(tensors.count)")
      }
      return tensors[Int(index)]
    }
    inputs = try subgraph.inputs.map { try tensor($0, role: "input") }
    outputs = try subgraph.outputs.map { try tensor($0, role: "output") }

    try Self.densifySparseConstants(in: subgraph, tensors: tensors, model: model)
    var nodes: [Node] = []
    var kernels: [any Kernel] = []
    var unsupported: [UnsupportedOperator] = []
    for (nodeIndex, op) in subgraph.operators.enumerated() {
      let opcodeIndex = Int(op.opcodeIndex)
      guard opcodeIndex < schema.operatorCodes.count else {
        throw RuntimeError.invalidModel("node \(nodeIndex) uses operator code \(opcodeIndex) of \(schema.operatorCodes.count)")
      }
      let code = schema.operatorCodes[opcodeIndex]
      let opName = OperatorSupport.operatorName(builtinCode: code.resolvedBuiltinCode.rawValue, customCode: code.customCode)
      let node = Node(
        index: nodeIndex, opName: opName, version: Int(code.version),
        inputs: try op.inputs.map { $0 < 0 ? nil : try tensor($0, role: "node \(nodeIndex) input") },
        outputs: try op.outputs.map { try tensor($0, role: "node \(nodeIndex) output") },
        options: op.builtinOptions,
        customOptions: model.customOptions(of: op),
        subgraph: subgraphProvider, resources: resources)
      nodes.append(node)
      do {
        kernels.append(try KernelRegistry.makeKernel(for: node))
      } catch let KernelError.unsupported(reason) {
        unsupported.append(
          UnsupportedOperator(subgraph: subgraphIndex, node: nodeIndex, opName: opName, version: node.version, reason: reason))
      } catch {
        unsupported.append(
          UnsupportedOperator(subgraph: subgraphIndex, node: nodeIndex, opName: opName, version: node.version, reason: "\(error)"))
      }
    }
    guard unsupported.isEmpty else { throw RuntimeError.unsupportedOperators(unsupported) }
    let written = try Self.checkDataFlow(of: nodes, inputs: inputs, subgraphIndex: subgraphIndex)
    unwrittenTensors = tensors.filter { !written.contains($0.index) && !$0.isModelConstant }
    var isFusedAway = Array(repeating: false, count: nodes.count)
    for fusion in OperatorFusion.find(in: nodes, keptTensors: Set(outputs.map(\.index))) {
      kernels[fusion.consumer] = fusion.kernel
      isFusedAway[fusion.producer] = true
    }
    self.isFusedAway = isFusedAway
    self.nodes = nodes
    self.kernels = kernels
    scratchOffsets = Array(repeating: nil, count: nodes.count)
    isFolded = Array(repeating: false, count: nodes.count)
    for variable in tensors where variable.isVariable {
      try checkedByteCount(variable, what: "variable tensor")
      // The initial value is the constant data, if any: the model's bytes, or the dense copy of a
      // sparse constant, which must stay allocated until it is copied.
      let denseCopy = variable.ownedMemory
      variable.ownedMemory = nil
      let initial = variable.data
      let initialByteCount = denseCopy?.count ?? model.tensorData(subgraph.tensors[variable.index]).count
      variable.allocateOwnedMemory()
      if let initial {
        variableInitialValues[variable.index] = [UInt8](
          UnsafeRawBufferPointer(start: initial, count: min(initialByteCount, variable.byteCount)))
      }
      denseCopy?.deallocate()
      variable.isConstant = false
    }
    resetVariableTensors()
  }

  deinit {
    runTimeScratch?.deallocate()
  }

  /// Bytes of the activation arena (valid after ``allocateTensors()``).
  public var arenaByteCount: Int { memoryPlan.arenaByteCount }

  /// Sets every variable tensor of the subgraph back to its initial value, as LiteRT's
  /// `ResetVariableTensors` does: zero (an int8 tensor's zero point), or the model's constant data
  /// for a variable that has some. ``allocateTensors()`` does it too, as LiteRT does whenever it
  /// (re)allocates.
  public func resetVariableTensors() {
    for variable in tensors where variable.isVariable {
      guard let memory = variable.ownedMemory else { continue }
      let fill = variable.type == .int8 ? UInt8(truncatingIfNeeded: variable.quantization?.zeroPoint ?? 0) : 0
      memory.initializeMemory(as: UInt8.self, repeating: fill)
      if let initial = variableInitialValues[variable.index] { memory.copyBytes(from: initial) }
    }
  }

  /// Changes the shape of input `index`; takes effect at the next ``allocateTensors()``.
  public func resizeInput(at index: Int, to shape: [Int]) throws {
    guard index >= 0, index < inputs.count else {
      throw RuntimeError.indexOutOfRange(what: "input", index: index, count: inputs.count)
    }
    guard !inputs[index].isVariable || inputs[index].shape == shape else {
      throw RuntimeError.invalidShape("input \(index) is the variable tensor \(inputs[index].summary), whose shape is fixed")
    }
    guard shape.allSatisfy({ $0 > 0 }) else {
      throw RuntimeError.invalidShape("every dimension must be positive, got \(shape)")
    }
    guard let byteCount = Self.product(shape, elementBytes: inputs[index].type.byteCount) else {
      throw RuntimeError.invalidShape("\(shape) has too many elements")
    }
    guard byteCount <= memoryLimit else {
      throw RuntimeError.memoryLimitExceeded(what: "input \(index) of shape \(shape)", byteCount: byteCount, limit: memoryLimit)
    }
    guard inputs[index].shape != shape else { return }
    inputs[index].shape = shape
    isAllocated = false
  }

  /// True when some nodes can only be prepared while running (their output shapes depend on
  /// values), so the shapes of those nodes' outputs are only known after ``invoke()``.
  var preparesNodesWhileRunning: Bool { firstRunTimePreparedNode != nil }

  /// Prepares every node for the current input shapes, computes constant nodes once, plans the
  /// arena, gives every tensor its memory and resets the variable tensors
  /// (``resetVariableTensors()``). Input values copied before it are lost: copy inputs after it.
  /// The arena is reallocated when the plan's size changes, so shrinking shapes return memory.
  public func allocateTensors() throws {
    try exclusiveCall { try allocateAndPlan() }
  }

  /// Runs every node that was not computed at prepare time.
  public func invoke() throws {
    try exclusiveCall { try runNodes() }
  }

  /// Runs `body` as the subgraph's only call in progress, one level deeper in the model's nesting
  /// of subgraph calls. Throws when the subgraph is already being prepared or run further up the
  /// stack (control flow that calls itself).
  private func exclusiveCall(_ body: () throws -> Void) throws {
    guard !isInUse else {
      throw RuntimeError.invalidModel("subgraph \(subgraphIndex) is called from inside itself (recursive control flow)")
    }
    isInUse = true
    defer { isInUse = false }
    try resources.nestedCall(into: subgraphIndex, body)
  }

  /// Prepares every node, folds constant nodes and plans the arena (``allocateTensors()``).
  private func allocateAndPlan() throws {
    isAllocated = false
    firstRunTimePreparedNode = nil
    for tensor in tensors where !tensor.isVariable && !tensor.isModelConstant {
      tensor.isConstant = false
      tensor.ownedMemory?.deallocate()
      tensor.ownedMemory = nil
      tensor.data = nil
    }
    for tensor in tensors { tensor.isComputedBeforePrepare = false }
    // Scratch of the nodes prepared while running grows again as the new shapes need.
    runTimeScratch?.deallocate()
    runTimeScratch = nil
    for tensor in unwrittenTensors { try checkedByteCount(tensor, what: "tensor") }
    var scratchSizes = [Int](repeating: 0, count: nodes.count)
    for (position, node) in nodes.enumerated() {
      let kernel = kernels[position]
      var context = PrepareContext(threadCount: threadCount, roundingPolicy: roundingPolicy, memoryLimit: memoryLimit)
      do {
        try kernel.prepare(&context)
      } catch KernelError.needsInputValues {
        firstRunTimePreparedNode = position
        break
      } catch {
        try run(position) { throw error }
      }
      for output in node.outputs {
        try run(position) {
          try checkedByteCount(output, what: "output")
          // A variable's memory is allocated once, for the shape in the model.
          guard !output.isVariable || output.byteCount <= output.ownedMemory?.count ?? 0 else {
            throw RuntimeError.invalidModel("node \(node.index) would change the shape of variable tensor \(output.summary)")
          }
        }
      }
      try checkScratch(context.scratchByteCount, of: node)
      scratchSizes[position] = context.scratchByteCount
      let kernelType = type(of: kernel)
      let presentInputs = node.inputs.compactMap { $0 }
      let foldable =
        !kernelType.hasSideEffects && !node.outputs.contains(where: \.isVariable)
        && (kernelType.dependsOnlyOnInputShapes || presentInputs.allSatisfy(\.isConstant))
      isFolded[position] = foldable
      guard foldable else { continue }
      for output in node.outputs {
        output.allocateOwnedMemory()
        output.isConstant = true
      }
      let scratch =
        context.scratchByteCount > 0
        ? UnsafeMutableRawBufferPointer.allocate(byteCount: context.scratchByteCount, alignment: 64) : nil
      defer { scratch?.deallocate() }
      try run(position) { try kernel.eval(EvalContext(threadCount: threadCount, scratch: scratch?.baseAddress)) }
    }
    try planMemory(scratchSizes: scratchSizes)
    resetVariableTensors()
    isAllocated = true
  }

  /// Runs the nodes in order (``invoke()``).
  private func runNodes() throws {
    guard isAllocated, let arena else { throw RuntimeError.allocationRequired }
    let preparedCount = firstRunTimePreparedNode ?? nodes.count
    for position in 0..<preparedCount where !isFolded[position] && !isFusedAway[position] {
      let scratch = scratchOffsets[position].map { arena.bytes.baseAddress.unsafelyUnwrapped + $0 }
      let context = EvalContext(threadCount: threadCount, scratch: scratch)
      try run(position) { try kernels[position].eval(context) }
    }
    for position in preparedCount..<nodes.count { try prepareAndRun(position) }
  }

  /// Prepares node `position` now that its inputs are computed, gives its outputs memory of their
  /// own (reused while the size stays the same) and runs it.
  private func prepareAndRun(_ position: Int) throws {
    let node = nodes[position]
    for input in node.inputs.compactMap({ $0 }) { input.isComputedBeforePrepare = true }
    var context = PrepareContext(
      threadCount: threadCount, preparesWhileRunning: true, roundingPolicy: roundingPolicy, memoryLimit: memoryLimit)
    try run(position) {
      try kernels[position].prepare(&context)
      for output in node.outputs {
        try checkedByteCount(output, what: "output")
        if output.ownedMemory?.count != max(output.byteCount, 1) { output.allocateOwnedMemory() }
      }
    }
    try checkScratch(context.scratchByteCount, of: node)
    if (runTimeScratch?.count ?? 0) < context.scratchByteCount {
      runTimeScratch?.deallocate()
      runTimeScratch = UnsafeMutableRawBufferPointer.allocate(byteCount: context.scratchByteCount, alignment: 64)
    }
    guard !isFusedAway[position] else { return }
    let scratch = context.scratchByteCount > 0 ? runTimeScratch?.baseAddress : nil
    try run(position) { try kernels[position].eval(EvalContext(threadCount: threadCount, scratch: scratch)) }
  }

  /// Runs `body` for node `position`, turning a failure into
  /// ``RuntimeError/nodeFailed(subgraph:node:opName:version:reason:)``. The node is looked up only
  /// on failure: copying a `Node` for every run retains all its references.
  private func run(_ position: Int, _ body: () throws -> Void) throws {
    do {
      try body()
    } catch let error as RuntimeError {
      throw error
    } catch {
      let node = nodes[position]
      throw RuntimeError.nodeFailed(
        subgraph: subgraphIndex, node: node.index, opName: node.opName, version: node.version, reason: "\(error)")
    }
  }

  /// Plans one arena for every tensor that needs activation memory and every node's scratch.
  private func planMemory(scratchSizes: [Int]) throws {
    let needsArena = { (tensor: RuntimeTensor) in !tensor.isConstant && !tensor.isVariable && tensor.data == nil }
    var firstUse: [Int: Int] = [:]
    var lastUse: [Int: Int] = [:]
    func use(_ tensor: RuntimeTensor, at step: Int) {
      guard needsArena(tensor) else { return }
      firstUse[tensor.index] = min(firstUse[tensor.index] ?? step, step)
      lastUse[tensor.index] = max(lastUse[tensor.index] ?? step, step)
    }
    let preparedCount = firstRunTimePreparedNode ?? nodes.count
    // Outputs of nodes prepared while running get memory of their own then.
    let runTimeOutputs = Set(nodes[preparedCount...].flatMap { $0.outputs.map(\.index) })
    // Graph inputs live for the whole run, as LiteRT's arena planner keeps them: no other block
    // reuses their bytes, so `invoke()` leaves them as the caller wrote them and can be repeated.
    for input in inputs {
      use(input, at: -1)
      use(input, at: nodes.count)
    }
    for (position, node) in nodes[..<preparedCount].enumerated() where !isFolded[position] {
      for input in node.inputs.compactMap({ $0 }) { use(input, at: position) }
      for output in node.outputs { use(output, at: position) }
    }
    for node in nodes[preparedCount...] {
      for input in node.inputs.compactMap({ $0 }) where !runTimeOutputs.contains(input.index) {
        use(input, at: nodes.count)
      }
    }
    for output in outputs where !runTimeOutputs.contains(output.index) { use(output, at: nodes.count) }
    var requests = firstUse.keys.sorted().map { index in
      MemoryRequest(
        owner: .tensor(index), byteCount: tensors[index].byteCount,
        firstUse: firstUse[index] ?? 0, lastUse: lastUse[index] ?? 0)
    }
    for (position, size) in scratchSizes.enumerated() where position < preparedCount && size > 0 && !isFolded[position] {
      requests.append(MemoryRequest(owner: .scratch(node: position), byteCount: size, firstUse: position, lastUse: position))
    }
    let plan = MemoryPlan(requests: requests)
    guard plan.arenaByteCount <= memoryLimit else {
      throw RuntimeError.memoryLimitExceeded(
        what: "the activation arena of subgraph \(subgraphIndex)", byteCount: plan.arenaByteCount, limit: memoryLimit)
    }
    memoryPlan = plan
    let arenaByteCount = max(memoryPlan.arenaByteCount, 64)
    if arena?.bytes.count != arenaByteCount {
      arena = nil  // released before the new one is taken, so both are never held at once
      arena = ArenaMemory(byteCount: arenaByteCount)
    }
    guard let base = arena?.bytes.baseAddress else { return }
    scratchOffsets = Array(repeating: nil, count: nodes.count)
    for (request, offset) in memoryPlan.placements {
      switch request.owner {
      case .tensor(let index): tensors[index].data = base + offset
      case .scratch(let node): scratchOffsets[node] = offset
      }
    }
  }

  /// Throws unless the subgraph's inputs are tensors callers can fill (not constants) and every
  /// tensor a node writes is written by that node alone and read only by later nodes: no node may
  /// write a constant, a subgraph input or another node's output, nor read its own output or a
  /// later node's (a cycle). Kernels size and read their operands assuming this order, so a graph
  /// that breaks it could make them read or write out of bounds. Returns the tensors written.
  private static func checkDataFlow(of nodes: [Node], inputs: [RuntimeTensor], subgraphIndex: Int) throws -> Set<Int> {
    if let constant = inputs.firstIndex(where: \.isModelConstant) {
      throw RuntimeError.invalidModel(
        "subgraph \(subgraphIndex) input \(constant) is the constant tensor \(inputs[constant].summary), which callers cannot fill")
    }
    var writers: [Int: Int] = [:]
    let inputIndices = Set(inputs.map(\.index))
    func refuse(_ node: Node, _ problem: String) -> RuntimeError {
      .invalidModel("subgraph \(subgraphIndex) node \(node.index) (\(node.opName)) \(problem)")
    }
    for node in nodes {
      for output in node.outputs {
        guard !output.isModelConstant else { throw refuse(node, "writes the constant tensor \(output.summary)") }
        guard !inputIndices.contains(output.index) else {
          throw refuse(node, "writes the subgraph input \(output.summary)")
        }
        if let writer = writers[output.index] {
          throw refuse(node, "writes tensor \(output.summary), which node \(writer) writes too")
        }
        writers[output.index] = node.index
      }
    }
    for node in nodes {
      for input in node.inputs.compactMap({ $0 }) where !input.isVariable {
        if let writer = writers[input.index], writer >= node.index {
          throw refuse(node, "reads tensor \(input.summary) before node \(writer) computes it")
        }
      }
    }
    return Set(writers.keys)
  }

  /// Expands, once, every sparse constant that an operator other than DENSIFY reads directly
  /// (FULLY_CONNECTED accepts sparse weights), so kernels only ever see dense data.
  private static func densifySparseConstants(in subgraph: SubGraph, tensors: [RuntimeTensor], model: TFLiteModel) throws {
    let densifyCode = BuiltinOperator.densify.rawValue
    let readDirectly = Set(
      subgraph.operators.filter { operation in
        let index = Int(operation.opcodeIndex)
        return index >= model.model.operatorCodes.count
          || model.model.operatorCodes[index].resolvedBuiltinCode.rawValue != densifyCode
      }.flatMap { $0.inputs.filter { $0 >= 0 }.map(Int.init) })
    for tensor in tensors where tensor.sparsity != nil && readDirectly.contains(tensor.index) {
      guard let sparse = tensor.sparsity, let stored = tensor.data, tensor.type.byteCount > 0 else { continue }
      do {
        let densifier = try Densifier(
          denseShape: tensor.shape, format: sparse.format, valueCount: sparse.storedByteCount / tensor.type.byteCount)
        tensor.allocateOwnedMemory()
        densifier.run(values: stored, into: tensor.data.unsafelyUnwrapped, elementSize: tensor.type.byteCount)
        tensor.sparsity = nil
      } catch {
        throw RuntimeError.invalidModel("sparse constant \(tensor.summary): \(error)")
      }
    }
  }

  /// Builds the runtime tensor for schema tensor `tensor`.
  private static func makeTensor(_ tensor: TFLiteFormat.Tensor, index: Int, model: TFLiteModel) throws -> RuntimeTensor {
    let name = tensor.name ?? ""
    let shape = tensor.shape.map(Int.init)
    guard let type = ElementType(schemaName: tensor.type.name) else {
      throw RuntimeError.invalidModel("tensor \(index) '\(name)' has type \(tensor.type.name), which the runtime does not know")
    }
    let constant = model.tensorData(tensor)
    let quantization = tensor.quantization.flatMap { parameters -> Quantization? in
      guard !parameters.scale.isEmpty else { return nil }
      return Quantization(
        scales: parameters.scale, zeroPoints: parameters.zeroPoint.map { Int(truncatingIfNeeded: $0) },
        axis: Int(parameters.quantizedDimension))
    }
    let runtimeTensor = RuntimeTensor(
      index: index, name: name, type: type, shape: shape,
      shapeSignature: tensor.shapeSignature.isEmpty ? shape : tensor.shapeSignature.map(Int.init),
      quantization: quantization, isVariable: tensor.isVariable,
      constantData: constant.count > 0 ? constant.baseAddress : nil,
      sparsity: try tensor.sparsity.map {
        SparseConstant(format: try SparsityFormat($0, model: model), storedByteCount: constant.count)
      })
    if type == .int4, tensor.sparsity == nil, constant.count > 1, constant.count == runtimeTensor.elementCount {
      packInt4Constant(runtimeTensor, unpacked: constant)
    }
    return runtimeTensor
  }

  /// Kernels read INT4 constants packed two values a byte (the first in the low nibble), as the
  /// converter stores them; a model that stores one value a byte gets a packed copy, made once.
  private static func packInt4Constant(_ tensor: RuntimeTensor, unpacked: UnsafeRawBufferPointer) {
    tensor.allocateOwnedMemory()
    let packed = tensor.pointer(as: UInt8.self)
    for (index, value) in unpacked.enumerated() {
      let nibble = value & 0x0F
      packed[index / 2] |= index % 2 == 0 ? nibble : nibble << 4
    }
  }

  /// The byte count of `shape` with `elementBytes`-byte elements, or nil on overflow or a negative dimension.
  static func product(_ shape: [Int], elementBytes: Int) -> Int? {
    var total = max(elementBytes, 1)
    for dimension in shape {
      guard dimension >= 0 else { return nil }
      let (next, overflow) = total.multipliedReportingOverflow(by: dimension)
      guard !overflow, next <= 1 << 46 else { return nil }
      total = next
    }
    return total
  }

  /// Throws unless the `byteCount` bytes of scratch memory `node` asked for are within the memory limit.
  private func checkScratch(_ byteCount: Int, of node: Node) throws {
    guard byteCount <= memoryLimit else {
      throw RuntimeError.memoryLimitExceeded(
        what: "the scratch memory of node \(node.index) (\(node.opName))", byteCount: byteCount, limit: memoryLimit)
    }
  }

  /// Throws unless `tensor`'s shape is non-negative and its byte count is representable and
  /// within the memory limit.
  private func checkedByteCount(_ tensor: RuntimeTensor, what: String) throws {
    guard let byteCount = Self.product(tensor.shape, elementBytes: tensor.type.byteCount) else {
      throw RuntimeError.invalidShape("\(what) \(tensor.summary) is not a valid size")
    }
    guard byteCount <= memoryLimit else {
      throw RuntimeError.memoryLimitExceeded(what: "\(what) \(tensor.summary)", byteCount: byteCount, limit: memoryLimit)
    }
  }
}
