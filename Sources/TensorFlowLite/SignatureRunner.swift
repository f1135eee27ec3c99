import Foundation
internal import TFLiteRuntime

/// Runs one signature (a named entry point) of a model, with inputs and outputs addressed by their
/// names in the signature. Get one from ``Interpreter/signatureRunner(with:)``.
///
/// A runner keeps its interpreter alive. A signature of the primary subgraph shares its tensors
/// with the interpreter's `input(at:)` and `output(at:)`.
///
/// - Note: A signature runner is not thread-safe: use it from one thread at a time.
public final class SignatureRunner {
  /// The signature key.
  public let signatureKey: String
  /// The signature's input names, in model order.
  public let inputs: [String]
  /// The signature's output names, in model order.
  public let outputs: [String]
  /// The interpreter, kept alive (strong reference) for as long as the runner is used.
  private let interpreter: Interpreter
  /// The signature's names and tensor indices.
  private let signature: Signature
  /// The executor of the signature's subgraph.
  private let executor: SubgraphExecutor

  /// Creates the runner and allocates its tensors.
  init(interpreter: Interpreter, signature: Signature) throws {
    do {
      executor = try interpreter.runner.subgraph(at: signature.subgraphIndex)
    } catch {
      interpreter.reporter.report("\(error)")
      throw SignatureRunnerError.failedToCreateSignatureRunner(signatureKey: signature.key)
    }
    self.interpreter = interpreter
    self.signature = signature
    signatureKey = signature.key
    inputs = signature.inputs.map(\.name)
    outputs = signature.outputs.map(\.name)
    try allocateTensors()
  }

  /// Allocates tensors if needed, copies every entry of `inputs` (input name → raw bytes) into its
  /// input, then runs the signature.
  ///
  /// - Throws: the errors of ``copy(_:toInputNamed:)`` and ``allocateTensors()``;
  ///   ``SignatureRunnerError/failedToInvokeSignature(signatureKey:)`` when a kernel fails.
  public func invoke(with inputs: [String: Data]) throws {
    try allocateTensors()
    for (name, data) in inputs {
      try copy(data, toInputNamed: name)
    }
    do {
      try executor.invoke()
    } catch {
      interpreter.reporter.report("\(error)")
      throw SignatureRunnerError.failedToInvokeSignature(signatureKey: signatureKey)
    }
  }

  /// The input named `name` in the signature, with a copy of its data. Its ``Tensor/name`` is the
  /// graph tensor's name, which may differ from `name`.
  ///
  /// - Throws: ``SignatureRunnerError/failedToGetTensor(tensorType:nameInSignature:)`` for an
  ///   unknown name, ``SignatureRunnerError/allocateTensorsRequired`` after a resize that was not
  ///   followed by `allocateTensors()`, ``SignatureRunnerError/invalidTensorDataType``.
  public func input(named name: String) throws -> Tensor {
    try publicTensor(named: name, role: "input", in: signature.inputs)
  }

  /// The output named `name` in the signature, with a copy of its data.
  ///
  /// - Throws: as ``input(named:)``.
  public func output(named name: String) throws -> Tensor {
    try publicTensor(named: name, role: "output", in: signature.outputs)
  }

  /// Gives input `name` a new shape; it takes effect at the next `allocateTensors()` (which
  /// `invoke(with:)` calls).
  ///
  /// - Throws: ``SignatureRunnerError/failedToResizeInputTensor(inputName:)`` for an unknown name,
  ///   a dimension below 1 or a shape too large to address.
  public func resizeInput(named name: String, toShape shape: Tensor.Shape) throws {
    guard let tensor = tensor(named: name, in: signature.inputs),
      let position = executor.inputs.firstIndex(where: { $0 === tensor })
    else {
      throw SignatureRunnerError.failedToResizeInputTensor(inputName: name)
    }
    do {
      try executor.resizeInput(at: position, to: shape.dimensions)
    } catch {
      interpreter.reporter.report("\(error)")
      throw SignatureRunnerError.failedToResizeInputTensor(inputName: name)
    }
  }

  /// Copies `data` (the raw bytes of the elements) into input `name`.
  ///
  /// - Throws: ``SignatureRunnerError/failedToGetTensor(tensorType:nameInSignature:)`` for an
  ///   unknown name, ``SignatureRunnerError/invalidTensorDataCount(provided:required:)`` when the
  ///   byte count differs, ``SignatureRunnerError/allocateTensorsRequired`` after an unallocated resize.
  public func copy(_ data: Data, toInputNamed name: String) throws {
    guard let tensor = tensor(named: name, in: signature.inputs) else {
      throw SignatureRunnerError.failedToGetTensor(tensorType: "input", nameInSignature: name)
    }
    try mapAccessFailure {
      try data.withUnsafeBytes { bytes in
        try tensor.copy(from: bytes, isAllocated: executor.isAllocated)
      }
    }
  }

  /// Prepares the signature's graph for its current input shapes; does nothing when nothing
  /// changed since the last allocation.
  ///
  /// - Throws: ``SignatureRunnerError/failedToAllocateTensors`` when shapes do not fit the operators.
  public func allocateTensors() throws {
    guard !executor.isAllocated else { return }
    do {
      try executor.allocateTensors()
    } catch {
      interpreter.reporter.report("\(error)")
      throw SignatureRunnerError.failedToAllocateTensors
    }
  }

  // MARK: - Private

  /// The tensor the signature calls `name` among `entries`.
  private func tensor(named name: String, in entries: [(name: String, tensorIndex: Int)]) -> RuntimeTensor? {
    guard let entry = entries.first(where: { $0.name == name }), executor.tensors.indices.contains(entry.tensorIndex)
    else { return nil }
    return executor.tensors[entry.tensorIndex]
  }

  /// The public tensor the signature calls `name` among `entries` (`role` is "input" or "output").
  private func publicTensor(
    named name: String, role: String, in entries: [(name: String, tensorIndex: Int)]
  ) throws -> Tensor {
    guard let tensor = tensor(named: name, in: entries) else {
      throw SignatureRunnerError.failedToGetTensor(tensorType: role, nameInSignature: name)
    }
    return try mapAccessFailure { () in
      try tensor.publicTensor(isAllocated: executor.isAllocated)
    }
  }

  /// Runs `body`, turning its ``TensorAccessFailure`` into the matching ``SignatureRunnerError``.
  private func mapAccessFailure<Result>(_ body: () throws -> Result) throws -> Result {
    do {
      return try body()
    } catch let failure as TensorAccessFailure {
      switch failure {
      case .notAllocated:
        throw SignatureRunnerError.allocateTensorsRequired
      case .unsupportedType, .wrongElementType:
        throw SignatureRunnerError.invalidTensorDataType
      case .wrongByteCount(let provided, let required, let message):
        interpreter.reporter.record(message)
        throw SignatureRunnerError.invalidTensorDataCount(provided: provided, required: required)
      }
    }
  }
}
