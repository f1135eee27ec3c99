// Broadcasting comparisons with bool output (EQUAL, NOT_EQUAL, LESS, LESS_EQUAL, GREATER,
// GREATER_EQUAL) and logical operators (LOGICAL_AND, LOGICAL_OR, LOGICAL_NOT).
//
// Bool tensors hold one byte per element, 0 or 1; logical operators treat any non-zero byte as
// true and always write 0 or 1.

/// Which comparison a `ComparisonOperation` performs.
protocol ComparisonKind {
  /// The TFLite operator name.
  static var operatorName: String { get }
  /// Bool bytes: 1 where the comparison holds.
  static func evaluate<Scalar: OrderedLaneScalar>(_ lhs: SIMD16<Scalar>, _ rhs: SIMD16<Scalar>) -> SIMD16<UInt8>
}

/// EQUAL.
enum EqualComparison: ComparisonKind {
  static let operatorName = "EQUAL"
  @inline(__always)
  static func evaluate<Scalar: OrderedLaneScalar>(_ lhs: SIMD16<Scalar>, _ rhs: SIMD16<Scalar>) -> SIMD16<UInt8> {
    Scalar.booleanBytes(Scalar.isEqual(lhs, rhs))
  }
}

/// NOT_EQUAL (true for NaN operands).
enum NotEqualComparison: ComparisonKind {
  static let operatorName = "NOT_EQUAL"
  @inline(__always)
  static func evaluate<Scalar: OrderedLaneScalar>(_ lhs: SIMD16<Scalar>, _ rhs: SIMD16<Scalar>) -> SIMD16<UInt8> {
    Scalar.booleanBytes(Scalar.isEqual(lhs, rhs)) ^ SIMD16(repeating: 1)
  }
}

/// LESS.
enum LessComparison: ComparisonKind {
  static let operatorName = "LESS"
  @inline(__always)
  static func evaluate<Scalar: OrderedLaneScalar>(_ lhs: SIMD16<Scalar>, _ rhs: SIMD16<Scalar>) -> SIMD16<UInt8> {
    Scalar.booleanBytes(Scalar.isLess(lhs, rhs))
  }
}

/// LESS_EQUAL.
enum LessEqualComparison: ComparisonKind {
  static let operatorName = "LESS_EQUAL"
  @inline(__always)
  static func evaluate<Scalar: OrderedLaneScalar>(_ lhs: SIMD16<Scalar>, _ rhs: SIMD16<Scalar>) -> SIMD16<UInt8> {
    Scalar.booleanBytes(Scalar.isLessOrEqual(lhs, rhs))
  }
}

/// GREATER.
enum GreaterComparison: ComparisonKind {
  static let operatorName = "GREATER"
  @inline(__always)
  static func evaluate<Scalar: OrderedLaneScalar>(_ lhs: SIMD16<Scalar>, _ rhs: SIMD16<Scalar>) -> SIMD16<UInt8> {
    Scalar.booleanBytes(Scalar.isLess(rhs, lhs))
  }
}

/// GREATER_EQUAL.
enum GreaterEqualComparison: ComparisonKind {
  static let operatorName = "GREATER_EQUAL"
  @inline(__always)
  static func evaluate<Scalar: OrderedLaneScalar>(_ lhs: SIMD16<Scalar>, _ rhs: SIMD16<Scalar>) -> SIMD16<UInt8> {
    Scalar.booleanBytes(Scalar.isLessOrEqual(rhs, lhs))
  }
}

/// A comparison of two operands of `Scalar` into bool bytes.
struct ComparisonOperation<Scalar: OrderedLaneScalar, Kind: ComparisonKind>: BinaryLanewiseOperation {
  @inline(__always)
  func callAsFunction(_ lhs: SIMD16<Scalar>, _ rhs: SIMD16<Scalar>) -> SIMD16<UInt8> {
    Kind.evaluate(lhs, rhs)
  }
}

/// Lanes of bool bytes that are true (non-zero).
@inline(__always)
private func isTrue(_ bytes: SIMD16<UInt8>) -> SIMDMask<SIMD16<Int8>> {
  bytes .!= SIMD16(repeating: 0)
}

/// LOGICAL_AND.
struct LogicalAndOperation: BinaryLanewiseOperation {
  @inline(__always)
  func callAsFunction(_ lhs: SIMD16<UInt8>, _ rhs: SIMD16<UInt8>) -> SIMD16<UInt8> {
    UInt8.booleanBytes(isTrue(lhs) .& isTrue(rhs))
  }
}

/// LOGICAL_OR.
struct LogicalOrOperation: BinaryLanewiseOperation {
  @inline(__always)
  func callAsFunction(_ lhs: SIMD16<UInt8>, _ rhs: SIMD16<UInt8>) -> SIMD16<UInt8> {
    UInt8.booleanBytes(isTrue(lhs) .| isTrue(rhs))
  }
}

/// LOGICAL_NOT.
struct LogicalNotOperation: UnaryLanewiseOperation {
  @inline(__always)
  func callAsFunction(_ x: SIMD16<UInt8>) -> SIMD16<UInt8> { UInt8.booleanBytes(.!isTrue(x)) }
}

/// The kernel definition of the comparisons of plain values. Quantized int8, uint8 and int16
/// operands are compared by the kernels of `Comparison+Integer.swift`, which rescale them as
/// LiteRT does; integer operands reaching this kernel compare raw.
struct ComparisonDefinition<Kind: ComparisonKind>: BinaryKernelDefinition {
  private let type: ElementType

  init(node: Node, lhs: RuntimeTensor, rhs: RuntimeTensor, output: RuntimeTensor) throws {
    var allowed: [ElementType] = [.float32, .int32, .int64, .int8, .uint8, .int16]
    if Kind.self == EqualComparison.self || Kind.self == NotEqualComparison.self { allowed.append(.bool) }
    type = try commonElementType([lhs, rhs], allowed: allowed, operatorName: Kind.operatorName)
    try requireSharedQuantization([lhs, rhs], operatorName: Kind.operatorName)
    guard output.type == .bool else {
      throw KernelError.invalid("\(Kind.operatorName) writes a BOOL tensor, the output is \(output.type.name)")
    }
  }

  var minimumChunk: Int { cheapElementwiseChunk }

  func run(
    layout: BroadcastLayout, lhs: UnsafeRawPointer, rhs: UnsafeRawPointer,
    output: UnsafeMutableRawPointer, range: Range<Int>
  ) {
    switch type {
    case .float32: run(Float.self, layout, lhs, rhs, output, range)
    case .int32: run(Int32.self, layout, lhs, rhs, output, range)
    case .int64: run(Int64.self, layout, lhs, rhs, output, range)
    case .int16: run(Int16.self, layout, lhs, rhs, output, range)
    case .int8: run(Int8.self, layout, lhs, rhs, output, range)
    default: run(UInt8.self, layout, lhs, rhs, output, range)
    }
  }

  private func run<Scalar: OrderedLaneScalar>(
    _: Scalar.Type, _ layout: BroadcastLayout, _ lhs: UnsafeRawPointer, _ rhs: UnsafeRawPointer,
    _ output: UnsafeMutableRawPointer, _ range: Range<Int>
  ) {
    BinaryDriver.run(ComparisonOperation<Scalar, Kind>(), layout: layout, lhs: lhs, rhs: rhs, output: output, range: range)
  }
}

/// A logical operator on bool tensors.
protocol LogicalOperation: BinaryLanewiseOperation where Operand == UInt8, Result == UInt8 {
  /// The TFLite operator name.
  static var operatorName: String { get }
  /// The operation.
  init()
}

extension LogicalAndOperation: LogicalOperation {
  static let operatorName = "LOGICAL_AND"
}

extension LogicalOrOperation: LogicalOperation {
  static let operatorName = "LOGICAL_OR"
}

/// The kernel definition of LOGICAL_AND and LOGICAL_OR.
struct LogicalDefinition<Operation: LogicalOperation>: BinaryKernelDefinition {
  init(node: Node, lhs: RuntimeTensor, rhs: RuntimeTensor, output: RuntimeTensor) throws {
    _ = try commonElementType([lhs, rhs, output], allowed: [.bool], operatorName: Operation.operatorName)
  }

  var minimumChunk: Int { cheapElementwiseChunk }

  func run(
    layout: BroadcastLayout, lhs: UnsafeRawPointer, rhs: UnsafeRawPointer,
    output: UnsafeMutableRawPointer, range: Range<Int>
  ) {
    BinaryDriver.run(Operation(), layout: layout, lhs: lhs, rhs: rhs, output: output, range: range)
  }
}

/// The kernel definition of LOGICAL_NOT.
struct LogicalNotDefinition: UnaryKernelDefinition {
  init(node: Node, input: RuntimeTensor, output: RuntimeTensor) throws {
    _ = try commonElementType([input, output], allowed: [.bool], operatorName: "LOGICAL_NOT")
  }

  var minimumChunk: Int { cheapElementwiseChunk }

  func run(input: UnsafeRawPointer, output: UnsafeMutableRawPointer, range: Range<Int>) {
    UnaryDriver.run(LogicalNotOperation(), input: input, output: output, range: range)
  }
}
