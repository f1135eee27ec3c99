import Foundation
import TFLiteCommandLine
import TFLiteFormat
import TFLiteLinearAlgebra
import TFLiteRuntime
import TFLiteTestSupport
import XCTest

final class CompareCommandTests: CommandTestCase {
  private var model = ""
  private var input = ""

  override func setUpWithError() throws {
    try super.setUpWithError()
    model = try write(Self.passThrough, as: "model.tflite")
    input = try writeNumPy([Float(1), 2, 3], shape: [1, 3], as: "a.npy")
  }

  func testMatchingOutputs() throws {
    let expected = try writeNumPy([Float(1), 2, 3.000001], shape: [1, 3], as: "e.npy")
    let result = run("compare", model, "--input", input, "--expected", expected)
    XCTAssertEqual(result.code, 0, result.output.standardOutput + result.output.standardError)
    XCTAssertTrue(result.output.standardOutput.contains("all 3 values within tolerance"), result.output.standardOutput)
    XCTAssertTrue(result.output.standardOutput.contains("all outputs within tolerance"))
  }

  func testMismatchReportsTheFirstIndexAndBothValues() throws {
    let expected = try writeNumPy([Float(1), 2.5, 4], shape: [1, 3], as: "e.npy")
    let result = run("compare", model, "--input", input, "--expected", expected)
    XCTAssertEqual(result.code, 1)
    let text = result.output.standardOutput
    XCTAssertTrue(text.contains("max abs error 1, max rel error 0.25"), text)
    XCTAssertTrue(text.contains("2 of 3 values beyond tolerance; first at [0, 1] (flat 1): actual 2, expected 2.5"), text)
    let loose = run("compare", model, "--input", input, "--expected", expected, "--atol", "1")
    XCTAssertEqual(loose.code, 0, loose.output.standardOutput)
  }

  func testShapeMismatchAndMissingExpectation() throws {
    let expected = try writeNumPy([Float(1), 2, 3], shape: [3], as: "e.npy")
    let result = run("compare", model, "--input", input, "--expected", expected)
    XCTAssertEqual(result.code, 1)
    XCTAssertTrue(result.output.standardOutput.contains("shape differs"), result.output.standardOutput)
    XCTAssertEqual(run("compare", model, "--input", input).code, 64)
  }

  func testReferenceKernelsMatchLiteRTBitForBit() throws {
    // An int8 CONV_2D case with LiteRT BUILTIN_REF's output: the reference kernels must equal it exactly.
    let testModels = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent().appendingPathComponent("TestModels/quant").path
    let result = run(
      "compare", testModels + "/conv2d_int8_1x1.tflite", "--input", testModels + "/conv2d_int8_1x1.input_0.npy",
      "--expected", testModels + "/conv2d_int8_1x1.output_0.npy", "--atol", "0", "--rtol", "0", "--reference-kernels")
    XCTAssertEqual(result.code, 0, result.output.standardOutput + result.output.standardError)
    XCTAssertTrue(result.output.standardOutput.contains("all outputs within tolerance"), result.output.standardOutput)
    let ran = run("run", testModels + "/conv2d_int8_1x1.tflite", "--reference-kernels")
    XCTAssertEqual(ran.code, 0, ran.output.standardError)
  }

  func testQuantizedOutputAgainstFloatsIsDequantized() throws {
    let quantized = try writeNumPy([UInt8(5), 7], shape: [2], as: "q.npy")
    let expected = try writeNumPy([Float(1), 2], shape: [2], as: "e.npy")
    let result = run("compare", model, "--input", input, "--input", quantized, "--expected", "quantized=\(expected)")
    XCTAssertEqual(result.code, 0, result.output.standardOutput)
    XCTAssertTrue(result.output.standardOutput.contains("types differ: actual UINT8 (dequantized), expected FLOAT32"))
  }
}

final class BenchCommandTests: CommandTestCase {
  func testJSONOutputHasExactlyTheDocumentedKeys() throws {
    let model = try write(Self.passThrough, as: "model.tflite")
    let result = run("bench", model, "--runs", "3", "--warmup", "1", "--json")
    XCTAssertEqual(result.code, 0, result.output.standardError)
    let line = result.output.standardOutput
    let pattern = try NSRegularExpression(
      pattern: #"^\{"load_ms":[0-9.]+, "first_invoke_ms":[0-9.]+, "load_cpu_ms":[0-9.]+, "first_invoke_cpu_ms":[0-9.]+, "min_ms":[0-9.]+, "median_ms":[0-9.]+, "max_ms":[0-9.]+, "arena_bytes":[0-9]+, "peak_rss_bytes":[0-9]+, "outputs_identical":true\}\n$"#)
    XCTAssertEqual(pattern.numberOfMatches(in: line, range: NSRange(line.startIndex..., in: line)), 1, line)
    let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
      .compactMapValues { $0 as? Double }
    XCTAssertLessThanOrEqual(try XCTUnwrap(object["min_ms"]), try XCTUnwrap(object["median_ms"]))
    XCTAssertLessThanOrEqual(try XCTUnwrap(object["median_ms"]), try XCTUnwrap(object["max_ms"]))
    XCTAssertGreaterThan(try XCTUnwrap(object["arena_bytes"]), 0)
    // The process holds at least the model it ran: more than a megabyte of resident memory.
    XCTAssertGreaterThan(try XCTUnwrap(object["peak_rss_bytes"]), 1_000_000)
  }

  /// `--cpu-times` adds `cpu_median_ms` after `max_ms` in JSON and `CPU median` in text; a
  /// one-thread invoke of a small model takes well under a second of CPU.
  func testCPUTimesAddTheCPUMedian() throws {
    let model = try write(Self.passThrough, as: "model.tflite")
    let json = run("bench", model, "--runs", "5", "--warmup", "1", "--json", "--cpu-times")
    XCTAssertEqual(json.code, 0, json.output.standardError)
    let line = json.output.standardOutput
    let pattern = try NSRegularExpression(pattern: #""max_ms":[0-9.]+, "cpu_median_ms":[0-9.]+, "arena_bytes""#)
    XCTAssertEqual(pattern.numberOfMatches(in: line, range: NSRange(line.startIndex..., in: line)), 1, line)
    let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    let cpuMedian = try XCTUnwrap(object["cpu_median_ms"] as? Double)
    XCTAssertGreaterThanOrEqual(cpuMedian, 0)
    XCTAssertLessThan(cpuMedian, 1000)
    let text = run("bench", model, "--runs", "2", "--warmup", "0", "--cpu-times")
    XCTAssertEqual(text.code, 0, text.output.standardError)
    XCTAssertTrue(text.output.standardOutput.contains("(2 runs), CPU median "), text.output.standardOutput)
  }

  func testInputFilesAreFedByNameAndChecked() throws {
    let model = try write(Self.passThrough, as: "model.tflite")
    let input = try writeNumPy([Float(1), 2, 3], shape: [1, 3], as: "a.npy")
    let named = run("bench", model, "--input", "input=\(input)", "--runs", "1", "--warmup", "0")
    XCTAssertEqual(named.code, 0, named.output.standardError)
    let wrongType = try writeNumPy([Int32(1), 2, 3], shape: [1, 3], as: "b.npy")
    let refused = run("bench", model, "--input", wrongType, "--runs", "1", "--warmup", "0")
    XCTAssertEqual(refused.code, 1)
    XCTAssertTrue(refused.output.standardError.contains("input 'input' expects FLOAT32 [1, 3] (shape signature [-1, 3]), got INT32 [1, 3]"), refused.output.standardError)
  }

  /// The kernel, kind and instruction-set level of every node: a float CONV_2D runs a GEMM on the
  /// generated kernels of the newest ISA this CPU has (or the Swift ones), an int8 one the integer
  /// GEMM on the generated VNNI kernels (or the Swift kernel on 16-bit panels).
  func testVerboseNamesEveryNodesKernel() throws {
    let float = run("bench", Self.testModel("ops/conv2d_f32_1x1"), "--runs", "1", "--warmup", "0", "--verbose")
    XCTAssertEqual(float.code, 0, float.output.standardError)
    let level = GeneratedKernelISA.supported.map { "generated \($0)" } ?? "Swift SIMD"
    XCTAssertTrue(float.output.standardOutput.contains("kernels:\n  0: CONV_2D: float Conv2DKernel: GEMM, \(level)"), float.output.standardOutput)
    let integer = run(
      "bench", Self.testModel("quant/conv2d_int8_1x1"), "--input", Self.testModel("quant/conv2d_int8_1x1", ".input_0.npy"),
      "--runs", "1", "--warmup", "0", "--verbose", "--json")
    XCTAssertEqual(integer.code, 0, integer.output.standardError)
    let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(integer.output.standardOutput.utf8)) as? [String: Any])
    let kernels = try XCTUnwrap(object["kernels"] as? [String])
    XCTAssertEqual(kernels.count, 1)
    let integerRoute = GeneratedDotProductKernels.preferred.map { "generated \($0.isa)" } ?? "16-bit weight panels, Swift SIMD"
    XCTAssertTrue(kernels[0].hasPrefix("CONV_2D: integer IntegerConv2DKernel: int8 GEMM, \(integerRoute)"), kernels[0])
  }

  /// The path of `TestModels/NAME` + `suffix`.
  private static func testModel(_ name: String, _ suffix: String = ".tflite") -> String {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent().appendingPathComponent("TestModels/" + name + suffix).path
  }

  func testTextOutput() throws {
    let model = try write(Self.passThrough, as: "model.tflite")
    let result = run("bench", model, "--runs", "2", "--warmup", "0")
    XCTAssertEqual(result.code, 0, result.output.standardError)
    XCTAssertTrue(result.output.standardOutput.contains("(2 runs)\n"), result.output.standardOutput)
  }

  func testMedianOfEvenAndOddCounts() {
    XCTAssertEqual(BenchmarkResult(loadMilliseconds: 0, invokeMilliseconds: [1, 2, 4], arenaByteCount: 0, outputsStayedIdentical: true).median, 2)
    XCTAssertEqual(BenchmarkResult(loadMilliseconds: 0, invokeMilliseconds: [1, 2, 4, 8], arenaByteCount: 0, outputsStayedIdentical: true).median, 3)
    // The CPU times are sorted apart from the wall times.
    let result = BenchmarkResult(
      loadMilliseconds: 0, invokeMilliseconds: [1, 2, 4], invokeCPUMilliseconds: [5, 0.5, 3], arenaByteCount: 0,
      outputsStayedIdentical: true)
    XCTAssertEqual(result.cpuMedian, 3)
    XCTAssertEqual(result.median, 2)
  }
}

final class DemoCommandTests: CommandTestCase {
  /// A "classifier" without operators whose scores are its input (`scores` FLOAT32 [1, 4]), so the
  /// ranking is known.
  private static let scoresModel = TestModel(subgraphs: [
    TestModel.Subgraph(tensors: [.init(name: "scores", type: 0, shape: [1, 4])], inputs: [0], outputs: [0])
  ])

  /// Writes the classifier, its labels, a demo input and a manifest naming them.
  private func writeDemoDirectory(labels: String = "cat\ndog\nbird\nfish\n") throws -> String {
    _ = try write(Self.scoresModel, as: "scores.tflite")
    _ = try writeNumPy([Float(0.1), 0.6, 0.05, 0.25], shape: [1, 4], as: "picture.npy")
    try labels.write(toFile: path("labels.txt"), atomically: true, encoding: .utf8)
    let manifest = """
      {"models": [
        {"name": "single_op", "file": "scores.tflite", "kind": "op", "inputs": []},
        {"name": "classifier", "file": "scores.tflite", "kind": "network", "inputs": [{"file": "picture.npy"}]}
       ],
       "demo": {"model": "scores.tflite", "labels": "labels.txt", "inputs": [{"file": "picture.npy", "label_name": "dog"}]}}
      """
    try manifest.write(toFile: path("manifest.json"), atomically: true, encoding: .utf8)
    return directory
  }

  func testDemoPrintsTheTopFiveWithLabels() throws {
    let result = run("demo", "--models", try writeDemoDirectory())
    XCTAssertEqual(result.code, 0, result.output.standardError)
    let text = result.output.standardOutput
    XCTAssertTrue(text.contains("scores.tflite, 4 classes"), text)
    XCTAssertTrue(text.contains("picture.npy, true class dog"), text)
    let ranking = ["1. dog  0.6000", "2. fish  0.2500", "3. cat  0.1000", "4. bird  0.0500"]
    let positions = ranking.map { text.range(of: $0)?.lowerBound }
    XCTAssertFalse(positions.contains(nil), text)
    XCTAssertEqual(positions.compactMap { $0 }, positions.compactMap { $0 }.sorted(), text)
  }

  func testDemoWithoutManifestFails() {
    let result = run("demo", "--models", directory)
    XCTAssertEqual(result.code, 1)
    XCTAssertTrue(result.output.standardError.contains("manifest.json"), result.output.standardError)
  }
}

final class MemoryPlanReportTests: CommandTestCase {
  func testPlanListsEveryArenaTensor() throws {
    let model = try TFLiteModel(bytes: Self.passThrough.serialized())
    let runner = try ModelRunner(model: model)
    let report = try renderMemoryPlan(of: runner.primary)
    XCTAssertTrue(report.hasPrefix("memory plan of subgraph 0: arena \(runner.primary.arenaByteCount) bytes"), report)
    XCTAssertTrue(report.contains("T0 input FLOAT32 [1, 3]"), report)
    XCTAssertTrue(report.contains("T1 quantized UINT8 [2]"), report)
    XCTAssertTrue(report.contains("input...output"), report)
  }

  func testInspectPrintsThePlan() throws {
    let model = try write(Self.passThrough, as: "model.tflite")
    let result = run("inspect", model, "--plan")
    XCTAssertEqual(result.code, 0, result.output.standardError)
    XCTAssertTrue(result.output.standardOutput.contains("memory plan of subgraph 0: arena"), result.output.standardOutput)
    XCTAssertEqual(run("inspect", model, "--plan", "--json").code, 64)
  }
}
