import Foundation
import XCTest

@testable import TensorFlowLite

/// Converted models with control flow and resource variables, run end to end through the public
/// `Interpreter` and `SignatureRunner` and compared with LiteRT's outputs from TestModels.
final class ControlFlowModelTests: XCTestCase {
  /// Runs `name` through `Interpreter(modelPath:)` and checks every output.
  private func runThroughInterpreter(_ name: String) throws {
    let entry = try ReferenceModels.entry(name)
    let interpreter = try Interpreter(modelPath: entry.path)
    try interpreter.allocateTensors()
    for (index, input) in entry.inputs.enumerated() {
      try interpreter.copy(try ReferenceModels.data(input.file), toInputAt: index)
    }
    try interpreter.invoke()
    for (index, output) in entry.outputs.enumerated() {
      try ReferenceModels.assertMatchesLiteRT(try interpreter.output(at: index), output.file, entry)
    }
  }

  func testWhileLoopModelRunsThroughTheInterpreter() throws {
    try runThroughInterpreter("while_f32_iterate_count")
  }

  func testIfModelRunsThroughTheInterpreter() throws {
    try runThroughInterpreter("if_f32_true_branch")
    try runThroughInterpreter("if_f32_false_branch")
  }

  func testKerasLSTMLoopRunsThroughTheInterpreter() throws {
    try runThroughInterpreter("lstm_f32_keras_while_loop")
  }

  func testVariablesModelRunsThroughItsSignature() throws {
    let entry = try ReferenceModels.entry("variables_f32_accumulate")
    let interpreter = try Interpreter(modelPath: entry.path)
    let runner = try interpreter.signatureRunner(with: "accumulate")
    XCTAssertEqual(runner.inputs, ["x"])
    XCTAssertEqual(runner.outputs, ["total"])
    let input = try ReferenceModels.data(entry.inputs[0].file)
    try runner.invoke(with: ["x": input])
    let first = try runner.output(named: "total")
    try ReferenceModels.assertMatchesLiteRT(first, entry.outputs[0].file, entry)
    try runner.invoke(with: ["x": input])
    XCTAssertNotEqual(try runner.output(named: "total").data, first.data, "the variable keeps the first invoke's sum")
  }
}
