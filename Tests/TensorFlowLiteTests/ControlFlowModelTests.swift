import Foundation
import XCTest

import struct TFLiteFormat.NumPyArray

@testable import TensorFlowLite

/// Converted models with control flow and resource variables, run end to end through the public
/// `Interpreter` and `SignatureRunner` and compared with LiteRT's outputs from TestModels.
final class ControlFlowModelTests: XCTestCase {
  /// The parts of a `TestModels/manifest.json` entry these tests read.
  private struct Entry: Decodable {
    struct TensorFile: Decodable {
      var name: String
      var file: String
    }
    struct Tolerance: Decodable {
      var atol: Double
    }
    var name: String
    var file: String
    var inputs: [TensorFile]
    var outputs: [TensorFile]
    var tolerance: Tolerance?
  }

  private struct Manifest: Decodable {
    var models: [Entry]
  }

  private static let directory = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("TestModels")

  private func entry(_ name: String) throws -> Entry {
    let data = try Data(contentsOf: Self.directory.appendingPathComponent("manifest.json"))
    return try XCTUnwrap(try JSONDecoder().decode(Manifest.self, from: data).models.first { $0.name == name })
  }

  private func array(_ file: String) throws -> NumPyArray {
    try NumPyArray(parsing: [UInt8](Data(contentsOf: Self.directory.appendingPathComponent(file))))
  }

  /// Asserts that the FLOAT32 `tensor` matches LiteRT's output in `file` within the entry's tolerance.
  private func assertMatchesLiteRT(
    _ tensor: TensorFlowLite.Tensor, _ file: String, _ entry: Entry, line: UInt = #line
  ) throws {
    let expected = try array(file)
    XCTAssertEqual(tensor.shape.dimensions, expected.shape, line: line)
    let got = tensor.data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    let want = try expected.floatValues()
    XCTAssertEqual(got.count, want.count, line: line)
    let tolerance = Float(entry.tolerance?.atol ?? 0)
    for (have, reference) in zip(got, want) { XCTAssertEqual(have, reference, accuracy: tolerance, line: line) }
  }

  /// Runs `name` through `Interpreter(modelPath:)` and checks every output.
  private func runThroughInterpreter(_ name: String) throws {
    let entry = try entry(name)
    let interpreter = try Interpreter(modelPath: Self.directory.appendingPathComponent(entry.file).path)
    try interpreter.allocateTensors()
    for (index, input) in entry.inputs.enumerated() {
      try interpreter.copy(Data(try array(input.file).bytes), toInputAt: index)
    }
    try interpreter.invoke()
    for (index, output) in entry.outputs.enumerated() {
      try assertMatchesLiteRT(try interpreter.output(at: index), output.file, entry)
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
    let entry = try entry("variables_f32_accumulate")
    let interpreter = try Interpreter(modelPath: Self.directory.appendingPathComponent(entry.file).path)
    let runner = try interpreter.signatureRunner(with: "accumulate")
    XCTAssertEqual(runner.inputs, ["x"])
    XCTAssertEqual(runner.outputs, ["total"])
    let input = Data(try array(entry.inputs[0].file).bytes)
    try runner.invoke(with: ["x": input])
    let first = try runner.output(named: "total")
    try assertMatchesLiteRT(first, entry.outputs[0].file, entry)
    try runner.invoke(with: ["x": input])
    XCTAssertNotEqual(try runner.output(named: "total").data, first.data, "the variable keeps the first invoke's sum")
  }
}
