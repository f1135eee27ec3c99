import Foundation
import TFLiteFormat
import XCTest

@testable import TFLiteRuntime

/// The reference kernels (`Sources/TFLiteRuntime/Reference/`) on the committed single-operator
/// TestModels, reached the way a runner reaches them: each model runs with
/// `RunnerOptions(kernels: .reference)`, so its node goes through ``ReferenceAdapterKernel``, the one
/// mapping from schema operators, options and quantization to the reference functions. Every case
/// must be computed by that kernel (not by an optimized fallback, except for the INT4 weights the
/// reference set leaves to the optimized kernels) and equal LiteRT's `BUILTIN_REF` output bit for
/// bit when quantized, within the manifest's tolerance when float.
final class ReferenceKernelConformanceTests: XCTestCase {
  /// The operators the reference kernels cover.
  static let operators: Set<String> = [
    "CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "TRANSPOSE_CONV", "BATCH_MATMUL", "AVERAGE_POOL_2D",
    "MAX_POOL_2D", "L2_POOL_2D", "SOFTMAX", "ADD", "SUB", "MUL", "RELU", "RELU6", "RELU_N1_TO_1", "LOGISTIC", "TANH",
  ]

  func testSingleOperatorModelsMatchLiteRT() throws {
    let outcomes = try Conformance.check(
      { entry in
        entry.kind == "op" && entry.ops.count == 1 && Self.operators.contains(entry.ops[0].op)
          && ["float32", "int8", "uint8", "int16x8"].contains(entry.quantization)
      }, kernels: .reference)
    var tally: [String: (matched: Int, total: Int)] = [:]
    var leftToOptimized: [String] = []
    for outcome in outcomes {
      let entry = outcome.entry
      let model = try TFLiteModel(contentsOfFile: TestModelManifest.directory.appendingPathComponent(entry.file).path)
      let executor = try ModelRunner(model: model, options: RunnerOptions(kernels: .reference)).primary
      guard executor.kernelTypeNames == ["ReferenceAdapterKernel"] else {
        leftToOptimized.append("\(entry.name) (\(executor.kernelTypeNames.joined(separator: ", ")))")
        continue
      }
      var label = "\(entry.ops[0].op) \(entry.quantization == "uint8" ? "uint8 legacy" : entry.quantization)"
      if executor.inputs.first?.type == .int32 { label = "\(entry.ops[0].op) int32" }
      tally[label, default: (0, 0)].total += 1
      if outcome.passed { tally[label, default: (0, 0)].matched += 1 }
    }
    print("reference kernels: left to the optimized kernels: \(leftToOptimized.joined(separator: ", "))")
    XCTAssertTrue(
      leftToOptimized.allSatisfy { $0.contains("int4") }, "cases the reference kernels should run: \(leftToOptimized)")
    for (label, counts) in tally.sorted(by: { $0.key < $1.key }) {
      let how = label.hasSuffix("float32") ? "within tolerance" : "exact"
      print("reference kernels: \(label) \(counts.matched)/\(counts.total) \(how)")
    }
    // Every covered operator has cases in float and in at least one integer form.
    for op in Self.operators {
      XCTAssertNotNil(tally["\(op) float32"], "no float32 case of \(op)")
      if op != "L2_POOL_2D" {
        XCTAssertTrue(
          tally.keys.contains { $0.hasPrefix(op + " ") && !$0.hasSuffix("float32") }, "no integer case of \(op)")
      }
    }
    XCTAssertGreaterThan(outcomes.count, 250, "fewer single-operator cases than the TestModels hold")
  }
}
