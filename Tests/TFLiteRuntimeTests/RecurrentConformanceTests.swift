import Foundation
import TFLiteFormat
import XCTest

@testable import TFLiteRuntime

/// Every recurrent TestModels case (`seq_` names: LSTM, UNIDIRECTIONAL_SEQUENCE_LSTM,
/// BIDIRECTIONAL_SEQUENCE_LSTM, RNN, UNIDIRECTIONAL_SEQUENCE_RNN, BIDIRECTIONAL_SEQUENCE_RNN, SVDF,
/// and Keras recurrent layers converted to WHILE loops) against LiteRT's reference outputs.
final class RecurrentConformanceTests: XCTestCase {
  /// The operators of the recurrent families.
  static let operators: Set<String> = [
    "BIDIRECTIONAL_SEQUENCE_LSTM", "BIDIRECTIONAL_SEQUENCE_RNN", "LSTM", "RNN", "SVDF",
    "UNIDIRECTIONAL_SEQUENCE_LSTM", "UNIDIRECTIONAL_SEQUENCE_RNN",
  ]

  private static func isRecurrent(_ entry: TestModelManifest.Entry) -> Bool { entry.name.hasPrefix("seq_") }

  func testFloatRecurrentModelsMatchLiteRT() throws {
    let outcomes = try Conformance.check { Self.isRecurrent($0) && $0.quantization == "float32" }
    XCTAssertGreaterThanOrEqual(outcomes.count, 30, "the recurrent TestModels batch is smaller than expected")
    let covered = outcomes.reduce(into: Set<String>()) { $0.formUnion($1.entry.opNames) }
    XCTAssertTrue(Self.operators.isSubset(of: covered), "no float case for \(Self.operators.subtracting(covered))")
    Conformance.printOperatorSummary(outcomes, operators: Self.operators.union(["WHILE"]), label: "recurrent float")
  }

  func testRecurrentModelsMatchLiteRTWithTwoThreads() throws {
    try Conformance.check({ Self.isRecurrent($0) }, threadCount: 2)
  }

  /// The LiteRT outputs of a second invoke, recorded for the directly written recurrent cases.
  private struct SecondInvokeManifest: Decodable {
    struct Entry: Decodable {
      var name: String
      var second_invoke_outputs: [[Float]]?
    }
    var models: [Entry]
  }

  /// The states are variable tensors: a second invoke on the same inputs starts where the first
  /// ended, and must give LiteRT's second outputs.
  func testStatesCarryOverToTheNextInvoke() throws {
    let data = try Data(contentsOf: TestModelManifest.directory.appendingPathComponent("manifest.json"))
    let recorded = try JSONDecoder().decode(SecondInvokeManifest.self, from: data).models
      .reduce(into: [String: [[Float]]]()) { $0[$1.name] = $1.second_invoke_outputs }
    let entries = try TestModelManifest.load().models.filter { recorded[$0.name] != nil }
    XCTAssertGreaterThanOrEqual(entries.count, 25, "fewer recurrent cases with a second invoke than expected")
    for entry in entries {
      let model = try TFLiteModel(contentsOfFile: TestModelManifest.directory.appendingPathComponent(entry.file).path)
      let runner = try ModelRunner(model: model, options: RunnerOptions(threadCount: 1))
      defer { withExtendedLifetime(runner) {} }
      let executor = runner.primary
      try executor.allocateTensors()
      let inputs = try entry.inputs.map { try TestModelManifest.array($0.file) }
      var firstOutputs: [[Float]] = []
      for invocation in 0..<2 {
        for (tensor, array) in zip(executor.inputs, inputs) {
          XCTAssertEqual(tensor.byteCount, array.bytes.count, entry.name)
          array.bytes.withUnsafeBytes { tensor.data?.copyMemory(from: $0.baseAddress!, byteCount: min($0.count, tensor.byteCount)) }
        }
        try executor.invoke()
        let outputs = executor.outputs.map { Array(UnsafeBufferPointer(start: $0.pointer(as: Float.self), count: $0.elementCount)) }
        if invocation == 0 { firstOutputs = outputs }
      }
      let expected = recorded[entry.name] ?? []
      let atol = Float(entry.tolerance?.atol ?? 0)
      let rtol = Float(entry.tolerance?.rtol ?? 0)
      XCTAssertEqual(expected.count, executor.outputs.count, entry.name)
      for (output, want) in zip(executor.outputs, expected) {
        let have = UnsafeBufferPointer(start: output.pointer(as: Float.self), count: output.elementCount)
        XCTAssertEqual(have.count, want.count, entry.name)
        let worst = zip(have, want).map { abs($0 - $1) - rtol * abs($1) }.max() ?? 0
        XCTAssertLessThanOrEqual(worst, atol, "\(entry.name): second invoke differs from LiteRT")
      }
      XCTAssertNotEqual(firstOutputs.first, expected.first, "\(entry.name): the second invoke should see the first one's state")
    }
  }
}
