import Foundation
import TFLiteFormat
import XCTest

@testable import TFLiteRuntime

/// Drives the reference kernels (`Sources/TFLiteRuntime/Reference/`) straight from the committed
/// single-operator TestModels: each model is read with TFLiteFormat, its weights and options are
/// handed to the reference function, and the result must equal LiteRT's `BUILTIN_REF` output bit
/// for bit for every quantized case, and lie within the manifest's tolerance for float cases.
/// No part of the runtime's graph, kernels or registry takes part.
final class ReferenceKernelConformanceTests: XCTestCase {
  /// The operators the reference kernels cover.
  static let operators = [
    "CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "TRANSPOSE_CONV", "BATCH_MATMUL", "AVERAGE_POOL_2D",
    "MAX_POOL_2D",
    "L2_POOL_2D", "SOFTMAX", "ADD", "SUB", "MUL", "RELU", "RELU6", "RELU_N1_TO_1", "LOGISTIC", "TANH",
  ]

  func testSingleOperatorModelsMatchLiteRT() throws {
    let entries = try TestModelManifest.load().models.filter { entry in
      entry.kind == "op" && entry.ops.count == 1 && Self.operators.contains(entry.ops[0].op)
        && ["float32", "int8", "uint8", "int16x8"].contains(entry.quantization)
    }
    var tally: [String: (matched: Int, total: Int)] = [:]
    var excluded: [String] = []
    for entry in entries {
      var label = "\(entry.ops[0].op) \(entry.quantization == "uint8" ? "uint8 legacy" : entry.quantization)"
      do {
        let testCase = try ReferenceCase(entry)
        if ["ADD", "SUB", "MUL"].contains(entry.ops[0].op) && testCase.tensor(0)?.type == .int32 {
          label = "\(entry.ops[0].op) int32"
        }
        // Sparse weights are densified when a model is loaded, before any kernel sees them.
        if let reason = testCase.exclusion {
          excluded.append("\(entry.name) (\(reason))")
          continue
        }
        tally[label, default: (0, 0)].total += 1
        do {
          try testCase.check()
          tally[label, default: (0, 0)].matched += 1
        } catch {
          XCTFail("\(entry.name): \(error)")
        }
      } catch {
        XCTFail("\(entry.name) could not be read: \(error)")
      }
    }
    print("reference kernels: not run: \(excluded.joined(separator: ", "))")
    XCTAssertLessThanOrEqual(
      excluded.count, 1, "more single-operator cases fall outside the reference kernels than expected")
    for (label, counts) in tally.sorted(by: { $0.key < $1.key }) {
      let how = label.hasSuffix("float32") ? "within tolerance" : "exact"
      print("reference kernels: \(label) \(counts.matched)/\(counts.total) \(how)")
    }
    // Every covered operator has cases in float and in at least one integer form.
    for op in Self.operators {
      XCTAssertNotNil(tally["\(op) float32"], "no float32 case of \(op)")
      if op != "L2_POOL_2D" {
        XCTAssertTrue(
          tally.keys.contains { $0.hasPrefix(op + " ") && !$0.hasSuffix("float32") }, "no integer case of \(op)")
      }
    }
    XCTAssertGreaterThan(entries.count, 250, "fewer single-operator cases than the TestModels hold")
  }
}

/// One single-operator TestModels case: its model, operator, inputs and expected output.
private struct ReferenceCase {
  let entry: TestModelManifest.Entry
  let model: TFLiteModel
  let subgraph: SubGraph
  let op: Operator
  /// The `.npy` inputs, by tensor index.
  let inputs: [Int: NumPyArray]
  let expected: NumPyArray

  init(_ entry: TestModelManifest.Entry) throws {
    self.entry = entry
    model = try TFLiteModel(contentsOfFile: TestModelManifest.directory.appendingPathComponent(entry.file).path)
    subgraph = model.model.subgraphs[0]
    op = subgraph.operators[0]
    guard entry.inputs.count == subgraph.inputs.count, entry.outputs.count == 1 else {
      throw Reference.Error("unexpected inputs or outputs in the manifest")
    }
    var inputs: [Int: NumPyArray] = [:]
    for (position, file) in entry.inputs.enumerated() {
      inputs[Int(subgraph.inputs[position])] = try TestModelManifest.array(file.file)
    }
    self.inputs = inputs
    expected = try TestModelManifest.array(entry.outputs[0].file)
  }

  /// Why the case lies outside the reference kernels (sparse weights), if it does.
  var exclusion: String? {
    let operands = op.inputs.filter { $0 >= 0 }.map { subgraph.tensors[Int($0)] }
    return operands.contains(where: { $0.sparsity != nil }) ? "sparse weights" : nil
  }

  // MARK: Operands

  /// The schema tensor of operand `position` of the operator (nil when absent).
  func tensor(_ position: Int) -> TFLiteFormat.Tensor? {
    guard position < op.inputs.count, op.inputs[position] >= 0 else { return nil }
    return subgraph.tensors[Int(op.inputs[position])]
  }

  /// The values of operand `position`: from its `.npy` file when it is a model input, else the constant data.
  func values<Element: NumPyScalar>(_ position: Int, as type: Element.Type = Element.self) throws
    -> Reference.Tensor<Element>
  {
    let index = Int(op.inputs[position])
    if let array = inputs[index] {
      return try Reference.Tensor(shape: array.shape, values: array.values(as: Element.self))
    }
    let tensor = subgraph.tensors[index]
    let data = model.tensorData(tensor)
    let shape = tensor.shape.map(Int.init)
    let count = try Reference.elementCount(shape)
    if tensor.type == .int4 {
      // Two values a byte, the first in the low nibble (unpacked here, as a loader would).
      let values = (0..<count).map { index -> Int8 in
        let byte = Int8(bitPattern: data[index / 2])
        return index % 2 == 0 ? (byte << 4) >> 4 : byte >> 4
      }
      guard let converted = values as? [Element] else { throw Reference.Error("int4 data read as \(Element.self)") }
      return try Reference.Tensor(shape: shape, values: converted)
    }
    guard data.count == count * MemoryLayout<Element>.size else {
      throw Reference.Error("tensor \(index) has \(data.count) bytes for \(count) \(Element.self) values")
    }
    let values = (0..<count).map {
      data.loadUnaligned(fromByteOffset: $0 * MemoryLayout<Element>.size, as: Element.self)
    }
    return try Reference.Tensor(shape: shape, values: values)
  }

  /// The per-tensor quantization of a schema tensor.
  func quantization(_ tensor: TFLiteFormat.Tensor) throws -> Reference.QuantizationParameters {
    guard let q = tensor.quantization, let scale = q.scale.first else {
      throw Reference.Error("tensor is not quantized")
    }
    return Reference.QuantizationParameters(scale: scale, zeroPoint: Int32(q.zeroPoint.first ?? 0))
  }

  /// The per-tensor quantization of operand `position`.
  func quantization(_ position: Int) throws -> Reference.QuantizationParameters {
    guard let tensor = tensor(position) else { throw Reference.Error("operand \(position) is absent") }
    return try quantization(tensor)
  }

  /// The output's tensor.
  var outputTensor: TFLiteFormat.Tensor { subgraph.tensors[Int(op.outputs[0])] }

  /// The integer bias of operand `position` (int32 or int64), nil when absent.
  func integerBias(_ position: Int) throws -> [Int64]? {
    guard let bias = tensor(position) else { return nil }
    return bias.type == .int64
      ? try values(position, as: Int64.self).values : try values(position, as: Int32.self).values.map(Int64.init)
  }

  /// The float bias of operand `position`, nil when absent.
  func floatBias(_ position: Int) throws -> [Float]? {
    tensor(position) == nil ? nil : try values(position, as: Float.self).values
  }

  // MARK: Checks

  /// Runs the reference function for the operator and compares with LiteRT's output.
  func check() throws {
    let inputType = tensor(entry.ops[0].op == "TRANSPOSE_CONV" ? 2 : 0)?.type
    switch inputType {
    case .float32: try compare(try runFloat())
    case .int8: try runInteger(Int8.self)
    case .uint8: try runInteger(UInt8.self)
    case .int16: try runInteger(Int16.self)
    case .int32: try compare(try runInt32())
    default: throw Reference.Error("no reference kernel for input type \(String(describing: inputType))")
    }
  }

  /// Requires `actual` to equal the expected output in shape and, within the manifest's tolerance, in value.
  func compare(_ actual: Reference.Tensor<Float>) throws {
    guard actual.shape == expected.shape else {
      throw Reference.Error("shape \(actual.shape), LiteRT \(expected.shape)")
    }
    let want = try expected.floatValues()
    let atol = entry.tolerance?.atol ?? 0
    let rtol = entry.tolerance?.rtol ?? 0
    for (index, (have, wanted)) in zip(actual.values, want).enumerated() {
      guard have == wanted || abs(Double(have) - Double(wanted)) <= atol + rtol * abs(Double(wanted)) else {
        throw Reference.Error("element \(index) is \(have), LiteRT \(wanted) (atol \(atol), rtol \(rtol))")
      }
    }
  }

  /// Requires `actual` to equal the expected output bit for bit.
  func compare<Raw: NumPyScalar & Equatable>(_ actual: Reference.Tensor<Raw>) throws {
    guard actual.shape == expected.shape else {
      throw Reference.Error("shape \(actual.shape), LiteRT \(expected.shape)")
    }
    let want = try expected.values(as: Raw.self)
    if let index = want.indices.first(where: { actual.values[$0] != want[$0] }) {
      let mismatches = zip(actual.values, want).filter { $0 != $1 }.count
      throw Reference.Error(
        "\(mismatches) of \(want.count) elements differ; first element \(index): \(actual.values[index]), LiteRT \(want[index])"
      )
    }
  }

  /// The operator on float tensors.
  func runFloat() throws -> Reference.Tensor<Float> {
    let name = entry.ops[0].op
    switch (name, op.builtinOptions) {
    case ("CONV_2D", .conv2DOptions(let o)):
      return try Reference.conv2D(
        input: values(0), filter: values(1), bias: floatBias(2),
        window: Reference.WindowParameters(o),
        activation: activation(o.fusedActivationFunction))
    case ("DEPTHWISE_CONV_2D", .depthwiseConv2DOptions(let o)):
      return try Reference.depthwiseConv2D(
        input: values(0), filter: values(1), bias: floatBias(2),
        window: Reference.WindowParameters(o),
        activation: activation(o.fusedActivationFunction))
    case ("FULLY_CONNECTED", .fullyConnectedOptions(let o)):
      return try Reference.fullyConnected(
        input: values(0), weights: values(1), bias: floatBias(2), keepNumDims: o.keepNumDims,
        activation: activation(o.fusedActivationFunction))
    case ("TRANSPOSE_CONV", .transposeConvOptions(let o)):
      return try Reference.transposeConv2D(
        input: values(2), filter: values(1), bias: floatBias(3), outputShape: outputShape(),
        window: Reference.WindowParameters(o), activation: activation(o.fusedActivationFunction))
    case ("AVERAGE_POOL_2D", .pool2DOptions(let o)):
      return try Reference.averagePool2D(
        input: values(0), parameters: Reference.PoolParameters(o), activation: activation(o.fusedActivationFunction))
    case ("MAX_POOL_2D", .pool2DOptions(let o)):
      return try Reference.maxPool2D(
        input: values(0), parameters: Reference.PoolParameters(o), activation: activation(o.fusedActivationFunction))
    case ("L2_POOL_2D", .pool2DOptions(let o)):
      return try Reference.l2Pool2D(
        input: values(0), parameters: Reference.PoolParameters(o), activation: activation(o.fusedActivationFunction))
    case ("BATCH_MATMUL", .batchMatMulOptions(let o)):
      return try Reference.batchMatMul(lhs: values(0), rhs: values(1), adjX: o.adjX, adjY: o.adjY)
    case ("SOFTMAX", .softmaxOptions(let o)):
      return try Reference.softmax(input: values(0), beta: o.beta)
    case ("ADD", .addOptions(let o)):
      return try Reference.add(values(0), values(1), activation: activation(o.fusedActivationFunction))
    case ("SUB", .subOptions(let o)):
      return try Reference.subtract(values(0), values(1), activation: activation(o.fusedActivationFunction))
    case ("MUL", .mulOptions(let o)):
      return try Reference.multiply(values(0), values(1), activation: activation(o.fusedActivationFunction))
    case ("ADD", _): return try Reference.add(values(0), values(1), activation: .none)
    case ("SUB", _): return try Reference.subtract(values(0), values(1), activation: .none)
    case ("MUL", _): return try Reference.multiply(values(0), values(1), activation: .none)
    case ("LOGISTIC", _): return try Reference.logistic(values(0))
    case ("TANH", _): return try Reference.tanh(values(0))
    default:
      if let bounds = Self.reluBounds[name] { return try Reference.relu(values(0), bounds) }
      throw Reference.Error("\(name) with options \(op.builtinOptions)")
    }
  }

  /// ADD, SUB or MUL on plain int32 tensors.
  func runInt32() throws -> Reference.Tensor<Int32> {
    let (operation, function): (Reference.ArithmeticOperation, ActivationFunctionType)
    switch op.builtinOptions {
    case .addOptions(let o): (operation, function) = (.add, o.fusedActivationFunction)
    case .subOptions(let o): (operation, function) = (.subtract, o.fusedActivationFunction)
    case .mulOptions(let o): (operation, function) = (.multiply, o.fusedActivationFunction)
    default: throw Reference.Error("\(entry.ops[0].op) on int32 with options \(op.builtinOptions)")
    }
    return try Reference.arithmetic(
      operation, values(0, as: Int32.self), values(1, as: Int32.self), activation: activation(function))
  }

  /// The operator on int8, uint8 or int16 activations.
  func runInteger<Raw: FixedWidthInteger & NumPyScalar & Sendable>(_ type: Raw.Type) throws {
    let name = entry.ops[0].op
    let output = try quantization(outputTensor)
    switch (name, op.builtinOptions) {
    case ("CONV_2D", _), ("DEPTHWISE_CONV_2D", _), ("FULLY_CONNECTED", _), ("TRANSPOSE_CONV", _):
      switch tensor(1)?.type {
      case .int8, .int4: try runWeighted(Raw.self, Int8.self)
      case .uint8: try runWeighted(Raw.self, UInt8.self)
      default: throw Reference.Error("weights of type \(String(describing: tensor(1)?.type))")
      }
    case ("AVERAGE_POOL_2D", .pool2DOptions(let o)):
      try compare(
        Reference.averagePool2D(
          input: values(0, as: Raw.self), parameters: Reference.PoolParameters(o), activation: activation(o.fusedActivationFunction),
          output: output))
    case ("MAX_POOL_2D", .pool2DOptions(let o)):
      try compare(
        Reference.maxPool2D(
          input: values(0, as: Raw.self), parameters: Reference.PoolParameters(o), activation: activation(o.fusedActivationFunction),
          output: output))
    case ("BATCH_MATMUL", .batchMatMulOptions(let o)):
      try compare(
        Reference.batchMatMul(
          lhs: values(0, as: Raw.self), rhs: values(1, as: Raw.self), adjX: o.adjX, adjY: o.adjY,
          lhsQuantization: quantization(0), rhsQuantization: quantization(1), output: output))
    case ("SOFTMAX", .softmaxOptions(let o)):
      try runSoftmax(Raw.self, beta: o.beta)
    case ("ADD", .addOptions(let o)):
      try compare(
        Reference.add(
          values(0, as: Raw.self), values(1, as: Raw.self), quantization: binary(o.fusedActivationFunction),
          powerOfTwoInt16Scales: o.potScaleInt16))
    case ("SUB", .subOptions(let o)):
      try compare(
        Reference.subtract(
          values(0, as: Raw.self), values(1, as: Raw.self), quantization: binary(o.fusedActivationFunction),
          powerOfTwoInt16Scales: o.potScaleInt16))
    case ("MUL", .mulOptions(let o)):
      try compare(
        Reference.multiply(
          values(0, as: Raw.self), values(1, as: Raw.self), quantization: binary(o.fusedActivationFunction)))
    case ("LOGISTIC", _), ("TANH", _):
      try runSigmoid(Raw.self, tanh: name == "TANH", output: output)
    default:
      guard let bounds = Self.reluBounds[name] else {
        throw Reference.Error("\(name) with options \(op.builtinOptions)")
      }
      try compare(Reference.relu(values(0, as: Raw.self), bounds, input: quantization(0), output: output))
    }
  }

  /// A weighted operator (CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED, TRANSPOSE_CONV) on integer
  /// activations with `Weight` weights (packed int4 weights are read as int8).
  func runWeighted<Raw: FixedWidthInteger & NumPyScalar & Sendable, Weight: FixedWidthInteger & NumPyScalar & Sendable>(
    _ raw: Raw.Type, _ weight: Weight.Type
  ) throws {
    switch op.builtinOptions {
    case .conv2DOptions(let o):
      try compare(
        Reference.conv2D(
          input: values(0, as: Raw.self), filter: values(1, as: Weight.self), bias: integerBias(2),
          window: Reference.WindowParameters(o),
          quantization: weighted(Raw.self, o.fusedActivationFunction, biasPosition: 2, fullyConnected: false)))
    case .depthwiseConv2DOptions(let o):
      try compare(
        Reference.depthwiseConv2D(
          input: values(0, as: Raw.self), filter: values(1, as: Weight.self), bias: integerBias(2),
          window: Reference.WindowParameters(o),
          quantization: weighted(Raw.self, o.fusedActivationFunction, biasPosition: 2, fullyConnected: false)))
    case .fullyConnectedOptions(let o):
      try compare(
        Reference.fullyConnected(
          input: values(0, as: Raw.self), weights: values(1, as: Weight.self), bias: integerBias(2),
          keepNumDims: o.keepNumDims,
          quantization: weighted(Raw.self, o.fusedActivationFunction, biasPosition: 2, fullyConnected: true)))
    case .transposeConvOptions(let o):
      try compare(
        Reference.transposeConv2D(
          input: values(2, as: Raw.self), filter: values(1, as: Weight.self), bias: integerBias(3),
          outputShape: outputShape(), window: Reference.WindowParameters(o),
          quantization: weighted(Raw.self, o.fusedActivationFunction, biasPosition: 3, fullyConnected: false)))
    default: throw Reference.Error("\(entry.ops[0].op) with options \(op.builtinOptions)")
    }
  }

  /// SOFTMAX on an integer input, into the output's type.
  func runSoftmax<Raw: FixedWidthInteger & NumPyScalar & Sendable>(_ raw: Raw.Type, beta: Float) throws {
    let scale = try quantization(0).scale
    if Raw.self == Int16.self {
      try compare(Reference.softmax(input: values(0, as: Int16.self), inputScale: scale, beta: beta))
      return
    }
    switch outputTensor.type {
    case .int8:
      try compare(
        Reference.softmax(input: values(0, as: Raw.self), inputScale: scale, beta: beta, outputType: Int8.self))
    case .uint8:
      try compare(
        Reference.softmax(input: values(0, as: Raw.self), inputScale: scale, beta: beta, outputType: UInt8.self))
    case .int16:
      try compare(
        Reference.softmax(input: values(0, as: Raw.self), inputScale: scale, beta: beta, outputType: Int16.self))
    default: throw Reference.Error("SOFTMAX into \(outputTensor.type)")
    }
  }

  /// LOGISTIC or TANH on an integer input.
  func runSigmoid<Raw: FixedWidthInteger & NumPyScalar & Sendable>(
    _ raw: Raw.Type, tanh: Bool, output: Reference.QuantizationParameters
  ) throws {
    let input = try quantization(0)
    if Raw.self == Int16.self {
      let values = try values(0, as: Int16.self)
      try compare(
        tanh ? Reference.tanh(values, inputScale: input.scale) : Reference.logistic(values, inputScale: input.scale))
      return
    }
    let values = try values(0, as: Raw.self)
    try compare(
      tanh
        ? Reference.tanh(values, input: input, output: output)
        : Reference.logistic(values, input: input, output: output))
  }

  // MARK: Parameters from the schema

  /// The schema's RELU-family operators.
  static let reluBounds: [String: Reference.ReluBounds] = [
    "RELU": .relu, "RELU6": .relu6, "RELU_N1_TO_1": .reluMinusOneToOne, "RELU_0_TO_1": .reluZeroToOne,
  ]

  /// A schema fused activation as a clamp.
  func activation(_ function: ActivationFunctionType) throws -> FusedActivation {
    try FusedActivation(function, op: entry.ops[0].op)
  }

  /// TRANSPOSE_CONV's output shape, from its constant first operand.
  func outputShape() throws -> Reference.ImageShape {
    try Reference.ImageShape(outputShapeOperand: values(0, as: Int32.self).values)
  }

  /// The quantization of a weighted operator, with LiteRT's choice of accumulation.
  func weighted<Raw: FixedWidthInteger>(
    _ raw: Raw.Type, _ function: ActivationFunctionType, biasPosition: Int, fullyConnected: Bool
  ) throws -> Reference.WeightedQuantization {
    guard let weights = tensor(1)?.quantization else { throw Reference.Error("weights are not quantized") }
    let accumulation =
      fullyConnected
      ? Reference.Accumulation.fullyConnected
      : .convolution(
        sixteenBitInput: Raw.bitWidth == 16, int32Bias: tensor(biasPosition)?.type == .int32, rounding: .doubleRounding)
    return Reference.WeightedQuantization(
      input: try quantization(entry.ops[0].op == "TRANSPOSE_CONV" ? 2 : 0),
      weights: Reference.ChannelQuantization(scales: weights.scale, zeroPoints: weights.zeroPoint.map { Int32($0) }),
      output: try quantization(outputTensor), activation: try activation(function), accumulation: accumulation)
  }

  /// The quantization of a two-input operator.
  func binary(_ function: ActivationFunctionType) throws -> Reference.BinaryQuantization {
    Reference.BinaryQuantization(
      lhs: try quantization(0), rhs: try quantization(1), output: try quantization(outputTensor),
      activation: try activation(function))
  }
}
