import Foundation
import TFLiteFormat
import XCTest

@testable import TFLiteRuntime

/// What the runtime says it cannot run (`OperatorSupport.unsupportedOperators(in:)`, behind
/// `tflite check`) and what loading does: the 2026 types and quantization schemes of
/// `TestModels/format3d` are refused naming the node, operand, tensor and reason; external
/// weights run; subgraphs only signatures reach are checked; and on every committed model the
/// check's list is empty exactly when loading and using every signature work.
final class ModelSupportTests: XCTestCase {
  private func model(_ file: String) throws -> TFLiteModel {
    try TFLiteModel(contentsOfFile: TestModelManifest.directory.appendingPathComponent(file).path)
  }

  /// The list loading `model` throws, or, when it loads, what the first use of each signature
  /// throws (in subgraph and node order); empty when all of that works.
  private func unsupportedWhenLoadingAndUsingSignatures(_ model: TFLiteModel) throws -> [UnsupportedOperator] {
    let runner: ModelRunner
    do {
      runner = try ModelRunner(model: model)
    } catch RuntimeError.unsupportedOperators(let list) {
      return list
    }
    var found: Set<UnsupportedOperator> = []
    for signature in runner.signatures {
      do {
        _ = try runner.subgraph(at: signature.subgraphIndex)
      } catch RuntimeError.unsupportedOperators(let list) {
        found.formUnion(list)
      }
    }
    return found.sorted { ($0.subgraph, $0.node) < ($1.subgraph, $1.node) }
  }

  func testExternalWeightsRunAndGiveLiteRTsOutput() throws {
    let executor = try ModelRunner(model: try model("format3d/external_fc.tflite")).primary
    try executor.allocateTensors()
    let input = try TestModelManifest.array("format3d/external_fc.input_0.npy")
    input.bytes.withUnsafeBytes { executor.inputs[0].data!.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
    try executor.invoke()
    let output = Array(UnsafeBufferPointer(start: executor.outputs[0].pointer(as: Float.self), count: 3))
    // LiteRT's CompiledModel (which loads external buffers) gave [0.25, -1, 3.25]; the generator
    // checked it equals numpy's x @ W^T + b, saved here.
    XCTAssertEqual(output, try TestModelManifest.array("format3d/external_fc.expected_0.npy").floatValues())
    XCTAssertEqual(output, [0.25, -1, 3.25])
  }

  func testTypesWithoutKernelsAreRefusedNamingNodeTensorAndType() throws {
    let list = try OperatorSupport.unsupportedOperators(in: try model("format3d/types_2026.tflite"))
    XCTAssertEqual(list.map(\.node), [0, 1, 2, 3])
    XCTAssertEqual(Set(list.map(\.opName)), ["DEQUANTIZE"])
    for (entry, (tensor, name)) in zip(list, [(0, "INT2"), (2, "UINT4"), (4, "FLOAT8_E4M3FN"), (6, "FLOAT8_E5M2")]) {
      XCTAssertTrue(entry.reason.hasPrefix("input 0 (tensor \(tensor) '\(name.lowercased())'): type \(name),"), entry.reason)
    }
    XCTAssertEqual(try unsupportedWhenLoadingAndUsingSignatures(try model("format3d/types_2026.tflite")), list)
  }

  func testBlockwiseAndMultiAxisQuantizationAreRefusedNamingTheScheme() throws {
    let list = try OperatorSupport.unsupportedOperators(in: try model("format3d/quantization_2026.tflite"))
    XCTAssertEqual(list.map(\.opName), ["FULLY_CONNECTED", "FULLY_CONNECTED"])
    XCTAssertEqual(
      list[0].reason,
      "input 1 (tensor 1 'blockwise_weights'): blockwise quantization (block size 4, block shape [1, 4], "
        + "scales in tensor 2, zero points none), which no kernel of this runtime applies")
    XCTAssertEqual(
      list[1].reason,
      "input 1 (tensor 4 'multi_axis_weights'): multi-axis quantization (axes [0, 1], block size 0, "
        + "scales in tensor 2, zero points none), which no kernel of this runtime applies")
    XCTAssertEqual(
      list[0].description,
      "node 0: FULLY_CONNECTED v1: input 1 (tensor 1 'blockwise_weights'): blockwise quantization (block size 4, "
        + "block shape [1, 4], scales in tensor 2, zero points none), which no kernel of this runtime applies")
  }

  func testCustomOperatorWithoutKernelIsListed() throws {
    let list = try OperatorSupport.unsupportedOperators(in: try model("format3d/custom_decode.tflite"))
    XCTAssertEqual(list.map(\.opName), ["DECODE"])
    XCTAssertEqual(list.map(\.reason), ["no kernel for this operator"])
  }

  func testSubgraphsReachedOnlyThroughSignaturesAreChecked() throws {
    let loaded = try model("format3d/signature_subgraph.tflite")
    let list = try OperatorSupport.unsupportedOperators(in: loaded)
    XCTAssertEqual(list.map(\.description), [
      "node 0 (subgraph 1): DEQUANTIZE v1: input 0 (tensor 0 'uint4'): type UINT4, which no kernel of this runtime reads or writes"
    ])
    let runner = try ModelRunner(model: loaded)
    XCTAssertThrowsError(try runner.subgraph(at: 1)) { error in
      guard case RuntimeError.unsupportedOperators(let thrown) = error else { return XCTFail("\(error)") }
      XCTAssertEqual(thrown, list)
    }
  }

  func testUnusableSubgraphInputsAndOutputsNoNodeTouchesAreListed() throws {
    let list = try OperatorSupport.unsupportedOperators(in: try model("format3d/boundary_uint4.tflite"))
    let reason = "tensor 0 'packed': type UINT4, which no kernel of this runtime reads or writes"
    XCTAssertEqual(list.map(\.description), ["subgraph input 0: \(reason)", "subgraph output 0: \(reason)"])
    XCTAssertEqual(list.map(\.node), [-1, -1])
  }

  /// Property over every `.tflite` under TestModels: a model that reads gets an empty list exactly
  /// when it loads and every signature can be used, and otherwise the list loading (or, when it
  /// loads, the signatures' first use) throws; every model the manifest lists (the ones the
  /// conformance suites run) gets an empty list.
  func testCheckAgreesWithLoadingOnEveryTestModel() throws {
    let root = TestModelManifest.directory.resolvingSymlinksInPath()
    let files = ((FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)?.allObjects as? [URL]) ?? [])
      .filter { $0.pathExtension == "tflite" }.map { String($0.resolvingSymlinksInPath().path.dropFirst(root.path.count + 1)) }
    XCTAssertGreaterThan(files.count, 1000)
    var refused: [String] = []
    var unreadable = 0
    for file in files.sorted() {
      guard let loaded = try? model(file) else {
        unreadable += 1
        continue
      }
      let checked = try OperatorSupport.unsupportedOperators(in: loaded)
      let whenUsed = try unsupportedWhenLoadingAndUsingSignatures(loaded)
      // A model refused at load may have more to refuse in signature subgraphs, which check adds.
      XCTAssertTrue(Set(whenUsed).isSubset(of: checked), file)
      XCTAssertEqual(checked.isEmpty, whenUsed.isEmpty, file)
      if (try? ModelRunner(model: loaded)) != nil { XCTAssertEqual(checked, whenUsed, file) }
      if !checked.isEmpty { refused.append(file) }
    }
    let suiteModels = Set(try TestModelManifest.load().models.map(\.file))
    XCTAssertEqual(refused.filter(suiteModels.contains), [], "models the suites run that check refuses")
    XCTAssertTrue(
      Set([
        "format3d/types_2026.tflite", "format3d/quantization_2026.tflite", "format3d/custom_decode.tflite",
        "format3d/signature_subgraph.tflite", "format3d/boundary_uint4.tflite",
      ])
        .isSubset(of: refused), "\(refused)")
    XCTAssertEqual(unreadable, 9, "the bad-input fixtures of format3d")
  }
}
