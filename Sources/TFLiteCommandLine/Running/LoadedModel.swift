import TFLiteFormat
import TFLiteRuntime

/// A named input or output of the graph a command runs: the name the user addresses it by (the
/// signature's name, or the tensor's name without a signature) and the runtime tensor.
struct GraphEndpoint {
  /// The name used on the command line and in reports.
  var name: String
  /// The tensor.
  var tensor: RuntimeTensor
}

/// A model loaded for `run`, `compare`, `bench` and `demo`: its runner and the graph chosen with
/// `--signature` (the primary subgraph by default).
struct LoadedModel {
  /// The runner, which owns the model bytes.
  let runner: ModelRunner
  /// The executor of the chosen graph.
  let executor: SubgraphExecutor
  /// The graph's inputs, in order.
  let inputs: [GraphEndpoint]
  /// The graph's outputs, in order.
  let outputs: [GraphEndpoint]

  /// Loads `path` and picks the graph of signature `signatureKey` (the primary subgraph when nil),
  /// to run on the optimized kernels or, with `kernels: .reference`, the plain reference ones; with
  /// `fusesOperators` false every node runs on its own (``RunnerOptions/fusesOperators``).
  init(
    path: String, signatureKey: String?, threadCount: Int, kernels: KernelSet = .optimized, fusesOperators: Bool = true
  ) throws {
    let model = try TFLiteModel(contentsOfFile: path)
    var options = RunnerOptions(threadCount: threadCount, kernels: kernels)
    options.fusesOperators = fusesOperators
    runner = try ModelRunner(model: model, options: options)
    guard let signatureKey else {
      executor = runner.primary
      inputs = executor.inputs.map { GraphEndpoint(name: $0.name, tensor: $0) }
      outputs = executor.outputs.map { GraphEndpoint(name: $0.name, tensor: $0) }
      return
    }
    guard let signature = runner.signatures.first(where: { $0.key == signatureKey }) else {
      let known = runner.signatures.map { "'\($0.key)'" }.joined(separator: ", ")
      throw CommandFailure("the model has no signature '\(signatureKey)' (signatures: \(known.isEmpty ? "none" : known))")
    }
    let executor = try runner.subgraph(at: signature.subgraphIndex)
    func endpoints(_ entries: [(name: String, tensorIndex: Int)]) throws -> [GraphEndpoint] {
      try entries.map { entry in
        guard executor.tensors.indices.contains(entry.tensorIndex) else {
          throw CommandFailure("signature '\(signatureKey)' names tensor \(entry.tensorIndex), which does not exist")
        }
        return GraphEndpoint(name: entry.name, tensor: executor.tensors[entry.tensorIndex])
      }
    }
    self.executor = executor
    inputs = try endpoints(signature.inputs)
    outputs = try endpoints(signature.outputs)
  }

  /// Gives every input its array: resizes inputs whose model shape has flexible (−1) dimensions
  /// to the array's shape, allocates the tensors and copies the data in.
  ///
  /// Throws ``CommandFailure`` naming the input, what it expects and what the array holds when
  /// the element type or shape does not fit.
  func feed(_ arrays: [HostArray]) throws {
    for (endpoint, array) in zip(inputs, arrays) {
      let tensor = endpoint.tensor
      let mismatch = "input '\(endpoint.name)' expects \(tensor.typeAndShape)\(tensor.flexibleShapeNote), got \(array.typeAndShape)\(array.origin.map { " from \($0)" } ?? "")"
      guard array.type == tensor.type else { throw CommandFailure(mismatch) }
      guard array.shape != tensor.shape else { continue }
      guard tensor.accepts(shape: array.shape), let position = executor.inputs.firstIndex(where: { $0 === tensor }) else {
        throw CommandFailure(mismatch)
      }
      try executor.resizeInput(at: position, to: array.shape)
    }
    if !executor.isAllocated { try executor.allocateTensors() }
    for (endpoint, array) in zip(inputs, arrays) {
      guard let data = endpoint.tensor.data, array.bytes.count == endpoint.tensor.byteCount else {
        throw CommandFailure("input '\(endpoint.name)' could not take \(array.typeAndShape)")
      }
      array.bytes.withUnsafeBytes { bytes in
        if let source = bytes.baseAddress { data.copyMemory(from: source, byteCount: bytes.count) }
      }
    }
  }

  /// The current contents of every output.
  func outputArrays() -> [HostArray] {
    outputs.map { HostArray(copying: $0.tensor) }
  }
}

extension RuntimeTensor {
  /// `FLOAT32 [1, 224, 224, 3]`.
  var typeAndShape: String { "\(type.name) \(formatShape(shape))" }

  /// ` (flexible dimensions: [-1, 3])` when the model lets some dimension be resized, else empty.
  var flexibleShapeNote: String {
    shapeSignature.contains(-1) ? " (shape signature \(formatShape(shapeSignature)))" : ""
  }

  /// True when the model's shape signature allows `shape`: same rank, and every fixed dimension equal.
  func accepts(shape newShape: [Int]) -> Bool {
    guard newShape.count == shapeSignature.count, newShape.allSatisfy({ $0 > 0 }) else { return false }
    return zip(newShape, shapeSignature).allSatisfy { new, declared in declared == -1 || new == declared }
  }
}

/// `[1, 224, 224, 3]`.
func formatShape(_ shape: [Int]) -> String {
  "[\(shape.map(String.init).joined(separator: ", "))]"
}

/// A failure of a command that is not a usage mistake: printed as `tflite <command>: error: <message>`, exit code 1.
struct CommandFailure: Error, CustomStringConvertible {
  /// What went wrong.
  var message: String
  /// Creates a failure.
  init(_ message: String) { self.message = message }
  /// The message.
  var description: String { message }
}
