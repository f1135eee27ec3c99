import XCTest

@testable import TFLiteRuntime

/// The reference kernels refuse arguments that do not fit with a thrown ``Reference/Error`` naming
/// the problem, and compute the small cases one can check by hand.
final class ReferenceKernelArgumentTests: XCTestCase {
  private func tensor(_ shape: [Int], _ values: [Float]) throws -> Reference.Tensor<Float> {
    try Reference.Tensor(shape: shape, values: values)
  }

  private func assertThrows<T>(_ fragment: String, _ body: () throws -> T, line: UInt = #line) {
    do {
      _ = try body()
      XCTFail("accepted; expected an error about '\(fragment)'", line: line)
    } catch {
      XCTAssertTrue("\(error)".contains(fragment), "\(error) does not mention '\(fragment)'", line: line)
    }
  }

  func testMismatchedArgumentsThrow() throws {
    let window = Reference.WindowParameters(strideHeight: 1, strideWidth: 1, padding: .same)
    let image = try tensor([1, 2, 2, 1], [1, 2, 3, 4])
    assertThrows("needs 4 values") { try Reference.Tensor(shape: [2, 2], values: [Float](repeating: 0, count: 3)) }
    assertThrows("bias has 3 values") {
      try Reference.conv2D(
        input: image, filter: tensor([2, 1, 1, 1], [1, 1]), bias: [0, 0, 0], window: window, activation: .none)
    }
    assertThrows("not a positive multiple") {
      try Reference.conv2D(
        input: image, filter: tensor([1, 1, 1, 2], [1, 1]), bias: nil, window: window, activation: .none)
    }
    assertThrows("stride ≥ 1") {
      try Reference.maxPool2D(
        input: image,
        parameters: Reference.PoolParameters(
          filterHeight: 1, filterWidth: 1,
          window: Reference.WindowParameters(strideHeight: 0, strideWidth: 1, padding: .valid)),
        activation: .none)
    }
    assertThrows("do not broadcast") { try Reference.add(image, tensor([1, 3, 1, 1], [1, 2, 3]), activation: .none) }
    assertThrows("rows of 3 values") {
      try Reference.fullyConnected(
        input: tensor([2, 2], [1, 2, 3, 4]), weights: tensor([1, 3], [1, 1, 1]), bias: nil, keepNumDims: false,
        activation: .none)
    }
    assertThrows("2 scales") {
      try Reference.fullyConnected(
        input: Reference.Tensor(shape: [1, 1], values: [Int8(1)]),
        weights: Reference.Tensor(shape: [3, 1], values: [Int8](repeating: 1, count: 3)),
        bias: nil, keepNumDims: false,
        quantization: Reference.WeightedQuantization(
          input: .init(scale: 1, zeroPoint: 0), weights: .init(scales: [1, 1], zeroPoints: [0]),
          output: .init(scale: 1, zeroPoint: 0), activation: .none, accumulation: .fullyConnected))
    }
  }

  /// Values worked out by hand: a 2×2 SAME convolution (padding after), a clamped average pool and
  /// a broadcast ADD.
  func testSmallCasesByHand() throws {
    let image = try tensor([1, 2, 2, 1], [1, 2, 3, 4])
    // SAME with a 2×2 filter on 2×2 pads one row and one column after the data.
    let convolved = try Reference.conv2D(
      input: image, filter: tensor([1, 2, 2, 1], [1, 10, 100, 1000]), bias: [0.5],
      window: Reference.WindowParameters(strideHeight: 1, strideWidth: 1, padding: .same), activation: .none)
    XCTAssertEqual(convolved.shape, [1, 2, 2, 1])
    XCTAssertEqual(Array(convolved.values), [4321.5, 402.5, 43.5, 4.5] as [Float])  // 1·1 + 2·10 + 3·100 + 4·1000 + 0.5, ...
    let pooled = try Reference.averagePool2D(
      input: image,
      parameters: Reference.PoolParameters(
        filterHeight: 2, filterWidth: 2,
        window: Reference.WindowParameters(strideHeight: 1, strideWidth: 1, padding: .same)),
      activation: .reluN1To1)
    XCTAssertEqual(Array(pooled.values), [1, 1, 1, 1])
    let sum = try Reference.add(image, tensor([1, 1, 2, 1], [10, 20]), activation: .none)
    XCTAssertEqual(Array(sum.values), [11, 22, 13, 24])
    // Integer average of −3 and −4 over 2 values: −3.5 rounds away from zero to −4.
    let rounded = try Reference.averagePool2D(
      input: Reference.Tensor(shape: [1, 1, 2, 1], values: [Int8(-3), -4]),
      parameters: Reference.PoolParameters(
        filterHeight: 1, filterWidth: 2,
        window: Reference.WindowParameters(strideHeight: 1, strideWidth: 1, padding: .valid)),
      activation: .none, output: .init(scale: 1, zeroPoint: 0))
    XCTAssertEqual(Array(rounded.values), [-4])
  }

  /// Given `.existing` memory, a kernel writes its output there (the returned tensor is that
  /// memory, nothing is copied) and refuses memory of another shape; a borrowed input is read where
  /// it lies. The output-shape functions give TFLite's sizes: SAME ceil(input / stride), VALID
  /// ceil((input − filter + 1) / stride).
  func testKernelsReadAndWriteTheMemoryTheyAreGiven() throws {
    let memory = UnsafeMutableBufferPointer<Float>.allocate(capacity: 4)
    defer { memory.deallocate() }
    _ = memory.initialize(from: [1, 2, 3, 4] as [Float])
    let image = try Reference.Tensor(shape: [1, 2, 2, 1], borrowing: UnsafeBufferPointer(memory))
    XCTAssertEqual(image.values.baseAddress, UnsafePointer(memory.baseAddress))
    let result = UnsafeMutableBufferPointer<Float>.allocate(capacity: 4)
    defer { result.deallocate() }
    result.initialize(repeating: 0)
    let output = try Reference.MutableTensor(shape: [1, 2, 2, 1], borrowing: result)
    let sum = try Reference.add(image, tensor([1], [10]), activation: .none, into: .existing(output))
    XCTAssertEqual(sum.values.baseAddress, UnsafePointer(result.baseAddress))
    XCTAssertEqual(Array(result), [11, 12, 13, 14])
    let pool = Reference.PoolParameters(
      filterHeight: 2, filterWidth: 2, window: Reference.WindowParameters(strideHeight: 2, strideWidth: 2, padding: .valid))
    assertThrows("the output has shape [1, 2, 2, 1], the operator gives [1, 1, 1, 1]") {
      try Reference.maxPool2D(input: image, parameters: pool, activation: .none, into: .existing(output))
    }
    XCTAssertEqual(try Reference.pool2DOutputShape(input: [1, 5, 7, 3], parameters: pool), [1, 2, 3, 3])
    XCTAssertEqual(
      try Reference.conv2DOutputShape(
        input: [1, 5, 7, 3], filter: [4, 3, 3, 3],
        window: Reference.WindowParameters(strideHeight: 2, strideWidth: 2, padding: .same)),
      [1, 3, 4, 4])
    XCTAssertEqual(try Reference.fullyConnectedOutputShape(input: [2, 3, 4], weights: [5, 4], keepNumDims: true), [2, 3, 5])
    XCTAssertEqual(try Reference.fullyConnectedOutputShape(input: [2, 3, 4], weights: [5, 4], keepNumDims: false), [6, 5])
  }
}
