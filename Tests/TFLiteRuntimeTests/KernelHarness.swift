import TFLiteFormat
import XCTest

@testable import TFLiteRuntime

/// Builds tensors and nodes by hand and runs one kernel through init, prepare and eval, the way the
/// executor does (scratch from `PrepareContext`, outputs allocated after prepare).
enum KernelHarness {
  /// A FLOAT32 tensor holding `values` with `shape`; `constant` marks it as model data.
  static func floatTensor(_ index: Int, _ shape: [Int], _ values: [Float], constant: Bool = false) -> RuntimeTensor {
    let tensor = RuntimeTensor(
      index: index, name: "t\(index)", type: .float32, shape: shape, shapeSignature: shape, quantization: nil,
      isVariable: false, constantData: nil)
    tensor.allocateOwnedMemory()
    values.withUnsafeBytes { tensor.data?.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
    tensor.isConstant = constant
    return tensor
  }

  /// A constant INT32 tensor.
  static func int32Tensor(_ index: Int, _ values: [Int32]) -> RuntimeTensor {
    let tensor = RuntimeTensor(
      index: index, name: "t\(index)", type: .int32, shape: [values.count], shapeSignature: [values.count],
      quantization: nil, isVariable: false, constantData: nil)
    tensor.allocateOwnedMemory()
    values.withUnsafeBytes { tensor.data?.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
    tensor.isConstant = true
    return tensor
  }

  /// A tensor of `type` and `shape` holding the raw `values` (of the type's width; zeros when
  /// empty), quantized with `scales` and `zeroPoints` along `axis` (nil scales: not quantized).
  static func quantizedTensor<Value: FixedWidthInteger>(
    _ index: Int, _ name: String, _ type: ElementType, _ shape: [Int], _ values: [Value],
    scales: [Float]?, zeroPoints: [Int], axis: Int = 0, constant: Bool = false
  ) -> RuntimeTensor {
    let tensor = RuntimeTensor(
      index: index, name: name, type: type, shape: shape, shapeSignature: shape,
      quantization: scales.map { Quantization(scales: $0, zeroPoints: zeroPoints, axis: axis) }, isVariable: false,
      constantData: nil)
    tensor.allocateOwnedMemory()
    values.withUnsafeBytes { bytes in
      if let base = bytes.baseAddress { tensor.data?.copyMemory(from: base, byteCount: bytes.count) }
    }
    tensor.isConstant = constant
    return tensor
  }

  /// An output tensor of `type` whose shape the kernel sets.
  static func outputTensor(_ index: Int, type: ElementType = .float32) -> RuntimeTensor {
    RuntimeTensor(
      index: index, name: "out", type: type, shape: [], shapeSignature: [], quantization: nil, isVariable: false,
      constantData: nil)
  }

  /// A node of `opName` over the given operands.
  static func node(_ opName: String, _ inputs: [RuntimeTensor?], _ output: RuntimeTensor, _ options: BuiltinOptions) -> Node {
    Node(
      index: 0, opName: opName, version: 1, inputs: inputs, outputs: [output], options: options,
      customOptions: UnsafeRawBufferPointer(start: nil, count: 0),
      subgraph: { _ in throw RuntimeError.invalidModel("no subgraphs in kernel tests") })
  }

  /// Builds the registered kernel for `node`, prepares and evaluates it with `threads`, and
  /// returns the output's shape and float values.
  static func run(_ node: Node, threads: Int) throws -> (shape: [Int], values: [Float]) {
    try run(node, threads: threads, as: Float.self)
  }

  /// ``run(_:threads:)`` for an output whose elements are `Element`s, prepared with `roundingPolicy`.
  static func run<Element>(
    _ node: Node, threads: Int, as type: Element.Type, roundingPolicy: RoundingPolicy = .doubleRounding
  ) throws -> (shape: [Int], values: [Element]) {
    let kernel = try KernelDispatch.makeKernel(for: node)
    var context = PrepareContext(threadCount: threads, roundingPolicy: roundingPolicy)
    try kernel.prepare(&context)
    let output = node.outputs[0]
    output.allocateOwnedMemory()
    let scratchBytes = context.scratchByteCount
    let scratch = scratchBytes > 0 ? UnsafeMutableRawPointer.allocate(byteCount: scratchBytes, alignment: 64) : nil
    defer { scratch?.deallocate() }
    try kernel.eval(EvalContext(threadCount: threads, scratch: scratch))
    let values = Array(UnsafeBufferPointer(start: output.pointer(as: Element.self), count: output.elementCount))
    return (output.shape, values)
  }

  /// Asserts that building or preparing the kernel for `node` throws an error whose text contains `fragment`.
  static func assertRejects(
    _ node: Node, containing fragment: String, file: StaticString = #filePath, line: UInt = #line
  ) {
    do {
      _ = try run(node, threads: 1)
      XCTFail("\(node.opName) accepted the node", file: file, line: line)
    } catch {
      XCTAssertTrue("\(error)".contains(fragment), "\(error) does not mention '\(fragment)'", file: file, line: line)
    }
  }
}

extension Node {
  /// A node of the operator named `opName` (a builtin's schema name or a custom code), for kernel tests.
  init(
    index: Int, opName: String, version: Int, inputs: [RuntimeTensor?], outputs: [RuntimeTensor], options: BuiltinOptions,
    customOptions: UnsafeRawBufferPointer, subgraph: @escaping (Int) throws -> SubgraphExecutor
  ) {
    let builtin = BuiltinOperator.allKnown.first { $0.name == opName && $0 != .custom }
    self.init(
      index: index, op: builtin.map { .builtin($0) } ?? OperatorKind(builtinCode: .custom, customCode: opName),
      version: version, inputs: inputs, outputs: outputs, options: options, customOptions: customOptions,
      subgraph: subgraph)
  }
}
