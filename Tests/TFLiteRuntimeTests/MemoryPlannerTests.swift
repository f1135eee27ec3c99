import TFLiteFormat
import XCTest

@testable import TFLiteRuntime

final class MemoryPlannerTests: XCTestCase {
  /// Checks that no two blocks live at the same time share bytes.
  private func assertNoOverlap(_ plan: MemoryPlan, file: StaticString = #filePath, line: UInt = #line) {
    let placements = plan.placements
    for a in placements.indices {
      for b in placements.indices where a < b {
        let left = placements[a]
        let right = placements[b]
        guard left.request.overlapsInTime(right.request) else { continue }
        let leftEnd = left.offset + left.request.byteCount
        let rightEnd = right.offset + right.request.byteCount
        XCTAssertTrue(
          leftEnd <= right.offset || rightEnd <= left.offset,
          "blocks \(left.request.owner) and \(right.request.owner) overlap", file: file, line: line)
      }
      XCTAssertLessThanOrEqual(placements[a].offset + placements[a].request.byteCount, plan.arenaByteCount)
      XCTAssertEqual(placements[a].offset % MemoryPlan.alignment, 0)
    }
  }

  func testChainReusesMemory() {
    // A chain a -> b -> c -> d: each block is needed only by its producer and its consumer.
    let requests = (0..<4).map {
      MemoryRequest(owner: .tensor($0), byteCount: 1000, firstUse: $0 - 1, lastUse: $0)
    }
    let plan = MemoryPlan(requests: requests)
    assertNoOverlap(plan)
    XCTAssertEqual(plan.arenaByteCount, 2 * MemoryPlan.aligned(1000))
    XCTAssertEqual(plan.arenaByteCount, plan.peakLiveByteCount)
  }

  func testRandomGraphsNeverOverlapAndStayNearTheLowerBound() {
    var generator = SystemRandomNumberGenerator()
    var worstRatio = 1.0
    for _ in 0..<200 {
      let count = Int.random(in: 1...40, using: &generator)
      let requests = (0..<count).map { index -> MemoryRequest in
        let first = Int.random(in: -1...30, using: &generator)
        return MemoryRequest(
          owner: .tensor(index), byteCount: Int.random(in: 1...100_000, using: &generator),
          firstUse: first, lastUse: first + Int.random(in: 0...6, using: &generator))
      }
      let plan = MemoryPlan(requests: requests)
      assertNoOverlap(plan)
      XCTAssertGreaterThanOrEqual(plan.arenaByteCount, plan.peakLiveByteCount)
      worstRatio = max(worstRatio, Double(plan.arenaByteCount) / Double(plan.peakLiveByteCount))
    }
    // Greedy-by-size is not optimal, but on graph-like lifetimes it stays close to the bound.
    XCTAssertLessThan(worstRatio, 2.0)
  }

  /// On the TestModels networks the plan, graph inputs kept for the whole run, reaches the lower
  /// bound (the most bytes live at one node). The legacy MobileNetV1 needs an order other than
  /// largest-first to reach it.
  func testNetworkPlansReachTheLowerBound() throws {
    let folder = TestModelManifest.directory.appendingPathComponent("networks")
    for name in ["mobilenet_v1_mini_uint8_legacy", "mobilenet_mini_int8", "mobilenet_mini_float", "efficientnet_mini_int8"] {
      let runner = try ModelRunner(model: try TFLiteModel(contentsOfFile: folder.appendingPathComponent("\(name).tflite").path))
      try runner.primary.allocateTensors()
      let plan = runner.primary.memoryPlan
      assertNoOverlap(plan)
      XCTAssertEqual(plan.arenaByteCount, plan.peakLiveByteCount, name)
    }
  }

  func testEmptyPlan() {
    let plan = MemoryPlan(requests: [])
    XCTAssertEqual(plan.arenaByteCount, 0)
    XCTAssertEqual(plan.peakLiveByteCount, 0)
  }
}
