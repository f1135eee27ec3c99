// ML Kit's `ModelInterpreter` on this package's runtime (`TensorFlowLite.Interpreter`). Runs are
// queued on one serial queue per model interpreter, so concurrent `run` calls are safe and give
// the outputs serial calls would; results go to the callback on `callbackQueue`.
import Dispatch
import Foundation
import TensorFlowLite

/// Receives the outputs of ``ModelInterpreter/run(inputs:options:completion:)``, or nil and an error.
public typealias ModelInterpreterRunCallback = (ModelOutputs?, Error?) -> Void
/// Receives the index of a named input or output, or nil and an error.
public typealias ModelInterpreterInputOutputOpIndexCallback = (NSNumber?, Error?) -> Void

/// Runs a custom TensorFlow Lite model with declared input and output formats (ML Kit's
/// `FIRModelInterpreter`). Thread-safe.
///
/// Every failure reaches the completion as an `NSError` in ``MachineLearningErrorDomain``:
/// ``MachineLearningErrorDomainCode/invalidArgument`` for formats or inputs that do not fit the
/// model (type, rank, shape, byte count, non-numbers, ragged arrays, NaN or fractions where the
/// model wants integers) and for a local file that is not a usable model;
/// ``MachineLearningErrorDomainCode/notFound`` for a missing local file;
/// ``MachineLearningErrorDomainCode/failedPrecondition`` for a remote model not downloaded yet;
/// ``MachineLearningErrorDomainCode/internal`` when the runtime fails while running.
public final class ModelInterpreter: NSObject, @unchecked Sendable {  // mutable state is confined to `work` or locked
  /// Where the model comes from.
  private enum Source {
    /// A file on the device.
    case local(CustomLocalModel)
    /// The latest downloaded version of a remote model.
    case remote(CustomRemoteModel, ModelManager)
  }

  /// A loaded model and the version it was loaded from.
  private struct LoadedModel {
    /// The runtime's interpreter, with tensors allocated for the current input shapes.
    var interpreter: Interpreter
    /// The downloaded version (the source's hash) for remote models, empty for local ones.
    var version: String
  }

  /// Where the model comes from.
  private let source: Source
  /// Runs loads and inferences one at a time.
  private let work = DispatchQueue(label: "FirebaseMLModelInterpreter.run")
  /// The loaded model; read and written only on `work`.
  private var loaded: LoadedModel?
  /// Backing store of the settable properties.
  private let settings: Locked<(statsCollection: Bool, callbackQueue: ModelDownloaderCallbackQueue)>

  /// Accepted and kept for source compatibility; this package collects no statistics.
  public var isStatsCollectionEnabled: Bool {
    get { settings.withLock { $0.statsCollection } }
    set { settings.withLock { $0.statsCollection = newValue } }
  }

  /// Where completions run: the main queue on Apple platforms (as ML Kit did), a private serial
  /// queue on Linux, by default (the same rule as `ModelDownloader`).
  public var callbackQueue: ModelDownloaderCallbackQueue {
    get { settings.withLock { $0.callbackQueue } }
    set { settings.withLock { $0.callbackQueue = newValue } }
  }

  /// Creates an interpreter for `source`.
  private init(source: Source) {
    self.source = source
    self.settings = Locked((true, .platformDefault))
  }

  /// An interpreter for the model file of `localModel`. The file is read at the first run.
  public static func modelInterpreter(localModel: CustomLocalModel) -> ModelInterpreter {
    ModelInterpreter(source: .local(localModel))
  }

  /// An interpreter for the latest downloaded version of `remoteModel`, through
  /// `ModelManager.modelManager()` as it is at this call. Runs fail until the model is downloaded;
  /// a newer version downloaded later is picked up by the next run.
  public static func modelInterpreter(remoteModel: CustomRemoteModel) -> ModelInterpreter {
    ModelInterpreter(source: .remote(remoteModel, ModelManager.modelManager()))
  }

  // MARK: - Running

  /// Runs the model on `inputs` with the formats of `options` and gives the outputs to
  /// `completion` on ``callbackQueue``. `inputs` and `options` are read when this is called.
  public func run(inputs: ModelInputs, options: ModelInputOutputOptions, completion: @escaping ModelInterpreterRunCallback) {
    let request = SendableBox(value: (inputs: inputs.values, formats: options.snapshot))
    let reply = SendableBox(value: completion)
    let queue = callbackQueue
    work.async { [self] in
      let result = Result { try execute(inputs: request.value.inputs, formats: request.value.formats) }.mapError(Self.reportable)
      queue.deliver {
        switch result {
        case .success(let outputs): reply.value(outputs, nil)
        case .failure(let error): reply.value(nil, error)
        }
      }
    }
  }

  /// The index of the model input whose tensor is named `opName`, on ``callbackQueue``.
  public func inputIndex(opName: String, completion: @escaping ModelInterpreterInputOutputOpIndexCallback) {
    lookUpIndex(of: opName, inInputs: true, completion: completion)
  }

  /// The index of the model output whose tensor is named `opName`, on ``callbackQueue``.
  public func outputIndex(opName: String, completion: @escaping ModelInterpreterInputOutputOpIndexCallback) {
    lookUpIndex(of: opName, inInputs: false, completion: completion)
  }

  // MARK: - Work (on `work`)

  /// One run: checks the declarations, encodes the inputs, runs, decodes the declared outputs.
  private func execute(inputs: [Any], formats: (inputs: [Int: TensorFormat], outputs: [Int: TensorFormat])) throws -> ModelOutputs {
    guard !formats.inputs.isEmpty else {
      throw MachineLearningError.invalidArgument("No input format is set; call setInputFormat(index:type:dimensions:).")
    }
    guard !formats.outputs.isEmpty else {
      throw MachineLearningError.invalidArgument("No output format is set; call setOutputFormat(index:type:dimensions:).")
    }
    guard Set(formats.inputs.keys) == Set(inputs.indices) else {
      throw MachineLearningError.invalidArgument(
        "\(inputs.count) inputs were added, but input formats are set for indices \(formats.inputs.keys.sorted()).")
    }
    let inputFormats = inputs.indices.map { formats.inputs[$0]! }  // every index has a format (checked above)
    let encoded = try zip(inputs, inputFormats).enumerated().map { index, pair in
      try InputEncoder(format: pair.1, what: "Input \(index)").encode(pair.0)
    }
    let interpreter = try loadModel()
    guard interpreter.inputTensorCount == inputs.count else {
      throw MachineLearningError.invalidArgument("The model has \(interpreter.inputTensorCount) inputs; \(inputs.count) were given.")
    }
    if let index = formats.outputs.keys.first(where: { $0 >= interpreter.outputTensorCount }) {
      throw MachineLearningError.invalidArgument("An output format is set for index \(index), but the model has \(interpreter.outputTensorCount) outputs.")
    }
    try fitInputs(of: interpreter, to: inputFormats)
    do {
      for (index, data) in encoded.enumerated() { try interpreter.copy(data, toInputAt: index) }
      try interpreter.invoke()
    } catch {
      throw MachineLearningError.make(
        .internal, "Running the model failed: \(interpreter.lastErrorMessage ?? "\(error)")", underlying: error)
    }
    var outputs: [Int: Any] = [:]
    for (index, format) in formats.outputs {
      let tensor = try interpreter.output(at: index)
      guard tensor.dataType == format.type, tensor.shape.dimensions == format.dimensions else {
        throw MachineLearningError.invalidArgument(
          "Output \(index) is declared \(format.description), but the model gives \(tensor.dataType.schemaName)\(tensor.shape.dimensions).")
      }
      outputs[index] = try OutputDecoder.nestedArray(of: interpreter, output: index, type: format.type, dimensions: format.dimensions)
    }
    return ModelOutputs(outputs: outputs)
  }

  /// Checks the declared input types against the model and resizes inputs whose declared
  /// dimensions differ from the current ones (a different batch size, for example).
  private func fitInputs(of interpreter: Interpreter, to formats: [TensorFormat]) throws {
    var resizes: [(index: Int, dimensions: [Int])] = []
    for (index, format) in formats.enumerated() {
      let tensor = try interpreter.input(at: index)
      guard tensor.dataType == format.type else {
        throw MachineLearningError.invalidArgument(
          "Input \(index) is declared \(format.type.schemaName), but the model's input is \(tensor.dataType.schemaName)\(tensor.shape.dimensions).")
      }
      guard format.dimensions.count == tensor.shape.rank else {
        throw MachineLearningError.invalidArgument(
          "Input \(index) is declared \(format.description), but the model's input has rank \(tensor.shape.rank) (\(tensor.shape.dimensions)).")
      }
      if tensor.shape.dimensions != format.dimensions { resizes.append((index, format.dimensions)) }
    }
    guard !resizes.isEmpty else { return }
    do {
      for resize in resizes { try interpreter.resizeInput(at: resize.index, to: Tensor.Shape(resize.dimensions)) }
      try interpreter.allocateTensors()
    } catch {
      loaded = nil  // reload at the next run rather than keep an interpreter left unallocated
      throw MachineLearningError.invalidArgument(
        "The model cannot take inputs of shapes \(formats.map(\.dimensions)): \(interpreter.lastErrorMessage ?? "\(error)")")
    }
  }

  /// The interpreter of the current model version, loading it when needed.
  private func loadModel() throws -> Interpreter {
    let path: String
    let version: String
    switch source {
    case .local(let model):
      if let loaded { return loaded.interpreter }
      path = model.path
      version = ""
      guard FileManager.default.fileExists(atPath: path) else {
        throw MachineLearningError.make(.notFound, "The local model file '\(path)' does not exist.")
      }
    case .remote(let model, let manager):
      guard let stored = manager.storedModel(named: model.name) else { throw ModelManager.notDownloadedError(model.name) }
      if let loaded, loaded.version == stored.hash { return loaded.interpreter }
      path = stored.path
      version = stored.hash
    }
    do {
      let interpreter = try Interpreter(modelPath: path)
      try interpreter.allocateTensors()
      loaded = LoadedModel(interpreter: interpreter, version: version)
      return interpreter
    } catch {
      throw MachineLearningError.make(
        .invalidArgument, "The model file '\(path)' cannot be used: \(error)", underlying: error)
    }
  }

  /// Finds the input (or output) whose tensor name is `name` and reports its index.
  private func lookUpIndex(of name: String, inInputs: Bool, completion: @escaping ModelInterpreterInputOutputOpIndexCallback) {
    let reply = SendableBox(value: completion)
    let queue = callbackQueue
    work.async { [self] in
      let result = Result { () throws -> NSNumber in
        let interpreter = try loadModel()
        let count = inInputs ? interpreter.inputTensorCount : interpreter.outputTensorCount
        for index in 0..<count {
          let tensor = inInputs ? try interpreter.input(at: index) : try interpreter.output(at: index)
          if tensor.name == name { return NSNumber(value: UInt(index)) }
        }
        throw MachineLearningError.invalidArgument("The model has no \(inInputs ? "input" : "output") named '\(name)'.")
      }.mapError(Self.reportable)
      queue.deliver {
        switch result {
        case .success(let index): reply.value(index, nil)
        case .failure(let error): reply.value(nil, error)
        }
      }
    }
  }

  /// `error` as an error of ``MachineLearningErrorDomain`` (runtime errors become `internal` ones).
  private static func reportable(_ error: any Error) -> NSError {
    let error = error as NSError
    guard error.domain != MachineLearningErrorDomain else { return error }
    return MachineLearningError.make(.internal, "The runtime failed: \(error.localizedDescription)", underlying: error)
  }
}
