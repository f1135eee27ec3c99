import Foundation
import XCTest

@testable import TFLiteFormat
@testable import TFLiteRuntime

/// INT4 constants stored one value a byte (which the loader accepts beside the packed form) give
/// the same results as the packed ones the converter writes.
final class Int4ConstantTests: XCTestCase {
  func testUnpackedInt4WeightsMatchPackedOnes() throws {
    let manifest = try TestModelManifest.load()
    let entries = manifest.models.filter { $0.name.contains("int4") }
    XCTAssertEqual(entries.count, 2, "the integer and the hybrid FULLY_CONNECTED with int4 weights")
    for entry in entries {
      let packed = try Array(Data(contentsOf: TestModelManifest.directory.appendingPathComponent(entry.file)))
      let unpacked = try XCTUnwrap(Self.unpackingInt4Buffers(of: packed), entry.name)
      XCTAssertGreaterThan(unpacked.count, packed.count, "\(entry.name): the rewritten model holds more weight bytes")
      let inputs = try entry.inputs.map { try TestModelManifest.array($0.file) }
      XCTAssertEqual(try Self.outputs(of: unpacked, inputs: inputs), try Self.outputs(of: packed, inputs: inputs), entry.name)
    }
  }

  /// The model with every INT4 constant rewritten as one sign-extended value a byte; nil when it has none.
  private static func unpackingInt4Buffers(of bytes: [UInt8]) -> [UInt8]? {
    var root = ModelTree.decode(bytes)
    var int4Buffers = Set<Int>()
    for subgraph in root.tables("subgraphs") {
      for tensor in subgraph.tables("tensors") where tensor.integer("type") == Int64(TensorType.int4.rawValue) {
        int4Buffers.insert(Int(tensor.integer("buffer")))
      }
    }
    for index in int4Buffers {
      root.update("buffers", at: index) { buffer in
        guard case .scalarVector(let data, 1) = buffer["data"] else { return }
        let values = data.flatMap { byte in [byte << 4, byte & 0xF0].map { UInt8(bitPattern: Int8(bitPattern: $0) >> 4) } }
        buffer["data"] = .scalarVector(values, elementSize: 1)
      }
    }
    return int4Buffers.isEmpty ? nil : ModelTree.encode(root)
  }

  /// The raw bytes of every output of the model in `bytes` run on `inputs`.
  private static func outputs(of bytes: [UInt8], inputs: [NumPyArray]) throws -> [[UInt8]] {
    let executor = try ModelRunner(model: TFLiteModel(bytes: bytes), options: RunnerOptions()).primary
    try executor.allocateTensors()
    for (tensor, array) in zip(executor.inputs, inputs) {
      XCTAssertEqual(tensor.byteCount, array.bytes.count)
      array.bytes.withUnsafeBytes { tensor.data?.copyMemory(from: $0.baseAddress!, byteCount: min($0.count, tensor.byteCount)) }
    }
    try executor.invoke()
    return executor.outputs.map { Array(UnsafeRawBufferPointer(start: $0.data, count: $0.byteCount)) }
  }
}
