// The kernel classes shared by the elementwise families. A family describes an operator with a
// small "definition" value (options read once, element type chosen once, the typed driver call);
// the generic kernel around it does the node plumbing, shapes, and the split across threads.

import TFLiteFormat
import TFLiteLinearAlgebra

/// Throws unless every tensor in `tensors` has the same element type and `allowed` contains it;
/// returns that type.
func commonElementType(_ tensors: [RuntimeTensor], allowed: [ElementType], operatorName: String) throws -> ElementType {
  guard let type = tensors.first?.type, tensors.allSatisfy({ $0.type == type }) else {
    throw KernelError.invalid(
      "\(operatorName) needs operands of one type, got \(tensors.map(\.type.name).joined(separator: ", "))")
  }
  guard allowed.contains(type) else {
    throw KernelError.unsupported("\(operatorName) on \(type.name) tensors")
  }
  return type
}

/// Throws unless `tensors` all carry the same quantization (or none): then comparing or picking
/// their raw values is the same as doing it on the real values.
func requireSharedQuantization(_ tensors: [RuntimeTensor], operatorName: String) throws {
  let first = tensors.first?.quantization
  guard tensors.allSatisfy({ $0.quantization == first }) else {
    throw KernelError.unsupported("\(operatorName) on quantized operands with different scales or zero points")
  }
}

/// The data of a tensor that must have memory by now.
func tensorData(_ tensor: RuntimeTensor) throws -> UnsafeMutableRawPointer {
  guard let data = tensor.data else { throw KernelError.invalid("tensor \(tensor.summary) has no memory") }
  return data
}

/// What a one-input, one-output, same-shape kernel computes.
protocol UnaryKernelDefinition {
  /// Reads the options and checks the operand types (once, when the interpreter is built).
  init(node: Node, input: RuntimeTensor, output: RuntimeTensor) throws
  /// Elements per parallel piece.
  var minimumChunk: Int { get }
  /// Computes output elements `range` from the same elements of `input`.
  func run(input: UnsafeRawPointer, output: UnsafeMutableRawPointer, range: Range<Int>)
}

/// A kernel whose output has its input's shape and each output element depends on one input element.
final class UnaryKernel<Definition: UnaryKernelDefinition>: Kernel {
  /// Output element i is computed from input element i (a broadcast operand is never the one
  /// shared: it is smaller than the output).
  static var writesOutputInPlace: Bool { true }
  private let input: RuntimeTensor
  private let output: RuntimeTensor
  private let definition: Definition

  init(node: Node) throws {
    (input, output) = try node.singleInputAndOutput()
    definition = try Definition(node: node, input: input, output: output)
  }

  func prepare(_ context: inout PrepareContext) throws {
    output.shape = input.shape
  }

  func eval(_ context: EvalContext) throws {
    let source = try tensorData(input)
    let destination = try tensorData(output)
    context.forEachChunk(of: output.elementCount, minimumChunk: definition.minimumChunk) { range in
      definition.run(input: source, output: destination, range: range)
    }
  }
}

/// What a two-input broadcasting kernel computes.
protocol BinaryKernelDefinition {
  /// Reads the options and checks the operand types (once, when the interpreter is built).
  init(node: Node, lhs: RuntimeTensor, rhs: RuntimeTensor, output: RuntimeTensor) throws
  /// Elements per parallel piece.
  var minimumChunk: Int { get }
  /// Checks operand values the operation cannot take (before any output is written).
  func validate(lhs: RuntimeTensor, rhs: RuntimeTensor) throws
  /// Computes output elements `range` of `layout`.
  func run(
    layout: BroadcastLayout, lhs: UnsafeRawPointer, rhs: UnsafeRawPointer,
    output: UnsafeMutableRawPointer, range: Range<Int>)
  /// The generated kernels `run(…, generated:)` may use on `layout`, read on the node's thread
  /// before the work is split (the switch is task-local); nil for definitions or layouts without a
  /// generated route.
  func generatedKernels(for layout: BroadcastLayout) -> GeneratedFloatBinaryKernels?
  /// Reserves (`LazyExecutableKernels/reserve(_:)`) on `kernels`, at prepare, the kernel `run`
  /// will ask them for on `layout` (if any), to be mapped with the other nodes' at the end of
  /// `allocateTensors()`.
  func reserveGeneratedKernels(for layout: BroadcastLayout, on kernels: GeneratedFloatBinaryKernels)
  /// `run`, on `generated` where the layout allows it.
  func run(
    layout: BroadcastLayout, lhs: UnsafeRawPointer, rhs: UnsafeRawPointer,
    output: UnsafeMutableRawPointer, range: Range<Int>, generated: GeneratedFloatBinaryKernels?)
}

extension BinaryKernelDefinition {
  func validate(lhs: RuntimeTensor, rhs: RuntimeTensor) throws {}

  func generatedKernels(for layout: BroadcastLayout) -> GeneratedFloatBinaryKernels? { nil }

  func reserveGeneratedKernels(for layout: BroadcastLayout, on kernels: GeneratedFloatBinaryKernels) {}

  func run(
    layout: BroadcastLayout, lhs: UnsafeRawPointer, rhs: UnsafeRawPointer,
    output: UnsafeMutableRawPointer, range: Range<Int>, generated: GeneratedFloatBinaryKernels?
  ) {
    run(layout: layout, lhs: lhs, rhs: rhs, output: output, range: range)
  }
}

/// A kernel combining two broadcast operands element by element.
final class BinaryKernel<Definition: BinaryKernelDefinition>: Kernel {
  /// Output element i is computed from input element i (a broadcast operand is never the one
  /// shared: it is smaller than the output).
  static var writesOutputInPlace: Bool { true }
  private let lhs: RuntimeTensor
  private let rhs: RuntimeTensor
  private let output: RuntimeTensor
  private let definition: Definition
  /// The layout once prepared, read in place by `eval` (see `PreparedBroadcastLayout`).
  private var prepared: PreparedBroadcastLayout?

  init(node: Node) throws {
    (lhs, rhs, output) = try node.twoInputsAndOutput()
    definition = try Definition(node: node, lhs: lhs, rhs: rhs, output: output)
  }

  func prepare(_ context: inout PrepareContext) throws {
    let layout = try BroadcastLayout(broadcasting: [lhs.shape, rhs.shape])
    prepared = PreparedBroadcastLayout(layout)
    output.shape = layout.shape
    if let kernels = GeneratedFloatBinaryKernels.current { definition.reserveGeneratedKernels(for: layout, on: kernels) }
  }

  func eval(_ context: EvalContext) throws {
    guard let prepared else { throw KernelError.invalid("evaluated before prepare") }
    let lhsData = try tensorData(lhs)
    let rhsData = try tensorData(rhs)
    let outputData = try tensorData(output)
    try definition.validate(lhs: lhs, rhs: rhs)
    let generated = definition.generatedKernels(for: prepared.layout)
    context.forEachChunk(of: prepared.layout.elementCount, minimumChunk: definition.minimumChunk) { range in
      definition.run(
        layout: prepared.layout, lhs: lhsData, rhs: rhsData, output: outputData, range: range, generated: generated)
    }
  }

  var kernelDescription: String? {
    guard let prepared, let generated = definition.generatedKernels(for: prepared.layout) else { return nil }
    return "generated \(generated.isa)"
  }
}

/// A prepared ``BroadcastLayout`` held by reference, so that a kernel's `eval` and its chunks read
/// it in place: the layout is a few hundred bytes, which an optional stored property copies
/// (and its shape array retains) on every eval.
final class PreparedBroadcastLayout {
  /// The layout.
  let layout: BroadcastLayout

  init(_ layout: BroadcastLayout) { self.layout = layout }
}

extension UnaryDriver {
  /// `run` on untyped tensor memory (bound to the operation's element types).
  @inline(__always)
  static func run<Operation: UnaryLanewiseOperation>(
    _ operation: Operation, input: UnsafeRawPointer, output: UnsafeMutableRawPointer, range: Range<Int>
  ) {
    run(
      operation, input: input.assumingMemoryBound(to: Operation.Operand.self),
      output: output.assumingMemoryBound(to: Operation.Result.self), range: range)
  }
}

extension BinaryDriver {
  /// `run` on untyped tensor memory (bound to the operation's element types).
  @inline(__always)
  static func run<Operation: BinaryLanewiseOperation>(
    _ operation: Operation, layout: BroadcastLayout, lhs: UnsafeRawPointer, rhs: UnsafeRawPointer,
    output: UnsafeMutableRawPointer, range: Range<Int>
  ) {
    run(
      operation, layout: layout, lhs: lhs.assumingMemoryBound(to: Operation.Operand.self),
      rhs: rhs.assumingMemoryBound(to: Operation.Operand.self),
      output: output.assumingMemoryBound(to: Operation.Result.self), range: range)
  }
}

/// What a float kernel computing each row of the last axis independently computes.
protocol LastAxisKernelDefinition {
  /// The TFLite operator name.
  static var operatorName: String { get }
  /// Reads the options (once, when the interpreter is built).
  init(node: Node) throws
  /// Computes `rows` of `depth` elements each.
  func run(input: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>, depth: Int, rows: Range<Int>)
}

/// A float kernel over the rows of the last axis (SOFTMAX, LOG_SOFTMAX, L2_NORMALIZATION); the
/// output has the input's shape.
final class LastAxisKernel<Definition: LastAxisKernelDefinition>: Kernel {
  private let input: RuntimeTensor
  private let output: RuntimeTensor
  private let definition: Definition

  init(node: Node) throws {
    (input, output) = try node.singleInputAndOutput()
    _ = try commonElementType([input, output], allowed: [.float32], operatorName: Definition.operatorName)
    definition = try Definition(node: node)
  }

  func prepare(_ context: inout PrepareContext) throws {
    guard !input.shape.isEmpty else {
      throw KernelError.invalid("\(Definition.operatorName) needs a tensor of rank at least 1, got a scalar")
    }
    output.shape = input.shape
  }

  func eval(_ context: EvalContext) throws {
    let source = try tensorData(input).assumingMemoryBound(to: Float.self)
    let destination = try tensorData(output).assumingMemoryBound(to: Float.self)
    let depth = input.shape[input.shape.count - 1]
    guard depth > 0 else { return }
    let rows = input.elementCount / depth
    context.forEachChunk(of: rows, minimumChunk: max(1, costlyElementwiseChunk / depth)) { range in
      definition.run(input: source, output: destination, depth: depth, rows: range)
    }
  }
}
