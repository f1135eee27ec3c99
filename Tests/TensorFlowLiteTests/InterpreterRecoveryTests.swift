import Foundation
import TFLiteTestSupport
import XCTest

@testable import TensorFlowLite

/// Every call the `Interpreter` refuses throws a descriptive error and leaves it usable: the next
/// valid run still gives LiteRT's result. Uses converted models from TestModels.
final class InterpreterRecoveryTests: XCTestCase {
  private func assertThrows(
    _ expected: InterpreterError, file: StaticString = #filePath, line: UInt = #line, _ body: () throws -> Void
  ) {
    XCTAssertThrowsError(try body(), file: file, line: line) { error in
      XCTAssertEqual(error as? InterpreterError, expected, file: file, line: line)
    }
  }

  /// Asserts that the interpreter's latest failure message contains `text`.
  private func assertLastMessage(_ interpreter: Interpreter, contains text: String, line: UInt = #line) {
    let message = interpreter.lastErrorMessage ?? ""
    XCTAssertTrue(message.contains(text), "\(message) does not mention \(text)", line: line)
  }

  /// Copies the entry's inputs, invokes and compares every output with LiteRT's.
  private func runAndCompare(_ interpreter: Interpreter, _ entry: ReferenceModels.Entry, line: UInt = #line) throws {
    for (index, input) in entry.inputs.enumerated() {
      try interpreter.copy(try ReferenceModels.data(input.file), toInputAt: index)
    }
    try interpreter.invoke()
    for (index, output) in entry.outputs.enumerated() {
      try ReferenceModels.assertMatchesLiteRT(try interpreter.output(at: index), output.file, entry, line: line)
    }
  }

  func testOutOfRangeGatherIndexFailsTheInvokeAndTheNextValidRunMatchesLiteRT() throws {
    let entry = try ReferenceModels.entry("gather_f32_indices_input_int32")
    let interpreter = try Interpreter(modelPath: entry.path)
    try interpreter.allocateTensors()
    try interpreter.copy(try ReferenceModels.data(entry.inputs[0].file), toInputAt: 0)
    for badIndex: Int32 in [6, -1, .max, .min] {
      try interpreter.copy(values: [0, 1, badIndex, 2], toInputAt: 1)
      assertThrows(.allocateTensorsRequired) { try interpreter.invoke() }
      assertLastMessage(interpreter, contains: "GATHER: index \(badIndex) is out of range [0, 6)")
    }
    try runAndCompare(interpreter, entry)
  }

  func testRefusedCallsLeaveTheInterpreterUsable() throws {
    let entry = try ReferenceModels.entry("conv2d_f32_1x1")
    let interpreter = try Interpreter(modelPath: entry.path)
    assertThrows(.allocateTensorsRequired) { try interpreter.invoke() }
    try interpreter.allocateTensors()
    assertThrows(.invalidTensorDataCount(provided: 7, required: 800)) {
      try interpreter.copy(Data(count: 7), toInputAt: 0)
    }
    assertThrows(.invalidTensorIndex(index: 1, maxIndex: 0)) { try interpreter.copy(Data(count: 800), toInputAt: 1) }
    assertThrows(.invalidTensorIndex(index: -1, maxIndex: 0)) { _ = try interpreter.input(at: -1) }
    assertThrows(.invalidTensorIndex(index: 3, maxIndex: 0)) { _ = try interpreter.output(at: 3) }
    for shape: [Int] in [[0, 5, 5, 8], [1, -5, 5, 8], [Int.max, 2, 2, 8], [1 << 40, 1 << 20, 1, 8]] {
      assertThrows(.failedToResizeInputTensor(index: 0)) { try interpreter.resizeInput(at: 0, to: Tensor.Shape(shape)) }
    }
    try runAndCompare(interpreter, entry)

    // A shape the convolution refuses (3 channels for an 8-channel filter) fails allocation; the
    // original shape works again afterwards.
    try interpreter.resizeInput(at: 0, to: [1, 5, 5, 3])
    assertThrows(.failedToAllocateTensors) { try interpreter.allocateTensors() }
    assertLastMessage(interpreter, contains: "CONV_2D")
    assertThrows(.allocateTensorsRequired) { try interpreter.invoke() }
    try interpreter.resizeInput(at: 0, to: [1, 5, 5, 8])
    try interpreter.allocateTensors()
    try runAndCompare(interpreter, entry)
  }

  func testShapeBeyondTheMemoryLimitIsRefusedBeforeAllocating() throws {
    let entry = try ReferenceModels.entry("conv2d_f32_1x1")
    let interpreter = try Interpreter(modelPath: entry.path)
    try interpreter.allocateTensors()
    // 2^38 floats is 1 TiB: more than the machine's physical memory, yet countable.
    assertThrows(.failedToResizeInputTensor(index: 0)) { try interpreter.resizeInput(at: 0, to: [1, 1 << 17, 1 << 18, 8]) }
    assertLastMessage(interpreter, contains: "more than the memory limit")
    try runAndCompare(interpreter, entry)
  }

  func testModelWhoseInputIsAConstantIsRefused() throws {
    let model = TestModel(subgraphs: [
      TestModel.Subgraph(
        tensors: [.init(name: "weights", type: 0, shape: [2], data: [UInt8](repeating: 0, count: 8))],
        inputs: [0], outputs: [0])
    ])
    let options = Interpreter.Options()
    XCTAssertThrowsError(try Interpreter(modelData: Data(model.serialized()), options: options)) { error in
      XCTAssertEqual(error as? InterpreterError, .failedToCreateInterpreter)
    }
  }
}
