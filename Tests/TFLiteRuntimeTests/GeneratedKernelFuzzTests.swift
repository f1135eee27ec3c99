import XCTest

import TFLiteFormat
import TFLiteLinearAlgebra
@testable import TFLiteRuntime

/// Fuzzing of what reaches the run-time generated kernels: random and hostile-but-valid
/// DEPTHWISE_CONV_2D (float, int8, uint8) and int8 CONV_2D nodes go through the registered kernels'
/// validated `prepare`, then run on the generated kernels (the registered route, and for the
/// depthwise ones every instruction set this machine runs) and on the Swift kernels. Every tensor
/// and the scratch sit between guard zones of 0xFF bytes (NaN as floats, so a stray float read
/// shows in the results); the guards must stay whole, every output element must be written, and
/// the routes must agree (bit for bit for 8-bit, within FMA rounding for float). Shapes `prepare`
/// rejects throw a descriptive error, and their kernels then refuse to run.
final class GeneratedKernelFuzzTests: XCTestCase {
  /// The depthwise kernels of every instruction set this machine runs (AVX-512 with and without
  /// the four-tap kernels).
  private var runnableDepthwiseKernels: [GeneratedDepthwiseKernels] { GeneratedDepthwiseKernels.runnableSets }

  /// Float DEPTHWISE_CONV_2D: Swift, the registered generated route and every instruction set agree
  /// within FMA rounding; nothing reads a guard (NaN) or writes past a buffer.
  func testRandomFloatDepthwiseShapesAgreeOnEveryRoute() throws {
    var random = SeededGenerator(seed: 71)
    for trial in 0..<60 {
      let fuzz = FuzzedWindow(random: &random, trial: trial)
      let memory = GuardedMemory()
      let input = memory.tensor(0, .float32, fuzz.inputShape, bytes: bytesOf(random.floats(fuzz.inputCount)))
      let filter = memory.tensor(1, .float32, fuzz.filterShape, bytes: bytesOf(random.floats(fuzz.filterCount)))
      let bias = random.bool() ? memory.tensor(2, .float32, [fuzz.outputChannels], bytes: bytesOf(random.floats(fuzz.outputChannels))) : nil
      let activation: ActivationFunctionType = [.none, .relu, .relu6, .reluN1To1][trial % 4]
      let options = fuzz.depthwiseOptions(activation)
      let label = "float trial \(trial) \(fuzz)"
      var results: [[Float]] = []
      var preparedShape: DepthwiseShape?
      for generated in [false, true] {
        let output = RuntimeTensor(
          index: 3, name: "output", type: .float32, shape: [], shapeSignature: [], quantization: nil, isVariable: false,
          constantData: nil)
        let node = KernelHarness.node("DEPTHWISE_CONV_2D", [input, filter, bias], output, .depthwiseConv2DOptions(options))
        guard
          let kernel = try memory.prepareAndRun(node, output: output, generated: generated, label: label)
            as? DepthwiseConv2DKernel
        else { return XCTFail("\(label): not the float depthwise kernel") }
        preparedShape = kernel.shape
        results.append(memory.floats(output))
      }
      // Every instruction set directly on the prepared geometry.
      if let shape = preparedShape, results[0].count > 0 {
        let range = try FloatClampRange(activation, op: "DEPTHWISE_CONV_2D")
        for kernels in runnableDepthwiseKernels {
          let output = memory.block("output \(kernels.isa)", bytes: results[0].count * 4)
          let scratch = memory.block("scratch \(kernels.isa)", bytes: FloatDepthwiseConvolution.scratchBytes(shape))
          FloatDepthwiseConvolution.run(
            shape, input: input.pointer(as: Float.self), filter: filter.pointer(as: Float.self),
            bias: bias.map { UnsafePointer($0.pointer(as: Float.self)) }, activation: range,
            output: output.assumingMemoryBound(to: Float.self), threadCount: 1 + trial % 2, scratch: scratch,
            generatedKernels: kernels)
          results.append(Array(UnsafeBufferPointer(start: output.assumingMemoryBound(to: Float.self), count: results[0].count)))
        }
      }
      for (route, values) in results.enumerated() {
        XCTAssertFalse(values.contains { $0.isNaN }, "\(label) route \(route): an output not written or a guard read")
        for (index, (swift, other)) in zip(results[0], values).enumerated() where abs(swift - other) > 1e-5 {
          XCTFail("\(label) route \(route) element \(index): Swift \(swift), generated \(other)")
          break
        }
      }
      XCTAssertEqual(memory.damagedGuards(), [], label)
    }
  }

  /// int8/uint8 DEPTHWISE_CONV_2D (per-tensor and per-channel): Swift, the registered generated
  /// route and every instruction set give the same bytes; nothing writes past a buffer.
  func testRandomEightBitDepthwiseShapesAreBitExactOnEveryRoute() throws {
    var random = SeededGenerator(seed: 72)
    for trial in 0..<60 {
      try assertEightBitDepthwiseRoutesAgree(FuzzedWindow(random: &random, trial: trial), trial: trial, random: &random)
    }
  }

  /// The same for every input channel count from 1 to 70 (the generated kernels' last partial
  /// 16-channel block: a k-masked store on AVX-512, a buffer copy on AVX2), with multipliers,
  /// strides, dilations, SAME/VALID, 3×3, 5×5 and other filters, clamps, int8 and uint8.
  func testEightBitDepthwiseChannelCountsOneToSeventyAreBitExactOnEveryRoute() throws {
    var random = SeededGenerator(seed: 74)
    for channels in 1...70 {
      let fuzz = FuzzedWindow(random: &random, trial: channels, channels: channels)
      try assertEightBitDepthwiseRoutesAgree(fuzz, trial: channels, random: &random)
    }
  }

  /// The four-tap route (AVX512-VNNI with VBMI) on shapes it takes: no dilation, 1–7 filter rows,
  /// 1–8 filter columns (3×3 and 5×5 half the time), strides 1–4 (and a larger vertical one),
  /// channels 1–70 with multipliers, SAME/VALID, int8 and uint8 (weights with zero points, so
  /// the corrected form runs), per-channel, clamps: the route is taken where this machine has it,
  /// and it gives the Swift route's and every other instruction set's bytes.
  func testEightBitDepthwiseFourTapRouteIsBitExactOnEveryRoute() throws {
    var random = SeededGenerator(seed: 75)
    var taken = 0
    for trial in 0..<70 {
      let fuzz = FuzzedWindow(random: &random, trial: trial, fourTapChannels: trial + 1)
      if try assertEightBitDepthwiseRoutesAgree(fuzz, trial: trial, random: &random) { taken += 1 }
    }
    if GeneratedQuadTapDepthwiseKernels.supported != nil {
      XCTAssertEqual(taken, 70, "the four-tap route must take every such shape")
    } else {
      XCTAssertEqual(taken, 0)
    }
  }

  /// Runs one fuzzed 8-bit depthwise convolution on the Swift route, the registered generated route
  /// and every instruction set's kernels, each into guarded memory, and asserts equal bytes.
  /// Returns true when the convolution has a four-tap route.
  @discardableResult
  private func assertEightBitDepthwiseRoutesAgree(_ fuzz: FuzzedWindow, trial: Int, random: inout SeededGenerator) throws -> Bool {
    let memory = GuardedMemory()
    let quantized = FuzzedQuantization(random: &random, signed: trial % 2 == 0, perChannel: trial % 4 == 0, channels: fuzz.outputChannels)
    let input = memory.tensor(
      0, quantized.type, fuzz.inputShape, bytes: quantized.randomBytes(fuzz.inputCount, &random),
      quantization: quantized.input)
    let filter = memory.tensor(
      1, quantized.type, fuzz.filterShape, bytes: quantized.randomWeights(fuzz.filterCount, &random),
      quantization: quantized.weights(axis: 3))
    let bias = memory.tensor(
      2, .int32, [fuzz.outputChannels], bytes: bytesOf((0..<fuzz.outputChannels).map { _ in Int32(random.int(-5000...5000)) }),
      quantization: quantized.bias)
    let options = fuzz.depthwiseOptions([.none, .relu, .relu6][trial % 3])
    let label = "8-bit trial \(trial) \(quantized.type.name) \(fuzz)"
    var results: [[UInt8]] = []
    var convolution: ByteDepthwiseConvolution?
    for generated in [false, true] {
      let output = RuntimeTensor(
        index: 3, name: "output", type: quantized.type, shape: [], shapeSignature: [], quantization: quantized.output,
        isVariable: false, constantData: nil)
      let node = KernelHarness.node("DEPTHWISE_CONV_2D", [input, filter, bias], output, .depthwiseConv2DOptions(options))
      guard
        let kernel = try memory.prepareAndRun(node, output: output, generated: generated, label: label)
          as? IntegerDepthwiseConv2DKernel
      else {
        XCTFail("\(label): not the 8-bit depthwise kernel")
        return false
      }
      convolution = kernel.byteDepthwise
      results.append(memory.bytes(output))
      // Every instruction set on the prepared convolution, into a fresh guarded output.
      if generated, let convolution {
        for kernels in runnableDepthwiseKernels {
          memory.place(output, "output \(kernels.isa)")
          try convolution.run(input: input, output: output, threadCount: 1 + trial % 2, generatedKernels: kernels)
          results.append(memory.bytes(output))
        }
      }
    }
    XCTAssertNotNil(convolution, label)
    for (route, values) in results.enumerated() { XCTAssertEqual(values, results[0], "\(label) route \(route)") }
    XCTAssertEqual(memory.damagedGuards(), [], label)
    return convolution?.quadTaps != nil
  }

  /// int8/uint8 CONV_2D: the generated dot-product route (taken for int8 wherever this machine
  /// has VNNI) gives the Swift route's bytes; nothing writes past a buffer.
  func testRandomEightBitConvolutionShapesAreBitExactOnTheDotProductKernels() throws {
    var random = SeededGenerator(seed: 73)
    for trial in 0..<40 {
      let fuzz = FuzzedWindow(random: &random, trial: trial, convolution: true)
      let memory = GuardedMemory()
      let quantized = FuzzedQuantization(random: &random, signed: trial % 2 == 0, perChannel: trial % 4 == 0, channels: fuzz.convolutionOutputs)
      let input = memory.tensor(
        0, quantized.type, fuzz.inputShape, bytes: quantized.randomBytes(fuzz.inputCount, &random),
        quantization: quantized.input)
      let filter = memory.tensor(
        1, quantized.type, fuzz.convolutionFilterShape, bytes: quantized.randomWeights(fuzz.convolutionFilterCount, &random),
        quantization: quantized.weights(axis: 0))
      let bias = memory.tensor(
        2, .int32, [fuzz.convolutionOutputs], bytes: bytesOf((0..<fuzz.convolutionOutputs).map { _ in Int32(random.int(-5000...5000)) }),
        quantization: quantized.bias)
      let options = Conv2DOptions(
        padding: fuzz.same ? .same : .valid, strideW: Int32(fuzz.strides.width), strideH: Int32(fuzz.strides.height),
        fusedActivationFunction: [.none, .relu][trial % 2], dilationWFactor: Int32(fuzz.dilations.width),
        dilationHFactor: Int32(fuzz.dilations.height))
      let label = "CONV_2D trial \(trial) \(quantized.type.name) \(fuzz)"
      var results: [[UInt8]] = []
      for generated in [false, true] {
        let output = RuntimeTensor(
          index: 3, name: "output", type: quantized.type, shape: [], shapeSignature: [], quantization: quantized.output,
          isVariable: false, constantData: nil)
        let node = KernelHarness.node("CONV_2D", [input, filter, bias], output, .conv2DOptions(options))
        let kernel = try memory.prepareAndRun(node, output: output, generated: generated, label: label)
        // int8 weights always fit the signed bytes of the dot-product kernels.
        if generated && quantized.type == .int8 && GeneratedDotProductKernels.preferred != nil {
          XCTAssertTrue(kernel.kernelDescription?.contains("generated") ?? false, "\(label): \(kernel.kernelDescription ?? "")")
        }
        results.append(memory.bytes(output))
      }
      XCTAssertEqual(results[1], results[0], label)
      XCTAssertEqual(memory.damagedGuards(), [], label)
    }
  }

  /// int8/uint8 TRANSPOSE_CONV: the per-phase GEMM route gives the Int64 loop's bytes with every
  /// kernel (Swift and each dot-product instruction set this machine runs), on 1 and 2 threads, over
  /// random shapes, strides 1–3, filters 1–5 (shorter than the stride too: phases no tap reaches),
  /// SAME and VALID paddings, output sizes that are not a multiple of the stride, channel counts
  /// around the 16-lane blocks, per-tensor and per-channel quantizations, with and without a bias;
  /// nothing writes past a buffer (the phases store every stride-th pixel under a column mask or
  /// through a tile), and a second run on the same prepared kernel gives the same bytes.
  func testRandomEightBitTransposeConvShapesAreBitExactOnEveryRoute() throws {
    var random = SeededGenerator(seed: 74)
    let kernelLevels: [GeneratedDotProductKernels?] =
      [nil] + DotProductISA.allCases.compactMap { GeneratedDotProductKernels.kernels(for: $0) }
    var byteRouteTrials = 0
    for trial in 0..<60 {
      let signed = trial % 2 == 0
      let (inputHeight, inputWidth) = (random.int(1...6), random.int(1...6))
      let (depth, outputChannels) = (random.int(1...40), [1, 2, 3, 12, 16, 17, 33][random.int(0...6)])
      let filter = (random.int(1...5), random.int(1...5))
      let strides = (random.int(1...3), random.int(1...3))
      let same = random.bool()
      // An output extent that CONV_2D with this filter and stride maps back onto the input.
      func outputExtent(_ input: Int, _ filter: Int, _ stride: Int) -> Int {
        same ? input * stride - random.int(0...(stride - 1)) : (input - 1) * stride + filter + random.int(0...(stride - 1))
      }
      let outputShape = [
        random.int(1...2), outputExtent(inputHeight, filter.0, strides.0), outputExtent(inputWidth, filter.1, strides.1),
        outputChannels,
      ]
      let memory = GuardedMemory()
      let quantized = FuzzedQuantization(random: &random, signed: signed, perChannel: trial % 4 == 0, channels: outputChannels)
      let inputShape = [outputShape[0], inputHeight, inputWidth, depth]
      let input = memory.tensor(
        0, quantized.type, inputShape, bytes: quantized.randomBytes(inputShape.reduce(1, *), &random),
        quantization: quantized.input)
      let weightCount = outputChannels * filter.0 * filter.1 * depth
      let weightQuantization = quantized.weights(axis: 0)
      // Every other uint8 trial keeps w − zw within a signed byte, as trained uint8 weights mostly do.
      let weightZeroPoint = weightQuantization.zeroPoints[0]
      let weightBytes =
        trial % 4 == 1
        ? (0..<weightCount).map { _ in UInt8(clamping: weightZeroPoint + random.int(-100...100)) }
        : quantized.randomWeights(weightCount, &random)
      let weights = memory.tensor(
        1, quantized.type, [outputChannels, filter.0, filter.1, depth], bytes: weightBytes,
        quantization: weightQuantization)
      let bias =
        trial % 3 == 2
        ? nil
        : memory.tensor(
          2, .int32, [outputChannels], bytes: bytesOf((0..<outputChannels).map { _ in Int32(random.int(-5000...5000)) }),
          quantization: quantized.bias)
      let shapeTensor = memory.tensor(3, .int32, [4], bytes: bytesOf(outputShape.map { Int32($0) }))
      let output = RuntimeTensor(
        index: 4, name: "output", type: quantized.type, shape: [], shapeSignature: [], quantization: quantized.output,
        isVariable: false, constantData: nil)
      let options = TransposeConvOptions(
        padding: same ? .same : .valid, strideW: Int32(strides.1), strideH: Int32(strides.0),
        fusedActivationFunction: [.none, .relu][trial % 2])
      let node = KernelHarness.node(
        "TRANSPOSE_CONV", [shapeTensor, weights, input] + (bias.map { [$0] } ?? []), output, .transposeConvOptions(options))
      let label = "TRANSPOSE_CONV trial \(trial) \(quantized.type.name) input \(inputShape) output \(outputShape) "
        + "filter \(filter) strides \(strides) \(same ? "SAME" : "VALID") bias \(bias != nil)"
      guard let kernel = try memory.prepareAndRun(node, output: output, generated: true, label: label)
        as? IntegerTransposeConvKernel, let shape = kernel.shape, let arithmetic = kernel.arithmetic
      else { return XCTFail("\(label): not the integer TRANSPOSE_CONV kernel") }
      guard let prepared = kernel.byteTransposeConvolution else { continue }
      byteRouteTrials += 1
      var results = [memory.bytes(output)]
      try kernel.eval(EvalContext(threadCount: 2, scratch: memory.block("scratch again", bytes: prepared.scratchBytes)))
      results.append(memory.bytes(output))
      for kernels in kernelLevels {
        for threads in [1, 2] {
          guard
            let convolution = ByteTransposeConvolution(
              shape: shape, arithmetic: arithmetic, inputType: quantized.type, threadCount: threads, kernels: kernels)
          else { return XCTFail("\(label): no byte route") }
          memory.place(output, "output \(kernels.map { "\($0.isa)" } ?? "Swift") \(threads) threads")
          let scratch = memory.block("scratch", bytes: convolution.scratchBytes)
          let context = EvalContext(threadCount: threads, scratch: scratch)
          if signed {
            convolution.run(input: input.data!, output: output.pointer(as: Int8.self), context: context, scratch: scratch)
          } else {
            convolution.run(input: input.data!, output: output.pointer(as: UInt8.self), context: context, scratch: scratch)
          }
          results.append(memory.bytes(output))
        }
      }
      // The Int64 loop: the kernel without its byte route, over the widened input.
      kernel.byteTransposeConvolution = nil
      memory.place(output, "output Int64 loop")
      try kernel.eval(
        EvalContext(threadCount: 1, scratch: memory.block("widened", bytes: input.elementCount * MemoryLayout<Int32>.stride)))
      let expected = memory.bytes(output)
      for (route, values) in results.enumerated() { XCTAssertEqual(values, expected, "\(label) route \(route)") }
      XCTAssertEqual(memory.damagedGuards(), [], label)
    }
    XCTAssertEqual(byteRouteTrials, 60, "every 8-bit trial takes the byte route (uint8 weights beyond a signed byte on the Swift kernel)")
  }

  /// Shapes and options `prepare` must reject, for the float and 8-bit depthwise kernels and the
  /// 8-bit convolution: each throws a `KernelError` that names the op, and the kernel then refuses
  /// to evaluate (so no generated kernel ever sees them).
  func testRejectedShapesNeverReachAGenerator() throws {
    let huge = 1 << 40
    // (input shape, filter shape for depthwise / for CONV_2D, strides, dilations, padding, bias count).
    let cases: [(String, [Int], [Int], [Int], (Int32, Int32), (Int32, Int32), Padding, Int)] = [
      ("stride 0", [1, 5, 5, 16], [1, 3, 3, 16], [16, 3, 3, 16], (0, 1), (1, 1), .same, 16),
      ("negative stride", [1, 5, 5, 16], [1, 3, 3, 16], [16, 3, 3, 16], (1, -2), (1, 1), .same, 16),
      ("dilation 0", [1, 5, 5, 16], [1, 3, 3, 16], [16, 3, 3, 16], (1, 1), (0, 1), .same, 16),
      ("negative dilation", [1, 5, 5, 16], [1, 3, 3, 16], [16, 3, 3, 16], (1, 1), (1, -3), .valid, 16),
      ("filter wider than a VALID input", [1, 5, 1, 16], [1, 3, 3, 16], [16, 3, 3, 16], (1, 1), (1, 1), .valid, 16),
      ("dilated filter past a VALID input", [1, 9, 9, 16], [1, 3, 3, 16], [16, 3, 3, 16], (1, 1), (Int32.max, 1), .valid, 16),
      ("filter channels not a multiple of the input's", [1, 5, 5, 16], [1, 3, 3, 24], [24, 3, 3, 5], (1, 1), (1, 1), .same, 24),
      ("filter of rank 3", [1, 5, 5, 16], [3, 3, 16], [3, 3, 16], (1, 1), (1, 1), .same, 16),
      ("input of rank 2", [25, 16], [1, 3, 3, 16], [16, 3, 3, 16], (1, 1), (1, 1), .same, 16),
      ("zero input channels", [1, 5, 5, 0], [1, 3, 3, 16], [16, 3, 3, 0], (1, 1), (1, 1), .same, 16),
      ("bias of the wrong size", [1, 5, 5, 16], [1, 3, 3, 16], [16, 3, 3, 16], (1, 1), (1, 1), .same, 15),
      ("output element count overflows", [huge, huge, 4, 16], [1, 1, 1, 16], [16, 1, 1, 16], (1, 1), (1, 1), .same, 16),
    ]
    for (name, inputShape, depthwiseFilter, convolutionFilter, strides, dilations, padding, biasCount) in cases {
      for (opName, filterShape) in [("DEPTHWISE_CONV_2D", depthwiseFilter), ("CONV_2D", convolutionFilter)] {
        for type in [ElementType.float32, .int8, .uint8] where opName == "DEPTHWISE_CONV_2D" || type != .float32 {
          let label = "\(opName) \(type.name): \(name)"
          let quantization = type == .float32 ? nil : Quantization(scales: [0.05], zeroPoints: [type == .int8 ? 0 : 128])
          // Only the constant filter and bias get memory: prepare reads no other tensor's values.
          let memory = GuardedMemory()
          let input = RuntimeTensor(
            index: 0, name: "input", type: type, shape: inputShape, shapeSignature: inputShape, quantization: quantization,
            isVariable: false, constantData: nil)
          let filter = memory.tensor(
            1, type, filterShape, bytes: [UInt8](repeating: 1, count: filterShape.reduce(type.byteCount, *)),
            quantization: quantization)
          let bias = memory.tensor(
            2, type == .float32 ? .float32 : .int32, [biasCount], bytes: [UInt8](repeating: 0, count: biasCount * 4),
            quantization: type == .float32 ? nil : Quantization(scales: [0.0025], zeroPoints: [0]))
          let output = RuntimeTensor(
            index: 3, name: "output", type: type, shape: [], shapeSignature: [], quantization: quantization, isVariable: false,
            constantData: nil)
          let options: BuiltinOptions =
            opName == "CONV_2D"
            ? .conv2DOptions(
              Conv2DOptions(
                padding: padding, strideW: strides.1, strideH: strides.0, dilationWFactor: dilations.1,
                dilationHFactor: dilations.0))
            : .depthwiseConv2DOptions(
              DepthwiseConv2DOptions(
                padding: padding, strideW: strides.1, strideH: strides.0, depthMultiplier: 1, dilationWFactor: dilations.1,
                dilationHFactor: dilations.0))
          let node = KernelHarness.node(opName, [input, filter, bias], output, options)
          let kernel: any Kernel
          do {
            kernel = try KernelDispatch.makeKernel(for: node)
          } catch {
            XCTAssertTrue("\(error)".contains(opName), "\(label): \(error)")
            continue
          }
          var context = PrepareContext(threadCount: 1)
          XCTAssertThrowsError(try kernel.prepare(&context), label) { error in
            XCTAssertTrue(error is KernelError, "\(label): \(error)")
            XCTAssertTrue("\(error)".contains(opName), "\(label): \(error)")
          }
          XCTAssertThrowsError(try kernel.eval(EvalContext(threadCount: 1, scratch: nil)), "\(label): ran unprepared")
        }
      }
    }
  }

  /// int8/uint8 ADD, SUB and MUL (and the byte tables of LOGISTIC and TANH) through the registered
  /// kernels' validated `prepare`, with generated kernels on and off: random and hostile-but-valid
  /// shapes (empty, one element, 65536 outputs or more, which look up their table of every input
  /// pair, a channel period longer than the repeating buffer's 4 KiB, a
  /// broadcast operand on either side, per-row operands the generated route does not take, 1 and
  /// 2 threads) give the same bytes and no guard is touched.
  func testRandomEightBitElementwiseShapesAreBitExactWithGeneratedKernelsOnAndOff() throws {
    var random = SeededGenerator(seed: 73)
    for trial in 0..<90 {
      let hostile = trial % 5 == 4
      // At least 65536 outputs: the operation is served from its table of every input pair.
      let tabulated = trial % 9 == 7
      let signed = trial % 2 == 0
      let type: ElementType = signed ? .int8 : .uint8
      let range = signed ? -128...127 : 0...255
      let height = hostile ? [0, 1, 2][random.int(0...2)] : tabulated ? random.int(40...48) : random.int(1...12)
      let width = tabulated ? 40 : random.int(1...12)
      let channels = hostile ? [1, 4097, 5000][random.int(0...2)] : tabulated ? random.int(41...70) : random.int(1...70)
      let full = [1, height, width, channels]
      let other: [Int] = [full, [channels], [1, 1, 1, channels], [1], [], [1, height, 1, 1]][random.int(0...5)]
      let (lhsShape, rhsShape) = random.bool() ? (full, other) : (other, full)
      let opName = ["ADD", "SUB", "MUL", "LOGISTIC", "TANH"][trial % 5]
      let unary = opName == "LOGISTIC" || opName == "TANH"
      let memory = GuardedMemory()
      func quantization(scale: Float? = nil, zeroPoint: Int? = nil) -> Quantization {
        Quantization(
          scales: [scale ?? Float(random.int(1...200)) / 400], zeroPoints: [zeroPoint ?? random.int(range)])
      }
      let lhs = memory.tensor(
        0, type, lhsShape, bytes: (0..<lhsShape.reduce(1, *)).map { _ in UInt8(random.int(0...255)) },
        quantization: quantization())
      let rhs = memory.tensor(
        1, type, rhsShape, bytes: (0..<rhsShape.reduce(1, *)).map { _ in UInt8(random.int(0...255)) },
        quantization: quantization())
      let activation: ActivationFunctionType = [.none, .relu, .relu6, .reluN1To1][trial / 5 % 4]
      let options: BuiltinOptions =
        switch opName {
        case "ADD": .addOptions(AddOptions(fusedActivationFunction: activation))
        case "SUB": .subOptions(SubOptions(fusedActivationFunction: activation))
        case "MUL": .mulOptions(MulOptions(fusedActivationFunction: activation))
        default: .none
        }
      let outputQuantization =
        opName == "LOGISTIC" ? quantization(scale: 1.0 / 256, zeroPoint: signed ? -128 : 0) : quantization()
      let label = "trial \(trial) \(opName) \(type.name) \(lhsShape) \(unary ? "" : "× \(rhsShape)") \(activation.name)"
      var results: [[UInt8]] = []
      for generated in [false, true] {
        let output = RuntimeTensor(
          index: 2, name: "output", type: type, shape: [], shapeSignature: [], quantization: outputQuantization,
          isVariable: false, constantData: nil)
        let node = KernelHarness.node(opName, unary ? [lhs] : [lhs, rhs], output, options)
        _ = try memory.prepareAndRun(node, output: output, generated: generated, label: label)
        XCTAssertEqual(output.shape, unary ? lhsShape : try BroadcastLayout.broadcastShape([lhsShape, rhsShape]), label)
        results.append(memory.bytes(output))
      }
      XCTAssertEqual(results[1], results[0], label)
      XCTAssertEqual(memory.damagedGuards(), [], label)
    }
  }
}

/// A random window geometry: channel counts around the 16-lane blocks, depth multipliers,
/// filters from 1×1 to 6×6 (whole 3×3 and 5×5 often), strides 1 to 3, dilations 1 to 3, SAME or
/// VALID; every seventh trial hostile but valid: a dilation or stride far beyond a tiny input, or
/// an input narrower than its filter under SAME padding.
private struct FuzzedWindow: CustomStringConvertible {
  let batch: Int
  let height: Int
  let width: Int
  let channels: Int
  let multiplier: Int
  let filter: (height: Int, width: Int)
  let strides: (height: Int, width: Int)
  let dilations: (height: Int, width: Int)
  let same: Bool
  /// CONV_2D's output channels.
  let convolutionOutputs: Int

  /// A random geometry the four-tap depthwise route takes, with `fourTapChannels` input channels.
  init(random: inout SeededGenerator, trial: Int, fourTapChannels: Int) {
    batch = random.int(1...2)
    channels = fourTapChannels
    multiplier = random.int(0...4) > 0 ? 1 : random.int(2...3)
    let square = [3, 5][random.int(0...1)]
    filter = random.bool() ? (square, square) : (random.int(1...7), random.int(1...8))
    strides = (trial % 9 == 8 ? random.int(5...9) : random.int(1...4), random.int(1...4))
    dilations = (1, 1)
    same = random.bool()
    height = random.int((same ? 1 : filter.height)...(filter.height + 6))
    width = random.int((same ? 1 : filter.width)...(filter.width + 20))
    convolutionOutputs = 1
  }

  /// A random geometry; `channels` replaces the drawn channel count when given.
  init(random: inout SeededGenerator, trial: Int, convolution: Bool = false, channels: Int? = nil) {
    let hostile = trial % 7 == 6
    batch = random.int(1...2)
    let drawn = convolution ? random.int(1...40) : [1, 3, 8, 15, 16, 17, 31, 32, 33, 48, 64, 72][random.int(0...11)]
    self.channels = channels ?? drawn
    multiplier = convolution || random.int(0...3) > 0 ? 1 : random.int(2...3)
    let square = [3, 5][random.int(0...1)]
    filter = random.bool() ? (square, square) : (random.int(1...6), random.int(1...6))
    strides = hostile && random.bool() ? (random.int(7...40), random.int(1...2)) : (random.int(1...3), random.int(1...3))
    dilations = hostile ? (random.int(1...2), random.int(5...60)) : (random.int(1...3), random.int(1...3))
    same = hostile || random.bool()
    // Inputs the dilated filter fits when VALID (tiny ones when hostile and SAME).
    let minimumHeight = same ? 1 : (filter.height - 1) * dilations.height + 1
    let minimumWidth = same ? 1 : (filter.width - 1) * dilations.width + 1
    height = hostile ? random.int(1...3) : random.int(minimumHeight...(minimumHeight + 9))
    width = hostile ? random.int(1...3) : random.int(minimumWidth...(minimumWidth + 17))
    convolutionOutputs = random.int(1...40)
  }

  var outputChannels: Int { channels * multiplier }
  var inputShape: [Int] { [batch, height, width, channels] }
  var inputCount: Int { inputShape.reduce(1, *) }
  var filterShape: [Int] { [1, filter.height, filter.width, outputChannels] }
  var filterCount: Int { filterShape.reduce(1, *) }
  var convolutionFilterShape: [Int] { [convolutionOutputs, filter.height, filter.width, channels] }
  var convolutionFilterCount: Int { convolutionFilterShape.reduce(1, *) }

  func depthwiseOptions(_ activation: ActivationFunctionType) -> DepthwiseConv2DOptions {
    DepthwiseConv2DOptions(
      padding: same ? .same : .valid, strideW: Int32(strides.width), strideH: Int32(strides.height),
      depthMultiplier: Int32(multiplier), fusedActivationFunction: activation, dilationWFactor: Int32(dilations.width),
      dilationHFactor: Int32(dilations.height))
  }

  var description: String {
    "input \(inputShape) filter \(filter) ×\(multiplier) strides \(strides) dilations \(dilations) \(same ? "SAME" : "VALID")"
  }
}

/// Random quantization of an 8-bit weighted op: int8 (symmetric weights, per tensor or per
/// channel) or uint8 (weights with any zero point).
private struct FuzzedQuantization {
  let type: ElementType
  let input: Quantization
  let output: Quantization
  private let weightScales: [Float]
  private let weightZeroPoint: Int

  init(random: inout SeededGenerator, signed: Bool, perChannel: Bool, channels: Int) {
    type = signed ? .int8 : .uint8
    let range = signed ? -128...127 : 0...255
    input = Quantization(scales: [Float(random.int(1...100)) / 400], zeroPoints: [random.int(range)])
    output = Quantization(scales: [Float(random.int(1...100)) / 100], zeroPoints: [random.int(range)])
    weightScales = (0..<(signed && perChannel ? channels : 1)).map { _ in Float(random.int(1...100)) / 3000 }
    weightZeroPoint = signed ? 0 : random.int(range)
  }

  func weights(axis: Int) -> Quantization {
    Quantization(scales: weightScales, zeroPoints: [Int](repeating: weightZeroPoint, count: weightScales.count), axis: axis)
  }

  var bias: Quantization {
    Quantization(scales: weightScales.map { $0 * input.scales[0] }, zeroPoints: [Int](repeating: 0, count: weightScales.count))
  }

  func randomBytes(_ count: Int, _ random: inout SeededGenerator) -> [UInt8] {
    (0..<count).map { _ in UInt8(random.int(0...255)) }
  }

  /// Weights of the type's range (int8 ones symmetric: −127 ... 127).
  func randomWeights(_ count: Int, _ random: inout SeededGenerator) -> [UInt8] {
    (0..<count).map { _ in UInt8(truncatingIfNeeded: type == .int8 ? random.int(-127...127) : random.int(0...255)) }
  }
}

/// Tensor data and scratch in guarded blocks: `guardBytes` of 0xFF before and after each.
private final class GuardedMemory {
  static let guardBytes = 256
  static let poison: UInt8 = 0xFF
  private var blocks: [(name: String, base: UnsafeMutableRawPointer, bytes: Int)] = []

  deinit { for block in blocks { block.base.deallocate() } }

  /// A guarded block of `bytes` bytes, filled with the poison.
  func block(_ name: String, bytes: Int) -> UnsafeMutableRawPointer {
    let total = bytes + 2 * Self.guardBytes
    let base = UnsafeMutableRawPointer.allocate(byteCount: total, alignment: 64)
    base.initializeMemory(as: UInt8.self, repeating: Self.poison, count: total)
    blocks.append((name, base, bytes))
    return base + Self.guardBytes
  }

  /// Points `tensor` at a fresh guarded block of its size, poisoned.
  func place(_ tensor: RuntimeTensor, _ name: String) {
    tensor.data = block(name, bytes: tensor.byteCount)
  }

  /// A tensor whose data is `bytes` in a guarded block; constant (model data) unless index 0.
  func tensor(
    _ index: Int, _ type: ElementType, _ shape: [Int], bytes: [UInt8], quantization: Quantization? = nil
  ) -> RuntimeTensor {
    let tensor = RuntimeTensor(
      index: index, name: "t\(index)", type: type, shape: shape, shapeSignature: shape, quantization: quantization,
      isVariable: false, constantData: nil)
    let data = block("t\(index)", bytes: bytes.count)
    bytes.withUnsafeBytes { if let source = $0.baseAddress { data.copyMemory(from: source, byteCount: bytes.count) } }
    tensor.data = data
    tensor.isConstant = index != 0
    return tensor
  }

  /// Builds the registered kernel of `node`, prepares it, places its output and scratch in
  /// guarded blocks, and evaluates it with generated kernels allowed or not.
  func prepareAndRun(_ node: Node, output: RuntimeTensor, generated: Bool, label: String) throws -> any Kernel {
    try GeneratedFloatKernels.$areAllowed.withValue(generated) {
      let kernel = try KernelDispatch.makeKernel(for: node)
      var context = PrepareContext(threadCount: 2)
      try kernel.prepare(&context)
      place(output, "output \(label) generated \(generated)")
      let scratch = block("scratch", bytes: context.scratchByteCount)
      try kernel.eval(EvalContext(threadCount: 2, scratch: scratch))
      return kernel
    }
  }

  func floats(_ tensor: RuntimeTensor) -> [Float] {
    Array(UnsafeBufferPointer(start: tensor.pointer(as: Float.self), count: tensor.elementCount))
  }

  func bytes(_ tensor: RuntimeTensor) -> [UInt8] {
    Array(UnsafeBufferPointer(start: tensor.pointer(as: UInt8.self), count: tensor.elementCount))
  }

  /// The blocks whose guard bytes are no longer all poison.
  func damagedGuards() -> [String] {
    blocks.filter { block in
      let before = UnsafeBufferPointer(start: block.base.assumingMemoryBound(to: UInt8.self), count: Self.guardBytes)
      let after = UnsafeBufferPointer(
        start: (block.base + Self.guardBytes + block.bytes).assumingMemoryBound(to: UInt8.self), count: Self.guardBytes)
      return !(before.allSatisfy { $0 == Self.poison } && after.allSatisfy { $0 == Self.poison })
    }.map(\.name)
  }
}
