// Broadcasting binary arithmetic: ADD, SUB, MUL, DIV, SQUARED_DIFFERENCE, MAXIMUM, MINIMUM, POW,
// FLOOR_DIV, FLOOR_MOD, and ADD_N.
//
// One driver (`BinaryDriver`) walks a `BroadcastLayout` and feeds 16-lane vectors to an operation
// type; the operation is a generic struct, so each (operation, element type) pair is specialized
// and the hot loop has no dynamic dispatch. Semantics follow TFLite's reference kernels:
// integer arithmetic wraps, FLOOR_DIV/FLOOR_MOD round toward −∞ (the remainder takes the
// divisor's sign), integer division by zero is an error, MAXIMUM/MINIMUM pick `a > b ? a : b`.

import TFLiteFormat
import TFLiteLinearAlgebra

/// An elementwise function of two operands, evaluated 16 lanes at a time.
protocol BinaryLanewiseOperation {
  /// Element type of both operands.
  associatedtype Operand: SIMDScalar & BitwiseCopyable
  /// Element type of the result.
  associatedtype Result: SIMDScalar & BitwiseCopyable
  /// The result lanes for operand lanes `lhs` and `rhs`.
  func callAsFunction(_ lhs: SIMD16<Operand>, _ rhs: SIMD16<Operand>) -> SIMD16<Result>
}

/// Runs binary operations over broadcast operands.
enum BinaryDriver {
  /// Computes output elements `range` of `layout` (built from the shapes of `lhs` and `rhs`).
  static func run<Operation: BinaryLanewiseOperation>(
    _ operation: Operation, layout: BroadcastLayout,
    lhs: UnsafePointer<Operation.Operand>, rhs: UnsafePointer<Operation.Operand>,
    output: UnsafeMutablePointer<Operation.Result>, range: Range<Int>
  ) {
    if layout.rowLength < vectorLaneCount {
      runGathered(operation, layout, lhs, rhs, output, range)
      return
    }
    switch (layout.innerStride(of: 0), layout.innerStride(of: 1)) {
    case (0, 0):
      runRows(operation, layout, lhs, rhs, output, range,
              RepeatedOperand<Operation.Operand>.self, RepeatedOperand<Operation.Operand>.self)
    case (0, _):
      runRows(operation, layout, lhs, rhs, output, range,
              RepeatedOperand<Operation.Operand>.self, StreamedOperand<Operation.Operand>.self)
    case (_, 0):
      runRows(operation, layout, lhs, rhs, output, range,
              StreamedOperand<Operation.Operand>.self, RepeatedOperand<Operation.Operand>.self)
    default:
      runRows(operation, layout, lhs, rhs, output, range,
              StreamedOperand<Operation.Operand>.self, StreamedOperand<Operation.Operand>.self)
    }
  }

  /// Rows of at least 16 elements: whole vectors straight from memory.
  // A function of its own per operand pattern: inlined four times into `run`, the caller grew so
  // large that the optimizer left every 16-lane load and store as an out-of-line call.
  @inline(never)
  private static func runRows<Operation: BinaryLanewiseOperation, Left: VectorSource, Right: VectorSource>(
    _ operation: Operation, _ layout: BroadcastLayout,
    _ lhs: UnsafePointer<Operation.Operand>, _ rhs: UnsafePointer<Operation.Operand>,
    _ output: UnsafeMutablePointer<Operation.Result>, _ range: Range<Int>,
    _: Left.Type, _: Right.Type
  ) where Left.Scalar == Operation.Operand, Right.Scalar == Operation.Operand {
    layout.forEachSegment(in: range) { start, lhsOffset, rhsOffset, _, count in
      storeEachVector(
        CombinedVectors(Left(lhs, offset: lhsOffset), Right(rhs, offset: rhsOffset), operation), count: count,
        into: output + start)
    }
  }

  /// Short rows: operand elements are gathered 16 at a time across rows, so each vector
  /// operation (and each output store) covers 16 consecutive output elements.
  @inline(never)
  private static func runGathered<Operation: BinaryLanewiseOperation>(
    _ operation: Operation, _ layout: BroadcastLayout,
    _ lhs: UnsafePointer<Operation.Operand>, _ rhs: UnsafePointer<Operation.Operand>,
    _ output: UnsafeMutablePointer<Operation.Result>, _ range: Range<Int>
  ) {
    guard !range.isEmpty else { return }
    let lhsStep = layout.innerStride(of: 0)
    let rhsStep = layout.innerStride(of: 1)
    // Scalar stores into stack buffers, one vector load per 16 elements (writing single lanes of
    // a SIMD value would reload the whole vector each time).
    withUnsafeTemporaryAllocation(of: Operation.Operand.self, capacity: 2 &* vectorLaneCount) { buffer in
      guard let lhsLanes = buffer.baseAddress else { return }
      let rhsLanes = lhsLanes + vectorLaneCount
      lhsLanes.initialize(repeating: lhs[0], count: vectorLaneCount)
      rhsLanes.initialize(repeating: rhs[0], count: vectorLaneCount)
      var filled = 0
      var outputIndex = range.lowerBound
      layout.forEachSegment(in: range) { _, lhsOffset, rhsOffset, _, count in
        for step in 0..<count {
          lhsLanes[filled] = lhs[lhsOffset &+ step &* lhsStep]
          rhsLanes[filled] = rhs[rhsOffset &+ step &* rhsStep]
          filled &+= 1
          if filled == vectorLaneCount {
            storeVector(operation(loadVector(lhsLanes), loadVector(rhsLanes)), output + outputIndex)
            outputIndex &+= vectorLaneCount
            filled = 0
          }
        }
      }
      if filled > 0 {
        storeVector(operation(loadVector(lhsLanes), loadVector(rhsLanes)), output + outputIndex, lanes: filled)
      }
    }
  }
}

/// Which arithmetic operation an `ArithmeticOperation` performs.
protocol ArithmeticKind {
  /// The TFLite operator name.
  static var operatorName: String { get }
  /// The element types the kernel runs (TFLite's float and integer variants of the operator).
  static var elementTypes: [ElementType] { get }
  /// True when integer operands must not contain a zero divisor (DIV, FLOOR_DIV, FLOOR_MOD).
  static var rejectsZeroDivisor: Bool { get }
  /// True when integer operands must not contain a negative exponent (POW).
  static var rejectsNegativeExponent: Bool { get }
  /// The fused activation in the node's options (NONE for operators without one).
  static func fusedActivation(in options: BuiltinOptions) -> ActivationFunctionType
  /// The result lanes.
  static func apply<Scalar: ArithmeticScalar>(_ lhs: SIMD16<Scalar>, _ rhs: SIMD16<Scalar>) -> SIMD16<Scalar>
  /// The generated float kernels' operation for this kind (ADD, SUB, MUL); nil for the others.
  static var generatedOperation: FloatBinaryKernelGenerator.Operation? { get }
}

extension ArithmeticKind {
  static var generatedOperation: FloatBinaryKernelGenerator.Operation? { nil }
  static var rejectsZeroDivisor: Bool { false }
  static var rejectsNegativeExponent: Bool { false }
  static func fusedActivation(in options: BuiltinOptions) -> ActivationFunctionType { .none }
}

/// ADD.
enum Addition: ArithmeticKind {
  static var generatedOperation: FloatBinaryKernelGenerator.Operation? { .add }
  static let operatorName = "ADD"
  static let elementTypes: [ElementType] = [.float32, .int32, .int64]
  static func fusedActivation(in options: BuiltinOptions) -> ActivationFunctionType {
    if case .addOptions(let add) = options { return add.fusedActivationFunction }
    return .none
  }
  @inline(__always)
  static func apply<Scalar: ArithmeticScalar>(_ lhs: SIMD16<Scalar>, _ rhs: SIMD16<Scalar>) -> SIMD16<Scalar> {
    Scalar.add(lhs, rhs)
  }
}

/// SUB.
enum Subtraction: ArithmeticKind {
  static var generatedOperation: FloatBinaryKernelGenerator.Operation? { .subtract }
  static let operatorName = "SUB"
  static let elementTypes: [ElementType] = [.float32, .int32, .int64]
  static func fusedActivation(in options: BuiltinOptions) -> ActivationFunctionType {
    if case .subOptions(let sub) = options { return sub.fusedActivationFunction }
    return .none
  }
  @inline(__always)
  static func apply<Scalar: ArithmeticScalar>(_ lhs: SIMD16<Scalar>, _ rhs: SIMD16<Scalar>) -> SIMD16<Scalar> {
    Scalar.subtract(lhs, rhs)
  }
}

/// MUL.
enum Multiplication: ArithmeticKind {
  static var generatedOperation: FloatBinaryKernelGenerator.Operation? { .multiply }
  static let operatorName = "MUL"
  static let elementTypes: [ElementType] = [.float32, .int32, .int64]
  static func fusedActivation(in options: BuiltinOptions) -> ActivationFunctionType {
    if case .mulOptions(let mul) = options { return mul.fusedActivationFunction }
    return .none
  }
  @inline(__always)
  static func apply<Scalar: ArithmeticScalar>(_ lhs: SIMD16<Scalar>, _ rhs: SIMD16<Scalar>) -> SIMD16<Scalar> {
    Scalar.multiply(lhs, rhs)
  }
}

/// DIV.
enum Division: ArithmeticKind {
  static let operatorName = "DIV"
  static let elementTypes: [ElementType] = [.float32, .int32]
  static var rejectsZeroDivisor: Bool { true }
  static func fusedActivation(in options: BuiltinOptions) -> ActivationFunctionType {
    if case .divOptions(let div) = options { return div.fusedActivationFunction }
    return .none
  }
  @inline(__always)
  static func apply<Scalar: ArithmeticScalar>(_ lhs: SIMD16<Scalar>, _ rhs: SIMD16<Scalar>) -> SIMD16<Scalar> {
    Scalar.divide(lhs, rhs)
  }
}

/// SQUARED_DIFFERENCE: (lhs − rhs)².
enum SquaredDifference: ArithmeticKind {
  static let operatorName = "SQUARED_DIFFERENCE"
  static let elementTypes: [ElementType] = [.float32, .int32]
  @inline(__always)
  static func apply<Scalar: ArithmeticScalar>(_ lhs: SIMD16<Scalar>, _ rhs: SIMD16<Scalar>) -> SIMD16<Scalar> {
    let difference = Scalar.subtract(lhs, rhs)
    return Scalar.multiply(difference, difference)
  }
}

/// MAXIMUM: lhs > rhs ? lhs : rhs (quantized operands compare raw, as TFLite does).
enum Maximum: ArithmeticKind {
  static let operatorName = "MAXIMUM"
  static let elementTypes: [ElementType] = [.float32, .int32, .int64, .int8, .int16]
  @inline(__always)
  static func apply<Scalar: ArithmeticScalar>(_ lhs: SIMD16<Scalar>, _ rhs: SIMD16<Scalar>) -> SIMD16<Scalar> {
    Scalar.maximum(lhs, rhs)
  }
}

/// MINIMUM: lhs < rhs ? lhs : rhs (quantized operands compare raw, as TFLite does).
enum Minimum: ArithmeticKind {
  static let operatorName = "MINIMUM"
  static let elementTypes: [ElementType] = [.float32, .int32, .int64, .int8, .int16]
  @inline(__always)
  static func apply<Scalar: ArithmeticScalar>(_ lhs: SIMD16<Scalar>, _ rhs: SIMD16<Scalar>) -> SIMD16<Scalar> {
    Scalar.minimum(lhs, rhs)
  }
}

/// POW.
enum Power: ArithmeticKind {
  static let operatorName = "POW"
  static let elementTypes: [ElementType] = [.float32, .int32]
  static var rejectsNegativeExponent: Bool { true }
  @inline(__always)
  static func apply<Scalar: ArithmeticScalar>(_ lhs: SIMD16<Scalar>, _ rhs: SIMD16<Scalar>) -> SIMD16<Scalar> {
    Scalar.power(lhs, rhs)
  }
}

/// FLOOR_DIV.
enum FloorDivision: ArithmeticKind {
  static let operatorName = "FLOOR_DIV"
  static let elementTypes: [ElementType] = [.float32, .int32, .int8, .int16]
  static var rejectsZeroDivisor: Bool { true }
  @inline(__always)
  static func apply<Scalar: ArithmeticScalar>(_ lhs: SIMD16<Scalar>, _ rhs: SIMD16<Scalar>) -> SIMD16<Scalar> {
    Scalar.floorDivide(lhs, rhs)
  }
}

/// FLOOR_MOD.
enum FloorModulo: ArithmeticKind {
  static let operatorName = "FLOOR_MOD"
  static let elementTypes: [ElementType] = [.float32, .int32, .int64, .int8, .int16]
  static var rejectsZeroDivisor: Bool { true }
  @inline(__always)
  static func apply<Scalar: ArithmeticScalar>(_ lhs: SIMD16<Scalar>, _ rhs: SIMD16<Scalar>) -> SIMD16<Scalar> {
    Scalar.floorModulo(lhs, rhs)
  }
}

/// An arithmetic operation followed by its fused activation clamp.
struct ArithmeticOperation<Scalar: ArithmeticScalar, Kind: ArithmeticKind>: BinaryLanewiseOperation {
  /// Output clamp (unbounded when the activation is NONE).
  let activation: ActivationRange<Scalar>
  /// False for an unbounded range (activation NONE), whose clamp changes nothing: the compares and
  /// selects are skipped (the same branch every vector; it halves the work of a float ADD or MUL).
  let clamps: Bool

  /// The operation clamping to `activation`.
  init(activation: ActivationRange<Scalar>) {
    self.activation = activation
    let unbounded = Scalar.unboundedRange
    clamps = activation.lower != unbounded.lower || activation.upper != unbounded.upper
  }

  @inline(__always)
  func callAsFunction(_ lhs: SIMD16<Scalar>, _ rhs: SIMD16<Scalar>) -> SIMD16<Scalar> {
    let result = Kind.apply(lhs, rhs)
    return clamps ? activation.clamp(result) : result
  }
}

/// The kernel definition of the arithmetic operators.
struct ArithmeticDefinition<Kind: ArithmeticKind>: BinaryKernelDefinition {
  private let type: ElementType
  private let activation: ActivationFunctionType
  /// The fused activation's bounds on float operands.
  private let floatRange: ActivationRange<Float>

  init(node: Node, lhs: RuntimeTensor, rhs: RuntimeTensor, output: RuntimeTensor) throws {
    type = try commonElementType([lhs, rhs, output], allowed: Kind.elementTypes, operatorName: Kind.operatorName)
    if type == .int8 || type == .int16 {
      try requireSharedQuantization([lhs, rhs, output], operatorName: Kind.operatorName)
    }
    activation = Kind.fusedActivation(in: node.options)
    floatRange = try ActivationRange<Float>(activation)
  }

  /// The generated kernels' operation: float ADD, SUB and MUL.
  private var generatedOperation: FloatBinaryKernelGenerator.Operation? {
    type == .float32 ? Kind.generatedOperation : nil
  }

  func generatedKernels(for layout: BroadcastLayout) -> GeneratedFloatBinaryKernels? {
    generatedOperation == nil || GeneratedFloatBinaryRows(layout) == nil ? nil : GeneratedFloatBinaryKernels.current
  }

  func reserveGeneratedKernels(for layout: BroadcastLayout, on kernels: GeneratedFloatBinaryKernels) {
    guard let operation = generatedOperation, let rows = GeneratedFloatBinaryRows(layout) else { return }
    rows.reserveKernel(operation, clamp: floatRange, on: kernels)
  }

  func run(
    layout: BroadcastLayout, lhs: UnsafeRawPointer, rhs: UnsafeRawPointer, output: UnsafeMutableRawPointer,
    range: Range<Int>, generated: GeneratedFloatBinaryKernels?
  ) {
    if let generated, let operation = generatedOperation, let rows = GeneratedFloatBinaryRows(layout),
      rows.run(
        operation, clamp: floatRange, on: generated, lhs: lhs.assumingMemoryBound(to: Float.self),
        rhs: rhs.assumingMemoryBound(to: Float.self), output: output.assumingMemoryBound(to: Float.self), range: range)
    {
      return
    }
    run(layout: layout, lhs: lhs, rhs: rhs, output: output, range: range)
  }

  var minimumChunk: Int { type == .float32 && Kind.self != Power.self ? cheapElementwiseChunk : costlyElementwiseChunk }

  func validate(lhs: RuntimeTensor, rhs: RuntimeTensor) throws {
    guard type != .float32 else { return }
    if Kind.rejectsZeroDivisor, try contains(rhs, where: { $0 == 0 }) {
      throw KernelError.invalid("\(Kind.operatorName): integer division by zero")
    }
    if Kind.rejectsNegativeExponent, try contains(rhs, where: { $0 < 0 }) {
      throw KernelError.invalid("\(Kind.operatorName): integers cannot be raised to a negative exponent")
    }
  }

  /// True when an element of the integer tensor satisfies `predicate`.
  private func contains(_ tensor: RuntimeTensor, where predicate: (Int64) -> Bool) throws -> Bool {
    let data = try tensorData(tensor)
    let count = tensor.elementCount
    func contains<Element: BinaryInteger>(_: Element.Type) -> Bool {
      UnsafeBufferPointer(start: data.assumingMemoryBound(to: Element.self), count: count).contains {
        predicate(Int64($0))
      }
    }
    switch type {
    case .int8: return contains(Int8.self)
    case .int16: return contains(Int16.self)
    case .int32: return contains(Int32.self)
    default: return contains(Int64.self)
    }
  }

  // Kernels are reached through `any Kernel`, where the generic class's methods run unspecialized:
  // these entries give each operator a specialized body, so the per-vector operation is inlined
  // instead of called through a witness table (EfficientNetB0: 1.9 s → 0.32 s per run).
  @_specialize(exported: false, where Kind == Addition)
  @_specialize(exported: false, where Kind == Subtraction)
  @_specialize(exported: false, where Kind == Multiplication)
  @_specialize(exported: false, where Kind == Division)
  @_specialize(exported: false, where Kind == SquaredDifference)
  @_specialize(exported: false, where Kind == Maximum)
  @_specialize(exported: false, where Kind == Minimum)
  @_specialize(exported: false, where Kind == Power)
  @_specialize(exported: false, where Kind == FloorDivision)
  @_specialize(exported: false, where Kind == FloorModulo)
  func run(
    layout: BroadcastLayout, lhs: UnsafeRawPointer, rhs: UnsafeRawPointer,
    output: UnsafeMutableRawPointer, range: Range<Int>
  ) {
    switch type {
    case .float32: run(Float.self, layout, lhs, rhs, output, range)
    case .int32: run(Int32.self, layout, lhs, rhs, output, range)
    case .int64: run(Int64.self, layout, lhs, rhs, output, range)
    case .int16: run(Int16.self, layout, lhs, rhs, output, range)
    default: run(Int8.self, layout, lhs, rhs, output, range)
    }
  }

  private func run<Scalar: ArithmeticScalar>(
    _: Scalar.Type, _ layout: BroadcastLayout, _ lhs: UnsafeRawPointer, _ rhs: UnsafeRawPointer,
    _ output: UnsafeMutableRawPointer, _ range: Range<Int>
  ) {
    // The activation was validated in init, so the fallback is never taken.
    let clamp = (try? ActivationRange<Scalar>(activation)) ?? Scalar.unboundedRange
    BinaryDriver.run(
      ArithmeticOperation<Scalar, Kind>(activation: clamp), layout: layout, lhs: lhs, rhs: rhs, output: output,
      range: range)
  }
}

/// ADD_N: the sum of two or more tensors of one shape, added in input order as TFLite does.
final class AddManyKernel: Kernel {
  private let inputs: [RuntimeTensor]
  private let output: RuntimeTensor
  private let type: ElementType
  private var layout: BroadcastLayout?

  init(node: Node) throws {
    guard node.inputs.count >= 2 else {
      throw KernelError.invalid("ADD_N needs at least 2 inputs, got \(node.inputs.count)")
    }
    inputs = try node.inputs.indices.map { try node.input($0) }
    output = try node.output(0)
    type = try commonElementType(inputs + [output], allowed: [.float32, .int32], operatorName: "ADD_N")
  }

  func prepare(_ context: inout PrepareContext) throws {
    let shape = inputs[0].shape
    guard inputs.allSatisfy({ $0.shape == shape }) else {
      throw KernelError.invalid("ADD_N needs inputs of one shape, got \(inputs.map(\.shape))")
    }
    layout = try BroadcastLayout(broadcasting: [shape, shape])
    output.shape = shape
  }

  func eval(_ context: EvalContext) throws {
    guard let layout else { throw KernelError.invalid("evaluated before prepare") }
    let outputData = try tensorData(output)
    for input in inputs { _ = try tensorData(input) }
    context.forEachChunk(of: layout.elementCount, minimumChunk: cheapElementwiseChunk) { range in
      // Each pass adds one more input into the output, in input order.
      var sum = UnsafeRawPointer(inputs[0].data.unsafelyUnwrapped)
      for input in inputs.dropFirst() {
        let addend = UnsafeRawPointer(input.data.unsafelyUnwrapped)
        if type == .float32 {
          BinaryDriver.run(
            ArithmeticOperation<Float, Addition>(activation: Float.unboundedRange), layout: layout, lhs: sum,
            rhs: addend, output: outputData, range: range)
        } else {
          BinaryDriver.run(
            ArithmeticOperation<Int32, Addition>(activation: Int32.unboundedRange), layout: layout, lhs: sum,
            rhs: addend, output: outputData, range: range)
        }
        sum = UnsafeRawPointer(outputData)
      }
    }
  }
}
