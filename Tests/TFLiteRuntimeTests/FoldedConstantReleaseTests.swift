// Freeing folded and densified constants once every reader copied them (issue #12, peak memory):
// float16 weights that DEQUANTIZE folds to float32 and sparse weights densified at load must not
// stay beside the packed copy, the outputs must not change, and a second allocation must fold or
// rebuild them again.

import Foundation
import TFLiteFormat
import XCTest

@testable import TFLiteRuntime

final class FoldedConstantReleaseTests: XCTestCase {
  /// MobileNet with float16 weights (DEQUANTIZE → CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED) and a
  /// CONV_2D whose sparse weights are densified at load and copied by DENSIFY.
  private let networkNames = ["mobilenet_mini_fp16", "densify_f32_conv2d_random_sparse"]

  private func entry(_ name: String) throws -> TestModelManifest.Entry {
    try XCTUnwrap(try TestModelManifest.load().models.first { $0.name == name }, "\(name) is missing from the manifest")
  }

  /// Runs `entry` on its committed inputs, freeing copied constants or keeping them.
  private func run(_ entry: TestModelManifest.Entry, releases: Bool, threadCount: Int = 1) throws -> ModelRunner {
    var options = RunnerOptions(threadCount: threadCount)
    options.releasesCopiedConstants = releases
    return try Conformance.invoke(entry, options: options)
  }

  private func outputBytes(_ executor: SubgraphExecutor) -> [[UInt8]] {
    executor.outputs.map { tensor in
      tensor.data.map { Array(UnsafeRawBufferPointer(start: $0, count: tensor.byteCount)) } ?? []
    }
  }

  /// Copies `source`'s input values into `executor`'s inputs (same shapes) and runs it.
  private func invoke(_ executor: SubgraphExecutor, withInputsOf source: SubgraphExecutor) throws {
    for (tensor, input) in zip(executor.inputs, source.inputs) {
      XCTAssertEqual(tensor.byteCount, input.byteCount)
      try XCTUnwrap(tensor.data).copyMemory(from: try XCTUnwrap(input.data), byteCount: tensor.byteCount)
    }
    try executor.invoke()
  }

  /// The output bytes are the same with and without freeing, on one and two threads, and after a
  /// second `allocateTensors()` that folds and rebuilds what was freed.
  func testOutputsAreIdenticalWithAndWithoutFreeing() throws {
    for name in networkNames {
      let entry = try entry(name)
      for threadCount in [1, 2] {
        let kept = try run(entry, releases: false, threadCount: threadCount).primary
        let freed = try run(entry, releases: true, threadCount: threadCount).primary
        let expected = outputBytes(kept)
        XCTAssertEqual(outputBytes(freed), expected, "\(name), \(threadCount) threads")
        let firstRelease = freed.releasedConstantByteCount
        try freed.allocateTensors()
        try invoke(freed, withInputsOf: kept)
        XCTAssertEqual(outputBytes(freed), expected, "\(name), \(threadCount) threads, allocated again")
        XCTAssertEqual(freed.releasedConstantByteCount, firstRelease, "\(name): the second allocation frees as much")
      }
    }
  }

  /// A batch of two after freeing gives the bytes the kept constants give on the same batch.
  func testResizedInputAfterFreeing() throws {
    for name in networkNames {
      let entry = try entry(name)
      let runners = [try run(entry, releases: false), try run(entry, releases: true)]
      var outputs: [[[UInt8]]] = []
      for runner in runners {
        let executor = runner.primary
        let input = executor.inputs[0]
        let image = Array(UnsafeRawBufferPointer(start: try XCTUnwrap(input.data), count: input.byteCount))
        let singleOutputBytes = executor.outputs[0].byteCount
        try executor.resizeInput(at: 0, to: [2] + input.shape.dropFirst())
        try executor.allocateTensors()
        try XCTUnwrap(input.data).copyMemory(from: image + image, byteCount: 2 * image.count)
        try executor.invoke()
        XCTAssertEqual(executor.outputs[0].byteCount, 2 * singleOutputBytes, name)
        outputs.append(outputBytes(executor))
      }
      XCTAssertEqual(outputs[1], outputs[0], name)
    }
  }

  /// The float32 weights DEQUANTIZE folds for CONV_2D and FULLY_CONNECTED (which pack them) and
  /// DEPTHWISE_CONV_2D (which copies them) are freed and counted; the byte counts add up.
  func testFoldedWeightsCopiedByTheirReadersAreFreed() throws {
    let entry = try entry("mobilenet_mini_fp16")
    let kept = try run(entry, releases: false).primary
    let freed = try run(entry, releases: true).primary
    XCTAssertEqual(kept.releasedConstantByteCount, 0)
    var packedWeightBytes = 0
    for (node, keptNode) in zip(freed.nodes, kept.nodes) {
      guard let weights = node.inputs.count > 1 ? node.inputs[1] : nil, weights.type == .float32,
        let keptWeights = keptNode.inputs[1], !weights.isModelConstant
      else { continue }
      switch node.opName {
      case "CONV_2D", "FULLY_CONNECTED", "DEPTHWISE_CONV_2D":
        XCTAssertTrue(keptWeights.isConstant && keptWeights.data != nil, "\(node.opName) weights are folded")
        XCTAssertNil(weights.data, "\(node.opName) copied \(weights.summary): its folded values must be freed")
        packedWeightBytes += weights.byteCount
      default:
        continue
      }
    }
    XCTAssertGreaterThan(packedWeightBytes, 0, "the network has folded float32 weights")
    // The float16 sources are model constants (file bytes): only folded outputs were freed.
    XCTAssertGreaterThanOrEqual(freed.releasedConstantByteCount, packedWeightBytes)
    XCTAssertEqual(freed.heldConstantByteCount + freed.releasedConstantByteCount, kept.heldConstantByteCount)
  }

  /// A densified sparse constant is freed once DENSIFY (folded) copied it, and rebuilt with the
  /// same bytes; DENSIFY's output is freed once CONV_2D packed it.
  func testDensifiedConstantIsFreedAndRebuilt() throws {
    let entry = try entry("densify_f32_conv2d_random_sparse")
    let kept = try run(entry, releases: false).primary
    let freed = try run(entry, releases: true).primary
    let densifyPosition = try XCTUnwrap(freed.nodes.firstIndex { $0.opName == "DENSIFY" })
    let sparse = try XCTUnwrap(freed.nodes[densifyPosition].inputs[0])
    let keptSparse = try XCTUnwrap(kept.nodes[densifyPosition].inputs[0])
    XCTAssertTrue(sparse.isModelConstant && sparse.rebuildValues != nil, "the sparse constant is densified at load")
    XCTAssertNil(sparse.data, "the densified values are freed once DENSIFY copied them")
    XCTAssertNil(freed.nodes[densifyPosition].outputs[0].data, "DENSIFY's output is freed once CONV_2D packed it")
    XCTAssertEqual(freed.releasedConstantByteCount, 2 * sparse.byteCount)
    try sparse.rebuildReleasedValues()
    let rebuilt = Array(UnsafeRawBufferPointer(start: try XCTUnwrap(sparse.data), count: sparse.byteCount))
    XCTAssertEqual(rebuilt, Array(UnsafeRawBufferPointer(start: try XCTUnwrap(keptSparse.data), count: keptSparse.byteCount)))
  }
}
