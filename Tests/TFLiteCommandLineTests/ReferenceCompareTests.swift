import Foundation
import TFLiteCommandLine
import TFLiteFormat
import XCTest

/// `tflite compare MODEL --reference DIR` against the LiteRT (BUILTIN_REF) dumps in
/// TestModels/reference_dumps, written by Scripts/make_reference_dumps.sh.
final class ReferenceCompareTests: CommandTestCase {
  private static let testModels = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("TestModels").path
  private static let floatModel = testModels + "/networks/unet_mini_float.tflite"
  private static let int8Model = testModels + "/networks/unet_mini_int8.tflite"
  private static let faceDetector = testModels + "/mediapipe/mediapipe_face_detection_short_range.tflite"
  private static let whileModel = testModels + "/graphs/while_f32_iterate_count.tflite"
  private static let lstmModel = testModels + "/graphs/lstm_f32_keras_while_loop.tflite"

  private static func dump(_ name: String) -> String { testModels + "/reference_dumps/" + name }

  /// Runs `compare --json` and returns the exit code and the parsed report.
  private func jsonReport(_ arguments: String...) throws -> (code: Int32, report: [String: Any]) {
    let result = run(["compare"] + arguments + ["--json"])
    let text = result.output.standardOutput
    let object = try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
    return (result.code, try XCTUnwrap(object as? [String: Any], text + result.output.standardError))
  }

  private func run(_ arguments: [String]) -> (code: Int32, output: CapturedOutput) {
    let output = CapturedOutput()
    return (CommandLineTool.main(arguments: arguments, output: output), output)
  }

  /// Every output entry of every operator, with its operator's index.
  private func outputs(of report: [String: Any]) -> [(operator: Int, output: [String: Any])] {
    let operators = report["operators"] as? [[String: Any]] ?? []
    return operators.flatMap { entry in
      (entry["outputs"] as? [[String: Any]] ?? []).map { (entry["operator_index"] as? Int ?? -1, $0) }
    }
  }

  /// The operators with an output beyond tolerance.
  private func divergentOperators(in report: [String: Any]) -> [Int] {
    Array(Set(outputs(of: report).filter { $0.output["within_tolerance"] as? Bool == false }.map(\.operator))).sorted()
  }

  func testFloatNetworkIsWithinToleranceOfLiteRT() throws {
    let (code, report) = try jsonReport(Self.floatModel, "--reference", Self.dump("unet_mini_float"))
    XCTAssertEqual(code, 0)
    XCTAssertTrue(report["first_divergent"] is NSNull)
    let compared = outputs(of: report)
    XCTAssertEqual(compared.map(\.operator), Array(0..<12))
    XCTAssertTrue(compared.allSatisfy { $0.output["within_tolerance"] as? Bool == true })
    XCTAssertTrue(compared.allSatisfy { ($0.output["cosine"] as? Double ?? 0) > 0.999_999 })
    let table = run(["compare", Self.floatModel, "--reference", Self.dump("unet_mini_float")])
    XCTAssertTrue(table.output.standardOutput.contains("all compared tensors within tolerance"), table.output.standardOutput)
  }

  func testInt8NetworkEqualsLiteRTExactly() throws {
    let (code, report) = try jsonReport(Self.int8Model, "--reference", Self.dump("unet_mini_int8"))
    XCTAssertEqual(code, 0)
    let compared = outputs(of: report)
    XCTAssertEqual(compared.count, 12)
    for (_, output) in compared {
      XCTAssertEqual(output["max_error_steps"] as? Int, 0, "\(output)")
      XCTAssertEqual(output["max_abs_error"] as? Double, 0, "\(output)")
      XCTAssertEqual(output["snr_db"] as? String, "Infinity", "\(output)")
    }
  }

  func testMediaPipeFaceDetectorMatchesOnEveryTensorInTheDump() throws {
    let (code, report) = try jsonReport(Self.faceDetector, "--reference", Self.dump("mediapipe_face_detection_short_range"))
    XCTAssertEqual(code, 0)
    let all = outputs(of: report)
    XCTAssertEqual(all.count, 164)
    let compared = all.filter { $0.output["status"] as? String == "compared" }
    // The dump keeps tensors of at most 4 KiB: the rest are listed, not compared.
    XCTAssertEqual(compared.count, 63)
    XCTAssertTrue(compared.allSatisfy { $0.output["within_tolerance"] as? Bool == true })
    XCTAssertTrue(
      all.filter { $0.output["status"] as? String == "absent_in_reference" }.allSatisfy {
        $0.output["within_tolerance"] is NSNull
      })
    // The classifier scores (CONCATENATION, tensor 174) are compared.
    XCTAssertTrue(compared.contains { $0.operator == 162 && $0.output["tensor"] as? Int == 174 })
  }

  func testCorruptedReferenceNamesTheCorruptedOperatorFirst() throws {
    // Operator 5's output is one step off in this dump and LiteRT computed everything after it from it.
    let (code, report) = try jsonReport(Self.int8Model, "--reference", Self.dump("unet_mini_int8_corrupt_op5"))
    XCTAssertEqual(code, 1)
    let first = try XCTUnwrap(report["first_divergent"] as? [String: Any])
    XCTAssertEqual(first["operator_index"] as? Int, 5)
    XCTAssertEqual(first["op"] as? String, "CONV_2D")
    XCTAssertEqual(first["output_tensor"] as? Int, 23)
    XCTAssertEqual(divergentOperators(in: report), Array(5..<12))
    let corrupted = try XCTUnwrap(outputs(of: report).first { $0.operator == 5 }?.output)
    XCTAssertEqual(corrupted["max_error_steps"] as? Int, 1)
    let table = run(["compare", Self.int8Model, "--reference", Self.dump("unet_mini_int8_corrupt_op5")])
    XCTAssertEqual(table.code, 1)
    XCTAssertTrue(
      table.output.standardOutput.contains("first divergent operator: 5 CONV_2D, output tensor 23"), table.output.standardOutput)
  }

  func testIsolateBlamesOnlyTheCorruptedOperator() throws {
    let (code, report) = try jsonReport(
      Self.int8Model, "--reference", Self.dump("unet_mini_int8_corrupt_op5"), "--isolate")
    XCTAssertEqual(code, 1)
    XCTAssertEqual(report["mode"] as? String, "isolated")
    XCTAssertEqual(divergentOperators(in: report), [5])
    XCTAssertEqual((report["first_divergent"] as? [String: Any])?["operator_index"] as? Int, 5)
  }

  func testNodeDataColoursTheDivergentOperatorsForModelExplorer() throws {
    let file = path("compare-node-data-\(UUID().uuidString).json")
    let result = run([
      "compare", Self.int8Model, "--reference", Self.dump("unet_mini_int8_corrupt_op5"), "--isolate", "--node-data", file,
    ])
    XCTAssertEqual(result.code, 1)
    let document = try XCTUnwrap(
      try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: file))) as? [String: Any])
    XCTAssertEqual(document.count, 1, "one graph: subgraph 0")
    let graph = try XCTUnwrap(document.values.first as? [String: Any])
    let results = try XCTUnwrap(graph["results"] as? [String: [String: Double]])
    XCTAssertEqual(results.count, 12, "every operator of unet_mini_int8 has a value")
    // Isolated, only operator 5 is off: every value of its output is one step away from LiteRT's.
    for (node, result) in results {
      XCTAssertEqual(result["value"], node == "5" ? 1 : 0, "operator \(node)")
    }
    XCTAssertNotNil(graph["thresholds"] as? [[String: Any]])
    XCTAssertEqual(run(["compare", Self.int8Model, "--node-data", file, "--expected", file]).code, ExitCode.usage)
  }

  // MARK: - Subgraphs called by control flow

  /// The `subgraphs` entries of a report, by subgraph index.
  private func subgraphOperators(of report: [String: Any]) -> [Int: [[String: Any]]] {
    let subgraphs = report["subgraphs"] as? [[String: Any]] ?? []
    return Dictionary(uniqueKeysWithValues: subgraphs.map { ($0["index"] as? Int ?? -1, $0["operators"] as? [[String: Any]] ?? []) })
  }

  func testWhileConditionAndBodyAreComparedOnTheirLastRun() throws {
    let (code, report) = try jsonReport(Self.whileModel, "--reference", Self.dump("while_f32_iterate_count"))
    XCTAssertEqual(code, 0)
    XCTAssertEqual((report["operators"] as? [[String: Any]])?.map { $0["op"] as? String }, ["WHILE"])
    let subgraphs = try XCTUnwrap(report["subgraphs"] as? [[String: Any]])
    XCTAssertEqual(subgraphs.map { $0["name"] as? String }, ["while_cond", "while_body"])
    XCTAssertEqual(subgraphs.map { $0["compared_run"] as? String }, ["last", "last"])
    let nested = subgraphOperators(of: report)
    // The committed inputs make 3 iterations: the condition runs 4 times, the body 3 times.
    XCTAssertEqual(nested[1]?.map { $0["op"] as? String }, ["STRIDED_SLICE", "LESS"])
    XCTAssertEqual(nested[1]?.map { $0["runs"] as? Int }, [4, 4])
    XCTAssertEqual(nested[2]?.map { $0["op"] as? String }, ["ADD", "SIN", "MUL", "ADD"])
    XCTAssertEqual(nested[2]?.map { $0["runs"] as? Int }, [3, 3, 3, 3])
    let nestedOutputs = (nested[1] ?? []) + (nested[2] ?? [])
    for output in nestedOutputs.flatMap({ $0["outputs"] as? [[String: Any]] ?? [] }) {
      XCTAssertEqual(output["status"] as? String, "compared", "\(output)")
      XCTAssertEqual(output["within_tolerance"] as? Bool, true, "\(output)")
    }
    let table = run(["compare", Self.whileModel, "--reference", Self.dump("while_f32_iterate_count")]).output.standardOutput
    XCTAssertTrue(table.contains("subgraph 2 'while_body' (called by control flow; ran up to 3 times; each operator's last run compared)"), table)
    // The WHILE's third output (the loop's copy of the condition's slice) is one LiteRT cannot read back.
    XCTAssertTrue(table.contains("1 operators and 6 in called subgraphs, 8 output tensors compared, 1 not compared"), table)
  }

  func testKerasLSTMLoopBodyMatchesLiteRT() throws {
    let (code, report) = try jsonReport(Self.lstmModel, "--reference", Self.dump("lstm_f32_keras_while_loop"))
    XCTAssertEqual(code, 0, "\(report["first_divergent"] ?? "")")
    let body = try XCTUnwrap(subgraphOperators(of: report)[2])
    XCTAssertEqual(body.count, 26, "every operator of the time-step body ran")
    let compared = body.flatMap { $0["outputs"] as? [[String: Any]] ?? [] }.filter { $0["status"] as? String == "compared" }
    XCTAssertGreaterThanOrEqual(compared.count, 25)
    XCTAssertTrue(compared.allSatisfy { $0["within_tolerance"] as? Bool == true })
  }

  func testDivergenceInsideALoopBodyIsNamedFirst() throws {
    // The reference of the body's SIN output (tensor 6 of subgraph 2) moved by 0.5 in one value.
    let dump = try copiedDump("while_f32_iterate_count")
    let file = dump + "/2/6.npy"
    let original = try NumPyArray(contentsOfFile: file)
    var values = original.bytes
    let shifted = values.withUnsafeBytes { $0.loadUnaligned(as: Float.self) } + 0.5
    withUnsafeBytes(of: shifted.bitPattern.littleEndian) { values.replaceSubrange(0..<4, with: $0) }
    try NumPyArray(elementType: original.elementType, shape: original.shape, bytes: values).write(toFile: file)
    let (code, report) = try jsonReport(Self.whileModel, "--reference", dump)
    XCTAssertEqual(code, 1)
    let first = try XCTUnwrap(report["first_divergent"] as? [String: Any])
    XCTAssertEqual(first["subgraph"] as? Int, 2)
    XCTAssertEqual(first["operator_index"] as? Int, 1)
    XCTAssertEqual(first["op"] as? String, "SIN")
    XCTAssertEqual(first["output_tensor"] as? Int, 6)
    XCTAssertEqual(divergentOperators(in: report), [], "the WHILE's own output still matches")
    let table = run(["compare", Self.whileModel, "--reference", dump])
    XCTAssertEqual(table.code, 1)
    XCTAssertTrue(
      table.output.standardOutput.contains("first divergent operator: 1 SIN of subgraph 2 'while_body', output tensor 6"),
      table.output.standardOutput)
  }

  func testJSONKeepsItsSubgraphZeroSchemaAndListsTheOtherSubgraphs() throws {
    let (_, report) = try jsonReport(Self.int8Model, "--reference", Self.dump("unet_mini_int8"))
    let documented: Set = [
      "model", "reference", "reference_producer", "mode", "tolerance", "within_tolerance", "first_divergent", "operators",
      "subgraphs",
    ]
    XCTAssertTrue(documented.isSubset(of: report.keys), "\(report.keys.sorted())")
    XCTAssertEqual((report["subgraphs"] as? [Any])?.count, 0, "unet_mini_int8 has one subgraph")
    let operators = try XCTUnwrap(report["operators"] as? [[String: Any]])
    XCTAssertEqual(operators.map { $0["operator_index"] as? Int }, Array(0..<12))
    for entry in operators {
      XCTAssertTrue(Set(["operator_index", "op", "outputs", "inputs_not_from_reference"]).isSubset(of: entry.keys))
      for output in entry["outputs"] as? [[String: Any]] ?? [] {
        XCTAssertTrue(
          Set(["tensor", "max_abs_error", "max_error_steps", "cosine", "snr_db", "within_tolerance"]).isSubset(of: output.keys))
      }
    }
    // A dump that lists only subgraph 0 (an older or another writer): the loop's operators are listed, not compared.
    let primaryOnly = try copiedDump("while_f32_iterate_count", editingManifest: { manifest in
      manifest["subgraphs"] = (manifest["subgraphs"] as! [[String: Any]]).filter { $0["index"] as? Int == 0 }
    })
    let (code, partial) = try jsonReport(Self.whileModel, "--reference", primaryOnly)
    XCTAssertEqual(code, 0)
    let body = try XCTUnwrap(subgraphOperators(of: partial)[2]?.first?["outputs"] as? [[String: Any]])
    XCTAssertEqual(body.first?["status"] as? String, "absent_in_reference")
    XCTAssertEqual(body.first?["reason"] as? String, "the reference lists no subgraph 2")
  }

  // MARK: - Bad input

  /// A copy of dump `name` in the test directory, with `edit` applied to its manifest.
  private func copiedDump(_ name: String, editingManifest edit: (inout [String: Any]) -> Void = { _ in }) throws -> String {
    let copy = path(name + "-" + UUID().uuidString)
    try FileManager.default.copyItem(atPath: Self.dump(name), toPath: copy)
    let manifestPath = copy + "/manifest.json"
    var manifest = try XCTUnwrap(
      try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: manifestPath))) as? [String: Any])
    edit(&manifest)
    try JSONSerialization.data(withJSONObject: manifest).write(to: URL(fileURLWithPath: manifestPath))
    return copy
  }

  /// Applies `edit` to the manifest entry of tensor `index` of subgraph 0.
  private func editTensor(_ index: Int, in manifest: inout [String: Any], _ edit: (inout [String: Any]) -> Void) {
    var subgraphs = manifest["subgraphs"] as! [[String: Any]]
    var tensors = subgraphs[0]["tensors"] as! [[String: Any]]
    edit(&tensors[index])
    subgraphs[0]["tensors"] = tensors
    manifest["subgraphs"] = subgraphs
  }

  /// Asserts that comparing `model` with `dump` fails with exit code 2 and a message containing `message`.
  private func assertUnusable(_ model: String, _ dump: String, _ message: String, line: UInt = #line) {
    let result = run(["compare", model, "--reference", dump])
    XCTAssertEqual(result.code, 2, result.output.standardOutput, line: line)
    XCTAssertTrue(result.output.standardError.contains(message), result.output.standardError, line: line)
  }

  func testDumpOfAnotherModelIsRefused() throws {
    assertUnusable(Self.floatModel, Self.dump("unet_mini_int8"), "was made from another model")
    let edited = try copiedDump("unet_mini_int8") { $0["model"] = ["sha256": String(repeating: "0", count: 64)] }
    assertUnusable(Self.int8Model, edited, "was made from another model (manifest sha256 0000")
  }

  func testMissingTruncatedAndMisdescribedFilesAreRefused() throws {
    let dump = try copiedDump("unet_mini_int8")
    try FileManager.default.removeItem(atPath: dump + "/0/23.npy")
    assertUnusable(Self.int8Model, dump, "0/23.npy")

    let truncated = try copiedDump("unet_mini_float")
    let file = truncated + "/0/23.npy"
    let bytes = try Data(contentsOf: URL(fileURLWithPath: file))
    try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: file))
    assertUnusable(Self.floatModel, truncated, "cannot read \(file)")

    let retyped = try copiedDump("unet_mini_int8", editingManifest: { manifest in
      self.editTensor(23, in: &manifest) { $0["type"] = "FLOAT32" }
    })
    assertUnusable(Self.int8Model, retyped, "tensor 23 'unet_mini_1/conv2d_3_1/Relu")

    let reshaped = try copiedDump("unet_mini_int8", editingManifest: { manifest in
      self.editTensor(23, in: &manifest) { $0["shape"] = [1, 8, 16, 8] }
    })
    assertUnusable(Self.int8Model, reshaped, "but the manifest says INT8 [1, 8, 16, 8]")

    let escaping = try copiedDump("unet_mini_int8", editingManifest: { manifest in
      self.editTensor(23, in: &manifest) { $0["file"] = "../../x.npy" }
    })
    assertUnusable(Self.int8Model, escaping, "is outside the dump")

    let shortened = try copiedDump("unet_mini_int8", editingManifest: { manifest in
      var subgraphs = manifest["subgraphs"] as! [[String: Any]]
      subgraphs[0]["tensors"] = (subgraphs[0]["tensors"] as! [[String: Any]]).dropLast().map { $0 }
      manifest["subgraphs"] = subgraphs
    })
    assertUnusable(Self.int8Model, shortened, "lists 29 tensors of subgraph 0 (indices must be 0, 1, ...); the model has 30")

    let notJSON = try copiedDump("unet_mini_int8")
    try Data("{\"model\": ".utf8).write(to: URL(fileURLWithPath: notJSON + "/manifest.json"))
    assertUnusable(Self.int8Model, notJSON, "is not a reference-dump manifest")
    assertUnusable(Self.int8Model, path("nowhere"), "cannot read")
  }

  func testReferenceWithOtherShapeOrNaNIsAMismatchAndAbsentTensorsAreSkipped() throws {
    // Operator 5's output with another (consistent) shape in file and manifest.
    let reshaped = try copiedDump("unet_mini_int8", editingManifest: { manifest in
      self.editTensor(23, in: &manifest) { $0["shape"] = [1024] }
    })
    let flat = try NumPyArray(contentsOfFile: reshaped + "/0/23.npy")
    try NumPyArray(elementType: flat.elementType, shape: [1024], bytes: flat.bytes).write(toFile: reshaped + "/0/23.npy")
    var (code, report) = try jsonReport(Self.int8Model, "--reference", reshaped)
    XCTAssertEqual(code, 1)
    XCTAssertEqual(divergentOperators(in: report), [5])
    XCTAssertEqual(outputs(of: report).first { $0.operator == 5 }?.output["status"] as? String, "shape_differs")

    // A NaN in a float reference where this runtime computes a number.
    let poisoned = try copiedDump("unet_mini_float")
    let original = try NumPyArray(contentsOfFile: poisoned + "/0/23.npy")
    var values = original.bytes
    withUnsafeBytes(of: Float.nan.bitPattern.littleEndian) { values.replaceSubrange(4..<8, with: $0) }
    try NumPyArray(elementType: original.elementType, shape: original.shape, bytes: values)
      .write(toFile: poisoned + "/0/23.npy")
    (code, report) = try jsonReport(Self.floatModel, "--reference", poisoned)
    XCTAssertEqual(code, 1)
    XCTAssertEqual(divergentOperators(in: report), [5])
    let nanOutput = try XCTUnwrap(outputs(of: report).first { $0.operator == 5 }?.output)
    XCTAssertEqual(nanOutput["mismatch_count"] as? Int, 1)

    // A tensor the writer could not read is listed as absent and not compared.
    let partial = try copiedDump("unet_mini_int8", editingManifest: { manifest in
      self.editTensor(23, in: &manifest) {
        $0["file"] = NSNull()
        $0["absent_reason"] = "unreadable"
      }
    })
    (code, report) = try jsonReport(Self.int8Model, "--reference", partial)
    XCTAssertEqual(code, 0)
    let absent = try XCTUnwrap(outputs(of: report).first { $0.operator == 5 }?.output)
    XCTAssertEqual(absent["status"] as? String, "absent_in_reference")
    XCTAssertTrue(absent["within_tolerance"] is NSNull)
    // --isolate then runs operator 6 on this runtime's own value of tensor 23, and says so.
    (code, report) = try jsonReport(Self.int8Model, "--reference", partial, "--isolate")
    XCTAssertEqual(code, 0)
    let operators = try XCTUnwrap(report["operators"] as? [[String: Any]])
    XCTAssertEqual(operators[6]["inputs_not_from_reference"] as? [Int], [23])
  }

  func testReferenceOptionsAreCheckedAgainstEachOther() {
    XCTAssertEqual(run(["compare", Self.int8Model, "--reference", Self.dump("unet_mini_int8"), "--seed", "1"]).code, 64)
    XCTAssertEqual(run(["compare", Self.int8Model, "--isolate", "--expected", "x.npy"]).code, 64)
  }
}
