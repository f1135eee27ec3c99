import Foundation
import XCTest

@testable import TensorFlowLite

final class SignatureRunnerTests: XCTestCase {
  private func makeInterpreter() throws -> Interpreter {
    try Interpreter(modelData: Data(Fixtures.passThrough.serialized()))
  }

  private func assertThrows(
    _ expected: SignatureRunnerError, file: StaticString = #filePath, line: UInt = #line, _ body: () throws -> Void
  ) {
    XCTAssertThrowsError(try body(), file: file, line: line) { error in
      XCTAssertEqual(error as? SignatureRunnerError, expected, file: file, line: line)
    }
  }

  func testUnknownKeyThrowsFailedToCreateSignatureRunner() throws {
    let interpreter = try makeInterpreter()
    assertThrows(.failedToCreateSignatureRunner(signatureKey: "dummy")) {
      _ = try interpreter.signatureRunner(with: "dummy")
    }
  }

  func testNamesAndTensors() throws {
    let runner = try makeInterpreter().signatureRunner(with: "first")
    XCTAssertEqual(runner.signatureKey, "first")
    XCTAssertEqual(runner.inputs, ["x"])
    XCTAssertEqual(runner.outputs, ["y"])
    let input = try runner.input(named: "x")
    XCTAssertEqual(input.name, "input")
    XCTAssertEqual(input.dataType, .float32)
    XCTAssertEqual(input.shape, [1, 3])
    XCTAssertEqual(try runner.output(named: "y").shape, [1, 3])
  }

  func testUnknownNamesThrow() throws {
    let runner = try makeInterpreter().signatureRunner(with: "first")
    assertThrows(.failedToGetTensor(tensorType: "input", nameInSignature: "dummy")) { _ = try runner.input(named: "dummy") }
    assertThrows(.failedToGetTensor(tensorType: "output", nameInSignature: "dummy")) {
      _ = try runner.output(named: "dummy")
    }
    assertThrows(.failedToGetTensor(tensorType: "input", nameInSignature: "dummy")) {
      try runner.copy(Data(count: 12), toInputNamed: "dummy")
    }
    assertThrows(.failedToResizeInputTensor(inputName: "dummy")) { try runner.resizeInput(named: "dummy", toShape: [2]) }
  }

  func testCopyWithWrongByteCountThenResize() throws {
    let runner = try makeInterpreter().signatureRunner(with: "first")
    let values: [Float] = [1, 2, 3, 4, 5, 6]
    let data = Data(copyingBufferOf: values)
    assertThrows(.invalidTensorDataCount(provided: 24, required: 12)) { try runner.copy(data, toInputNamed: "x") }
    try runner.resizeInput(named: "x", toShape: [2, 3])
    assertThrows(.allocateTensorsRequired) { _ = try runner.input(named: "x") }
    try runner.allocateTensors()
    try runner.copy(data, toInputNamed: "x")
    XCTAssertEqual(try runner.input(named: "x"), Tensor(name: "input", dataType: .float32, shape: [2, 3], data: data))
  }

  func testResizeToZeroDimensionThrows() throws {
    let runner = try makeInterpreter().signatureRunner(with: "first")
    assertThrows(.failedToResizeInputTensor(inputName: "x")) { try runner.resizeInput(named: "x", toShape: [0, 3]) }
    XCTAssertEqual(try runner.input(named: "x").shape, [1, 3])
  }

  func testInvokeWithInputsOnASecondSubgraph() throws {
    let runner = try makeInterpreter().signatureRunner(with: "second")
    let data = Data(copyingBufferOf: [Float(4), -8])
    try runner.invoke(with: ["x": data])
    XCTAssertEqual(try runner.output(named: "y"), Tensor(name: "second_x", dataType: .float32, shape: [2], data: data))
  }

  func testInvokeWithResizedInput() throws {
    let runner = try makeInterpreter().signatureRunner(with: "second")
    try runner.resizeInput(named: "x", toShape: [3])
    let values: [Float] = [1, 2, 3]
    try runner.invoke(with: ["x": Data(copyingBufferOf: values)])
    XCTAssertEqual(try [Float](runner.output(named: "y")), values)
  }

  func testPrimarySignatureSharesTensorsWithTheInterpreter() throws {
    let interpreter = try makeInterpreter()
    let runner = try interpreter.signatureRunner(with: "first")
    let data = Data(copyingBufferOf: [Float(9), 8, 7])
    try runner.copy(data, toInputNamed: "x")
    XCTAssertEqual(try interpreter.input(at: 0).data, data)
  }

  func testRunnerKeepsItsInterpreterAlive() throws {
    var interpreter: Interpreter? = try makeInterpreter()
    let runner = try XCTUnwrap(interpreter).signatureRunner(with: "second")
    weak var released = interpreter
    interpreter = nil
    XCTAssertNotNil(released)
    try runner.invoke(with: ["x": Data(copyingBufferOf: [Float(1), 2])])
    XCTAssertEqual(try [Float](runner.output(named: "y")), [1, 2])
  }
}
