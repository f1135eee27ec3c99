// Drivers shared by the quantized elementwise kernels: the integer element types chosen at run
// time, an element-by-element map (a table for 8-bit inputs), and a broadcasting two-input walk.
// Each kernel only describes its per-element function, exactly as the reference kernel computes
// it; the drivers specialise the loops for the operand types.
import TFLiteLinearAlgebra


/// Code generic over one quantized integer type that is chosen at run time.
protocol QuantizedTypeVisitor {
  associatedtype Result
  /// Runs the code for `type`.
  func visit<Element: QuantizedInteger>(_ type: Element.Type) throws -> Result
}

/// Code generic over two quantized integer types that are chosen at run time.
protocol QuantizedTypePairVisitor {
  associatedtype Result
  /// Runs the code for `first` and `second`.
  func visit<First: QuantizedInteger, Second: QuantizedInteger>(_ first: First.Type, _ second: Second.Type) throws
    -> Result
}

extension ElementType {
  /// Runs `visitor` with the Swift type of this INT8, UINT8, INT16 or INT32 element type.
  func visitQuantized<Visitor: QuantizedTypeVisitor>(_ visitor: Visitor) throws -> Visitor.Result {
    switch self {
    case .int8: try visitor.visit(Int8.self)
    case .uint8: try visitor.visit(UInt8.self)
    case .int16: try visitor.visit(Int16.self)
    case .int32: try visitor.visit(Int32.self)
    default: throw KernelError.unsupported("\(name) tensors in a quantized kernel")
    }
  }
}

/// Runs `visitor` with the Swift types of `first` and `second`.
func visitQuantized<Visitor: QuantizedTypePairVisitor>(
  _ first: ElementType, _ second: ElementType, _ visitor: Visitor
) throws -> Visitor.Result {
  try first.visitQuantized(PairFirstVisitor(second: second, visitor: visitor))
}

/// Picks the first type of a pair, then the second.
private struct PairFirstVisitor<Visitor: QuantizedTypePairVisitor>: QuantizedTypeVisitor {
  let second: ElementType
  let visitor: Visitor
  func visit<First: QuantizedInteger>(_ type: First.Type) throws -> Visitor.Result {
    try second.visitQuantized(PairSecondVisitor<First, Visitor>(visitor: visitor))
  }
}

/// Picks the second type of a pair and runs the pair visitor.
private struct PairSecondVisitor<First: QuantizedInteger, Visitor: QuantizedTypePairVisitor>: QuantizedTypeVisitor {
  let visitor: Visitor
  func visit<Second: QuantizedInteger>(_ type: Second.Type) throws -> Visitor.Result {
    try visitor.visit(First.self, Second.self)
  }
}

// MARK: - One input

/// A function of one raw quantized value, computed as the reference kernel does.
protocol QuantizedUnaryFunction {
  /// The raw output for the raw input `x`, already inside the output type's range.
  func callAsFunction(_ x: Int32) -> Int32
}

/// An element-by-element map from a quantized tensor to another, prepared once: a table of the
/// function's value on every 8- or 16-bit input (256 or 65536 entries), the function itself for
/// int32 inputs.
struct QuantizedElementMap {
  /// The typed loop: maps elements `range` of the input into the output.
  private let loop: (UnsafeRawPointer, UnsafeMutableRawPointer, Range<Int>) -> Void

  /// Prepares the map of `function` from `inputType` to `outputType` elements.
  init<Function: QuantizedUnaryFunction>(_ function: Function, from inputType: ElementType, to outputType: ElementType)
    throws
  {
    loop = try visitQuantized(inputType, outputType, MapRunnerFactory(function: function))
  }

  /// Maps elements `range` of `input` into the same elements of `output`.
  func run(input: UnsafeRawPointer, output: UnsafeMutableRawPointer, range: Range<Int>) {
    loop(input, output, range)
  }
}

/// Chooses the table or the direct loop for a pair of element types. The loops are returned as
/// closures formed here, where the element types are concrete, so that they run specialised code
/// (a generic type behind an existential would run the unspecialised implementation).
private struct MapRunnerFactory<Function: QuantizedUnaryFunction>: QuantizedTypePairVisitor {
  let function: Function
  func visit<Input: QuantizedInteger, Output: QuantizedInteger>(_ input: Input.Type, _ output: Output.Type) throws
    -> (UnsafeRawPointer, UnsafeMutableRawPointer, Range<Int>) -> Void
  {
    if Input.bitWidth <= 16 {
      let runner = TableMapRunner<Input, Output>(
        table: (Int32(Input.min)...Int32(Input.max)).map { Output(truncatingIfNeeded: function($0)) })
      return { runner.run(input: $0, output: $1, range: $2) }
    }
    let runner = FunctionMapRunner<Input, Output, Function>(function: function)
    return { runner.run(input: $0, output: $1, range: $2) }
  }
}

/// Maps 8- or 16-bit inputs through a table indexed by the raw value minus the type's minimum.
private struct TableMapRunner<Input: QuantizedInteger, Output: QuantizedInteger> {
  let table: [Output]
  func run(input: UnsafeRawPointer, output: UnsafeMutableRawPointer, range: Range<Int>) {
    let source = input.assumingMemoryBound(to: Input.self)
    let destination = output.assumingMemoryBound(to: Output.self)
    let bias = -Int(Input.min)
    table.withUnsafeBufferPointer { table in
      let entries = table.baseAddress.unsafelyUnwrapped
      for index in range { destination[index] = entries[Int(source[index]) &+ bias] }
    }
  }
}

/// Applies the function to every element.
private struct FunctionMapRunner<Input: QuantizedInteger, Output: QuantizedInteger, Function: QuantizedUnaryFunction> {
  let function: Function
  func run(input: UnsafeRawPointer, output: UnsafeMutableRawPointer, range: Range<Int>) {
    let source = input.assumingMemoryBound(to: Input.self)
    let destination = output.assumingMemoryBound(to: Output.self)
    for index in range { destination[index] = Output(truncatingIfNeeded: function(Int32(truncatingIfNeeded: source[index]))) }
  }
}

// MARK: - Two inputs

/// A function of two raw quantized values, computed as the reference kernel does, on eight
/// pairs at once.
protocol QuantizedBinaryFunction {
  /// The raw outputs for raw inputs `a` and `b`, already inside the output type's range.
  func callAsFunction(_ a: SIMD8<Int32>, _ b: SIMD8<Int32>) -> SIMD8<Int32>
}

/// A broadcasting elementwise operation on two quantized tensors, prepared once; the output has
/// the type of the first input, or is BOOL (the function's results 0 and 1 as bytes).
struct QuantizedBinaryMap {
  /// The typed loop: computes output elements `range` of the layout.
  private let loop: (BroadcastLayout, UnsafeRawPointer, UnsafeRawPointer, UnsafeMutableRawPointer, Range<Int>) -> Void

  /// Outputs from which two 8-bit inputs are served from a table of every input pair (64 KiB,
  /// built at prepare time for about the cost of computing that many outputs).
  static let pairTableThreshold = 1 << 16

  /// Prepares `function` for inputs of `lhsType` and `rhsType` producing `elementCount` outputs,
  /// BOOL ones when `writesBooleans`.
  init<Function: QuantizedBinaryFunction>(
    _ function: Function, lhs lhsType: ElementType, rhs rhsType: ElementType, writesBooleans: Bool = false,
    elementCount: Int
  ) throws {
    loop = try visitQuantized(
      lhsType, rhsType,
      BinaryRunnerFactory(
        function: function, tabulates: elementCount >= Self.pairTableThreshold, writesBooleans: writesBooleans))
  }

  /// Computes output elements `range` of `layout` (operand 0 is `lhs`, operand 1 is `rhs`).
  func run(
    layout: BroadcastLayout, lhs: UnsafeRawPointer, rhs: UnsafeRawPointer, output: UnsafeMutableRawPointer,
    range: Range<Int>
  ) {
    loop(layout, lhs, rhs, output, range)
  }
}

/// Builds the typed loop for a pair of input types (a closure formed where the types are concrete).
private struct BinaryRunnerFactory<Function: QuantizedBinaryFunction>: QuantizedTypePairVisitor {
  let function: Function
  /// Whether to tabulate the function when both inputs are 8-bit.
  let tabulates: Bool
  /// Whether the outputs are BOOL bytes rather than values of the first input's type.
  let writesBooleans: Bool
  func visit<Lhs: QuantizedInteger, Rhs: QuantizedInteger>(_ lhs: Lhs.Type, _ rhs: Rhs.Type) throws
    -> (BroadcastLayout, UnsafeRawPointer, UnsafeRawPointer, UnsafeMutableRawPointer, Range<Int>) -> Void
  {
    writesBooleans ? runner(Lhs.self, Rhs.self, UInt8.self) : runner(Lhs.self, Rhs.self, Lhs.self)
  }

  private func runner<Lhs: QuantizedInteger, Rhs: QuantizedInteger, Output: QuantizedInteger>(
    _ lhs: Lhs.Type, _ rhs: Rhs.Type, _ output: Output.Type
  ) -> (BroadcastLayout, UnsafeRawPointer, UnsafeRawPointer, UnsafeMutableRawPointer, Range<Int>) -> Void {
    if tabulates && Lhs.bitWidth == 8 && Rhs.bitWidth == 8 {
      let runner = PairTableRunner<Lhs, Rhs, Output>(function: function)
      return { runner.run(layout: $0, lhs: $1, rhs: $2, output: $3, range: $4) }
    }
    let runner = TypedBinaryRunner<Lhs, Rhs, Output, Function>(function: function)
    return { runner.run(layout: $0, lhs: $1, rhs: $2, output: $3, range: $4) }
  }
}

/// Serves two 8-bit inputs from a table of the function on every pair of raw values.
private struct PairTableRunner<Lhs: QuantizedInteger, Rhs: QuantizedInteger, Output: QuantizedInteger> {
  /// Entry `(a − Lhs.min) · 256 + (b − Rhs.min)` is the output for raw inputs `a` and `b`.
  let table: [Output]

  init<Function: QuantizedBinaryFunction>(function: Function) {
    var table = [Output](repeating: 0, count: 1 << 16)
    table.withUnsafeMutableBufferPointer { entries in
      var rhsValues = SIMD8<Int32>(0, 1, 2, 3, 4, 5, 6, 7) &+ Int32(Rhs.min)
      for rhsBlock in stride(from: 0, to: 256, by: 8) {
        for lhsIndex in 0..<256 {
          let lhsValues = SIMD8<Int32>(repeating: Int32(lhsIndex) &+ Int32(Lhs.min))
          Output.storeNarrowed(
            function(lhsValues, rhsValues), to: entries.baseAddress.unsafelyUnwrapped + (lhsIndex << 8 | rhsBlock))
        }
        rhsValues &+= 8
      }
    }
    self.table = table
  }

  func run(
    layout: BroadcastLayout, lhs: UnsafeRawPointer, rhs: UnsafeRawPointer, output: UnsafeMutableRawPointer,
    range: Range<Int>
  ) {
    let left = lhs.assumingMemoryBound(to: Lhs.self)
    let right = rhs.assumingMemoryBound(to: Rhs.self)
    let destination = output.assumingMemoryBound(to: Output.self)
    let leftStride = layout.innerStride(of: 0)
    let rightStride = layout.innerStride(of: 1)
    let leftBias = -Int(Lhs.min)
    let rightBias = -Int(Rhs.min)
    table.withUnsafeBufferPointer { table in
      let entries = table.baseAddress.unsafelyUnwrapped
      layout.forEachSegment(in: range) { start, leftOffset, rightOffset, _, count in
        for step in 0..<count {
          let a = Int(left[leftOffset &+ step &* leftStride]) &+ leftBias
          let b = Int(right[rightOffset &+ step &* rightStride]) &+ rightBias
          destination[start &+ step] = entries[a << 8 | b]
        }
      }
    }
  }
}

/// Walks the broadcast layout segment by segment.
private struct TypedBinaryRunner<
  Lhs: QuantizedInteger, Rhs: QuantizedInteger, Output: QuantizedInteger, Function: QuantizedBinaryFunction
> {
  let function: Function
  func run(
    layout: BroadcastLayout, lhs: UnsafeRawPointer, rhs: UnsafeRawPointer, output: UnsafeMutableRawPointer,
    range: Range<Int>
  ) {
    let left = lhs.assumingMemoryBound(to: Lhs.self)
    let right = rhs.assumingMemoryBound(to: Rhs.self)
    let destination = output.assumingMemoryBound(to: Output.self)
    let leftStride = layout.innerStride(of: 0)
    let rightStride = layout.innerStride(of: 1)
    layout.forEachSegment(in: range) { start, leftOffset, rightOffset, _, count in
      // Eight elements at a time; an operand that stays on one element is splatted.
      let leftSplat = SIMD8<Int32>(repeating: Int32(truncatingIfNeeded: left[leftOffset]))
      let rightSplat = SIMD8<Int32>(repeating: Int32(truncatingIfNeeded: right[rightOffset]))
      var step = 0
      while step &+ 8 <= count {
        let a = leftStride == 0 ? leftSplat : Lhs.loadWidened(left + (leftOffset &+ step))
        let b = rightStride == 0 ? rightSplat : Rhs.loadWidened(right + (rightOffset &+ step))
        Output.storeNarrowed(function(a, b), to: destination + (start &+ step))
        step &+= 8
      }
      if step < count {
        // The last few elements, gathered into padded lanes.
        var a = leftSplat
        var b = rightSplat
        for lane in 0..<(count &- step) {
          a[lane] = Int32(truncatingIfNeeded: left[leftOffset &+ (step &+ lane) &* leftStride])
          b[lane] = Int32(truncatingIfNeeded: right[rightOffset &+ (step &+ lane) &* rightStride])
        }
        let results = function(a, b)
        for lane in 0..<(count &- step) {
          destination[start &+ step &+ lane] = Output(truncatingIfNeeded: results[lane])
        }
      }
    }
  }
}

// MARK: - Input conditions

/// A condition on every raw value of an input that LiteRT checks when it runs the operator (and
/// fails the invocation otherwise): DIV's divisors must differ from the zero point, the inputs
/// of the quantized RSQRT and SQRT must not lie below it.
struct QuantizedInputCondition {
  /// How raw values compare with ``value``.
  enum Relation {
    /// Every raw value differs from ``value``.
    case differentFrom
    /// Every raw value is at least ``value``.
    case atLeast
  }

  let relation: Relation
  let value: Int32
  /// What the condition asks, for the error (`"divisors must not equal the zero point"`).
  let requirement: String

  /// Throws ``KernelError/invalid(_:)`` naming `tensor` when one of its elements fails.
  func check(_ tensor: RuntimeTensor, op: String) throws {
    let scan = ConditionScan(condition: self, data: try tensorData(tensor), count: tensor.elementCount)
    if try tensor.type.visitQuantized(scan) {
      throw KernelError.invalid("\(op): \(QuantizationValidation.describe(tensor)): \(requirement)")
    }
  }

  /// Whether the raw value `x` fails.
  @inline(__always)
  func fails(_ x: Int32) -> Bool {
    switch relation {
    case .differentFrom: x == value
    case .atLeast: x < value
    }
  }
}

/// Looks for an element failing a condition.
private struct ConditionScan: QuantizedTypeVisitor {
  let condition: QuantizedInputCondition
  let data: UnsafeRawPointer
  let count: Int
  func visit<Element: QuantizedInteger>(_ type: Element.Type) throws -> Bool {
    let elements = data.assumingMemoryBound(to: Element.self)
    for index in 0..<count where condition.fails(Int32(truncatingIfNeeded: elements[index])) { return true }
    return false
  }
}
