import TFLiteFormat
import XCTest

import TFLiteLinearAlgebra
@testable import TFLiteRuntime

/// The packed 8-bit GEMM and the 8-bit CONV_2D / DEPTHWISE_CONV_2D / FULLY_CONNECTED built on it,
/// against plain loops: Σ (x − input zero point) · (w − weight zero point) over the taps inside the
/// input, plus the bias, rescaled with `QuantizedMultiplier.apply`, offset and clamped.
final class IntegerGEMMTests: XCTestCase {
  /// The lane-wise rescale against the scalar one over the whole Int32 range, extreme values and
  /// every shift from −31 to +8, with both roundings.
  func testMultiplierLanesMatchScalarRescale() {
    var random = SeededGenerator(seed: 5)
    let extremes: [Int32] = [.min, .min + 1, -1, 0, 1, .max - 1, .max, 1 << 30, -(1 << 30)]
    for trial in 0..<400 {
      let multipliers = (0..<8).map { lane -> QuantizedMultiplier in
        let shift = (trial + lane) % 40 - 31
        return QuantizedMultiplier(multiplier: Int32(random.int(1 << 30...Int(Int32.max))), shift: shift)
      }
      var x = SIMD8<Int32>()
      for lane in 0..<8 {
        x[lane] = random.bool() ? extremes[random.int(0...extremes.count - 1)] : Int32(truncatingIfNeeded: random.next())
      }
      for policy in RoundingPolicy.allCases {
        let parts = multipliers.map { QuantizedMultiplierLanes.parts($0, rounding: policy) }
        let lanes = QuantizedMultiplierLanes(
          multiplier: SIMD8(parts.map(\.multiplier)), leftShift: SIMD8(parts.map(\.leftShift)),
          first: SIMD8(parts.map(\.first)), second: SIMD8(parts.map(\.second)),
          negative: SIMD8(parts.map(\.negative)), shift: SIMD8(parts.map(\.shift)))
        let result = lanes.apply(x)
        for lane in 0..<8 {
          XCTAssertEqual(
            result[lane], multipliers[lane].apply(x[lane], rounding: policy),
            "x \(x[lane]) multiplier \(multipliers[lane]) \(policy)")
        }
      }
    }
  }

  /// Random products: depths of every remainder modulo 4 (the packed depth is padded to 2 or 4),
  /// deep products, partial last panels and row tiles, single rows, both output types and
  /// roundings, 1 and 2 threads; on the Swift route (16-bit panels) and, when the weights fit
  /// signed bytes, on the generated dot-product kernels of every level this machine runs.
  func testPackedProductsMatchNaiveLoop() throws {
    var random = SeededGenerator(seed: 7)
    let dotProductKernels = DotProductISA.allCases.compactMap { GeneratedDotProductKernels.kernels(for: $0) }
    var generatedProducts = 0
    for trial in 0..<40 {
      let rows = trial % 8 == 0 ? 1 : random.int(1...37)
      // Past 64 columns: groups of up to four full panels in one generated tile, split evenly.
      let columns = trial % 4 == 1 ? random.int(60...150) : random.int(1...50)
      let depth = trial % 10 == 3 ? random.int(300...700) : random.int(1...75)
      let rowStride = QuadPanelMatrices.paddedDepth(depth) + random.int(0...3)
      // Bytes past the real depth are arbitrary: they meet the zero weight of the padding.
      let a = (0..<(rows * rowStride)).map { _ in UInt8(random.int(0...255)) }
      let weightRange: ClosedRange<Int> = trial % 2 == 0 ? -128...127 : -255...255
      let weights = (0..<(depth * columns)).map { _ in Int32(random.int(weightRange)) }
      let bias = (0..<columns).map { _ in Int32(random.int(-50_000...50_000)) }
      let multipliers = (0..<columns).map { _ in QuantizedMultiplier(Double(random.int(1...20_000)) * 1e-6) }
      let signedOutput = random.bool()
      let rounding: RoundingPolicy = random.bool() ? .doubleRounding : .singleRounding
      let typeRange: ClosedRange<Int32> = signedOutput ? -128...127 : 0...255
      let zeroPoint = Int32(random.int(Int(typeRange.lowerBound)...Int(typeRange.upperBound)))
      let lower = Int32(random.int(Int(typeRange.lowerBound)...Int(typeRange.lowerBound) + 60))
      let clamp = lower...Int32(random.int(Int(lower)...Int(typeRange.upperBound)))
      var expected = [Int32](repeating: 0, count: rows * columns)
      for row in 0..<rows {
        for column in 0..<columns {
          var sum = bias[column]
          for k in 0..<depth { sum &+= Int32(a[row * rowStride + k]) &* weights[column * depth + k] }
          let scaled = multipliers[column].apply(sum, rounding: rounding) &+ zeroPoint
          expected[row * columns + column] = min(max(scaled, clamp.lowerBound), clamp.upperBound)
        }
      }
      let (paired, quad) = weights.withUnsafeBufferPointer {
        (
          PairedPanelMatrices(
            $0.baseAddress!, sourceStride: 0, count: 1, layout: .columnMajor(depth: depth), depth: depth, columns: columns),
          QuadPanelMatrices(
            $0.baseAddress!, sourceStride: 0, count: 1, layout: .columnMajor(depth: depth), depth: depth, columns: columns)
        )
      }
      let swiftPanels = try XCTUnwrap(paired)
      XCTAssertEqual(quad == nil, weights.contains { Int8(exactly: $0) == nil }, "signed-byte packing refuses exactly the weights beyond Int8")
      let columnSums = (0..<columns).map { column in (0..<depth).reduce(Int32(0)) { $0 &+ weights[column * depth + $1] } }
      XCTAssertEqual(swiftPanels.columnSums, columnSums)
      XCTAssertEqual(quad?.columnSums ?? columnSums, columnSums)
      let constants = IntegerChannelConstants(
        groups: 1, groupChannels: columns, multipliers: multipliers, rounding: rounding, outputZeroPoint: zeroPoint,
        clamp: clamp
      ) { bias[$0] }
      let epilogue = constants.epilogue(group: 0)
      let routes: [GeneratedDotProductKernels?] = [nil] + (quad == nil ? [] : dotProductKernels)
      for (kernels, threads) in routes.flatMap({ kernels in [1, 2].map { (kernels, $0) } }) {
        let paddedDepth = kernels == nil ? swiftPanels.paddedDepth : quad!.paddedDepth
        let plan = IntegerGEMM.plan(rows: rows, columns: columns, paddedDepth: paddedDepth, threadCount: threads)
        let scratch = UnsafeMutableRawPointer.allocate(
          byteCount: plan.scratchBytes(leftOperandPacks: false, threadCount: threads, lhs: UInt8.self, output: UInt8.self),
          alignment: 64)
        defer { scratch.deallocate() }
        let route = kernels.map { "generated \($0.isa)" } ?? "Swift"
        let label = "trial \(trial) \(rows)x\(depth)x\(columns) \(signedOutput ? "int8" : "uint8") \(rounding) \(route) threads \(threads)"
        a.withUnsafeBufferPointer { lhsBuffer in
          let lhs = RowMajorLeftOperand(base: lhsBuffer.baseAddress!, rowStride: rowStride)
          /// The product's raw outputs as `Output` values, on the route of `kernels`.
          func product<Output: QuantizedInteger>(_ type: Output.Type) -> [Int32] {
            var output = [Output](repeating: 0, count: rows * columns)
            output.withUnsafeMutableBufferPointer {
              if let kernels, let quad {
                IntegerGEMM.multiply(
                  plan: plan, lhs: lhs, rhs: quad.matrix(0), output: $0.baseAddress!, outputStride: columns,
                  epilogue: epilogue, kernels: kernels, threadCount: threads, scratch: scratch)
              } else {
                IntegerGEMM.multiply(
                  plan: plan, lhs: lhs, rhs: swiftPanels.matrix(0), output: $0.baseAddress!, outputStride: columns,
                  epilogue: epilogue, threadCount: threads, scratch: scratch)
              }
            }
            return output.map { Int32($0) }
          }
          XCTAssertEqual(signedOutput ? product(Int8.self) : product(UInt8.self), expected, label)
        }
        generatedProducts += kernels == nil ? 0 : 1
      }
    }
    XCTAssertEqual(generatedProducts > 0, !dotProductKernels.isEmpty, "the generated route was not exercised")
  }

  /// Random CONV_2D: SAME and VALID padding, strides, dilations, groups, 1×1 filters read in place
  /// (depth a multiple of the panels' interleave) or gathered, per-tensor and per-channel weights,
  /// int8 and uint8.
  func testConvolutionsMatchNaiveLoop() throws {
    var random = SeededGenerator(seed: 11)
    for trial in 0..<30 {
      let pointwise = trial % 3 == 0
      let groups = trial % 5 == 4 ? random.int(2...3) : 1
      // 1×1 filters: depths that are and are not multiples of 4 (uint8 rows read in place or gathered).
      let groupChannels = pointwise ? [4, 7, 8, 9, 16][trial % 5] : random.int(1...9)
      let channels = groups * groupChannels
      let outputChannels = groups * random.int(1...20)
      let filterHeight = pointwise ? 1 : random.int(1...3)
      let filterWidth = pointwise ? 1 : random.int(1...3)
      let options = Conv2DOptions(
        padding: pointwise || random.bool() ? .valid : .same, strideW: pointwise ? 1 : Int32(random.int(1...2)),
        strideH: pointwise ? 1 : Int32(random.int(1...2)),
        fusedActivationFunction: [.none, .relu, .relu6][trial % 3],
        dilationWFactor: pointwise ? 1 : Int32(random.int(1...2)), dilationHFactor: 1)
      let problem = WeightedProblem(
        random: &random, type: trial % 2 == 0 ? .int8 : .uint8,
        inputShape: [random.int(1...2), random.int(3...9), random.int(3...9), channels],
        filterShape: [outputChannels, filterHeight, filterWidth, groupChannels], channelAxis: 0)
      let geometry = try Geometry(
        problem.inputShape, filterHeight: filterHeight, filterWidth: filterWidth, strideH: Int(options.strideH),
        strideW: Int(options.strideW), dilationH: 1, dilationW: Int(options.dilationWFactor),
        same: options.padding == .same)
      let expected = problem.convolutionReference(
        geometry: geometry, outputChannels: outputChannels, groups: groups,
        activation: options.fusedActivationFunction)
      try problem.assertKernelMatches(
        expected, "CONV_2D", options: .conv2DOptions(options), "trial \(trial) \(problem.type.name) groups \(groups)")
    }
  }

  /// Random CONV_2D wide enough for the generated kernels' tiles of several panels (33–150 output
  /// channels: groups of up to four full panels and a partial last one), with the small depths of
  /// first layers (1–4 input channels under 3×3, 5×5 and 7×7 filters, stride 2) beside 1×1 filters
  /// read in place, strides, dilations, both paddings, per-tensor and per-channel int8 and uint8
  /// weights; bit-exact with the plain loop on every dot-product level this machine runs (forced
  /// one by one), on the Swift route, on 1 and 2 threads.
  func testWideConvolutionsOnEveryLevelMatchNaiveLoop() throws {
    var random = SeededGenerator(seed: 17)
    let levels = DotProductISA.allCases.filter { GeneratedDotProductKernels.kernels(for: $0) != nil }
    for trial in 0..<16 {
      let pointwise = trial % 4 == 0
      let channels = pointwise ? [16, 64, 20, 8][trial / 4 % 4] : random.int(1...4)
      let outputChannels = random.int(33...150)
      let filterSize = pointwise ? 1 : [3, 5, 7][trial % 3]
      let stride = pointwise ? 1 : random.int(1...2)
      let dilation = pointwise || trial % 5 != 1 ? 1 : 2
      let options = Conv2DOptions(
        padding: pointwise || trial % 2 == 1 ? .valid : .same, strideW: Int32(stride), strideH: Int32(stride),
        fusedActivationFunction: [.none, .relu, .relu6][trial % 3], dilationWFactor: Int32(dilation),
        dilationHFactor: Int32(dilation))
      let side = random.int(filterSize * dilation...filterSize * dilation + 8)
      let problem = WeightedProblem(
        random: &random, type: trial % 3 == 2 ? .uint8 : .int8,
        inputShape: [1, side, side + random.int(0...3), channels],
        filterShape: [outputChannels, filterSize, filterSize, channels], channelAxis: 0)
      try assertConvolutionMatchesOnLevels(
        problem, filterSize: filterSize, stride: stride, dilation: dilation, options: options, levels: levels,
        "trial \(trial) \(problem.type.name) \(filterSize)×\(filterSize) \(channels)→\(outputChannels)")
    }
  }

  /// Asserts that CONV_2D of `problem` (square `filterSize` filters in OHWI order, `stride` and
  /// `dilation` on both axes, `options`) equals the plain loop on each dot-product level of `levels`.
  private func assertConvolutionMatchesOnLevels(
    _ problem: WeightedProblem, filterSize: Int, stride: Int, dilation: Int = 1, options: Conv2DOptions,
    levels: [DotProductISA], _ label: String
  ) throws {
    let channels = problem.inputShape[3]
    let outputChannels = problem.filterShape[0]
    let geometry = try Geometry(
      problem.inputShape, filterHeight: filterSize, filterWidth: filterSize, strideH: stride, strideW: stride,
      dilationH: dilation, dilationW: dilation, same: options.padding == .same)
    let expected = problem.reference(
      geometry: geometry, outputChannels: outputChannels, activation: options.fusedActivationFunction,
      inputChannelsPerOutput: channels
    ) { output, ky, kx, i in (i, ((output * filterSize + ky) * filterSize + kx) * channels + i) }
    try assertMatchesOnLevels(expected, problem, options: options, levels: levels, label)
  }

  /// Asserts that CONV_2D of `problem` with `options` gives `expected` on each dot-product level of `levels`.
  private func assertMatchesOnLevels(
    _ expected: [Int32], _ problem: WeightedProblem, options: Conv2DOptions, levels: [DotProductISA], _ label: String
  ) throws {
    for level in levels {
      try GeneratedDotProductKernels.$forcedISA.withValue(level) {
        try problem.assertKernelMatches(expected, "CONV_2D", options: .conv2DOptions(options), "\(label) \(level)")
      }
    }
  }

  /// Random gathered CONV_2D over 5–40 channels per group (the generic im2col gather, not the
  /// few-channel one): 1–3 groups, filters 1×2 to 5×5, strides and dilations of 1 and 2 per axis,
  /// SAME padding (on every side, or only after for even filters) and VALID, one or two images of
  /// up to 30 × 30 pixels, so that 16 KiB row blocks (and the second thread's rows) start mid
  /// output row and mid image; int8 and uint8, bit-exact with the plain loop on every dot-product
  /// level this machine runs (forced one by one), on the Swift route, on 1 and 2 threads.
  func testGatheredConvolutionsWithGroupsAndDilationsMatchNaiveLoop() throws {
    var random = SeededGenerator(seed: 31)
    let levels = DotProductISA.allCases.filter { GeneratedDotProductKernels.kernels(for: $0) != nil }
    for trial in 0..<18 {
      let groups = [1, 1, 2, 1, 3, 1][trial % 6]
      let groupChannels = random.int(5...40)
      let channels = groups * groupChannels
      let outputChannels = groups * random.int(1...20)
      let (filterHeight, filterWidth) = [(3, 3), (5, 5), (1, 3), (3, 1), (2, 2), (3, 5)][trial / 3 % 6]
      let (strideH, strideW) = (1 + trial % 2, 1 + trial / 2 % 2)
      let (dilationH, dilationW) = trial % 4 == 3 ? (2, 1 + trial % 3 % 2) : (1, trial % 7 == 5 ? 2 : 1)
      let padding: Padding = trial % 3 == 2 ? .valid : .same
      let options = Conv2DOptions(
        padding: padding, strideW: Int32(strideW), strideH: Int32(strideH),
        fusedActivationFunction: [.none, .relu, .relu6][trial % 3], dilationWFactor: Int32(dilationW),
        dilationHFactor: Int32(dilationH))
      let spanH = (filterHeight - 1) * dilationH + 1
      let spanW = (filterWidth - 1) * dilationW + 1
      let inputShape = [1 + trial % 5 / 4, random.int(spanH...spanH + 24), random.int(spanW...spanW + 24), channels]
      let problem = WeightedProblem(
        random: &random, type: trial % 2 == 0 ? .int8 : .uint8, inputShape: inputShape,
        filterShape: [outputChannels, filterHeight, filterWidth, groupChannels], channelAxis: 0)
      let geometry = try Geometry(
        inputShape, filterHeight: filterHeight, filterWidth: filterWidth, strideH: strideH, strideW: strideW,
        dilationH: dilationH, dilationW: dilationW, same: padding == .same)
      let expected = problem.convolutionReference(
        geometry: geometry, outputChannels: outputChannels, groups: groups,
        activation: options.fusedActivationFunction)
      let label =
        "trial \(trial) \(problem.type.name) \(inputShape) \(filterHeight)×\(filterWidth) groups \(groups) "
        + "stride \(strideH),\(strideW) dilation \(dilationH),\(dilationW) \(padding.name) → \(outputChannels)"
      try assertMatchesOnLevels(expected, problem, options: options, levels: levels, label)
    }
  }

  /// Random CONV_2D with few output channels (1, 2, 3, 5, 8, 12, 15, and 17–24: a partial last
  /// panel alone or after a whole one, which AVX512-VNNI stores straight into C under a column
  /// mask): 1×1 filters over up to 1100 pixels (read in place or packed), 3×3 filters at strides 1
  /// and 2 with SAME and VALID padding over odd sizes, int8 and uint8; bit-exact with the plain loop
  /// on every dot-product level this machine runs (forced one by one), on the Swift route, on 1 and
  /// 2 threads.
  func testThinConvolutionsOnEveryLevelMatchNaiveLoop() throws {
    var random = SeededGenerator(seed: 23)
    let levels = DotProductISA.allCases.filter { GeneratedDotProductKernels.kernels(for: $0) != nil }
    let outputCounts = [1, 2, 3, 5, 8, 12, 15, 1, 17, 24, 1, 3]
    for (trial, outputChannels) in outputCounts.enumerated() {
      let pointwise = trial % 2 == 0
      let channels = pointwise ? [8, 3, 16, 24, 5, 12][trial / 2 % 6] : random.int(1...30)
      let filterSize = pointwise ? 1 : 3
      let stride = pointwise ? 1 : 1 + trial / 2 % 2
      let options = Conv2DOptions(
        padding: pointwise || trial % 4 == 1 ? .valid : .same, strideW: Int32(stride), strideH: Int32(stride),
        fusedActivationFunction: [.none, .relu, .relu6][trial % 3])
      let (height, width) = trial == 0 ? (32, 32) : (random.int(3...21), random.int(3...21) | 1)
      let problem = WeightedProblem(
        random: &random, type: trial % 3 == 2 ? .uint8 : .int8, inputShape: [1 + trial % 5 / 4, height, width, channels],
        filterShape: [outputChannels, filterSize, filterSize, channels], channelAxis: 0)
      try assertConvolutionMatchesOnLevels(
        problem, filterSize: filterSize, stride: stride, options: options, levels: levels,
        "trial \(trial) \(problem.type.name) \(problem.inputShape) \(filterSize)×\(filterSize)/\(stride) → \(outputChannels)")
    }
  }

  /// Stride-1 int8 CONV_2D on stacked input rows (`ByteTransposeConvolution(convolution:)`): 1–8
  /// output channels (and 12, 16, 24, 40), 5–40 input channels (depths not a multiple of four),
  /// filters 3×3, 2×2, 1×3, 3×1, 5×5, 2×3, SAME and VALID, one or two images of 1–19 rows and
  /// columns (filters wider than the input under SAME), per-tensor or per-channel weights, every
  /// fused activation: bit-exact with the plain loop on every dot-product level this machine runs
  /// (forced one by one), on the Swift route, on 1 and 2 threads; the generated route takes stacked
  /// rows, and uint8, strided, 3×3 × 512 → 256 (weights of 1 MiB or more) and 1–4-channel
  /// convolutions (the few-channel stems' gather) do not.
  func testStrideOneConvolutionsOnStackedRowsMatchNaiveLoop() throws {
    var random = SeededGenerator(seed: 37)
    let levels = DotProductISA.allCases.filter { GeneratedDotProductKernels.kernels(for: $0) != nil }
    let filters = [(3, 3), (2, 2), (1, 3), (3, 1), (5, 5), (2, 3)]
    let outputCounts = Array(1...8) + [12, 16, 24, 40, 256, 8, 3, 8, 1]
    var stackedTrials = 0
    for (trial, outputChannels) in outputCounts.enumerated() {
      let (filterHeight, filterWidth) = filters[trial % filters.count]
      let largeWeights = outputChannels == 256
      let channels = trial == 7 ? 24 : largeWeights ? 512 : trial == 15 ? 3 : random.int(5...40)
      let type: ElementType = trial % 7 == 6 ? .uint8 : .int8
      let stride = trial % 9 == 8 ? 2 : 1
      let same = trial % 3 != 1
      let (height, width) = trial == 7 ? (16, 16) : largeWeights ? (3, 3) : (random.int(1...19), random.int(1...19))
      guard same || (height >= filterHeight && width >= filterWidth) else { continue }
      let options = Conv2DOptions(
        padding: same ? .same : .valid, strideW: Int32(stride), strideH: Int32(stride),
        fusedActivationFunction: [.none, .relu, .relu6, .reluN1To1][trial % 4])
      let problem = WeightedProblem(
        random: &random, type: type, inputShape: [1 + trial % 5 / 3, height, width, channels],
        filterShape: [outputChannels, filterHeight, filterWidth, channels], channelAxis: 0)
      let label = "trial \(trial) \(type.name) \(problem.inputShape) \(filterHeight)×\(filterWidth)/\(stride) → \(outputChannels)"
      let geometry = try Geometry(
        problem.inputShape, filterHeight: filterHeight, filterWidth: filterWidth, strideH: stride, strideW: stride,
        dilationH: 1, dilationW: 1, same: same)
      let expected = problem.reference(
        geometry: geometry, outputChannels: outputChannels, activation: options.fusedActivationFunction,
        inputChannelsPerOutput: channels
      ) { output, ky, kx, i in (i, ((output * filterHeight + ky) * filterWidth + kx) * channels + i) }
      try assertMatchesOnLevels(expected, problem, options: options, levels: levels, label)
      for level in levels {
        let route = try GeneratedDotProductKernels.$forcedISA.withValue(level) {
          try problem.run("CONV_2D", options: .conv2DOptions(options), threads: 1).route
        }
        let stacked = route?.contains("stacked rows") ?? false
        XCTAssertEqual(
          stacked, type == .int8 && stride == 1 && !largeWeights && channels > 4, "\(label) \(level): \(route ?? "")")
        if stacked { stackedTrials += 1 }
      }
    }
    XCTAssertEqual(stackedTrials > 0, !levels.isEmpty, "the stacked route ran")
  }

  /// int8 1×1 CONV_2D into 1–4 channels (segmentation and score heads) from every depth the
  /// pixel-lane kernels take and depths beside them (6, 20, 36: the GEMM), over pixel counts that
  /// are and are not multiples of 16, in one or two images, with every fused activation: bit-exact
  /// with the plain loop on every dot-product level this machine runs (forced one by one), on the
  /// Swift route, on 1 and 2 threads; AVX512-VNNI takes the pixel-lane route exactly where the
  /// shape has a kernel. FULLY_CONNECTED into 1–4 units (one rounding) likewise.
  func testFewChannelHeadsMatchNaiveLoopAndPutOutputsOnTheLanes() throws {
    var random = SeededGenerator(seed: 29)
    let levels = DotProductISA.allCases.filter { GeneratedDotProductKernels.kernels(for: $0) != nil }
    var trial = 0
    for outputs in 1...4 {
      for depth in [4, 6, 8, 12, 16, 20, 24, 32, 36] {
        trial += 1
        let (batch, height, width) = [(1, 32, 32), (1, 5, 7), (2, 3, 9), (1, 1, 13), (1, 4, 4)][trial % 5]
        let options = Conv2DOptions(
          padding: .valid, strideW: 1, strideH: 1,
          fusedActivationFunction: [.none, .relu, .relu6, .reluN1To1][trial % 4])
        let problem = WeightedProblem(
          random: &random, type: .int8, inputShape: [batch, height, width, depth],
          filterShape: [outputs, 1, 1, depth], channelAxis: 0)
        let label = "trial \(trial) \(problem.inputShape) → \(outputs)"
        try assertConvolutionMatchesOnLevels(problem, filterSize: 1, stride: 1, options: options, levels: levels, label)
        let route = try GeneratedDotProductKernels.$forcedISA.withValue(.avx512VNNI) {
          try problem.run("CONV_2D", options: .conv2DOptions(options), threads: 1).route
        }
        let hasKernel =
          GeneratedDotProductKernels.kernels(for: .avx512VNNI) != nil
          && PixelLaneKernelGenerator.supports(outputs: outputs, depth: depth)
        XCTAssertEqual(route?.contains("output bytes on the lanes") ?? false, hasKernel, "\(label): \(route ?? "")")
      }
    }
    // FULLY_CONNECTED (one rounding) into 1–4 units takes the same route.
    for (trial, (rows, depth, units)) in [(1, 8, 1), (37, 16, 2), (20, 12, 3), (50, 32, 4), (16, 4, 1), (23, 32, 1), (9, 24, 2)].enumerated() {
      let problem = WeightedProblem(
        random: &random, type: .int8, inputShape: [rows, depth], filterShape: [units, depth], channelAxis: 0,
        rounding: .singleRounding)
      let geometry = try Geometry(
        [rows, 1, 1, depth], filterHeight: 1, filterWidth: 1, strideH: 1, strideW: 1, dilationH: 1, dilationW: 1,
        same: false)
      let expected = problem.reference(
        geometry: geometry, outputChannels: units, activation: .relu, inputChannelsPerOutput: depth
      ) { output, _, _, channel in (channel, output * depth + channel) }
      let options = BuiltinOptions.fullyConnectedOptions(FullyConnectedOptions(fusedActivationFunction: .relu))
      let label = "FULLY_CONNECTED trial \(trial) \(rows)x\(depth)x\(units)"
      for level in levels {
        try GeneratedDotProductKernels.$forcedISA.withValue(level) {
          try problem.assertKernelMatches(expected, "FULLY_CONNECTED", options: options, "\(label) \(level)")
        }
      }
      let route = try GeneratedDotProductKernels.$forcedISA.withValue(.avx512VNNI) {
        try problem.run("FULLY_CONNECTED", options: options, threads: 1).route
      }
      XCTAssertEqual(
        route?.contains("output bytes on the lanes") ?? false, GeneratedDotProductKernels.kernels(for: .avx512VNNI) != nil,
        "\(label): \(route ?? "")")
    }
  }

  /// int8 1×1 stride-1 CONV_2D on both sides of the 24 rows from which the input is packed (its
  /// signs flipped once per row) instead of read in place by tiles that flip each broadcast quad
  /// (1–60 pixels in one or two images, depths 8–64, 17–150 output channels: partial panels and
  /// groups of one to four), and uint8 ones, always read in place; bit-exact with the plain loop on
  /// every dot-product level this machine runs (forced one by one), on the Swift route, on 1 and 2 threads.
  func testPointwiseConvolutionsPackedOrReadInPlaceMatchNaiveLoop() throws {
    var random = SeededGenerator(seed: 19)
    let levels = DotProductISA.allCases.filter { GeneratedDotProductKernels.kernels(for: $0) != nil }
    let pixelCounts = [(1, 1), (1, 16), (1, 23), (1, 24), (1, 25), (2, 12), (1, 49), (2, 30)]
    for (trial, (batch, pixels)) in pixelCounts.enumerated() {
      let channels = [8, 16, 20, 64][trial % 4]
      let outputChannels = trial == 0 ? 150 : random.int(17...150)
      let options = Conv2DOptions(
        padding: .valid, strideW: 1, strideH: 1, fusedActivationFunction: [.none, .relu, .relu6][trial % 3])
      let width = [1, 4, 5, 6, 7][pixels % 5]
      let shapes = pixels % width == 0 ? (pixels / width, width) : (1, pixels)
      for type in [ElementType.int8, .uint8] {
        let problem = WeightedProblem(
          random: &random, type: type, inputShape: [batch, shapes.0, shapes.1, channels],
          filterShape: [outputChannels, 1, 1, channels], channelAxis: 0)
        let geometry = try Geometry(
          problem.inputShape, filterHeight: 1, filterWidth: 1, strideH: 1, strideW: 1, dilationH: 1, dilationW: 1,
          same: false)
        let expected = problem.reference(
          geometry: geometry, outputChannels: outputChannels, activation: options.fusedActivationFunction,
          inputChannelsPerOutput: channels
        ) { output, _, _, i in (i, output * channels + i) }
        for level in levels {
          try GeneratedDotProductKernels.$forcedISA.withValue(level) {
            try problem.assertKernelMatches(
              expected, "CONV_2D", options: .conv2DOptions(options),
              "\(type.name) \(batch)×\(pixels) pixels × \(channels) → \(outputChannels) \(level)")
          }
        }
      }
    }
  }

  /// Products of few rows over 1 MiB of weights or more (ResNet50's 7 × 7 layers) take all their
  /// rows in one block, which reads the weights once; the others keep blocks of at most
  /// `packedBlockBytes`.
  func testFewRowsOverLargeWeightsMakeOneRowBlock() {
    for (rows, depth, columns) in [(49, 4608, 512), (49, 1024, 2048), (49, 512, 2048), (1, 2048, 1000)] {
      let bytes = IntegerGEMM.wholeProductBlockBytes(rows: rows, depth: depth, columns: columns)
      XCTAssertEqual(bytes, (rows + 7) / 8 * 8 * depth, "\(rows)×\(depth)×\(columns)")
      let plan = GEMMPlan(
        rows: rows, columns: columns, depth: depth, threadCount: 1, splitsDepth: false, rowBlockElements: bytes ?? 0)
      XCTAssertEqual(plan.rowBlockCount, 1, "\(rows)×\(depth)×\(columns)")
    }
    // Weights below 1 MiB (ResNet50's 14 × 14 and 28 × 28 layers), or rows past 256 KiB.
    for (rows, depth, columns) in [(196, 2304, 256), (49, 2048, 511), (784, 1152, 128), (3136, 4608, 512), (64, 4608, 512)] {
      XCTAssertNil(IntegerGEMM.wholeProductBlockBytes(rows: rows, depth: depth, columns: columns), "\(rows)×\(depth)×\(columns)")
    }
    let blocks = GEMMPlan(
      rows: 49, columns: 512, depth: 4608, threadCount: 1, splitsDepth: false,
      rowBlockElements: IntegerGEMM.packedBlockBytes(depth: 4608))
    XCTAssertEqual(blocks.rowBlockCount, 3, "49 rows in blocks of 24 × 4608 bytes")
  }

  /// int8 CONV_2D of few rows over more than 1 MiB of weights, in one row block: a 3×3 filter over
  /// 256 channels into 456 (2304 × 456 weight bytes, 12 rows) and a 1×1 one over 2048 channels
  /// into 513 (25 rows, which blocks of 24 rows would pack in two, packed whole); bit-exact with the plain loop on every dot-product level this machine runs, the
  /// Swift route, 1 and 2 threads.
  func testFewRowsOverLargeWeightsMatchNaiveLoop() throws {
    var random = SeededGenerator(seed: 29)
    let levels = DotProductISA.allCases.filter { GeneratedDotProductKernels.kernels(for: $0) != nil }
    let cases: [(type: ElementType, filter: Int, channels: Int, outputs: Int, height: Int, width: Int)] = [
      (.int8, 3, 256, 456, 3, 4), (.int8, 1, 2048, 513, 5, 5),
    ]
    for shape in cases {
      XCTAssertNotNil(
        IntegerGEMM.wholeProductBlockBytes(
          rows: shape.height * shape.width, depth: shape.filter * shape.filter * shape.channels, columns: shape.outputs))
      let options = Conv2DOptions(padding: .same, strideW: 1, strideH: 1, fusedActivationFunction: .relu)
      let problem = WeightedProblem(
        random: &random, type: shape.type, inputShape: [1, shape.height, shape.width, shape.channels],
        filterShape: [shape.outputs, shape.filter, shape.filter, shape.channels], channelAxis: 0)
      let geometry = try Geometry(
        problem.inputShape, filterHeight: shape.filter, filterWidth: shape.filter, strideH: 1, strideW: 1,
        dilationH: 1, dilationW: 1, same: true)
      let expected = problem.reference(
        geometry: geometry, outputChannels: shape.outputs, activation: .relu, inputChannelsPerOutput: shape.channels
      ) { output, ky, kx, i in (i, ((output * shape.filter + ky) * shape.filter + kx) * shape.channels + i) }
      for level in levels {
        try GeneratedDotProductKernels.$forcedISA.withValue(level) {
          try problem.assertKernelMatches(expected, "CONV_2D", options: .conv2DOptions(options), "\(shape) \(level)")
        }
      }
    }
  }

  /// Random DEPTHWISE_CONV_2D: channel counts around the 16-lane blocks, multipliers 1 and 2,
  /// borders, strides and dilations, int8 (per-tensor and per-channel) and uint8 with weight zero
  /// points; bit-exact on the generated kernels (where this machine runs them) and on the Swift ones.
  func testDepthwiseConvolutionsMatchNaiveLoop() throws {
    var random = SeededGenerator(seed: 13)
    for trial in 0..<40 {
      let channels = [1, 3, 15, 16, 17, 33, 40, 48][trial % 8]
      let multiplier = trial % 4 == 3 ? 2 : 1
      let filterHeight = random.int(1...3)
      let filterWidth = random.int(1...3)
      let options = DepthwiseConv2DOptions(
        padding: random.bool() ? .valid : .same, strideW: Int32(random.int(1...2)), strideH: Int32(random.int(1...2)),
        depthMultiplier: Int32(multiplier), fusedActivationFunction: [.none, .relu6, .reluN1To1][trial % 3],
        dilationWFactor: Int32(random.int(1...2)), dilationHFactor: Int32(random.int(1...2)))
      let outputChannels = channels * multiplier
      // Inputs at least as large as the dilated filter, so VALID padding has an output.
      let minimumHeight = max(3, (filterHeight - 1) * Int(options.dilationHFactor) + 1)
      let minimumWidth = max(3, (filterWidth - 1) * Int(options.dilationWFactor) + 1)
      let problem = WeightedProblem(
        random: &random, type: trial % 2 == 0 ? .int8 : .uint8,
        inputShape: [random.int(1...2), random.int(minimumHeight...8), random.int(minimumWidth...8), channels],
        filterShape: [1, filterHeight, filterWidth, outputChannels], channelAxis: 3)
      let geometry = try Geometry(
        problem.inputShape, filterHeight: filterHeight, filterWidth: filterWidth, strideH: Int(options.strideH),
        strideW: Int(options.strideW), dilationH: Int(options.dilationHFactor), dilationW: Int(options.dilationWFactor),
        same: options.padding == .same)
      let expected = problem.reference(
        geometry: geometry, outputChannels: outputChannels, activation: options.fusedActivationFunction,
        inputChannelsPerOutput: 1
      ) { output, ky, kx, _ in (output / multiplier, (ky * filterWidth + kx) * outputChannels + output) }
      for generated in [true, false] {
        try GeneratedFloatKernels.$areAllowed.withValue(generated) {
          try problem.assertKernelMatches(
            expected, "DEPTHWISE_CONV_2D", options: .depthwiseConv2DOptions(options),
            "trial \(trial) \(problem.type.name) channels \(channels) generated \(generated)")
        }
      }
    }
  }

  /// Random FULLY_CONNECTED (rescaled with one rounding): single rows and batches, odd and even depths.
  func testFullyConnectedMatchesNaiveLoop() throws {
    var random = SeededGenerator(seed: 17)
    for trial in 0..<20 {
      let rows = trial % 4 == 0 ? 1 : random.int(2...12)
      let depth = random.int(1...70)
      let units = random.int(1...40)
      let problem = WeightedProblem(
        random: &random, type: trial % 2 == 0 ? .int8 : .uint8, inputShape: [rows, depth], filterShape: [units, depth],
        channelAxis: 0, rounding: .singleRounding)
      let geometry = try Geometry(
        [rows, 1, 1, depth], filterHeight: 1, filterWidth: 1, strideH: 1, strideW: 1, dilationH: 1, dilationW: 1,
        same: false)
      let expected = problem.reference(
        geometry: geometry, outputChannels: units, activation: .relu, inputChannelsPerOutput: depth
      ) { output, _, _, channel in (channel, output * depth + channel) }
      try problem.assertKernelMatches(
        expected, "FULLY_CONNECTED", options: .fullyConnectedOptions(FullyConnectedOptions(fusedActivationFunction: .relu)),
        "trial \(trial) \(problem.type.name) \(rows)x\(depth)x\(units)")
    }
  }
}

extension IntegerGEMMTests {
  /// uint8 weights with zero points 0, 255 and others, whose w − zw leaves a signed byte, against
  /// plain loops on CONV_2D (gathered 3×3 with padding, and 1×1) and FULLY_CONNECTED (a depth past
  /// the row sum's 16-bit flush): where this machine runs VNNI they take the generated route with
  /// the row-sum correction, and both it and the 16-bit route (generated kernels off) give the
  /// reference's bytes.
  func testLegacyUint8WeightZeroPointsTakeTheRowSumRouteBitExact() throws {
    var random = SeededGenerator(seed: 23)
    // Pointwise trials with 8 or 16 channels read the input in place (depth a multiple of 4);
    // 3 channels is the few-channel first layer of legacy MobileNets.
    for (trial, zeroPoint) in [0, 255, 1, 77, 200, 254, 0, 255, 128, 113, 124, 149].enumerated() {
      let pointwise = trial % 3 == 1
      let filterSize = pointwise ? 1 : 3
      let channels = [[5, 16, 3], [3, 8, 24]][trial / 3 % 2][trial % 3]
      let outputChannels = random.int(1...37)
      let options = Conv2DOptions(
        padding: pointwise ? .valid : .same, strideW: 1, strideH: Int32(1 + trial % 2), fusedActivationFunction: .relu)
      let problem = WeightedProblem(
        random: &random, type: .uint8, inputShape: [1, random.int(2...8), random.int(2...8), channels],
        filterShape: [outputChannels, filterSize, filterSize, channels], channelAxis: 0,
        uint8WeightZeroPoint: zeroPoint)
      let geometry = try Geometry(
        problem.inputShape, filterHeight: filterSize, filterWidth: filterSize, strideH: Int(options.strideH),
        strideW: 1, dilationH: 1, dilationW: 1, same: options.padding == .same)
      let expected = problem.reference(
        geometry: geometry, outputChannels: outputChannels, activation: .relu, inputChannelsPerOutput: channels
      ) { output, ky, kx, i in (i, ((output * filterSize + ky) * filterSize + kx) * channels + i) }
      let label = "CONV_2D trial \(trial) weight zero point \(zeroPoint)"
      try problem.assertKernelMatches(expected, "CONV_2D", options: .conv2DOptions(options), label)
      try assertRowSumRoute(problem, "CONV_2D", options: .conv2DOptions(options), label)
      // Every VNNI level this machine runs (AVX-VNNI, the 256-bit sums and AVX2 requantization, too).
      for isa in DotProductISA.allCases where DotProductISA.supported.contains(isa) {
        try GeneratedDotProductKernels.$forcedISA.withValue(isa) {
          try problem.assertKernelMatches(expected, "CONV_2D", options: .conv2DOptions(options), "\(label) \(isa)")
        }
      }
    }
    for (rows, depth, units, zeroPoint) in [(3, 2100, 5, 0), (1, 33, 20, 255), (7, 300, 17, 13)] {
      let problem = WeightedProblem(
        random: &random, type: .uint8, inputShape: [rows, depth], filterShape: [units, depth], channelAxis: 0,
        rounding: .singleRounding, uint8WeightZeroPoint: zeroPoint)
      let geometry = try Geometry(
        [rows, 1, 1, depth], filterHeight: 1, filterWidth: 1, strideH: 1, strideW: 1, dilationH: 1, dilationW: 1,
        same: false)
      let expected = problem.reference(
        geometry: geometry, outputChannels: units, activation: .none, inputChannelsPerOutput: depth
      ) { output, _, _, channel in (channel, output * depth + channel) }
      let options = BuiltinOptions.fullyConnectedOptions(FullyConnectedOptions())
      let label = "FULLY_CONNECTED \(rows)x\(depth)x\(units) weight zero point \(zeroPoint)"
      try problem.assertKernelMatches(expected, "FULLY_CONNECTED", options: options, label)
      try assertRowSumRoute(problem, "FULLY_CONNECTED", options: options, label)
    }
  }

  /// Random few-channel first layers (1–4 input channels; 3×3, 5×5, 7×7 and 3×5 filters; strides 1
  /// and 2; SAME and VALID; batches of 1 and 2; output widths from 1, where every pixel is an edge
  /// pixel, to past 20; 1–40 output channels, so partial panels): legacy uint8 weights (zero points
  /// beyond a signed byte: the row-sum route), uint8 weights with zero point 128 and int8 weights
  /// per tensor and per channel. They take the few-channel gather and give the plain loop's bytes
  /// on every dot-product level this machine runs (forced one by one, AVX-VNNI's 256-bit tiles too),
  /// on the Swift route and on 1 and 2 threads (two threads start row blocks mid output row).
  func testFewChannelConvolutionsGatherBitExactOnEveryLevel() throws {
    var random = SeededGenerator(seed: 29)
    let legacyZeroPoints = [0, 255, 77, 200, 1, 149]
    for trial in 0..<24 {
      let channels = trial % 4 + 1
      let (filterHeight, filterWidth) = [(3, 3), (5, 5), (7, 7), (3, 5)][trial / 4 % 4]
      let stride = trial % 3 == 0 ? 1 : 2
      let padding: Padding = trial % 2 == 0 ? .same : .valid
      // VALID needs the filter inside the input; SAME also gets inputs narrower than the filter.
      let smallest = padding == .valid ? filterWidth : 1
      let inputShape = [
        trial % 5 == 4 ? 2 : 1, random.int((padding == .valid ? filterHeight : 1)...filterHeight + 12),
        random.int(smallest...smallest + 40), channels,
      ]
      let kind = trial % 3
      try assertFewChannelConvolutionMatchesOnEveryLevel(
        random: &random, type: kind == 2 ? .int8 : .uint8, inputShape: inputShape, filter: (filterHeight, filterWidth),
        strides: (stride, stride), padding: padding, outputChannels: random.int(1...40),
        uint8WeightZeroPoint: kind == 0 ? legacyZeroPoints[trial / 3 % legacyZeroPoints.count] : 128,
        activation: [.none, .relu6, .relu][trial % 3], "trial \(trial)")
    }
  }

  /// Random few-channel stems of every filter size 1–7 on each axis (every filter-row run length
  /// of 1–28 bytes: byte, 4-byte, 8-byte and vector copies), strides 1–3 on each axis, SAME and
  /// VALID, odd input sizes up to 75 × 75 (several row blocks, which start mid output row, and
  /// images of a batch of 2 in one block), int8 per tensor and per channel, uint8 with zero point
  /// 128: the plain loop's bytes on every dot-product level this machine runs and the Swift route.
  func testFewChannelStemsOfEveryFilterAndStrideMatchPlainLoop() throws {
    var random = SeededGenerator(seed: 83)
    for trial in 0..<36 {
      let channels = trial % 4 + 1
      let filter = (random.int(1...7), random.int(1...7))
      var strides = (random.int(1...3), random.int(1...3))
      // A 1×1 filter at stride 1 reads its input in place instead.
      if filter == (1, 1) && strides == (1, 1) { strides.1 = 2 }
      let padding: Padding = random.bool() ? .same : .valid
      let large = trial % 6 == 5
      let inputShape = [
        trial % 7 == 3 ? 2 : 1, filter.0 + random.int(0...(large ? 68 : 14)),
        filter.1 + random.int(0...(large ? 68 : 30)) | 1, channels,
      ]
      try assertFewChannelConvolutionMatchesOnEveryLevel(
        random: &random, type: trial % 3 == 2 ? .uint8 : .int8, inputShape: inputShape, filter: filter,
        strides: strides, padding: padding, outputChannels: random.int(1...(large ? 20 : 40)),
        uint8WeightZeroPoint: 128, activation: [.none, .relu6, .relu][trial % 3], "stem trial \(trial)")
    }
  }

  /// Asserts that a random CONV_2D over `inputShape` (1–4 channels) with these filter, strides and
  /// padding takes the few-channel gather and gives the plain loop's bytes on every dot-product
  /// level this machine runs (forced one by one, AVX-VNNI's 256-bit tiles too), on the Swift route
  /// and on 1 and 2 threads (two threads start row blocks mid output row).
  private func assertFewChannelConvolutionMatchesOnEveryLevel(
    random: inout SeededGenerator, type: ElementType, inputShape: [Int], filter: (height: Int, width: Int),
    strides: (height: Int, width: Int), padding: Padding, outputChannels: Int, uint8WeightZeroPoint: Int,
    activation: ActivationFunctionType, _ name: String
  ) throws {
    let channels = inputShape[3]
    let (filterHeight, filterWidth) = filter
    let problem = WeightedProblem(
      random: &random, type: type, inputShape: inputShape,
      filterShape: [outputChannels, filterHeight, filterWidth, channels], channelAxis: 0,
      uint8WeightZeroPoint: uint8WeightZeroPoint)
    let options = Conv2DOptions(
      padding: padding, strideW: Int32(strides.width), strideH: Int32(strides.height),
      fusedActivationFunction: activation)
    let geometry = try Geometry(
      inputShape, filterHeight: filterHeight, filterWidth: filterWidth, strideH: strides.height,
      strideW: strides.width, dilationH: 1, dilationW: 1, same: padding == .same)
    let expected = problem.reference(
      geometry: geometry, outputChannels: outputChannels, activation: activation, inputChannelsPerOutput: channels
    ) { output, ky, kx, i in (i, ((output * filterHeight + ky) * filterWidth + kx) * channels + i) }
    let label =
      "\(name) \(problem.type.name) zero point \(problem.weightQuantization.zeroPoints[0]) \(inputShape) "
      + "\(filterHeight)×\(filterWidth)×\(channels)→\(outputChannels) strides \(strides) \(padding.name)"
    try problem.assertKernelMatches(expected, "CONV_2D", options: .conv2DOptions(options), label)
    let route = try problem.run("CONV_2D", options: .conv2DOptions(options), threads: 1).route ?? ""
    XCTAssertTrue(route.hasSuffix(", few-channel im2col"), "\(label): \(route)")
    for level in DotProductISA.allCases where GeneratedDotProductKernels.kernels(for: level) != nil {
      try GeneratedDotProductKernels.$forcedISA.withValue(level) {
        try problem.assertKernelMatches(expected, "CONV_2D", options: .conv2DOptions(options), "\(label) \(level)")
      }
    }
  }

  /// Asserts that `problem` names the row-sum correction exactly when its weights do not fit signed
  /// bytes and this machine runs the VNNI kernels.
  private func assertRowSumRoute(
    _ problem: WeightedProblem, _ opName: String, options: BuiltinOptions, _ label: String
  ) throws {
    let route = try GeneratedFloatKernels.$areAllowed.withValue(true) {
      try problem.run(opName, options: options, threads: 1).route
    }
    let expected = GeneratedDotProductKernels.preferred != nil && !problem.weightsFitSignedBytes
    XCTAssertEqual(route?.contains("row sums") ?? false, expected, "\(label): \(route ?? "")")
  }

  /// `fillBytes` (the im2col gathers' padding) sets exactly `count` bytes to the repeated byte for
  /// every count 0–40 (the 1–7-byte runs as overlapping words, not a byte loop) at every
  /// alignment, and leaves the bytes around them alone: against a plain byte loop.
  func testFillBytesSetsExactlyTheRunAtEveryLengthAndAlignment() {
    let guardByte: UInt8 = 0xA5
    for value in [UInt8(0x00), 0x80, 0x7F, 0xFF, 0x13] {
      for count in 0...40 {
        for start in 0..<8 {
          var actual = [UInt8](repeating: guardByte, count: 64)
          var expected = actual
          for index in start..<start + count { expected[index] = value }
          actual.withUnsafeMutableBytes {
            fillBytes($0.baseAddress! + start, count: count, with: UInt64(value) &* 0x0101_0101_0101_0101)
          }
          XCTAssertEqual(actual, expected, "value \(value) count \(count) start \(start)")
        }
      }
    }
  }

  /// `copyRuns` (the im2col gathers' copies) writes exactly its runs, each byte XOR-ed with the
  /// flip, for 0–3 runs of every length 0–70 (vector, word and 2- or 1-byte copies), at unaligned
  /// starts, with gaps of 0–5 bytes between source runs and between destination runs, and leaves
  /// the bytes around them alone: against a plain byte loop.
  func testCopyRunsFlipsExactlyTheRunsAtEveryLengthAndStride() {
    let guardByte: UInt8 = 0xA5
    let source = (0..<400).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
    for flip in [UInt8(0x00), 0x80] {
      for runCount in 0...3 {
        for count in 0...70 {
          let (sourceGap, destinationGap, start) = (count % 6, (count + runCount) % 5, count % 3 + runCount)
          let (sourceStride, destinationStride) = (count + sourceGap, count + destinationGap)
          var actual = [UInt8](repeating: guardByte, count: 320)
          var expected = actual
          for run in 0..<runCount {
            for index in 0..<count {
              expected[start + run * destinationStride + index] = source[1 + run * sourceStride + index] ^ flip
            }
          }
          source.withUnsafeBytes { from in
            actual.withUnsafeMutableBytes {
              copyRuns(
                runCount, bytes: count, from: from.baseAddress! + 1, stride: sourceStride, to: $0.baseAddress! + start,
                stride: destinationStride, flip: UInt64(flip) &* 0x0101_0101_0101_0101)
            }
          }
          XCTAssertEqual(actual, expected, "flip \(flip) runs \(runCount) count \(count)")
        }
      }
    }
  }
}

/// Output size and leading padding of both spatial axes, by TFLite's rules.
private struct Geometry {
  let batch: Int
  let inputHeight: Int
  let inputWidth: Int
  let height: WindowAxis
  let width: WindowAxis

  init(
    _ inputShape: [Int], filterHeight: Int, filterWidth: Int, strideH: Int, strideW: Int, dilationH: Int,
    dilationW: Int, same: Bool
  ) throws {
    let heightAxis = WindowAxis(
      inputSize: inputShape[1], filterSize: filterHeight, stride: strideH, dilation: dilationH, samePadding: same)
    let widthAxis = WindowAxis(
      inputSize: inputShape[2], filterSize: filterWidth, stride: strideW, dilation: dilationW, samePadding: same)
    batch = inputShape[0]
    inputHeight = inputShape[1]
    inputWidth = inputShape[2]
    height = try XCTUnwrap(heightAxis)
    width = try XCTUnwrap(widthAxis)
  }
}

/// One random quantized weighted op: raw input and weights, zero points, scales, bias.
private struct WeightedProblem {
  let type: ElementType
  let inputShape: [Int]
  let filterShape: [Int]
  let channelAxis: Int
  let input: [Int32]
  let weights: [Int32]
  let bias: [Int32]
  let inputQuantization: Quantization
  let weightQuantization: Quantization
  let outputQuantization: Quantization
  let rounding: RoundingPolicy

  init(
    random: inout SeededGenerator, type: ElementType, inputShape: [Int], filterShape: [Int], channelAxis: Int,
    rounding: RoundingPolicy = .doubleRounding, uint8WeightZeroPoint: Int? = nil
  ) {
    let range = type == .int8 ? -128...127 : 0...255
    let outputChannels = filterShape[channelAxis]
    self.type = type
    self.inputShape = inputShape
    self.filterShape = filterShape
    self.channelAxis = channelAxis
    self.rounding = rounding
    input = (0..<inputShape.reduce(1, *)).map { _ in Int32(random.int(range)) }
    weights = (0..<filterShape.reduce(1, *)).map { _ in Int32(random.int(type == .int8 ? -127...127 : range)) }
    bias = (0..<outputChannels).map { _ in Int32(random.int(-3000...3000)) }
    inputQuantization = Quantization(scales: [Float(random.int(1...100)) / 400], zeroPoints: [random.int(range)])
    // int8 weights are symmetric (zero point 0), per tensor or per channel; uint8 weights per tensor
    // (zero point 128 half the time, so that they fit signed bytes and take the VNNI route).
    if type == .int8 && random.bool() {
      weightQuantization = Quantization(
        scales: (0..<outputChannels).map { _ in Float(random.int(1...100)) / 3000 },
        zeroPoints: [Int](repeating: 0, count: outputChannels), axis: channelAxis)
    } else {
      weightQuantization = Quantization(
        scales: [Float(random.int(1...100)) / 3000],
        zeroPoints: [type == .int8 ? 0 : uint8WeightZeroPoint ?? (random.bool() ? 128 : random.int(range))])
    }
    outputQuantization = Quantization(scales: [Float(random.int(1...100)) / 200], zeroPoints: [random.int(range)])
  }

  /// The raw outputs of a CONV_2D of `groups` groups with `[O, KH, KW, I / groups]` filters, by
  /// ``reference(geometry:outputChannels:activation:inputChannelsPerOutput:tap:)``.
  func convolutionReference(
    geometry: Geometry, outputChannels: Int, groups: Int, activation: ActivationFunctionType
  ) -> [Int32] {
    let (filterHeight, filterWidth, groupChannels) = (filterShape[1], filterShape[2], filterShape[3])
    return reference(
      geometry: geometry, outputChannels: outputChannels, activation: activation, inputChannelsPerOutput: groupChannels
    ) { output, ky, kx, i in
      let group = output / (outputChannels / groups)
      return (group * groupChannels + i, ((output * filterHeight + ky) * filterWidth + kx) * groupChannels + i)
    }
  }

  /// The raw outputs by plain loops. `tap(output, ky, kx, i)` names the input channel and weight
  /// index of the `i`-th of the `inputChannelsPerOutput` products of output channel `output` at a tap.
  func reference(
    geometry: Geometry, outputChannels: Int, activation: ActivationFunctionType, inputChannelsPerOutput: Int,
    tap: (Int, Int, Int, Int) -> (inputChannel: Int, weight: Int)
  ) -> [Int32] {
    let channels = inputShape.last ?? 1
    let inputZeroPoint = Int32(inputQuantization.zeroPoints[0])
    let outputZeroPoint = Int32(outputQuantization.zeroPoints[0])
    let typeRange: ClosedRange<Int32> = type == .int8 ? -128...127 : 0...255
    let fused: FusedActivation = [.relu: .relu, .relu6: .relu6, .reluN1To1: .reluN1To1][activation] ?? .none
    let clamp = FixedPoint.activationRange(
      fused, scale: outputQuantization.scales[0], zeroPoint: Int(outputZeroPoint), typeRange: typeRange)
    var result: [Int32] = []
    for image in 0..<geometry.batch {
      for y in 0..<geometry.height.outputSize {
        for x in 0..<geometry.width.outputSize {
          for output in 0..<outputChannels {
            var sum = bias[output]
            for ky in 0..<geometry.height.filterSize {
              let inputY = geometry.height.inputOrigin(y) + ky * geometry.height.dilation
              guard inputY >= 0, inputY < geometry.inputHeight else { continue }
              for kx in 0..<geometry.width.filterSize {
                let inputX = geometry.width.inputOrigin(x) + kx * geometry.width.dilation
                guard inputX >= 0, inputX < geometry.inputWidth else { continue }
                for i in 0..<inputChannelsPerOutput {
                  let (channel, weightIndex) = tap(output, ky, kx, i)
                  let value = input[((image * geometry.inputHeight + inputY) * geometry.inputWidth + inputX) * channels + channel]
                  let weightZeroPoint = Int32(weightQuantization.zeroPoints[weightQuantization.zeroPoints.count == 1 ? 0 : output])
                  sum &+= (value - inputZeroPoint) &* (weights[weightIndex] - weightZeroPoint)
                }
              }
            }
            let weightScale = weightQuantization.scales[weightQuantization.scales.count == 1 ? 0 : output]
            let multiplier = QuantizedMultiplier(
              Double(inputQuantization.scales[0]) * Double(weightScale) / Double(outputQuantization.scales[0]),
              rounding: rounding)
            let scaled = multiplier.apply(sum, rounding: rounding) &+ outputZeroPoint
            result.append(min(max(scaled, clamp.lowerBound), clamp.upperBound))
          }
        }
      }
    }
    return result
  }

  /// Asserts that the registered kernel for `opName` gives `expected` with one and with two
  /// threads, with generated kernels allowed and turned off. Allowed, an 8-bit CONV_2D or
  /// FULLY_CONNECTED must take the generated VNNI route (uint8 weights beyond a signed byte with
  /// the row-sum correction), and a DEPTHWISE_CONV_2D the generated depthwise kernels, wherever
  /// this machine runs them.
  func assertKernelMatches(
    _ expected: [Int32], _ opName: String, options: BuiltinOptions, _ label: String, file: StaticString = #filePath,
    line: UInt = #line
  ) throws {
    for generated in [true, false] {
      for threads in [1, 2] {
        let (values, route) = try GeneratedFloatKernels.$areAllowed.withValue(generated) {
          try run(opName, options: options, threads: threads)
        }
        let context = "\(label) threads \(threads) generated \(generated): \(route ?? "")"
        XCTAssertEqual(values, expected, context, file: file, line: line)
        let takesGeneratedRoute =
          opName == "DEPTHWISE_CONV_2D"
          ? generated && GeneratedFloatKernels.$areAllowed.withValue(true) { GeneratedDepthwiseKernels.current != nil }
          : generated && GeneratedDotProductKernels.preferred != nil
        XCTAssertEqual(route?.contains("generated") ?? false, takesGeneratedRoute, context, file: file, line: line)
      }
    }
  }

  /// True when every weight minus its zero point fits an Int8 (always for int8 weights, whose zero
  /// point is 0; for uint8 ones with zero point 128).
  var weightsFitSignedBytes: Bool {
    let zeroPoint = Int32(weightQuantization.zeroPoints[0])
    return weights.allSatisfy { Int8(exactly: $0 - zeroPoint) != nil }
  }

  /// The raw outputs of the registered kernel for `opName` and its ``Kernel/kernelDescription``.
  func run(_ opName: String, options: BuiltinOptions, threads: Int) throws -> (values: [Int32], route: String?) {
    let inputTensor = makeTensor(0, type, inputShape, bytes: raw(input), quantization: inputQuantization)
    let filterTensor = makeTensor(1, type, filterShape, bytes: raw(weights), quantization: weightQuantization)
    let biasScales = weightQuantization.scales.map { $0 * inputQuantization.scales[0] }
    let biasTensor = makeTensor(
      2, .int32, [bias.count], bytes: bytesOf(bias),
      quantization: Quantization(scales: biasScales, zeroPoints: [Int](repeating: 0, count: biasScales.count)))
    let output = makeTensor(3, type, [], quantization: outputQuantization)
    let node = KernelHarness.node(opName, [inputTensor, filterTensor, biasTensor], output, options)
    let kernel = try KernelDispatch.makeKernel(for: node)
    var context = PrepareContext(threadCount: threads)
    try kernel.prepare(&context)
    output.allocateOwnedMemory()
    let scratchBytes = context.scratchByteCount
    let scratch = scratchBytes > 0 ? UnsafeMutableRawPointer.allocate(byteCount: scratchBytes, alignment: 64) : nil
    defer { scratch?.deallocate() }
    try kernel.eval(EvalContext(threadCount: threads, scratch: scratch))
    let values = type == .int8 ? elements(output, as: Int8.self).map(Int32.init) : elements(output, as: UInt8.self).map(Int32.init)
    return (values, kernel.kernelDescription)
  }

  /// The bytes of raw 8-bit values.
  private func raw(_ values: [Int32]) -> [UInt8] { values.map { UInt8(truncatingIfNeeded: $0) } }
}
