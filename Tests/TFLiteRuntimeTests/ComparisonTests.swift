import XCTest
@testable import TFLiteRuntime

final class ComparisonTests: XCTestCase {
  func compare<Scalar: OrderedLaneScalar, Kind: ComparisonKind>(
    _ kind: Kind.Type, _ lhs: [Scalar], _ lhsShape: [Int], _ rhs: [Scalar], _ rhsShape: [Int],
    _ expected: (Scalar, Scalar) -> Bool
  ) throws {
    let (output, shape) = try runBinary(ComparisonOperation<Scalar, Kind>(), lhs, lhsShape, rhs, rhsShape, chunks: 2)
    let reference = scalarBroadcast(lhs, lhsShape, rhs, rhsShape, outputShape: shape) { expected($0, $1) ? UInt8(1) : 0 }
    XCTAssertEqual(output, reference, "\(Kind.operatorName) \(Scalar.self)")
  }

  func testComparisonsOfEveryTypeMatchScalarSwift() throws {
    var generator = SeededGenerator(seed: 15)
    for (lhsShape, rhsShape) in ElementwiseBinaryTests.shapePairs where !lhsShape.contains(0) {
      let lhsCount = max(lhsShape.reduce(1, *), 1), rhsCount = max(rhsShape.reduce(1, *), 1)
      let floatsL = generator.floats(lhsCount, in: -4...4).map { $0.rounded() }, floatsR = generator.floats(rhsCount, in: -4...4).map { $0.rounded() }
      try compare(EqualComparison.self, floatsL, lhsShape, floatsR, rhsShape, ==)
      try compare(NotEqualComparison.self, floatsL, lhsShape, floatsR, rhsShape, !=)
      try compare(NotEqualComparison.self, [Float.nan] + floatsL.dropFirst(), lhsShape, floatsR, rhsShape, !=)
      try compare(LessComparison.self, floatsL, lhsShape, floatsR, rhsShape, <)
      try compare(LessEqualComparison.self, floatsL, lhsShape, floatsR, rhsShape, <=)
      try compare(GreaterComparison.self, floatsL, lhsShape, floatsR, rhsShape, >)
      try compare(GreaterEqualComparison.self, floatsL, lhsShape, floatsR, rhsShape, >=)
      let intsL: [Int64] = generator.integers(lhsCount, in: -2...2), intsR: [Int64] = generator.integers(rhsCount, in: -2...2)
      try compare(LessComparison.self, intsL, lhsShape, intsR, rhsShape, <)
      let bytesL: [UInt8] = generator.integers(lhsCount, in: 0...1), bytesR: [UInt8] = generator.integers(rhsCount, in: 0...1)
      try compare(EqualComparison.self, bytesL, lhsShape, bytesR, rhsShape, ==)
      let mediumL: [Int32] = generator.integers(lhsCount, in: -2...2), mediumR: [Int32] = generator.integers(rhsCount, in: -2...2)
      try compare(GreaterEqualComparison.self, mediumL, lhsShape, mediumR, rhsShape, >=)
      let shortL: [Int16] = generator.integers(lhsCount, in: -2...2), shortR: [Int16] = generator.integers(rhsCount, in: -2...2)
      try compare(NotEqualComparison.self, shortL, lhsShape, shortR, rhsShape, !=)
      let signedBytesL: [Int8] = generator.integers(lhsCount, in: -2...2), signedBytesR: [Int8] = generator.integers(rhsCount, in: -2...2)
      try compare(GreaterComparison.self, signedBytesL, lhsShape, signedBytesR, rhsShape, >)
      try compare(LessEqualComparison.self, bytesL, lhsShape, bytesR, rhsShape, <=)
    }
  }

  func testLogicalOperatorsTreatNonZeroAsTrue() throws {
    let lhs: [UInt8] = [0, 0, 1, 1, 2, 0] + [UInt8](repeating: 1, count: 20)
    let rhs: [UInt8] = [0, 1, 0, 1, 1, 7] + [UInt8](repeating: 0, count: 20)
    let count = lhs.count
    XCTAssertEqual(try runBinary(LogicalAndOperation(), lhs, [count], rhs, [count]).values, zip(lhs, rhs).map { $0 != 0 && $1 != 0 ? 1 : 0 })
    XCTAssertEqual(try runBinary(LogicalOrOperation(), lhs, [count], rhs, [count]).values, zip(lhs, rhs).map { $0 != 0 || $1 != 0 ? 1 : 0 })
    XCTAssertEqual(runUnary(LogicalNotOperation(), lhs), lhs.map { $0 == 0 ? 1 : 0 })
  }
}
