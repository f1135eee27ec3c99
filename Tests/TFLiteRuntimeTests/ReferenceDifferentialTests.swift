import TFLiteFormat
import TFLiteLinearAlgebra
import XCTest

@testable import TFLiteRuntime

/// The optimized integer kernels (packed 8-bit GEMM, channel-vectorised depthwise and pooling
/// loops, the 16-bit convolution loops, batched products, SIMD elementwise maps) against the
/// reference kernels on random shapes, strides, dilations, paddings, groups, zero points,
/// per-channel scales and activations, with one and two threads, with generated kernels (the VNNI
/// int8 GEMM where this machine has it) allowed and turned off: every output must be equal bit
/// for bit. TestModels covers the shapes the converter
/// writes; this covers the ones it does not.
final class ReferenceDifferentialTests: XCTestCase {
  private var random = SeededGenerator(seed: 14)

  /// `count` random raw values of `Raw` over its whole range.
  private func raws<Raw: FixedWidthInteger>(_ count: Int, as type: Raw.Type = Int8.self) -> [Raw] {
    (0..<count).map { _ in Raw(truncatingIfNeeded: random.int(Int(Raw.min)...Int(Raw.max))) }
  }

  /// A random per-tensor quantization of an activation of `Raw` (int16: zero point 0).
  private func activationQuantization<Raw: FixedWidthInteger>(
    _ type: Raw.Type = Int8.self
  ) -> Reference.QuantizationParameters {
    switch Raw.bitWidth {
    case 16: Reference.QuantizationParameters(scale: Float(random.int(1...60)) / 100_000, zeroPoint: 0)
    default:
      Reference.QuantizationParameters(
        scale: Float(random.int(1...60)) / 1000,
        zeroPoint: Int32(Raw.isSigned ? random.int(-20...20) : random.int(100...150)))
    }
  }

  /// The element type of raw `Raw` values.
  private func elementType<Raw: FixedWidthInteger>(_ type: Raw.Type) -> ElementType {
    Raw.bitWidth == 16 ? .int16 : Raw.isSigned ? .int8 : .uint8
  }

  /// A quantized tensor of raw `Raw` values for the optimized kernel.
  private func tensor<Raw: FixedWidthInteger>(
    _ index: Int, _ shape: [Int], _ values: [Raw], _ scales: [Float], _ zeroPoints: [Int32], axis: Int = 0,
    constant: Bool = false
  ) -> RuntimeTensor {
    KernelHarness.quantizedTensor(
      index, "t\(index)", elementType(Raw.self), shape, values, scales: scales, zeroPoints: zeroPoints.map(Int.init),
      axis: axis, constant: constant)
  }

  /// A constant int32 (or, with `wide`, int64) bias tensor.
  private func biasTensor(_ index: Int, _ values: [Int64], wide: Bool = false) -> RuntimeTensor {
    wide
      ? KernelHarness.quantizedTensor(
        index, "bias", .int64, [values.count], values, scales: nil, zeroPoints: [], constant: true)
      : KernelHarness.quantizedTensor(
        index, "bias", .int32, [values.count], values.map { Int32($0) }, scales: nil, zeroPoints: [], constant: true)
  }

  /// Runs `node` on one and two threads and requires its output to equal `expected`.
  private func assertKernelMatches<Raw: FixedWidthInteger>(
    _ node: Node, _ expected: Reference.Tensor<Raw>, _ label: String
  ) throws {
    for (threads, generated) in [(1, true), (2, true), (1, false), (2, false)] {
      let result = try GeneratedFloatKernels.$areAllowed.withValue(generated) {
        try KernelHarness.run(node, threads: threads, as: Raw.self)
      }
      XCTAssertEqual(result.shape, expected.shape, label)
      if let index = expected.values.indices.first(where: { result.values[$0] != expected.values[$0] }) {
        XCTFail(
          "\(label) threads \(threads) generated \(generated): element \(index) is \(result.values[index]), reference \(expected.values[index])"
        )
      }
    }
  }

  private let activations: [(ActivationFunctionType, FusedActivation)] = [
    (.none, .none), (.relu, .relu), (.relu6, .relu6), (.reluN1To1, .reluN1To1),
  ]

  /// Random weights quantization for `channels` output channels: per channel (zero points 0) or
  /// per tensor (zero point 0, or near 128 for uint8 weights).
  private func weightQuantization<Weight: FixedWidthInteger>(
    _ channels: Int, perChannel: Bool, _ type: Weight.Type = Int8.self
  ) -> Reference.ChannelQuantization {
    let count = perChannel ? channels : 1
    let zeroPoint = Int32(Weight.isSigned ? 0 : random.int(110...140))
    return Reference.ChannelQuantization(
      scales: (0..<count).map { _ in Float(random.int(1...40)) / 4000 },
      zeroPoints: [Int32](repeating: zeroPoint, count: count))
  }

  func testInt8ConvolutionsMatchReference() throws {
    try checkConvolutions(Int8.self, Int8.self, trials: 24)
  }

  func testLegacyUInt8ConvolutionsMatchReference() throws {
    try checkConvolutions(UInt8.self, UInt8.self, trials: 12)
  }

  func testInt16ConvolutionsMatchReference() throws {
    try checkConvolutions(Int16.self, Int8.self, trials: 12)
  }

  /// Random CONV_2D (groups for int8) and DEPTHWISE_CONV_2D nodes of `Raw` activations and `Weight`
  /// weights (per-channel for int8 and int16 activations, per-tensor for uint8).
  private func checkConvolutions<
    Raw: FixedWidthInteger & Sendable & BitwiseCopyable, Weight: FixedWidthInteger & Sendable
  >(_ raw: Raw.Type, _ weight: Weight.Type, trials: Int) throws {
    let sixteenBit = Raw.bitWidth == 16
    for trial in 0..<trials {
      let depthwise = trial % 3 == 2
      let (batch, height, width) = (random.int(1...2), random.int(1...9), random.int(1...9))
      let groups = Raw.self == Int8.self && !depthwise && trial % 4 == 1 ? 2 : 1
      let groupDepth = random.int(1...6)
      let channels = groupDepth * groups
      let multiplier = random.int(1...2)
      let outputChannels = depthwise ? channels * multiplier : groups * random.int(1...17)
      let (filterHeight, filterWidth) = (random.int(1...3), random.int(1...3))
      let window = Reference.WindowParameters(
        strideHeight: random.int(1...2), strideWidth: random.int(1...2), dilationHeight: random.int(1...2),
        dilationWidth: random.int(1...2), padding: random.bool() ? .same : .valid)
      guard
        let rows = try? Reference.Axis(
          inputSize: height, filterSize: filterHeight, stride: window.strideHeight, dilation: window.dilationHeight,
          padding: window.padding),
        let columns = try? Reference.Axis(
          inputSize: width, filterSize: filterWidth, stride: window.strideWidth, dilation: window.dilationWidth,
          padding: window.padding), rows.outputSize > 0, columns.outputSize > 0
      else { continue }
      let (function, activation) = activations[trial % activations.count]
      let inputQuantization = activationQuantization(Raw.self)
      let outputQuantization = activationQuantization(Raw.self)
      let weights = weightQuantization(outputChannels, perChannel: Weight.isSigned && trial % 2 == 0, Weight.self)
      let inputShape = [batch, height, width, channels]
      let filterShape =
        depthwise
        ? [1, filterHeight, filterWidth, outputChannels] : [outputChannels, filterHeight, filterWidth, groupDepth]
      let input = raws(inputShape.reduce(1, *), as: Raw.self)
      let filter = raws(filterShape.reduce(1, *), as: Weight.self).map { Weight.isSigned ? max($0, -127) : $0 }
      let bias = (0..<outputChannels).map { _ in Int64(random.int(-3000...3000)) }
      let quantization = Reference.WeightedQuantization(
        input: inputQuantization, weights: weights, output: outputQuantization, activation: activation,
        accumulation: .convolution(sixteenBitInput: sixteenBit, int32Bias: !sixteenBit, rounding: .doubleRounding))
      let inputTensor = try Reference.Tensor(shape: inputShape, values: input)
      let filterTensor = try Reference.Tensor(shape: filterShape, values: filter)
      let expected =
        depthwise
        ? try Reference.depthwiseConv2D(
          input: inputTensor, filter: filterTensor, bias: bias, window: window, quantization: quantization)
        : try Reference.conv2D(
          input: inputTensor, filter: filterTensor, bias: bias, window: window, quantization: quantization)
      let operands = [
        tensor(0, inputShape, input, [inputQuantization.scale], [inputQuantization.zeroPoint]),
        tensor(1, filterShape, filter, weights.scales, weights.zeroPoints, axis: depthwise ? 3 : 0, constant: true),
        biasTensor(2, bias, wide: sixteenBit),
      ]
      let output = tensor(3, [], [Raw](), [outputQuantization.scale], [outputQuantization.zeroPoint])
      let padding: Padding = window.padding == .same ? .same : .valid
      let node =
        depthwise
        ? KernelHarness.node(
          "DEPTHWISE_CONV_2D", operands, output,
          .depthwiseConv2DOptions(
            DepthwiseConv2DOptions(
              padding: padding, strideW: Int32(window.strideWidth), strideH: Int32(window.strideHeight),
              depthMultiplier: Int32(multiplier), fusedActivationFunction: function,
              dilationWFactor: Int32(window.dilationWidth), dilationHFactor: Int32(window.dilationHeight))))
        : KernelHarness.node(
          "CONV_2D", operands, output,
          .conv2DOptions(
            Conv2DOptions(
              padding: padding, strideW: Int32(window.strideWidth), strideH: Int32(window.strideHeight),
              fusedActivationFunction: function, dilationWFactor: Int32(window.dilationWidth),
              dilationHFactor: Int32(window.dilationHeight))))
      try assertKernelMatches(
        node, expected, "trial \(trial) \(depthwise ? "depthwise" : "conv") \(inputShape) \(filterShape)")
    }
  }

  /// int8 and uint8 TRANSPOSE_CONV (one GEMM per output phase) against `Reference.transposeConv2D`:
  /// strides 1–3 per axis, filters 1–5 per axis (shorter than the stride too), SAME and VALID,
  /// output sizes that are not a multiple of the stride (the extra rows and columns VALID and SAME
  /// allow), per-channel int8 weights, uint8 weights around zero point 128, with and without a bias.
  func testEightBitTransposeConvolutionsMatchReference() throws {
    for trial in 0..<48 {
      if trial % 2 == 0 {
        try checkTransposeConvolution(Int8.self, trial: trial)
      } else {
        try checkTransposeConvolution(UInt8.self, trial: trial)
      }
    }
  }

  /// One random TRANSPOSE_CONV of `Raw` activations and weights.
  private func checkTransposeConvolution<Raw: FixedWidthInteger & Sendable & BitwiseCopyable>(
    _ type: Raw.Type, trial: Int
  ) throws {
    let (batch, height, width) = (random.int(1...2), random.int(1...7), random.int(1...7))
    let (channels, outputChannels) = (random.int(1...24), [1, 3, 8, 12, 16, 19, 32][random.int(0...6)])
    let (filterHeight, filterWidth) = (random.int(1...5), random.int(1...5))
    let (strideHeight, strideWidth) = (random.int(1...3), random.int(1...3))
    let same = random.bool()
    // Any output extent CONV_2D with this window maps back onto the input.
    func extent(_ input: Int, _ filter: Int, _ stride: Int) -> Int {
      same ? input * stride - random.int(0...(stride - 1)) : (input - 1) * stride + filter + random.int(0...(stride - 1))
    }
    let outputShape = Reference.ImageShape(
      batch: batch, height: extent(height, filterHeight, strideHeight), width: extent(width, filterWidth, strideWidth),
      channels: outputChannels)
    let (function, activation) = activations[trial % activations.count]
    let inputQuantization = activationQuantization(Raw.self)
    let outputQuantization = activationQuantization(Raw.self)
    let weights = weightQuantization(outputChannels, perChannel: Raw.isSigned && trial % 4 == 0, Raw.self)
    let inputShape = [batch, height, width, channels]
    let filterShape = [outputChannels, filterHeight, filterWidth, channels]
    let input = raws(inputShape.reduce(1, *), as: Raw.self)
    let filter = raws(filterShape.reduce(1, *), as: Raw.self).map { Raw.isSigned ? max($0, -127) : $0 }
    let bias = trial % 3 == 1 ? nil : (0..<outputChannels).map { _ in Int64(random.int(-3000...3000)) }
    let window = Reference.WindowParameters(
      strideHeight: strideHeight, strideWidth: strideWidth, padding: same ? .same : .valid)
    let expected = try Reference.transposeConv2D(
      input: Reference.Tensor(shape: inputShape, values: input),
      filter: Reference.Tensor(shape: filterShape, values: filter), bias: bias, outputShape: outputShape,
      window: window,
      quantization: Reference.WeightedQuantization(
        input: inputQuantization, weights: weights, output: outputQuantization, activation: activation,
        accumulation: .convolution(sixteenBitInput: false, int32Bias: true, rounding: .doubleRounding)))
    let node = KernelHarness.node(
      "TRANSPOSE_CONV",
      [
        KernelHarness.int32Tensor(0, outputShape.dimensions.map(Int32.init)),
        tensor(1, filterShape, filter, weights.scales, weights.zeroPoints, constant: true),
        tensor(2, inputShape, input, [inputQuantization.scale], [inputQuantization.zeroPoint]),
      ] + (bias.map { [biasTensor(3, $0)] } ?? []),
      tensor(4, [], [Raw](), [outputQuantization.scale], [outputQuantization.zeroPoint]),
      .transposeConvOptions(
        TransposeConvOptions(
          padding: same ? .same : .valid, strideW: Int32(strideWidth), strideH: Int32(strideHeight),
          fusedActivationFunction: function)))
    try assertKernelMatches(
      node, expected,
      "trial \(trial) TRANSPOSE_CONV \(inputShape) filter \(filterShape) output \(outputShape.dimensions) "
        + "strides \(strideHeight)×\(strideWidth) \(same ? "SAME" : "VALID") bias \(bias != nil)")
  }

  func testFullyConnectedMatchesReference() throws {
    for trial in 0..<12 {
      let (rows, depth, units) = (random.int(1...9), random.int(1...70), random.int(1...40))
      let (function, activation) = activations[trial % activations.count]
      let inputQuantization = activationQuantization()
      let outputQuantization = activationQuantization()
      let weights = weightQuantization(units, perChannel: trial % 2 == 0)
      let input = raws(rows * depth)
      let weightValues = raws(units * depth).map { max($0, -127) }
      let bias = (0..<units).map { _ in Int64(random.int(-3000...3000)) }
      let expected = try Reference.fullyConnected(
        input: Reference.Tensor(shape: [rows, depth], values: input),
        weights: Reference.Tensor(shape: [units, depth], values: weightValues), bias: bias, keepNumDims: false,
        quantization: Reference.WeightedQuantization(
          input: inputQuantization, weights: weights, output: outputQuantization, activation: activation,
          accumulation: .fullyConnected))
      let node = KernelHarness.node(
        "FULLY_CONNECTED",
        [
          tensor(0, [rows, depth], input, [inputQuantization.scale], [inputQuantization.zeroPoint]),
          tensor(1, [units, depth], weightValues, weights.scales, weights.zeroPoints, constant: true),
          biasTensor(2, bias),
        ], tensor(3, [], [Int8](), [outputQuantization.scale], [outputQuantization.zeroPoint]),
        .fullyConnectedOptions(FullyConnectedOptions(fusedActivationFunction: function)))
      try assertKernelMatches(node, expected, "trial \(trial) \(rows)x\(depth)x\(units)")
    }
  }

  func testPoolsMatchReference() throws {
    for trial in 0..<16 {
      let (batch, height, width) = (random.int(1...2), random.int(1...9), random.int(1...9))
      let channels = [1, 5, 8, 13, 16, 21][trial % 6]
      let (filterHeight, filterWidth) = (random.int(1...4), random.int(1...4))
      let same = trial % 2 == 0 || filterHeight > height || filterWidth > width
      let window = Reference.WindowParameters(
        strideHeight: random.int(1...3), strideWidth: random.int(1...3), padding: same ? .same : .valid)
      let parameters = Reference.PoolParameters(filterHeight: filterHeight, filterWidth: filterWidth, window: window)
      let (function, activation) = activations[trial % activations.count]
      let quantization = activationQuantization()
      let shape = [batch, height, width, channels]
      let input = raws(shape.reduce(1, *))
      let isMax = trial % 4 >= 2
      let inputTensor = try Reference.Tensor(shape: shape, values: input)
      let expected =
        isMax
        ? try Reference.maxPool2D(
          input: inputTensor, parameters: parameters, activation: activation, output: quantization)
        : try Reference.averagePool2D(
          input: inputTensor, parameters: parameters, activation: activation, output: quantization)
      let options = Pool2DOptions(
        padding: same ? .same : .valid, strideW: Int32(window.strideWidth), strideH: Int32(window.strideHeight),
        filterWidth: Int32(filterWidth), filterHeight: Int32(filterHeight), fusedActivationFunction: function)
      let node = KernelHarness.node(
        isMax ? "MAX_POOL_2D" : "AVERAGE_POOL_2D",
        [tensor(0, shape, input, [quantization.scale], [quantization.zeroPoint])],
        tensor(1, [], [Int8](), [quantization.scale], [quantization.zeroPoint]), .pool2DOptions(options))
      try assertKernelMatches(node, expected, "trial \(trial) \(isMax ? "max" : "average") \(shape)")
    }
  }

  /// MAX_POOL_2D on int8, uint8 and int16 with 16 to 70 channels (whole 16-lane blocks and a
  /// tail), 3×3 stride 2 as in ResNet50 and other windows, paddings and activations.
  func testMaxPoolsOfWholeChannelBlocksMatchReference() throws {
    func run<Raw: FixedWidthInteger & Sendable & BitwiseCopyable>(_ type: Raw.Type, trial: Int) throws {
      let (height, width) = (random.int(2...12), random.int(2...12))
      let channels = [16, 17, 32, 47, 64, 70][trial % 6]
      let (filterHeight, filterWidth) = trial % 3 == 0 ? (3, 3) : (random.int(1...4), random.int(1...4))
      let same = trial % 2 == 0 || filterHeight > height || filterWidth > width
      let window = Reference.WindowParameters(
        strideHeight: trial % 3 == 0 ? 2 : random.int(1...3), strideWidth: trial % 3 == 0 ? 2 : random.int(1...3),
        padding: same ? .same : .valid)
      let parameters = Reference.PoolParameters(filterHeight: filterHeight, filterWidth: filterWidth, window: window)
      let (function, activation) = activations[trial % activations.count]
      let quantization = activationQuantization(Raw.self)
      let shape = [random.int(1...2), height, width, channels]
      let input = raws(shape.reduce(1, *), as: Raw.self)
      let expected = try Reference.maxPool2D(
        input: try Reference.Tensor(shape: shape, values: input), parameters: parameters, activation: activation,
        output: quantization)
      let options = Pool2DOptions(
        padding: same ? .same : .valid, strideW: Int32(window.strideWidth), strideH: Int32(window.strideHeight),
        filterWidth: Int32(filterWidth), filterHeight: Int32(filterHeight), fusedActivationFunction: function)
      let node = KernelHarness.node(
        "MAX_POOL_2D", [tensor(0, shape, input, [quantization.scale], [quantization.zeroPoint])],
        tensor(1, [], [Raw](), [quantization.scale], [quantization.zeroPoint]), .pool2DOptions(options))
      try assertKernelMatches(node, expected, "trial \(trial) \(Raw.self) \(shape) \(filterHeight)×\(filterWidth)")
    }
    for trial in 0..<18 {
      switch trial % 3 {
      case 0: try run(Int8.self, trial: trial)
      case 1: try run(UInt8.self, trial: trial)
      default: try run(Int16.self, trial: trial)
      }
    }
  }

  /// 8-bit ADD, SUB and MUL with at least 65536 outputs, which look their outputs up in the table
  /// of every input pair (on the generated gather kernel where it runs), same shape and per
  /// channel, int8 and uint8.
  func testTabulatedAddAndMulMatchReference() throws {
    func run<Raw: FixedWidthInteger & Sendable & BitwiseCopyable>(_ type: Raw.Type, trial: Int) throws {
      let shape = [1, 41, 40, 40 + trial % 3]
      let rhsShape = trial % 2 == 0 ? shape : [shape[3]]
      let (function, activation) = activations[trial % activations.count]
      let quantization = Reference.BinaryQuantization(
        lhs: activationQuantization(Raw.self), rhs: activationQuantization(Raw.self),
        output: activationQuantization(Raw.self), activation: activation)
      let lhs = raws(shape.reduce(1, *), as: Raw.self)
      let rhs = raws(rhsShape.reduce(1, *), as: Raw.self)
      let multiplies = trial % 3 == 2
      XCTAssertGreaterThanOrEqual(shape.reduce(1, *), QuantizedBinaryMap.pairTableThreshold)
      try assertAddOrMulMatchesReference(
        multiplies: multiplies, lhsShape: shape, lhs, rhsShape: rhsShape, rhs,
        quantization: quantization, function: function,
        "trial \(trial) \(multiplies ? "MUL" : "ADD") \(Raw.self) \(rhsShape)")
    }
    for trial in 0..<4 {
      trial % 2 == 0 ? try run(Int8.self, trial: trial) : try run(UInt8.self, trial: trial)
    }
  }

  /// Runs an 8-bit ADD (or MUL when `multiplies`) of `lhs` and `rhs` through the kernel harness and
  /// checks it against the reference kernel's bytes.
  private func assertAddOrMulMatchesReference<Raw: FixedWidthInteger & Sendable & BitwiseCopyable>(
    multiplies: Bool, lhsShape: [Int], _ lhs: [Raw], rhsShape: [Int], _ rhs: [Raw],
    quantization: Reference.BinaryQuantization, function: ActivationFunctionType, _ label: String
  ) throws {
    let lhsTensor = try Reference.Tensor(shape: lhsShape, values: lhs)
    let rhsTensor = try Reference.Tensor(shape: rhsShape, values: rhs)
    let expected =
      multiplies
      ? try Reference.multiply(lhsTensor, rhsTensor, quantization: quantization)
      : try Reference.add(lhsTensor, rhsTensor, quantization: quantization)
    let node = KernelHarness.node(
      multiplies ? "MUL" : "ADD",
      [
        tensor(0, lhsShape, lhs, [quantization.lhs.scale], [quantization.lhs.zeroPoint]),
        tensor(1, rhsShape, rhs, [quantization.rhs.scale], [quantization.rhs.zeroPoint]),
      ], tensor(2, [], [Raw](), [quantization.output.scale], [quantization.output.zeroPoint]),
      multiplies
        ? .mulOptions(MulOptions(fusedActivationFunction: function))
        : .addOptions(AddOptions(fusedActivationFunction: function)))
    try assertKernelMatches(node, expected, label)
  }

  func testBroadcastAddAndMulMatchReference() throws {
    let shapePairs: [([Int], [Int])] = [
      ([2, 3, 4, 5], [2, 3, 4, 5]), ([2, 3, 4, 5], [5]), ([2, 1, 4, 1], [1, 3, 1, 5]), ([3, 17], [1]),
      ([1, 8], [4, 1]),
    ]
    for trial in 0..<10 {
      let (lhsShape, rhsShape) = shapePairs[trial % shapePairs.count]
      let (function, activation) = activations[trial % activations.count]
      let quantization = Reference.BinaryQuantization(
        lhs: activationQuantization(), rhs: activationQuantization(), output: activationQuantization(),
        activation: activation)
      let lhs = raws(lhsShape.reduce(1, *))
      let rhs = raws(rhsShape.reduce(1, *))
      let multiplies = trial % 2 == 1
      try assertAddOrMulMatchesReference(
        multiplies: multiplies, lhsShape: lhsShape, lhs, rhsShape: rhsShape, rhs, quantization: quantization,
        function: function, "trial \(trial) \(multiplies ? "MUL" : "ADD") \(lhsShape) \(rhsShape)")
    }
  }

  func testBatchMatMulMatchesReference() throws {
    for trial in 0..<8 {
      let (rows, depth, columns) = (random.int(1...9), random.int(1...30), random.int(1...20))
      let (adjX, adjY) = (trial % 2 == 1, trial % 3 == 1)
      let lhsBatches: [[Int]] = [[], [3], [2, 1], [2, 3]]
      let rhsBatches: [[Int]] = [[2], [3], [1, 4], []]
      let lhsShape = lhsBatches[trial % 4] + (adjX ? [depth, rows] : [rows, depth])
      let rhsShape = rhsBatches[trial % 4] + (adjY ? [columns, depth] : [depth, columns])
      let (lhsQuantization, rhsQuantization, outputQuantization) =
        (activationQuantization(), activationQuantization(), activationQuantization())
      let lhs = raws(lhsShape.reduce(1, *))
      let rhs = raws(rhsShape.reduce(1, *))
      let expected = try Reference.batchMatMul(
        lhs: Reference.Tensor(shape: lhsShape, values: lhs), rhs: Reference.Tensor(shape: rhsShape, values: rhs),
        adjX: adjX, adjY: adjY, lhsQuantization: lhsQuantization, rhsQuantization: rhsQuantization,
        output: outputQuantization)
      let node = KernelHarness.node(
        "BATCH_MATMUL",
        [
          tensor(0, lhsShape, lhs, [lhsQuantization.scale], [lhsQuantization.zeroPoint]),
          tensor(1, rhsShape, rhs, [rhsQuantization.scale], [rhsQuantization.zeroPoint], constant: trial % 2 == 0),
        ], tensor(2, [], [Int8](), [outputQuantization.scale], [outputQuantization.zeroPoint]),
        .batchMatMulOptions(BatchMatMulOptions(adjX: adjX, adjY: adjY)))
      try assertKernelMatches(node, expected, "trial \(trial) \(lhsShape) × \(rhsShape)")
    }
  }

  func testSoftmaxMatchesReference() throws {
    for trial in 0..<8 {
      let shape = [random.int(1...4), [3, 10, 100, 600][trial % 4]]
      let input = raws(shape.reduce(1, *))
      let inputQuantization = activationQuantization()
      let beta: Float = trial % 3 == 0 ? 0.5 : 1
      let expected = try Reference.softmax(
        input: Reference.Tensor(shape: shape, values: input), inputScale: inputQuantization.scale, beta: beta,
        outputType: Int8.self)
      let node = KernelHarness.node(
        "SOFTMAX", [tensor(0, shape, input, [inputQuantization.scale], [inputQuantization.zeroPoint])],
        tensor(1, [], [Int8](), [Float(1) / 256], [-128]), .softmaxOptions(SoftmaxOptions(beta: beta)))
      try assertKernelMatches(node, expected, "trial \(trial) \(shape)")
    }
  }
}
