// The reference kernel set as runtime kernels (`RunnerOptions(kernels: .reference)`).
//
// `ReferenceAdapterKernel` runs one node with the plain functions of `Reference/`: in `eval` it
// copies the node's inputs into `Reference.Tensor`s, reads the options and quantization of the
// node, calls the reference function and copies the result into the output. Checking the node and
// setting the output's shape stay with the operator's optimized kernel (built alongside, prepared,
// never evaluated), so both sets refuse the same models and give outputs of the same shape.
//
// Covered: CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED, TRANSPOSE_CONV, AVERAGE_POOL_2D,
// MAX_POOL_2D, SOFTMAX, ADD, SUB, MUL, RELU, RELU6, RELU_N1_TO_1, LOGISTIC and TANH on float32
// tensors and on quantized int8, uint8 and int16 tensors (ADD, SUB and MUL also on plain int32).
// Every other operator, hybrid nodes (float activations with integer weights) and INT4 weights keep their
// optimized kernel under `.reference`.

import TFLiteFormat
import TFLiteLinearAlgebra

/// A node computed by the reference kernels (see the file header).
final class ReferenceAdapterKernel: Kernel {
  /// The operators the reference kernel set runs.
  static let operators: Set<BuiltinOperator> = [
    .conv2d, .depthwiseConv2d, .fullyConnected, .transposeConv, .averagePool2d, .maxPool2d, .softmax, .add, .sub,
    .mul, .relu, .relu6, .reluN1To1, .logistic, .tanh,
  ]

  /// The node.
  private let node: Node
  /// The operator.
  private let code: BuiltinOperator
  /// The optimized kernel of the node: it checks the node and sets the output's shape.
  private let shapeKernel: any Kernel
  /// The rounding of the integer rescaling, from `prepare`.
  private var rounding = RoundingPolicy.doubleRounding

  /// True when the reference set runs `node`: a covered operator on float32 or quantized operands
  /// (or ADD, SUB, MUL on int32); hybrid nodes and INT4 weights are not covered.
  static func covers(_ node: Node) -> Bool {
    guard case .builtin(let code) = node.op, operators.contains(code), node.optionalInput(1)?.type != .int4 else {
      return false
    }
    let activation = node.optionalInput(code == .transposeConv ? 2 : 0)
    return switch OperandArithmetic(activation: activation, output: node.outputs.first, weights: node.optionalInput(1)) {
    case .quantized: true
    case .hybrid: false
    case .plain: activation?.type == .float32 || activation?.type == .int32 && [.add, .sub, .mul].contains(code)
    }
  }

  init(node: Node) throws {
    guard Self.covers(node), case .builtin(let code) = node.op, let optimized = KernelDispatch.factory(for: node.op)
    else { throw KernelError.unsupported("no reference kernel for \(node.opName) on these operands") }
    self.node = node
    self.code = code
    shapeKernel = try optimized(node)
  }

  func prepare(_ context: inout PrepareContext) throws {
    rounding = context.roundingPolicy
    try shapeKernel.prepare(&context)
  }

  func eval(_ context: EvalContext) throws {
    do {
      let output = try node.output(0)
      switch output.type {
      case .float32: try write(computeFloat(), to: output)
      case .int32: try write(computeInt32(), to: output)
      case .int8: try write(computeInteger(Int8.self), to: output)
      case .uint8: try write(computeInteger(UInt8.self), to: output)
      case .int16: try write(computeInteger(Int16.self), to: output)
      default: throw KernelError.unsupported("\(node.opName) into \(output.type.name) in the reference kernels")
      }
    } catch let error as Reference.Error {
      throw KernelError.invalid("\(node.opName): \(error.description)")
    }
  }

  // MARK: Float

  /// The operator on float tensors.
  private func computeFloat() throws -> Reference.Tensor<Float> {
    switch (code, node.options) {
    case (.conv2d, .conv2DOptions(let o)):
      return try Reference.conv2D(
        input: values(0), filter: values(1), bias: optionalValues(2),
        window: window(o.strideH, o.strideW, o.dilationHFactor, o.dilationWFactor, o.padding),
        activation: activation(o.fusedActivationFunction))
    case (.depthwiseConv2d, .depthwiseConv2DOptions(let o)):
      return try Reference.depthwiseConv2D(
        input: values(0), filter: values(1), bias: optionalValues(2),
        window: window(o.strideH, o.strideW, o.dilationHFactor, o.dilationWFactor, o.padding),
        activation: activation(o.fusedActivationFunction))
    case (.fullyConnected, .fullyConnectedOptions(let o)):
      return try Reference.fullyConnected(
        input: values(0), weights: values(1), bias: optionalValues(2), keepNumDims: o.keepNumDims,
        activation: activation(o.fusedActivationFunction))
    case (.transposeConv, .transposeConvOptions(let o)):
      return try Reference.transposeConv2D(
        input: values(2), filter: values(1), bias: optionalValues(3), outputShape: outputShape(),
        window: window(o.strideH, o.strideW, 1, 1, o.padding), activation: activation(o.fusedActivationFunction))
    case (.averagePool2d, .pool2DOptions(let o)):
      return try Reference.averagePool2D(
        input: values(0), parameters: pool(o), activation: activation(o.fusedActivationFunction))
    case (.maxPool2d, .pool2DOptions(let o)):
      return try Reference.maxPool2D(
        input: values(0), parameters: pool(o), activation: activation(o.fusedActivationFunction))
    case (.softmax, .softmaxOptions(let o)):
      return try Reference.softmax(input: values(0), beta: o.beta)
    case (.add, _):
      return try Reference.add(values(0), values(1), activation: activation(binaryActivationFunction()))
    case (.sub, _):
      return try Reference.subtract(values(0), values(1), activation: activation(binaryActivationFunction()))
    case (.mul, _):
      return try Reference.multiply(values(0), values(1), activation: activation(binaryActivationFunction()))
    case (.logistic, _): return try Reference.logistic(values(0))
    case (.tanh, _): return try Reference.tanh(values(0))
    default: return try Reference.relu(values(0), reluBounds())
    }
  }

  /// ADD, SUB or MUL on plain int32 tensors.
  private func computeInt32() throws -> Reference.Tensor<Int32> {
    try Reference.arithmetic(
      arithmeticOperation(), values(0), values(1), activation: activation(binaryActivationFunction()))
  }

  // MARK: Integer

  /// The operator on quantized `Raw` tensors (the output's type).
  private func computeInteger<Raw: FixedWidthInteger & Sendable>(_ raw: Raw.Type) throws -> Reference.Tensor<Raw> {
    let output = try quantization(node.output(0))
    switch (code, node.options) {
    case (.conv2d, _), (.depthwiseConv2d, _), (.fullyConnected, _), (.transposeConv, _):
      switch try node.input(1).type {
      case .int8: return try computeWeighted(Raw.self, Int8.self)
      case .uint8: return try computeWeighted(Raw.self, UInt8.self)
      case let type: throw KernelError.unsupported("\(node.opName) with \(type.name) weights in the reference kernels")
      }
    case (.averagePool2d, .pool2DOptions(let o)):
      return try Reference.averagePool2D(
        input: values(0), parameters: pool(o), activation: activation(o.fusedActivationFunction), output: output)
    case (.maxPool2d, .pool2DOptions(let o)):
      return try Reference.maxPool2D(
        input: values(0), parameters: pool(o), activation: activation(o.fusedActivationFunction), output: output)
    case (.softmax, .softmaxOptions(let o)):
      return try computeSoftmax(Raw.self, beta: o.beta)
    case (.add, .addOptions(let o)):
      return try Reference.add(
        values(0), values(1), quantization: binary(o.fusedActivationFunction), powerOfTwoInt16Scales: o.potScaleInt16)
    case (.sub, .subOptions(let o)):
      return try Reference.subtract(
        values(0), values(1), quantization: binary(o.fusedActivationFunction), powerOfTwoInt16Scales: o.potScaleInt16)
    case (.mul, .mulOptions(let o)):
      return try Reference.multiply(values(0), values(1), quantization: binary(o.fusedActivationFunction))
    case (.logistic, _), (.tanh, _):
      let input = try quantization(node.input(0))
      if Raw.self == Int16.self {
        let values: Reference.Tensor<Int16> = try values(0)
        let result =
          code == .tanh
          ? try Reference.tanh(values, inputScale: input.scale) : try Reference.logistic(values, inputScale: input.scale)
        return try cast(result)
      }
      let values: Reference.Tensor<Raw> = try values(0)
      return code == .tanh
        ? try Reference.tanh(values, input: input, output: output)
        : try Reference.logistic(values, input: input, output: output)
    default:
      return try Reference.relu(values(0), reluBounds(), input: quantization(node.input(0)), output: output)
    }
  }

  /// A weighted operator on quantized `Raw` activations with `Weight` weights.
  private func computeWeighted<Raw: FixedWidthInteger & Sendable, Weight: FixedWidthInteger & Sendable>(
    _ raw: Raw.Type, _ weight: Weight.Type
  ) throws -> Reference.Tensor<Raw> {
    let filter: Reference.Tensor<Weight> = try values(1)
    switch node.options {
    case .conv2DOptions(let o):
      return try Reference.conv2D(
        input: values(0), filter: filter, bias: integerBias(2),
        window: window(o.strideH, o.strideW, o.dilationHFactor, o.dilationWFactor, o.padding),
        quantization: weighted(Raw.self, o.fusedActivationFunction, inputPosition: 0, biasPosition: 2))
    case .depthwiseConv2DOptions(let o):
      return try Reference.depthwiseConv2D(
        input: values(0), filter: filter, bias: integerBias(2),
        window: window(o.strideH, o.strideW, o.dilationHFactor, o.dilationWFactor, o.padding),
        quantization: weighted(Raw.self, o.fusedActivationFunction, inputPosition: 0, biasPosition: 2))
    case .fullyConnectedOptions(let o):
      return try Reference.fullyConnected(
        input: values(0), weights: filter, bias: integerBias(2), keepNumDims: o.keepNumDims,
        quantization: weighted(Raw.self, o.fusedActivationFunction, inputPosition: 0, biasPosition: 2))
    case .transposeConvOptions(let o):
      return try Reference.transposeConv2D(
        input: values(2), filter: filter, bias: integerBias(3), outputShape: outputShape(),
        window: window(o.strideH, o.strideW, 1, 1, o.padding),
        quantization: weighted(Raw.self, o.fusedActivationFunction, inputPosition: 2, biasPosition: 3))
    default: throw KernelError.invalid("\(node.opName) with options \(node.options)")
    }
  }

  /// SOFTMAX on a quantized input, into the output's type `Raw`.
  private func computeSoftmax<Raw: FixedWidthInteger & Sendable>(_ raw: Raw.Type, beta: Float) throws
    -> Reference.Tensor<Raw>
  {
    let input = try node.input(0)
    let scale = try quantization(input).scale
    switch input.type {
    case .int8:
      return try Reference.softmax(input: values(0, as: Int8.self), inputScale: scale, beta: beta, outputType: Raw.self)
    case .uint8:
      return try Reference.softmax(input: values(0, as: UInt8.self), inputScale: scale, beta: beta, outputType: Raw.self)
    case .int16:
      return try cast(Reference.softmax(input: values(0, as: Int16.self), inputScale: scale, beta: beta))
    default: throw KernelError.unsupported("SOFTMAX on \(input.type.name) in the reference kernels")
    }
  }

  // MARK: Operands

  /// The values of input `position` as a reference tensor of `Element`.
  private func values<Element>(_ position: Int, as type: Element.Type = Element.self) throws -> Reference.Tensor<Element> {
    let tensor = try node.input(position)
    guard tensor.type.byteCount == MemoryLayout<Element>.size, let data = tensor.data else {
      throw KernelError.invalid("\(node.opName): input \(position) (\(tensor.type.name)) read as \(Element.self)")
    }
    let elements = UnsafeBufferPointer(start: data.assumingMemoryBound(to: Element.self), count: tensor.elementCount)
    return try Reference.Tensor(shape: tensor.shape, values: Array(elements))
  }

  /// The values of input `position`, nil when it is absent.
  private func optionalValues(_ position: Int) throws -> [Float]? {
    node.optionalInput(position) == nil ? nil : try values(position, as: Float.self).values
  }

  /// The integer bias of input `position` (int32 or int64), nil when absent.
  private func integerBias(_ position: Int) throws -> [Int64]? {
    guard let bias = node.optionalInput(position) else { return nil }
    return bias.type == .int64
      ? try values(position, as: Int64.self).values : try values(position, as: Int32.self).values.map(Int64.init)
  }

  /// A reference tensor of `Source` values as `Target` when both are the same type.
  private func cast<Source, Target>(_ tensor: Reference.Tensor<Source>) throws -> Reference.Tensor<Target> {
    guard let values = tensor.values as? [Target] else {
      throw KernelError.invalid("\(node.opName): \(Source.self) result for a \(Target.self) output")
    }
    return try Reference.Tensor(shape: tensor.shape, values: values)
  }

  /// Copies `result` into `output`, whose shape `prepare` set.
  private func write<Element>(_ result: Reference.Tensor<Element>, to output: RuntimeTensor) throws {
    guard result.values.count == output.elementCount, output.type.byteCount == MemoryLayout<Element>.size,
      let data = output.data
    else {
      throw KernelError.invalid(
        "\(node.opName): the reference kernel gave shape \(result.shape), the output has shape \(output.shape)")
    }
    result.values.withUnsafeBufferPointer {
      data.copyMemory(from: $0.baseAddress!, byteCount: $0.count * MemoryLayout<Element>.size)
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

  /// The window of a convolution or pool.
  private func window(_ strideH: Int32, _ strideW: Int32, _ dilationH: Int32, _ dilationW: Int32, _ padding: Padding)
    -> Reference.WindowParameters
  {
    Reference.WindowParameters(
      strideHeight: Int(strideH), strideWidth: Int(strideW), dilationHeight: Int(dilationH),
      dilationWidth: Int(dilationW), padding: padding == .same ? .same : .valid)
  }

  /// The filter and window of a pool.
  private func pool(_ o: Pool2DOptions) -> Reference.PoolParameters {
    Reference.PoolParameters(
      filterHeight: Int(o.filterHeight), filterWidth: Int(o.filterWidth),
      window: window(o.strideH, o.strideW, 1, 1, o.padding))
  }

  /// TRANSPOSE_CONV's output shape, from its first input.
  private func outputShape() throws -> Reference.ImageShape {
    let dimensions = try values(0, as: Int32.self).values.map(Int.init)
    guard dimensions.count == 4 else { throw KernelError.invalid("TRANSPOSE_CONV output_shape \(dimensions)") }
    return Reference.ImageShape(batch: dimensions[0], height: dimensions[1], width: dimensions[2], channels: dimensions[3])
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

  /// The clamp of RELU, RELU6 or RELU_N1_TO_1.
  private func reluBounds() -> Reference.ReluBounds {
    switch code {
    case .relu6: .relu6
    case .reluN1To1: .reluMinusOneToOne
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
      output: try quantization(node.output(0)), activation: try activation(function))
  }
}
