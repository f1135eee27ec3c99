// CAST between float32, float16, float64, int8, uint8, int16, uint16, int32, uint32, int64, uint64
// and bool, with TFLite's rules: integers wrap, floats truncate toward zero and saturate
// (NaN becomes the maximum), anything non-zero is true.

import TFLiteFormat

/// A value in transit through CAST: integers keep their full range, floats travel as Double.
enum CastScalar {
  /// A signed integer (or any integer that fits).
  case signed(Int64)
  /// An unsigned 64-bit integer.
  case unsigned(UInt64)
  /// A floating-point value.
  case real(Double)
}

/// An element type CAST reads and writes.
protocol CastElement {
  /// This value on its way to another type.
  var castScalar: CastScalar { get }
  /// The value of this type that CAST produces from `scalar`.
  init(casting scalar: CastScalar)
}

extension CastElement where Self: FixedWidthInteger {
  /// Wraps integers and truncates floats toward zero, saturating at the type's range (NaN → max).
  @inline(__always)
  init(casting scalar: CastScalar) {
    switch scalar {
    case .signed(let value): self.init(truncatingIfNeeded: value)
    case .unsigned(let value): self.init(truncatingIfNeeded: value)
    case .real(let value):
      if value.isNaN {
        self = .max
      } else if value < Double(Self.min) {
        self = .min
      } else if value >= Double(Self.max / 2 + 1) * 2 {
        self = .max
      } else {
        self.init(value)
      }
    }
  }
}

extension CastElement where Self: FixedWidthInteger & SignedInteger {
  /// The integer, widened.
  @inline(__always) var castScalar: CastScalar { .signed(Int64(self)) }
}

extension CastElement where Self: FixedWidthInteger & UnsignedInteger {
  /// The integer, widened.
  @inline(__always) var castScalar: CastScalar { .unsigned(UInt64(self)) }
}

extension Int8: CastElement {}
extension Int16: CastElement {}
extension Int32: CastElement {}
extension Int64: CastElement {}
extension UInt8: CastElement {}
extension UInt16: CastElement {}
extension UInt32: CastElement {}
extension UInt64: CastElement {}

extension Float: CastElement {
  /// The value, widened exactly.
  @inline(__always) var castScalar: CastScalar { .real(Double(self)) }
  /// Integers convert with one rounding; doubles round to nearest.
  @inline(__always)
  init(casting scalar: CastScalar) {
    switch scalar {
    case .signed(let value): self.init(value)
    case .unsigned(let value): self.init(value)
    case .real(let value): self.init(value)
    }
  }
}

extension Double: CastElement {
  /// The value itself.
  @inline(__always) var castScalar: CastScalar { .real(self) }
  /// Integers convert with one rounding.
  @inline(__always)
  init(casting scalar: CastScalar) {
    switch scalar {
    case .signed(let value): self.init(value)
    case .unsigned(let value): self.init(value)
    case .real(let value): self = value
    }
  }
}

/// A float16 element stored as its bit pattern.
struct HalfElement: CastElement {
  /// IEEE half-precision bits.
  var bits: UInt16
  /// The value, widened exactly.
  @inline(__always) var castScalar: CastScalar { .real(Double(HalfPrecision.float(fromBits: bits))) }
  /// Goes through float32 first, as TFLite does.
  @inline(__always)
  init(casting scalar: CastScalar) { bits = HalfPrecision.bits(from: Float(casting: scalar)) }
}

/// A bool element stored as one byte (0 or 1).
struct BoolElement: CastElement {
  /// 1 for true, 0 for false.
  var byte: UInt8
  /// 0 or 1.
  @inline(__always) var castScalar: CastScalar { .unsigned(byte == 0 ? 0 : 1) }
  /// True for anything non-zero (NaN included).
  @inline(__always)
  init(casting scalar: CastScalar) {
    switch scalar {
    case .signed(let value): byte = value != 0 ? 1 : 0
    case .unsigned(let value): byte = value != 0 ? 1 : 0
    case .real(let value): byte = value != 0 ? 1 : 0
    }
  }
}

/// Converts `count` elements of `Source` at `source` into `Destination` elements at `destination`.
func castElements<Source: CastElement, Destination: CastElement>(
  _ source: UnsafeRawPointer, _ sourceType: Source.Type, to destination: UnsafeMutableRawPointer,
  _ destinationType: Destination.Type, count: Int
) {
  let sourceStride = MemoryLayout<Source>.stride
  let destinationStride = MemoryLayout<Destination>.stride
  for index in 0..<count {
    let value = source.loadUnaligned(fromByteOffset: index &* sourceStride, as: Source.self)
    destination.storeBytes(
      of: Destination(casting: value.castScalar), toByteOffset: index &* destinationStride, as: Destination.self)
  }
}

// MARK: - Kernel

/// Converts `count` elements from one raw buffer to another.
typealias CastFunction = (UnsafeRawPointer, UnsafeMutableRawPointer, Int) -> Void

/// The conversion from elements of `source` to elements of `destination`, or nil for a type CAST does not handle.
func castFunction(from source: ElementType, to destination: ElementType) -> CastFunction? {
  switch source {
  case .float32: castFunction(from: Float.self, to: destination)
  case .float16: castFunction(from: HalfElement.self, to: destination)
  case .float64: castFunction(from: Double.self, to: destination)
  case .int8: castFunction(from: Int8.self, to: destination)
  case .uint8: castFunction(from: UInt8.self, to: destination)
  case .int16: castFunction(from: Int16.self, to: destination)
  case .uint16: castFunction(from: UInt16.self, to: destination)
  case .int32: castFunction(from: Int32.self, to: destination)
  case .uint32: castFunction(from: UInt32.self, to: destination)
  case .int64: castFunction(from: Int64.self, to: destination)
  case .uint64: castFunction(from: UInt64.self, to: destination)
  case .bool: castFunction(from: BoolElement.self, to: destination)
  default: nil
  }
}

private func castFunction<Source: CastElement>(from source: Source.Type, to destination: ElementType) -> CastFunction? {
  func converting<Destination: CastElement>(_ type: Destination.Type) -> CastFunction {
    { castElements($0, Source.self, to: $1, Destination.self, count: $2) }
  }
  return switch destination {
  case .float32: converting(Float.self)
  case .float16: converting(HalfElement.self)
  case .float64: converting(Double.self)
  case .int8: converting(Int8.self)
  case .uint8: converting(UInt8.self)
  case .int16: converting(Int16.self)
  case .uint16: converting(UInt16.self)
  case .int32: converting(Int32.self)
  case .uint32: converting(UInt32.self)
  case .int64: converting(Int64.self)
  case .uint64: converting(UInt64.self)
  case .bool: converting(BoolElement.self)
  default: nil
  }
}

/// CAST between any two of float32, float16, float64, (u)int8/16/32/64 and bool.
final class CastKernel: Kernel {
  private let input: RuntimeTensor
  private let output: RuntimeTensor
  private let convert: CastFunction

  init(node: Node) throws {
    (input, output) = try node.singleInputAndOutput()
    guard let convert = castFunction(from: input.type, to: output.type) else {
      throw KernelError.unsupported("CAST from \(input.type.name) to \(output.type.name)")
    }
    self.convert = convert
  }

  func prepare(_ context: inout PrepareContext) throws {
    output.shape = input.shape
  }

  func eval(_ context: EvalContext) throws {
    let (source, destination) = try evalPointers(input, output, op: "CAST")
    convert(source, destination, input.elementCount)
  }
}
