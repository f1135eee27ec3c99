import XCTest

@testable import TFLiteRuntime

/// `CacheLineValues`, the 64-byte aligned storage of weights the generated kernels read as whole
/// vectors: every start on a cache line wherever the heap stands, and the values it was given.
final class CacheLineValuesTests: XCTestCase {
  /// Copies of 0–99 values of three element sizes, made between `malloc`s of 1–200 bytes that move
  /// the heap's next free block (a 16-byte aligned allocation starts on a cache line one time in
  /// four): each starts on a cache line and holds the values copied.
  func testEveryCopyStartsOnACacheLineAndHoldsItsValues() {
    var generator = SystemRandomNumberGenerator()
    var spacers: [UnsafeMutableRawPointer] = []
    defer { spacers.forEach { free($0) } }
    var kept: [AnyObject] = []
    for count in 0..<100 {
      spacers.append(malloc(Int.random(in: 1...200, using: &generator))!)
      let bytes = (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
      let words = (0..<count).map { _ in Int16.random(in: .min ... .max, using: &generator) }
      let floats = (0..<count).map { _ in Float.random(in: -1...1, using: &generator) }
      let byteCopy = CacheLineValues(copying: bytes)
      let wordCopy = CacheLineValues(copying: words)
      let floatCopy = CacheLineValues(copying: floats)
      for (base, name) in [
        (UnsafeRawPointer(byteCopy.base), "UInt8"), (UnsafeRawPointer(wordCopy.base), "Int16"),
        (UnsafeRawPointer(floatCopy.base), "Float"),
      ] {
        XCTAssertEqual(Int(bitPattern: base) % 64, 0, "\(count) \(name) values start off a cache line")
      }
      XCTAssertEqual(Array(UnsafeBufferPointer(start: byteCopy.base, count: byteCopy.count)), bytes)
      XCTAssertEqual(Array(UnsafeBufferPointer(start: wordCopy.base, count: wordCopy.count)), words)
      XCTAssertEqual(Array(UnsafeBufferPointer(start: floatCopy.base, count: floatCopy.count)), floats)
      kept += [byteCopy, wordCopy, floatCopy]
    }
  }

  /// Values set by the initializer closure are the ones read back, starting on a cache line.
  func testInitializerWritesTheValues() {
    let values = CacheLineValues<Float>(count: 37) { base in
      for index in 0..<37 { (base + index).initialize(to: Float(index) * 0.5 - 3) }
    }
    XCTAssertEqual(Int(bitPattern: values.base) % 64, 0)
    XCTAssertEqual((0..<37).map { values.base[$0] }, (0..<37).map { Float($0) * 0.5 - 3 })
  }
}
