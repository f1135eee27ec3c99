import Foundation
import XCTest

@testable import TensorFlowLite

final class TensorTests: XCTestCase {
  func testInitAndEquality() {
    let data = Data(copyingBufferOf: [Float(1), 2])
    let tensor = Tensor(name: "input", dataType: .float32, shape: [2], data: data)
    XCTAssertEqual(tensor.name, "input")
    XCTAssertEqual(tensor.dataType, .float32)
    XCTAssertEqual(tensor.shape, Tensor.Shape(2))
    XCTAssertEqual(tensor.data, data)
    XCTAssertNil(tensor.quantizationParameters)
    XCTAssertEqual(tensor, Tensor(name: "input", dataType: .float32, shape: [2], data: data))
    XCTAssertNotEqual(tensor, Tensor(name: "other", dataType: .float32, shape: [2], data: data))
    XCTAssertNotEqual(
      tensor,
      Tensor(
        name: "input", dataType: .float32, shape: [2], data: data,
        quantizationParameters: QuantizationParameters(scale: 1, zeroPoint: 0)))
  }

  func testShapeInitializers() {
    let fromArray = Tensor.Shape([2, 2, 3])
    let fromVariadic = Tensor.Shape(2, 2, 3)
    let fromLiteral: Tensor.Shape = [2, 2, 3]
    XCTAssertEqual(fromArray.rank, 3)
    XCTAssertEqual(fromArray.dimensions, [2, 2, 3])
    XCTAssertEqual(fromArray, fromVariadic)
    XCTAssertEqual(fromArray, fromLiteral)
    XCTAssertNotEqual(fromArray, [2, 3, 2])
    XCTAssertEqual(fromArray.description, "[2, 2, 3]")
  }

  func testScalarShape() {
    let scalar: Tensor.Shape = []
    XCTAssertEqual(scalar.rank, 0)
    XCTAssertEqual(scalar.dimensions, [])
  }

  func testDataTypeSizesAndNames() {
    let expected: [(Tensor.DataType, Int, String)] = [
      (.bool, 1, "BOOL"), (.uInt8, 1, "UINT8"), (.int8, 1, "INT8"), (.int16, 2, "INT16"), (.int32, 4, "INT32"),
      (.int64, 8, "INT64"), (.float16, 2, "FLOAT16"), (.float32, 4, "FLOAT32"), (.float64, 8, "FLOAT64"),
    ]
    for (type, size, name) in expected {
      XCTAssertEqual(type.byteCount, size)
      XCTAssertEqual(type.schemaName, name)
    }
  }

  func testTypedArrays() throws {
    let values: [Int32] = [-5, 0, 70_000]
    let tensor = Tensor(name: "t", dataType: .int32, shape: [3], data: Data(copyingBufferOf: values))
    XCTAssertEqual(try [Int32](tensor), values)
    XCTAssertEqual(try Array(tensor, as: Int32.self), values)
    XCTAssertEqual(try tensor.withUnsafeBufferPointer(as: Int32.self) { $0.reduce(0, +) }, 69_995)
  }

  func testTypedAccessWithTheWrongTypeStatesTheTensorLayout() {
    let tensor = Tensor(name: "t", dataType: .uInt8, shape: [1, 4], data: Data([1, 2, 3, 4]))
    XCTAssertThrowsError(try [Float](tensor)) { error in
      guard case .tensorFlowLiteError(let message)? = error as? InterpreterError else {
        return XCTFail("unexpected \(error)")
      }
      XCTAssertEqual(message, "tensor 't' (UINT8 [1, 4], 4 bytes) cannot be read as Float")
    }
  }

  func testTypedAccessToUnalignedData() throws {
    let values: [Float] = [0.5, -1.25]
    let padded = Data([0]) + Data(copyingBufferOf: values)
    let tensor = Tensor(name: "t", dataType: .float32, shape: [2], data: padded.dropFirst())
    XCTAssertEqual(try [Float](tensor), values)
  }
}

final class QuantizationParametersTests: XCTestCase {
  func testPerTensorParameters() {
    let parameters = QuantizationParameters(scale: 0.5, zeroPoint: 1)
    XCTAssertEqual(parameters.scale, 0.5)
    XCTAssertEqual(parameters.zeroPoint, 1)
    XCTAssertEqual(parameters.scales, [0.5])
    XCTAssertEqual(parameters.zeroPoints, [1])
    XCTAssertEqual(parameters.quantizedDimension, 0)
    XCTAssertFalse(parameters.isPerChannel)
  }

  func testEquatable() {
    let parameters = QuantizationParameters(scale: 0.5, zeroPoint: 1)
    XCTAssertEqual(parameters, QuantizationParameters(scale: 0.5, zeroPoint: 1))
    XCTAssertNotEqual(parameters, QuantizationParameters(scale: 0.4, zeroPoint: 1))
    XCTAssertNotEqual(parameters, QuantizationParameters(scale: 0.5, zeroPoint: 2))
    XCTAssertNotEqual(
      parameters, QuantizationParameters(scales: [0.5, 0.5], zeroPoints: [1, 1], quantizedDimension: 0))
  }

  func testPerChannelParameters() {
    let parameters = QuantizationParameters(scales: [0.5, 0.25], zeroPoints: [1, 2], quantizedDimension: 3)
    XCTAssertTrue(parameters.isPerChannel)
    XCTAssertEqual(parameters.scale, 0.5)
    XCTAssertEqual(parameters.zeroPoint, 1)
    XCTAssertEqual(parameters.quantizedDimension, 3)
  }
}

final class InterpreterErrorTests: XCTestCase {
  func testDescriptions() {
    let expected: [(InterpreterError, String)] = [
      (.invalidTensorIndex(index: 3, maxIndex: 1), "Invalid tensor index 3, max index is 1."),
      (.invalidTensorDataCount(provided: 4, required: 8), "Provided data count 4 must match the required count 8."),
      (.invalidTensorDataType, "Tensor data type is unsupported or could not be determined due to a model error."),
      (.failedToLoadModel, "Failed to load the given model."),
      (.failedToCreateInterpreter, "Failed to create the interpreter."),
      (.failedToResizeInputTensor(index: 2), "Failed to resize input tensor at index 2."),
      (.failedToCopyDataToInputTensor, "Failed to copy data to input tensor."),
      (.failedToAllocateTensors, "Failed to allocate memory for input tensors."),
      (.allocateTensorsRequired, "Must call allocateTensors()."),
      (.invokeInterpreterRequired, "Must call invoke()."),
      (.tensorFlowLiteError("boom"), "TensorFlow Lite Error: boom"),
    ]
    for (error, text) in expected {
      XCTAssertEqual(error.errorDescription, text)
      XCTAssertEqual(error.description, text)
      XCTAssertEqual(error.localizedDescription, text)
    }
  }

  func testSignatureRunnerDescriptions() {
    let expected: [(SignatureRunnerError, String)] = [
      (.invalidTensorDataCount(provided: 4, required: 8), "Provided data count 4 must match the required count 8."),
      (.invalidTensorDataType, "Tensor data type is unsupported or could not be determined due to a model error."),
      (.failedToCreateSignatureRunner(signatureKey: "k"),
       "Failed to create a signature runner. Signature with key (k) not found."),
      (.failedToGetTensor(tensorType: "input", nameInSignature: "x"), "Failed to get input tensor with input name (x)."),
      (.failedToResizeInputTensor(inputName: "x"), "Failed to resize input tensor with input name (x)."),
      (.failedToCopyDataToInputTensor, "Failed to copy data to input tensor."),
      (.failedToAllocateTensors, "Failed to allocate memory for input tensors."),
      (.failedToInvokeSignature(signatureKey: "k"), "Failed to invoke the signature runner with key (k)."),
      (.allocateTensorsRequired, "Must call allocateTensors()."),
    ]
    for (error, text) in expected {
      XCTAssertEqual(error.errorDescription, text)
      XCTAssertEqual(error.description, text)
    }
  }
}

final class DelegateAndRuntimeTests: XCTestCase {
  func testMetalDelegateOptions() {
    let options = MetalDelegate.Options()
    XCTAssertFalse(options.isPrecisionLossAllowed)
    XCTAssertEqual(options.waitType, .passive)
    XCTAssertTrue(options.isQuantizationEnabled)
    var changed = options
    changed.isPrecisionLossAllowed = true
    let delegate = MetalDelegate(options: changed)
    XCTAssertEqual(delegate.options, changed)
    XCTAssertNotEqual(delegate.options, options)
  }

  func testCoreMLDelegateOptions() throws {
    let options = CoreMLDelegate.Options()
    XCTAssertEqual(options.enabledDevices, .neuralEngine)
    XCTAssertEqual(options.coreMLVersion, 0)
    XCTAssertEqual(options.maxDelegatedPartitions, 0)
    XCTAssertEqual(options.minNodesPerPartition, 2)
    let delegate = try XCTUnwrap(CoreMLDelegate(options: options))
    XCTAssertEqual(delegate.options, options)
  }

  func testDelegatesHaveDistinctStructures() {
    let first = MetalDelegate()
    let second = MetalDelegate()
    XCTAssertNotEqual(first.cDelegate, second.cDelegate)
  }

  func testRuntimeVersionIsSemantic() throws {
    let pattern = try NSRegularExpression(pattern: #"^(\d+)\.(\d+)\.(\d+)([+-][-.0-9A-Za-z]+)?$"#)
    let version = Runtime.version
    XCTAssertEqual(pattern.numberOfMatches(in: version, range: NSRange(version.startIndex..., in: version)), 1)
  }
}
