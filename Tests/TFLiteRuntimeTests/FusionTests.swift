import TFLiteFormat
import TFLiteLinearAlgebra
import XCTest

@testable import TFLiteRuntime

final class FusionTests: XCTestCase {
  /// x, LOGISTIC(x) and MUL over them, with the logistic as the MUL's `gateFirst ? first : second` input.
  private func siluGraph(gateFirst: Bool, activation: ActivationFunctionType) -> (nodes: [Node], gate: RuntimeTensor) {
    var random = SeededGenerator(seed: 5)
    // Values around the logistic's cap, extremes and infinities.
    let values = random.floats(311, in: -25...25) + [.greatestFiniteMagnitude, -.greatestFiniteMagnitude, .infinity, -.infinity]
    let x = KernelHarness.floatTensor(0, [1, 5, 7, 9], values)
    let gate = KernelHarness.outputTensor(1)
    let product = KernelHarness.outputTensor(2)
    var options = MulOptions()
    options.fusedActivationFunction = activation
    let logistic = KernelHarness.node("LOGISTIC", [x], gate, .none)
    let multiply = KernelHarness.node("MUL", gateFirst ? [gate, x] : [x, gate], product, .mulOptions(options))
    return ([logistic, multiply], gate)
  }

  /// LOGISTIC feeding only a MUL by its own input is fused, and the fused kernel gives exactly
  /// what the two kernels give one after the other.
  func testLogisticTimesItsInputIsFusedWithIdenticalResults() throws {
    for (gateFirst, activation) in [(false, ActivationFunctionType.none), (true, .relu6)] {
      let (nodes, _) = siluGraph(gateFirst: gateFirst, activation: activation)
      let fusions = OperatorFusion.find(in: nodes, keptTensors: [])
      XCTAssertEqual(fusions.map(\.producer), [0])
      XCTAssertEqual(fusions.map(\.consumer), [1])
      let separate = try KernelHarness.run(nodes[0], threads: 1)
      XCTAssertEqual(nodes[0].outputs[0].shape, separate.shape)
      let expected = try KernelHarness.run(nodes[1], threads: 1)
      let kernel = try XCTUnwrap(fusions.first?.kernel)
      var context = PrepareContext(threadCount: 2)
      try kernel.prepare(&context)
      let output = nodes[1].outputs[0]
      output.allocateOwnedMemory()
      try kernel.eval(EvalContext(threadCount: 2, scratch: nil))
      XCTAssertEqual(output.shape, expected.shape)
      let fused = Array(UnsafeBufferPointer(start: output.pointer(as: Float.self), count: output.elementCount))
      for (index, (value, reference)) in zip(fused, expected.values).enumerated() where value.bitPattern != reference.bitPattern {
        XCTFail("element \(index): fused \(value), separate \(reference) (activation \(activation.name))")
      }
      XCTAssertEqual(fused.count, expected.values.count)
    }
  }

  /// A logistic that is read elsewhere or must stay observable is not fused away.
  func testLogisticWithOtherReadersIsKept() {
    let (nodes, gate) = siluGraph(gateFirst: false, activation: .none)
    XCTAssertTrue(OperatorFusion.find(in: nodes, keptTensors: [gate.index]).isEmpty)
    let reader = KernelHarness.node("ABS", [gate], KernelHarness.outputTensor(3), .none)
    XCTAssertTrue(OperatorFusion.find(in: nodes + [reader], keptTensors: []).isEmpty)
  }

  /// ADD(a, b) followed by `activation` (a RELU-family operator), with values around its bounds,
  /// extremes and infinities; `fusedActivation` is the ADD's own.
  private func reluAfterAddGraph(
    _ activation: String, fusedActivation: ActivationFunctionType = .none
  ) -> (nodes: [Node], sum: RuntimeTensor) {
    var random = SeededGenerator(seed: 12)
    let extremes: [Float] = [.greatestFiniteMagnitude, -.greatestFiniteMagnitude, .infinity, -.infinity, 0, -0.0, 6, -1, 1]
    let lhs = KernelHarness.floatTensor(0, [1, 4, 5, 16], random.floats(311, in: -8...8) + extremes)
    let rhs = KernelHarness.floatTensor(1, [16], random.floats(16, in: -2...2))
    let sum = KernelHarness.outputTensor(2)
    var options = AddOptions()
    options.fusedActivationFunction = fusedActivation
    let add = KernelHarness.node("ADD", [lhs, rhs], sum, .addOptions(options))
    let relu = KernelHarness.node(activation, [sum], KernelHarness.outputTensor(3), .none)
    return ([add, relu], sum)
  }

  /// A RELU, RELU6 or RELU_N1_TO_1 reading only an ADD's output becomes the ADD's fused
  /// activation: the folded kernel gives exactly what the two kernels give one after the other,
  /// the ADD's own kernel is not prepared, and its inputs are read at the RELU's position.
  func testReluAfterAddIsFoldedWithIdenticalResults() throws {
    for activation in ["RELU", "RELU6", "RELU_N1_TO_1"] {
      let (nodes, _) = reluAfterAddGraph(activation)
      let fusions = OperatorFusion.find(in: nodes, keptTensors: [])
      XCTAssertEqual(fusions.map(\.producer), [0], activation)
      XCTAssertEqual(fusions.map(\.consumer), [1], activation)
      let fusion = try XCTUnwrap(fusions.first)
      XCTAssertTrue(fusion.producerKernel is FoldedNodeKernel, activation)
      XCTAssertEqual(fusion.additionalReads.map(\.index), [0, 1], activation)
      XCTAssertEqual(fusion.kernel.kernelDescription?.hasSuffix("\(activation) folded into ADD"), true, activation)
      _ = try KernelHarness.run(nodes[0], threads: 1)
      let expected = try KernelHarness.run(nodes[1], threads: 1)
      var context = PrepareContext(threadCount: 2)
      try fusion.kernel.prepare(&context)
      let output = nodes[1].outputs[0]
      output.allocateOwnedMemory()
      try fusion.kernel.eval(EvalContext(threadCount: 2, scratch: nil))
      XCTAssertEqual(output.shape, expected.shape)
      let folded = Array(UnsafeBufferPointer(start: output.pointer(as: Float.self), count: output.elementCount))
      XCTAssertEqual(folded.count, expected.values.count)
      for (index, (value, reference)) in zip(folded, expected.values).enumerated() where value.bitPattern != reference.bitPattern {
        XCTFail("\(activation) element \(index): folded \(value), separate \(reference)")
      }
    }
  }

  /// No fold when the ADD's output is read by a second node or is a subgraph output, when the ADD
  /// already has a fused activation, for RELU_0_TO_1 (no fused equivalent), or for the reference kernels.
  func testReluIsNotFoldedWhenItsInputMustStayOrTheProducerCannotTakeIt() {
    let (nodes, sum) = reluAfterAddGraph("RELU")
    XCTAssertEqual(OperatorFusion.find(in: nodes, keptTensors: []).count, 1)
    XCTAssertTrue(OperatorFusion.find(in: nodes, keptTensors: [sum.index]).isEmpty)
    let reader = KernelHarness.node("ABS", [sum], KernelHarness.outputTensor(4), .none)
    XCTAssertTrue(OperatorFusion.find(in: nodes + [reader], keptTensors: []).isEmpty)
    XCTAssertTrue(OperatorFusion.find(in: reluAfterAddGraph("RELU6", fusedActivation: .relu).nodes, keptTensors: []).isEmpty)
    XCTAssertTrue(OperatorFusion.find(in: reluAfterAddGraph("RELU_0_TO_1").nodes, keptTensors: []).isEmpty)
    XCTAssertTrue(OperatorFusion.find(in: nodes, keptTensors: [], kernelSet: .reference).isEmpty)
  }

  /// PAD (or PADV2 with `constant`) of `input` by `padding` (top, bottom, left, right) feeding a
  /// DEPTHWISE_CONV_2D with VALID padding, the given strides and multiplier and a RELU6.
  private func padThenDepthwiseGraph(
    input: RuntimeTensor, padding: (Int32, Int32, Int32, Int32), strides: Int32, multiplier: Int,
    constant: Float? = nil, padsChannels: Bool = false, consumerPadding: Padding = .valid
  ) -> (nodes: [Node], padded: RuntimeTensor) {
    var random = SeededGenerator(seed: 31)
    let outputChannels = input.shape[3] * multiplier
    let amounts = KernelHarness.int32Tensor(
      1, [0, 0, padding.0, padding.1, padding.2, padding.3, 0, padsChannels ? 1 : 0])
    amounts.shape = [4, 2]
    let padded = KernelHarness.outputTensor(2)
    let pad =
      constant.map { value in
        KernelHarness.node("PADV2", [input, amounts, KernelHarness.floatTensor(3, [1], [value], constant: true)], padded, .none)
      } ?? KernelHarness.node("PAD", [input, amounts], padded, .none)
    let filter = KernelHarness.floatTensor(4, [1, 3, 3, outputChannels], random.floats(9 * outputChannels), constant: true)
    let bias = KernelHarness.floatTensor(5, [outputChannels], random.floats(outputChannels), constant: true)
    var options = DepthwiseConv2DOptions()
    options.padding = consumerPadding
    options.strideW = strides
    options.strideH = strides
    options.depthMultiplier = Int32(multiplier)
    options.fusedActivationFunction = .relu6
    let depthwise = KernelHarness.node(
      "DEPTHWISE_CONV_2D", [padded, filter, bias], KernelHarness.outputTensor(6), .depthwiseConv2DOptions(options))
    return ([pad, depthwise], padded)
  }

  /// A zero PAD of height and width read only by a VALID DEPTHWISE_CONV_2D is folded into it: the
  /// folded kernel reads the PAD's input, and gives the values the two kernels give one after the
  /// other (it leaves out only products with padding zeros; values compared as floats, so a zero
  /// may differ in sign), on generated 16- and 8-channel blocks and a Swift remainder, strides 1
  /// and 2, symmetric and one-sided padding (Keras pads a stride-2 layer bottom and right only),
  /// a multiplier of 2 and PADV2 with constant 0.
  func testZeroPadBeforeValidDepthwiseIsFoldedWithTheSameValues() throws {
    var random = SeededGenerator(seed: 30)
    let cases: [(shape: [Int], padding: (Int32, Int32, Int32, Int32), strides: Int32, multiplier: Int, constant: Float?)] = [
      ([1, 12, 12, 24], (0, 1, 0, 1), 2, 1, nil),
      ([1, 9, 11, 20], (1, 1, 1, 1), 1, 1, nil),
      ([2, 8, 7, 16], (2, 0, 1, 3), 2, 2, nil),
      ([1, 10, 10, 32], (1, 1, 1, 1), 2, 1, 0),
    ]
    for (index, test) in cases.enumerated() {
      let count = test.shape.reduce(1, *)
      let input = KernelHarness.floatTensor(0, test.shape, random.floats(count, in: -3...3))
      let (nodes, padded) = padThenDepthwiseGraph(
        input: input, padding: test.padding, strides: test.strides, multiplier: test.multiplier, constant: test.constant)
      let fusions = OperatorFusion.find(in: nodes, keptTensors: [])
      XCTAssertEqual(fusions.map(\.producer), [0], "case \(index)")
      XCTAssertEqual(fusions.map(\.consumer), [1], "case \(index)")
      let fusion = try XCTUnwrap(fusions.first)
      XCTAssertTrue(fusion.producerKernel is FoldedNodeKernel)
      XCTAssertEqual(fusion.additionalReads.map(\.index), [input.index])
      _ = try KernelHarness.run(nodes[0], threads: 1)
      XCTAssertEqual(padded.shape[1], test.shape[1] + Int(test.padding.0 + test.padding.1))
      let expected = try KernelHarness.run(nodes[1], threads: 1)
      for threads in [1, 2] {
        let output = nodes[1].outputs[0]
        let folded = try runFused(fusion, writing: output, threads: threads)
        XCTAssertEqual(output.shape, expected.shape, "case \(index)")
        XCTAssertEqual(fusion.kernel.kernelDescription?.hasSuffix("PAD folded in"), true)
        XCTAssertEqual(folded.count, expected.values.count)
        for (element, (value, reference)) in zip(folded, expected.values).enumerated() where value != reference {
          XCTFail("case \(index) threads \(threads) element \(element): folded \(value), separate \(reference)")
          break
        }
      }
    }
  }

  /// No PAD fold when the padded tensor is read elsewhere or must stay observable, when the PAD
  /// pads channels, pads with a nonzero constant, or feeds a SAME convolution, or for the
  /// reference kernels.
  func testPadIsNotFoldedWhenTheConvolutionCannotTakeIt() {
    let input = KernelHarness.floatTensor(0, [1, 6, 6, 16], [Float](repeating: 1, count: 576))
    let graph = { (constant: Float?, padsChannels: Bool, consumerPadding: Padding) in
      self.padThenDepthwiseGraph(
        input: input, padding: (1, 1, 1, 1), strides: 1, multiplier: 1, constant: constant, padsChannels: padsChannels,
        consumerPadding: consumerPadding)
    }
    let (nodes, padded) = graph(nil, false, .valid)
    XCTAssertEqual(OperatorFusion.find(in: nodes, keptTensors: []).count, 1)
    XCTAssertTrue(OperatorFusion.find(in: nodes, keptTensors: [padded.index]).isEmpty)
    let reader = KernelHarness.node("ABS", [padded], KernelHarness.outputTensor(7), .none)
    XCTAssertTrue(OperatorFusion.find(in: nodes + [reader], keptTensors: []).isEmpty)
    XCTAssertTrue(OperatorFusion.find(in: graph(nil, true, .valid).nodes, keptTensors: []).isEmpty)
    XCTAssertTrue(OperatorFusion.find(in: graph(0.5, false, .valid).nodes, keptTensors: []).isEmpty)
    XCTAssertTrue(OperatorFusion.find(in: graph(nil, false, .same).nodes, keptTensors: []).isEmpty)
    XCTAssertTrue(OperatorFusion.find(in: nodes, keptTensors: [], kernelSet: .reference).isEmpty)
  }

  /// CONV_2D (no fused activation, `filterSize`² taps, stride `stride`, SAME padding) of `input`
  /// into `outputChannels` channels, then PRELU with a constant α of `alphaShape`.
  private func convolutionThenPreluGraph(
    input: RuntimeTensor, outputChannels: Int, filterSize: Int, stride: Int32, alphaShape: [Int],
    activation: ActivationFunctionType = .none
  ) -> (nodes: [Node], convolved: RuntimeTensor) {
    var random = SeededGenerator(seed: 41)
    let depth = filterSize * filterSize * input.shape[3]
    let filter = KernelHarness.floatTensor(
      1, [outputChannels, filterSize, filterSize, input.shape[3]], random.floats(outputChannels * depth), constant: true)
    let bias = KernelHarness.floatTensor(2, [outputChannels], random.floats(outputChannels), constant: true)
    var options = Conv2DOptions()
    options.padding = .same
    options.strideW = stride
    options.strideH = stride
    options.fusedActivationFunction = activation
    let convolved = KernelHarness.outputTensor(3)
    let convolution = KernelHarness.node("CONV_2D", [input, filter, bias], convolved, .conv2DOptions(options))
    let alphas = random.floats(alphaShape.reduce(1, *), in: -2...2)
    let alpha = KernelHarness.floatTensor(4, alphaShape, alphas, constant: true)
    let prelu = KernelHarness.node("PRELU", [convolved, alpha], KernelHarness.outputTensor(5), .none)
    return ([convolution, prelu], convolved)
  }

  /// A PRELU with a per-channel constant α reading only a CONV_2D's output is folded into the
  /// convolution: the folded kernel gives bit for bit what the two kernels give one after the
  /// other, on every route of the convolution (1×1 in place, im2col, implicit GEMM over few
  /// channels, a depth split into blocks, output channels that leave a partial last panel), with
  /// one and two threads, on the generated kernels and on the Swift ones.
  func testPreluAfterConvolutionIsFoldedWithIdenticalResults() throws {
    var random = SeededGenerator(seed: 40)
    let cases: [(shape: [Int], outputChannels: Int, filterSize: Int, stride: Int32, alphaShape: [Int])] = [
      ([1, 9, 7, 32], 64, 1, 1, [64]),  // 1×1 in place
      ([1, 8, 8, 24], 20, 1, 2, [1, 1, 20]),  // 1×1 strided: im2col, partial panel
      ([1, 17, 15, 3], 16, 3, 2, [1, 1, 1, 16]),  // implicit GEMM (3 channels)
      ([1, 6, 6, 40], 37, 3, 1, [1, 37]),  // im2col, short rows, partial panel
      ([2, 5, 5, 160], 24, 3, 1, [24]),  // depth 1440: several depth blocks
      ([1, 16, 16, 16], 48, 3, 1, [48]),  // implicit GEMM, rows of 16 pixels
    ]
    for (index, test) in cases.enumerated() {
      let count = test.shape.reduce(1, *)
      let input = KernelHarness.floatTensor(0, test.shape, random.floats(count, in: -2...2))
      let (nodes, _) = convolutionThenPreluGraph(
        input: input, outputChannels: test.outputChannels, filterSize: test.filterSize, stride: test.stride,
        alphaShape: test.alphaShape)
      let fusions = OperatorFusion.find(in: nodes, keptTensors: [])
      XCTAssertEqual(fusions.map(\.producer), [0], "case \(index)")
      XCTAssertEqual(fusions.map(\.consumer), [1], "case \(index)")
      let fusion = try XCTUnwrap(fusions.first)
      XCTAssertTrue(fusion.producerKernel is FoldedNodeKernel)
      XCTAssertEqual(fusion.additionalReads.map(\.index), [0, 1, 2])
      XCTAssertEqual(fusion.kernel.kernelDescription?.hasSuffix("PRELU folded into CONV_2D"), true)
      for generated in [true, false] {
        try GeneratedFloatKernels.$areAllowed.withValue(generated) {
          for threads in [1, 2] {
            _ = try KernelHarness.run(nodes[0], threads: threads)
            let expected = try KernelHarness.run(nodes[1], threads: threads)
            let output = nodes[1].outputs[0]
            let folded = try runFused(fusion, writing: output, threads: threads)
            XCTAssertEqual(output.shape, expected.shape, "case \(index)")
            XCTAssertEqual(folded.count, expected.values.count)
            XCTAssertTrue(expected.values.contains { $0 < 0 }, "case \(index): no negative output to scale")
            for (element, (value, reference)) in zip(folded, expected.values).enumerated()
            where value.bitPattern != reference.bitPattern {
              XCTFail("case \(index) generated \(generated) threads \(threads) element \(element): folded \(value), separate \(reference)")
              break
            }
          }
        }
      }
    }
  }

  /// MediaPipe stores α in float16 behind a DEQUANTIZE: such an α is folded too (the executor
  /// makes it a constant at prepare, before the PRELU's position), and the folded kernel, prepared
  /// after the DEQUANTIZE, gives the separate PRELU's values bit for bit; an α some other node
  /// computes is not folded.
  func testPreluWithDequantizedAlphaIsFolded() throws {
    var random = SeededGenerator(seed: 44)
    let input = KernelHarness.floatTensor(0, [1, 6, 5, 8], random.floats(240, in: -2...2))
    let (nodes, _) = convolutionThenPreluGraph(input: input, outputChannels: 16, filterSize: 1, stride: 1, alphaShape: [1, 1, 16])
    let halves = random.floats(16, in: -2...2).map { Float16($0).bitPattern }
    let stored = KernelHarness.quantizedTensor(6, "alpha16", .float16, [1, 1, 16], halves, scales: nil, zeroPoints: [], constant: true)
    let alpha = KernelHarness.outputTensor(7)
    alpha.shape = [1, 1, 16]
    let dequantize = KernelHarness.node("DEQUANTIZE", [stored], alpha, .none)
    let prelu = KernelHarness.node("PRELU", [nodes[0].outputs[0], alpha], KernelHarness.outputTensor(8), .none)
    let graph = [dequantize, nodes[0], prelu]
    let fusions = OperatorFusion.find(in: graph, keptTensors: [])
    XCTAssertEqual(fusions.map(\.producer), [1])
    XCTAssertEqual(fusions.map(\.consumer), [2])
    let fusion = try XCTUnwrap(fusions.first)
    let computed = KernelHarness.node("ABS", [stored], alpha, .none)
    XCTAssertTrue(OperatorFusion.find(in: [computed, nodes[0], prelu], keptTensors: []).isEmpty)
    _ = try KernelHarness.run(dequantize, threads: 1)
    alpha.isConstant = true  // as the executor marks a folded node's output
    _ = try KernelHarness.run(nodes[0], threads: 1)
    let expected = try KernelHarness.run(prelu, threads: 1)
    let folded = try runFused(fusion, writing: prelu.outputs[0], threads: 1)
    XCTAssertEqual(folded.map(\.bitPattern), expected.values.map(\.bitPattern))
  }

  /// No PRELU fold when the convolution's output is read by a second node or is a subgraph
  /// output, when α is not one value per output channel (per pixel, or one value in all), when the
  /// convolution has a fused activation, or for the reference kernels.
  func testPreluIsNotFoldedWhenAlphaIsNotPerChannelOrTheOutputMustStay() {
    let input = KernelHarness.floatTensor(0, [1, 6, 6, 8], [Float](repeating: 1, count: 288))
    let graph = { (alphaShape: [Int], activation: ActivationFunctionType) in
      self.convolutionThenPreluGraph(
        input: input, outputChannels: 16, filterSize: 1, stride: 1, alphaShape: alphaShape, activation: activation)
    }
    let (nodes, convolved) = graph([16], .none)
    XCTAssertEqual(OperatorFusion.find(in: nodes, keptTensors: []).count, 1)
    XCTAssertTrue(OperatorFusion.find(in: nodes, keptTensors: [convolved.index]).isEmpty)
    let reader = KernelHarness.node("ABS", [convolved], KernelHarness.outputTensor(6), .none)
    XCTAssertTrue(OperatorFusion.find(in: nodes + [reader], keptTensors: []).isEmpty)
    XCTAssertTrue(OperatorFusion.find(in: nodes, keptTensors: [], kernelSet: .reference).isEmpty)
    for alphaShape in [[6, 6, 16], [1, 6, 1, 16], [1], [2, 16], [1, 1, 1, 1, 16]] {
      XCTAssertTrue(OperatorFusion.find(in: graph(alphaShape, .none).nodes, keptTensors: []).isEmpty, "α \(alphaShape)")
    }
    XCTAssertTrue(OperatorFusion.find(in: graph([16], .relu).nodes, keptTensors: []).isEmpty)
  }

  /// MediaPipe's face detector has a RELU after each of its 16 residual ADDs and after its first
  /// CONV_2D: lowering folds all 17 (and says so in the kernel descriptions), and the outputs still
  /// match LiteRT's; with fusion off they run apart.
  func testFaceDetectorFoldsItsRelusAndMatchesLiteRT() throws {
    let entry = try XCTUnwrap(TestModelManifest.load().models.first { $0.name == "mediapipe_face_detection_short_range" })
    let outcome = Conformance.run(entry)
    XCTAssertTrue(outcome.passed, "\(outcome.failure ?? outcome.firstMismatch ?? "")")
    let folded = try Conformance.invoke(entry, options: RunnerOptions()).primary.kernelDescriptions
    XCTAssertEqual(folded.filter { $0.hasSuffix("RELU folded into ADD") }.count, 16)
    XCTAssertEqual(folded.filter { $0.hasSuffix("RELU folded into CONV_2D") }.count, 1)
    XCTAssertEqual(folded.filter { $0.hasSuffix("(fused into a later node)") }.count, 17)
    var separate = RunnerOptions()
    separate.fusesOperators = false
    let unfused = try Conformance.invoke(entry, options: separate).primary.kernelDescriptions
    XCTAssertFalse(unfused.contains { $0.contains("folded") })
  }

  /// Prepares `fusion`'s kernel for `threads` threads, runs it into `output` (allocated here) with
  /// its own scratch, and returns the output's values.
  private func runFused(_ fusion: OperatorFusion, writing output: RuntimeTensor, threads: Int) throws -> [Float] {
    var context = PrepareContext(threadCount: threads)
    try fusion.kernel.prepare(&context)
    output.allocateOwnedMemory()
    let scratch = UnsafeMutableRawPointer.allocate(byteCount: max(context.scratchByteCount, 64), alignment: 64)
    defer { scratch.deallocate() }
    try fusion.kernel.eval(EvalContext(threadCount: threads, scratch: scratch))
    return Array(UnsafeBufferPointer(start: output.pointer(as: Float.self), count: output.elementCount))
  }
}

