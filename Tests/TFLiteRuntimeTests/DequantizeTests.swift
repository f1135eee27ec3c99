import TFLiteFormat
import XCTest

@testable import TFLiteRuntime

final class DequantizeTests: XCTestCase {
  func testHalfWidening() {
    let bits = Array(UInt16.min...UInt16.max)
    var output = [Float](repeating: 0, count: bits.count)
    bits.withUnsafeBytes { input in
      output.withUnsafeMutableBufferPointer { dequantizeHalf(input.baseAddress!, to: $0.baseAddress!, count: bits.count) }
    }
    for (index, pattern) in bits.enumerated() {
      let expected = HalfPrecision.float(fromBits: pattern)
      XCTAssertTrue(output[index].bitPattern == expected.bitPattern || (output[index].isNaN && expected.isNaN))
    }
  }

  private func checkPerTensor<Q: FixedWidthInteger>(_ type: Q.Type, seed: UInt64) {
    var generator = SeededGenerator(seed: seed)
    let values = (0..<500).map { _ in Q.random(in: .min ... .max, using: &generator) }
    let scale = Float.random(in: 1e-4...1, using: &generator)
    let zeroPoint = Int.random(in: -20...20, using: &generator)
    var output = [Float](repeating: 0, count: values.count)
    values.withUnsafeBytes { input in
      output.withUnsafeMutableBufferPointer {
        dequantizePerTensor(input.baseAddress!, Q.self, to: $0.baseAddress!, count: values.count, scale: scale, zeroPoint: zeroPoint)
      }
    }
    XCTAssertEqual(output, values.map { Float(Double(scale) * Double(Int($0) - zeroPoint)) })
  }

  func testPerTensor() {
    checkPerTensor(Int8.self, seed: 110)
    checkPerTensor(UInt8.self, seed: 111)
    checkPerTensor(Int16.self, seed: 112)
  }

  func testPerChannelOnEveryAxis() {
    var generator = SeededGenerator(seed: 113)
    for _ in 0..<50 {
      let shape = randomShape(rank: Int.random(in: 1...4, using: &generator), extents: 1...4, using: &generator)
      let axis = Int.random(in: 0..<shape.count, using: &generator)
      let scales = (0..<shape[axis]).map { _ in Float.random(in: 1e-3...1, using: &generator) }
      let zeroPoints = Bool.random(using: &generator)
        ? [Int.random(in: -5...5, using: &generator)] : scales.map { _ in Int.random(in: -5...5, using: &generator) }
      let values = (0..<shape.reduce(1, *)).map { _ in Int8.random(in: .min ... .max, using: &generator) }
      var output = [Float](repeating: 0, count: values.count)
      values.withUnsafeBytes { input in
        output.withUnsafeMutableBufferPointer {
          dequantizePerChannel(
            input.baseAddress!, Int8.self, to: $0.baseAddress!, shape: shape, axis: axis, scales: scales, zeroPoints: zeroPoints)
        }
      }
      let expected = allIndices(shape).enumerated().map { flat, index -> Float in
        let channel = index[axis]
        let zero = zeroPoints.count == 1 ? zeroPoints[0] : zeroPoints[channel]
        return scales[channel] * Float(Int(values[flat]) - zero)
      }
      XCTAssertEqual(output, expected, "shape \(shape) axis \(axis)")
    }
  }
}
