import Foundation
internal import TFLiteFormat
internal import TFLiteRuntime

/// Runs a TensorFlow Lite model: TensorFlowLiteSwift's `Interpreter`, on this package's runtime.
///
/// The usual sequence is `allocateTensors()`, `copy(_:toInputAt:)` for every input, `invoke()`,
/// then `output(at:)`. After `resizeInput(at:to:)`, call `allocateTensors()` again.
///
/// - Note: An interpreter is not thread-safe: use it from one thread at a time.
public final class Interpreter {
  /// The options the interpreter was created with, nil for the defaults.
  public let options: Options?
  /// The delegates given at creation. They are kept but take no part in execution: this runtime
  /// runs every model on the CPU.
  public let delegates: [Delegate]?
  /// The model's runner (owns the model bytes).
  let runner: ModelRunner
  /// The primary subgraph, which `input(at:)`, `output(at:)` and `invoke()` act on.
  private let primary: SubgraphExecutor
  /// Where detailed runtime messages go.
  let reporter: ErrorReporter

  /// The number of input tensors of the model.
  public var inputTensorCount: Int { primary.inputs.count }

  /// The number of output tensors of the model.
  public var outputTensorCount: Int { primary.outputs.count }

  /// The keys of the model's signatures, in model order.
  public var signatureKeys: [String] { runner.signatures.map(\.key) }

  /// Bytes of activation memory planned by the last successful `allocateTensors()` (0 before).
  /// Not in TensorFlowLiteSwift.
  public var arenaByteCount: Int { primary.isAllocated ? primary.arenaByteCount : 0 }

  /// The detailed message of the most recent failure of this interpreter (the text the error
  /// reporter printed), nil when nothing failed yet. Not in TensorFlowLiteSwift.
  public var lastErrorMessage: String? { reporter.lastMessage }

  /// Creates an interpreter for the model file at `modelPath`.
  ///
  /// - Parameters:
  ///   - modelPath: Path of a `.tflite` file.
  ///   - options: Interpreter options; nil for the defaults. When given, runtime failures are
  ///     also printed as `TensorFlow Lite Error: <message>`; without them they go to standard error.
  ///   - delegates: Accepted and kept, not used (CPU execution).
  /// - Throws: ``InterpreterError/failedToLoadModel`` when the file is missing or not a valid model;
  ///   ``InterpreterError/failedToCreateInterpreter`` when the model uses operators or types this
  ///   runtime cannot run (the reported message lists every one).
  public convenience init(modelPath: String, options: Options? = nil, delegates: [Delegate]? = nil) throws {
    let reporter = ErrorReporter(printsWithPrefix: options != nil)
    let model: TFLiteModel
    do {
      guard !modelPath.isEmpty else { throw InterpreterError.failedToLoadModel }
      model = try TFLiteModel(contentsOfFile: modelPath)
    } catch {
      reporter.report(modelPath.isEmpty ? "the model path is empty" : "could not load '\(modelPath)': \(error)")
      throw InterpreterError.failedToLoadModel
    }
    try self.init(model: model, options: options, delegates: delegates, reporter: reporter)
  }

  /// Creates an interpreter for the model in `modelData`. The interpreter keeps its own copy of
  /// the bytes, so `modelData` may be released right away.
  ///
  /// - Throws: ``InterpreterError/failedToLoadModel`` when the bytes are not a valid model;
  ///   ``InterpreterError/failedToCreateInterpreter`` when the model cannot be run.
  public convenience init(modelData: Data, options: Options? = nil, delegates: [Delegate]? = nil) throws {
    let reporter = ErrorReporter(printsWithPrefix: options != nil)
    let model: TFLiteModel
    do {
      model = try TFLiteModel(bytes: [UInt8](modelData))
    } catch {
      reporter.report("could not load the model data (\(modelData.count) bytes): \(error)")
      throw InterpreterError.failedToLoadModel
    }
    try self.init(model: model, options: options, delegates: delegates, reporter: reporter)
  }

  /// Builds the runner for a loaded model.
  private init(model: TFLiteModel, options: Options?, delegates: [Delegate]?, reporter: ErrorReporter) throws {
    let threadCount = options?.threadCount.flatMap { $0 > 0 ? $0 : nil } ?? 1
    do {
      runner = try ModelRunner(model: model, options: RunnerOptions(threadCount: threadCount))
    } catch {
      reporter.report("\(error)")
      throw InterpreterError.failedToCreateInterpreter
    }
    primary = runner.primary
    self.options = options
    self.delegates = delegates
    self.reporter = reporter
  }

  /// Runs the model on the current input data.
  ///
  /// - Throws: ``InterpreterError/allocateTensorsRequired`` when tensors are not allocated (also
  ///   after a resize) and, as upstream, when a kernel fails (the message names the node).
  public func invoke() throws {
    do {
      try primary.invoke()
    } catch {
      reporter.report("\(error)")
      throw InterpreterError.allocateTensorsRequired
    }
  }

  /// The input tensor at `index`, with a copy of its data.
  ///
  /// - Throws: ``InterpreterError/invalidTensorIndex(index:maxIndex:)``,
  ///   ``InterpreterError/allocateTensorsRequired`` before `allocateTensors()` (or after a resize),
  ///   ``InterpreterError/invalidTensorDataType`` for element types ``Tensor/DataType`` lacks.
  public func input(at index: Int) throws -> Tensor {
    let tensor = try checkedTensor(at: index, of: primary.inputs)
    return try mapAccessFailure(notAllocated: .allocateTensorsRequired) {
      try tensor.publicTensor(isAllocated: primary.isAllocated)
    }
  }

  /// The output tensor at `index`, with a copy of its data.
  ///
  /// - Throws: ``InterpreterError/invalidTensorIndex(index:maxIndex:)``,
  ///   ``InterpreterError/invokeInterpreterRequired`` when the output has no data (tensors not
  ///   allocated), ``InterpreterError/invalidTensorDataType`` for element types ``Tensor/DataType`` lacks.
  public func output(at index: Int) throws -> Tensor {
    let tensor = try checkedTensor(at: index, of: primary.outputs)
    return try mapAccessFailure(notAllocated: .invokeInterpreterRequired) {
      try tensor.publicTensor(isAllocated: primary.isAllocated)
    }
  }

  /// Gives input `index` a new shape; call `allocateTensors()` before using the interpreter again.
  ///
  /// - Throws: ``InterpreterError/invalidTensorIndex(index:maxIndex:)``;
  ///   ``InterpreterError/failedToResizeInputTensor(index:)`` for a dimension below 1 or a shape
  ///   too large to address. The interpreter is unchanged when it throws.
  public func resizeInput(at index: Int, to shape: Tensor.Shape) throws {
    _ = try checkedTensor(at: index, of: primary.inputs)
    do {
      try primary.resizeInput(at: index, to: shape.dimensions)
    } catch {
      reporter.report("\(error)")
      throw InterpreterError.failedToResizeInputTensor(index: index)
    }
  }

  /// Copies `data` (the raw bytes of the elements) into input `index` and returns the input.
  ///
  /// - Throws: ``InterpreterError/invalidTensorIndex(index:maxIndex:)``;
  ///   ``InterpreterError/invalidTensorDataCount(provided:required:)`` when `data.count` is not the
  ///   input's byte count (``lastErrorMessage`` then states its type, shape and bytes);
  ///   ``InterpreterError/allocateTensorsRequired`` before `allocateTensors()`.
  @discardableResult
  public func copy(_ data: Data, toInputAt index: Int) throws -> Tensor {
    let tensor = try checkedTensor(at: index, of: primary.inputs)
    try mapAccessFailure(notAllocated: .allocateTensorsRequired) {
      try data.withUnsafeBytes { bytes in
        try tensor.copy(from: bytes, isAllocated: primary.isAllocated)
      }
    }
    return try input(at: index)
  }

  /// Copies `values` into input `index`, whose element type must be `Element` and whose element
  /// count must be `values.count`, and returns the input. Not in TensorFlowLiteSwift.
  ///
  /// - Throws: ``InterpreterError/tensorFlowLiteError(_:)`` stating the input's type, shape and
  ///   byte count when `Element` or the count does not match; otherwise as ``copy(_:toInputAt:)``.
  ///
  /// The argument label keeps `copy([1, 3], toInputAt: 0)` meaning `Data`, as in TensorFlowLiteSwift.
  @discardableResult
  public func copy<Element: TensorElement>(values: [Element], toInputAt index: Int) throws -> Tensor {
    try withUnsafeMutableInputBuffer(at: index, as: Element.self) { buffer in
      guard buffer.count == values.count else {
        let message =
          "input \(index) \(primary.inputs[index].layoutDescription) needs \(buffer.count) \(Element.self) values, got \(values.count)"
        reporter.record(message)
        throw InterpreterError.tensorFlowLiteError(message)
      }
      _ = buffer.update(fromContentsOf: values)
    }
    return try input(at: index)
  }

  /// Calls `body` with the memory of input `index` as `Element`s, to fill it without going through
  /// `Data`. The buffer is valid only inside `body`. Not in TensorFlowLiteSwift.
  ///
  /// - Throws: as ``input(at:)``, and ``InterpreterError/tensorFlowLiteError(_:)`` when `Element`
  ///   is not the input's element type.
  public func withUnsafeMutableInputBuffer<Element: TensorElement, Result>(
    at index: Int, as type: Element.Type, _ body: (UnsafeMutableBufferPointer<Element>) throws -> Result
  ) throws -> Result {
    let tensor = try checkedTensor(at: index, of: primary.inputs)
    let buffer = try mapAccessFailure(notAllocated: .allocateTensorsRequired) {
      try tensor.typedBuffer(of: Element.self, isAllocated: primary.isAllocated)
    }
    return try body(buffer)
  }

  /// Calls `body` with the memory of output `index` as `Element`s, to read it without a copy. The
  /// buffer is valid only inside `body`. Not in TensorFlowLiteSwift.
  ///
  /// - Throws: as ``output(at:)``, and ``InterpreterError/tensorFlowLiteError(_:)`` when `Element`
  ///   is not the output's element type.
  public func withUnsafeOutputBuffer<Element: TensorElement, Result>(
    at index: Int, as type: Element.Type, _ body: (UnsafeBufferPointer<Element>) throws -> Result
  ) throws -> Result {
    let tensor = try checkedTensor(at: index, of: primary.outputs)
    let buffer = try mapAccessFailure(notAllocated: .invokeInterpreterRequired) {
      try tensor.typedBuffer(of: Element.self, isAllocated: primary.isAllocated)
    }
    return try body(UnsafeBufferPointer(buffer))
  }

  /// Prepares the graph for the current input shapes: infers every tensor's shape, runs the
  /// kernels' preparation, plans the activation memory and resets the variable tensors. As in
  /// LiteRT it does nothing when the tensors are allocated and no input was resized since, so
  /// inputs already copied and the state of variable tensors stay.
  ///
  /// - Throws: ``InterpreterError/failedToAllocateTensors`` when shapes do not fit the operators
  ///   (the message names the node); fix the input shapes and call it again.
  public func allocateTensors() throws {
    guard !primary.isAllocated else { return }
    do {
      try primary.allocateTensors()
    } catch {
      reporter.report("\(error)")
      throw InterpreterError.failedToAllocateTensors
    }
  }

  /// Sets every variable tensor (the state of recurrent operators such as LSTM and SVDF) back to
  /// zero, as at creation. Not in TensorFlowLiteSwift: LiteRT's C++ `Interpreter::ResetVariableTensors`.
  /// Resource variables (VAR_HANDLE, ASSIGN_VARIABLE) keep their values, as in LiteRT.
  public func resetVariableTensors() {
    runner.resetVariableTensors()
  }

  /// A runner for the signature `key`, with its tensors allocated.
  ///
  /// - Throws: ``SignatureRunnerError/failedToCreateSignatureRunner(signatureKey:)`` when the model
  ///   has no such signature; ``SignatureRunnerError/failedToAllocateTensors`` when its graph
  ///   cannot be prepared.
  public func signatureRunner(with key: String) throws -> SignatureRunner {
    guard let signature = runner.signatures.first(where: { $0.key == key }) else {
      throw SignatureRunnerError.failedToCreateSignatureRunner(signatureKey: key)
    }
    return try SignatureRunner(interpreter: self, signature: signature)
  }

  // MARK: - Private

  /// The tensor at `index` of `tensors`, or ``InterpreterError/invalidTensorIndex(index:maxIndex:)``.
  private func checkedTensor(at index: Int, of tensors: [RuntimeTensor]) throws -> RuntimeTensor {
    guard tensors.indices.contains(index) else {
      throw InterpreterError.invalidTensorIndex(index: index, maxIndex: tensors.count - 1)
    }
    return tensors[index]
  }

  /// Runs `body`, turning its ``TensorAccessFailure`` into the matching ``InterpreterError``
  /// (`notAllocated` for a tensor without memory) and recording the details.
  private func mapAccessFailure<Result>(
    notAllocated: InterpreterError, _ body: () throws -> Result
  ) throws -> Result {
    do {
      return try body()
    } catch let failure as TensorAccessFailure {
      switch failure {
      case .notAllocated:
        throw notAllocated
      case .unsupportedType:
        throw InterpreterError.invalidTensorDataType
      case .wrongByteCount(let provided, let required, let message):
        reporter.record(message)
        throw InterpreterError.invalidTensorDataCount(provided: provided, required: required)
      case .wrongElementType(let message):
        reporter.record(message)
        throw InterpreterError.tensorFlowLiteError(message)
      }
    }
  }
}

extension Interpreter {
  /// Options for creating an ``Interpreter``.
  public struct Options: Equatable, Hashable {
    /// The most CPU threads the kernels may use; nil (or a value below 1) means one thread.
    public var threadCount: Int? = nil
    /// Accepted for compatibility and ignored: this runtime's own kernels always run.
    public var isXNNPackEnabled: Bool = false
    /// Creates the default options.
    public init() {}
  }
}

/// The old name of ``Interpreter/Options``.
@available(*, deprecated, renamed: "Interpreter.Options")
public typealias InterpreterOptions = Interpreter.Options
