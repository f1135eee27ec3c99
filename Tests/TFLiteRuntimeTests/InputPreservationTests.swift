import TFLiteFormat
import XCTest

@testable import TFLiteRuntime

/// `invoke()` leaves the graph inputs as the caller wrote them, as LiteRT's planner does: copy the
/// inputs once, invoke again and again, and every invoke reads the same inputs and gives the same
/// outputs. The arena planner must therefore never hand an input's bytes to another block, in the
/// primary subgraph or in any subgraph a signature or control flow runs.
final class InputPreservationTests: XCTestCase {
  /// The raw bytes of `tensor`'s data (empty when it has no memory).
  private func bytes(of tensor: RuntimeTensor) -> [UInt8] {
    guard let data = tensor.data else { return [] }
    return [UInt8](UnsafeRawBufferPointer(start: data, count: tensor.byteCount))
  }

  /// True when the model keeps state from one invoke to the next (resource variables), so that
  /// repeated invokes rightly give other outputs.
  private func keepsState(_ runner: ModelRunner) -> Bool {
    runner.model.model.subgraphs.contains { subgraph in
      subgraph.tensors.contains(where: \.isVariable)
        || subgraph.operators.contains { operation in
          let index = Int(operation.opcodeIndex)
          return index < runner.model.model.operatorCodes.count
            && runner.model.model.operatorCodes[index].resolvedBuiltinCode == .varHandle
        }
    }
  }

  /// Copies `entry`'s inputs once, invokes five times and checks after every invoke that the
  /// inputs hold the copied bytes and, for models without state, that the outputs equal the first
  /// invoke's bit for bit and LiteRT's within the manifest's tolerance.
  private func checkRepeatedInvokes(of entry: TestModelManifest.Entry) throws {
    let model = try TFLiteModel(contentsOfFile: TestModelManifest.directory.appendingPathComponent(entry.file).path)
    let runner = try ModelRunner(model: model)
    let executor = runner.primary
    let arrays = try entry.inputs.map { try TestModelManifest.array($0.file) }
    XCTAssertEqual(arrays.count, executor.inputs.count, entry.name)
    for (index, array) in arrays.enumerated() where executor.inputs[index].shape != array.shape {
      try executor.resizeInput(at: index, to: array.shape)
    }
    try executor.allocateTensors()
    for (tensor, array) in zip(executor.inputs, arrays) {
      let data = try XCTUnwrap(tensor.data, entry.name)
      XCTAssertEqual(tensor.byteCount, array.bytes.count, entry.name)
      array.bytes.withUnsafeBytes { data.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
    }
    let stateful = keepsState(runner)
    var firstOutputs: [[UInt8]]?
    for run in 1...5 {
      try executor.invoke()
      for (index, (tensor, array)) in zip(executor.inputs, arrays).enumerated() {
        let now = bytes(of: tensor)
        let changed = zip(now, array.bytes).filter { $0 != $1 }.count
        XCTAssertEqual(changed, 0, "\(entry.name) invoke \(run): \(changed) of \(now.count) bytes of input \(index) changed")
      }
      guard !stateful else { continue }
      let outputs = executor.outputs.map(bytes(of:))
      if let firstOutputs {
        XCTAssertTrue(outputs == firstOutputs, "\(entry.name) invoke \(run) gave other outputs than invoke 1")
      } else {
        firstOutputs = outputs
      }
    }
    guard !stateful else { return }
    var outcome = ConformanceOutcome(entry: entry)
    for (index, file) in entry.outputs.enumerated() {
      try Conformance.compare(
        executor.outputs[index], try TestModelManifest.array(file.file), tolerance: entry.tolerance,
        outcome: &outcome, label: "output \(index)")
    }
    XCTAssertEqual(outcome.mismatchCount, 0, "\(entry.name) after five invokes: \(outcome.firstMismatch ?? "")")
  }

  /// Every network of TestModels (float, int8, uint8, hybrid, float16 weights; control flow,
  /// signatures, variables, value-dependent shapes) copied once and invoked five times. The two
  /// MediaPipe networks take seconds per invoke in debug builds: `Scripts/soak.sh` runs them.
  func testEveryNetworkKeepsItsInputsAcrossRepeatedInvokes() throws {
    let entries = try TestModelManifest.load().models.filter { $0.kind == "network" && !$0.file.hasPrefix("mediapipe/") }
    XCTAssertGreaterThanOrEqual(entries.count, 28)
    for entry in entries { try checkRepeatedInvokes(of: entry) }
  }

  /// Asserts that no block of `executor`'s plan shares a byte with one of its inputs.
  private func assertInputsHaveTheirOwnBytes(_ executor: SubgraphExecutor, _ label: String) {
    let inputIndices = Set(executor.inputs.map(\.index))
    let placements = executor.memoryPlan.placements
    for input in placements {
      guard case .tensor(let index) = input.request.owner, inputIndices.contains(index) else { continue }
      XCTAssertEqual(input.request.firstUse, -1, "\(label) input T\(index)")
      XCTAssertEqual(input.request.lastUse, executor.nodes.count, "\(label) input T\(index)")
      for other in placements where other.request.owner != input.request.owner {
        let disjoint =
          other.offset + other.request.byteCount <= input.offset || input.offset + input.request.byteCount <= other.offset
        XCTAssertTrue(disjoint, "\(label): \(other.request.owner) shares bytes with input T\(index)")
      }
    }
  }

  /// The plans of every subgraph that runs (primary, signature and control-flow subgraphs alike)
  /// keep their inputs' bytes to themselves, as LiteRT's planner keeps every subgraph's inputs.
  func testEverySubgraphPlanKeepsItsInputsToThemselves() throws {
    let names = [
      "mobilenet_mini_float", "efficientnet_mini_int8", "unet_mini_float", "while_f32_iterate_count",
      "if_f32_true_branch", "seq_keras_f32_stacked_gru_lstm", "signatures_f32_add_and_dense_relu",
    ]
    let entries = try TestModelManifest.load().models.filter { names.contains($0.name) }
    XCTAssertEqual(entries.count, names.count)
    var checkedSubgraphs = 0
    for entry in entries {
      let model = try TFLiteModel(contentsOfFile: TestModelManifest.directory.appendingPathComponent(entry.file).path)
      let runner = try ModelRunner(model: model)
      try runner.primary.allocateTensors()
      for index in model.model.subgraphs.indices {
        let executor = try runner.subgraph(at: index)
        if !executor.isAllocated { try executor.allocateTensors() }
        assertInputsHaveTheirOwnBytes(executor, "\(entry.name) subgraph \(index)")
        checkedSubgraphs += 1
      }
    }
    // The control-flow models add their condition, body and branch subgraphs.
    XCTAssertGreaterThanOrEqual(checkedSubgraphs, names.count + 5)
  }

  /// A signature's subgraph (not the primary one) run through the runtime: inputs copied once stay.
  func testSignatureSubgraphKeepsItsInputs() throws {
    let entry = try XCTUnwrap(try TestModelManifest.load().models.first { $0.name == "signatures_f32_add_and_dense_relu" })
    let model = try TFLiteModel(contentsOfFile: TestModelManifest.directory.appendingPathComponent(entry.file).path)
    let runner = try ModelRunner(model: model)
    let signature = try XCTUnwrap(runner.signatures.first { $0.key == "dense_relu" })
    let executor = try runner.subgraph(at: signature.subgraphIndex)
    try executor.allocateTensors()
    let input = try TestModelManifest.array("graphs/signatures_f32_add_and_dense_relu.dense_relu.input_0.npy")
    let expected = try TestModelManifest.array("graphs/signatures_f32_add_and_dense_relu.dense_relu.output_0.npy")
    let tensor = executor.tensors[signature.inputs[0].tensorIndex]
    input.bytes.withUnsafeBytes { tensor.data!.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
    let output = executor.tensors[signature.outputs[0].tensorIndex]
    for _ in 0..<5 {
      try executor.invoke()
      XCTAssertEqual(bytes(of: tensor), input.bytes)
      var outcome = ConformanceOutcome(entry: entry)
      try Conformance.compare(output, expected, tolerance: entry.tolerance, outcome: &outcome, label: "features")
      XCTAssertEqual(outcome.mismatchCount, 0, outcome.firstMismatch ?? "")
    }
  }
}
