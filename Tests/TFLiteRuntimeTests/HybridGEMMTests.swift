import TFLiteFormat
import TFLiteLinearAlgebra
import XCTest

@testable import TFLiteRuntime

/// The 8-bit GEMM of the hybrid CONV_2D and FULLY_CONNECTED kernels: `DotProductSums` (Swift loop
/// and every generated instruction set this machine runs) against sums from first principles, and
/// the kernels on random shapes whose inputs quantize exactly (so the expected floats follow from
/// integer convolutions), through both routes and with one and two threads. Matching LiteRT is
/// `HybridConformanceTests`' job.
final class HybridGEMMTests: XCTestCase {
  /// The Swift loop and every generated route this machine runs.
  private var routes: [DotProductSums] {
    [DotProductSums(generated: nil)]
      + DotProductISA.allCases.compactMap { GeneratedDotProductKernels.kernels(for: $0) }.map {
        DotProductSums(generated: $0)
      }
  }

  /// Random rows, columns (edge panels), depths (0, not a multiple of four, long), A rows wider than
  /// the depth with random bytes past it (they meet zero weights), extreme bytes.
  func testSumsMatchFirstPrinciplesOnEveryRoute() throws {
    var random = SeededGenerator(seed: 912)
    for route in routes {
      for trial in 0..<40 {
        let rows = random.int(1...23)
        let columns = random.int(1...37)
        let depth = trial % 8 == 0 ? random.int(300...700) : random.int(0...41)
        let lda = QuadPanelMatrices.paddedDepth(depth) + random.int(0...5)
        let extremes = trial % 5 == 0
        let a = (0..<rows * lda).map { _ in extremes ? UInt8(255) : UInt8.random(in: 0...255, using: &random) }
        let weights = (0..<depth * columns).map { _ in extremes ? Int32(-128) : Int32.random(in: -128...127, using: &random) }
        let packed = try XCTUnwrap(weights.withUnsafeBufferPointer {
          QuadPanelMatrices(
            $0.baseAddress!, sourceStride: 0, count: 1, layout: .depthMajor(columns: columns), depth: depth, columns: columns)
        })
        let width = GEMMTile.columns
        for panel in 0..<PanelPacking.panelCount(columns: columns) {
          var c = [Int32](repeating: 0x5A5A_5A5A, count: rows * width)
          a.withUnsafeBufferPointer { a in
            c.withUnsafeMutableBufferPointer { c in
              route.sums(
                a: a.baseAddress!, lda: lda, rowCount: rows, b: packed.matrix(0) + panel * packed.paddedDepth * width,
                steps: packed.paddedDepth / 4, c: c.baseAddress!, ldc: width)
            }
          }
          for row in 0..<rows {
            for lane in 0..<width {
              let column = panel * width + lane
              var expected: Int32 = 0
              if column < columns {
                for k in 0..<depth { expected &+= Int32(a[row * lda + k]) &* weights[k * columns + column] }
              }
              XCTAssertEqual(
                c[row * width + lane], expected,
                "\(route.generatedLevel ?? "Swift") rows \(rows) depth \(depth) row \(row) column \(column)")
            }
          }
        }
      }
    }
  }

  /// One random CONV_2D: its integer inputs quantize exactly (scale 1) and its weight scales are
  /// powers of two, so every output is the integer convolution times the channel's scale plus the
  /// bias, exact in Float.
  private struct ConvolutionCase {
    var batch, height, width, channels, groups, outputChannels, filterHeight, filterWidth: Int
    var strideH, strideW, dilationH, dilationW: Int
    var same: Bool
    var perChannel: Bool
    var relu: Bool

    init(_ random: inout SeededGenerator) {
      batch = random.int(1...2)
      groups = random.int(0...3) == 0 ? 2 : 1
      channels = groups * random.int(1...13)
      // Now and then past four panels: the generated sums tiles span up to four.
      outputChannels = groups * (random.int(0...3) == 0 ? random.int(40...80) : random.int(1...21))
      height = random.int(1...9)
      width = random.int(2...9)
      filterHeight = random.int(1...3)
      filterWidth = random.int(1...3)
      strideH = random.int(1...2)
      strideW = random.int(1...2)
      dilationH = random.int(1...2)
      dilationW = random.int(1...2)
      same = random.int(0...1) == 1
      perChannel = groups > 1 || random.int(0...1) == 1
      relu = random.int(0...1) == 1
      if random.int(0...3) == 0 {  // a 1×1 stride-1 filter, read in place
        (filterHeight, filterWidth, strideH, strideW, same) = (1, 1, 1, 1, false)
      }
      if random.int(0...4) == 0 {  // a thin, wide layer (7×7, many channels): several threads cut its channels
        (batch, height, width, same, dilationH, dilationW) = (1, 7, 7, true, 1, 1)
        channels = groups * random.int(24...48)
        outputChannels = groups * random.int(100...200)
      }
    }

    func outputSize(_ input: Int, _ filter: Int, _ stride: Int, _ dilation: Int) -> (size: Int, before: Int) {
      let effective = (filter - 1) * dilation + 1
      if same {
        let size = (input + stride - 1) / stride
        return (size, max((size - 1) * stride + effective - input, 0) / 2)
      }
      return (input >= effective ? (input - effective) / stride + 1 : 0, 0)
    }
  }

  /// Inputs whose range quantizes exactly: symmetric −127...127 (with both ends), asymmetric
  /// −64...191 (scale 1, zero point −64).
  private func exactInput(count: Int, asymmetric: Bool, _ random: inout SeededGenerator) -> [Float] {
    let range: ClosedRange<Int> = asymmetric ? -64...191 : -127...127
    if count == 1 { return [Float(range.upperBound)] }
    var values = (0..<count).map { _ in Float(random.int(range)) }
    if count >= 2 {
      values[random.int(0...(count / 2 - 1))] = Float(range.lowerBound)
      values[random.int((count / 2)...(count - 1))] = Float(range.upperBound)
    }
    return values
  }

  func testConvolutionMatchesIntegerConvolutionOnEveryRouteAndThreadCount() throws {
    var random = SeededGenerator(seed: 4711)
    for _ in 0..<30 {
      let shape = ConvolutionCase(&random)
      let (outputHeight, padTop) = shape.outputSize(shape.height, shape.filterHeight, shape.strideH, shape.dilationH)
      let (outputWidth, padLeft) = shape.outputSize(shape.width, shape.filterWidth, shape.strideW, shape.dilationW)
      guard outputHeight > 0, outputWidth > 0 else { continue }
      let groupChannels = shape.channels / shape.groups
      let groupOutputs = shape.outputChannels / shape.groups
      let imageSize = shape.height * shape.width * shape.channels
      // Each image gets its own exact range (the kernel quantizes image by image).
      let input = (0..<shape.batch).flatMap { _ in exactInput(count: imageSize, asymmetric: shape.perChannel, &random) }
      let filterCount = shape.outputChannels * shape.filterHeight * shape.filterWidth * groupChannels
      let filter = (0..<filterCount).map { _ in Int8.random(in: -127...127, using: &random) }
      let scales: [Float] =
        shape.perChannel ? (0..<shape.outputChannels).map { [0.5, 0.25, 1, 2][$0 % 4] } : [0.5]
      let bias = (0..<shape.outputChannels).map { _ in Float(random.int(-40...40)) / 4 }

      var expected = [Float]()
      for image in 0..<shape.batch {
        for y in 0..<outputHeight {
          for x in 0..<outputWidth {
            for channel in 0..<shape.outputChannels {
              let group = channel / groupOutputs
              var sum = 0
              for ky in 0..<shape.filterHeight {
                for kx in 0..<shape.filterWidth {
                  let inputY = y * shape.strideH - padTop + ky * shape.dilationH
                  let inputX = x * shape.strideW - padLeft + kx * shape.dilationW
                  guard (0..<shape.height).contains(inputY), (0..<shape.width).contains(inputX) else { continue }
                  for c in 0..<groupChannels {
                    let value = input[((image * shape.height + inputY) * shape.width + inputX) * shape.channels + group * groupChannels + c]
                    let weight = filter[((channel * shape.filterHeight + ky) * shape.filterWidth + kx) * groupChannels + c]
                    sum += Int(value) * Int(weight)
                  }
                }
              }
              let value = Float(sum) * scales[shape.perChannel ? channel : 0] + bias[channel]
              expected.append(shape.relu ? max(value, 0) : value)
            }
          }
        }
      }

      for usesGenerated in [true, false] {
        for threads in 1...4 {
          let node = KernelHarness.node(
            "CONV_2D",
            [
              KernelHarness.floatTensor(0, [shape.batch, shape.height, shape.width, shape.channels], input),
              KernelHarness.quantizedTensor(
                1, "filter", .int8, [shape.outputChannels, shape.filterHeight, shape.filterWidth, groupChannels], filter,
                scales: scales, zeroPoints: [Int](repeating: 0, count: scales.count), constant: true),
              KernelHarness.floatTensor(2, [shape.outputChannels], bias, constant: true),
            ],
            KernelHarness.outputTensor(3),
            .conv2DOptions(
              Conv2DOptions(
                padding: shape.same ? .same : .valid, strideW: Int32(shape.strideW), strideH: Int32(shape.strideH),
                fusedActivationFunction: shape.relu ? .relu : .none, dilationWFactor: Int32(shape.dilationW),
                dilationHFactor: Int32(shape.dilationH))))
          let result = try GeneratedFloatKernels.$areAllowed.withValue(usesGenerated) {
            try KernelHarness.run(node, threads: threads)
          }
          XCTAssertEqual(result.shape, [shape.batch, outputHeight, outputWidth, shape.outputChannels])
          XCTAssertEqual(result.values, expected, "\(shape), generated \(usesGenerated), \(threads) threads")
        }
      }
    }
  }

  /// Hybrid DEPTHWISE_CONV_2D on random shapes (depth multipliers 1–3, channel counts on both sides
  /// of 16-lane blocks, strides, dilations, SAME and VALID, one and two images with their own
  /// ranges), exact as above: each image quantizes asymmetrically with scale 1 and zero point −64,
  /// so every output is Σ value · weight over the taps inside the input times the channel's scale
  /// plus the bias.
  func testDepthwiseMatchesIntegerConvolutionOnRandomShapesAndThreadCounts() throws {
    var random = SeededGenerator(seed: 1234)
    for trial in 0..<40 {
      var shape = ConvolutionCase(&random)
      let multiplier = random.int(1...3)
      shape.channels = [1, 3, 8, 16, 17, 33][random.int(0...5)]
      if trial % 3 == 0 { (shape.filterHeight, shape.filterWidth) = (3, 3) }
      if trial % 8 == 7 {  // 7 rows, many channels: two and three threads cut each row's channel blocks
        (shape.batch, shape.height, shape.width, shape.same) = (1, 7, 7, true)
        (shape.strideH, shape.strideW, shape.dilationH, shape.dilationW) = (1, 1, 1, 1)
        (shape.filterHeight, shape.filterWidth) = (3, 3)
        shape.channels = random.int(470...600)
      }
      shape.outputChannels = shape.channels * multiplier
      let (outputHeight, padTop) = shape.outputSize(shape.height, shape.filterHeight, shape.strideH, shape.dilationH)
      let (outputWidth, padLeft) = shape.outputSize(shape.width, shape.filterWidth, shape.strideW, shape.dilationW)
      guard outputHeight > 0, outputWidth > 0 else { continue }
      let imageSize = shape.height * shape.width * shape.channels
      let input = (0..<shape.batch).flatMap { _ in exactInput(count: imageSize, asymmetric: true, &random) }
      let taps = shape.filterHeight * shape.filterWidth
      let filter = (0..<taps * shape.outputChannels).map { _ in Int8.random(in: -127...127, using: &random) }
      let scales: [Float] =
        shape.perChannel ? (0..<shape.outputChannels).map { [0.5, 0.25, 1, 2][$0 % 4] } : [0.5]
      let bias = (0..<shape.outputChannels).map { _ in Float(random.int(-40...40)) / 4 }
      var expected = [Float]()
      for image in 0..<shape.batch {
        for y in 0..<outputHeight {
          for x in 0..<outputWidth {
            for channel in 0..<shape.outputChannels {
              var sum = 0
              for ky in 0..<shape.filterHeight {
                for kx in 0..<shape.filterWidth {
                  let inputY = y * shape.strideH - padTop + ky * shape.dilationH
                  let inputX = x * shape.strideW - padLeft + kx * shape.dilationW
                  guard (0..<shape.height).contains(inputY), (0..<shape.width).contains(inputX) else { continue }
                  let value = input[
                    ((image * shape.height + inputY) * shape.width + inputX) * shape.channels + channel / multiplier]
                  sum += Int(value) * Int(filter[(ky * shape.filterWidth + kx) * shape.outputChannels + channel])
                }
              }
              let value = Float(sum) * scales[shape.perChannel ? channel : 0] + bias[channel]
              expected.append(shape.relu ? max(value, 0) : value)
            }
          }
        }
      }
      for threads in [1, 2, 3] {
        let node = KernelHarness.node(
          "DEPTHWISE_CONV_2D",
          [
            KernelHarness.floatTensor(0, [shape.batch, shape.height, shape.width, shape.channels], input),
            KernelHarness.quantizedTensor(
              1, "filter", .int8, [1, shape.filterHeight, shape.filterWidth, shape.outputChannels], filter,
              scales: scales, zeroPoints: [Int](repeating: 0, count: scales.count), axis: 3, constant: true),
            KernelHarness.floatTensor(2, [shape.outputChannels], bias, constant: true),
          ],
          KernelHarness.outputTensor(3),
          .depthwiseConv2DOptions(
            DepthwiseConv2DOptions(
              padding: shape.same ? .same : .valid, strideW: Int32(shape.strideW), strideH: Int32(shape.strideH),
              depthMultiplier: Int32(multiplier), fusedActivationFunction: shape.relu ? .relu : .none,
              dilationWFactor: Int32(shape.dilationW), dilationHFactor: Int32(shape.dilationH))))
        let result = try KernelHarness.run(node, threads: threads)
        XCTAssertEqual(result.shape, [shape.batch, outputHeight, outputWidth, shape.outputChannels])
        XCTAssertEqual(result.values, expected, "trial \(trial): \(shape), multiplier \(multiplier), \(threads) threads")
      }
    }
  }

  /// FULLY_CONNECTED over more rows than one work item holds (60) and more channels than one item's
  /// panels (64), symmetric and asymmetric inputs, exact as above; rows quantize one by one.
  func testFullyConnectedMatchesIntegerProductOnEveryRouteAndThreadCount() throws {
    var random = SeededGenerator(seed: 31)
    for (rows, depth, units, asymmetric) in [(1, 37, 70, false), (67, 20, 17, true), (3, 130, 150, true), (2, 1, 1, false)] {
      let input = (0..<rows).flatMap { _ in exactInput(count: depth, asymmetric: asymmetric, &random) }
      let weights = (0..<units * depth).map { _ in Int8.random(in: -127...127, using: &random) }
      let bias = (0..<units).map { _ in Float(random.int(-40...40)) / 4 }
      var expected = [Float]()
      for row in 0..<rows {
        for unit in 0..<units {
          var sum = 0
          for k in 0..<depth { sum += Int(input[row * depth + k]) * Int(weights[unit * depth + k]) }
          expected.append(Float(sum) * 0.25 + bias[unit])
        }
      }
      for usesGenerated in [true, false] {
        for threads in [1, 2] {
          let node = KernelHarness.node(
            "FULLY_CONNECTED",
            [
              KernelHarness.floatTensor(0, [rows, depth], input),
              KernelHarness.quantizedTensor(
                1, "weights", .int8, [units, depth], weights, scales: [0.25], zeroPoints: [0], constant: true),
              KernelHarness.floatTensor(2, [units], bias, constant: true),
            ],
            KernelHarness.outputTensor(3),
            .fullyConnectedOptions(FullyConnectedOptions(asymmetricQuantizeInputs: asymmetric)))
          let result = try GeneratedFloatKernels.$areAllowed.withValue(usesGenerated) {
            try KernelHarness.run(node, threads: threads)
          }
          XCTAssertEqual(result.shape, [rows, units])
          XCTAssertEqual(result.values, expected, "rows \(rows) depth \(depth), generated \(usesGenerated), \(threads) threads")
        }
      }
    }
  }

  /// An input of zeros only gives the bias (through the activation), as LiteRT, which skips the
  /// product for it.
  func testFullyConnectedOfZerosGivesTheBias() throws {
    let bias: [Float] = [1.5, -2, 0.75, 0.25, -7]
    for relu in [false, true] {
      let node = KernelHarness.node(
        "FULLY_CONNECTED",
        [
          KernelHarness.floatTensor(0, [2, 6], [Float](repeating: 0, count: 12)),
          KernelHarness.quantizedTensor(
            1, "weights", .int8, [5, 6], (0..<30).map { Int8($0 - 15) }, scales: [0.1], zeroPoints: [0], constant: true),
          KernelHarness.floatTensor(2, [5], bias, constant: true),
        ],
        KernelHarness.outputTensor(3), .fullyConnectedOptions(FullyConnectedOptions(fusedActivationFunction: relu ? .relu : .none)))
      let result = try KernelHarness.run(node, threads: 1)
      let expected = bias.map { relu ? max($0, 0) : $0 }
      XCTAssertEqual(result.values, expected + expected, "relu \(relu)")
    }
  }
}
