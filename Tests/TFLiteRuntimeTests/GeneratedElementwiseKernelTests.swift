import XCTest

import TFLiteFormat
import TFLiteLinearAlgebra
@testable import TFLiteRuntime

/// The generated 8-bit elementwise kernels (ElementwiseKernelGenerator.swift) against the Swift
/// kernels, byte for byte: ADD, SUB and MUL on every instruction set this machine runs (AVX2 forced
/// as well as the newest), over random shapes and broadcasts, zero points, scales, clamps and both
/// roundings; the byte table look-up; the int8 SiLU table against LOGISTIC then MUL; and the column
/// sums of MEAN over H and W.
final class GeneratedElementwiseKernelTests: XCTestCase {
  /// The binary kernels of every instruction set this machine runs.
  private var runnableBinaryKernels: [GeneratedQuantizedBinaryKernels] {
    GeneratedKernelISA.allCases.compactMap { GeneratedQuantizedBinaryKernels.kernels(for: $0) }
  }

  /// Shape pairs of the broadcasts the networks have (same shape, per channel either way round,
  /// scalar) and of one the generated route does not take (a per-row operand).
  private func shapes(_ random: inout SeededGenerator, trial: Int) -> (lhs: [Int], rhs: [Int]) {
    let height = random.int(1...9)
    let width = random.int(1...9)
    let channels = [1, 3, 8, 15, 16, 17, 24, 40, 64, 96, 144][random.int(0...10)]
    let full = [1, height, width, channels]
    switch trial % 6 {
    case 0, 1: return (full, full)
    case 2: return (full, [1, 1, 1, channels])
    case 3: return ([channels], full)
    case 4: return (full, trial % 12 == 4 ? [] : [1])
    default: return ([1, height + 1, width, max(channels, 3)], [1, height + 1, 1, 1])
    }
  }

  /// ADD, SUB and MUL: each instruction set's generated route gives the Swift kernel's bytes
  /// (which are LiteRT's reference bytes) for every element, including the elements past the last
  /// whole block, and never writes outside the output.
  func testBinaryKernelsMatchSwiftOnEveryInstructionSet() throws {
    let kernelSets = runnableBinaryKernels
    #if arch(x86_64)
      XCTAssertFalse(kernelSets.isEmpty, "an x86-64 test machine runs at least AVX2")
    #endif
    var random = SeededGenerator(seed: 1207)
    var generatedTrials = 0
    for trial in 0..<240 {
      let type: ElementType = trial % 2 == 0 ? .int8 : .uint8
      let (lhsShape, rhsShape) = shapes(&random, trial: trial)
      let opName = ["ADD", "SUB", "MUL"][trial / 2 % 3]
      let activation: ActivationFunctionType = [.none, .relu, .relu6, .reluN1To1][trial / 6 % 4]
      let operation = RandomBinaryOperation(opName, type, lhsShape, rhsShape, activation, &random)
      let (lhs, rhs) = (operation.lhs, operation.rhs)
      let rounding: RoundingPolicy = trial % 5 == 0 ? .singleRounding : .doubleRounding
      let layout = try BroadcastLayout(broadcasting: [lhsShape, rhsShape])
      let map = try operation.prepare(rounding: rounding, elementCount: layout.elementCount)
      let label = "trial \(trial) \(opName) \(type.name) \(lhsShape) × \(rhsShape) \(activation.name) \(rounding)"
      let generated = try XCTUnwrap(map.generated, label)
      let count = layout.elementCount
      let lhsData = try XCTUnwrap(lhs.data)
      let rhsData = try XCTUnwrap(rhs.data)
      var expected = [UInt8](repeating: 0, count: count)
      expected.withUnsafeMutableBytes {
        map.run(layout: layout, lhs: lhsData, rhs: rhsData, output: $0.baseAddress!, range: 0..<count)
      }
      guard let plan = GeneratedBinaryPlan(layout: layout, constants: generated.constants, outputType: generated.output)
      else {
        XCTAssertEqual(trial % 6, 5, "\(label): a stream, per-channel or scalar layout must take the generated route")
        continue
      }
      XCTAssertNotEqual(trial % 6, 5, "\(label): a per-row operand is neither a stream nor repeating")
      plan.expandOperands(lhs: lhsData, rhs: rhsData)
      for kernels in kernelSets {
        generatedTrials += 1
        // Guard bytes on both sides; a piece starting past 0 checks the repeating phase.
        var buffer = [UInt8](repeating: 0xA5, count: count + 64)
        let start = count > 20 ? random.int(0...5) : 0
        buffer.withUnsafeMutableBytes { bytes in
          let output = bytes.baseAddress! + 32
          for piece in [start..<count, 0..<start] {
            let rest = plan.run(kernels, lhs: lhsData, rhs: rhsData, output: output, range: piece)
            XCTAssertLessThan(piece.upperBound - rest, 16, label)
            map.run(layout: layout, lhs: lhsData, rhs: rhsData, output: output, range: rest..<piece.upperBound)
          }
        }
        XCTAssertEqual(Array(buffer[32..<(32 + count)]), expected, "\(label) \(kernels.isa)")
        XCTAssertTrue(buffer[..<32].allSatisfy { $0 == 0xA5 } && buffer[(32 + count)...].allSatisfy { $0 == 0xA5 }, label)
      }
    }
    #if arch(x86_64)
      XCTAssertGreaterThan(generatedTrials, 150)
    #endif
  }

  /// Extreme quantization: zero points at the ends of the range, scale ratios that make the input
  /// multipliers 2^30 (equal scales) and tiny, output multipliers above 1 (MUL) and the widest
  /// clamps; every instruction set matches Swift on all 65536 input pairs.
  func testBinaryKernelsMatchSwiftOnEveryInputPairAtExtremes() throws {
    let kernelSets = runnableBinaryKernels
    let lhsValues = (0..<65536).map { UInt8(truncatingIfNeeded: $0 >> 8) }
    let rhsValues = (0..<65536).map { UInt8(truncatingIfNeeded: $0) }
    let cases: [(String, ElementType, scales: (Float, Float, Float), zeroPoints: (Int, Int, Int))] = [
      ("ADD", .int8, (0.02, 0.02, 0.04), (-128, 127, 0)),
      ("ADD", .uint8, (1e-4, 0.5, 0.003), (0, 255, 128)),
      ("SUB", .int8, (0.5, 1e-3, 1e-2), (127, -128, -128)),
      ("SUB", .uint8, (0.1, 0.1, 0.1), (255, 0, 255)),
      ("MUL", .int8, (0.5, 0.5, 1e-3), (-128, -128, 127)),
      ("MUL", .uint8, (1e-3, 2e-3, 0.7), (0, 255, 3)),
      ("MUL", .int8, (1.0 / 256, 0.05, 0.05), (-128, 7, -3)),
    ]
    for (opName, type, scales, zeroPoints) in cases {
      for rounding in [RoundingPolicy.doubleRounding, .singleRounding] {
        let lhs = KernelHarness.quantizedTensor(0, "a", type, [65536], lhsValues, scales: [scales.0], zeroPoints: [zeroPoints.0])
        let rhs = KernelHarness.quantizedTensor(1, "b", type, [65536], rhsValues, scales: [scales.1], zeroPoints: [zeroPoints.1])
        let output = KernelHarness.quantizedTensor(2, "out", type, [], [UInt8](), scales: [scales.2], zeroPoints: [zeroPoints.2])
        let options: BuiltinOptions =
          switch opName {
          case "ADD": .addOptions(AddOptions())
          case "SUB": .subOptions(SubOptions())
          default: .mulOptions(MulOptions())
          }
        let node = KernelHarness.node(opName, [lhs, rhs], output, options)
        let map: QuantizedBinaryMap =
          switch opName {
          case "ADD":
            try IntegerAddSubtractDefinition<QuantizedAddition>(node: node, lhs: lhs, rhs: rhs, output: output)
              .prepare(lhs: lhs, rhs: rhs, output: output, rounding: rounding, elementCount: 0)
          case "SUB":
            try IntegerAddSubtractDefinition<QuantizedSubtraction>(node: node, lhs: lhs, rhs: rhs, output: output)
              .prepare(lhs: lhs, rhs: rhs, output: output, rounding: rounding, elementCount: 0)
          default:
            try IntegerMultiplyDefinition(node: node, lhs: lhs, rhs: rhs, output: output)
              .prepare(lhs: lhs, rhs: rhs, output: output, rounding: rounding, elementCount: 0)
          }
        let label = "\(opName) \(type.name) \(scales) \(zeroPoints) \(rounding)"
        let layout = try BroadcastLayout(broadcasting: [[65536], [65536]])
        let lhsData = try XCTUnwrap(lhs.data)
        let rhsData = try XCTUnwrap(rhs.data)
        var expected = [UInt8](repeating: 0, count: 65536)
        expected.withUnsafeMutableBytes {
          map.run(layout: layout, lhs: lhsData, rhs: rhsData, output: $0.baseAddress!, range: 0..<65536)
        }
        let generated = try XCTUnwrap(map.generated, label)
        let plan = try XCTUnwrap(GeneratedBinaryPlan(layout: layout, constants: generated.constants, outputType: generated.output))
        for kernels in kernelSets {
          var actual = [UInt8](repeating: 0, count: 65536)
          let rest = actual.withUnsafeMutableBytes {
            plan.run(kernels, lhs: lhsData, rhs: rhsData, output: $0.baseAddress!, range: 0..<65536)
          }
          XCTAssertEqual(rest, 65536, label)
          let mismatches = (0..<65536).filter { actual[$0] != expected[$0] }
          XCTAssertEqual(mismatches.count, 0, "\(label) \(kernels.isa): first at pair \(mismatches.first.map { ($0 >> 8, $0 & 255) } as Any)")
        }
      }
    }
  }

  /// A function of two raw values whose outputs differ from pair to pair (a hash in the type's range).
  private struct PairHash: QuantizedBinaryFunction {
    let isSigned: Bool
    func callAsFunction(_ a: SIMD8<Int32>, _ b: SIMD8<Int32>) -> SIMD8<Int32> {
      let weighted: SIMD8<Int32> = a &* 131 &+ b &* 29
      let mixed = (weighted &+ (a &* b) &>> 3) & 255
      return isSigned ? mixed &- 128 : mixed
    }
  }

  /// The pair table gather kernel reads the entry of every one of the 65536 raw input pairs (both
  /// input types, the corners included, where the index is most negative or the 32-bit load ends
  /// at the table's last byte), in blocks over streams and in place, and writes nothing past its blocks.
  func testPairTableLookUpReadsTheEntryOfEveryPair() throws {
    #if arch(x86_64)
      if GeneratedKernelISA.supported == .avx512 { XCTAssertNotNil(GeneratedPairTableKernels.runnable) }
    #endif
    guard let kernels = GeneratedPairTableKernels.runnable else { return }
    for type in RequantizedOutput.allCases {
      let table =
        type == .int8
        ? PairTable(PairHash(isSigned: true), lhs: Int8.self, rhs: Int8.self, output: Int8.self)
        : PairTable(PairHash(isSigned: false), lhs: UInt8.self, rhs: UInt8.self, output: UInt8.self)
      let pairs = 1 << 16
      // Pair i: left byte pattern i >> 8, right i & 255, every pattern with every pattern.
      let lhs = (0..<pairs).map { UInt8(truncatingIfNeeded: $0 >> 8) }
      let rhs = (0..<pairs).map { UInt8(truncatingIfNeeded: $0) }
      let expected = (0..<pairs).map { pair -> UInt8 in
        let a = type == .int8 ? Int(Int8(bitPattern: lhs[pair])) : Int(lhs[pair])
        let b = type == .int8 ? Int(Int8(bitPattern: rhs[pair])) : Int(rhs[pair])
        // First principles: the hash of the raw values, as the table's entries should hold it.
        let mixed = (a * 131 + b * 29 + ((a * b) >> 3)) & 255
        return UInt8(truncatingIfNeeded: type == .int8 ? mixed - 128 : mixed)
      }
      for inPlace in [false, true] {
        var output = inPlace ? lhs + [UInt8](repeating: 0xA5, count: 16) : [UInt8](repeating: 0xA5, count: pairs + 16)
        lhs.withUnsafeBytes { left in
          rhs.withUnsafeBytes { right in
            output.withUnsafeMutableBytes { destination in
              kernels.run(
                inputs: type, lhs: inPlace ? UnsafeRawPointer(destination.baseAddress!) : left.baseAddress!,
                rhs: right.baseAddress!, output: destination.baseAddress!, blockCount: pairs / 16, table: table.origin)
            }
          }
        }
        XCTAssertEqual(Array(output[..<pairs]), expected, "\(type) in place \(inPlace)")
        XCTAssertTrue(output[pairs...].allSatisfy { $0 == 0xA5 }, "\(type): bytes past the blocks written")
      }
    }
  }

  /// ADD, SUB and MUL with at least 65536 outputs have a pair table; their generated plan looks
  /// the blocks up in it where the gather kernel runs, giving the bytes of the Swift function
  /// computed without a table, for streams and per-channel operands.
  func testTabulatedBinaryPlansMatchTheFunction() throws {
    var random = SeededGenerator(seed: 1212)
    let lookUp = GeneratedPairTableKernels.runnable
    for trial in 0..<6 {
      let type: ElementType = trial % 2 == 0 ? .int8 : .uint8
      let full = [1, 33, 40, 50 + trial % 3]
      let rhsShape = trial % 4 < 2 ? full : [1, 1, 1, full[3]]
      let opName = ["ADD", "SUB", "MUL"][trial % 3]
      let activation: ActivationFunctionType = [.none, .relu, .relu6, .reluN1To1][trial % 4]
      let operation = RandomBinaryOperation(opName, type, full, rhsShape, activation, &random)
      let (lhs, rhs) = (operation.lhs, operation.rhs)
      let layout = try BroadcastLayout(broadcasting: [full, rhsShape])
      let count = layout.elementCount
      let tabulated = try operation.prepare(rounding: .doubleRounding, elementCount: count)
      let direct = try operation.prepare(rounding: .doubleRounding, elementCount: 16)
      let label = "trial \(trial) \(opName) \(type.name) \(rhsShape) \(activation.name)"
      XCTAssertNotNil(tabulated.pairTable, label)
      XCTAssertNil(direct.pairTable, label)
      let lhsData = try XCTUnwrap(lhs.data)
      let rhsData = try XCTUnwrap(rhs.data)
      var expected = [UInt8](repeating: 0, count: count)
      expected.withUnsafeMutableBytes {
        direct.run(layout: layout, lhs: lhsData, rhs: rhsData, output: $0.baseAddress!, range: 0..<count)
      }
      let generated = try XCTUnwrap(tabulated.generated, label)
      let plan = try XCTUnwrap(
        GeneratedBinaryPlan(
          layout: layout, constants: generated.constants, outputType: generated.output, pairTable: tabulated.pairTable),
        label)
      XCTAssertEqual(plan.looksUp(with: lookUp), lookUp != nil, label)
      plan.expandOperands(lhs: lhsData, rhs: rhsData)
      for kernels in runnableBinaryKernels {
        var buffer = [UInt8](repeating: 0xA5, count: count + 64)
        let start = random.int(0...40)
        buffer.withUnsafeMutableBytes { bytes in
          let destination = bytes.baseAddress! + 32
          for piece in [start..<count, 0..<start] {
            let rest = plan.run(kernels, lookUp: lookUp, lhs: lhsData, rhs: rhsData, output: destination, range: piece)
            XCTAssertLessThan(piece.upperBound - rest, 16, label)
            tabulated.run(layout: layout, lhs: lhsData, rhs: rhsData, output: destination, range: rest..<piece.upperBound)
          }
        }
        XCTAssertEqual(Array(buffer[32..<(32 + count)]), expected, "\(label) \(kernels.isa)")
        XCTAssertTrue(buffer[..<32].allSatisfy { $0 == 0xA5 } && buffer[(32 + count)...].allSatisfy { $0 == 0xA5 }, label)
      }
    }
  }

  /// The byte table look-up: the generated kernel and the Swift loop give each byte's table entry,
  /// in place and not, from unaligned starts, with nothing written outside the range.
  func testByteTableLookUpMatchesTheTable() throws {
    var random = SeededGenerator(seed: 1208)
    let kernel = GeneratedByteTableKernel.runnable
    for trial in 0..<40 {
      let values = (0..<256).map { _ in UInt8(truncatingIfNeeded: random.int(0...255)) }
      let table = ByteTable { values[Int($0)] }
      let count = [0, 1, 63, 64, 65, 200, 4096, 10_000][trial % 8] + random.int(0...3)
      let input = (0..<(count + 64)).map { _ in UInt8(truncatingIfNeeded: random.int(0...255)) }
      let start = random.int(0...7)
      let range = start..<(start + count)
      for generated in [kernel, nil] {
        for inPlace in [false, true] {
          var output = inPlace ? input : [UInt8](repeating: 0x5A, count: input.count)
          let before = output
          input.withUnsafeBytes { source in
            output.withUnsafeMutableBytes { destination in
              table.map(
                input: inPlace ? UnsafeRawPointer(destination.baseAddress!) : source.baseAddress!,
                output: destination.baseAddress!, range: range, generated: generated)
            }
          }
          let label = "trial \(trial) count \(count) generated \(generated != nil) in place \(inPlace)"
          for index in output.indices {
            let wanted = range.contains(index) ? values[Int(input[index])] : before[index]
            if output[index] != wanted {
              XCTFail("\(label) byte \(index): \(output[index]), expected \(wanted)")
              break
            }
          }
        }
      }
    }
    #if arch(x86_64)
      if ProcessorFeatures.hasBytePermutes { XCTAssertNotNil(kernel, "AVX512_VBMI present but no kernel") }
    #endif
  }

  /// The int8 and uint8 SiLU: LOGISTIC then MUL(x, LOGISTIC(x)) fused into one table gives the
  /// bytes of the two kernels run one after the other, for both operand orders, activations and
  /// quantizations, on every input byte; the reference kernel set and a LOGISTIC with a second
  /// reader are not fused.
  func testEightBitSigmoidLinearUnitEqualsLogisticThenMultiply() throws {
    var random = SeededGenerator(seed: 1209)
    for trial in 0..<12 {
      let type: ElementType = trial % 2 == 0 ? .int8 : .uint8
      let range: ClosedRange<Int> = type == .int8 ? -128...127 : 0...255
      let count = 256 + random.int(0...300)
      // Every byte once, then random ones.
      let values = (0..<count).map { UInt8(truncatingIfNeeded: $0 < 256 ? $0 : random.int(0...255)) }
      let x = KernelHarness.quantizedTensor(
        0, "x", type, [1, count], values, scales: [Float.random(in: 0.01...0.3, using: &random)],
        zeroPoints: [random.int(range)])
      let gate = KernelHarness.quantizedTensor(
        1, "gate", type, [], [UInt8](), scales: [Float(1) / 256], zeroPoints: [type == .int8 ? -128 : 0])
      let product = KernelHarness.quantizedTensor(
        2, "product", type, [], [UInt8](), scales: [Float.random(in: 0.01...0.3, using: &random)],
        zeroPoints: [random.int(range)])
      var options = MulOptions()
      options.fusedActivationFunction = [.none, .relu, .relu6][trial % 3]
      let logistic = KernelHarness.node("LOGISTIC", [x], gate, .none)
      let multiply = KernelHarness.node("MUL", trial % 4 < 2 ? [x, gate] : [gate, x], product, .mulOptions(options))
      let label = "trial \(trial) \(type.name)"
      let reader = KernelHarness.node("ABS", [gate], KernelHarness.outputTensor(3, type: type), .none)
      XCTAssertTrue(OperatorFusion.find(in: [logistic, multiply, reader], keptTensors: []).isEmpty, label)
      XCTAssertTrue(OperatorFusion.find(in: [logistic, multiply], keptTensors: [], kernelSet: .reference).isEmpty, label)
      let fusions = OperatorFusion.find(in: [logistic, multiply], keptTensors: [])
      XCTAssertEqual(fusions.map { $0.producer }, [0], label)
      XCTAssertEqual(fusions.map { $0.consumer }, [1], label)
      _ = try KernelHarness.run(logistic, threads: 1, as: UInt8.self)
      let expected = try KernelHarness.run(multiply, threads: 1, as: UInt8.self)
      let kernel = try XCTUnwrap(fusions.first?.kernel as? IntegerSigmoidLinearUnitKernel, label)
      var context = PrepareContext(threadCount: 2)
      try kernel.prepare(&context)
      product.allocateOwnedMemory()
      try kernel.eval(EvalContext(threadCount: 2, scratch: nil))
      XCTAssertEqual(product.shape, expected.shape, label)
      XCTAssertEqual(Array(UnsafeBufferPointer(start: product.pointer(as: UInt8.self), count: count)), expected.values, label)
    }
  }

  /// The column sums of every instruction set equal the sums of each channel's bytes (wrapping
  /// Int32, here never reached) for int8 and uint8, 0 to 60 rows, 1 to 200 channels, with nothing
  /// written past the whole blocks' sums.
  func testColumnSumKernelsGiveEachChannelsSum() throws {
    var random = SeededGenerator(seed: 1210)
    let kernelSets = GeneratedKernelISA.allCases.compactMap { GeneratedColumnSumKernels.kernels(for: $0) }
    #if arch(x86_64)
      XCTAssertFalse(kernelSets.isEmpty, "an x86-64 test machine runs at least AVX2")
    #endif
    for trial in 0..<60 {
      let signed = trial % 2 == 0
      let rows = [0, 1, 2, 49, 60][trial % 5]
      let channels = random.int(1...200)
      let bytes = (0..<(rows * channels)).map { _ in UInt8(random.int(0...255)) }
      let blocks = channels / 16
      let expected = (0..<(blocks * 16)).map { channel in
        (0..<rows).reduce(Int32(0)) { sum, row in
          let byte = bytes[row * channels + channel]
          return sum + (signed ? Int32(Int8(bitPattern: byte)) : Int32(byte))
        }
      }
      for kernels in kernelSets {
        var sums = [Int32](repeating: 0x5A5A_5A5A, count: blocks * 16 + 16)
        bytes.withUnsafeBytes { source in
          sums.withUnsafeMutableBufferPointer { output in
            XCTAssertTrue(kernels.run(
              signed ? .int8 : .uint8, from: source.baseAddress ?? UnsafeRawPointer(bitPattern: 64)!, rowBytes: channels,
              rows: rows, into: output.baseAddress!, blockCount: blocks))
          }
        }
        let label = "trial \(trial) \(kernels.isa) rows \(rows) channels \(channels) signed \(signed)"
        XCTAssertEqual(Array(sums[..<(blocks * 16)]), expected, label)
        XCTAssertTrue(sums[(blocks * 16)...].allSatisfy { $0 == 0x5A5A_5A5A }, label)
      }
    }
  }

  /// MEAN over H and W (keeping them or not) of int8 and uint8 tensors gives the same bytes with
  /// generated kernels on and off.
  func testMeanOverHeightAndWidthIsTheSameWithGeneratedKernelsOnAndOff() throws {
    var random = SeededGenerator(seed: 1211)
    for trial in 0..<16 {
      let type: ElementType = trial % 2 == 0 ? .int8 : .uint8
      let range: ClosedRange<Int> = type == .int8 ? -128...127 : 0...255
      let shape = [1, random.int(1...14), random.int(1...14), [8, 16, 40, 96, 100, 1152][trial % 6]]
      let values = (0..<shape.reduce(1, *)).map { _ in UInt8(random.int(0...255)) }
      let zeroPoint = random.int(range)
      var results: [[UInt8]] = []
      for generated in [false, true] {
        let input = KernelHarness.quantizedTensor(0, "x", type, shape, values, scales: [0.05], zeroPoints: [zeroPoint])
        let axes = KernelHarness.int32Tensor(1, [1, 2])
        let output = KernelHarness.quantizedTensor(2, "mean", type, [], [UInt8](), scales: [0.03], zeroPoints: [3])
        let node = KernelHarness.node("MEAN", [input, axes], output, .reducerOptions(ReducerOptions(keepDims: trial % 3 == 0)))
        results.append(
          try GeneratedFloatKernels.$areAllowed.withValue(generated) {
            try KernelHarness.run(node, threads: 1, as: UInt8.self).values
          })
      }
      XCTAssertEqual(results[1], results[0], "trial \(trial) \(type.name) \(shape)")
      XCTAssertEqual(results[0].count, shape[3])
    }
  }

  /// MEAN over H and W of feature maps large enough to cut into row chunks (squeeze-excite's
  /// inputs) gives on two to four threads, each chunk summed apart and the sums added, the bytes of
  /// one thread and of the Swift loop (generated kernels off).
  func testMeanOverHeightAndWidthSplitOverThreadsGivesOneThreadsBytes() throws {
    var random = SeededGenerator(seed: 1212)
    for trial in 0..<8 {
      let type: ElementType = trial % 2 == 0 ? .int8 : .uint8
      let range: ClosedRange<Int> = type == .int8 ? -128...127 : 0...255
      let shape = [1, random.int(20...60), random.int(20...60), [16, 24, 96, 144][trial % 4]]
      let values = (0..<shape.reduce(1, *)).map { _ in UInt8(random.int(0...255)) }
      let zeroPoint = random.int(range)
      func mean(generated: Bool, threads: Int) throws -> [UInt8] {
        let input = KernelHarness.quantizedTensor(0, "x", type, shape, values, scales: [0.05], zeroPoints: [zeroPoint])
        let axes = KernelHarness.int32Tensor(1, [1, 2])
        let output = KernelHarness.quantizedTensor(2, "mean", type, [], [UInt8](), scales: [0.01], zeroPoints: [3])
        let node = KernelHarness.node("MEAN", [input, axes], output, .reducerOptions(ReducerOptions(keepDims: true)))
        return try GeneratedFloatKernels.$areAllowed.withValue(generated) {
          try KernelHarness.run(node, threads: threads, as: UInt8.self).values
        }
      }
      let expected = try mean(generated: false, threads: 1)
      XCTAssertEqual(expected.count, shape[3])
      for threads in 1...4 {
        XCTAssertEqual(try mean(generated: true, threads: threads), expected, "trial \(trial) \(type.name) \(shape), \(threads) threads")
      }
    }
  }

  /// Quantized ADD and SUB of same-shape 14×14×112 and 28×28×40 operands and of a broadcast row
  /// (squeeze-excite networks' residual sums, which one cheap element-wise chunk kept on one
  /// thread) are cut into several chunks on two and three threads and give the bytes of one thread
  /// with generated kernels off.
  func testQuantizedAddCutIntoChunksOnSeveralThreadsGivesOneThreadsBytes() throws {
    var random = SeededGenerator(seed: 1214)
    for trial in 0..<8 {
      let type: ElementType = trial % 2 == 0 ? .int8 : .uint8
      let shape = trial % 4 < 2 ? [1, 14, 14, 112] : [1, 28, 28, 40]
      let opName = trial % 3 == 2 ? "SUB" : "ADD"
      let rhsShape = trial < 6 ? shape : [1, 1, 1, shape[3]]
      let operation = RandomBinaryOperation(opName, type, shape, rhsShape, trial % 3 == 0 ? .relu : .none, &random)
      let label = "trial \(trial) \(opName) \(type.name) \(shape) × \(rhsShape)"
      XCTAssertGreaterThan(
        ChunkSplit(count: shape.reduce(1, *), minimumChunk: quantizedAddSubtractChunk, threadCount: 2).count, 1, label)
      let expected = try GeneratedFloatKernels.$areAllowed.withValue(false) {
        try KernelHarness.run(operation.node, threads: 1, as: UInt8.self).values
      }
      XCTAssertEqual(expected.count, shape.reduce(1, *), label)
      for threads in 1...3 {
        XCTAssertEqual(
          try KernelHarness.run(operation.node, threads: threads, as: UInt8.self).values, expected, "\(label), \(threads) threads")
      }
    }
  }
}

/// A quantized ADD, SUB or MUL node on random operands of `type` (values, scales and zero points
/// drawn from `random`), prepared by the kernels' own definitions.
private struct RandomBinaryOperation {
  let opName: String
  let lhs: RuntimeTensor
  let rhs: RuntimeTensor
  let output: RuntimeTensor
  let node: Node

  init(
    _ opName: String, _ type: ElementType, _ lhsShape: [Int], _ rhsShape: [Int], _ activation: ActivationFunctionType,
    _ random: inout SeededGenerator
  ) {
    let range: ClosedRange<Int> = type == .int8 ? -128...127 : 0...255
    func operand(_ index: Int, _ shape: [Int]) -> RuntimeTensor {
      let values = (0..<shape.reduce(1, *)).map { _ in UInt8(truncatingIfNeeded: random.int(range)) }
      return KernelHarness.quantizedTensor(
        index, "t\(index)", type, shape, values, scales: [Float.random(in: 0.001...0.5, using: &random)],
        zeroPoints: [random.int(range)])
    }
    lhs = operand(0, lhsShape)
    rhs = operand(1, rhsShape)
    output = KernelHarness.quantizedTensor(
      2, "out", type, [], [UInt8](), scales: [Float.random(in: 0.001...0.5, using: &random)],
      zeroPoints: [random.int(range)])
    let options: BuiltinOptions =
      switch opName {
      case "ADD": .addOptions(AddOptions(fusedActivationFunction: activation))
      case "SUB": .subOptions(SubOptions(fusedActivationFunction: activation))
      default: .mulOptions(MulOptions(fusedActivationFunction: activation))
      }
    self.opName = opName
    node = KernelHarness.node(opName, [lhs, rhs], output, options)
  }

  /// The operation's map for `elementCount` outputs (a pair table from 65536 on).
  func prepare(rounding: RoundingPolicy, elementCount: Int) throws -> QuantizedBinaryMap {
    switch opName {
    case "ADD":
      try IntegerAddSubtractDefinition<QuantizedAddition>(node: node, lhs: lhs, rhs: rhs, output: output)
        .prepare(lhs: lhs, rhs: rhs, output: output, rounding: rounding, elementCount: elementCount)
    case "SUB":
      try IntegerAddSubtractDefinition<QuantizedSubtraction>(node: node, lhs: lhs, rhs: rhs, output: output)
        .prepare(lhs: lhs, rhs: rhs, output: output, rounding: rounding, elementCount: elementCount)
    default:
      try IntegerMultiplyDefinition(node: node, lhs: lhs, rhs: rhs, output: output)
        .prepare(lhs: lhs, rhs: rhs, output: output, rounding: rounding, elementCount: elementCount)
    }
  }
}
