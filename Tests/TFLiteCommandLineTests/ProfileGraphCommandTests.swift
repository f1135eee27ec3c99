import Foundation
import TFLiteCommandLine
import TFLiteFormat
import TFLiteTestSupport
import XCTest

/// `tflite profile` (per-operator times, work, trace, Model Explorer node data) and `tflite graph`
/// (SVG, DOT and HTML pictures, overlays, escaping of hostile names).
final class ProfileGraphCommandTests: CommandTestCase {
  private let testModels = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("TestModels")

  private func model(_ name: String) -> String { testModels.appendingPathComponent(name).path }

  /// `--input` options giving the WHILE model its committed inputs (3 iterations).
  private var loopInputs: [String] {
    ["--input", model("graphs/while_f32_iterate_count.input_0.npy"), "--input", model("graphs/while_f32_iterate_count.input_1.npy")]
  }

  /// Runs `tflite` with an argument list.
  private func run(_ arguments: [String]) -> (code: Int32, output: CapturedOutput) {
    let output = CapturedOutput()
    return (CommandLineTool.main(arguments: arguments, output: output), output)
  }

  /// Parses `text` as a JSON object.
  private func object(_ text: String, file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
    try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], file: file, line: line)
  }

  /// `profile --json` operators by operator index (subgraph 0).
  private func profiledOperators(_ modelName: String) throws -> [Int: [String: Any]] {
    let (code, output) = run("profile", model(modelName), "--runs", "2", "--json")
    XCTAssertEqual(code, 0, output.standardError)
    let operators = try XCTUnwrap(try object(output.standardOutput)["operators"] as? [[String: Any]])
    return Dictionary(uniqueKeysWithValues: operators.filter { $0["subgraph"] as? Int == 0 }.map { ($0["operator_index"] as! Int, $0) })
  }

  func testProfileCountsTheWorkOfWeightedOperatorsFromTheirShapes() throws {
    // Expected values: 2 operations per multiply-accumulate, from the shapes `tflite inspect` shows.
    let mobileNet = try profiledOperators("networks/mobilenet_mini_float.tflite")
    // CONV_2D out [1,16,16,16], filter [16,3,3,3]: 2·4096·27.
    XCTAssertEqual(mobileNet[0]?["operations"] as? Int, 221_184)
    XCTAssertEqual(mobileNet[0]?["throughput_unit"] as? String, "GFLOP/s")
    // DEPTHWISE_CONV_2D out [1,16,16,16], filter [1,3,3,16]: 2·4096·9.
    XCTAssertEqual(mobileNet[1]?["operations"] as? Int, 73_728)
    // FULLY_CONNECTED out [1,10], weights [10,64]: 2·10·64.
    XCTAssertEqual(mobileNet[20]?["operations"] as? Int, 1_280)
    // ADD has no arithmetic to count.
    XCTAssertTrue(mobileNet[10]?["operations"] is NSNull)
    // Node 4, the PAD, is folded into the DEPTHWISE_CONV_2D after it and does not run.
    XCTAssertNil(mobileNet[4])
    XCTAssertEqual(mobileNet.count, 21, "every other operator of the network (0…21) runs and is listed")
    // BATCH_MATMUL [2,3,4]·[2,4,5] → [2,3,5]: 2·30·4.
    XCTAssertEqual(try profiledOperators("ops/batch_matmul_f32_3d.tflite")[0]?["operations"] as? Int, 240)
    // TRANSPOSE_CONV input [1,4,4,3], filter [4,3,3,3]: 2·48·(4·3·3).
    XCTAssertEqual(try profiledOperators("ops/transpose_conv_f32_s2_same_bias.tflite")[0]?["operations"] as? Int, 3_456)
    let int8 = try profiledOperators("networks/mobilenet_mini_int8.tflite")
    XCTAssertEqual(int8.values.first { $0["op"] as? String == "CONV_2D" }?["throughput_unit"] as? String, "GOP/s")
  }

  func testProfileTableSharesAndMemory() throws {
    let (code, output) = run("profile", model("networks/mobilenet_mini_float.tflite"), "--runs", "40", "--json")
    XCTAssertEqual(code, 0, output.standardError)
    let report = try object(output.standardOutput)
    XCTAssertEqual(report["format"] as? String, "tflite-profile")
    let operators = try XCTUnwrap(report["operators"] as? [[String: Any]])
    let shares = operators.compactMap { $0["share_percent"] as? Double }
    XCTAssertEqual(shares.count, operators.count)
    // Node times are measured inside the invokes they belong to. On this network of tiny operators
    // each profiled invoke times every k-th node in rotation, so the nodes' medians come from
    // different invokes and their sum may pass the invoke's median by timing noise (on a loaded
    // machine up to several percent), never by its largest node (the first CONV_2D, ≈ 16 %) counted twice.
    XCTAssertLessThanOrEqual(shares.reduce(0, +), 110)
    XCTAssertGreaterThan(shares.reduce(0, +), 50, "the nodes account for most of the invoke")
    XCTAssertEqual(report["arena_bytes"] as? Int, 59_072, "the arena `tflite inspect --plan` reports (README table)")
    XCTAssertEqual(operators.first?["scratch_bytes"] as? Int ?? 0 > 0, true, "the first CONV_2D's im2col scratch")
    XCTAssertNotNil(report["overhead_percent"] as? Double)
    let text = run("profile", model("networks/mobilenet_mini_float.tflite"), "--runs", "1").output.standardOutput
    XCTAssertTrue(text.contains("DEPTHWISE_CONV_2D"), text)
    XCTAssertTrue(text.contains("GFLOP/s"), text)
  }

  func testChromeTraceNestsLoopBodiesInsideTheirWhile() throws {
    let trace = path("trace.json")
    let (code, output) = run(["profile", model("graphs/while_f32_iterate_count.tflite"), "--runs", "2", "--chrome-trace", trace] + loopInputs)
    XCTAssertEqual(code, 0, output.standardError)
    let events = try XCTUnwrap(try object(String(contentsOfFile: trace, encoding: .utf8))["traceEvents"] as? [[String: Any]])
    let complete = events.filter { $0["ph"] as? String == "X" }
    let loop = try XCTUnwrap(complete.first { $0["name"] as? String == "WHILE" })
    let start = try XCTUnwrap(loop["ts"] as? Double), end = start + (try XCTUnwrap(loop["dur"] as? Double))
    let inner = complete.filter { ($0["args"] as? [String: Any])?["subgraph"] as? Int != 0 }
    // Three iterations: the body's 4 operators 3 times, the condition's 2 operators 4 times.
    XCTAssertEqual(inner.count, 4 * 3 + 2 * 4)
    for event in inner {
      let eventStart = try XCTUnwrap(event["ts"] as? Double), duration = try XCTUnwrap(event["dur"] as? Double)
      XCTAssertTrue(eventStart >= start && eventStart + duration <= end + 0.001, "\(event) lies inside the WHILE")
    }
  }

  func testNodeDataHasTheStructureModelExplorerAccepted() throws {
    // The committed example was written by `tflite profile --node-data` and accepted by
    // Scripts/check_model_explorer_node_data.py (Model Explorer's own classes and tflite adapter).
    let example = try object(String(contentsOfFile: model("explorer/while_f32_iterate_count.node_data.json"), encoding: .utf8))
    let written = path("node_data.json")
    XCTAssertEqual(run(["profile", model("graphs/while_f32_iterate_count.tflite"), "--runs", "1", "--node-data", written] + loopInputs).code, 0)
    let ours = try object(String(contentsOfFile: written, encoding: .utf8))
    XCTAssertEqual(Set(ours.keys), ["main", "while_cond", "while_body"], "graph ids are the subgraph names")
    XCTAssertEqual(Set(ours.keys), Set(example.keys))
    for (graphID, value) in ours {
      let graph = try XCTUnwrap(value as? [String: Any]), expected = try XCTUnwrap(example[graphID] as? [String: Any])
      XCTAssertEqual(Set(graph.keys), Set(expected.keys), graphID)
      let results = try XCTUnwrap(graph["results"] as? [String: [String: Any]])
      let expectedResults = try XCTUnwrap(expected["results"] as? [String: [String: Any]])
      XCTAssertEqual(Set(results.keys), Set(expectedResults.keys), "node ids of \(graphID)")
      XCTAssertTrue(results.values.allSatisfy { $0.keys.sorted() == ["value"] && $0["value"] is NSNumber })
      XCTAssertEqual((graph["gradient"] as? [[String: Any]])?.compactMap { $0["stop"] as? Double }, [0, 0.5, 1])
    }
    XCTAssertEqual(Set((ours["while_body"] as? [String: Any])?["results"].flatMap { ($0 as? [String: Any])?.keys } ?? [:].keys), ["0", "1", "2", "3"])
  }

  /// A model whose names and custom code are markup: two custom operators (the graph command
  /// needs no kernel for them).
  private static let hostile = TestModel(subgraphs: [
    TestModel.Subgraph(
      tensors: [
        .init(name: "<script>alert('input')</script>", type: 0, shape: [1, 2]),
        .init(name: "\"><img src=x onerror=alert(1)>", type: 0, shape: [1, 2]),
        .init(name: "out&</svg><script>", type: 0, shape: [1, 2]),
      ],
      inputs: [0], outputs: [2],
      nodes: [
        .init(customCode: "<script>evil()</script>", inputs: [0], outputs: [1]),
        .init(customCode: "a\"b\\c\nd", inputs: [1], outputs: [2]),
      ])
  ])

  func testGraphEscapesEveryName() throws {
    let file = try write(Self.hostile, as: "hostile.tflite")
    for format in ["html", "svg"] {
      let (code, output) = run("graph", file, "--format", format)
      XCTAssertEqual(code, 0, output.standardError)
      let page = output.standardOutput
      XCTAssertNil(page.range(of: "<script", options: .caseInsensitive), "\(format): a name became markup")
      XCTAssertNil(page.range(of: "<img", options: .caseInsensitive))
      XCTAssertFalse(page.contains("</svg><"), "an early </svg> from a name")
      XCTAssertTrue(page.contains("&lt;script&gt;evil()&lt;/script&gt;"), "the custom code is shown, escaped")
      XCTAssertTrue(page.contains("&quot;&gt;&lt;img src=x onerror=alert(1)&gt;"))
      XCTAssertEqual(page.components(separatedBy: "class=\"node\"").count - 1, 4, "2 operators, 1 input, 1 output")
    }
    let dot = run("graph", file, "--format", "dot").output.standardOutput
    XCTAssertTrue(dot.contains(#"#1 a\"b\\c\nd"#), dot)
  }

  func testGraphDrawsEveryNodeOfAMediaPipeModelDeterministically() throws {
    let file = model("mediapipe/mediapipe_face_detection_short_range.tflite")
    let subgraph = try TFLiteModel(contentsOfFile: file).model.subgraphs[0]
    let first = run("graph", file, "--format", "html").output.standardOutput
    XCTAssertEqual(
      first.components(separatedBy: "class=\"node\"").count - 1,
      subgraph.operators.count + subgraph.inputs.count + subgraph.outputs.count)
    XCTAssertEqual(first.components(separatedBy: "class=\"edge\"").count - 1 > subgraph.operators.count, true)
    XCTAssertEqual(run("graph", file, "--format", "html").output.standardOutput, first, "the same bytes every time")
    XCTAssertTrue(first.contains("padding=SAME, stride_w=2, stride_h=2"), "CONV_2D options are shown")
    XCTAssertTrue(first.contains("in0: FLOAT16 [24, 5, 5, 3] const"), "constants are folded into the box")
  }

  func testGraphLinksControlFlowToItsSubgraphs() throws {
    let page = run("graph", model("graphs/while_f32_iterate_count.tflite"), "--format", "html").output.standardOutput
    for subgraph in 0..<3 { XCTAssertTrue(page.contains("<section id=\"subgraph-\(subgraph)\">")) }
    XCTAssertTrue(page.contains("<a href=\"#subgraph-1\">"), "the WHILE box links to its condition")
    XCTAssertTrue(page.contains("body → subgraph 2 while_body"))
    let body = try TFLiteModel(contentsOfFile: model("graphs/while_f32_iterate_count.tflite")).model.subgraphs[2]
    let svg = run("graph", model("graphs/while_f32_iterate_count.tflite"), "--format", "svg", "--subgraph", "2").output.standardOutput
    XCTAssertTrue(svg.hasPrefix("<?xml"))
    XCTAssertEqual(
      svg.components(separatedBy: "class=\"node\"").count - 1, body.operators.count + body.inputs.count + body.outputs.count,
      "every operator, input and output of the body")
    XCTAssertEqual(run("graph", model("graphs/while_f32_iterate_count.tflite"), "--subgraph", "9").code, 1)
    XCTAssertEqual(run("graph", model("graphs/while_f32_iterate_count.tflite"), "--format", "png").code, 64)
  }

  func testGraphOverlayOfACompareReport() throws {
    // Hand-written in the schema of `tflite compare --reference --json`.
    let report = path("compare.json")
    try #"""
      {"first_divergent": {"operator_index": 1, "op": "DEPTHWISE_CONV_2D", "output_tensor": 38},
       "operators": [
         {"operator_index": 0, "op": "CONV_2D", "outputs": [{"tensor": 37, "max_abs_error": 1e-6, "max_error_steps": null, "cosine": 1, "snr_db": 120, "within_tolerance": true}]},
         {"operator_index": 1, "op": "DEPTHWISE_CONV_2D", "outputs": [{"tensor": 38, "max_abs_error": 0.5, "max_error_steps": null, "cosine": 0.9, "snr_db": 10, "within_tolerance": false}]},
         {"operator_index": 2, "op": "CONV_2D", "outputs": [{"tensor": 39, "max_abs_error": 0.25, "max_error_steps": null, "cosine": 0.9, "snr_db": 12, "within_tolerance": false}]}
       ]}
      """#.write(toFile: report, atomically: true, encoding: .utf8)
    let (code, output) = run("graph", model("networks/mobilenet_mini_float.tflite"), "--overlay", report)
    XCTAssertEqual(code, 0, output.standardError)
    func box(_ op: Int) -> Substring? {
      let svg = output.standardOutput
      guard let start = svg.range(of: "id=\"sg0-op-\(op)\"") else { return nil }
      return svg[start.lowerBound...].split(separator: "</g>", maxSplits: 1).first
    }
    XCTAssertTrue(box(0)?.contains("fill=\"#a5d6a7\"") == true && box(0)?.contains("max |Δ| 1e-06") == true, "\(box(0) ?? "")")
    XCTAssertTrue(box(1)?.contains("fill=\"#e53935\"") == true && box(1)?.contains("FIRST OUT: max |Δ| 0.5") == true, "\(box(1) ?? "")")
    XCTAssertTrue(box(2)?.contains("fill=\"#ef9a9a\"") == true, "\(box(2) ?? "")")
    XCTAssertTrue(box(3)?.contains("fill=\"#e3f2fd\"") == true, "operators the report does not cover keep the plain colour")
    try "{\"nothing\": 1}".write(toFile: report, atomically: true, encoding: .utf8)
    let refused = run("graph", model("networks/mobilenet_mini_float.tflite"), "--overlay", report)
    XCTAssertEqual(refused.code, 1)
    XCTAssertTrue(refused.output.standardError.contains("no \"operators\" list"), refused.output.standardError)
  }
}
