import TFLiteFormat
import XCTest

import TFLiteLinearAlgebra
@testable import TFLiteRuntime

final class PoolingTests: XCTestCase {
  /// Random average, max and L2 pools (SAME/VALID, strides, every vector width, activations,
  /// 1 and 2 threads) against the reference, which counts only in-bounds elements.
  func testRandomPoolsMatchReference() {
    var random = SeededGenerator(seed: 6)
    let kinds: [(PoolingKind, String)] = [(.average, "average"), (.max, "max"), (.l2, "l2")]
    for trial in 0..<45 {
      let (kind, name) = kinds[trial % 3]
      let batch = random.int(1...2)
      let height = random.int(1...9)
      let width = random.int(1...9)
      let channels = [1, 5, 8, 12, 16, 21, 35][trial % 7]
      let filterHeight = random.int(1...4)
      let filterWidth = random.int(1...4)
      let strides = (random.int(1...3), random.int(1...3))
      let same = random.bool()
      guard
        let (heightAxis, widthAxis) = windowAxes(
          height: height, width: width, filter: (filterHeight, filterWidth), strides: strides, same: same)
      else { continue }
      let shape = PoolingShape(batch: batch, channels: channels, height: heightAxis, width: widthAxis)
      let input = random.floats(batch * height * width * channels, in: kind == .l2 ? 0...2 : -2...2)
      let activation = testActivations[trial % testActivations.count]
      let expected = referencePool(
        name, input: input, batch: batch, height: height, width: width, channels: channels,
        filterHeight: filterHeight, filterWidth: filterWidth, strides: strides, same: same,
        lower: activation.range.lower, upper: activation.range.upper)
      for threads in [1, 2] {
        let memory = TestMemory()
        let output = memory.output(expected.values.count)
        FloatPooling.run(
          kind, shape, input: memory.copy(input), activation: activation.range, output: output, threadCount: threads)
        assertMatches(floats(output, expected.values.count), expected.values, "trial \(trial) \(name) \(shape) threads \(threads)")
      }
    }
  }
}

/// The pool kernels through init/prepare/eval.
final class PoolingKernelTests: XCTestCase {
  func testPoolKernelsMatchReference() throws {
    var random = SeededGenerator(seed: 23)
    let ops = [("AVERAGE_POOL_2D", "average"), ("MAX_POOL_2D", "max"), ("L2_POOL_2D", "l2")]
    let activations: [(ActivationFunctionType, FloatClampRange)] = [(.none, .none), (.relu6, .relu6), (.relu, .relu)]
    for trial in 0..<12 {
      let (op, kind) = ops[trial % 3]
      let (batch, height, width, channels) = (random.int(1...2), random.int(1...9), random.int(1...9), random.int(1...20))
      let (filterHeight, filterWidth) = (random.int(1...3), random.int(1...3))
      let strides = (random.int(1...2), random.int(1...2))
      let same = trial % 2 == 0 || filterHeight > height || filterWidth > width
      let (function, range) = activations[trial % 3]
      let input = random.floats(batch * height * width * channels, in: 0...3)
      let expected = referencePool(
        kind, input: input, batch: batch, height: height, width: width, channels: channels,
        filterHeight: filterHeight, filterWidth: filterWidth, strides: strides, same: same, lower: range.lower,
        upper: range.upper)
      let options = Pool2DOptions(
        padding: same ? .same : .valid, strideW: Int32(strides.1), strideH: Int32(strides.0),
        filterWidth: Int32(filterWidth), filterHeight: Int32(filterHeight), fusedActivationFunction: function)
      for threads in [1, 2] {
        let node = KernelHarness.node(
          op, [KernelHarness.floatTensor(0, [batch, height, width, channels], input)], KernelHarness.outputTensor(1),
          .pool2DOptions(options))
        let result = try KernelHarness.run(node, threads: threads)
        XCTAssertEqual(result.shape, expected.shape)
        assertMatches(result.values, expected.values, "trial \(trial) \(op) threads \(threads)")
      }
    }
  }
}

/// Window kernels large enough to be split into several row items across two threads.
final class WindowKernelThreadingTests: XCTestCase {
  func testLargeDepthwiseAndPoolSplitAcrossThreads() throws {
    var random = SeededGenerator(seed: 41)
    let (height, width, channels) = (40, 36, 40)
    XCTAssertGreaterThan(
      height, ChannelWindowRows.minimumItemWork / ChannelWindowRows.work(width, channels, 3, 3), "several items")
    let input = random.floats(height * width * channels)
    let filter = random.floats(9 * channels)
    let bias = random.floats(channels)
    let (heightAxis, widthAxis) = try XCTUnwrap(
      windowAxes(height: height, width: width, filter: (3, 3), strides: (1, 1), same: true))
    let depthwise = DepthwiseShape(batch: 1, inputChannels: channels, multiplier: 1, height: heightAxis, width: widthAxis)
    let pool = PoolingShape(batch: 1, channels: channels, height: heightAxis, width: widthAxis)
    let expectedDepthwise = referenceDepthwise(
      input: input, batch: 1, height: height, width: width, channels: channels, multiplier: 1, filter: filter,
      filterHeight: 3, filterWidth: 3, bias: bias, strides: (1, 1), dilations: (1, 1), same: true,
      lower: FloatClampRange.relu6.lower, upper: FloatClampRange.relu6.upper)
    let expectedPool = referencePool(
      "average", input: input, batch: 1, height: height, width: width, channels: channels, filterHeight: 3,
      filterWidth: 3, strides: (1, 1), same: true, lower: FloatClampRange.none.lower, upper: FloatClampRange.none.upper)
    let memory = TestMemory()
    let depthwiseOutput = memory.output(expectedDepthwise.values.count)
    FloatDepthwiseConvolution.run(
      depthwise, input: memory.copy(input), filter: memory.copy(filter), bias: memory.copy(bias), activation: .relu6,
      output: depthwiseOutput, threadCount: 2, scratch: nil)
    assertMatches(floats(depthwiseOutput, expectedDepthwise.values.count), expectedDepthwise.values, "depthwise")
    let poolOutput = memory.output(expectedPool.values.count)
    FloatPooling.run(.average, pool, input: memory.copy(input), activation: .none, output: poolOutput, threadCount: 2)
    assertMatches(floats(poolOutput, expectedPool.values.count), expectedPool.values, "average pool")
  }
}
