import XCTest

import TFLiteLinearAlgebra

/// The pixel-lane kernels of int8 1×1 convolutions into 1–4 channels (PixelLaneKernelGenerator.swift):
/// which shapes have one, and every supported shape's kernel (through `PixelLanePointwise`, whole
/// blocks and a partial last one) against a plain loop over the unsigned-form input with the
/// scalar rescale (`QuantizedMultiplier.apply`), every requantization form, both roundings,
/// per-channel and shared multipliers, nothing written past the output.
final class GeneratedPixelLaneKernelTests: XCTestCase {
  /// The shapes with a kernel: a depth that is a multiple of 4 up to 32 whose quads, after at
  /// most two deinterleaving stages (powers of two), each gather from two adjacent vectors, within
  /// the registers (three channels repeat every three vectors: three sets of weight vectors).
  func testSupportedShapes() {
    let supported = (1...5).map { outputs in
      (1...40).filter { PixelLaneKernelGenerator.supports(outputs: outputs, depth: $0) }
    }
    XCTAssertEqual(supported[0], [4, 8, 16, 32])
    XCTAssertEqual(supported[1], [4, 8, 12, 16, 24, 32])
    XCTAssertEqual(supported[2], [4, 8, 12, 16])
    XCTAssertEqual(supported[3], [4, 8, 12, 16, 20, 24, 32])
    XCTAssertEqual(supported[4], [])
    XCTAssertThrowsError(try PixelLaneKernelGenerator.code(outputs: 1, depth: 12, form: .complete))
    XCTAssertThrowsError(try PixelLaneKernelGenerator.code(outputs: 3, depth: 24, form: .complete))
    XCTAssertThrowsError(try PixelLaneKernelGenerator.code(outputs: 2, depth: 6, form: .complete))
    XCTAssertNoThrow(try PixelLaneKernelGenerator.code(outputs: 3, depth: 16, form: .complete))
  }

  /// Lane ℓ of output vector j gathers quad d of pixel (16j + ℓ) / N: the indices and weight
  /// vectors of N = 3, K = 8 (whose channels repeat every three vectors, no stages) from first
  /// principles, and of N = 1, K = 16, whose one stage puts dword 2i of the block in vectors 0–1
  /// and 2i + 1 in vectors 2–3.
  func testIndicesAndWeightVectorsOfThreeChannels() {
    let indices = PixelLaneKernelGenerator.indices(outputs: 3, depth: 8)
    XCTAssertEqual(indices.count, (3 * 2 + 2) * 16)
    // The stages' even and odd dwords of two vectors.
    let evens: [Int32] = (0..<16).map { Int32(2 * $0) }
    let odds: [Int32] = (0..<16).map { Int32(2 * $0 + 1) }
    XCTAssertEqual(Array(indices[96...]), evens + odds)
    // Vector 1, quad 1: lanes 0…15 are bytes 16…31, pixels 5…10, dwords 11…21 (first vector 0).
    XCTAssertEqual(Array(indices[48..<64]), (16..<32).map { (byte: Int) -> Int32 in Int32(byte / 3 * 2 + 1) })
    // Vector 2, quad 0: pixels 10…15, dwords 20…30, read from vectors 1 and 2 (indices from 16 on).
    XCTAssertEqual(Array(indices[64..<80]), (32..<48).map { (byte: Int) -> Int32 in Int32(byte / 3 * 2 - 16) })
    XCTAssertEqual(PixelLaneKernelGenerator.period(outputs: 3), 3)
    let weights = PixelLaneKernelGenerator.weightVectors(outputs: 3, depth: 8) { Int8($0 * 10 + $1) }
    XCTAssertEqual(weights.count, 3 * 2 * 64)
    // Record 1, quad 1, lane 2: channel (16 + 2) mod 3 = 0, depths 4…7.
    XCTAssertEqual(Array(weights[(1 * 2 + 1) * 64 + 8..<(1 * 2 + 1) * 64 + 12]), [4, 5, 6, 7])
    XCTAssertEqual(PixelLaneKernelGenerator.channel(outputs: 3, record: 2, lane: 5), (32 + 5) % 3)
    // N = 1, K = 16: quad d of pixel p is dword 4p + d; after the stage, even dwords 4p + d (d = 0, 2)
    // sit at place 2p + d / 2 of vectors 0–1, odd ones (d = 1, 3) at 2p + d / 2 of vectors 2–3
    // (32 + … less the first vector's 32): each gather reads places 2p + d / 2 from its pair.
    let single = PixelLaneKernelGenerator.indices(outputs: 1, depth: 16)
    XCTAssertEqual(single.count, (4 + 2) * 16)
    for quad in 0..<4 {
      let places: [Int32] = (0..<16).map { Int32(2 * $0 + quad / 2) }
      XCTAssertEqual(Array(single[16 * quad..<16 * quad + 16]), places, "quad \(quad)")
    }
  }

  /// Every supported shape's kernel against the plain loop: 1–70 pixels (whole blocks, a partial
  /// last block, fewer than one block), random biases, multipliers (per channel or shared; some
  /// only dividing, so the form without the left shift runs too), zero points and clamps.
  func testEverySupportedShapeMatchesPlainLoop() throws {
    if let avxVNNI = GeneratedDotProductKernels.kernels(for: .avxVNNI) {
      XCTAssertNil(avxVNNI.pixelLanes, "AVX-VNNI has no pixel-lane kernels")
    }
    guard let dotProducts = GeneratedDotProductKernels.kernels(for: .avx512VNNI) else { return }
    var random = SeededGenerator(seed: 41)
    var formsRun = Set<Int>()
    var trial = 0
    for outputs in 1...PixelLaneKernelGenerator.maximumOutputs {
      for depth in stride(from: 4, through: PixelLaneKernelGenerator.maximumDepth, by: 4)
      where PixelLaneKernelGenerator.supports(outputs: outputs, depth: depth) {
        for pixels in [1, 15, 16, 17, 48, 70] {
          trial += 1
          let rounding: RoundingPolicy = trial % 2 == 0 ? .doubleRounding : .singleRounding
          // Channel 0 shifts left (a multiplier above one) unless the trial only divides.
          let dividesOnly = trial % 3 == 0
          let shared = trial % 4 == 0
          func multiplier(_ channel: Int) -> QuantizedMultiplier {
            QuantizedMultiplier(
              multiplier: Int32.random(in: (1 << 30)...(.max), using: &random),
              shift: channel == 0 && !dividesOnly ? 1 : random.int(-16 ... -8))
          }
          let first = multiplier(0)
          let multipliers = (0..<outputs).map { shared ? first : multiplier($0) }
          let bias = (0..<outputs).map { _ in Int32(random.int(-40000...40000)) }
          let zeroPoint = Int32(random.int(-128...127))
          let clamp: ClosedRange<Int32> = trial % 5 == 0 ? -128...127 : max(zeroPoint, -100)...127
          let weights = (0..<outputs * depth).map { _ in Int8(random.int(-127...127)) }
          let input = (0..<pixels * depth).map { _ in Int8(random.int(-128...127)) }
          let constants = IntegerChannelConstants(
            groups: 1, groupChannels: outputs, multipliers: multipliers, rounding: rounding, outputZeroPoint: zeroPoint,
            clamp: clamp
          ) { bias[$0] }
          let epilogue = constants.epilogue(group: 0)
          formsRun.insert(epilogue.form(storing: Int8.self).index)
          let convolution = try XCTUnwrap(
            weights.withUnsafeBufferPointer {
              PixelLanePointwise(
                dotProducts: dotProducts, outputs: outputs, depth: depth, weights: $0.baseAddress!, epilogue: epilogue,
                multipliers: multipliers, rounding: rounding)
            })
          let guardBytes = 64
          var output = [Int8](repeating: 0x5A, count: pixels * outputs + guardBytes)
          let ran = input.withUnsafeBufferPointer { source in
            output.withUnsafeMutableBufferPointer {
              convolution.run(input: source.baseAddress!, output: $0.baseAddress!, pixels: pixels)
            }
          }
          XCTAssertTrue(ran, "the kernel maps")
          var expected: [Int8] = []
          for pixel in 0..<pixels {
            for channel in 0..<outputs {
              var sum = bias[channel]
              for k in 0..<depth {
                let unsigned = Int32(input[pixel * depth + k]) + 128
                sum &+= unsigned * Int32(weights[channel * depth + k])
              }
              let scaled = multipliers[channel].apply(sum, rounding: rounding) &+ zeroPoint
              expected.append(Int8(min(max(scaled, clamp.lowerBound), clamp.upperBound)))
            }
          }
          let label = "\(pixels) pixels × \(depth) → \(outputs), \(rounding), shared \(shared)"
          XCTAssertEqual(Array(output[..<(pixels * outputs)]), expected, label)
          XCTAssertEqual(Array(output[(pixels * outputs)...]), [Int8](repeating: 0x5A, count: guardBytes), label)
        }
      }
    }
    XCTAssertEqual(formsRun, [0, 1, 2, 3], "every requantization form ran")
  }
}
