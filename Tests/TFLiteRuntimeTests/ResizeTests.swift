import TFLiteFormat
import XCTest

@testable import TFLiteRuntime

final class ResizeTests: XCTestCase {
  private let coordinateModes = [(false, false), (true, false), (false, true)]

  /// Nearest-neighbour source index, straight from TFLite's definition.
  private func naiveNearest(_ position: Int, input: Int, output: Int, alignCorners: Bool, halfPixel: Bool) -> Int {
    let scale: Float = alignCorners && output > 1 ? Float(input - 1) / Float(output - 1) : Float(input) / Float(output)
    let coordinate = (Float(position) + (halfPixel ? 0.5 : 0)) * scale
    var index = Int(alignCorners ? coordinate.rounded() : coordinate.rounded(.down))
    index = min(index, input - 1)
    return halfPixel ? max(index, 0) : index
  }

  func testNearestNeighborMatchesNaiveResize() throws {
    var generator = SeededGenerator(seed: 50)
    for _ in 0..<60 {
      let inputShape = [Int.random(in: 1...2, using: &generator)] + randomShape(rank: 3, extents: 1...6, using: &generator)
      let size = [Int.random(in: 1...13, using: &generator), Int.random(in: 1...13, using: &generator)]
      let outputShape = try resizedShape(inputShape: inputShape, size: size, op: "TEST")
      for (alignCorners, halfPixel) in coordinateModes {
        let plan = NearestNeighborResize(
          inputShape: inputShape, outputHeight: size[0], outputWidth: size[1], alignCorners: alignCorners,
          halfPixelCenters: halfPixel)
        let sources = allIndices(outputShape).map { index -> Int? in
          let row = naiveNearest(index[1], input: inputShape[1], output: size[0], alignCorners: alignCorners, halfPixel: halfPixel)
          let column = naiveNearest(index[2], input: inputShape[2], output: size[1], alignCorners: alignCorners, halfPixel: halfPixel)
          return flatPosition([index[0], row, column, index[3]], inputShape)
        }
        for elementSize in movableElementSizes {
          let source = randomBytes(count: inputShape.reduce(1, *), elementSize: elementSize, using: &generator)
          let output = withBuffers(source: source, outputBytes: outputShape.reduce(1, *) * elementSize) { input, output in
            plan.run(from: input, to: output, elementSize: elementSize)
          }
          XCTAssertEqual(output, gatheredBytes(source, elementSize: elementSize, sourceElements: sources))
        }
      }
    }
  }

  /// Bilinear value at one output position, computed in double from the sampling definition.
  private func naiveBilinear(
    _ input: [Float], shape: [Int], index: [Int], size: [Int], alignCorners: Bool, halfPixel: Bool
  ) -> Double {
    func sample(_ position: Int, _ inputSize: Int, _ outputSize: Int) -> (Int, Int, Double) {
      let scale = alignCorners && outputSize > 1 ? Double(inputSize - 1) / Double(outputSize - 1) : Double(inputSize) / Double(outputSize)
      let coordinate = halfPixel ? (Double(position) + 0.5) * scale - 0.5 : Double(position) * scale
      let low = max(Int(coordinate.rounded(.down)), 0)
      let high = min(Int(coordinate.rounded(.up)), inputSize - 1)
      return (low, high, coordinate - Double(low))
    }
    let (top, bottom, dy) = sample(index[1], shape[1], size[0])
    let (left, right, dx) = sample(index[2], shape[2], size[1])
    func value(_ row: Int, _ column: Int) -> Double { Double(input[flatPosition([index[0], row, column, index[3]], shape)]) }
    let upper = value(top, left) * (1 - dx) + value(top, right) * dx
    let lower = value(bottom, left) * (1 - dx) + value(bottom, right) * dx
    return upper * (1 - dy) + lower * dy
  }

  func testBilinearMatchesNaiveResize() throws {
    var generator = SeededGenerator(seed: 51)
    for _ in 0..<50 {
      let inputShape = [Int.random(in: 1...2, using: &generator)] + randomShape(rank: 3, extents: 1...6, using: &generator)
      let size = [Int.random(in: 1...13, using: &generator), Int.random(in: 1...13, using: &generator)]
      let outputShape = try resizedShape(inputShape: inputShape, size: size, op: "TEST")
      let input = (0..<inputShape.reduce(1, *)).map { _ in Float.random(in: -4...4, using: &generator) }
      for (alignCorners, halfPixel) in coordinateModes {
        let plan = BilinearResize(
          inputShape: inputShape, outputHeight: size[0], outputWidth: size[1], alignCorners: alignCorners,
          halfPixelCenters: halfPixel)
        var output = [Float](repeating: .nan, count: outputShape.reduce(1, *))
        input.withUnsafeBufferPointer { input in
          output.withUnsafeMutableBufferPointer { output in
            // Two calls over disjoint row ranges, as the threaded kernel does.
            let rows = outputShape[0] * outputShape[1]
            plan.run(from: input.baseAddress!, to: output.baseAddress!, rows: 0..<(rows / 2))
            plan.run(from: input.baseAddress!, to: output.baseAddress!, rows: (rows / 2)..<rows)
          }
        }
        for (flat, index) in allIndices(outputShape).enumerated() {
          let expected = naiveBilinear(input, shape: inputShape, index: index, size: size, alignCorners: alignCorners, halfPixel: halfPixel)
          XCTAssertEqual(Double(output[flat]), expected, accuracy: 1e-5, "input \(inputShape) size \(size) at \(index)")
        }
      }
    }
  }

  /// LiteRT's reference 8- and 16-bit bilinear value at `index`, written from its
  /// `ResizeBilinearInteger` (int8, int16: 10-bit positions, the four 20-bit products summed in
  /// 64 bits and rounded) and `ResizeBilinear<uint8_t>` (float weights multiplied in turn, plus 0.5,
  /// truncated). The lower tap is kept inside the input, where the reference would read past it.
  private func referenceQuantizedBilinear<Element: FixedWidthInteger>(
    _ input: [Element], shape: [Int], index: [Int], size: [Int], alignCorners: Bool, halfPixel: Bool,
    singleRounding: Bool
  ) -> Element {
    func value(_ row: Int, _ column: Int) -> Element { input[flatPosition([index[0], row, column, index[3]], shape)] }
    if Element.self == UInt8.self {
      func sample(_ position: Int, _ inputSize: Int, _ outputSize: Int) -> (Float, Int, Int) {
        let scale = alignCorners && outputSize > 1 ? Float(inputSize - 1) / Float(outputSize - 1) : Float(inputSize) / Float(outputSize)
        let coordinate = halfPixel ? (Float(position) + 0.5) * scale - 0.5 : Float(position) * scale
        return (coordinate, max(Int(coordinate.rounded(.down)), 0), min(Int(coordinate.rounded(.up)), inputSize - 1))
      }
      let (y, y0, y1) = sample(index[1], shape[1], size[0])
      let (x, x0, x1) = sample(index[2], shape[2], size[1])
      let first = Float(value(y0, x0)) * (1 - (y - Float(y0))) * (1 - (x - Float(x0)))
      let second = Float(value(y1, x0)) * (y - Float(y0)) * (1 - (x - Float(x0)))
      let third = Float(value(y0, x1)) * (1 - (y - Float(y0))) * (x - Float(x0))
      let fourth = Float(value(y1, x1)) * (y - Float(y0)) * (x - Float(x0))
      return Element(truncatingIfNeeded: Int32(first + second + third + fourth + 0.5))
    }
    func sample(_ position: Int, _ inputSize: Int, _ outputSize: Int) -> (Int64, Int, Int) {
      let scale =
        alignCorners && outputSize > 1
        ? (1024 * (inputSize - 1) + (outputSize - 1) / 2) / (outputSize - 1) : (1024 * inputSize + outputSize / 2) / outputSize
      let scaled = halfPixel ? position * scale + scale / 2 - 512 : position * scale
      return (Int64(scaled), min(max(scaled / 1024, 0), inputSize - 1), min((scaled + 1023) / 1024, inputSize - 1))
    }
    let (y, y0, y1) = sample(index[1], shape[1], size[0])
    let (x, x0, x1) = sample(index[2], shape[2], size[1])
    let (dy, dx) = (y - 1024 * Int64(y0), x - 1024 * Int64(x0))
    let sum =
      Int64(value(y0, x0)) * (1024 - dy) * (1024 - dx) + Int64(value(y1, x0)) * dy * (1024 - dx)
      + Int64(value(y0, x1)) * (1024 - dy) * dx + Int64(value(y1, x1)) * dy * dx
    let rounded = singleRounding ? (sum + (1 << 19)) >> 20 : (sum + (sum > 0 ? 1 << 19 : -(1 << 19))) / (1 << 20)
    return Element(truncatingIfNeeded: rounded)
  }

  /// Runs the quantized RESIZE_BILINEAR kernel on `input` and compares every value with the reference.
  private func checkQuantizedBilinear<Element: FixedWidthInteger>(
    _ input: [Element], type: ElementType, shape: [Int], size: [Int], alignCorners: Bool, halfPixel: Bool,
    rounding: RoundingPolicy, threads: Int
  ) throws {
    let node = KernelHarness.node(
      "RESIZE_BILINEAR",
      [
        KernelHarness.quantizedTensor(0, "in", type, shape, input, scales: [0.5], zeroPoints: [0]),
        KernelHarness.int32Tensor(1, size.map { Int32($0) }),
      ],
      KernelHarness.outputTensor(2, type: type),
      .resizeBilinearOptions(ResizeBilinearOptions(alignCorners: alignCorners, halfPixelCenters: halfPixel)))
    let (outputShape, output) = try KernelHarness.run(node, threads: threads, as: Element.self, roundingPolicy: rounding)
    XCTAssertEqual(outputShape, [shape[0], size[0], size[1], shape[3]])
    let expected = allIndices(outputShape).map {
      referenceQuantizedBilinear(
        input, shape: shape, index: $0, size: size, alignCorners: alignCorners, halfPixel: halfPixel,
        singleRounding: rounding == .singleRounding)
    }
    let mismatches = zip(output, expected).filter { $0 != $1 }.count
    XCTAssertEqual(
      mismatches, 0,
      "\(type.name) \(shape) → \(size) align \(alignCorners) half-pixel \(halfPixel) \(rounding) \(threads) threads")
  }

  /// The int8 (two-pass), int16 and uint8 kernels equal LiteRT's reference arithmetic bit for bit on
  /// random shapes (channel counts on and off the 8-lane width, batches, up- and downscaling),
  /// every coordinate mode, both rounding policies, one and two threads; values span each type's range.
  func testQuantizedBilinearMatchesReferenceArithmetic() throws {
    var generator = SeededGenerator(seed: 52)
    let channelCounts = [1, 3, 7, 8, 9, 16, 21]
    for trial in 0..<42 {
      let shape = [
        Int.random(in: 1...3, using: &generator), Int.random(in: 1...9, using: &generator),
        Int.random(in: 1...9, using: &generator), channelCounts[trial % channelCounts.count],
      ]
      let size = [Int.random(in: 1...19, using: &generator), Int.random(in: 1...19, using: &generator)]
      let count = shape.reduce(1, *)
      let int8 = (0..<count).map { _ in Int8.random(in: .min ... .max, using: &generator) }
      let uint8 = (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
      let int16 = (0..<count).map { _ in Int16.random(in: .min ... .max, using: &generator) }
      for (alignCorners, halfPixel) in coordinateModes {
        for rounding in RoundingPolicy.allCases {
          let threads = 1 + (trial + (rounding == .singleRounding ? 1 : 0)) % 2
          try checkQuantizedBilinear(
            int8, type: .int8, shape: shape, size: size, alignCorners: alignCorners, halfPixel: halfPixel,
            rounding: rounding, threads: threads)
          try checkQuantizedBilinear(
            int16, type: .int16, shape: shape, size: size, alignCorners: alignCorners, halfPixel: halfPixel,
            rounding: rounding, threads: threads)
        }
        try checkQuantizedBilinear(
          uint8, type: .uint8, shape: shape, size: size, alignCorners: alignCorners, halfPixel: halfPixel,
          rounding: .doubleRounding, threads: 1 + trial % 2)
      }
    }
  }

  /// Extreme values (every corner −128 or 127) and the upscale of unet_mini_int8 (16×16×8 → 32×32,
  /// half-pixel centers), where the two-pass sums come closest to the Int32 lanes' and rounding's edges.
  func testInt8BilinearExtremesAndUpscale() throws {
    var generator = SeededGenerator(seed: 53)
    for (shape, size) in [([1, 16, 16, 8], [32, 32]), ([2, 5, 7, 24], [11, 3]), ([1, 3, 4, 16], [7, 13])] {
      let count = shape.reduce(1, *)
      let extremes = (0..<count).map { _ in Bool.random(using: &generator) ? Int8.min : Int8.max }
      for (alignCorners, halfPixel) in coordinateModes {
        for rounding in RoundingPolicy.allCases {
          try checkQuantizedBilinear(
            extremes, type: .int8, shape: shape, size: size, alignCorners: alignCorners, halfPixel: halfPixel,
            rounding: rounding, threads: 1)
        }
      }
    }
  }

  /// Resizes whose fractions have few bits (power-of-two upscales with half-pixel centers, 2×
  /// without, align-corners 5 → 9, 2× downscales, unscaled copies) take the Int16 lanes: random
  /// values and extremes, channels 1–40, batches, both rounding policies and one or two threads
  /// equal the reference.
  func testInt8BilinearInInt16LanesMatchesReferenceArithmetic() throws {
    var generator = SeededGenerator(seed: 54)
    // (input height, width, output height, width, align corners, half-pixel, fraction bits of rows + columns)
    let cases = [
      (16, 16, 32, 32, false, true, 4), (4, 6, 16, 12, false, true, 5), (3, 2, 24, 16, false, true, 8),
      (5, 7, 10, 14, false, false, 2), (5, 3, 9, 5, true, false, 2), (2, 9, 32, 9, false, true, 5),
      (6, 8, 3, 4, false, true, 2), (7, 4, 7, 4, false, true, 0),
    ]
    for (trial, (inputHeight, inputWidth, outputHeight, outputWidth, alignCorners, halfPixel, bits)) in cases.enumerated() {
      func axisBits(_ inputSize: Int, _ outputSize: Int) -> Int {
        FixedPointBilinearTap.fractionBits(
          FixedPointBilinearTap.axis(
            inputSize: inputSize, outputSize: outputSize, alignCorners: alignCorners, halfPixelCenters: halfPixel))
      }
      XCTAssertEqual(axisBits(inputHeight, outputHeight) + axisBits(inputWidth, outputWidth), bits)
      let channelCounts = [1, 8, 13, 24, 40, 3, 16, 9]
      for channels in (0..<3).map({ channelCounts[(trial + 3 * $0 + 1) % channelCounts.count] }) {
        let shape = [1 + (trial + channels) % 2, inputHeight, inputWidth, channels]
        let count = shape.reduce(1, *)
        let random = (0..<count).map { _ in Int8.random(in: .min ... .max, using: &generator) }
        let extremes = (0..<count).map { _ in Bool.random(using: &generator) ? Int8.min : Int8.max }
        for rounding in RoundingPolicy.allCases {
          for input in [random, extremes] {
            try checkQuantizedBilinear(
              input, type: .int8, shape: shape, size: [outputHeight, outputWidth], alignCorners: alignCorners,
              halfPixel: halfPixel, rounding: rounding, threads: 1 + channels % 2)
          }
        }
      }
    }
    // 3 → 7 with half-pixel centers needs 10 bits per axis: the Int32 lanes.
    XCTAssertEqual(
      FixedPointBilinearTap.fractionBits(
        FixedPointBilinearTap.axis(inputSize: 3, outputSize: 7, alignCorners: false, halfPixelCenters: true)), 10)
  }

  /// With `alignCorners` and more than 2048 output columns over two input columns, LiteRT's lower
  /// tap of the last column is input column 2, past the input: the kernel keeps it at column 1 and
  /// reads nothing outside the input (the last output column equals the last input column).
  func testAlignCornersLowerTapStaysInsideTheInput() throws {
    let shape = [1, 1, 2, 3]
    let input: [Int8] = [-100, 5, 100, 60, -7, 127]
    let taps = FixedPointBilinearTap.axis(inputSize: 2, outputSize: 2049, alignCorners: true, halfPixelCenters: false)
    XCTAssertEqual(taps.last, FixedPointBilinearTap(lower: 1, upper: 1, fraction: 0))
    XCTAssertTrue(taps.allSatisfy { (0...1).contains($0.lower) && (0...1).contains($0.upper) && (0..<1024).contains($0.fraction) })
    try checkQuantizedBilinear(
      input, type: .int8, shape: shape, size: [1, 2049], alignCorners: true, halfPixel: false, rounding: .doubleRounding,
      threads: 1)
  }

  func testRejectsBadSizes() {
    XCTAssertThrowsError(try resizedShape(inputShape: [1, 2, 2, 1], size: [0, 2], op: "TEST"))
    XCTAssertThrowsError(try resizedShape(inputShape: [1, 2, 2, 1], size: [2], op: "TEST"))
    XCTAssertThrowsError(try resizedShape(inputShape: [2, 2, 1], size: [2, 2], op: "TEST"))
    XCTAssertThrowsError(try resizedShape(inputShape: [1, 2, 2, 1 << 20], size: [1 << 20, 4], op: "TEST"))
  }
}
