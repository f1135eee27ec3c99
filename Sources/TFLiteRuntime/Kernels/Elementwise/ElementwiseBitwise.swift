// Broadcasting bit operations on plain integers (RIGHT_SHIFT, BITWISE_XOR) and ATAN2.
//
// As in TFLite: both operands and the output share one type among int8, uint8, int16, uint16,
// int32 and uint32; RIGHT_SHIFT clamps the shift amount to [0, bits − 1] and shifts signed values
// arithmetically. ATAN2(y, x) takes float32 or float64 operands of one shape (no broadcasting).

import TFLiteLinearAlgebra

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A bit operation of two integer operands.
protocol BitwiseKind {
  /// The TFLite operator name.
  static var operatorName: String { get }
  /// The result lanes.
  static func apply<Scalar: FixedWidthInteger & SIMDScalar>(_ lhs: SIMD16<Scalar>, _ rhs: SIMD16<Scalar>)
    -> SIMD16<Scalar>
}

/// BITWISE_XOR.
enum ExclusiveOr: BitwiseKind {
  static let operatorName = "BITWISE_XOR"

  @inline(__always)
  static func apply<Scalar: FixedWidthInteger & SIMDScalar>(_ lhs: SIMD16<Scalar>, _ rhs: SIMD16<Scalar>)
    -> SIMD16<Scalar>
  { lhs ^ rhs }
}

/// RIGHT_SHIFT: the shift amount is clamped to [0, bits − 1].
enum RightShift: BitwiseKind {
  static let operatorName = "RIGHT_SHIFT"

  @inline(__always)
  static func apply<Scalar: FixedWidthInteger & SIMDScalar>(_ lhs: SIMD16<Scalar>, _ rhs: SIMD16<Scalar>)
    -> SIMD16<Scalar>
  {
    lhs &>> rhs.clamped(lowerBound: SIMD16(repeating: 0), upperBound: SIMD16(repeating: Scalar(Scalar.bitWidth - 1)))
  }
}

/// `Kind` on 16 lanes of `Scalar`.
struct BitwiseOperation<Scalar: FixedWidthInteger & SIMDScalar & BitwiseCopyable, Kind: BitwiseKind>:
  BinaryLanewiseOperation
{
  @inline(__always)
  func callAsFunction(_ lhs: SIMD16<Scalar>, _ rhs: SIMD16<Scalar>) -> SIMD16<Scalar> { Kind.apply(lhs, rhs) }
}

/// The kernel definition of RIGHT_SHIFT and BITWISE_XOR.
struct BitwiseDefinition<Kind: BitwiseKind>: BinaryKernelDefinition {
  private let type: ElementType

  init(node: Node, lhs: RuntimeTensor, rhs: RuntimeTensor, output: RuntimeTensor) throws {
    type = try commonElementType(
      [lhs, rhs, output], allowed: [.int8, .uint8, .int16, .uint16, .int32, .uint32], operatorName: Kind.operatorName)
  }

  var minimumChunk: Int { cheapElementwiseChunk }

  func run(
    layout: BroadcastLayout, lhs: UnsafeRawPointer, rhs: UnsafeRawPointer,
    output: UnsafeMutableRawPointer, range: Range<Int>
  ) {
    switch type {
    case .int8: run(Int8.self, layout, lhs, rhs, output, range)
    case .uint8: run(UInt8.self, layout, lhs, rhs, output, range)
    case .int16: run(Int16.self, layout, lhs, rhs, output, range)
    case .uint16: run(UInt16.self, layout, lhs, rhs, output, range)
    case .int32: run(Int32.self, layout, lhs, rhs, output, range)
    default: run(UInt32.self, layout, lhs, rhs, output, range)
    }
  }

  private func run<Scalar: FixedWidthInteger & SIMDScalar & BitwiseCopyable>(
    _: Scalar.Type, _ layout: BroadcastLayout, _ lhs: UnsafeRawPointer, _ rhs: UnsafeRawPointer,
    _ output: UnsafeMutableRawPointer, _ range: Range<Int>
  ) {
    BinaryDriver.run(BitwiseOperation<Scalar, Kind>(), layout: layout, lhs: lhs, rhs: rhs, output: output, range: range)
  }
}

/// Element types ATAN2 runs on, with libm's two-argument arctangent.
protocol ArcTangentScalar: BinaryFloatingPoint & SIMDScalar & BitwiseCopyable {
  /// atan2(y, x) in this precision.
  static func arcTangent(_ y: Self, _ x: Self) -> Self
}

extension Float: ArcTangentScalar {
  @inline(__always)
  static func arcTangent(_ y: Float, _ x: Float) -> Float { atan2f(y, x) }
}

extension Double: ArcTangentScalar {
  @inline(__always)
  static func arcTangent(_ y: Double, _ x: Double) -> Double { atan2(y, x) }
}

/// atan2 lane by lane.
struct ArcTangentOperation<Scalar: ArcTangentScalar>: BinaryLanewiseOperation {
  @inline(__always)
  func callAsFunction(_ y: SIMD16<Scalar>, _ x: SIMD16<Scalar>) -> SIMD16<Scalar> {
    var result = SIMD16<Scalar>()
    for lane in 0..<16 { result[lane] = Scalar.arcTangent(y[lane], x[lane]) }
    return result
  }
}

/// The kernel definition of ATAN2(y, x).
struct ArcTangentDefinition: BinaryKernelDefinition {
  private let isDouble: Bool

  init(node: Node, lhs: RuntimeTensor, rhs: RuntimeTensor, output: RuntimeTensor) throws {
    isDouble = try commonElementType([lhs, rhs, output], allowed: [.float32, .float64], operatorName: "ATAN2") == .float64
  }

  var minimumChunk: Int { costlyElementwiseChunk }

  func validate(lhs: RuntimeTensor, rhs: RuntimeTensor) throws {
    guard lhs.shape == rhs.shape else {
      throw KernelError.invalid("ATAN2 needs operands of one shape, got \(lhs.shape) and \(rhs.shape)")
    }
  }

  func run(
    layout: BroadcastLayout, lhs: UnsafeRawPointer, rhs: UnsafeRawPointer,
    output: UnsafeMutableRawPointer, range: Range<Int>
  ) {
    if isDouble {
      BinaryDriver.run(ArcTangentOperation<Double>(), layout: layout, lhs: lhs, rhs: rhs, output: output, range: range)
    } else {
      BinaryDriver.run(ArcTangentOperation<Float>(), layout: layout, lhs: lhs, rhs: rhs, output: output, range: range)
    }
  }
}
