import XCTest

/// Every float model of `TestModels` (single ops and whole networks, float32 weights or float16
/// weights behind DEQUANTIZE) against LiteRT's reference kernels, within the manifest's tolerances.
final class FloatConformanceTests: XCTestCase {
  private static let floatModes: Set<String> = ["float32", "float16_weights"]

  func testEveryFloatModelMatchesLiteRT() throws {
    let outcomes = try Conformance.check { Self.floatModes.contains($0.quantization) }
    var perOp: [String: (cases: Int, passed: Int, maxError: Double)] = [:]
    for outcome in outcomes {
      for op in outcome.entry.opNames {
        var stats = perOp[op, default: (0, 0, 0)]
        stats.cases += 1
        if outcome.passed { stats.passed += 1 }
        stats.maxError = max(stats.maxError, outcome.maxAbsoluteError)
        perOp[op] = stats
      }
    }
    print("float conformance: \(outcomes.filter(\.passed).count) of \(outcomes.count) models pass")
    for (op, stats) in perOp.sorted(by: { $0.key < $1.key }) {
      print("  \(op): \(stats.passed)/\(stats.cases) models, max abs error \(stats.maxError)")
    }
  }

  func testNetworksMatchLiteRTWithTwoThreads() throws {
    try Conformance.check({ Self.floatModes.contains($0.quantization) && $0.kind == "network" }, threadCount: 2)
  }
}
