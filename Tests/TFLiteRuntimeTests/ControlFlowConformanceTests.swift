import Foundation
import TFLiteFormat
import XCTest

@testable import TFLiteRuntime

/// IF, WHILE, CALL_ONCE and resource variables against LiteRT's outputs for the TestModels cases.
final class ControlFlowConformanceTests: XCTestCase {
  /// The operators this family adds.
  static let controlFlowOperators: Set<String> = [
    "IF", "WHILE", "CALL_ONCE", "VAR_HANDLE", "READ_VARIABLE", "ASSIGN_VARIABLE",
  ]

  func testEveryControlFlowCaseWhoseOperatorsRunMatchesLiteRT() throws {
    let outcomes = try Conformance.check { entry in
      !entry.opNames.isDisjoint(with: Self.controlFlowOperators)
        && entry.opNames.allSatisfy { Conformance.supportedOperators.contains($0) }
    }
    let names = Set(outcomes.map(\.entry.name))
    XCTAssertTrue(
      names.isSuperset(of: [
        "if_f32_true_branch", "if_f32_false_branch", "while_f32_iterate_count", "lstm_f32_keras_while_loop",
        "variables_f32_accumulate",
      ]), "cases run: \(names.sorted())")
  }

  func testControlFlowCasesMatchLiteRTWithFourThreads() throws {
    try Conformance.check({ !$0.opNames.isDisjoint(with: Self.controlFlowOperators) }, threadCount: 4)
  }

  /// The Keras LSTM body slices with sizes computed at run time, so WHILE runs it prepared while
  /// running; the result must be the same on every invoke.
  func testKerasLSTMLoopGivesTheSameResultOnEveryInvoke() throws {
    let entry = try XCTUnwrap(TestModelManifest.load().models.first { $0.name == "lstm_f32_keras_while_loop" })
    let runner = try ModelRunner(
      model: TFLiteModel(contentsOfFile: TestModelManifest.directory.appendingPathComponent(entry.file).path))
    let executor = runner.primary
    try executor.allocateTensors()
    let input = try TestModelManifest.array(entry.inputs[0].file)
    try copy(input.bytes, into: executor.inputs[0])
    let expected = try TestModelManifest.array(entry.outputs[0].file).floatValues()
    let tolerance = Float(entry.tolerance?.atol ?? 0)
    for _ in 0..<3 {
      try executor.invoke()
      let got = try values(of: executor.outputs[0])
      XCTAssertEqual(got.count, expected.count)
      for (have, want) in zip(got, expected) { XCTAssertEqual(have, want, accuracy: tolerance) }
    }
  }

  /// The variable keeps its value from one invoke to the next, the initialization runs only on
  /// the first, and a new runner starts again from the initial value.
  func testVariablesKeepTheirValueAcrossInvokesOfOneRunner() throws {
    let entry = try XCTUnwrap(TestModelManifest.load().models.first { $0.name == "variables_f32_accumulate" })
    let path = TestModelManifest.directory.appendingPathComponent(entry.file).path
    let input = try TestModelManifest.array(entry.inputs[0].file)
    let expected = try TestModelManifest.array(entry.outputs[0].file).floatValues()
    func run(_ runner: ModelRunner, times: Int) throws -> [[Float]] {
      let executor = runner.primary
      try executor.allocateTensors()
      try copy(input.bytes, into: executor.inputs[0])
      return try (0..<times).map { _ in
        try executor.invoke()
        return try values(of: executor.outputs[0])
      }
    }
    let firstRunner = try ModelRunner(model: TFLiteModel(contentsOfFile: path))
    let results = try run(firstRunner, times: 3)
    let tolerance = Float(entry.tolerance?.atol ?? 0)
    for (got, want) in zip(results[0], expected) { XCTAssertEqual(got, want, accuracy: tolerance) }
    XCTAssertNotEqual(results[1], results[0], "the second invoke must see the value the first assigned")
    XCTAssertNotEqual(results[2], results[1])
    // Allocating again keeps the variables; the read is then prepared from the variable's value.
    try firstRunner.primary.allocateTensors()
    try copy(input.bytes, into: firstRunner.primary.inputs[0])
    try firstRunner.primary.invoke()
    XCTAssertNotEqual(try values(of: firstRunner.primary.outputs[0]), results[2])
    let secondRunner = try ModelRunner(model: TFLiteModel(contentsOfFile: path))
    XCTAssertEqual(try run(secondRunner, times: 1)[0], results[0])
  }

  private func copy(_ bytes: [UInt8], into tensor: RuntimeTensor) throws {
    let data = try XCTUnwrap(tensor.data)
    XCTAssertEqual(bytes.count, tensor.byteCount)
    bytes.withUnsafeBytes { data.copyMemory(from: $0.baseAddress!, byteCount: min($0.count, tensor.byteCount)) }
  }

  private func values(of tensor: RuntimeTensor) throws -> [Float] {
    let data = try XCTUnwrap(tensor.data)
    return Array(UnsafeBufferPointer(start: data.assumingMemoryBound(to: Float.self), count: tensor.elementCount))
  }
}
