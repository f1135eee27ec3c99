import TFLiteFormat
import XCTest

@testable import TFLiteRuntime

/// The per-node hook `tflite profile` uses: one balanced before/after pair per node `invoke()` runs,
/// in execution order, with control-flow bodies nested inside their operator.
final class NodeObserverTests: XCTestCase {
  /// Records every call as `+subgraph:node` and `-subgraph:node`.
  private final class Recorder: NodeObserver {
    var calls: [String] = []
    func nodeWillRun(subgraph: Int, node: Int) { calls.append("+\(subgraph):\(node)") }
    func nodeDidRun(subgraph: Int, node: Int) { calls.append("-\(subgraph):\(node)") }
  }

  private func runner(_ file: String) throws -> ModelRunner {
    let model = try TFLiteModel(contentsOfFile: TestModelManifest.directory.appendingPathComponent(file).path)
    let runner = try ModelRunner(model: model)
    try runner.primary.allocateTensors()
    return runner
  }

  func testEveryNodeOfANetworkIsReportedInOrder() throws {
    let runner = try runner("networks/mobilenet_mini_float.tflite")
    let recorder = Recorder()
    runner.primary.nodeObserver = recorder
    try runner.primary.invoke()
    // The network's 22 operators (`tflite inspect`) all run: none is constant or fused.
    XCTAssertEqual(recorder.calls, (0..<22).flatMap { ["+0:\($0)", "-0:\($0)"] })
    runner.primary.nodeObserver = nil
    recorder.calls = []
    try runner.primary.invoke()
    XCTAssertEqual(recorder.calls, [], "no calls once the observer is removed")
  }

  func testLoopBodiesNestInsideTheirWhile() throws {
    let runner = try runner("graphs/while_f32_iterate_count.tflite")
    let recorder = Recorder()
    for index in 0..<3 { try runner.subgraph(at: index).nodeObserver = recorder }
    // x1 (INT32 [1]) is the iteration count (TestModels/graphs/while_f32_iterate_count.input_1.npy holds 3).
    runner.primary.inputs[1].pointer(as: Int32.self).pointee = 3
    runner.primary.inputs[0].pointer(as: Float.self).update(repeating: 0, count: 6)
    try runner.primary.invoke()
    XCTAssertEqual(recorder.calls.first, "+0:0")
    XCTAssertEqual(recorder.calls.last, "-0:0")
    let inner = recorder.calls.dropFirst().dropLast()
    // Condition (2 operators) and body (4 operators) subgraphs, each call balanced.
    XCTAssertTrue(inner.contains("+1:1") && inner.contains("+2:3"), "\(inner)")
    XCTAssertEqual(inner.filter { $0.hasPrefix("+") }.count, inner.filter { $0.hasPrefix("-") }.count)
    // Three iterations: the body's 4 operators 3 times, the condition's 2 operators 4 times.
    XCTAssertEqual(inner.filter { $0.hasPrefix("+2:") }.count, 12)
    XCTAssertEqual(inner.filter { $0.hasPrefix("+1:") }.count, 8)
  }
}
