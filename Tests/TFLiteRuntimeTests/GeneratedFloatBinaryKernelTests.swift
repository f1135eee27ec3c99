import XCTest

import TFLiteFormat
import TFLiteLinearAlgebra
@testable import TFLiteRuntime

/// Float ADD, SUB and MUL on the generated kernels (`FloatBinaryKernelGenerator`): every variant of
/// every instruction set this machine runs against a plain loop on random rows, strides and
/// tails, and the nodes on random broadcasts with generated kernels on and off, bit for bit.
final class GeneratedFloatBinaryKernelTests: XCTestCase {
  /// Random values with the special cases mixed in: zeros of both signs, infinities, NaN, subnormals.
  private static func values(_ count: Int, _ generator: inout SeededGenerator) -> [Float] {
    let specials: [Float] = [0, -0.0, .infinity, -.infinity, .nan, .leastNonzeroMagnitude, 6, -1]
    return (0..<count).map { _ in
      Int.random(in: 0..<8, using: &generator) == 0
        ? specials.randomElement(using: &generator)! : Float.random(in: -8...8, using: &generator)
    }
  }

  /// The operation and then the clamp, one element at a time as the reference kernels write them.
  private static func expected(
    _ operation: FloatBinaryKernelGenerator.Operation, _ lhs: Float, _ rhs: Float, lower: Float, upper: Float
  ) -> Float {
    let value: Float
    switch operation {
    case .add: value = lhs + rhs
    case .subtract: value = lhs - rhs
    case .multiply: value = lhs * rhs
    }
    let raised = value < lower ? lower : value
    return upper < raised ? upper : raised
  }

  /// An ADD, SUB or MUL node with `activation` on float operands, its output unshaped.
  private static func node(
    _ operation: FloatBinaryKernelGenerator.Operation, activation: ActivationFunctionType, _ lhsShape: [Int],
    _ lhs: [Float], _ rhsShape: [Int], _ rhs: [Float]
  ) -> Node {
    let opName: String
    let options: BuiltinOptions
    switch operation {
    case .add:
      var add = AddOptions()
      add.fusedActivationFunction = activation
      (opName, options) = ("ADD", .addOptions(add))
    case .subtract:
      var sub = SubOptions()
      sub.fusedActivationFunction = activation
      (opName, options) = ("SUB", .subOptions(sub))
    case .multiply:
      var mul = MulOptions()
      mul.fusedActivationFunction = activation
      (opName, options) = ("MUL", .mulOptions(mul))
    }
    return KernelHarness.node(
      opName, [KernelHarness.floatTensor(0, lhsShape, lhs), KernelHarness.floatTensor(1, rhsShape, rhs)],
      KernelHarness.outputTensor(2), options)
  }

  /// The same bits, except that any NaN equals any NaN.
  private static func same(_ a: Float, _ b: Float) -> Bool { a.bitPattern == b.bitPattern || (a.isNaN && b.isNaN) }

  /// Each level's kernels, every variant, over random row counts, row lengths (whole blocks and
  /// every tail), operand and output row strides: each output equals the plain loop's bits, and
  /// no float between or after the rows is written.
  func testGeneratedKernelsMatchPlainLoopOnEveryLevel() {
    let families = GeneratedKernelISA.allCases.compactMap { GeneratedFloatBinaryKernels.kernels(for: $0) }
    let runnable = GeneratedKernelISA.allCases.filter { level in GeneratedKernelISA.supported.map { level <= $0 } ?? false }
    XCTAssertEqual(families.map(\.isa), runnable)
    var generator = SeededGenerator(seed: 21)
    let sentinel: Float = 12345
    for kernels in families {
      for variant in FloatBinaryKernelGenerator.Variant.all {
        for trial in 0..<12 {
          let rows = trial == 0 ? 0 : Int.random(in: 1...5, using: &generator)
          let length = trial < 3 ? [0, 16, 1][trial] : Int.random(in: 0...75, using: &generator)
          let bounds: (Float, Float) = variant.clamps ? [(0, 6), (-1, 1), (0, .infinity)][trial % 3] : (-.infinity, .infinity)
          /// A row stride for an operand: repeated rows (0), or rows apart with a gap.
          func rowStride(repeats: Bool) -> Int {
            let choice = Int.random(in: 0..<3, using: &generator)
            return choice == 0 ? 0 : (repeats ? 1 : length) + Int.random(in: 0...3, using: &generator)
          }
          let lhsStride = rowStride(repeats: variant.lhsRepeats)
          let rhsStride = rowStride(repeats: variant.rhsRepeats)
          let outputStride = length + Int.random(in: 0...5, using: &generator)
          let lhsCount = rows * lhsStride + (variant.lhsRepeats ? 1 : length) + 1
          let rhsCount = rows * rhsStride + (variant.rhsRepeats ? 1 : length) + 1
          let lhs = Self.values(lhsCount, &generator)
          let rhs = Self.values(rhsCount, &generator)
          var output = [Float](repeating: sentinel, count: rows * outputStride + 16)
          lhs.withUnsafeBufferPointer { left in
            rhs.withUnsafeBufferPointer { right in
              output.withUnsafeMutableBufferPointer { out in
                let ran = kernels.run(
                  variant, lhs: left.baseAddress!, lhsRowStride: lhsStride, rhs: right.baseAddress!,
                  rhsRowStride: rhsStride, output: out.baseAddress!, outputRowStride: outputStride, rowCount: rows,
                  rowLength: length, lower: bounds.0, upper: bounds.1)
                XCTAssertTrue(ran, "the kernel was mapped")
              }
            }
          }
          let label = "\(kernels.isa) \(variant) rows \(rows) length \(length) trial \(trial)"
          for index in output.indices {
            let (row, column) = index.quotientAndRemainder(dividingBy: max(outputStride, 1))
            guard row < rows && column < length else {
              if output[index] != sentinel { XCTFail("\(label): wrote float \(index) outside the rows"); break }
              continue
            }
            let left = lhs[row * lhsStride + (variant.lhsRepeats ? 0 : column)]
            let right = rhs[row * rhsStride + (variant.rhsRepeats ? 0 : column)]
            let want = Self.expected(variant.operation, left, right, lower: bounds.0, upper: bounds.1)
            if !Self.same(output[index], want) {
              XCTFail("\(label): row \(row) column \(column) is \(output[index]), expected \(want)")
              break
            }
          }
        }
      }
    }
  }

  /// ADD, SUB and MUL nodes on random broadcasts (same shape, scalars, per-channel and per-row
  /// operands; layouts of three or more collapsed dimensions or under 1024 elements stay on the
  /// Swift driver),
  /// with no, RELU and RELU6 activations, on one and two threads, with generated kernels on and
  /// off: the plain scalar broadcast everywhere.
  func testArithmeticNodesMatchPlainBroadcastOnEveryRoute() throws {
    var generator = SeededGenerator(seed: 44)
    var shapePairs: [([Int], [Int])] = [
      ([1, 16, 16, 64], [1, 1, 1, 64]), ([1, 8, 8, 72], [1, 1, 1, 72]), ([1, 32, 32, 3], []), ([], [1, 5, 5, 3]),
      ([1, 7, 9, 24], [1, 7, 9, 24]), ([40, 1], [40, 37]), ([5, 1], [5, 37]), ([1, 4, 4, 72], [72]), ([2, 3, 1, 17], [3, 5, 1]),
      ([4096 + 21], [1]),
    ]
    for rank in 1...5 {
      let sizes = rank <= 2 ? 1...90 : 1...6
      for _ in 0..<3 { shapePairs.append(generator.broadcastPair(output: generator.shape(rank: rank, sizes: sizes))) }
    }
    let operations: [(String, FloatBinaryKernelGenerator.Operation)] = [("ADD", .add), ("SUB", .subtract), ("MUL", .multiply)]
    let activations: [(ActivationFunctionType, Float, Float)] = [(.none, -.infinity, .infinity), (.relu, 0, .infinity), (.relu6, 0, 6)]
    for (trial, (lhsShape, rhsShape)) in shapePairs.enumerated() {
      let lhs = Self.values(max(lhsShape.reduce(1, *), 1), &generator)
      let rhs = Self.values(max(rhsShape.reduce(1, *), 1), &generator)
      let (opName, operation) = operations[trial % operations.count]
      let (activation, lower, upper) = activations[(trial / 3) % activations.count]
      let outputShape = try BroadcastLayout.broadcastShape([lhsShape, rhsShape])
      let want = scalarBroadcast(lhs, lhsShape, rhs, rhsShape, outputShape: outputShape) {
        Self.expected(operation, $0, $1, lower: lower, upper: upper)
      }
      for generated in [true, false] {
        for threads in [1, 2] {
          let node = Self.node(operation, activation: activation, lhsShape, lhs, rhsShape, rhs)
          let result = try GeneratedFloatKernels.$areAllowed.withValue(generated) {
            try KernelHarness.run(node, threads: threads)
          }
          let label = "\(opName) \(activation) \(lhsShape) \(rhsShape) generated \(generated) threads \(threads)"
          XCTAssertEqual(result.shape, outputShape, label)
          XCTAssertEqual(result.values.count, want.count, label)
          if let index = (0..<min(want.count, result.values.count)).first(where: { !Self.same(result.values[$0], want[$0]) }) {
            XCTFail("\(label): element \(index) is \(result.values[index]), expected \(want[index])")
          }
        }
      }
    }
  }

  /// The description names the generated level for a float MUL whose layout has at most two
  /// collapsed dimensions and enough elements, and the Swift level otherwise or with generated
  /// kernels off.
  func testKernelDescriptionNamesTheRoute() throws {
    func description(_ lhsShape: [Int], _ rhsShape: [Int]) throws -> String? {
      let lhs = KernelHarness.floatTensor(0, lhsShape, [Float](repeating: 1, count: lhsShape.reduce(1, *)))
      let rhs = KernelHarness.floatTensor(1, rhsShape, [Float](repeating: 2, count: rhsShape.reduce(1, *)))
      let node = KernelHarness.node("MUL", [lhs, rhs], KernelHarness.outputTensor(2), .mulOptions(MulOptions()))
      let kernel = try KernelDispatch.makeKernel(for: node)
      var context = PrepareContext(threadCount: 1)
      try kernel.prepare(&context)
      return kernel.kernelDescription
    }
    XCTAssertEqual(try description([1, 16, 16, 8], [8]), GeneratedFloatKernels.currentISA.map { "generated \($0)" })
    XCTAssertNil(try description([2, 3, 1, 4], [3, 5, 1]))
    XCTAssertNil(try description([1, 4, 4, 8], [8]), "fewer elements than a kernel call is worth")
    try GeneratedFloatKernels.$areAllowed.withValue(false) {
      XCTAssertNil(try description([1, 16, 16, 8], [8]))
    }
  }

  /// For ADD, SUB and MUL with every activation on layouts the generated kernels run (same shape,
  /// per-channel, per-row and scalar operands) and one they do not (three collapsed dimensions),
  /// on every level this machine runs, what a prepare reserves (`reserveGeneratedKernels`) on a
  /// set of its own is the kernel the node's eval runs: `mapReserved()` maps it (one mapping, none
  /// for the Swift layout), the eval maps nothing more, and its floats are the plain broadcast's.
  func testReservedKernelIsTheKernelTheNodeRuns() throws {
    var generator = SeededGenerator(seed: 45)
    let layouts: [(lhs: [Int], rhs: [Int], runsGenerated: Bool)] = [
      ([1, 16, 16, 64], [1, 1, 1, 64], true), ([1, 1, 1, 72], [1, 8, 8, 72], true), ([1, 32, 32, 3], [], true),
      ([40, 1], [40, 37], true), ([1, 24, 24, 8], [1, 24, 24, 8], true), ([4, 9, 1, 40], [9, 7, 1], false),
    ]
    let operations: [FloatBinaryKernelGenerator.Operation] = [.add, .subtract, .multiply]
    let activations: [(ActivationFunctionType, Float, Float)] = [(.none, -.infinity, .infinity), (.relu, 0, .infinity), (.relu6, 0, 6)]
    let levels = GeneratedKernelISA.allCases.filter { GeneratedFloatBinaryKernels.kernels(for: $0) != nil }
    #if arch(x86_64) && os(Linux)
      XCTAssertFalse(levels.isEmpty, "an x86-64 test machine runs at least AVX2")
    #endif
    for (level, isa) in levels.enumerated() {
      for (trial, (lhsShape, rhsShape, runsGenerated)) in layouts.enumerated() {
        let operation = operations[trial % operations.count]
        let (activation, lower, upper) = activations[(trial + level) % activations.count]
        let lhs = Self.values(max(lhsShape.reduce(1, *), 1), &generator)
        let rhs = Self.values(max(rhsShape.reduce(1, *), 1), &generator)
        let outputShape = try BroadcastLayout.broadcastShape([lhsShape, rhsShape])
        let want = scalarBroadcast(lhs, lhsShape, rhs, rhsShape, outputShape: outputShape) {
          Self.expected(operation, $0, $1, lower: lower, upper: upper)
        }
        let node = Self.node(operation, activation: activation, lhsShape, lhs, rhsShape, rhs)
        let (left, right, output) = (try node.input(0), try node.input(1), try node.output(0))
        let definition: any BinaryKernelDefinition
        switch operation {
        case .add: definition = try ArithmeticDefinition<Addition>(node: node, lhs: left, rhs: right, output: output)
        case .subtract: definition = try ArithmeticDefinition<Subtraction>(node: node, lhs: left, rhs: right, output: output)
        case .multiply: definition = try ArithmeticDefinition<Multiplication>(node: node, lhs: left, rhs: right, output: output)
        }
        let layout = try BroadcastLayout(broadcasting: [lhsShape, rhsShape])
        let kernels = try XCTUnwrap(GeneratedFloatBinaryKernels.unshared(isa))
        let label = "\(isa) \(operation) \(activation) \(lhsShape) \(rhsShape)"
        LazyExecutableKernels.mapReserved()
        let before = ExecutableCode.mappedNow
        definition.reserveGeneratedKernels(for: layout, on: kernels)
        LazyExecutableKernels.mapReserved()
        let mapped = ExecutableCode.mappedNow
        XCTAssertEqual(mapped.mappings, before.mappings + (runsGenerated ? 1 : 0), "\(label): mappings of the reservation")
        let (lhsData, rhsData) = (try XCTUnwrap(left.data), try XCTUnwrap(right.data))
        var result = [Float](repeating: .nan, count: want.count)
        result.withUnsafeMutableBytes { out in
          definition.run(
            layout: layout, lhs: lhsData, rhs: rhsData, output: out.baseAddress!, range: 0..<want.count, generated: kernels)
        }
        XCTAssertEqual(ExecutableCode.mappedNow.mappings, mapped.mappings, "\(label): the kernel it ran was not reserved")
        if let index = want.indices.first(where: { !Self.same(result[$0], want[$0]) }) {
          XCTFail("\(label): element \(index) is \(result[index]), expected \(want[index])")
        }
      }
    }
  }
}
