import Foundation
import XCTest

@testable import TFLiteCommandLine

/// `NodeProfiler`, the per-node timer of `tflite profile`: what it keeps per invoke, its rotation
/// through the nodes when it times only some of them, and how it picks that stride.
final class NodeProfilerTests: XCTestCase {
  private let mobileNet = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("TestModels/networks/mobilenet_mini_float.tflite").path

  func testRotatingStrideTimesEveryNodeOnceEveryStrideInvokes() throws {
    let model = try LoadedModel(path: mobileNet, signatureKey: nil, threadCount: 1)
    try model.feed(try inputArrays(for: model, inputValues: [], seed: 0))
    let nodeCount = model.executor.operatorNames.count
    XCTAssertEqual(nodeCount, 22)
    let profiler = NodeProfiler(nodeCounts: [nodeCount])
    defer { model.executor.nodeObserver = nil }
    for run in 0..<30 {
      model.executor.nodeObserver = profiler.observer(forSubgraph: 0, stride: 3, phase: run % 3)
      profiler.beginInvoke(stride: 3, phase: run % 3)
      try model.executor.invoke()
      // Positions 0, 3, …, 21 (8 nodes) in phase 0; 7 nodes in phases 1 and 2.
      XCTAssertEqual(profiler.timedRunCount, run % 3 == 0 ? 8 : 7)
      profiler.endInvoke()
    }
    let samples = try XCTUnwrap(profiler.samples.first)
    XCTAssertEqual(samples.map { $0?.count }, Array(repeating: 10, count: nodeCount), "10 timings of every node")
    XCTAssertTrue(samples.allSatisfy { $0?.allSatisfy { $0 > 0 } == true })
    XCTAssertTrue(profiler.events.isEmpty, "no events are kept unless asked for")
  }

  func testRecordedEventsReuseTheirStorage() throws {
    let model = try LoadedModel(path: mobileNet, signatureKey: nil, threadCount: 1)
    try model.feed(try inputArrays(for: model, inputValues: [], seed: 0))
    let profiler = NodeProfiler(nodeCounts: [model.executor.operatorNames.count])
    model.executor.nodeObserver = profiler.observer(forSubgraph: 0)
    defer { model.executor.nodeObserver = nil }
    profiler.beginInvoke(recordsEvents: true, expectedEvents: 22)
    try model.executor.invoke()
    let capacity = profiler.events.capacity
    XCTAssertEqual(profiler.events.map(\.node), Array(0..<22))
    for _ in 0..<20 {
      profiler.beginInvoke(recordsEvents: true, expectedEvents: 22)
      try model.executor.invoke()
      XCTAssertEqual(profiler.events.count, 22)
      XCTAssertEqual(profiler.events.capacity, capacity, "the events of an invoke fit the storage reserved before it")
    }
    // Consecutive nodes share a clock read: each starts when the one before it ended.
    for (previous, next) in zip(profiler.events, profiler.events.dropFirst()) { XCTAssertEqual(next.start, previous.end) }
  }

  func testStrideKeepsObservingWithinTheBudget() {
    // 22 nodes, 2.5 % of 35 µs = 875 ns. Observing a node for 30 ns: 660 ns for all, stride 1.
    XCTAssertEqual(
      NodeProfiler.stride(
        nodeRuns: 22, nodeNanoseconds: 30, clockReadNanoseconds: 27, invokeNanoseconds: 35_000, budget: 0.025, maximum: 22),
      1)
    // For 136 ns (one more read, 163 ns, at larger strides): 875 / 163 = 5.4 nodes per invoke, so 22 / 5.4 → stride 5.
    XCTAssertEqual(
      NodeProfiler.stride(
        nodeRuns: 22, nodeNanoseconds: 136, clockReadNanoseconds: 27, invokeNanoseconds: 35_000, budget: 0.025, maximum: 22),
      5)
    // Never beyond the node count (some node must be timed in every phase).
    XCTAssertEqual(
      NodeProfiler.stride(
        nodeRuns: 22, nodeNanoseconds: 136, clockReadNanoseconds: 27, invokeNanoseconds: 1_000, budget: 0.025, maximum: 22),
      22)
  }
}
