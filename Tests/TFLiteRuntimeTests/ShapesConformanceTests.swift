import Foundation
import XCTest

@testable import TFLiteRuntime

/// Every TestModels case made only of data-movement, shape and conversion operators, against LiteRT.
final class ShapesConformanceTests: XCTestCase {
  /// The operators of the shape family.
  static let operators: Set<String> = [
    "RESHAPE", "SQUEEZE", "EXPAND_DIMS", "TRANSPOSE", "CONCATENATION", "PACK", "UNPACK", "SPLIT", "SPLIT_V", "SLICE",
    "STRIDED_SLICE", "GATHER", "GATHER_ND", "PAD", "PADV2", "MIRROR_PAD", "TILE", "BROADCAST_TO", "RESIZE_BILINEAR",
    "RESIZE_NEAREST_NEIGHBOR", "DEPTH_TO_SPACE", "SPACE_TO_DEPTH", "SHAPE", "CAST", "FILL", "ZEROS_LIKE", "DEQUANTIZE",
    "DENSIFY",
  ]

  /// The manifest fields that tell whether an output's shape depends on input values.
  private struct SignatureEntry: Decodable {
    struct Operand: Decodable {
      var shapeSignature: [Int]
      enum CodingKeys: String, CodingKey { case shapeSignature = "shape_signature" }
    }
    var name: String
    var inputs: [Operand]
    var outputs: [Operand]

    /// Every input shape is fixed in the model, yet some output dimension is not: only the input
    /// values can decide it, which the runtime does not support (outputs are sized at allocation).
    var outputShapeDependsOnValues: Bool {
      !inputs.contains { $0.shapeSignature.contains(-1) } && outputs.contains { $0.shapeSignature.contains(-1) }
    }
  }

  private static func valueDependentModels() throws -> Set<String> {
    let data = try Data(contentsOf: TestModelManifest.directory.appendingPathComponent("manifest.json"))
    struct Manifest: Decodable { var models: [SignatureEntry] }
    return Set(try JSONDecoder().decode(Manifest.self, from: data).models.filter(\.outputShapeDependsOnValues).map(\.name))
  }

  private func isShapeCase(_ entry: TestModelManifest.Entry) -> Bool {
    entry.kind == "op" && entry.opNames.isSubset(of: Self.operators)
  }

  func testEveryShapeOperatorModelMatchesLiteRT() throws {
    let dynamic = try Self.valueDependentModels()
    let outcomes = try Conformance.check { self.isShapeCase($0) && !dynamic.contains($0.name) }
    var byOperator: [String: (cases: Int, maxError: Double)] = [:]
    for outcome in outcomes {
      for op in outcome.entry.opNames {
        let current = byOperator[op] ?? (0, 0)
        byOperator[op] = (current.cases + 1, max(current.maxError, outcome.maxAbsoluteError))
      }
    }
    for (op, summary) in byOperator.sorted(by: { $0.key < $1.key }) {
      print("\(op): \(summary.cases) cases, max abs error \(summary.maxError)")
    }
  }

  func testThreadedRunsMatchLiteRTToo() throws {
    let dynamic = try Self.valueDependentModels()
    try Conformance.check({ self.isShapeCase($0) && !dynamic.contains($0.name) }, threadCount: 2)
  }

  func testOutputsSizedByInputValuesAreReportedAsUnsupported() throws {
    let dynamic = try Self.valueDependentModels()
    for entry in try TestModelManifest.load().models where isShapeCase(entry) && dynamic.contains(entry.name) {
      let outcome = Conformance.run(entry)
      XCTAssertTrue(outcome.failure?.contains("dynamic output shape") ?? false, "\(entry.name): \(outcome.failure ?? "ran")")
    }
  }
}
