// The reference kernel set as runtime kernels (`RunnerOptions(kernels: .reference)`).
//
// `ReferenceAdapterKernel` runs one node with the plain functions of `Reference/`, in TFLite's two
// steps:
// - `prepare` checks the operand types, computes the output's shape with the operator's
//   reference output-shape function (`Reference.conv2DOutputShape`, ...) and reads the integer
//   bias. It builds no optimized kernel and packs no weights: the weights are read where they
//   lie, in the model's bytes.
// - `eval` hands the reference function views of the node's tensors (`Reference.Tensor` over
//   each input's memory, `.existing(Reference.MutableTensor)` over the output's), so the kernel
//   reads its inputs and writes its output in place: nothing is copied.
//
// Covered: CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED, TRANSPOSE_CONV, BATCH_MATMUL,
// AVERAGE_POOL_2D, MAX_POOL_2D, SOFTMAX, ADD, SUB, MUL, RELU, RELU6, RELU_N1_TO_1, RELU_0_TO_1,
// LOGISTIC and TANH on float32 tensors and on quantized int8, uint8 and int16 tensors (ADD, SUB
// and MUL also on plain int32), and L2_POOL_2D on float32. Every other operator, hybrid nodes
// (float activations with integer weights) and INT4 weights keep their optimized kernel under
// `.reference`.

import TFLiteFormat
import TFLiteLinearAlgebra

/// A node computed by the reference kernels (see the file header).
final class ReferenceAdapterKernel: Kernel {
  /// The operators the reference kernel set runs.
  static let operators: Set<BuiltinOperator> = [
    .conv2d, .depthwiseConv2d, .fullyConnected, .transposeConv, .batchMatmul, .averagePool2d, .maxPool2d, .l2Pool2d,
    .softmax, .add, .sub, .mul, .relu, .relu6, .reluN1To1, .relu0To1, .logistic, .tanh,
  ]

  /// The node.
  private let node: Node
  /// The operator.
  private let code: BuiltinOperator
  /// The rounding of the integer rescaling, from `prepare`.
  private var rounding = RoundingPolicy.doubleRounding
  /// The integer bias of a quantized weighted operator, read by `prepare` (nil: none).
  private var integerBias: [Int64]?

  /// True when the reference set runs `node`: a covered operator on float32 or quantized operands
  /// (or ADD, SUB, MUL on int32; L2_POOL_2D on float32 only) whose types fit together; hybrid nodes
  /// and INT4 weights are not covered, nor are nodes whose types do not fit (their optimized kernel
  /// explains what is wrong).
  static func covers(_ node: Node) -> Bool {
    guard case .builtin(let code) = node.op, operators.contains(code), node.optionalInput(1)?.type != .int4 else {
      return false
    }
    let activation = node.optionalInput(activationPosition(code))
    let arithmetic = OperandArithmetic(activation: activation, output: node.outputs.first, weights: node.optionalInput(1))
    let runs =
      switch arithmetic {
      case .quantized: code != .l2Pool2d
      case .hybrid: false
      case .plain: activation?.type == .float32 || activation?.type == .int32 && [.add, .sub, .mul].contains(code)
      }
    return runs && operandTypesFit(node, code)
  }

  /// True when the operand types fit together: the output has the activations' type (SOFTMAX: a
  /// quantized type of 8 or 16 bits), the second operand of ADD, SUB, MUL and BATCH_MATMUL has it
  /// too, quantized weights are int8 (uint8 with uint8 activations) with an int32 or int64 bias,
  /// float weights and bias are float32, and TRANSPOSE_CONV's output shape is int32.
  private static func operandTypesFit(_ node: Node, _ code: BuiltinOperator) -> Bool {
    guard let activation = node.optionalInput(activationPosition(code))?.type, let output = node.outputs.first?.type
    else { return false }
    let outputs: [ElementType] =
      code == .softmax && activation != .float32
      ? (activation == .int16 ? [.int16] : [.int8, .uint8, .int16]) : [activation]
    var operands: [(position: Int, types: [ElementType])] = []
    switch code {
    case .add, .sub, .mul, .batchMatmul: operands = [(1, [activation])]
    case .conv2d, .depthwiseConv2d, .fullyConnected:
      operands = weightTypes(activation, biasPosition: 2)
    case .transposeConv:
      operands = weightTypes(activation, biasPosition: 3) + [(0, [.int32])]
    default: break
    }
    return outputs.contains(output)
      && operands.allSatisfy { position, types in node.optionalInput(position).map { types.contains($0.type) } ?? true }
  }

  /// The types a weighted operator's weights (input 1) and bias may have with `activation` activations.
  private static func weightTypes(_ activation: ElementType, biasPosition: Int) -> [(position: Int, types: [ElementType])] {
    activation == .float32
      ? [(1, [.float32]), (biasPosition, [.float32])]
      : [(1, activation == .uint8 ? [.uint8] : [.int8]), (biasPosition, [.int32, .int64])]
  }

  /// The input holding the activations: TRANSPOSE_CONV's is input 2 (after the output shape and the filter).
  private static func activationPosition(_ code: BuiltinOperator) -> Int { code == .transposeConv ? 2 : 0 }

  init(node: Node) throws {
    guard Self.covers(node), case .builtin(let code) = node.op else {
      throw KernelError.unsupported("no reference kernel for \(node.opName) on these operands")
    }
    self.node = node
    self.code = code
  }

  /// Sets the output's shape and reads the integer bias (the types were checked by ``covers(_:)``).
  func prepare(_ context: inout PrepareContext) throws {
    try describingReferenceErrors {
      try node.expect(inputs: 1, maxInputs: 4, outputs: 1)
      rounding = context.roundingPolicy
      let output = try node.output(0)
      output.shape = try outputShape()
      integerBias = try readIntegerBias()
    }
  }

  func eval(_ context: EvalContext) throws {
    try describingReferenceErrors {
      let output = try node.output(0)
      switch output.type {
      case .float32: _ = try computeFloat(into: destination(Float.self))
      case .int32: _ = try computeInt32(into: destination(Int32.self))
      case .int8: _ = try computeInteger(into: destination(Int8.self))
      case .uint8: _ = try computeInteger(into: destination(UInt8.self))
      case .int16: _ = try computeInteger(into: destination(Int16.self))
      default: throw KernelError.unsupported("\(node.opName) into \(output.type.name) in the reference kernels")
      }
    }
  }

  /// Runs `body`, turning a ``Reference/Error`` into a ``KernelError`` naming the operator.
  private func describingReferenceErrors(_ body: () throws -> Void) throws {
    do { try body() } catch let error as Reference.Error {
      throw KernelError.invalid("\(node.opName): \(error.description)")
    }
  }

  // MARK: Prepare

  /// The output's shape, from the inputs' shapes and the options (TRANSPOSE_CONV: from the values
  /// of its `output_shape` operand).
  private func outputShape() throws -> [Int] {
    let input = try node.input(Self.activationPosition(code)).shape
    switch (code, node.options) {
    case (.conv2d, .conv2DOptions(let o)):
      return try Reference.conv2DOutputShape(input: input, filter: node.input(1).shape, window: .init(o))
    case (.depthwiseConv2d, .depthwiseConv2DOptions(let o)):
      return try Reference.depthwiseConv2DOutputShape(input: input, filter: node.input(1).shape, window: .init(o))
    case (.fullyConnected, .fullyConnectedOptions(let o)):
      return try Reference.fullyConnectedOutputShape(
        input: input, weights: node.input(1).shape, keepNumDims: o.keepNumDims)
    case (.transposeConv, .transposeConvOptions):
      guard try node.input(0).hasValuesForPrepare else {
        throw KernelError.needsInputValues("TRANSPOSE_CONV output_shape is not constant")
      }
      let shape = try transposeOutputShape()
      try Reference.checkTransposeConv2DShapes(input: input, filter: node.input(1).shape, outputShape: shape)
      return shape.dimensions
    case (.batchMatmul, .batchMatMulOptions(let o)):
      return try Reference.batchMatMulOutputShape(lhs: input, rhs: node.input(1).shape, adjX: o.adjX, adjY: o.adjY)
    case (.averagePool2d, .pool2DOptions(let o)), (.maxPool2d, .pool2DOptions(let o)), (.l2Pool2d, .pool2DOptions(let o)):
      return try Reference.pool2DOutputShape(input: input, parameters: .init(o))
    case (.add, _), (.sub, _), (.mul, _):
      return try Reference.Broadcast(input, node.input(1).shape).shape
    case (.softmax, .softmaxOptions):
      return try Reference.softmaxOutputShape(input: input)
    case (.relu, _), (.relu6, _), (.reluN1To1, _), (.relu0To1, _), (.logistic, _), (.tanh, _):
      return input
    default: throw KernelError.invalid("\(node.opName) with options \(node.options)")
    }
  }

  /// The bias of a quantized CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED or TRANSPOSE_CONV as
  /// 64-bit values (nil for other nodes and when absent); it must be constant, as in LiteRT.
  private func readIntegerBias() throws -> [Int64]? {
    guard [.conv2d, .depthwiseConv2d, .fullyConnected, .transposeConv].contains(code),
      let bias = node.optionalInput(code == .transposeConv ? 3 : 2), bias.type != .float32
    else { return nil }
    guard bias.hasValuesForPrepare else { throw KernelError.unsupported("\(node.opName) with a bias that is not constant") }
    return bias.type == .int64
      ? try Array(view(bias, as: Int64.self).values) : try view(bias, as: Int32.self).values.map(Int64.init)
  }

  // MARK: Float

  /// The operator on float tensors.
  private func computeFloat(into output: Reference.Destination<Float>) throws -> Reference.Tensor<Float> {
    switch (code, node.options) {
    case (.conv2d, .conv2DOptions(let o)):
      return try Reference.conv2D(
        input: input(0), filter: input(1), window: .init(o),
        arithmetic: floatArithmetic(biasPosition: 2, o.fusedActivationFunction), into: output)
    case (.depthwiseConv2d, .depthwiseConv2DOptions(let o)):
      return try Reference.depthwiseConv2D(
        input: input(0), filter: input(1), window: .init(o),
        arithmetic: floatArithmetic(biasPosition: 2, o.fusedActivationFunction), into: output)
    case (.fullyConnected, .fullyConnectedOptions(let o)):
      return try Reference.fullyConnected(
        input: input(0), weights: input(1), keepNumDims: o.keepNumDims,
        arithmetic: floatArithmetic(biasPosition: 2, o.fusedActivationFunction), into: output)
    case (.transposeConv, .transposeConvOptions(let o)):
      return try Reference.transposeConv2D(
        input: input(2), filter: input(1), outputShape: transposeOutputShape(), window: .init(o),
        arithmetic: floatArithmetic(biasPosition: 3, o.fusedActivationFunction), into: output)
    case (.batchMatmul, .batchMatMulOptions(let o)):
      return try Reference.batchMatMul(lhs: input(0), rhs: input(1), adjX: o.adjX, adjY: o.adjY, into: output)
    case (.averagePool2d, .pool2DOptions(let o)):
      return try Reference.averagePool2D(
        input: input(0), parameters: .init(o), activation: activation(o.fusedActivationFunction), into: output)
    case (.maxPool2d, .pool2DOptions(let o)):
      return try Reference.maxPool2D(
        input: input(0), parameters: .init(o), activation: activation(o.fusedActivationFunction), into: output)
    case (.l2Pool2d, .pool2DOptions(let o)):
      return try Reference.l2Pool2D(
        input: input(0), parameters: .init(o), activation: activation(o.fusedActivationFunction), into: output)
    case (.softmax, .softmaxOptions(let o)):
      return try Reference.softmax(input: input(0), beta: o.beta, into: output)
    case (.add, _):
      return try Reference.add(input(0), input(1), activation: activation(binaryActivationFunction()), into: output)
    case (.sub, _):
      return try Reference.subtract(input(0), input(1), activation: activation(binaryActivationFunction()), into: output)
    case (.mul, _):
      return try Reference.multiply(input(0), input(1), activation: activation(binaryActivationFunction()), into: output)
    case (.logistic, _): return try Reference.logistic(input(0), into: output)
    case (.tanh, _): return try Reference.tanh(input(0), into: output)
    default: return try Reference.relu(input(0), reluBounds(), into: output)
    }
  }

  /// ADD, SUB or MUL on plain int32 tensors.
  private func computeInt32(into output: Reference.Destination<Int32>) throws -> Reference.Tensor<Int32> {
    try Reference.arithmetic(
      arithmeticOperation(), input(0), input(1), activation: activation(binaryActivationFunction()), into: output)
  }

  // MARK: Integer

  /// The operator on quantized tensors, into an output of raw type `Raw`.
  private func computeInteger<Raw: FixedWidthInteger & Sendable & BitwiseCopyable>(
    into destination: Reference.Destination<Raw>
  ) throws -> Reference.Tensor<Raw> {
    let output = try quantization(node.output(0))
    switch (code, node.options) {
    case (.conv2d, _), (.depthwiseConv2d, _), (.fullyConnected, _), (.transposeConv, _):
      return try node.input(1).type == .uint8
        ? computeWeighted(UInt8.self, into: destination) : computeWeighted(Int8.self, into: destination)
    case (.batchMatmul, .batchMatMulOptions(let o)):
      return try Reference.batchMatMul(
        lhs: input(0), rhs: input(1), adjX: o.adjX, adjY: o.adjY, lhsQuantization: quantization(node.input(0)),
        rhsQuantization: quantization(node.input(1)), output: output, rounding: rounding, into: destination)
    case (.averagePool2d, .pool2DOptions(let o)):
      return try Reference.averagePool2D(
        input: input(0), parameters: .init(o), activation: activation(o.fusedActivationFunction), output: output,
        into: destination)
    case (.maxPool2d, .pool2DOptions(let o)):
      return try Reference.maxPool2D(
        input: input(0), parameters: .init(o), activation: activation(o.fusedActivationFunction), output: output,
        into: destination)
    case (.softmax, .softmaxOptions(let o)):
      return try computeSoftmax(beta: o.beta, into: destination)
    case (.add, .addOptions(let o)):
      return try Reference.add(
        input(0), input(1), quantization: binary(o.fusedActivationFunction), powerOfTwoInt16Scales: o.potScaleInt16,
        into: destination)
    case (.sub, .subOptions(let o)):
      return try Reference.subtract(
        input(0), input(1), quantization: binary(o.fusedActivationFunction), powerOfTwoInt16Scales: o.potScaleInt16,
        into: destination)
    case (.mul, .mulOptions(let o)):
      return try Reference.multiply(input(0), input(1), quantization: binary(o.fusedActivationFunction), into: destination)
    case (.logistic, _), (.tanh, _):
      let inputQuantization = try quantization(node.input(0))
      if let sixteenBit = destination as? Reference.Destination<Int16> {
        _ = try code == .tanh
          ? Reference.tanh(input(0), inputScale: inputQuantization.scale, into: sixteenBit)
          : Reference.logistic(input(0), inputScale: inputQuantization.scale, into: sixteenBit)
        return try outputView(Raw.self).finished
      }
      return code == .tanh
        ? try Reference.tanh(input(0), input: inputQuantization, output: output, into: destination)
        : try Reference.logistic(input(0), input: inputQuantization, output: output, into: destination)
    default:
      return try Reference.relu(
        input(0), reluBounds(), input: quantization(node.input(0)), output: output, rounding: rounding,
        into: destination)
    }
  }

  /// A weighted operator on quantized activations with `Weight` weights, into `Raw` outputs.
  private func computeWeighted<Raw: FixedWidthInteger & Sendable & BitwiseCopyable, Weight: FixedWidthInteger & Sendable>(
    _ weight: Weight.Type, into destination: Reference.Destination<Raw>
  ) throws -> Reference.Tensor<Raw> {
    let filter: Reference.Tensor<Weight> = try input(1)
    switch node.options {
    case .conv2DOptions(let o):
      return try Reference.conv2D(
        input: input(0), filter: filter, bias: integerBias, window: .init(o),
        quantization: weighted(Raw.self, o.fusedActivationFunction, inputPosition: 0, biasPosition: 2),
        into: destination)
    case .depthwiseConv2DOptions(let o):
      return try Reference.depthwiseConv2D(
        input: input(0), filter: filter, bias: integerBias, window: .init(o),
        quantization: weighted(Raw.self, o.fusedActivationFunction, inputPosition: 0, biasPosition: 2),
        into: destination)
    case .fullyConnectedOptions(let o):
      return try Reference.fullyConnected(
        input: input(0), weights: filter, bias: integerBias, keepNumDims: o.keepNumDims,
        quantization: weighted(Raw.self, o.fusedActivationFunction, inputPosition: 0, biasPosition: 2),
        into: destination)
    case .transposeConvOptions(let o):
      return try Reference.transposeConv2D(
        input: input(2), filter: filter, bias: integerBias, outputShape: transposeOutputShape(), window: .init(o),
        quantization: weighted(Raw.self, o.fusedActivationFunction, inputPosition: 2, biasPosition: 3),
        into: destination)
    default: throw KernelError.invalid("\(node.opName) with options \(node.options)")
    }
  }

  /// SOFTMAX on a quantized input, into an output of raw type `Raw`.
  private func computeSoftmax<Raw: FixedWidthInteger & Sendable & BitwiseCopyable>(
    beta: Float, into destination: Reference.Destination<Raw>
  ) throws -> Reference.Tensor<Raw> {
    let input = try node.input(0)
    let scale = try quantization(input).scale
    switch input.type {
    case .int8:
      return try Reference.softmax(
        input: view(input, as: Int8.self), inputScale: scale, beta: beta, outputType: Raw.self, rounding: rounding,
        into: destination)
    case .uint8:
      return try Reference.softmax(
        input: view(input, as: UInt8.self), inputScale: scale, beta: beta, outputType: Raw.self, rounding: rounding,
        into: destination)
    default:
      guard let sixteenBit = destination as? Reference.Destination<Int16> else {
        throw KernelError.unsupported("SOFTMAX from \(input.type.name) into \(Raw.self) in the reference kernels")
      }
      _ = try Reference.softmax(
        input: view(input, as: Int16.self), inputScale: scale, beta: beta, rounding: rounding, into: sixteenBit)
      return try outputView(Raw.self).finished
    }
  }

  // MARK: Views of the node's tensors

  /// Input `position` read in place as `Element`s.
  private func input<Element>(_ position: Int, as type: Element.Type = Element.self) throws -> Reference.Tensor<Element> {
    try view(node.input(position), as: Element.self)
  }

  /// The float32 bias at `position` read in place, nil when absent.
  private func optionalFloatInput(_ position: Int) throws -> Reference.Tensor<Float>? {
    node.optionalInput(position) == nil ? nil : try input(position)
  }

  /// `tensor`'s memory as a reference tensor of `Element`s, without copying.
  private func view<Element>(_ tensor: RuntimeTensor, as type: Element.Type) throws -> Reference.Tensor<Element> {
    let elements = try memory(of: tensor, as: Element.self)
    return try Reference.Tensor(shape: tensor.shape, borrowing: UnsafeBufferPointer(elements))
  }

  /// The output's memory as a reference tensor the kernel writes in place.
  private func outputView<Element>(_ type: Element.Type) throws -> Reference.MutableTensor<Element> {
    let output = try node.output(0)
    return try Reference.MutableTensor(shape: output.shape, borrowing: memory(of: output, as: Element.self))
  }

  /// The output's memory as the destination of a reference kernel.
  private func destination<Element: BitwiseCopyable>(_ type: Element.Type) throws -> Reference.Destination<Element> {
    .existing(try outputView(Element.self))
  }

  /// `tensor`'s elements, after checking that the tensor holds `Element`s and has memory.
  private func memory<Element>(of tensor: RuntimeTensor, as type: Element.Type) throws
    -> UnsafeMutableBufferPointer<Element>
  {
    guard Self.elementType(of: Element.self) == tensor.type, let data = tensor.data else {
      throw KernelError.invalid("\(node.opName): tensor \(tensor.index) (\(tensor.type.name)) read as \(Element.self)")
    }
    return UnsafeMutableBufferPointer(start: data.assumingMemoryBound(to: Element.self), count: tensor.elementCount)
  }

  /// The runtime's element type of the Swift type `Element`, nil for types the reference kernels do not read.
  private static func elementType<Element>(of type: Element.Type) -> ElementType? {
    switch type {
    case is Float.Type: .float32
    case is Int8.Type: .int8
    case is UInt8.Type: .uint8
    case is Int16.Type: .int16
    case is Int32.Type: .int32
    case is Int64.Type: .int64
    default: nil
    }
  }

  // MARK: Parameters

  /// The per-tensor quantization of `tensor`.
  private func quantization(_ tensor: RuntimeTensor) throws -> Reference.QuantizationParameters {
    guard let parameters = tensor.quantization, let scale = parameters.scales.first else {
      throw KernelError.invalid("\(node.opName): tensor \(tensor.index) is not quantized")
    }
    return Reference.QuantizationParameters(scale: scale, zeroPoint: Int32(parameters.zeroPoints.first ?? 0))
  }

  /// A fused activation as a clamp.
  private func activation(_ function: ActivationFunctionType) throws -> FusedActivation {
    try FusedActivation(function, op: node.opName)
  }

  /// The float arithmetic of a weighted operator: its bias (read in place) and fused activation.
  private func floatArithmetic(biasPosition: Int, _ function: ActivationFunctionType) throws
    -> Reference.FloatArithmetic
  {
    Reference.FloatArithmetic(bias: try optionalFloatInput(biasPosition), activation: try activation(function))
  }

  /// TRANSPOSE_CONV's output shape, from the values of its first input.
  private func transposeOutputShape() throws -> Reference.ImageShape {
    try Reference.ImageShape(outputShapeOperand: Array(input(0, as: Int32.self).values))
  }

  /// ADD, SUB or MUL.
  private func arithmeticOperation() -> Reference.ArithmeticOperation {
    switch code {
    case .add: .add
    case .sub: .subtract
    default: .multiply
    }
  }

  /// The fused activation of ADD, SUB or MUL (none when the node has no options).
  private func binaryActivationFunction() -> ActivationFunctionType {
    switch node.options {
    case .addOptions(let o): o.fusedActivationFunction
    case .subOptions(let o): o.fusedActivationFunction
    case .mulOptions(let o): o.fusedActivationFunction
    default: .none
    }
  }

  /// The clamp of RELU, RELU6, RELU_N1_TO_1 or RELU_0_TO_1.
  private func reluBounds() -> Reference.ReluBounds {
    switch code {
    case .relu6: .relu6
    case .reluN1To1: .reluMinusOneToOne
    case .relu0To1: .reluZeroToOne
    default: .relu
    }
  }

  /// The quantization of a weighted operator, with LiteRT's choice of accumulation.
  private func weighted<Raw: FixedWidthInteger>(
    _ raw: Raw.Type, _ function: ActivationFunctionType, inputPosition: Int, biasPosition: Int
  ) throws -> Reference.WeightedQuantization {
    guard let weights = try node.input(1).quantization else {
      throw KernelError.invalid("\(node.opName): weights are not quantized")
    }
    let accumulation =
      code == .fullyConnected
      ? Reference.Accumulation.fullyConnected
      : .convolution(
        sixteenBitInput: Raw.bitWidth == 16, int32Bias: node.optionalInput(biasPosition)?.type == .int32,
        rounding: rounding)
    return Reference.WeightedQuantization(
      input: try quantization(node.input(inputPosition)),
      weights: Reference.ChannelQuantization(scales: weights.scales, zeroPoints: weights.zeroPoints.map { Int32($0) }),
      output: try quantization(node.output(0)), activation: try activation(function), accumulation: accumulation,
      rounding: rounding)
  }

  /// The quantization of ADD, SUB or MUL.
  private func binary(_ function: ActivationFunctionType) throws -> Reference.BinaryQuantization {
    Reference.BinaryQuantization(
      lhs: try quantization(node.input(0)), rhs: try quantization(node.input(1)),
      output: try quantization(node.output(0)), activation: try activation(function), rounding: rounding)
  }
}

// MARK: Schema options as reference parameters

// The one mapping from the schema's options to the reference kernels' parameters.

extension Reference.WindowParameters {
  /// The window of a pool or of a convolution without dilation (TRANSPOSE_CONV).
  init(strideH: Int32, strideW: Int32, dilationH: Int32 = 1, dilationW: Int32 = 1, padding: TFLiteFormat.Padding) {
    self.init(
      strideHeight: Int(strideH), strideWidth: Int(strideW), dilationHeight: Int(dilationH),
      dilationWidth: Int(dilationW), padding: padding == .same ? .same : .valid)
  }

  /// CONV_2D's window.
  init(_ o: Conv2DOptions) {
    self.init(
      strideH: o.strideH, strideW: o.strideW, dilationH: o.dilationHFactor, dilationW: o.dilationWFactor,
      padding: o.padding)
  }

  /// DEPTHWISE_CONV_2D's window.
  init(_ o: DepthwiseConv2DOptions) {
    self.init(
      strideH: o.strideH, strideW: o.strideW, dilationH: o.dilationHFactor, dilationW: o.dilationWFactor,
      padding: o.padding)
  }

  /// TRANSPOSE_CONV's window.
  init(_ o: TransposeConvOptions) { self.init(strideH: o.strideH, strideW: o.strideW, padding: o.padding) }
}

extension Reference.PoolParameters {
  /// The filter and window of AVERAGE_POOL_2D, MAX_POOL_2D or L2_POOL_2D.
  init(_ o: Pool2DOptions) {
    self.init(
      filterHeight: Int(o.filterHeight), filterWidth: Int(o.filterWidth),
      window: Reference.WindowParameters(strideH: o.strideH, strideW: o.strideW, padding: o.padding))
  }
}

extension Reference.ImageShape {
  /// TRANSPOSE_CONV's output shape from the values of its `output_shape` operand.
  init(outputShapeOperand dimensions: [Int32]) throws {
    guard dimensions.count == 4 else { throw KernelError.invalid("TRANSPOSE_CONV output_shape \(dimensions)") }
    self.init(
      batch: Int(dimensions[0]), height: Int(dimensions[1]), width: Int(dimensions[2]), channels: Int(dimensions[3]))
  }
}
