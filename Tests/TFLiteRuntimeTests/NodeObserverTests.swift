import Foundation
import TFLiteFormat
import XCTest

@testable import TFLiteRuntime

/// `SubgraphExecutor.nodeObserver`: called around every node in execution order, with fusion
/// visible or turned off (`RunnerOptions.fusesOperators`), and able to replace a node's inputs.
final class NodeObserverTests: XCTestCase {
  /// EfficientNet-mini computes SiLU as LOGISTIC + MUL, which the runtime fuses by default.
  private func runner(fusing: Bool) throws -> ModelRunner {
    let path = TestModelManifest.directory.appendingPathComponent("networks/efficientnet_mini_float.tflite").path
    var options = RunnerOptions()
    options.fusesOperators = fusing
    let runner = try ModelRunner(model: try TFLiteModel(contentsOfFile: path), options: options)
    try runner.primary.allocateTensors()
    let input = try TestModelManifest.array("networks/efficientnet_mini_float.input_0.npy")
    input.bytes.withUnsafeBytes { runner.primary.inputs[0].data!.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
    return runner
  }

  private func outputValues(_ executor: SubgraphExecutor) -> [Float] {
    let output = executor.outputs[0]
    return Array(UnsafeBufferPointer(start: output.pointer(as: Float.self), count: output.elementCount))
  }

  func testEveryNodeIsObservedInOrderAndFusionCanBeTurnedOff() throws {
    let fused = try runner(fusing: true).primary
    try fused.invoke()
    let unobservedOutput = outputValues(fused)
    var seen: [(position: Int, evaluation: ObservedNode.Evaluation)] = []
    var ran: [Int] = []
    fused.nodeObserver = NodeObserver(willRun: { ran.append($0.position) }) { seen.append(($0.position, $0.evaluation)) }
    try fused.invoke()
    XCTAssertEqual(seen.map(\.position), Array(fused.operatorNames.indices))
    let fusedAway = seen.filter { $0.evaluation == .fusedAway }.map(\.position)
    XCTAssertFalse(fusedAway.isEmpty)
    XCTAssertTrue(fusedAway.allSatisfy { fused.operatorNames[$0] == "LOGISTIC" })
    XCTAssertEqual(Set(ran), Set(seen.filter { $0.evaluation == .evaluated }.map(\.position)))
    XCTAssertEqual(outputValues(fused), unobservedOutput)

    let separate = try runner(fusing: false).primary
    var evaluations: [ObservedNode.Evaluation] = []
    separate.nodeObserver = NodeObserver { evaluations.append($0.evaluation) }
    try separate.invoke()
    XCTAssertFalse(evaluations.contains(.fusedAway))
    XCTAssertEqual(evaluations.count, separate.operatorNames.count)
    // The fused kernel does the same float operations in the same order.
    XCTAssertEqual(outputValues(separate).map(\.bitPattern), unobservedOutput.map(\.bitPattern))
  }

  func testWillRunCanReplaceANodesInputs() throws {
    let executor = try runner(fusing: false).primary
    try executor.invoke()
    let before = outputValues(executor)
    // Zero the input of the last node (SOFTMAX of the logits): its output becomes uniform.
    let last = executor.operatorNames.count - 1
    XCTAssertEqual(executor.operatorNames[last], "SOFTMAX")
    executor.nodeObserver = NodeObserver(willRun: { node in
      guard node.position == last, let logits = node.inputs[0] else { return }
      logits.data!.initializeMemory(as: UInt8.self, repeating: 0, count: logits.byteCount)
    }) { _ in }
    try executor.invoke()
    let uniform = outputValues(executor)
    XCTAssertNotEqual(uniform, before)
    for value in uniform { XCTAssertEqual(value, 1 / Float(uniform.count), accuracy: 1e-7) }
  }

  func testObservedNodesAreBuiltOncePerAllocation() throws {
    let executor = try runner(fusing: false).primary
    var seen: [ObservedNode] = []
    executor.nodeObserver = NodeObserver { seen.append($0) }
    try executor.invoke()
    let first = seen
    XCTAssertEqual(first.map(\.position), Array(executor.operatorNames.indices))
    for _ in 0..<3 {
      seen = []
      try executor.invoke()
      XCTAssertTrue(zip(seen, first).allSatisfy { $0 === $1 }, "the same objects in every invoke: nothing is built while running")
    }
    // `first` keeps the old objects alive, so new ones cannot reuse their addresses.
    try executor.allocateTensors()
    seen = []
    try executor.invoke()
    XCTAssertEqual(seen.count, first.count)
    XCTAssertTrue(zip(seen, first).allSatisfy { $0 !== $1 }, "built again for the new allocation")
  }

  func testStrideObservesEveryKthNodeOnly() throws {
    let executor = try runner(fusing: false).primary
    var willRun: [Int] = []
    var didRun: [Int] = []
    var observer = NodeObserver(willRun: { willRun.append($0.position) }) { didRun.append($0.position) }
    observer.stride = 3
    observer.phase = 1
    executor.nodeObserver = observer
    try executor.invoke()
    let expected = Array(Swift.stride(from: 1, to: executor.operatorNames.count, by: 3))
    XCTAssertEqual(didRun, expected)
    XCTAssertFalse(willRun.isEmpty)
    XCTAssertTrue(Set(willRun).isSubset(of: expected), "willRun only for observed nodes whose kernel runs")
  }
}
