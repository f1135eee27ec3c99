import TFLiteFormat
import XCTest

@testable import TFLiteRuntime

/// Variable tensors (the state of SVDF, LSTM, RNN) start from zero, carry over from one invoke to
/// the next, and are zero again after `ModelRunner.resetVariableTensors()` and after every
/// `SubgraphExecutor.allocateTensors()`, as LiteRT's `ResetVariableTensors` and `AllocateTensors`.
final class VariableResetTests: XCTestCase {
  func testStateIsZeroAgainAfterResetAndAfterAllocation() throws {
    let entry = try XCTUnwrap(try TestModelManifest.load().models.first { $0.name == "seq_svdf_f32_rank1" })
    let model = try TFLiteModel(contentsOfFile: TestModelManifest.directory.appendingPathComponent(entry.file).path)
    let runner = try ModelRunner(model: model)
    let executor = runner.primary
    XCTAssertTrue(executor.tensors.contains(where: \.isVariable))
    let input = try TestModelManifest.array(entry.inputs[0].file)
    /// Copies the input, invokes and returns the output's bytes.
    func run() throws -> [UInt8] {
      input.bytes.withUnsafeBytes { executor.inputs[0].data!.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
      try executor.invoke()
      let output = executor.outputs[0]
      return [UInt8](UnsafeRawBufferPointer(start: output.data, count: output.byteCount))
    }
    try executor.allocateTensors()
    let first = try run()
    var outcome = ConformanceOutcome(entry: entry)
    try Conformance.compare(
      executor.outputs[0], try TestModelManifest.array(entry.outputs[0].file), tolerance: entry.tolerance,
      outcome: &outcome, label: "output")
    XCTAssertEqual(outcome.mismatchCount, 0, "the first invoke starts from zero state, as LiteRT's")
    XCTAssertNotEqual(try run(), first, "the second invoke starts from the first one's state")
    runner.resetVariableTensors()
    XCTAssertEqual(try run(), first)
    _ = try run()
    try executor.allocateTensors()
    XCTAssertEqual(try run(), first)
  }
}
