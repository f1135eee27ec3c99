// PRELU on float32: x ≥ 0 ? x : α·x with α broadcast against x.
//
// MediaPipe's networks give α one value per channel ([1, 1, C] or [C]) or one value in all: then
// α repeats along the flattened input with period C, and the kernel lays it out once per invoke
// as a pattern of lcm(C, 16) floats, so every 16 consecutive elements meet one 16-float row of the
// pattern and no broadcast index is walked per element. Those rows run on the generated
// AVX2/AVX-512 kernel (`PreluKernelGenerator`) where it runs, else on Swift SIMD rows; the last
// elements past whole rows, and any other α shape (the general broadcast walk), run in Swift.
// Every route computes the same values (the generated one may turn a −0 result into +0).

import TFLiteFormat
import TFLiteLinearAlgebra

/// PRELU on float32 (see the file comment).
final class PreluKernel: Kernel {
  /// Output element i is computed from input element i (α is never the operand shared: when it
  /// has the output's size the output has its shape, which the planner checks).
  static var writesOutputInPlace: Bool { true }
  private let input: RuntimeTensor
  private let alpha: RuntimeTensor
  private let output: RuntimeTensor
  /// The layout once prepared, read in place by `eval` (see `PreparedBroadcastLayout`).
  private var prepared: PreparedBroadcastLayout?
  /// α's period along the flattened input when it repeats per channel or is one value; nil for the
  /// general broadcast.
  private var period: Int?
  /// α laid out over lcm(period, 16) floats, refilled at every invoke (α need not be constant).
  private var pattern: [Float] = []

  /// The largest pattern laid out (floats); a wider α runs on the broadcast walk.
  static let maximumPatternFloats = 1 << 16

  init(node: Node) throws {
    (input, alpha, output) = try node.twoInputsAndOutput()
    _ = try commonElementType([input, alpha, output], allowed: [.float32], operatorName: "PRELU")
  }

  func prepare(_ context: inout PrepareContext) throws {
    let layout = try BroadcastLayout(broadcasting: [input.shape, alpha.shape])
    prepared = PreparedBroadcastLayout(layout)
    output.shape = layout.shape
    period = Self.repeatingPeriod(input: input.shape, alpha: alpha.shape, output: layout.shape)
    pattern = period.map { [Float](repeating: 0, count: Self.patternFloats(period: $0)) } ?? []
  }

  /// α's period along the flattened input: 1 for one value, C for one value per channel of the
  /// last axis (any leading 1s); nil otherwise, or when the output is wider than the input or the
  /// pattern would exceed `maximumPatternFloats`.
  static func repeatingPeriod(input: [Int], alpha: [Int], output: [Int]) -> Int? {
    guard output == input else { return nil }
    let count = alpha.reduce(1, *)
    if count == 1 { return 1 }
    guard let channels = input.last, alpha.last == channels, count == channels,
      patternFloats(period: channels) <= maximumPatternFloats
    else { return nil }
    return channels
  }

  /// lcm(period, 16): floats of the pattern.
  static func patternFloats(period: Int) -> Int {
    var (a, b) = (period, PreluKernelGenerator.rowFloats)
    while b != 0 { (a, b) = (b, a % b) }
    return period / a * PreluKernelGenerator.rowFloats
  }

  func eval(_ context: EvalContext) throws {
    guard let prepared else { throw KernelError.invalid("PRELU evaluated before prepare") }
    let x = try tensorData(input).assumingMemoryBound(to: Float.self)
    let alphas = try tensorData(alpha).assumingMemoryBound(to: Float.self)
    let destination = try tensorData(output).assumingMemoryBound(to: Float.self)
    guard let period else {
      context.forEachChunk(of: prepared.layout.elementCount, minimumChunk: cheapElementwiseChunk) { range in
        BinaryDriver.run(PreluOperation(), layout: prepared.layout, lhs: x, rhs: alphas, output: destination, range: range)
      }
      return
    }
    var allFinite = true
    for index in pattern.indices {
      let value = alphas[index % period]
      pattern[index] = value
      allFinite = allFinite && value.isFinite
    }
    // Read here, on the thread that runs the node: the switch is task-local.
    let generated = allFinite ? GeneratedPreluKernel.current : nil
    let rowFloats = PreluKernelGenerator.rowFloats
    let elementCount = output.elementCount
    let rowCount = elementCount / rowFloats
    pattern.withUnsafeBufferPointer { patternBuffer in
      let pattern = patternBuffer.baseAddress!
      let patternRows = patternBuffer.count / rowFloats
      context.forEachChunk(of: rowCount, minimumChunk: cheapElementwiseChunk / rowFloats) { rows in
        Self.runRows(
          rows, input: x, output: destination, pattern: pattern, patternRows: patternRows, generated: generated)
      }
      for index in rowCount * rowFloats..<elementCount {
        let value = x[index]
        destination[index] = value >= 0 ? value : value * pattern[index % patternBuffer.count]
      }
    }
  }

  /// Rows `rows` of 16 elements, on `generated` when given, else in Swift.
  private static func runRows(
    _ rows: Range<Int>, input: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>,
    pattern: UnsafePointer<Float>, patternRows: Int, generated: GeneratedPreluKernel?
  ) {
    let rowFloats = PreluKernelGenerator.rowFloats
    var patternRow = rows.lowerBound % patternRows
    if let generated {
      generated.run(PreluKernelArguments(
        input: input + rows.lowerBound * rowFloats, output: output + rows.lowerBound * rowFloats,
        rowCount: rows.count, pattern: pattern, patternRows: patternRows, position: pattern + patternRow * rowFloats,
        rowsBeforeWrap: patternRows - patternRow))
      return
    }
    let operation = PreluOperation()
    for row in rows {
      let offset = row &* rowFloats
      storeVector(operation(loadVector(input + offset), loadVector(pattern + patternRow &* rowFloats)), output + offset)
      patternRow &+= 1
      if patternRow == patternRows { patternRow = 0 }
    }
  }

  var kernelDescription: String? {
    guard period != nil, let generated = GeneratedPreluKernel.current else { return KernelDescription.swiftLevel }
    return "generated \(generated.isa), α repeating per channel"
  }
}
