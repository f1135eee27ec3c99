// Drivers shared by the quantized elementwise kernels: the integer element types chosen at run
// time, an element-by-element map (a table for 8-bit inputs), and a broadcasting two-input walk.
// Each kernel only describes its per-element function, exactly as the reference kernel computes
// it; the drivers specialise the loops for the operand types.

/// The integer element types quantized kernels read and write.
protocol QuantizedInteger: FixedWidthInteger, SIMDScalar {}

extension QuantizedInteger {
  /// Sixteen consecutive elements at `pointer`, widened to Int32 lanes.
  @inline(__always)
  static func loadWidened(_ pointer: UnsafePointer<Self>) -> SIMD16<Int32> {
    SIMD16<Int32>(truncatingIfNeeded: UnsafeRawPointer(pointer).loadUnaligned(as: SIMD16<Self>.self))
  }

  /// Stores sixteen Int32 lanes (already inside this type's range) as elements at `pointer`.
  @inline(__always)
  static func storeNarrowed(_ lanes: SIMD16<Int32>, to pointer: UnsafeMutablePointer<Self>) {
    UnsafeMutableRawPointer(pointer).storeBytes(of: SIMD16<Self>(truncatingIfNeeded: lanes), as: SIMD16<Self>.self)
  }
}
extension Int8: QuantizedInteger {}
extension UInt8: QuantizedInteger {}
extension Int16: QuantizedInteger {}
extension Int32: QuantizedInteger {}

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

/// An element-by-element map from a quantized tensor to another, prepared once: a 256-entry
/// table for 8-bit inputs (built by running the function on every input value), the function
/// itself for wider inputs.
struct QuantizedElementMap {
  private let runner: any QuantizedMapRunner

  /// Prepares the map of `function` from `inputType` to `outputType` elements.
  init<Function: QuantizedUnaryFunction>(_ function: Function, from inputType: ElementType, to outputType: ElementType)
    throws
  {
    runner = try visitQuantized(inputType, outputType, MapRunnerFactory(function: function))
  }

  /// Maps elements `range` of `input` into the same elements of `output`.
  func run(input: UnsafeRawPointer, output: UnsafeMutableRawPointer, range: Range<Int>) {
    runner.run(input: input, output: output, range: range)
  }
}

/// A typed loop behind a ``QuantizedElementMap``.
private protocol QuantizedMapRunner {
  func run(input: UnsafeRawPointer, output: UnsafeMutableRawPointer, range: Range<Int>)
}

/// Chooses the table or the direct loop for a pair of element types.
private struct MapRunnerFactory<Function: QuantizedUnaryFunction>: QuantizedTypePairVisitor {
  let function: Function
  func visit<Input: QuantizedInteger, Output: QuantizedInteger>(_ input: Input.Type, _ output: Output.Type) throws
    -> any QuantizedMapRunner
  {
    if Input.bitWidth == 8 {
      let table = (Int32(Input.min)...Int32(Input.max)).map { Output(truncatingIfNeeded: function($0)) }
      return TableMapRunner<Input, Output>(table: table)
    }
    return FunctionMapRunner<Input, Output, Function>(function: function)
  }
}

/// Maps 8-bit inputs through a 256-entry table indexed by the raw value minus the type's minimum.
private struct TableMapRunner<Input: QuantizedInteger, Output: QuantizedInteger>: QuantizedMapRunner {
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
private struct FunctionMapRunner<Input: QuantizedInteger, Output: QuantizedInteger, Function: QuantizedUnaryFunction>:
  QuantizedMapRunner
{
  let function: Function
  func run(input: UnsafeRawPointer, output: UnsafeMutableRawPointer, range: Range<Int>) {
    let source = input.assumingMemoryBound(to: Input.self)
    let destination = output.assumingMemoryBound(to: Output.self)
    for index in range { destination[index] = Output(truncatingIfNeeded: function(Int32(truncatingIfNeeded: source[index]))) }
  }
}

// MARK: - Two inputs

/// A function of two raw quantized values, computed as the reference kernel does.
protocol QuantizedBinaryFunction {
  /// The raw output for raw inputs `a` and `b`, already inside the output type's range.
  func callAsFunction(_ a: Int32, _ b: Int32) -> Int32
}

/// A broadcasting elementwise operation on two quantized tensors, prepared once; the output has
/// the type of the first input.
struct QuantizedBinaryMap {
  private let runner: any QuantizedBinaryRunner

  /// Prepares `function` for inputs of `lhsType` and `rhsType`.
  init<Function: QuantizedBinaryFunction>(_ function: Function, lhs lhsType: ElementType, rhs rhsType: ElementType)
    throws
  {
    runner = try visitQuantized(lhsType, rhsType, BinaryRunnerFactory(function: function))
  }

  /// Computes output elements `range` of `layout` (operand 0 is `lhs`, operand 1 is `rhs`).
  func run(
    layout: BroadcastLayout, lhs: UnsafeRawPointer, rhs: UnsafeRawPointer, output: UnsafeMutableRawPointer,
    range: Range<Int>
  ) {
    runner.run(layout: layout, lhs: lhs, rhs: rhs, output: output, range: range)
  }
}

/// A typed loop behind a ``QuantizedBinaryMap``.
private protocol QuantizedBinaryRunner {
  func run(
    layout: BroadcastLayout, lhs: UnsafeRawPointer, rhs: UnsafeRawPointer, output: UnsafeMutableRawPointer,
    range: Range<Int>)
}

/// Builds the typed loop for a pair of input types.
private struct BinaryRunnerFactory<Function: QuantizedBinaryFunction>: QuantizedTypePairVisitor {
  let function: Function
  func visit<Lhs: QuantizedInteger, Rhs: QuantizedInteger>(_ lhs: Lhs.Type, _ rhs: Rhs.Type) throws
    -> any QuantizedBinaryRunner
  {
    TypedBinaryRunner<Lhs, Rhs, Function>(function: function)
  }
}

/// Walks the broadcast layout segment by segment.
private struct TypedBinaryRunner<Lhs: QuantizedInteger, Rhs: QuantizedInteger, Function: QuantizedBinaryFunction>:
  QuantizedBinaryRunner
{
  let function: Function
  func run(
    layout: BroadcastLayout, lhs: UnsafeRawPointer, rhs: UnsafeRawPointer, output: UnsafeMutableRawPointer,
    range: Range<Int>
  ) {
    let left = lhs.assumingMemoryBound(to: Lhs.self)
    let right = rhs.assumingMemoryBound(to: Rhs.self)
    let destination = output.assumingMemoryBound(to: Lhs.self)
    let leftStride = layout.innerStride(of: 0)
    let rightStride = layout.innerStride(of: 1)
    layout.forEachSegment(in: range) { start, leftOffset, rightOffset, _, count in
      for step in 0..<count {
        let a = Int32(truncatingIfNeeded: left[leftOffset &+ step &* leftStride])
        let b = Int32(truncatingIfNeeded: right[rightOffset &+ step &* rightStride])
        destination[start &+ step] = Lhs(truncatingIfNeeded: function(a, b))
      }
    }
  }
}
