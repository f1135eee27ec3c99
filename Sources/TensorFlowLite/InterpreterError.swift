import Foundation

/// Errors thrown by ``Interpreter``.
public enum InterpreterError: Error, Equatable, Hashable {
  /// An input or output index outside `0...maxIndex`.
  case invalidTensorIndex(index: Int, maxIndex: Int)
  /// Data whose byte count is not the tensor's.
  case invalidTensorDataCount(provided: Int, required: Int)
  /// A tensor whose element type ``Tensor/DataType`` cannot represent.
  case invalidTensorDataType
  /// The model file or bytes could not be read or failed verification.
  case failedToLoadModel
  /// The model is valid but cannot be run (for example, it uses an operator without a kernel).
  case failedToCreateInterpreter
  /// The input could not take the requested shape.
  case failedToResizeInputTensor(index: Int)
  /// Copying data into an input failed.
  case failedToCopyDataToInputTensor
  /// Preparing the graph for the current input shapes failed.
  case failedToAllocateTensors
  /// Tensors must be allocated (again) before this call.
  case allocateTensorsRequired
  /// The output has no data until the interpreter runs.
  case invokeInterpreterRequired
  /// A detailed message from the runtime.
  case tensorFlowLiteError(String)
}

extension InterpreterError: LocalizedError {
  /// The message of the error, worded as TensorFlowLiteSwift words it.
  public var errorDescription: String? {
    switch self {
    case .invalidTensorIndex(let index, let maxIndex):
      "Invalid tensor index \(index), max index is \(maxIndex)."
    case .invalidTensorDataCount(let provided, let required):
      "Provided data count \(provided) must match the required count \(required)."
    case .invalidTensorDataType:
      "Tensor data type is unsupported or could not be determined due to a model error."
    case .failedToLoadModel:
      "Failed to load the given model."
    case .failedToCreateInterpreter:
      "Failed to create the interpreter."
    case .failedToResizeInputTensor(let index):
      "Failed to resize input tensor at index \(index)."
    case .failedToCopyDataToInputTensor:
      "Failed to copy data to input tensor."
    case .failedToAllocateTensors:
      "Failed to allocate memory for input tensors."
    case .allocateTensorsRequired:
      "Must call allocateTensors()."
    case .invokeInterpreterRequired:
      "Must call invoke()."
    case .tensorFlowLiteError(let message):
      "TensorFlow Lite Error: \(message)"
    }
  }
}

extension InterpreterError: CustomStringConvertible {
  /// The same text as ``errorDescription``.
  public var description: String { errorDescription ?? "Unknown error." }
}

/// Errors thrown by ``SignatureRunner``.
public enum SignatureRunnerError: Error, Equatable, Hashable {
  /// Data whose byte count is not the input's.
  case invalidTensorDataCount(provided: Int, required: Int)
  /// A tensor whose element type ``Tensor/DataType`` cannot represent.
  case invalidTensorDataType
  /// The model has no signature with this key, or its graph cannot be run.
  case failedToCreateSignatureRunner(signatureKey: String)
  /// The signature has no input (`tensorType` "input") or output ("output") with this name.
  case failedToGetTensor(tensorType: String, nameInSignature: String)
  /// The signature has no input with this name, or it could not take the requested shape.
  case failedToResizeInputTensor(inputName: String)
  /// Copying data into an input failed.
  case failedToCopyDataToInputTensor
  /// Preparing the signature's graph for the current input shapes failed.
  case failedToAllocateTensors
  /// Running the signature failed.
  case failedToInvokeSignature(signatureKey: String)
  /// Tensors must be allocated (again) before this call.
  case allocateTensorsRequired
}

extension SignatureRunnerError: LocalizedError {
  /// The message of the error, worded as TensorFlowLiteSwift words it.
  public var errorDescription: String? {
    switch self {
    case .invalidTensorDataCount(let provided, let required):
      InterpreterError.invalidTensorDataCount(provided: provided, required: required).errorDescription
    case .invalidTensorDataType:
      InterpreterError.invalidTensorDataType.errorDescription
    case .failedToCreateSignatureRunner(let signatureKey):
      "Failed to create a signature runner. Signature with key (\(signatureKey)) not found."
    case .failedToGetTensor(let tensorType, let nameInSignature):
      "Failed to get \(tensorType) tensor with \(tensorType) name (\(nameInSignature))."
    case .failedToResizeInputTensor(let inputName):
      "Failed to resize input tensor with input name (\(inputName))."
    case .failedToCopyDataToInputTensor:
      InterpreterError.failedToCopyDataToInputTensor.errorDescription
    case .failedToAllocateTensors:
      InterpreterError.failedToAllocateTensors.errorDescription
    case .failedToInvokeSignature(let signatureKey):
      "Failed to invoke the signature runner with key (\(signatureKey))."
    case .allocateTensorsRequired:
      InterpreterError.allocateTensorsRequired.errorDescription
    }
  }
}

extension SignatureRunnerError: CustomStringConvertible {
  /// The same text as ``errorDescription``.
  public var description: String { errorDescription ?? "Unknown error." }
}
