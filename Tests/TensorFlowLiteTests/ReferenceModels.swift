import Foundation
import XCTest

import struct TFLiteFormat.NumPyArray

@testable import TensorFlowLite

/// The converted models of `TestModels` and LiteRT's outputs for them, for tests that run them
/// end to end through the public API.
enum ReferenceModels {
  /// The parts of a `TestModels/manifest.json` entry the API tests read.
  struct Entry: Decodable {
    struct TensorFile: Decodable {
      var name: String
      var file: String
    }
    struct Tolerance: Decodable {
      var atol: Double
    }
    var name: String
    var file: String
    var inputs: [TensorFile]
    var outputs: [TensorFile]
    var tolerance: Tolerance?

    /// The model file's path.
    var path: String { ReferenceModels.directory.appendingPathComponent(file).path }
  }

  private struct Manifest: Decodable {
    var models: [Entry]
  }

  /// The `TestModels` folder of the repository.
  static let directory = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("TestModels")

  /// The manifest entry of the model called `name`.
  static func entry(_ name: String) throws -> Entry {
    let data = try Data(contentsOf: directory.appendingPathComponent("manifest.json"))
    return try XCTUnwrap(try JSONDecoder().decode(Manifest.self, from: data).models.first { $0.name == name })
  }

  /// The `.npy` file at `file` (relative to `TestModels`).
  static func array(_ file: String) throws -> NumPyArray {
    try NumPyArray(parsing: [UInt8](Data(contentsOf: directory.appendingPathComponent(file))))
  }

  /// The raw bytes of the `.npy` file at `file`, as `copy(_:toInputAt:)` takes them.
  static func data(_ file: String) throws -> Data { Data(try array(file).bytes) }

  /// Asserts that the FLOAT32 `tensor` matches LiteRT's output in `file` within the entry's tolerance.
  static func assertMatchesLiteRT(
    _ tensor: TensorFlowLite.Tensor, _ file: String, _ entry: Entry, line: UInt = #line
  ) throws {
    let expected = try array(file)
    XCTAssertEqual(tensor.shape.dimensions, expected.shape, line: line)
    let got = tensor.data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    let want = try expected.floatValues()
    XCTAssertEqual(got.count, want.count, line: line)
    let tolerance = Float(entry.tolerance?.atol ?? 0)
    for (have, reference) in zip(got, want) { XCTAssertEqual(have, reference, accuracy: tolerance, line: line) }
  }
}
