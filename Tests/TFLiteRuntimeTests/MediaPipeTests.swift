import TFLiteFormat
import XCTest

@testable import TFLiteRuntime

/// MediaPipe's custom operators: the generated `mediapipe_` models (expected outputs from LiteRT on
/// a builtin-op rewrite of each model), two of MediaPipe's published models, and the refusals of
/// malformed nodes.
final class MediaPipeTests: XCTestCase {
  private static func isMediaPipeCase(_ entry: TestModelManifest.Entry) -> Bool { entry.name.hasPrefix("mediapipe_") }

  func testGeneratedModelsMatchLiteRTOnTheBuiltinRewrite() throws {
    let outcomes = try Conformance.check(Self.isMediaPipeCase)
    let customCodes = [
      TransposeConvolutionBiasKernel.customCode, TransformLandmarksKernel.customCode,
      TransformTensorBilinearKernel.customCode, LandmarksToTransformMatrixKernel.customCode,
      MaxPoolingWithArgmaxKernel.customCode, MaxUnpoolingKernel.customCode,
    ]
    for code in customCodes {
      XCTAssertTrue(outcomes.contains { $0.entry.opNames.contains(code) }, "no case runs \(code)")
    }
    XCTAssertTrue(outcomes.contains { $0.entry.name == "mediapipe_selfie_segmentation" })
    XCTAssertTrue(outcomes.contains { $0.entry.name == "mediapipe_face_detection_short_range" })
  }

  func testGeneratedModelsMatchWithTwoThreads() throws {
    try Conformance.check(Self.isMediaPipeCase, threadCount: 2)
  }

  /// Little-endian int32 fields, as MediaPipe stores the options.
  private static func optionBytes(_ fields: [Int32]) -> [UInt8] {
    fields.flatMap { field in (0..<4).map { UInt8(truncatingIfNeeded: field >> (8 * $0)) } }
  }

  /// Runs Convolution2DTransposeBias on a `[1,3,3,2]` input with `[outputChannels,2,2,2]` weights.
  private func run(
    options: [UInt8], inputShape: [Int] = [1, 3, 3, 2], weightShape: [Int] = [2, 2, 2, 2], biasCount: Int = 2,
    constantWeights: Bool = true
  ) throws -> (shape: [Int], values: [Float]) {
    let inputCount = inputShape.reduce(1, *)
    let weightCount = weightShape.reduce(1, *)
    let input = KernelHarness.floatTensor(0, inputShape, (0..<inputCount).map { Float($0 % 7) - 3 })
    let weights = KernelHarness.floatTensor(
      1, weightShape, (0..<weightCount).map { Float($0 % 5) * 0.5 - 1 }, constant: constantWeights)
    let bias = KernelHarness.floatTensor(2, [biasCount], (0..<biasCount).map { Float($0) + 0.25 }, constant: true)
    let output = KernelHarness.outputTensor(3)
    return try options.withUnsafeBytes { bytes in
      let node = Node(
        index: 0, opName: TransposeConvolutionBiasKernel.customCode, version: 1, inputs: [input, weights, bias],
        outputs: [output], options: .none, customOptions: bytes,
        subgraph: { _ in throw RuntimeError.invalidModel("no subgraphs in kernel tests") })
      return try KernelHarness.run(node, threads: 1)
    }
  }

  private func assertRejects(
    options: [UInt8], inputShape: [Int] = [1, 3, 3, 2], weightShape: [Int] = [2, 2, 2, 2], biasCount: Int = 2,
    containing fragment: String, line: UInt = #line
  ) {
    XCTAssertThrowsError(
      try run(options: options, inputShape: inputShape, weightShape: weightShape, biasCount: biasCount), line: line
    ) { error in
      XCTAssertTrue("\(error)".contains(fragment), "\(error) does not mention '\(fragment)'", line: line)
    }
  }

  func testOutputSizeFollowsTheInputKernelStrideAndPadding() throws {
    // SAME on an odd extent crops one element: 2·(3-1) + 2 - 1 = 5; VALID keeps 2·(3-1) + 2 = 6.
    XCTAssertEqual(try run(options: Self.optionBytes([1, 2, 2])).shape, [1, 5, 5, 2])
    XCTAssertEqual(try run(options: Self.optionBytes([2, 2, 2])).shape, [1, 6, 6, 2])
    XCTAssertEqual(try run(options: Self.optionBytes([2, 1, 2])).shape, [1, 6, 4, 2])
  }

  func testWeightsComputedAtRunTimeGiveTheConstantWeightsResult() throws {
    let options = Self.optionBytes([1, 2, 1])
    let constant = try run(options: options)
    let computed = try run(options: options, constantWeights: false)
    XCTAssertEqual(constant.shape, computed.shape)
    XCTAssertEqual(constant.values, computed.values)
  }

  func testRejectsMalformedNodes() {
    assertRejects(options: [1, 0, 0, 0, 2, 0, 0, 0], containing: "8 bytes")
    assertRejects(options: Self.optionBytes([0, 2, 2]), containing: "padding 0")
    assertRejects(options: Self.optionBytes([1, 0, 2]), containing: "positive")
    assertRejects(options: Self.optionBytes([1, 2, -1]), containing: "positive")
    assertRejects(options: Self.optionBytes([1, 2, 2]), biasCount: 3, containing: "bias has 3 elements")
    assertRejects(options: Self.optionBytes([1, 2, 2]), weightShape: [2, 2, 2, 3], containing: "input channels")
    assertRejects(options: Self.optionBytes([1, 2, 2]), inputShape: [1, 0, 3, 2], containing: "positive input extent")
  }

  /// Loads a committed `mediapipe_` model, resizes its first input and allocates; returns the error.
  private func allocationError(_ caseName: String, firstInputShape shape: [Int]) -> String? {
    do {
      let path = TestModelManifest.directory.appendingPathComponent("mediapipe/\(caseName).tflite").path
      let runner = try ModelRunner(model: try TFLiteModel(contentsOfFile: path), options: RunnerOptions(threadCount: 1))
      try runner.primary.resizeInput(at: 0, to: shape)
      try runner.primary.allocateTensors()
      return nil
    } catch {
      return "\(error)"
    }
  }

  func testFaceMeshOpsRejectShapesTheyCannotRead() throws {
    let outside = allocationError("mediapipe_landmarks_to_transform_matrix", firstInputShape: [1, 10, 3])
    XCTAssertTrue(outside?.contains("is outside 0..<10") == true, outside ?? "accepted")
    let width = allocationError("mediapipe_transform_landmarks_2d", firstInputShape: [1, 40, 4])
    XCTAssertTrue(width?.contains("[1, N, 2] or [1, N, 3]") == true, width ?? "accepted")
    let batch = allocationError("mediapipe_transform_tensor_bilinear", firstInputShape: [2, 12, 10, 5])
    XCTAssertTrue(batch?.contains("one image") == true, batch ?? "accepted")
  }

  func testFaceMeshOpsNeedVersionTwoAndTheirOptions() {
    let landmarks = KernelHarness.floatTensor(0, [1, 4, 3], [Float](repeating: 1, count: 12))
    let matrix = KernelHarness.floatTensor(1, [1, 4, 4], [Float](repeating: 0, count: 16))
    let image = KernelHarness.floatTensor(0, [1, 3, 3, 1], [Float](repeating: 1, count: 9))
    func node(_ code: String, _ inputs: [RuntimeTensor], version: Int) -> Node {
      Node(
        index: 0, opName: code, version: version, inputs: inputs, outputs: [KernelHarness.outputTensor(2)],
        options: .none, customOptions: UnsafeRawBufferPointer(start: nil, count: 0),
        subgraph: { _ in throw RuntimeError.invalidModel("no subgraphs in kernel tests") })
    }
    KernelHarness.assertRejects(node("TransformLandmarks", [landmarks, matrix], version: 1), containing: "version 1")
    KernelHarness.assertRejects(node("TransformTensorBilinear", [image, matrix], version: 2), containing: "no custom options")
    KernelHarness.assertRejects(node("Landmarks2TransformMatrix", [landmarks], version: 2), containing: "no custom options")
  }
}
