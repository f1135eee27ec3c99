import Foundation
import XCTest

@testable import TensorFlowLite

final class InterpreterTests: XCTestCase {
  private let modelData = Data(Fixtures.passThrough.serialized())
  private let inputValues: [Float] = [1.5, -2, 3.25]

  private func makeInterpreter(options: Interpreter.Options? = nil) throws -> Interpreter {
    try Interpreter(modelData: modelData, options: options)
  }

  private func assertThrows(
    _ expected: InterpreterError, file: StaticString = #filePath, line: UInt = #line, _ body: () throws -> Void
  ) {
    XCTAssertThrowsError(try body(), file: file, line: line) { error in
      XCTAssertEqual(error as? InterpreterError, expected, file: file, line: line)
    }
  }

  // MARK: - Creation

  func testInitWithModelPath() throws {
    let path = try Fixtures.file(for: Fixtures.passThrough)
    defer { try? FileManager.default.removeItem(atPath: path) }
    let interpreter = try Interpreter(modelPath: path)
    XCTAssertEqual(interpreter.inputTensorCount, 4)
    XCTAssertEqual(interpreter.outputTensorCount, 4)
    XCTAssertNil(interpreter.options)
    XCTAssertNil(interpreter.delegates)
  }

  func testInitWithMissingPathThrowsFailedToLoadModel() {
    assertThrows(.failedToLoadModel) { _ = try Interpreter(modelPath: "/invalid/path/model.tflite") }
  }

  func testInitWithEmptyPathThrowsFailedToLoadModel() {
    assertThrows(.failedToLoadModel) { _ = try Interpreter(modelPath: "") }
  }

  func testInitWithInvalidDataThrowsFailedToLoadModel() {
    assertThrows(.failedToLoadModel) { _ = try Interpreter(modelData: Data(repeating: 7, count: 64)) }
    assertThrows(.failedToLoadModel) { _ = try Interpreter(modelData: Data()) }
  }

  func testInitWithTruncatedModelThrowsFailedToLoadModel() {
    assertThrows(.failedToLoadModel) { _ = try Interpreter(modelData: self.modelData.prefix(self.modelData.count / 2)) }
  }

  func testInitWithUnknownOperatorThrowsFailedToCreateInterpreter() {
    let data = Data(Fixtures.unknownOperator.serialized())
    assertThrows(.failedToCreateInterpreter) { _ = try Interpreter(modelData: data, options: Interpreter.Options()) }
  }

  func testInitWithOptionsAndDelegatesKeepsThem() throws {
    var options = Interpreter.Options()
    options.threadCount = 2
    options.isXNNPackEnabled = true
    let delegate = MetalDelegate()
    let interpreter = try Interpreter(modelData: modelData, options: options, delegates: [delegate])
    XCTAssertEqual(interpreter.options, options)
    XCTAssertEqual(interpreter.delegates?.count, 1)
    XCTAssertTrue(interpreter.delegates?.first === delegate)
  }

  func testInterpreterOwnsTheModelBytes() throws {
    var data: Data? = Data(Fixtures.passThrough.serialized())
    let interpreter = try Interpreter(modelData: data ?? Data())
    data = nil
    try interpreter.allocateTensors()
    try interpreter.copy(values: inputValues, toInputAt: 0)
    try interpreter.invoke()
    XCTAssertEqual(try [Float](interpreter.output(at: 0)), inputValues)
  }

  func testSignatureKeys() throws {
    XCTAssertEqual(try makeInterpreter().signatureKeys, ["first", "second"])
  }

  // MARK: - Running

  func testInvokeBeforeAllocateThrowsAllocateTensorsRequired() throws {
    let interpreter = try makeInterpreter()
    assertThrows(.allocateTensorsRequired) { try interpreter.invoke() }
  }

  func testInvokeAfterAllocate() throws {
    let interpreter = try makeInterpreter()
    try interpreter.allocateTensors()
    XCTAssertNoThrow(try interpreter.invoke())
  }

  func testOutputAfterInvokeHoldsThePassedThroughInput() throws {
    let interpreter = try makeInterpreter()
    try interpreter.allocateTensors()
    try interpreter.copy(Data(copyingBufferOf: inputValues), toInputAt: 0)
    try interpreter.invoke()
    let output = try interpreter.output(at: 0)
    XCTAssertEqual(
      output,
      Tensor(name: "input", dataType: .float32, shape: [1, 3], data: Data(copyingBufferOf: inputValues)))
  }

  func testInputTensorAfterCopy() throws {
    let interpreter = try makeInterpreter()
    try interpreter.allocateTensors()
    let returned = try interpreter.copy(Data(copyingBufferOf: inputValues), toInputAt: 0)
    let expected = Tensor(name: "input", dataType: .float32, shape: [1, 3], data: Data(copyingBufferOf: inputValues))
    XCTAssertEqual(returned, expected)
    XCTAssertEqual(try interpreter.input(at: 0), expected)
  }

  func testTensorDataIsACopy() throws {
    let interpreter = try makeInterpreter()
    try interpreter.allocateTensors()
    try interpreter.copy(values: inputValues, toInputAt: 0)
    let before = try interpreter.input(at: 0)
    try interpreter.copy(values: [Float](repeating: 0, count: 3), toInputAt: 0)
    XCTAssertEqual(try [Float](before), inputValues)
  }

  func testInputBeforeAllocateThrowsAllocateTensorsRequired() throws {
    let interpreter = try makeInterpreter()
    assertThrows(.allocateTensorsRequired) { _ = try interpreter.input(at: 0) }
  }

  func testOutputBeforeAllocateThrowsInvokeInterpreterRequired() throws {
    let interpreter = try makeInterpreter()
    assertThrows(.invokeInterpreterRequired) { _ = try interpreter.output(at: 0) }
  }

  func testIndicesOutOfRangeThrowInvalidTensorIndex() throws {
    let interpreter = try makeInterpreter()
    try interpreter.allocateTensors()
    for index in [4, -1] {
      assertThrows(.invalidTensorIndex(index: index, maxIndex: 3)) { _ = try interpreter.input(at: index) }
      assertThrows(.invalidTensorIndex(index: index, maxIndex: 3)) { _ = try interpreter.output(at: index) }
      assertThrows(.invalidTensorIndex(index: index, maxIndex: 3)) { try interpreter.resizeInput(at: index, to: [2]) }
      assertThrows(.invalidTensorIndex(index: index, maxIndex: 3)) {
        try interpreter.copy(Data(count: 12), toInputAt: index)
      }
    }
  }

  func testStringTensorThrowsInvalidTensorDataType() throws {
    let interpreter = try makeInterpreter()
    try interpreter.allocateTensors()
    assertThrows(.invalidTensorDataType) { _ = try interpreter.input(at: 3) }
    assertThrows(.invalidTensorDataType) { _ = try interpreter.output(at: 3) }
  }

  // MARK: - Quantized tensors

  func testQuantizedInput() throws {
    let interpreter = try makeInterpreter()
    try interpreter.allocateTensors()
    let tensor = try interpreter.copy(Data([7, 250]), toInputAt: 1)
    XCTAssertEqual(
      tensor,
      Tensor(
        name: "quantized", dataType: .uInt8, shape: [2], data: Data([7, 250]),
        quantizationParameters: QuantizationParameters(scale: 0.5, zeroPoint: 3)))
  }

  func testInt8PerChannelInput() throws {
    let interpreter = try makeInterpreter()
    try interpreter.allocateTensors()
    try interpreter.copy(values: [Int8(-128), 127], toInputAt: 2)
    let tensor = try interpreter.input(at: 2)
    XCTAssertEqual(tensor.dataType, .int8)
    XCTAssertEqual(tensor.shape, [2, 1])
    XCTAssertEqual(try [Int8](tensor), [-128, 127])
    let parameters = try XCTUnwrap(tensor.quantizationParameters)
    XCTAssertTrue(parameters.isPerChannel)
    XCTAssertEqual(parameters.scales, [0.5, 0.25])
    XCTAssertEqual(parameters.zeroPoints, [0, 0])
    XCTAssertEqual(parameters.quantizedDimension, 0)
    XCTAssertEqual(parameters.scale, 0.5)
  }

  // MARK: - Resizing

  func testResizeThenAllocateAndCopy() throws {
    let interpreter = try makeInterpreter()
    try interpreter.resizeInput(at: 0, to: [2, 3])
    try interpreter.allocateTensors()
    let values: [Float] = [1, 2, 3, 4, 5, 6]
    let tensor = try interpreter.copy(Data(copyingBufferOf: values), toInputAt: 0)
    XCTAssertEqual(tensor.shape, [2, 3])
    try interpreter.invoke()
    XCTAssertEqual(try [Float](interpreter.output(at: 0)), values)
  }

  func testInvokeAfterResizeWithoutAllocateThrowsAllocateTensorsRequired() throws {
    let interpreter = try makeInterpreter()
    try interpreter.allocateTensors()
    try interpreter.resizeInput(at: 0, to: [4, 3])
    assertThrows(.allocateTensorsRequired) { try interpreter.invoke() }
    assertThrows(.allocateTensorsRequired) { _ = try interpreter.input(at: 0) }
    try interpreter.allocateTensors()
    XCTAssertNoThrow(try interpreter.invoke())
  }

  func testResizeToZeroOrNegativeDimensionFailsAndKeepsTheInterpreterUsable() throws {
    let interpreter = try makeInterpreter()
    try interpreter.allocateTensors()
    assertThrows(.failedToResizeInputTensor(index: 0)) { try interpreter.resizeInput(at: 0, to: [0, 3]) }
    assertThrows(.failedToResizeInputTensor(index: 0)) { try interpreter.resizeInput(at: 0, to: [-1, 3]) }
    XCTAssertNotNil(interpreter.lastErrorMessage)
    try interpreter.copy(values: inputValues, toInputAt: 0)
    try interpreter.invoke()
    XCTAssertEqual(try interpreter.output(at: 0).shape, [1, 3])
  }

  // MARK: - Copying

  func testCopyWithWrongByteCountThrowsInvalidTensorDataCount() throws {
    let interpreter = try makeInterpreter()
    try interpreter.allocateTensors()
    assertThrows(.invalidTensorDataCount(provided: 11, required: 12)) {
      try interpreter.copy(Data(count: 11), toInputAt: 0)
    }
    let message = try XCTUnwrap(interpreter.lastErrorMessage)
    XCTAssertTrue(message.contains("FLOAT32 [1, 3]"), message)
    XCTAssertTrue(message.contains("12 bytes"), message)
    XCTAssertNoThrow(try interpreter.copy(values: inputValues, toInputAt: 0))
  }

  func testCopyBeforeAllocateThrowsAllocateTensorsRequired() throws {
    let interpreter = try makeInterpreter()
    assertThrows(.invalidTensorDataCount(provided: 4, required: 12)) { try interpreter.copy(Data(count: 4), toInputAt: 0) }
    assertThrows(.allocateTensorsRequired) { try interpreter.copy(Data(count: 12), toInputAt: 0) }
  }

  func testTypedCopyWithWrongTypeOrCountStatesTheExpectedLayout() throws {
    let interpreter = try makeInterpreter()
    try interpreter.allocateTensors()
    XCTAssertThrowsError(try interpreter.copy(values: [Int32(1), 2, 3], toInputAt: 0)) { error in
      guard case .tensorFlowLiteError(let message)? = error as? InterpreterError else {
        return XCTFail("unexpected \(error)")
      }
      XCTAssertTrue(message.contains("'input' (FLOAT32 [1, 3], 12 bytes)"), message)
      XCTAssertTrue(message.contains("Int32"), message)
    }
    XCTAssertThrowsError(try interpreter.copy(values: [Float](repeating: 1, count: 4), toInputAt: 0)) { error in
      guard case .tensorFlowLiteError(let message)? = error as? InterpreterError else {
        return XCTFail("unexpected \(error)")
      }
      XCTAssertTrue(message.contains("needs 3 Float values, got 4"), message)
    }
  }

  func testUnsafeBuffersReadAndWriteTheTensorsInPlace() throws {
    let interpreter = try makeInterpreter()
    try interpreter.allocateTensors()
    try interpreter.withUnsafeMutableInputBuffer(at: 0, as: Float.self) { buffer in
      XCTAssertEqual(buffer.count, 3)
      _ = buffer.update(fromContentsOf: inputValues)
    }
    try interpreter.invoke()
    let read = try interpreter.withUnsafeOutputBuffer(at: 0, as: Float.self) { Array($0) }
    XCTAssertEqual(read, inputValues)
    XCTAssertThrowsError(try interpreter.withUnsafeOutputBuffer(at: 1, as: Float.self) { _ in })
  }

  func testArenaByteCountIsKnownAfterAllocation() throws {
    let interpreter = try makeInterpreter()
    XCTAssertEqual(interpreter.arenaByteCount, 0)
    try interpreter.allocateTensors()
    XCTAssertGreaterThanOrEqual(interpreter.arenaByteCount, 12 + 2 + 2)
  }

  func testThreadCountOption() throws {
    var options = Interpreter.Options()
    options.threadCount = 4
    let interpreter = try makeInterpreter(options: options)
    try interpreter.allocateTensors()
    try interpreter.copy(values: inputValues, toInputAt: 0)
    try interpreter.invoke()
    XCTAssertEqual(try [Float](interpreter.output(at: 0)), inputValues)
  }
}

final class InterpreterOptionsTests: XCTestCase {
  func testDefaults() {
    let options = Interpreter.Options()
    XCTAssertNil(options.threadCount)
    XCTAssertFalse(options.isXNNPackEnabled)
  }

  func testEquatable() {
    var first = Interpreter.Options()
    var second = Interpreter.Options()
    XCTAssertEqual(first, second)
    first.threadCount = 2
    XCTAssertNotEqual(first, second)
    second.threadCount = 2
    XCTAssertEqual(first, second)
    second.isXNNPackEnabled = true
    XCTAssertNotEqual(first, second)
  }
}
