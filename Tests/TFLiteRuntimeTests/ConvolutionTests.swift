import TFLiteFormat
import XCTest

import TFLiteLinearAlgebra
@testable import TFLiteRuntime

final class ConvolutionTests: XCTestCase {
  /// `validTaps` and `interior` agree with a brute-force scan of every tap.
  func testWindowAxisTapsMatchBruteForce() {
    var random = SeededGenerator(seed: 2)
    for _ in 0..<300 {
      let input = random.int(1...20)
      let filter = random.int(1...5)
      let stride = random.int(1...3)
      let dilation = random.int(1...3)
      let same = random.bool()
      guard let axis = WindowAxis(inputSize: input, filterSize: filter, stride: stride, dilation: dilation, samePadding: same)
      else { continue }
      let expected = referenceAxis(input: input, filter: filter, stride: stride, dilation: dilation, same: same)
      XCTAssertEqual(axis.outputSize, expected.output)
      XCTAssertEqual(axis.paddingBefore, expected.padding)
      for output in 0..<axis.outputSize {
        let inside = (0..<filter).filter { (0..<input).contains(axis.inputOrigin(output) + $0 * dilation) }
        let taps = axis.validTaps(output)
        XCTAssertEqual(Array(taps.first..<taps.end), inside, "in \(input) f \(filter) s \(stride) d \(dilation) o \(output)")
        XCTAssertEqual(axis.interior.contains(output), inside.count == filter, "interior at \(output)")
      }
    }
  }

  /// VALID with a dilated filter larger than the input is rejected, bad parameters too.
  func testWindowAxisRejectsImpossibleWindows() {
    XCTAssertNil(WindowAxis(inputSize: 3, filterSize: 3, stride: 1, dilation: 3, samePadding: false))
    XCTAssertNil(WindowAxis(inputSize: 3, filterSize: 0, stride: 1, dilation: 1, samePadding: true))
    XCTAssertNil(WindowAxis(inputSize: 3, filterSize: 2, stride: 0, dilation: 1, samePadding: true))
    XCTAssertNil(WindowAxis(inputSize: 3, filterSize: Int.max, stride: 1, dilation: 2, samePadding: true))
  }

  /// Random convolutions (strides, dilations, SAME/VALID, groups, 1×1 in-place and im2col paths,
  /// activations, 1 and 2 threads) against the reference.
  func testRandomConvolutionsMatchReference() {
    var random = SeededGenerator(seed: 3)
    for trial in 0..<48 {
      let pointwise = trial % 4 == 0
      let batch = random.int(1...2)
      let height = random.int(1...9)
      let width = random.int(1...9)
      let groups = trial % 5 == 1 ? random.int(2...3) : 1
      let filterChannels = random.int(1...7)
      let channels = filterChannels * groups
      let outputChannels = groups * random.int(1...20)
      let filterHeight = pointwise ? 1 : random.int(1...3)
      let filterWidth = pointwise ? 1 : random.int(1...3)
      let strides = pointwise ? (1, 1) : (random.int(1...2), random.int(1...2))
      let dilations = pointwise ? (1, 1) : (random.int(1...2), random.int(1...2))
      let same = pointwise || random.bool()
      guard
        let (heightAxis, widthAxis) = windowAxes(
          height: height, width: width, filter: (filterHeight, filterWidth), strides: strides, dilations: dilations,
          same: same)
      else { continue }
      let shape = ConvolutionShape(
        batch: batch, inputChannels: channels, groupInputChannels: filterChannels, outputChannels: outputChannels,
        height: heightAxis, width: widthAxis)
      XCTAssertEqual(shape.readsInputInPlace, pointwise)
      let input = random.floats(batch * height * width * channels)
      let filter = random.floats(outputChannels * filterHeight * filterWidth * filterChannels)
      let bias = random.bool() ? random.floats(outputChannels) : nil
      let activation = testActivations[trial % testActivations.count]
      let expected = referenceConvolution(
        input: input, batch: batch, height: height, width: width, channels: channels, filter: filter,
        outputChannels: outputChannels, filterHeight: filterHeight, filterWidth: filterWidth,
        filterChannels: filterChannels, bias: bias, strides: strides, dilations: dilations, same: same,
        lower: activation.range.lower, upper: activation.range.upper)
      XCTAssertEqual([batch, heightAxis.outputSize, widthAxis.outputSize, outputChannels], expected.shape)
      let packed = filter.withUnsafeBufferPointer {
        PackedMatrices(
          $0.baseAddress!, sourceStride: FloatConvolution.filterGroupStride(shape), count: groups,
          layout: FloatConvolution.filterLayout(shape), depth: shape.gemmDepth, columns: shape.groupOutputChannels)
      }
      let paddedBias = bias.map {
        $0.withUnsafeBufferPointer { PanelPacking.paddedBias($0.baseAddress!, groups: groups, columns: outputChannels / groups) }
      }
      for threads in [1, 2] {
        let memory = TestMemory()
        let output = memory.output(expected.values.count)
        FloatConvolution.run(
          shape, plan: FloatConvolution.plan(shape, threadCount: threads), input: memory.copy(input),
          filter: packed.matrix(0), bias: memory.copy(paddedBias), activation: activation.range, output: output,
          threadCount: threads, scratch: memory.scratch(bytes: FloatConvolution.scratchBytes(shape, threadCount: threads)))
        assertMatches(floats(output, expected.values.count), expected.values, "trial \(trial) \(shape) threads \(threads)")
      }
    }
  }

  /// Random depthwise convolutions (multipliers, channel counts hitting every vector width,
  /// strides, dilations, SAME/VALID, activations, 1 and 2 threads, separate and fused
  /// multiply-adds) against the reference.
  func testRandomDepthwiseConvolutionsMatchReference() {
    var random = SeededGenerator(seed: 4)
    for trial in 0..<40 {
      let batch = random.int(1...2)
      let height = random.int(1...10)
      let width = random.int(1...12)
      let channels = [1, 3, 4, 7, 8, 13, 16, 29, 32][trial % 9]
      let multiplier = trial % 3 == 2 ? random.int(2...3) : 1
      // Every fourth trial a 3×3 filter, whose interior has its own unrolled path.
      let filterHeight = trial % 4 == 0 ? 3 : random.int(1...3)
      let filterWidth = trial % 4 == 0 ? 3 : random.int(1...5)
      guard
        let test = RandomDepthwiseCase(
          random: &random, trial: trial, batch: batch, height: height, width: width, channels: channels,
          multiplier: multiplier, filterHeight: filterHeight, filterWidth: filterWidth)
      else { continue }
      let (shape, input, filter, bias, activation, expected) =
        (test.shape, test.input, test.filter, test.bias, test.activation, test.expected)
      for (threads, fused) in [(1, false), (2, false), (1, true)] {
        let memory = TestMemory()
        let output = memory.output(expected.values.count)
        FloatDepthwiseConvolution.run(
          shape, input: memory.copy(input), filter: memory.copy(filter), bias: memory.copy(bias),
          activation: activation.range, output: output, threadCount: threads,
          scratch: memory.scratch(bytes: FloatDepthwiseConvolution.scratchBytes(shape)), usesFusedMultiplyAdd: fused)
        assertMatches(
          floats(output, expected.values.count), expected.values, "trial \(trial) \(shape) threads \(threads) fused \(fused)")
      }
    }
  }

  /// Random transposed convolutions (strides, SAME/VALID, output sizes, bias, activations,
  /// 1 and 2 threads) against the scatter-form reference.
  func testRandomTransposeConvolutionsMatchReference() {
    var random = SeededGenerator(seed: 5)
    for trial in 0..<30 {
      let batch = random.int(1...2)
      let height = random.int(1...6)
      let width = random.int(1...6)
      let channels = random.int(1...9)
      let outputChannels = random.int(1...19)
      let filterHeight = random.int(1...4)
      let filterWidth = random.int(1...4)
      let strides = (random.int(1...3), random.int(1...3))
      let same = random.bool()
      // The output size a matching forward convolution would accept, sometimes one larger.
      let outputHeight = same ? height * strides.0 : (height - 1) * strides.0 + filterHeight
      let outputWidth = (same ? width * strides.1 : (width - 1) * strides.1 + filterWidth) + random.int(0...1)
      guard
        let (heightAxis, widthAxis) = windowAxes(
          height: outputHeight, width: outputWidth, filter: (filterHeight, filterWidth), strides: strides, same: same)
      else { continue }
      let shape = TransposeConvolutionShape(
        batch: batch, inputHeight: height, inputWidth: width, inputChannels: channels, outputChannels: outputChannels,
        height: heightAxis, width: widthAxis)
      let input = random.floats(batch * height * width * channels)
      let filter = random.floats(outputChannels * filterHeight * filterWidth * channels)
      let bias = random.bool() ? random.floats(outputChannels) : nil
      let activation = testActivations[trial % testActivations.count]
      let expected = referenceTransposeConvolution(
        input: input, batch: batch, height: height, width: width, channels: channels, filter: filter,
        outputChannels: outputChannels, filterHeight: filterHeight, filterWidth: filterWidth, bias: bias,
        strides: strides, outputHeight: outputHeight, outputWidth: outputWidth, same: same,
        lower: activation.range.lower, upper: activation.range.upper)
      let weights = TestMemory()
      let packed = weights.output(PanelPacking.packedCount(depth: channels, columns: shape.gemmColumns))
      FloatTransposeConvolution.packFilter(
        weights.copy(filter), shape: shape, reordered: weights.output(filter.count), into: packed)
      for threads in [1, 2] {
        let memory = TestMemory()
        let output = memory.output(expected.count)
        FloatTransposeConvolution.run(
          shape, input: memory.copy(input), filter: packed, bias: memory.copy(bias), activation: activation.range,
          output: output, threadCount: threads,
          scratch: memory.scratch(bytes: FloatTransposeConvolution.scratchBytes(shape, threadCount: threads)))
        assertMatches(floats(output, expected.count), expected, "trial \(trial) \(shape) threads \(threads)")
      }
    }
  }
}

/// The convolution kernels through init/prepare/eval: option decoding, output shapes, constant
/// and run-time weights, and rejection of what they do not run.
final class ConvolutionKernelTests: XCTestCase {
  private func activation(_ trial: Int) -> (ActivationFunctionType, FloatClampRange) {
    [(.none, .none), (.relu, .relu), (.reluN1To1, .reluMinusOneToOne), (.relu6, .relu6)][trial % 4]
  }

  func testConv2DKernelMatchesReference() throws {
    var random = SeededGenerator(seed: 11)
    for trial in 0..<16 {
      let (batch, height, width) = (random.int(1...2), random.int(2...8), random.int(2...8))
      let groups = trial % 4 == 3 ? 2 : 1
      let filterChannels = random.int(1...5)
      let outputChannels = groups * random.int(1...18)
      let (filterHeight, filterWidth) = (random.int(1...3), random.int(1...3))
      let strides = (random.int(1...2), random.int(1...2))
      let dilations = (random.int(1...2), random.int(1...2))
      let same = trial % 2 == 0
      let (function, range) = activation(trial)
      let constantWeights = trial % 3 != 1
      let input = random.floats(batch * height * width * filterChannels * groups)
      let filter = random.floats(outputChannels * filterHeight * filterWidth * filterChannels)
      let bias = trial % 5 == 4 ? nil : random.floats(outputChannels)
      let expected = referenceConvolution(
        input: input, batch: batch, height: height, width: width, channels: filterChannels * groups, filter: filter,
        outputChannels: outputChannels, filterHeight: filterHeight, filterWidth: filterWidth,
        filterChannels: filterChannels, bias: bias, strides: strides, dilations: dilations, same: same,
        lower: range.lower, upper: range.upper)
      guard expected.values.count > 0 else { continue }
      let options = Conv2DOptions(
        padding: same ? .same : .valid, strideW: Int32(strides.1), strideH: Int32(strides.0),
        fusedActivationFunction: function, dilationWFactor: Int32(dilations.1), dilationHFactor: Int32(dilations.0))
      for threads in [1, 2] {
        let node = KernelHarness.node(
          "CONV_2D",
          [
            KernelHarness.floatTensor(0, [batch, height, width, filterChannels * groups], input),
            KernelHarness.floatTensor(
              1, [outputChannels, filterHeight, filterWidth, filterChannels], filter, constant: constantWeights),
            bias.map { KernelHarness.floatTensor(2, [outputChannels], $0, constant: constantWeights) },
          ], KernelHarness.outputTensor(3), .conv2DOptions(options))
        let result = try KernelHarness.run(node, threads: threads)
        XCTAssertEqual(result.shape, expected.shape)
        assertMatches(result.values, expected.values, "trial \(trial) threads \(threads)")
      }
    }
  }

  func testDepthwiseKernelMatchesReference() throws {
    var random = SeededGenerator(seed: 12)
    for trial in 0..<12 {
      let (batch, height, width) = (random.int(1...2), random.int(2...9), random.int(2...9))
      let channels = [3, 8, 17, 32][trial % 4]
      let multiplier = trial % 3 == 2 ? 2 : 1
      let (filterHeight, filterWidth) = (random.int(1...3), random.int(1...3))
      let strides = (random.int(1...2), random.int(1...2))
      let dilations = (random.int(1...2), 1)
      let same = trial % 2 == 1
      let (function, range) = activation(trial)
      let input = random.floats(batch * height * width * channels)
      let filter = random.floats(filterHeight * filterWidth * channels * multiplier)
      let bias = random.floats(channels * multiplier)
      let expected = referenceDepthwise(
        input: input, batch: batch, height: height, width: width, channels: channels, multiplier: multiplier,
        filter: filter, filterHeight: filterHeight, filterWidth: filterWidth, bias: bias, strides: strides,
        dilations: dilations, same: same, lower: range.lower, upper: range.upper)
      guard expected.values.count > 0 else { continue }
      let options = DepthwiseConv2DOptions(
        padding: same ? .same : .valid, strideW: Int32(strides.1), strideH: Int32(strides.0),
        depthMultiplier: Int32(multiplier), fusedActivationFunction: function, dilationWFactor: Int32(dilations.1),
        dilationHFactor: Int32(dilations.0))
      for threads in [1, 2] {
        let node = KernelHarness.node(
          "DEPTHWISE_CONV_2D",
          [
            KernelHarness.floatTensor(0, [batch, height, width, channels], input),
            KernelHarness.floatTensor(1, [1, filterHeight, filterWidth, channels * multiplier], filter, constant: true),
            KernelHarness.floatTensor(2, [channels * multiplier], bias, constant: true),
          ], KernelHarness.outputTensor(3), .depthwiseConv2DOptions(options))
        let result = try KernelHarness.run(node, threads: threads)
        XCTAssertEqual(result.shape, expected.shape)
        assertMatches(result.values, expected.values, "trial \(trial) threads \(threads)")
      }
    }
  }

  func testTransposeConvKernelMatchesReference() throws {
    var random = SeededGenerator(seed: 13)
    for trial in 0..<10 {
      let (batch, height, width) = (random.int(1...2), random.int(1...5), random.int(1...5))
      let (channels, outputChannels) = (random.int(1...6), random.int(1...12))
      let (filterHeight, filterWidth) = (random.int(1...3), random.int(1...3))
      let strides = (random.int(1...2), random.int(1...2))
      let same = trial % 2 == 0
      let outputHeight = same ? height * strides.0 : (height - 1) * strides.0 + filterHeight
      let outputWidth = same ? width * strides.1 : (width - 1) * strides.1 + filterWidth
      let (function, range) = activation(trial)
      let constantWeights = trial % 3 != 0
      let input = random.floats(batch * height * width * channels)
      let filter = random.floats(outputChannels * filterHeight * filterWidth * channels)
      let bias = trial % 4 == 1 ? nil : random.floats(outputChannels)
      let expected = referenceTransposeConvolution(
        input: input, batch: batch, height: height, width: width, channels: channels, filter: filter,
        outputChannels: outputChannels, filterHeight: filterHeight, filterWidth: filterWidth, bias: bias,
        strides: strides, outputHeight: outputHeight, outputWidth: outputWidth, same: same, lower: range.lower,
        upper: range.upper)
      let options = TransposeConvOptions(
        padding: same ? .same : .valid, strideW: Int32(strides.1), strideH: Int32(strides.0),
        fusedActivationFunction: function)
      for threads in [1, 2] {
        let node = KernelHarness.node(
          "TRANSPOSE_CONV",
          [
            KernelHarness.int32Tensor(0, [batch, outputHeight, outputWidth, outputChannels].map(Int32.init)),
            KernelHarness.floatTensor(
              1, [outputChannels, filterHeight, filterWidth, channels], filter, constant: constantWeights),
            KernelHarness.floatTensor(2, [batch, height, width, channels], input),
            bias.map { KernelHarness.floatTensor(3, [outputChannels], $0, constant: true) },
          ], KernelHarness.outputTensor(4), .transposeConvOptions(options))
        let result = try KernelHarness.run(node, threads: threads)
        XCTAssertEqual(result.shape, [batch, outputHeight, outputWidth, outputChannels])
        assertMatches(result.values, expected, "trial \(trial) threads \(threads)")
      }
    }
  }

  func testKernelsRejectWhatTheyDoNotRun() {
    let input = KernelHarness.floatTensor(0, [1, 4, 4, 6], [Float](repeating: 1, count: 96))
    let filter = KernelHarness.floatTensor(1, [4, 3, 3, 4], [Float](repeating: 1, count: 144), constant: true)
    KernelHarness.assertRejects(
      KernelHarness.node("CONV_2D", [input, filter], KernelHarness.outputTensor(2), .conv2DOptions(Conv2DOptions(strideW: 1, strideH: 1))),
      containing: "do not divide")
    // VALID: (4 + 1 - 6) / 1 is negative; a 5×5 filter would give an empty output, as in TFLite.
    let filter6 = KernelHarness.floatTensor(1, [4, 6, 6, 6], [Float](repeating: 1, count: 864), constant: true)
    KernelHarness.assertRejects(
      KernelHarness.node(
        "CONV_2D", [input, filter6], KernelHarness.outputTensor(2),
        .conv2DOptions(Conv2DOptions(padding: .valid, strideW: 1, strideH: 1))),
      containing: "no valid output")
    let filter3 = KernelHarness.floatTensor(1, [4, 3, 3, 6], [Float](repeating: 1, count: 216), constant: true)
    KernelHarness.assertRejects(
      KernelHarness.node(
        "CONV_2D", [input, filter3], KernelHarness.outputTensor(2),
        .conv2DOptions(Conv2DOptions(strideW: 1, strideH: 1, fusedActivationFunction: .tanh))),
      containing: "TANH")
    KernelHarness.assertRejects(
      KernelHarness.node(
        "CONV_2D", [input, filter3, KernelHarness.floatTensor(2, [3], [1, 2, 3], constant: true)],
        KernelHarness.outputTensor(3), .conv2DOptions(Conv2DOptions(strideW: 1, strideH: 1))),
      containing: "bias")
    KernelHarness.assertRejects(
      KernelHarness.node(
        "CONV_2D", [input, filter3], KernelHarness.outputTensor(2, type: .int8),
        .conv2DOptions(Conv2DOptions(strideW: 1, strideH: 1))),
      containing: "INT8")
    KernelHarness.assertRejects(
      KernelHarness.node(
        "TRANSPOSE_CONV",
        [KernelHarness.floatTensor(0, [4], [1, 4, 4, 4]), filter, input], KernelHarness.outputTensor(3),
        .transposeConvOptions(TransposeConvOptions(strideW: 1, strideH: 1))),
      containing: "INT32")
    let runtimeShape = KernelHarness.int32Tensor(0, [1, 4, 4, 4])
    runtimeShape.isConstant = false
    KernelHarness.assertRejects(
      KernelHarness.node(
        "TRANSPOSE_CONV", [runtimeShape, KernelHarness.floatTensor(1, [4, 3, 3, 6], [Float](repeating: 1, count: 216)), input],
        KernelHarness.outputTensor(3), .transposeConvOptions(TransposeConvOptions(strideW: 1, strideH: 1))),
      containing: "run time")
    KernelHarness.assertRejects(
      KernelHarness.node(
        "DEPTHWISE_CONV_2D", [input, KernelHarness.floatTensor(1, [1, 3, 3, 4], [Float](repeating: 1, count: 36))],
        KernelHarness.outputTensor(2), .depthwiseConv2DOptions(DepthwiseConv2DOptions(strideW: 1, strideH: 1))),
      containing: "does not fit")
  }
}
