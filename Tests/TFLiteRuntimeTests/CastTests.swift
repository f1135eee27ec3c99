import TFLiteFormat
import XCTest

@testable import TFLiteRuntime

final class CastTests: XCTestCase {
  #if !(os(macOS) && arch(x86_64))
    func testHalfToFloatIsExactForEveryBitPattern() {
      for bits in UInt16.min...UInt16.max {
        let expected = Float(Float16(bitPattern: bits))
        let actual = HalfPrecision.float(fromBits: bits)
        if expected.isNaN {
          XCTAssertTrue(actual.isNaN, "bits \(bits)")
        } else {
          XCTAssertEqual(actual.bitPattern, expected.bitPattern, "bits \(bits)")
        }
      }
    }

    func testFloatToHalfRoundsToNearestEven() {
      var generator = SeededGenerator(seed: 100)
      // Every half value, the midpoints between neighbours, and random floats over the whole range.
      var values: [Float] = []
      for bits in UInt16(0)..<0x7C00 {
        let low = Float(Float16(bitPattern: bits))
        let high = Float(Float16(bitPattern: bits + 1))
        values += [low, -low, (low + high) / 2, -(low + high) / 2, low.nextUp, high.nextDown]
      }
      values += (0..<100_000).map { _ in Float(bitPattern: UInt32.random(in: .min ... .max, using: &generator)) }
      values += [.infinity, -.infinity, 65504, 65519.99, 65520, 1e-8, -1e-8, 0x1p-25, 0x1p-24, .leastNonzeroMagnitude]
      for value in values {
        let expected = Float16(value)
        let actual = HalfPrecision.bits(from: value)
        if expected.isNaN {
          XCTAssertTrue(Float16(bitPattern: actual).isNaN, "\(value)")
        } else {
          XCTAssertEqual(actual, expected.bitPattern, "\(value)")
        }
      }
    }
  #endif

  /// Runs `castElements` from one array type to another.
  private func cast<Source: CastElement, Destination: CastElement>(_ values: [Source], to type: Destination.Type) -> [Destination] {
    values.withUnsafeBytes { input in
      [Destination](unsafeUninitializedCapacity: values.count) { output, count in
        castElements(input.baseAddress!, Source.self, to: UnsafeMutableRawPointer(output.baseAddress!), Destination.self, count: values.count)
        count = values.count
      }
    }
  }

  /// Naive float → integer conversion: truncate toward zero, clamp to the range, NaN → max.
  private func naiveFloatToInteger<T: FixedWidthInteger>(_ value: Float, _ type: T.Type) -> T {
    if value.isNaN { return .max }
    let truncated = value.rounded(.towardZero)
    if truncated <= Float(T.min) { return .min }
    if Double(truncated) >= Double(T.max) { return .max }
    return T(truncated)
  }

  func testFloatToIntegersSaturateAndTruncate() {
    var generator = SeededGenerator(seed: 101)
    var values = (0..<2000).map { _ in Float.random(in: -70000...70000, using: &generator) }
    values += (0..<200).map { _ in Float.random(in: -3e19...3e19, using: &generator) }
    values += [.nan, .infinity, -.infinity, -0.0, 0.5, -0.5, 127.9, -128.9, 255.5, 2147483648, -2147483904]
    XCTAssertEqual(cast(values, to: Int8.self), values.map { naiveFloatToInteger($0, Int8.self) })
    XCTAssertEqual(cast(values, to: UInt8.self), values.map { naiveFloatToInteger($0, UInt8.self) })
    XCTAssertEqual(cast(values, to: Int16.self), values.map { naiveFloatToInteger($0, Int16.self) })
    XCTAssertEqual(cast(values, to: UInt16.self), values.map { naiveFloatToInteger($0, UInt16.self) })
    XCTAssertEqual(cast(values, to: Int32.self), values.map { naiveFloatToInteger($0, Int32.self) })
    XCTAssertEqual(cast(values, to: UInt32.self), values.map { naiveFloatToInteger($0, UInt32.self) })
    XCTAssertEqual(cast(values, to: Int64.self), values.map { naiveFloatToInteger($0, Int64.self) })
    XCTAssertEqual(cast(values, to: UInt64.self), values.map { naiveFloatToInteger($0, UInt64.self) })
    XCTAssertEqual(cast(values, to: BoolElement.self).map(\.byte), values.map { $0 != 0 ? 1 : 0 })
  }

  func testIntegersWrapAndWidenExactly() {
    var generator = SeededGenerator(seed: 102)
    let values = (0..<2000).map { _ in Int64.random(in: .min ... .max, using: &generator) >> Int64.random(in: 0...63, using: &generator) }
    XCTAssertEqual(cast(values, to: Int8.self), values.map { Int8(truncatingIfNeeded: $0) })
    XCTAssertEqual(cast(values, to: UInt16.self), values.map { UInt16(truncatingIfNeeded: $0) })
    XCTAssertEqual(cast(values, to: UInt64.self), values.map { UInt64(bitPattern: $0) })
    XCTAssertEqual(cast(values, to: Float.self), values.map { Float($0) })
    XCTAssertEqual(cast(values, to: Double.self), values.map { Double($0) })
    let unsigned = values.map { UInt64(bitPattern: $0) }
    XCTAssertEqual(cast(unsigned, to: Float.self), unsigned.map { Float($0) })
    XCTAssertEqual(cast(unsigned, to: Int32.self), unsigned.map { Int32(truncatingIfNeeded: $0) })
    XCTAssertEqual(cast(values, to: BoolElement.self).map(\.byte), values.map { $0 != 0 ? 1 : 0 })
    let bools = values.map { BoolElement(casting: .signed($0 & 1)) }
    XCTAssertEqual(cast(bools, to: Float.self), bools.map { Float($0.byte) })
    XCTAssertEqual(cast(bools, to: Int32.self), bools.map { Int32($0.byte) })
  }

  func testHalfCastsGoThroughFloat() {
    var generator = SeededGenerator(seed: 103)
    let floats = (0..<2000).map { _ in Float.random(in: -70000...70000, using: &generator) }
    let halves = cast(floats, to: HalfElement.self)
    XCTAssertEqual(halves.map(\.bits), floats.map { HalfPrecision.bits(from: $0) })
    XCTAssertEqual(cast(halves, to: Float.self), halves.map { HalfPrecision.float(fromBits: $0.bits) })
    XCTAssertEqual(cast(halves, to: Int16.self), halves.map { naiveFloatToInteger(HalfPrecision.float(fromBits: $0.bits), Int16.self) })
    let integers = (0..<2000).map { _ in Int32.random(in: -100_000...100_000, using: &generator) }
    XCTAssertEqual(cast(integers, to: HalfElement.self).map(\.bits), integers.map { HalfPrecision.bits(from: Float($0)) })
  }
}

final class CastKernelTests: XCTestCase {
  func testKernelConvertsAndRejectsUnknownPairs() throws {
    var generator = SeededGenerator(seed: 104)
    let values = (0..<10).map { _ in Float.random(in: -300...300, using: &generator) }
    let input = makeTensor(0, .float32, [2, 5], bytes: bytesOf(values))
    let output = makeTensor(1, .uint8, [1])
    try runKernel(CastKernel.self, opName: "CAST", inputs: [input], outputs: [output])
    XCTAssertEqual(output.shape, [2, 5])
    XCTAssertEqual(elements(output, as: UInt8.self), values.map { UInt8(min(max($0.rounded(.towardZero), 0), 255)) })
    XCTAssertThrowsError(
      try runKernel(CastKernel.self, opName: "CAST", inputs: [makeTensor(2, .string, [1])], outputs: [makeTensor(3, .float32, [1])]))
  }
}
