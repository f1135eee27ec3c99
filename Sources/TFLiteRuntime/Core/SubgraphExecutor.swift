import TFLiteFormat
import TFLiteLinearAlgebra

#if canImport(Glibc)
  import Glibc
#endif

/// Runs one lowered subgraph of a model (``LoweredSubgraph``): prepares its kernels, computes
/// constant nodes once, plans its arena and runs the nodes in execution order.
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
  let nodes: [Node]
  /// The current memory plan (valid after ``allocateTensors()``).
  public private(set) var memoryPlan = MemoryPlan(requests: [])
  /// Tensors written in place over an input (not in ``memoryPlan``), each with the tensor whose
  /// block it shares (valid after ``allocateTensors()``).
  public var inPlaceOutputs: [Int: Int] {
    var outputs: [Int: Int] = [:]
    for (output, root) in inPlaceRoots.enumerated() { if let root { outputs[output] = root } }
    return outputs
  }
  /// By tensor index, the tensor whose block a tensor written in place shares (nil for the others).
  /// The memory plan keeps its per-tensor facts in arrays, not in `Int`-keyed dictionaries or
  /// sets: the first `Int: Hashable` use of a process costs a scan of every protocol conformance
  /// record, paid by the first model's load.
  private var inPlaceRoots: [Int?] = []
  /// True once tensors are allocated and no resize has happened since.
  public private(set) var isAllocated = false
  /// Called around every node while ``invoke()`` runs (nil, the default, costs one check per node).
  package var nodeObserver: NodeObserver?
  /// Every node as the ``nodeObserver`` sees it, built on the first observed node after an
  /// allocation, so that observing costs no allocation while running.
  private var observedNodes: [ObservedNode] = []

  private let kernels: [any Kernel]
  /// The type name of every node's kernel, in execution order (which kernel set a node runs on).
  var kernelTypeNames: [String] { kernels.map { String(describing: type(of: $0)) } }
  private let threadCount: Int
  private let roundingPolicy: RoundingPolicy
  /// The most bytes one block of memory may have (``RunnerOptions/memoryLimit``).
  private let memoryLimit: Int
  /// Tensors no node writes and the model gives no data (the subgraph inputs, variables, and
  /// tensors read but never computed): their shapes come from the model or the caller.
  private let unwrittenTensors: [RuntimeTensor]
  /// Scratch offset in the arena per node (nil when the node needs none).
  private var scratchOffsets: [Int?]
  /// The nodes `invoke()` evaluates when nothing observes them, in order, with their contexts:
  /// built once per allocation, so that running a node costs no lookups in the per-node arrays
  /// (a few percent of a small network's invoke).
  private var evaluationSteps: [EvaluationStep] = []
  /// Nodes computed at prepare time (their outputs are constants until the next allocation).
  private var isFolded: [Bool]
  /// Nodes whose work a later node's fused kernel does (`OperatorFusion`): prepared, never run.
  private let isFusedAway: [Bool]
  /// Per node, the tensors its fused kernel reads besides the node's inputs (`OperatorFusion`).
  private let additionalReads: [[RuntimeTensor]]
  /// Per tensor, the number of nodes that read it, or nil for one whose values are never freed
  /// at allocation (subgraph inputs and outputs, variables, and every tensor without
  /// ``RunnerOptions/releasesCopiedConstants``).
  private let readerCounts: [Int?]
  /// Bytes of held constant values (folded outputs, densified constants) freed by the last
  /// ``allocateTensors()`` because every node reading them had copied them or been folded.
  public private(set) var releasedConstantByteCount = 0
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
  /// The bytes a variable tensor starts from when the model gives it constant data, by tensor index
  /// (``LoweredSubgraph/variableInitialValues``).
  private let variableInitialValues: [Int: [UInt8]]

  /// Lowers subgraph `subgraphIndex` (``LoweredSubgraph``) and keeps what running it needs.
  /// Throws ``RuntimeError/unsupportedOperators(_:)`` listing every node the runtime cannot run.
  init(
    model: TFLiteModel, subgraphIndex: Int, threadCount: Int, roundingPolicy: RoundingPolicy = .doubleRounding,
    memoryLimit: Int = RunnerOptions.defaultMemoryLimit, kernelSet: KernelSet = .optimized, fusesOperators: Bool = true,
    releasesCopiedConstants: Bool = true, resources: ModelResources, subgraphProvider: @escaping (Int) throws -> SubgraphExecutor
  ) throws {
    let subgraphCount = model.model.subgraphs.count
    guard subgraphIndex >= 0, subgraphIndex < subgraphCount else {
      throw RuntimeError.indexOutOfRange(what: "subgraph", index: subgraphIndex, count: subgraphCount)
    }
    let lowered = try LoweredSubgraph(
      model: model, subgraphIndex: subgraphIndex, kernelSet: kernelSet, fusesOperators: fusesOperators,
      memoryLimit: memoryLimit, resources: resources, subgraphProvider: subgraphProvider)
    self.model = model
    self.resources = resources
    self.subgraphIndex = subgraphIndex
    self.threadCount = max(threadCount, 1)
    self.roundingPolicy = roundingPolicy
    self.memoryLimit = memoryLimit
    tensors = lowered.tensors
    inputs = lowered.inputs
    outputs = lowered.outputs
    nodes = lowered.nodes
    kernels = lowered.kernels
    isFusedAway = lowered.isFusedAway
    additionalReads = lowered.additionalReads
    var readerCounts = [Int?](repeating: releasesCopiedConstants ? 0 : nil, count: lowered.tensors.count)
    for position in lowered.nodes.indices {
      for tensor in Self.reads(of: lowered.nodes[position], additional: lowered.additionalReads[position]) {
        readerCounts[tensor.index]? += 1
      }
    }
    for tensor in lowered.inputs + lowered.outputs + lowered.tensors.filter(\.isVariable) {
      readerCounts[tensor.index] = nil
    }
    self.readerCounts = readerCounts
    unwrittenTensors = lowered.unwrittenTensors
    scratchOffsets = Array(repeating: nil, count: nodes.count)
    isFolded = Array(repeating: false, count: nodes.count)
    variableInitialValues = lowered.variableInitialValues
    resetVariableTensors()
  }

  deinit {
    runTimeScratch?.deallocate()
  }

  /// The operator name of every node in execution order (schema names, custom codes for custom operators).
  public var operatorNames: [String] { nodes.map(\.opName) }

  /// Per node in execution order, what runs it (valid after ``allocateTensors()``): the kind of
  /// arithmetic (`float`, `integer`, `hybrid`, `reference`, or the element type of a type-generic
  /// kernel), the kernel type and its route and instruction-set level, e.g.
  /// `float Conv2DKernel: GEMM, generated AVX-512F`. Nodes computed at prepare time or fused into a
  /// later node say so.
  public var kernelDescriptions: [String] {
    resources.underGeneratedKernelPolicy {
      nodes.indices.map { position in
        let kernel = kernels[position]
        let typeName = String(describing: type(of: kernel))
        let kind = KernelDescription.kind(kernelTypeName: typeName, outputType: nodes[position].outputs.first?.type)
        let route = kernel.kernelDescription ?? KernelDescription.swiftLevel
        let note = isFusedAway[position] ? " (fused into a later node)" : isFolded[position] ? " (computed at prepare time)" : ""
        return "\(kind) \(typeName): \(route)\(note)"
      }
    }
  }

  /// Bytes of the activation arena (valid after ``allocateTensors()``).
  public var arenaByteCount: Int { memoryPlan.arenaByteCount }

  /// Bytes of memory the subgraph's constant tensors hold outside the model file (folded outputs,
  /// densified or repacked constants); ``releasedConstantByteCount`` bytes of them were freed.
  public var heldConstantByteCount: Int {
    tensors.reduce(0) { total, tensor in total + (tensor.isConstant ? tensor.ownedMemory?.count ?? 0 : 0) }
  }

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
    guard let byteCount = checkedProduct(shape, elementBytes: inputs[index].type.byteCount) else {
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
    // The generated kernels the prepares reserved, of every node, in one executable mapping.
    defer { LazyExecutableKernels.mapReserved() }
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
    observedNodes = []
    firstRunTimePreparedNode = nil
    for tensor in tensors where !tensor.isVariable && !tensor.isModelConstant {
      tensor.isConstant = false
      tensor.ownedMemory?.deallocate()
      tensor.ownedMemory = nil
      tensor.data = nil
    }
    for tensor in tensors {
      tensor.isComputedBeforePrepare = false
      try tensor.rebuildReleasedValues()
    }
    releasedConstantByteCount = 0
    var unreadCounts = readerCounts
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
      releasePages(of: context.copiedConstants)
      let kernelType = type(of: kernel)
      let presentInputs = node.inputs.compactMap { $0 }
      let foldable =
        !kernelType.hasSideEffects && !node.outputs.contains(where: \.isVariable)
        && (kernelType.dependsOnlyOnInputShapes || presentInputs.allSatisfy(\.isConstant))
      isFolded[position] = foldable
      if foldable {
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
      releaseHeldConstants(doneAt: position, copied: context.copiedConstants, unreadCounts: &unreadCounts)
    }
    try planMemory(scratchSizes: scratchSizes)
    evaluationSteps = makeEvaluationSteps()
    resetVariableTensors()
    isAllocated = true
  }

  /// One evaluated node of ``evaluationSteps``.
  private struct EvaluationStep {
    /// The node's position in execution order.
    let position: Int
    /// Its kernel, kept alive by ``kernels`` (unretained: no reference counting per node).
    let kernel: Unmanaged<AnyObject>
    /// The kernel's type, whose ``Kernel/evalUnretained(_:_:)`` runs it.
    let kernelType: any Kernel.Type
    /// Its threads and arena scratch.
    let context: EvalContext
  }

  /// The nodes prepared at allocation that are neither folded nor fused away, with their scratch
  /// in the planned arena.
  private func makeEvaluationSteps() -> [EvaluationStep] {
    let base = arena?.bytes.baseAddress
    return (0..<(firstRunTimePreparedNode ?? nodes.count)).compactMap { position in
      guard !isFolded[position], !isFusedAway[position] else { return nil }
      let scratch = scratchOffsets[position].flatMap { offset in base.map { $0 + offset } }
      return EvaluationStep(
        position: position, kernel: .passUnretained(kernels[position]),
        kernelType: type(of: kernels[position]), context: EvalContext(threadCount: threadCount, scratch: scratch))
    }
  }

  /// Releases the model file pages of constants a kernel packed into memory of its own
  /// (``PrepareContext/releaseAfterCopying(_:)``), one node at a time, so that the mapped weights
  /// and their packed copies are never resident together for more than one node.
  private func releasePages(of copiedConstants: [RuntimeTensor]) {
    for tensor in copiedConstants where tensor.isModelConstant {
      guard let data = tensor.data else { continue }
      model.releaseResidentPages(of: UnsafeRawBufferPointer(start: data, count: tensor.byteCount))
    }
  }

  /// Frees the constant values held in memory of their own (folded outputs, densified constants)
  /// whose last reader is node `position`, now prepared: every reader was folded (it read them in
  /// its eval, already run) or copied them (``PrepareContext/releaseAfterCopying(_:)``), so the
  /// float32 weights a DEQUANTIZE folds never stay beside their packed copy. A reader prepared
  /// while running never counts, so what it reads stays. The next allocation folds or rebuilds them.
  private func releaseHeldConstants(doneAt position: Int, copied: [RuntimeTensor], unreadCounts: inout [Int?]) {
    let node = nodes[position]
    var freedBytes = 0
    for tensor in Self.reads(of: node, additional: additionalReads[position]) {
      guard let unread = unreadCounts[tensor.index], tensor.isConstant,
        isFolded[position] || copied.contains(where: { $0 === tensor })
      else { continue }
      unreadCounts[tensor.index] = unread - 1
      guard unread == 1, !tensor.isModelConstant || tensor.rebuildValues != nil else { continue }
      freedBytes += tensor.releaseOwnedValues()
    }
    guard freedBytes > 0 else { return }
    releasedConstantByteCount += freedBytes
    _ = Self.mallocTrim?(0)
  }

  /// glibc's `malloc_trim`, looked up once (the Glibc module does not export it); nil elsewhere.
  /// glibc keeps a freed block in its heap, resident, once its mmap threshold has grown past the
  /// block's size, and the next, larger layer cannot reuse it: without a trim, pose_detection's
  /// freed weights stayed resident (66 MB peak instead of 54 MB). Darwin returns large blocks itself.
  private static let mallocTrim: (@convention(c) (Int) -> Int32)? = {
    #if canImport(Glibc)
      dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim").map {
        unsafeBitCast($0, to: (@convention(c) (Int) -> Int32).self)
      }
    #else
      nil
    #endif
  }()

  /// The distinct tensors node `node` reads: its inputs and what its fused kernel reads besides.
  /// (A linear search over a node's few tensors: the first `Set<Int>` of a process costs the Swift
  /// runtime a scan of every protocol conformance record to check `Int: Hashable`.)
  private static func reads(of node: Node, additional: [RuntimeTensor]) -> [RuntimeTensor] {
    var distinct: [RuntimeTensor] = []
    for tensor in node.inputs.compactMap({ $0 }) + additional where !distinct.contains(where: { $0.index == tensor.index }) {
      distinct.append(tensor)
    }
    return distinct
  }

  /// Runs the nodes in order (``invoke()``): ``evaluationSteps`` when nothing observes them. The
  /// observer and the nodes' views are read once, so that observing a node costs two calls and
  /// nothing else, and nodes the observer skips (``NodeObserver/stride``) cost one comparison (an
  /// observer set or cleared while running applies from the next invoke).
  private func runNodes() throws {
    guard isAllocated, arena != nil else { throw RuntimeError.allocationRequired }
    if let observer = nodeObserver {
      try runObservedNodes(observer)
    } else {
      for step in evaluationSteps {
        try run(step.position) { try step.kernelType.evalUnretained(step.kernel, step.context) }
      }
    }
    for position in (firstRunTimePreparedNode ?? nodes.count)..<nodes.count { try prepareAndRun(position) }
  }

  /// The nodes prepared at allocation, with `observer` called around those it observes (folded
  /// and fused-away nodes included).
  private func runObservedNodes(_ observer: NodeObserver) throws {
    let views = observedNodeViews()
    var nextObserved = max(observer.phase, 0)
    var steps = evaluationSteps[...]
    for position in 0..<(firstRunTimePreparedNode ?? nodes.count) {
      let observes = position == nextObserved
      if let step = steps.first, step.position == position {
        steps.removeFirst()
        if observes { try observer.willRun(views[position]) }
        try run(position) { try step.kernelType.evalUnretained(step.kernel, step.context) }
      }
      if observes {
        try observer.didRun(views[position])
        nextObserved += max(observer.stride, 1)
      }
    }
  }

  /// Node `position` as the ``nodeObserver`` sees it.
  private func observed(_ position: Int) -> ObservedNode { observedNodeViews()[position] }

  /// Every node as the ``nodeObserver`` sees it, built once per allocation.
  private func observedNodeViews() -> [ObservedNode] {
    if observedNodes.isEmpty {
      let preparedCount = firstRunTimePreparedNode ?? nodes.count
      observedNodes = nodes.enumerated().map { position, node in
        let evaluation: ObservedNode.Evaluation =
          isFusedAway[position] ? .fusedAway : position < preparedCount && isFolded[position] ? .foldedAtPrepare : .evaluated
        return ObservedNode(
          position: position, opName: node.opName, inputs: node.inputs, outputs: node.outputs, evaluation: evaluation)
      }
    }
    return observedNodes
  }

  /// Prepares node `position` now that its inputs are computed, gives its outputs memory of their
  /// own (reused while the size stays the same) and runs it.
  private func prepareAndRun(_ position: Int) throws {
    let node = nodes[position]
    let observer = nodeObserver.flatMap { $0.observes(position) ? $0 : nil }
    if let observer, !isFusedAway[position] { try observer.willRun(observed(position)) }
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
    if !isFusedAway[position] {
      let scratch = context.scratchByteCount > 0 ? runTimeScratch?.baseAddress : nil
      try run(position) { try kernels[position].eval(EvalContext(threadCount: threadCount, scratch: scratch)) }
    }
    if let observer { try observer.didRun(observed(position)) }
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
    // The output of a node fused into its consumer is never written nor read: it needs no memory.
    var isFusedAwayOutput = [Bool](repeating: false, count: tensors.count)
    for (position, node) in nodes.enumerated() where isFusedAway[position] {
      for output in node.outputs { isFusedAwayOutput[output.index] = true }
    }
    let needsArena = { (tensor: RuntimeTensor) in
      !tensor.isConstant && !tensor.isVariable && tensor.data == nil && !isFusedAwayOutput[tensor.index]
    }
    var firstUse = [Int?](repeating: nil, count: tensors.count)
    var lastUse = [Int?](repeating: nil, count: tensors.count)
    func use(_ tensor: RuntimeTensor, at step: Int) {
      guard needsArena(tensor) else { return }
      firstUse[tensor.index] = min(firstUse[tensor.index] ?? step, step)
      lastUse[tensor.index] = max(lastUse[tensor.index] ?? step, step)
    }
    let preparedCount = firstRunTimePreparedNode ?? nodes.count
    // Outputs of nodes prepared while running get memory of their own then.
    var isRunTimeOutput = [Bool](repeating: false, count: tensors.count)
    for node in nodes[preparedCount...] {
      for output in node.outputs { isRunTimeOutput[output.index] = true }
    }
    // Graph inputs live for the whole run, as LiteRT's arena planner keeps them: no other block
    // reuses their bytes, so `invoke()` leaves them as the caller wrote them and can be repeated.
    for input in inputs {
      use(input, at: -1)
      use(input, at: nodes.count)
    }
    for (position, node) in nodes[..<preparedCount].enumerated() where !isFolded[position] {
      for input in node.inputs.compactMap({ $0 }) + additionalReads[position] { use(input, at: position) }
      for output in node.outputs { use(output, at: position) }
    }
    for node in nodes[preparedCount...] {
      for input in node.inputs.compactMap({ $0 }) where !isRunTimeOutput[input.index] {
        use(input, at: nodes.count)
      }
    }
    for output in outputs where !isRunTimeOutput[output.index] { use(output, at: nodes.count) }
    inPlaceRoots = inPlaceSharing(preparedCount: preparedCount, firstUse: firstUse, lastUse: lastUse)
    // A shared block lives from its first tensor's first use to its last tensor's last use.
    for (output, root) in inPlaceRoots.enumerated() {
      guard let root else { continue }
      lastUse[root] = max(lastUse[root] ?? 0, lastUse[output] ?? 0)
      firstUse[output] = nil
    }
    var requests = firstUse.indices.compactMap { index in
      firstUse[index].map { first in
        MemoryRequest(owner: .tensor(index), byteCount: tensors[index].byteCount, firstUse: first, lastUse: lastUse[index] ?? 0)
      }
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
    for (output, root) in inPlaceRoots.enumerated() {
      if let root { tensors[output].data = tensors[root].data }
    }
  }

  /// The outputs written over an input, each with the tensor whose block it shares (the first
  /// tensor of a chain of in-place nodes), as LiteRT's arena planner shares them: the node's kernel
  /// ``Kernel/writesOutputInPlace``, the input has the output's type and byte count (more than a
  /// scalar's 8 bytes), no later node reads it, and it is not a subgraph input (they stay intact)
  /// nor is the output a subgraph output.
  /// Returns the shared tensor by output tensor index (nil where none); `firstUse` and `lastUse`
  /// are by tensor index.
  private func inPlaceSharing(preparedCount: Int, firstUse: [Int?], lastUse: [Int?]) -> [Int?] {
    let subgraphInputs = inputs.map(\.index)
    let subgraphOutputs = outputs.map(\.index)
    var sharing = [Int?](repeating: nil, count: tensors.count)
    for position in 0..<preparedCount
    where type(of: kernels[position]).writesOutputInPlace && !isFolded[position] && !isFusedAway[position] {
      let node = nodes[position]
      guard node.outputs.count == 1, let output = node.outputs.first, firstUse[output.index] == position,
        !subgraphOutputs.contains(output.index)
      else { continue }
      let shared = (node.inputs.compactMap { $0 } + additionalReads[position]).first { input in
        firstUse[input.index] != nil && lastUse[input.index] == position && !subgraphInputs.contains(input.index)
          && input.type == output.type && input.byteCount == output.byteCount && input.byteCount > 8
      }
      if let shared { sharing[output.index] = sharing[shared.index] ?? shared.index }
    }
    return sharing
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
    guard let byteCount = checkedProduct(tensor.shape, elementBytes: tensor.type.byteCount) else {
      throw RuntimeError.invalidShape("\(what) \(tensor.summary) is not a valid size")
    }
    guard byteCount <= memoryLimit else {
      throw RuntimeError.memoryLimitExceeded(what: "\(what) \(tensor.summary)", byteCount: byteCount, limit: memoryLimit)
    }
  }
}

/// One node of a subgraph as a ``SubgraphExecutor`` shows it to its ``NodeObserver``: one object
/// per node, built once per allocation, so that passing it costs no copy of its fields.
package final class ObservedNode {
  /// How a node's outputs got their values in the current invoke.
  package enum Evaluation: Sendable {
    /// The node's kernel ran.
    case evaluated
    /// The outputs are constants computed once when tensors were allocated.
    case foldedAtPrepare
    /// A later node's fused kernel does the node's work: its outputs were not written.
    case fusedAway
  }

  /// Position of the node in execution order (its index in the subgraph's operator list).
  package let position: Int
  /// The operator's schema name (`CONV_2D`) or custom code.
  package let opName: String
  /// Input operands; nil where an optional operand is absent.
  package let inputs: [RuntimeTensor?]
  /// Output operands.
  package let outputs: [RuntimeTensor]
  /// How the outputs got their values.
  package let evaluation: Evaluation

  /// A node's view.
  init(position: Int, opName: String, inputs: [RuntimeTensor?], outputs: [RuntimeTensor], evaluation: Evaluation) {
    self.position = position
    self.opName = opName
    self.inputs = inputs
    self.outputs = outputs
    self.evaluation = evaluation
  }
}

/// Callbacks a ``SubgraphExecutor`` makes around every node of an invoke, in execution order: for
/// debugging tools that look at (or replace) intermediate tensors, such as `tflite compare
/// --reference`. An error thrown by a callback ends the invoke with that error.
///
/// Tensor memory is shared: a node's outputs are valid in `didRun` and may be overwritten by later
/// nodes, so an observer that keeps values copies them. Set ``RunnerOptions/fusesOperators`` to
/// false for every node's outputs to be computed.
package struct NodeObserver {
  /// Called just before a node's kernel runs (not for folded or fused-away nodes). It may write
  /// new values into the node's inputs that are not constants, of the same type and shape.
  package var willRun: (ObservedNode) throws -> Void
  /// Called after every node, whether its kernel ran or not (``ObservedNode/evaluation``).
  package var didRun: (ObservedNode) throws -> Void
  /// Only the nodes at positions ``phase`` modulo `stride` are observed (1, the default: every
  /// node), so that a profiler can time a few nodes per invoke and skip the calls for the rest.
  package var stride = 1
  /// See ``stride`` (0 by default).
  package var phase = 0

  /// An observer with both callbacks.
  package init(
    willRun: @escaping (ObservedNode) throws -> Void = { _ in }, didRun: @escaping (ObservedNode) throws -> Void
  ) {
    self.willRun = willRun
    self.didRun = didRun
  }

  /// True when the node at `position` is observed (``stride``, ``phase``).
  func observes(_ position: Int) -> Bool {
    position >= phase && (position - phase) % max(stride, 1) == 0
  }
}
