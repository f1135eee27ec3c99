// Lowering: turns one subgraph of a verified model into what the executor runs, once, when a
// runner is built. Every index was checked by `ModelValidator` when the model was read, so none is
// checked again here. The steps, in order:
//   1. tensors: element types, quantization, sparse and INT4 constants (`TensorLowering`), and
//      the tensors no kernel can use (`TensorSupport`), whose nodes are reported as unsupported;
//   2. nodes: each operator code resolved to a typed `OperatorKind`;
//   3. kernels: one per node from `KernelDispatch` (float / integer / hybrid by operand types);
//   4. data flow: every tensor written once, before it is read;
//   5. fusions: node pairs one kernel runs (`OperatorFusion`);
//   6. variables: memory of their own, holding their initial value.

import TFLiteFormat

/// One subgraph lowered for execution.
struct LoweredSubgraph {
  /// Every tensor of the subgraph, by index.
  let tensors: [RuntimeTensor]
  /// The subgraph's input tensors, in order.
  let inputs: [RuntimeTensor]
  /// The subgraph's output tensors, in order.
  let outputs: [RuntimeTensor]
  /// The nodes in execution order.
  let nodes: [Node]
  /// The kernel of each node (a fused kernel for the consumer of a fusion).
  let kernels: [any Kernel]
  /// Nodes whose work a later node's fused kernel does: prepared, never run.
  let isFusedAway: [Bool]
  /// Per node, the tensors its (fused) kernel reads besides the node's inputs.
  let additionalReads: [[RuntimeTensor]]
  /// Tensors no node writes and the model gives no data (the subgraph inputs, variables, and
  /// tensors read but never computed): their shapes come from the model or the caller.
  let unwrittenTensors: [RuntimeTensor]
  /// The bytes a variable tensor starts from (and is reset to) when the model gives it constant
  /// data, by tensor index (LiteRT refuses such variables; this runtime starts from the data).
  let variableInitialValues: [Int: [UInt8]]

  /// Lowers subgraph `subgraphIndex` of `model` (an index the caller has checked); variables larger
  /// than `memoryLimit` bytes are refused; with `fusesOperators` false no node pair is fused.
  /// Throws ``RuntimeError/unsupportedOperators(_:)`` listing every node the runtime cannot run.
  init(
    model: TFLiteModel, subgraphIndex: Int, kernelSet: KernelSet, fusesOperators: Bool = true, memoryLimit: Int,
    resources: ModelResources, subgraphProvider: @escaping (Int) throws -> SubgraphExecutor
  ) throws {
    let schema = model.model
    let subgraph = schema.subgraphs[subgraphIndex]
    let (tensors, tensorProblems) = try TensorLowering.tensors(of: subgraph, model: model)
    let inputs = subgraph.inputs.map { tensors[Int($0)] }
    let outputs = subgraph.outputs.map { tensors[Int($0)] }
    var nodes: [Node] = []
    var kernels: [any Kernel] = []
    var unsupported: [UnsupportedOperator] = []
    for (nodeIndex, operation) in subgraph.operators.enumerated() {
      let code = schema.operatorCodes[Int(operation.opcodeIndex)]
      // -1 marks an absent optional operand; the validator allows it in every list, but every
      // output must exist.
      guard !operation.outputs.contains(where: { $0 < 0 }) else {
        throw RuntimeError.invalidModel("subgraph \(subgraphIndex) node \(nodeIndex) has an absent (-1) output")
      }
      let node = Node(
        index: nodeIndex, op: OperatorKind(builtinCode: code.resolvedBuiltinCode, customCode: code.customCode),
        version: Int(code.version), inputs: operation.inputs.map { $0 < 0 ? nil : tensors[Int($0)] },
        outputs: operation.outputs.map { tensors[Int($0)] }, options: operation.builtinOptions,
        customOptions: model.customOptions(of: operation), subgraph: subgraphProvider, resources: resources)
      nodes.append(node)
      if let problems = Self.operandProblems(of: operation, tensorProblems, tensors: tensors) {
        unsupported.append(
          UnsupportedOperator(
            subgraph: subgraphIndex, node: nodeIndex, opName: node.opName, version: node.version, reason: problems))
        continue
      }
      do {
        kernels.append(try KernelDispatch.makeKernel(for: node, set: kernelSet))
      } catch {
        let reason = if case KernelError.unsupported(let reason) = error { reason } else { "\(error)" }
        unsupported.append(
          UnsupportedOperator(
            subgraph: subgraphIndex, node: nodeIndex, opName: node.opName, version: node.version, reason: reason))
      }
    }
    unsupported += Self.unusableBoundaryTensors(of: subgraph, subgraphIndex: subgraphIndex, tensorProblems, tensors: tensors)
    guard unsupported.isEmpty else { throw RuntimeError.unsupportedOperators(unsupported) }
    let writers = try Self.checkDataFlow(of: nodes, inputs: inputs, tensorCount: tensors.count, subgraphIndex: subgraphIndex)
    var isFusedAway = Array(repeating: false, count: nodes.count)
    var additionalReads = Array(repeating: [RuntimeTensor](), count: nodes.count)
    let fusions = fusesOperators ? OperatorFusion.find(in: nodes, keptTensors: outputs.map(\.index), kernelSet: kernelSet) : []
    for fusion in fusions {
      kernels[fusion.consumer] = fusion.kernel
      if let producerKernel = fusion.producerKernel { kernels[fusion.producer] = producerKernel }
      isFusedAway[fusion.producer] = true
      additionalReads[fusion.consumer] = fusion.additionalReads
    }
    var variableInitialValues: [Int: [UInt8]] = [:]
    for variable in tensors where variable.isVariable {
      variableInitialValues[variable.index] = try Self.initializeVariable(
        variable, schemaTensor: subgraph.tensors[variable.index], model: model, memoryLimit: memoryLimit)
    }
    self.variableInitialValues = variableInitialValues
    self.tensors = tensors
    self.inputs = inputs
    self.outputs = outputs
    self.nodes = nodes
    self.kernels = kernels
    self.isFusedAway = isFusedAway
    self.additionalReads = additionalReads
    unwrittenTensors = tensors.filter { writers[$0.index] == nil && !$0.isModelConstant }
  }

  /// The operands of `operation` no kernel can use, with why, as one reason (`input 1 (tensor 3
  /// 'w'): type UINT4, …`); nil when there are none.
  private static func operandProblems(
    of operation: Operator, _ problems: [Int: String], tensors: [RuntimeTensor]
  ) -> String? {
    guard !problems.isEmpty else { return nil }
    var found: [String] = []
    for (role, indices) in [("input", operation.inputs), ("output", operation.outputs), ("intermediate", operation.intermediates)] {
      for (position, index) in indices.enumerated() where index >= 0 {
        if let problem = problems[Int(index)] {
          found.append("\(role) \(position) (tensor \(index) '\(tensors[Int(index)].name)'): \(problem)")
        }
      }
    }
    return found.isEmpty ? nil : found.joined(separator: "; ")
  }

  /// Subgraph inputs and outputs no kernel can use that no node touches (a caller would still
  /// meet them), as entries with node −1.
  private static func unusableBoundaryTensors(
    of subgraph: SubGraph, subgraphIndex: Int, _ problems: [Int: String], tensors: [RuntimeTensor]
  ) -> [UnsupportedOperator] {
    guard !problems.isEmpty else { return [] }
    let touched = Set(subgraph.operators.flatMap { $0.inputs + $0.outputs + $0.intermediates })
    return [("subgraph input", subgraph.inputs), ("subgraph output", subgraph.outputs)].flatMap { role, indices in
      indices.enumerated().compactMap { position, index -> UnsupportedOperator? in
        guard !touched.contains(index), let problem = problems[Int(index)] else { return nil }
        return UnsupportedOperator(
          subgraph: subgraphIndex, node: -1, opName: "\(role) \(position)", version: 0,
          reason: "tensor \(index) '\(tensors[Int(index)].name)': \(problem)")
      }
    }
  }

  /// Throws unless the subgraph's inputs are tensors callers can fill (not constants) and every
  /// tensor a node writes is written by that node alone and read only by later nodes: no node may
  /// write a constant, a subgraph input or another node's output, nor read its own output or a
  /// later node's (a cycle). Kernels size and read their operands assuming this order, so a graph
  /// that breaks it could make them read or write out of bounds. Returns, by tensor index (below
  /// `tensorCount`), the node that writes the tensor, nil for tensors no node writes.
  private static func checkDataFlow(
    of nodes: [Node], inputs: [RuntimeTensor], tensorCount: Int, subgraphIndex: Int
  ) throws -> [Int?] {
    if let constant = inputs.firstIndex(where: \.isModelConstant) {
      throw RuntimeError.invalidModel(
        "subgraph \(subgraphIndex) input \(constant) is the constant tensor \(inputs[constant].summary), "
          + "which callers cannot fill")
    }
    var writers = [Int?](repeating: nil, count: tensorCount)
    var isSubgraphInput = [Bool](repeating: false, count: tensorCount)
    for input in inputs { isSubgraphInput[input.index] = true }
    func refuse(_ node: Node, _ problem: String) -> RuntimeError {
      .invalidModel("subgraph \(subgraphIndex) node \(node.index) (\(node.opName)) \(problem)")
    }
    for node in nodes {
      for output in node.outputs {
        guard !output.isModelConstant else { throw refuse(node, "writes the constant tensor \(output.summary)") }
        guard !isSubgraphInput[output.index] else {
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
    return writers
  }

  /// Gives variable tensor `variable` memory of its own and returns its initial value: the constant
  /// data, if any (the model's bytes, or the dense copy of a sparse constant, freed once copied).
  private static func initializeVariable(
    _ variable: RuntimeTensor, schemaTensor: TFLiteFormat.Tensor, model: TFLiteModel, memoryLimit: Int
  ) throws -> [UInt8]? {
    guard let byteCount = checkedProduct(variable.shape, elementBytes: variable.type.byteCount) else {
      throw RuntimeError.invalidShape("variable tensor \(variable.summary) is not a valid size")
    }
    guard byteCount <= memoryLimit else {
      throw RuntimeError.memoryLimitExceeded(
        what: "variable tensor \(variable.summary)", byteCount: byteCount, limit: memoryLimit)
    }
    let denseCopy = variable.ownedMemory
    variable.ownedMemory = nil
    let initial = variable.data
    let initialByteCount = denseCopy?.count ?? model.tensorData(schemaTensor).count
    variable.allocateOwnedMemory()
    let initialValue = initial.map {
      [UInt8](UnsafeRawBufferPointer(start: $0, count: min(initialByteCount, variable.byteCount)))
    }
    denseCopy?.deallocate()
    variable.isConstant = false
    return initialValue
  }
}
