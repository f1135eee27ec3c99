// Our activation arena against LiteRT's on the TestModels networks. The LiteRT figures are the
// span its builtin kernels give their activation tensors after `allocate_tensors()`, measured by
// `Scripts/litert_arena.py` and committed in `TestModels/networks/litert_arena.json`: a lower bound
// of LiteRT's arena (its kernels' temporaries are left out), while our arena also holds every
// node's scratch memory.

import Foundation
import TFLiteFormat
import XCTest

@testable import TFLiteRuntime

final class ArenaSizeTests: XCTestCase {
  /// `TestModels/networks/litert_arena.json`.
  private struct LiteRTArenas: Decodable {
    /// LiteRT's activation span in bytes, by network name.
    var activation_span_bytes: [String: Int]
  }

  /// The primary executor of `TestModels/networks/<name>.tflite`, allocated.
  private func allocatedNetwork(_ name: String) throws -> SubgraphExecutor {
    let path = TestModelManifest.directory.appendingPathComponent("networks/\(name).tflite").path
    let runner = try ModelRunner(model: try TFLiteModel(contentsOfFile: path))
    try runner.primary.allocateTensors()
    return runner.primary
  }

  /// Every network's arena (scratch included, graph inputs kept for the whole run) is at most the
  /// span LiteRT gives the same network's activations alone.
  func testEveryNetworkArenaIsAtMostLiteRTs() throws {
    let data = try Data(contentsOf: TestModelManifest.directory.appendingPathComponent("networks/litert_arena.json"))
    let litert = try JSONDecoder().decode(LiteRTArenas.self, from: data).activation_span_bytes
    XCTAssertEqual(litert.count, 10)
    for (name, litertBytes) in litert.sorted(by: { $0.key < $1.key }) {
      let executor = try allocatedNetwork(name)
      XCTAssertGreaterThan(executor.arenaByteCount, 0, name)
      XCTAssertLessThanOrEqual(executor.arenaByteCount, litertBytes, "\(name): ours \(executor.arenaByteCount), LiteRT \(litertBytes)")
    }
  }

  /// In-place outputs follow LiteRT's rules: the shared input has the output's type and byte
  /// count, neither is a subgraph input or output, and each tensor of a shared block is last read
  /// by the node that writes the next one over it; and such pairs exist (EfficientNet's SiLU
  /// products and residual additions are written over their inputs).
  func testInPlaceOutputsShareOnlyDeadInputsOfTheirSize() throws {
    for name in ["efficientnet_mini_float", "efficientnet_mini_int8", "mobilenet_mini_int8"] {
      let executor = try allocatedNetwork(name)
      let nodes = executor.nodes
      let boundary = Set((executor.inputs + executor.outputs).map(\.index))
      func producer(_ tensor: Int) -> Int? { nodes.firstIndex { $0.outputs.contains { $0.index == tensor } } }
      func lastReader(_ tensor: Int) -> Int? { nodes.lastIndex { $0.inputs.contains { $0?.index == tensor } } }
      XCTAssertFalse(executor.inPlaceOutputs.isEmpty, name)
      for (root, pairs) in Dictionary(grouping: executor.inPlaceOutputs, by: \.value) {
        let members = ([root] + pairs.map(\.key)).sorted { (producer($0) ?? -1) < (producer($1) ?? -1) }
        for (earlier, later) in zip(members, members.dropFirst()) {
          let (shared, written) = (executor.tensors[earlier], executor.tensors[later])
          XCTAssertEqual(written.type, shared.type, name)
          XCTAssertEqual(written.byteCount, shared.byteCount, name)
          XCTAssertEqual(written.data, shared.data, name)
          XCTAssertFalse(boundary.contains(earlier) || boundary.contains(later), name)
          XCTAssertEqual(lastReader(earlier), producer(later), "\(name): T\(earlier) is read after T\(later) overwrote it")
        }
      }
    }
  }
}
