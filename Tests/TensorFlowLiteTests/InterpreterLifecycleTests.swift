import Foundation
import XCTest

@testable import TensorFlowLite

/// LiteRT's interpreter lifecycle as users rely on it: `invoke()` leaves the inputs as they were
/// copied, so one copy can be invoked again and again with the same result.
final class InterpreterLifecycleTests: XCTestCase {
  /// `copy(_:toInputAt:)` once, `invoke()` five times: `input(at:)` keeps the copied bytes and
  /// every invoke gives the same outputs, LiteRT's (float and int8 networks).
  func testCopyOnceInvokeFiveTimesKeepsTheInputAndTheOutputs() throws {
    for name in ["mobilenet_mini_float", "mobilenet_mini_int8"] {
      let entry = try ReferenceModels.entry(name)
      let interpreter = try Interpreter(modelPath: entry.path)
      try interpreter.allocateTensors()
      let input = try ReferenceModels.data(entry.inputs[0].file)
      try interpreter.copy(input, toInputAt: 0)
      let expected = try ReferenceModels.array(entry.outputs[0].file).bytes
      for run in 1...5 {
        try interpreter.invoke()
        XCTAssertEqual(try interpreter.input(at: 0).data, input, "\(name) input after invoke \(run)")
        if name.hasSuffix("float") {
          try ReferenceModels.assertMatchesLiteRT(try interpreter.output(at: 0), entry.outputs[0].file, entry)
        } else {
          XCTAssertEqual([UInt8](try interpreter.output(at: 0).data), expected, "\(name) output after invoke \(run)")
        }
      }
    }
  }

  /// A signature runner on its own subgraph: copy once, then `invoke(with: [:])` five times.
  func testSignatureRunnerCopyOnceInvokeFiveTimes() throws {
    let entry = try ReferenceModels.entry("signatures_f32_add_and_dense_relu")
    let runner = try Interpreter(modelPath: entry.path).signatureRunner(with: "dense_relu")
    let input = try ReferenceModels.data("graphs/signatures_f32_add_and_dense_relu.dense_relu.input_0.npy")
    try runner.copy(input, toInputNamed: "x")
    for _ in 1...5 {
      try runner.invoke(with: [:])
      XCTAssertEqual(try runner.input(named: "x").data, input)
      try ReferenceModels.assertMatchesLiteRT(
        try runner.output(named: "features"), "graphs/signatures_f32_add_and_dense_relu.dense_relu.output_0.npy", entry)
    }
  }

  /// A model whose WHILE loop runs subgraphs: copy once, invoke five times.
  func testWhileModelCopyOnceInvokeFiveTimes() throws {
    let entry = try ReferenceModels.entry("seq_keras_f32_stacked_gru_lstm")
    let interpreter = try Interpreter(modelPath: entry.path)
    try interpreter.allocateTensors()
    let input = try ReferenceModels.data(entry.inputs[0].file)
    try interpreter.copy(input, toInputAt: 0)
    var first: Data?
    for _ in 1...5 {
      try interpreter.invoke()
      XCTAssertEqual(try interpreter.input(at: 0).data, input)
      let output = try interpreter.output(at: 0)
      try ReferenceModels.assertMatchesLiteRT(output, entry.outputs[0].file, entry)
      if let first { XCTAssertEqual(output.data, first) } else { first = output.data }
    }
  }
}
