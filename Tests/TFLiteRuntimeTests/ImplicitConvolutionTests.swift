import XCTest

import TFLiteFormat
import TFLiteLinearAlgebra
@testable import TFLiteRuntime

/// The float CONV_2D route without im2col (`ImplicitConvolution`) on the generated GEMM kernels of
/// every instruction set this machine runs: random shapes (first layers of 1–4 channels and wider
/// ones, strides 1–3, SAME and VALID, windows larger than the input, output channels that leave a
/// partial last panel) against the reference convolution, and against the im2col GEMM route on the
/// same kernels within float rounding (the GEMM calls group the depth differently).
final class ImplicitConvolutionTests: XCTestCase {
  func testImplicitRouteMatchesReferenceAndIm2colOnEveryLevel() throws {
    let levels = GeneratedKernelISA.allCases.compactMap { GeneratedFloatKernels.kernels(for: $0) }
    var random = SeededGenerator(seed: 41)
    var checked = 0
    for trial in 0..<40 {
      let batch = random.int(1...2)
      let (height, width) = (random.int(1...12), random.int(1...12))
      let channels = trial % 2 == 0 ? random.int(1...4) : random.int(5...40)
      let outputChannels = [1, 8, 16, 24, 33, random.int(1...40)][trial % 6]
      let (filterHeight, filterWidth) = (random.int(1...5), random.int(1...5))
      let strides = (random.int(1...3), random.int(1...3))
      let same = random.bool()
      let (function, range): (ActivationFunctionType, FloatClampRange) =
        [(.none, .none), (.relu, .relu), (.relu6, .relu6)][trial % 3]
      guard
        let (heightAxis, widthAxis) = windowAxes(
          height: height, width: width, filter: (filterHeight, filterWidth), strides: strides, same: same)
      else { continue }
      let shape = ConvolutionShape(
        batch: batch, inputChannels: channels, groupInputChannels: channels, outputChannels: outputChannels,
        height: heightAxis, width: widthAxis)
      guard !shape.readsInputInPlace, let implicit = ImplicitConvolution(shape) else {
        continue
      }
      let input = random.floats(batch * height * width * channels)
      let filter = random.floats(outputChannels * filterHeight * filterWidth * channels)
      let bias = trial % 4 == 3 ? nil : random.floats(outputChannels)
      let expected = referenceConvolution(
        input: input, batch: batch, height: height, width: width, channels: channels, filter: filter,
        outputChannels: outputChannels, filterHeight: filterHeight, filterWidth: filterWidth, filterChannels: channels,
        bias: bias, strides: strides, dilations: (1, 1), same: same, lower: range.lower, upper: range.upper)
      var packed = [Float](repeating: 0, count: PanelPacking.packedCount(depth: shape.gemmDepth, columns: outputChannels))
      filter.withUnsafeBufferPointer { source in
        packed.withUnsafeMutableBufferPointer { destination in
          PanelPacking.pack(
            source.baseAddress!, layout: .columnMajor(depth: shape.gemmDepth), depth: shape.gemmDepth,
            columns: outputChannels, into: destination.baseAddress!)
        }
      }
      let paddedBias = bias.map { PanelPacking.paddedBias($0, groups: 1, columns: outputChannels) }
      for kernels in levels {
        for threads in [1, 2] {
          let implicitOutput = run(threads: threads, count: expected.values.count, scratchBytes: implicit.workerScratchBytes * threads) {
            output, scratch in
            withOptionalPointer(paddedBias) { biasPointer in
              implicit.run(
                kernels: kernels, input: input, filter: packed, bias: biasPointer, activation: range, output: output,
                threadCount: threads, scratch: scratch)
            }
          }
          let context = "trial \(trial) \(kernels.isa) threads \(threads) \(function)"
          assertMatches(implicitOutput, expected.values, context)
          let plan = FloatConvolution.plan(shape, threadCount: threads)
          let im2colOutput = run(
            threads: threads, count: expected.values.count,
            scratchBytes: FloatConvolution.scratchBytes(shape, threadCount: threads)
          ) { output, scratch in
            withOptionalPointer(paddedBias) { biasPointer in
              input.withUnsafeBufferPointer { inputBuffer in
                FloatGEMM.multiply(
                  plan: plan, lhs: Im2colLeftOperand(input: inputBuffer.baseAddress!, shape: shape, channelOffset: 0),
                  rhs: packed,
                  output: output, outputStride: outputChannels,
                  epilogue: FloatEpilogue(bias: biasPointer, activation: range), threadCount: threads, scratch: scratch,
                  generatedKernels: kernels)
              }
            }
          }
          for (index, (implicitValue, im2colValue)) in zip(implicitOutput, im2colOutput).enumerated()
          where abs(implicitValue - im2colValue) > 1e-5 * max(1, abs(im2colValue)) {
            XCTFail("\(context): element \(index) is \(implicitValue), im2col \(im2colValue)")
            break
          }
          checked += 1
        }
      }
    }
    if !levels.isEmpty { XCTAssertGreaterThan(checked, 40) }
  }

  /// Padding wider than the filter (a zero PAD folded into the convolution: pixels whose window is
  /// all padding columns, and rows whose window is all padding rows) on the padded-rows route,
  /// against the reference convolution of the explicitly padded input with VALID padding.
  func testFoldedPaddingWiderThanTheFilterMatchesReferenceOnEveryLevel() throws {
    let levels = GeneratedKernelISA.allCases.compactMap { GeneratedFloatKernels.kernels(for: $0) }
    var random = SeededGenerator(seed: 43)
    let (height, width, channels, outputChannels) = (5, 6, 5, 20)
    let (padTop, padBottom, padLeft, padRight) = (4, 1, 4, 2)
    for stride in [1, 2] {
      let heightAxis = try XCTUnwrap(
        WindowAxis(inputSize: height, filterSize: 3, stride: stride, dilation: 1, paddingBefore: padTop, paddingAfter: padBottom))
      let widthAxis = try XCTUnwrap(
        WindowAxis(inputSize: width, filterSize: 3, stride: stride, dilation: 1, paddingBefore: padLeft, paddingAfter: padRight))
      let shape = ConvolutionShape(
        batch: 1, inputChannels: channels, groupInputChannels: channels, outputChannels: outputChannels,
        height: heightAxis, width: widthAxis)
      let implicit = try XCTUnwrap(ImplicitConvolution(shape))
      XCTAssertEqual(
        implicit.paddedRows, .init(before: padLeft, columns: (widthAxis.outputSize - 1) * stride + 3), "stride \(stride)")
      let input = random.floats(height * width * channels)
      let filter = random.floats(outputChannels * 9 * channels)
      let bias = random.floats(outputChannels)
      let (paddedHeight, paddedWidth) = (height + padTop + padBottom, width + padLeft + padRight)
      var padded = [Float](repeating: 0, count: paddedHeight * paddedWidth * channels)
      for y in 0..<height {
        for x in 0..<width {
          for channel in 0..<channels {
            padded[((y + padTop) * paddedWidth + x + padLeft) * channels + channel] = input[(y * width + x) * channels + channel]
          }
        }
      }
      let expected = referenceConvolution(
        input: padded, batch: 1, height: paddedHeight, width: paddedWidth, channels: channels, filter: filter,
        outputChannels: outputChannels, filterHeight: 3, filterWidth: 3, filterChannels: channels, bias: bias,
        strides: (stride, stride), dilations: (1, 1), same: false, lower: 0, upper: 6)
      var packed = [Float](repeating: 0, count: PanelPacking.packedCount(depth: shape.gemmDepth, columns: outputChannels))
      filter.withUnsafeBufferPointer { source in
        packed.withUnsafeMutableBufferPointer { destination in
          PanelPacking.pack(
            source.baseAddress!, layout: .columnMajor(depth: shape.gemmDepth), depth: shape.gemmDepth,
            columns: outputChannels, into: destination.baseAddress!)
        }
      }
      let paddedBias = PanelPacking.paddedBias(bias, groups: 1, columns: outputChannels)
      for kernels in levels {
        for threads in [1, 2] {
          let output = run(threads: threads, count: expected.values.count, scratchBytes: implicit.workerScratchBytes * threads) {
            output, scratch in
            implicit.run(
              kernels: kernels, input: input, filter: packed, bias: paddedBias, activation: .relu6, output: output,
              threadCount: threads, scratch: scratch)
          }
          assertMatches(output, expected.values, "stride \(stride) \(kernels.isa) threads \(threads)")
        }
      }
    }
  }

  /// The route applies to groups of one without dilation only, and the CONV_2D kernel names it.
  func testRouteChoiceAndDescription() throws {
    let axis = try XCTUnwrap(WindowAxis(inputSize: 8, filterSize: 3, stride: 2, dilation: 1, samePadding: true))
    let dilated = try XCTUnwrap(WindowAxis(inputSize: 8, filterSize: 3, stride: 1, dilation: 2, samePadding: true))
    XCTAssertNotNil(ImplicitConvolution(ConvolutionShape(batch: 1, inputChannels: 3, groupInputChannels: 3, outputChannels: 8, height: axis, width: axis)))
    XCTAssertNil(ImplicitConvolution(ConvolutionShape(batch: 1, inputChannels: 4, groupInputChannels: 2, outputChannels: 8, height: axis, width: axis)))
    XCTAssertNil(ImplicitConvolution(ConvolutionShape(batch: 1, inputChannels: 3, groupInputChannels: 3, outputChannels: 8, height: axis, width: dilated)))
    // SAME 3×3 stride 2 over 8: pixels 0–2 see all columns, pixel 3 only the first two.
    let shape = ConvolutionShape(batch: 1, inputChannels: 3, groupInputChannels: 3, outputChannels: 8, height: axis, width: axis)
    XCTAssertEqual(
      ImplicitConvolution(shape)?.runs,
      [.init(start: 0, count: 3, columns: 0..<3), .init(start: 3, count: 1, columns: 0..<2)])
    // So its rows are copied as 9 columns (no zero column before the input's 8 columns, one after
    // for pixel 3's window); a VALID convolution reads the input in place.
    XCTAssertEqual(ImplicitConvolution(shape)?.paddedRows, .init(before: 0, columns: 9))
    let valid = try XCTUnwrap(WindowAxis(inputSize: 8, filterSize: 3, stride: 2, dilation: 1, samePadding: false))
    XCTAssertNil(
      ImplicitConvolution(
        ConvolutionShape(batch: 1, inputChannels: 3, groupInputChannels: 3, outputChannels: 8, height: valid, width: valid)
      )?.paddedRows)
    let kernel = try preparedConvolution(input: [1, 8, 8, 3], outputChannels: 8, stride: 2)
    if let kernels = GeneratedFloatKernels.current {
      XCTAssertEqual(kernel.kernelDescription, "implicit GEMM, generated \(kernels.isa)")
    }
    GeneratedFloatKernels.$areAllowed.withValue(false) {
      XCTAssertEqual(kernel.kernelDescription, KernelDescription.floatGEMM)
    }
  }

  /// Output rows shorter than the tallest AVX-512 tile run on im2col once the input has 16
  /// channels or more; fewer channels, or rows of 14 pixels and more, keep this route.
  func testShortRowsOfManyChannelsRunOnIm2col() throws {
    func shape(channels: Int, outputWidth: Int) throws -> ConvolutionShape {
      let axis = try XCTUnwrap(WindowAxis(inputSize: outputWidth, filterSize: 3, stride: 1, dilation: 1, samePadding: true))
      return ConvolutionShape(
        batch: 1, inputChannels: channels, groupInputChannels: channels, outputChannels: 32, height: axis, width: axis)
    }
    XCTAssertFalse(ImplicitConvolution.outrunsIm2col(try shape(channels: 16, outputWidth: 13)))
    XCTAssertFalse(ImplicitConvolution.outrunsIm2col(try shape(channels: 512, outputWidth: 7)))
    XCTAssertTrue(ImplicitConvolution.outrunsIm2col(try shape(channels: 15, outputWidth: 7)))
    XCTAssertTrue(ImplicitConvolution.outrunsIm2col(try shape(channels: 64, outputWidth: 14)))
    let kernel = try preparedConvolution(input: [1, 7, 7, 16], outputChannels: 8, stride: 1)
    XCTAssertEqual(kernel.kernelDescription, KernelDescription.floatGEMM)
  }

  /// A one-thread float CONV_2D (3×3 filter, SAME, no activation) of all-ones input and weights, prepared.
  private func preparedConvolution(input: [Int], outputChannels: Int, stride: Int32) throws -> any Kernel {
    let filter = [outputChannels, 3, 3, input[3]]
    let node = KernelHarness.node(
      "CONV_2D",
      [
        KernelHarness.floatTensor(0, input, [Float](repeating: 1, count: input.reduce(1, *))),
        KernelHarness.floatTensor(1, filter, [Float](repeating: 1, count: filter.reduce(1, *)), constant: true),
      ], KernelHarness.outputTensor(2),
      .conv2DOptions(Conv2DOptions(padding: .same, strideW: stride, strideH: stride, fusedActivationFunction: .none)))
    let kernel = try KernelDispatch.makeKernel(for: node)
    var context = PrepareContext(threadCount: 1)
    try kernel.prepare(&context)
    return kernel
  }

  /// Runs `body` on a zeroed output of `count` floats and 64-byte aligned scratch filled with NaN
  /// bit patterns (so a kernel that reads scratch it did not write shows it).
  private func run(
    threads: Int, count: Int, scratchBytes: Int, _ body: (UnsafeMutablePointer<Float>, UnsafeMutableRawPointer) -> Void
  ) -> [Float] {
    let scratch = UnsafeMutableRawPointer.allocate(byteCount: max(scratchBytes, 64), alignment: 64)
    defer { scratch.deallocate() }
    scratch.initializeMemory(as: UInt8.self, repeating: 0xFF, count: max(scratchBytes, 64))
    var output = [Float](repeating: 0, count: count)
    output.withUnsafeMutableBufferPointer { body($0.baseAddress!, scratch) }
    return output
  }
}

/// `body` with a pointer to `values`' storage, or nil.
private func withOptionalPointer<Result>(_ values: [Float]?, _ body: (UnsafePointer<Float>?) -> Result) -> Result {
  guard let values else { return body(nil) }
  return values.withUnsafeBufferPointer { body($0.baseAddress) }
}
