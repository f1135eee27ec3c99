import XCTest

import TFLiteLinearAlgebra
@testable import TFLiteRuntime

/// The run-time generated depthwise kernels (`DepthwiseKernelGenerator`), for every instruction set
/// this machine runs: the raw kernels against first-principles sums on random tap tables (integer
/// sums bit-exact, nothing written past the pixels asked for), and whole float convolutions
/// against the double-precision reference and the Swift kernel. The 8-bit convolutions through
/// the registered kernel, generated and Swift, are in `IntegerGEMMTests`.
final class GeneratedDepthwiseKernelTests: XCTestCase {
  /// The instruction sets whose kernels this machine runs.
  private var runnableKernels: [GeneratedDepthwiseKernels] {
    GeneratedKernelISA.allCases.compactMap { GeneratedDepthwiseKernels.kernels(for: $0) }
  }

  /// Every kind and instruction set generates, also those this machine cannot run (their
  /// instructions are pinned by the NASM encoding table), and ends with `vzeroupper; ret`; the
  /// 5×5 weights-in-registers kernel exists only for AVX-512 (25 weight vectors), the 8-channel
  /// one only for AVX2 (a ymm kernel).
  func testEveryKernelGenerates() {
    for isa in GeneratedKernelISA.allCases {
      for kind in DepthwiseKernelGenerator.ElementKind.allCases {
        let expected = kind == .float5x5 ? isa == .avx512 : kind == .floatEightChannels ? isa == .avx2 : true
        XCTAssertEqual(DepthwiseKernelGenerator.generates(kind, isa: isa), expected, "\(isa) \(kind)")
        guard DepthwiseKernelGenerator.generates(kind, isa: isa) else { continue }
        let code = DepthwiseKernelGenerator.code(isa: isa, kind: kind)
        // vzeroupper, pop r15, r14, r13, r12, rbp, rbx, ret.
        XCTAssertEqual(
          Array(code.suffix(14)), [0xC5, 0xF8, 0x77, 0x41, 0x5F, 0x41, 0x5E, 0x41, 0x5D, 0x41, 0x5C, 0x5D, 0x5B, 0xC3],
          "\(isa) \(kind)")
      }
    }
  }

  /// The requantizing byte kernels, unsigned bytes × interleaved int16 weight pairs: random pixel
  /// counts (groups of four and single pixels), pixel strides, one to three 16-channel blocks per
  /// call, tables of tap pairs (including none, and pairs reading one input twice), weights over
  /// the whole ±255 range, per-channel biases and multipliers, both roundings, int8 and uint8
  /// outputs, clamps. Every byte is the scalar rescale (`QuantizedMultiplier.apply`) of the
  /// first-principles sum Σ uA·wA + uB·wB (biases up to the Int32 extremes); the sentinels around and between the pixels' outputs
  /// stay untouched, and on AVX-512 so do the lanes past a last partial block (its k-mask).
  func testByteKernelsRequantizeExactSumsAndStayInBounds() {
    var random = SeededGenerator(seed: 41)
    let sentinel: UInt8 = 0x5A
    for kernels in runnableKernels {
      for trial in 0..<80 {
        let pixels = random.int(0...11)
        let blocks = random.int(1...3)
        let lastLanes = kernels.masksLastBlock && trial % 2 == 1 ? random.int(1...16) : 16
        let channels = 16 * (blocks - 1) + lastLanes
        let pixelBytes = 16 * blocks + random.int(0...3) * 16 + random.int(0...5)
        let tapCount = trial % 10 == 0 ? 0 : random.int(1...9)
        let inputBytes = max(1, pixels) * pixelBytes + 64 * 9 + 16
        let input = (0..<inputBytes).map { _ in UInt8(random.int(0...255)) }
        let weights = (0..<(151 + 32 * blocks)).map { _ in Int16(random.int(-255...255)) }
        // (input offsets A and B, weight offset in bytes: any int16 position with the blocks' 32
        // weights each after it). One unused entry at the end, so the table has memory without taps.
        let taps =
          (0..<tapCount).flatMap { _ in
            let first = random.int(0...(64 * 9))
            return [first, random.int(0...3) == 0 ? first : random.int(0...(64 * 9)), random.int(0...151) * 2]
          } + [0, 0, 0]
        let rounding: RoundingPolicy = trial % 3 == 0 ? .singleRounding : .doubleRounding
        let multipliers = (0..<channels).map { _ in
          QuantizedMultiplier(multiplier: Int32(random.int((1 << 30)...Int(Int32.max))), shift: random.int(-24...2))
        }
        // Biases at the Int32 extremes a quarter of the time: the biased sums wrap as the Swift ones do.
        let bias = (0..<channels).map { _ in
          random.int(0...3) == 0
            ? [Int32.min, Int32.max, Int32.min + 1, Int32.max - 1][random.int(0...3)] : Int32(random.int(-300_000...300_000))
        }
        let output = trial % 4 < 2 ? RequantizedOutput.int8 : .uint8
        let range: ClosedRange<Int32> = output == .int8 ? -128...127 : 0...255
        let zeroPoint = Int32(random.int(Int(range.lowerBound)...Int(range.upperBound)))
        let clamp = trial % 5 == 0 ? zeroPoint...range.upperBound : range
        let constants = IntegerChannelConstants(
          groups: 1, groupChannels: channels, multipliers: multipliers, rounding: rounding, outputZeroPoint: zeroPoint,
          clamp: clamp
        ) { bias[$0] }
        let epilogue = constants.epilogue(group: 0)
        let outputStride = 16 * blocks + random.int(0...3)
        // One guard pixel after the last output, and the gap bytes between pixels.
        var stored = [UInt8](repeating: sentinel, count: (pixels + 1) * outputStride)
        input.withUnsafeBufferPointer { inputBuffer in
          weights.withUnsafeBufferPointer { weightBuffer in
            taps.withUnsafeBufferPointer { tapBuffer in
              stored.withUnsafeMutableBufferPointer { outputBuffer in
                var arguments = DepthwiseKernelArguments(
                  input: UnsafeRawPointer(inputBuffer.baseAddress!), inputPixelBytes: pixelBytes,
                  taps: tapBuffer.baseAddress!, tapCount: tapCount,
                  weights: UnsafeRawPointer(weightBuffer.baseAddress!), start: kernels.zeros,
                  output: UnsafeMutableRawPointer(outputBuffer.baseAddress!), outputPixelBytes: outputStride,
                  pixelCount: pixels, blockCount: blocks, requantization: epilogue.table(channel: 0),
                  requantizationLanes: epilogue.lanes, lastBlockLanes: lastLanes)
                kernels.run(.requantized(output), &arguments)
              }
            }
          }
        }
        let label = "\(kernels.byteKernelISA) trial \(trial) \(output) blocks \(blocks) last \(lastLanes) pixels \(pixels)"
        for pixel in 0...pixels {
          for lane in 0..<outputStride {
            var expected = sentinel
            if pixel < pixels && lane < channels {
              let (block, blockLane) = lane.quotientAndRemainder(dividingBy: 16)
              var sum: Int32 = 0
              for tap in 0..<tapCount {
                let first = Int32(input[pixel * pixelBytes + 16 * block + taps[3 * tap] + blockLane])
                let second = Int32(input[pixel * pixelBytes + 16 * block + taps[3 * tap + 1] + blockLane])
                let pair = taps[3 * tap + 2] / 2 + 32 * block + 2 * blockLane
                sum &+= first &* Int32(weights[pair]) &+ second &* Int32(weights[pair + 1])
              }
              let scaled = multipliers[lane].apply(sum &+ bias[lane], rounding: rounding) &+ zeroPoint
              expected = UInt8(truncatingIfNeeded: min(max(scaled, clamp.lowerBound), clamp.upperBound))
            }
            let got = stored[pixel * outputStride + lane]
            guard got == expected else { return XCTFail("\(label) pixel \(pixel) lane \(lane): \(got), expected \(expected)") }
          }
        }
      }
    }
  }

  /// Every four-tap kernel shape a network can ask for generates (also where this machine cannot
  /// run it; its instructions are pinned by the NASM table) and ends with `vzeroupper; ret`;
  /// shapes whose registers do not fit 32 zmm are not generated.
  func testEveryFourTapKernelShapeGenerates() {
    for rows in 1...QuadTapDepthwiseKernelGenerator.maximumFilterRows {
      for quads in 1...3 {
        for corrects in [false, true] {
          let shape = QuadTapDepthwiseKernelGenerator.Shape(
            filterRows: rows, quadsPerRow: quads, stride: 2, output: .uint8, correctsWeights: corrects)
          // Sums (and Σ u sums), four inputs, the weights, permutation (ones, corrections), two scratch.
          XCTAssertEqual(shape.isGenerated, 4 * (corrects ? 2 : 1) + 4 + rows * quads + (corrects ? 3 : 1) + 2 <= 32, "\(shape)")
          guard shape.isGenerated else { continue }
          XCTAssertEqual(
            Array(QuadTapDepthwiseKernelGenerator.code(shape).suffix(14)),
            [0xC5, 0xF8, 0x77, 0x41, 0x5F, 0x41, 0x5E, 0x41, 0x5D, 0x41, 0x5C, 0x5D, 0x5B, 0xC3], "\(shape)")
        }
      }
    }
  }

  /// The four-tap kernels (AVX512-VNNI with VBMI, where this machine has them) against first
  /// principles: random filter rows (1–7, each its own buffer), quads per row, strides, pixel
  /// counts 0–21 (groups of 8 and 4 and single pixels), 1–3 blocks with a last block of 1–16 lanes,
  /// signed-byte weights over the whole range, corrections k_c over ±255 (the corrected form),
  /// per-channel multipliers and biases, both roundings, int8/uint8, clamps. Every byte is the
  /// scalar rescale of Σ u · w (+ k_c · Σ u) over the taps; the sentinels between and after the
  /// pixels' outputs and past the last block's lanes stay untouched.
  func testFourTapKernelsRequantizeExactSumsAndStayInBounds() throws {
    guard let quadKernels = GeneratedQuadTapDepthwiseKernels.supported else {
      // Only CPUs without AVX-512, VNNI or VBMI (or with generated code refused) lack them.
      XCTAssertFalse(
        GeneratedKernelISA.supported == .avx512 && DotProductISA.supported.contains(.avx512VNNI)
          && ProcessorFeatures.hasBytePermutes)
      return
    }
    var random = SeededGenerator(seed: 44)
    let sentinel: UInt8 = 0xA5
    for trial in 0..<120 {
      let corrects = trial % 3 == 0
      var shape: QuadTapDepthwiseKernelGenerator.Shape
      repeat {
        shape = QuadTapDepthwiseKernelGenerator.Shape(
          filterRows: random.int(1...7), quadsPerRow: random.int(1...2), stride: random.int(1...4),
          output: trial % 4 < 2 ? .int8 : .uint8, correctsWeights: corrects)
      } while !shape.isGenerated
      let pixels = [0, 1, 3, 4, 7, 8, 12, random.int(13...21)][trial % 8]
      let blocks = random.int(1...3)
      let lastLanes = trial % 2 == 1 ? random.int(1...16) : 16
      let channels = 16 * (blocks - 1) + lastLanes
      let columns = max(pixels - 1, 0) * shape.stride + 4 * shape.quadsPerRow
      let rowBlockBytes = columns * 16 + 16 * random.int(0...2)
      let rowBuffers = (0..<shape.filterRows).map { _ in
        (0..<(blocks * rowBlockBytes)).map { _ in UInt8(random.int(0...255)) }
      }
      let weights = (0..<(blocks * shape.blockWeightBytes / 4)).map { index -> UInt32 in
        let isCorrection = corrects && index % (shape.blockWeightBytes / 4) >= shape.weightVectors * 16
        return isCorrection
          ? UInt32(bitPattern: Int32(random.int(-255...255)))
          : UInt32(truncatingIfNeeded: random.int(0...Int(UInt32.max)))
      }
      let rounding: RoundingPolicy = trial % 5 == 0 ? .singleRounding : .doubleRounding
      let multipliers = (0..<channels).map { _ in
        QuantizedMultiplier(multiplier: Int32(random.int((1 << 30)...Int(Int32.max))), shift: random.int(-20...2))
      }
      let bias = (0..<channels).map { _ in Int32(random.int(-300_000...300_000)) }
      let range: ClosedRange<Int32> = shape.output == .int8 ? -128...127 : 0...255
      let zeroPoint = Int32(random.int(Int(range.lowerBound)...Int(range.upperBound)))
      let clamp = trial % 6 == 0 ? zeroPoint...range.upperBound : range
      let constants = IntegerChannelConstants(
        groups: 1, groupChannels: channels, multipliers: multipliers, rounding: rounding, outputZeroPoint: zeroPoint,
        clamp: clamp
      ) { bias[$0] }
      let epilogue = constants.epilogue(group: 0)
      let outputStride = 16 * blocks + random.int(0...3)
      var stored = [UInt8](repeating: sentinel, count: (pixels + 1) * outputStride)
      let kernel = quadKernels.kernel(shape)
      XCTAssertTrue(kernel.isMapped, "\(shape)")
      // Each filter row in its own allocation, as the window's ring slots are apart.
      let rowPointers: [UnsafeRawPointer] = rowBuffers.map { row in
        let pointer = UnsafeMutableRawPointer.allocate(byteCount: row.count, alignment: 16)
        pointer.copyMemory(from: row, byteCount: row.count)
        return UnsafeRawPointer(pointer)
      }
      defer { for pointer in rowPointers { pointer.deallocate() } }
      weights.withUnsafeBytes { weightBytes in
        rowPointers.withUnsafeBufferPointer { rows in
          stored.withUnsafeMutableBufferPointer { outputBuffer in
            var arguments = QuadTapDepthwiseArguments(
              rows: rows.baseAddress!, rowBlockBytes: rowBlockBytes, weights: weightBytes.baseAddress!,
              constants: kernel.constants, output: UnsafeMutableRawPointer(outputBuffer.baseAddress!),
              outputPixelBytes: outputStride, pixelCount: pixels, blockCount: blocks,
              requantization: epilogue.table(channel: 0), requantizationLanes: epilogue.lanes,
              lastBlockLanes: lastLanes)
            kernel.run(&arguments)
          }
        }
      }
      let weightBytes = weights.withUnsafeBytes { Array($0) }
      let label = "trial \(trial) \(shape) blocks \(blocks) last \(lastLanes) pixels \(pixels)"
      for pixel in 0...pixels {
        for lane in 0..<outputStride {
          var expected = sentinel
          if pixel < pixels && lane < channels {
            let (block, blockLane) = lane.quotientAndRemainder(dividingBy: 16)
            let blockWeights = block * shape.blockWeightBytes
            var sum: Int32 = 0
            var inputSum: Int32 = 0
            for row in 0..<shape.filterRows {
              for tap in 0..<(4 * shape.quadsPerRow) {
                let column = pixel * shape.stride + tap
                let u = Int32(rowBuffers[row][block * rowBlockBytes + column * 16 + blockLane])
                let weightIndex = blockWeights + ((row * shape.quadsPerRow + tap / 4) * 16 + blockLane) * 4 + tap % 4
                sum &+= u &* Int32(Int8(bitPattern: weightBytes[weightIndex]))
                inputSum &+= u
              }
            }
            if corrects {
              let correction = weights[(blockWeights + shape.weightVectors * 64) / 4 + blockLane]
              sum &+= inputSum &* Int32(bitPattern: correction)
            }
            let scaled = multipliers[lane].apply(sum &+ bias[lane], rounding: rounding) &+ zeroPoint
            expected = UInt8(truncatingIfNeeded: min(max(scaled, clamp.lowerBound), clamp.upperBound))
          }
          let got = stored[pixel * outputStride + lane]
          guard got == expected else { return XCTFail("\(label) pixel \(pixel) lane \(lane): \(got), expected \(expected)") }
        }
      }
    }
  }

  /// The weights-in-registers kernels (3×3, and 5×5 on AVX-512) on random grids: row and column
  /// offsets (dilations), pixel strides, pixel counts (none, one, and up to 27: every mix of the
  /// eight-, four-, two- and one-pixel groups), one to three 16-channel blocks per call, weight
  /// offsets, start values moving with the blocks or shared by them, and clamps; the same bits as
  /// the tap-table kernel on the same table (they sum in its order), both within float rounding of
  /// a double-precision sum, and the sentinels around and between the pixels' outputs untouched.
  func testSquareFilterKernelsMatchTableKernelBitForBit() {
    var random = SeededGenerator(seed: 43)
    let sentinel: Float = 1234.5
    for kernels in runnableKernels {
      for kind in DepthwiseKernelGenerator.ElementKind.allCases where kernels.has(kind) {
        guard let size = kind.squareFilterSize else { continue }
        for trial in 0..<45 {
          let pixels = [0, 1, random.int(2...27)][trial % 3]
          let blocks = random.int(1...3)
          let startMoves = trial % 4 != 0
          let channelStride = 16 * blocks + random.int(0...2) * 16 + random.int(0...3)
          let columnOffset = channelStride * random.int(1...3) * 4
          let rowOffset = (size * 3 + random.int(0...4)) * channelStride * 4
          let pixelBytes = channelStride * random.int(1...2) * 4
          let inputCount = (max(1, pixels) * pixelBytes + (size - 1) * (rowOffset + columnOffset)) / 4 + 16 * blocks
          let input = random.floats(inputCount, in: -4...4)
          let weights = random.floats(size * size * 16 + 64 + 16 * (blocks - 1))
          let start = random.floats(16 * blocks)
          let (lower, upper): (Float, Float) = trial % 2 == 0 ? (-.infinity, .infinity) : (-2, 3)
          let taps = (0..<size * size).flatMap { tap in
            [(tap / size) * rowOffset + (tap % size) * columnOffset, random.int(0...(size * size * 16 + 48)) * 4]
          }
          let outputStride = 16 * blocks + random.int(0...3)
          var results: [[Float]] = []
          for runKind in [kind, .float] {
            var output = [Float](repeating: sentinel, count: (pixels + 1) * outputStride)
            input.withUnsafeBufferPointer { inputBuffer in
              weights.withUnsafeBufferPointer { weightBuffer in
                start.withUnsafeBufferPointer { startBuffer in
                  taps.withUnsafeBufferPointer { tapBuffer in
                    output.withUnsafeMutableBufferPointer { outputBuffer in
                      var arguments = DepthwiseKernelArguments(
                        input: UnsafeRawPointer(inputBuffer.baseAddress!), inputPixelBytes: pixelBytes,
                        taps: tapBuffer.baseAddress!, tapCount: size * size,
                        weights: UnsafeRawPointer(weightBuffer.baseAddress!),
                        start: UnsafeRawPointer(startBuffer.baseAddress!),
                        output: UnsafeMutableRawPointer(outputBuffer.baseAddress!), outputPixelBytes: outputStride * 4,
                        pixelCount: pixels, lower: lower, upper: upper, blockCount: blocks,
                        startBlockBytes: startMoves ? 64 : 0)
                      kernels.run(runKind, &arguments)
                    }
                  }
                }
              }
            }
            results.append(output)
          }
          let label = "\(kernels.isa) \(kind) trial \(trial) blocks \(blocks) start moves \(startMoves)"
          XCTAssertEqual(results[0].map(\.bitPattern), results[1].map(\.bitPattern), label)
          for pixel in 0...pixels {
            for lane in 0..<outputStride {
              let got = results[0][pixel * outputStride + lane]
              guard pixel < pixels && lane < 16 * blocks else {
                XCTAssertEqual(got, sentinel, "\(label): written at pixel \(pixel) lane \(lane)")
                continue
              }
              var sum = Double(start[startMoves ? lane : lane % 16])
              for tap in 0..<size * size {
                let value = input[(pixel * pixelBytes + taps[2 * tap]) / 4 + lane]
                sum += Double(value) * Double(weights[taps[2 * tap + 1] / 4 + lane])
              }
              let expected = Float(min(max(sum, Double(lower)), Double(upper)))
              XCTAssertEqual(got, expected, accuracy: 1e-4 * max(1, abs(expected)), "\(label) pixel \(pixel) lane \(lane)")
            }
          }
        }
      }
    }
  }

  /// Random float depthwise convolutions with 16- and 8-channel blocks (and a Swift remainder): every
  /// generated instruction set against the reference and against the Swift kernel, borders,
  /// strides, dilations, SAME/VALID, multipliers, bias or none, every clamp, one and two threads;
  /// a guard after the output stays untouched.
  func testRandomFloatConvolutionsMatchReferenceAndSwiftKernel() {
    var random = SeededGenerator(seed: 42)
    for trial in 0..<36 {
      let batch = random.int(1...2)
      let height = random.int(1...9)
      let width = random.int(1...13)
      let channels = [16, 17, 32, 40, 8, 48, 24, 44, 4][trial % 9]
      let multiplier = trial % 5 == 4 ? 2 : 1
      let filterHeight = trial % 3 == 0 ? 3 : random.int(1...4)
      let filterWidth = trial % 3 == 0 ? 3 : random.int(1...5)
      guard
        let test = RandomDepthwiseCase(
          random: &random, trial: trial, batch: batch, height: height, width: width, channels: channels,
          multiplier: multiplier, filterHeight: filterHeight, filterWidth: filterWidth)
      else { continue }
      let (shape, input, filter, bias, activation, expected) =
        (test.shape, test.input, test.filter, test.bias, test.activation, test.expected)
      let count = expected.values.count
      var results: [[Float]] = []
      for (kernels, threads) in [(nil, 1)] + runnableKernels.flatMap({ [($0, 1), ($0, 2)] }) {
        let memory = TestMemory()
        let guardValues: [Float] = Array(repeating: 1234.5, count: 32)
        let output = memory.copy([Float](repeating: .nan, count: count) + guardValues)
        FloatDepthwiseConvolution.run(
          shape, input: memory.copy(input), filter: memory.copy(filter), bias: memory.copy(bias),
          activation: activation.range, output: output, threadCount: threads,
          scratch: memory.scratch(bytes: FloatDepthwiseConvolution.scratchBytes(shape)), generatedKernels: kernels)
        let label = "trial \(trial) \(shape) \(kernels.map { "\($0.isa)" } ?? "Swift") threads \(threads)"
        assertMatches(floats(output, count), expected.values, label)
        XCTAssertEqual(floats(output + count, 32), guardValues, "written past the output: \(label)")
        results.append(floats(output, count))
      }
      // Generated and Swift sums differ only in rounding (FMA): within a few ulps of the sum.
      for other in results.dropFirst() {
        for (index, (swift, generated)) in zip(results[0], other).enumerated() where abs(swift - generated) > 1e-5 {
          XCTFail("trial \(trial) element \(index): Swift \(swift), generated \(generated)")
          break
        }
      }
    }
  }

  /// The calls a `FloatDepthwisePlan` makes at prepare, from first principles: on every output
  /// row they cover each pixel exactly once, and each pixel reads exactly the taps of its window
  /// that lie inside the input, in filter order, at the right input pixel and weight; only an
  /// interior run over a whole square filter may take the square kernel. Tap tables beyond the
  /// cap give no plan (the Swift route then runs every channel).
  func testDepthwisePlanCallsReadExactlyTheValidTapsOfEveryPixel() throws {
    var random = SeededGenerator(seed: 5)
    var checkedPixels = 0
    for trial in 0..<60 {
      let (height, width) = (random.int(1...9), random.int(1...13))
      let filter = (random.int(1...5), random.int(1...5))
      let strides = (random.int(1...3), random.int(1...3))
      let dilations = (random.int(1...2), random.int(1...2))
      guard
        let (heightAxis, widthAxis) = windowAxes(
          height: height, width: width, filter: filter, strides: strides, dilations: dilations, same: random.bool()),
        heightAxis.outputSize > 0, widthAxis.outputSize > 0
      else { continue }
      let shape = DepthwiseShape(
        batch: 1, inputChannels: [16, 33][trial % 2], multiplier: 1, height: heightAxis, width: widthAxis)
      let channels = shape.outputChannels
      let plan = try XCTUnwrap(FloatDepthwisePlan(shape), "trial \(trial)")
      XCTAssertEqual(plan.rowStarts.count, heightAxis.outputSize + 1)
      for y in 0..<heightAxis.outputSize {
        var covered = [Int](repeating: 0, count: widthAxis.outputSize)
        for call in plan.calls[plan.rowStarts[y]..<plan.rowStarts[y + 1]] {
          let firstX = call.outputOffset / channels - y * widthAxis.outputSize
          for pixel in 0..<call.pixelCount {
            let x = firstX + pixel
            covered[x] += 1
            checkedPixels += 1
            var expected: [[Int]] = []
            for ky in 0..<filter.0 {
              for kx in 0..<filter.1 {
                let inputY = heightAxis.inputOrigin(y) + ky * dilations.0
                let inputX = widthAxis.inputOrigin(x) + kx * dilations.1
                if (0..<height).contains(inputY) && (0..<width).contains(inputX) {
                  expected.append([inputY, inputX, ky * filter.1 + kx])
                }
              }
            }
            let read = (0..<call.tapCount).map { tap -> [Int] in
              let inputElement =
                call.inputOffset + pixel * strides.1 * channels + plan.taps[2 * (call.firstTap + tap)] / 4
              let weightElement = plan.taps[2 * (call.firstTap + tap) + 1] / 4
              XCTAssertEqual(inputElement % channels, 0)
              XCTAssertEqual(weightElement % channels, 0)
              return [inputElement / channels / width, inputElement / channels % width, weightElement / channels]
            }
            XCTAssertEqual(read, expected, "trial \(trial) \(shape) pixel (\(y), \(x))")
            if call.coversWholeSquare {
              XCTAssertEqual(filter.0, filter.1)
              XCTAssertEqual(expected.count, filter.0 * filter.1, "trial \(trial): square kernel on a partial window")
            }
          }
        }
        XCTAssertEqual(covered, [Int](repeating: 1, count: widthAxis.outputSize), "trial \(trial) row \(y)")
      }
    }
    XCTAssertGreaterThan(checkedPixels, 300)
    let narrow = try XCTUnwrap(windowAxes(height: 1, width: 9, filter: (1, 3), strides: (1, 1), same: true))
    XCTAssertNil(FloatDepthwisePlan(DepthwiseShape(batch: 1, inputChannels: 4, multiplier: 1, height: narrow.0, width: narrow.1)))
    let wide = try XCTUnwrap(windowAxes(height: 1, width: 1600, filter: (1, 1600), strides: (1, 1), same: true))
    XCTAssertNil(FloatDepthwisePlan(DepthwiseShape(batch: 1, inputChannels: 16, multiplier: 1, height: wide.0, width: wide.1)))
  }

  /// `tflite bench --verbose` names the route: generated where allowed (float: for whole 16-channel
  /// blocks, naming the channels past them; 8-bit: the byte kernels' instruction set), Swift when
  /// turned off or when there is no whole block.
  func testKernelDescriptionNamesTheRoute() {
    let swift = KernelDescription.swiftLevel
    if let kernels = GeneratedDepthwiseKernels.current {
      let isa = kernels.isa
      XCTAssertEqual(KernelDescription.depthwise(), "depthwise, generated \(kernels.byteKernelISA)")
      XCTAssertEqual(KernelDescription.depthwise(channels: 32), "depthwise, generated \(isa)")
      XCTAssertEqual(KernelDescription.depthwise(channels: 40), "depthwise, generated \(isa)")
      XCTAssertEqual(KernelDescription.depthwise(channels: 8), "depthwise, generated \(isa)")
      XCTAssertEqual(KernelDescription.depthwise(channels: 44), "depthwise, generated \(isa) (last 4 channels: \(swift))")
      XCTAssertEqual(KernelDescription.depthwise(channels: 7), "depthwise, \(swift)")
    }
    GeneratedFloatKernels.$areAllowed.withValue(false) {
      XCTAssertNil(GeneratedDepthwiseKernels.current)
      XCTAssertEqual(KernelDescription.depthwise(), "depthwise, \(swift)")
      XCTAssertEqual(KernelDescription.depthwise(channels: 32), "depthwise, \(swift)")
    }
  }

  /// The depthwise kernels take the float GEMM's instruction set from `currentISA`, which names it
  /// without generating the float kernels: the newest level this machine runs, none when a runner
  /// turns generated code off, and the same level as the float kernels where those exist.
  func testDepthwiseKernelsFollowTheFloatInstructionSet() {
    let expected = GeneratedFloatKernels.isTurnedOffByEnvironment ? nil : GeneratedKernelISA.supported
    XCTAssertEqual(GeneratedFloatKernels.currentISA, expected)
    XCTAssertEqual(GeneratedDepthwiseKernels.current?.isa, expected)
    if let floatKernels = GeneratedFloatKernels.current { XCTAssertEqual(floatKernels.isa, expected) }
    GeneratedFloatKernels.$areAllowed.withValue(false) {
      XCTAssertNil(GeneratedFloatKernels.currentISA)
      XCTAssertNil(GeneratedDepthwiseKernels.current)
    }
  }
}
