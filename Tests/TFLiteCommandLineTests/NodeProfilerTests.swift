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
    // Node 4, the PAD, is folded into the DEPTHWISE_CONV_2D after it: it never runs nor is timed.
    let foldedPad = 4
    let profiler = NodeProfiler(nodeCounts: [nodeCount])
    defer { model.executor.nodeObserver = nil }
    for run in 0..<30 {
      model.executor.nodeObserver = profiler.observer(forSubgraph: 0, stride: 3, phase: run % 3)
      profiler.beginInvoke(stride: 3, phase: run % 3)
      try model.executor.invoke()
      // Positions 0, 3, …, 21 (8 nodes) in phase 0; 7 nodes in phases 1 (but the folded PAD) and 2.
      XCTAssertEqual(profiler.timedRunCount, [8, 6, 7][run % 3])
      profiler.endInvoke()
    }
    let samples = try XCTUnwrap(profiler.samples.first)
    XCTAssertEqual(
      samples.map { $0?.count }, (0..<nodeCount).map { $0 == foldedPad ? nil : 10 }, "10 timings of every node that runs")
    XCTAssertTrue(samples.enumerated().allSatisfy { $0.offset == foldedPad || $0.element?.allSatisfy { $0 > 0 } == true })
    XCTAssertTrue(profiler.events.isEmpty, "no events are kept unless asked for")
  }

  func testRecordedEventsReuseTheirStorage() throws {
    let model = try LoadedModel(path: mobileNet, signatureKey: nil, threadCount: 1)
    try model.feed(try inputArrays(for: model, inputValues: [], seed: 0))
    let profiler = NodeProfiler(nodeCounts: [model.executor.operatorNames.count])
    model.executor.nodeObserver = profiler.observer(forSubgraph: 0)
    defer { model.executor.nodeObserver = nil }
    profiler.beginInvoke(recordsEvents: true, expectedEvents: 21)
    try model.executor.invoke()
    let capacity = profiler.events.capacity
    // Every node but node 4, the PAD folded into the DEPTHWISE_CONV_2D after it.
    XCTAssertEqual(profiler.events.map(\.node), Array(0..<22).filter { $0 != 4 })
    for _ in 0..<20 {
      profiler.beginInvoke(recordsEvents: true, expectedEvents: 21)
      try model.executor.invoke()
      XCTAssertEqual(profiler.events.count, 21)
      XCTAssertEqual(profiler.events.capacity, capacity, "the events of an invoke fit the storage reserved before it")
    }
    // Consecutive nodes share a clock read: each starts when the one before it ended (the node
    // after the folded PAD starts at a reading of its own).
    let adjacent = zip(profiler.events, profiler.events.dropFirst()).filter { $0.1.node == $0.0.node + 1 }
    XCTAssertEqual(adjacent.count, 19)
    for (previous, next) in adjacent { XCTAssertEqual(next.start, previous.end) }
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
