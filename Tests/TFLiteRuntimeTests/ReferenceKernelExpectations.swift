// Expected values for the optimized float kernels' tests, from the reference kernels in
// `Sources/TFLiteRuntime/Reference/`. Float sums depend on their order, so each expected value comes
// with the sum of the absolute values of its terms (the same reference run on |input|, |weights|
// and |bias| without a clamp), which bounds the rounding error of any summation order.

import XCTest

import TFLiteLinearAlgebra
@testable import TFLiteRuntime

/// An expected value and the magnitude that bounds its rounding error.
struct Expected {
  var value: Double
  var magnitude: Double
}

/// Output size and leading padding of one axis, from the reference kernels' geometry.
func referenceAxis(input: Int, filter: Int, stride: Int, dilation: Int, same: Bool) -> (output: Int, padding: Int) {
  reportingFailure((0, 0)) {
    let axis = try Reference.Axis(
      inputSize: input, filterSize: filter, stride: stride, dilation: dilation, padding: same ? .same : .valid)
    return (axis.outputSize, axis.paddingBefore)
  }
}

/// `body`'s result, or `fallback` after a test failure naming the reference kernel's refusal.
private func reportingFailure<Result>(_ fallback: Result, _ body: () throws -> Result) -> Result {
  do { return try body() } catch {
    XCTFail("reference kernel refused its arguments: \(error)")
    return fallback
  }
}

/// Pairs the reference values with the magnitudes from the same kernel on absolute values.
private func expectations(_ values: Reference.Tensor<Float>, _ magnitudes: Reference.Tensor<Float>) -> [Expected] {
  zip(values.values, magnitudes.values).map { Expected(value: Double($0), magnitude: Double($1)) }
}

/// Float arithmetic clamping to `lower...upper`, and its unclamped twin for magnitudes.
private func arithmetics(bias: [Float]?, lower: Float, upper: Float) -> (
  Reference.FloatArithmetic, Reference.FloatArithmetic
) {
  (
    Reference.FloatArithmetic(bias: bias, range: (lower, upper)),
    Reference.FloatArithmetic(bias: bias?.map(abs), range: (-.infinity, .infinity))
  )
}

/// The window parameters of the tests' strides, dilations and padding flag.
private func window(_ strides: (Int, Int), _ dilations: (Int, Int) = (1, 1), same: Bool) -> Reference.WindowParameters {
  Reference.WindowParameters(
    strideHeight: strides.0, strideWidth: strides.1, dilationHeight: dilations.0, dilationWidth: dilations.1,
    padding: same ? .same : .valid)
}

/// CONV_2D with groups (`Reference.conv2D`): input NHWC, filter OHWI with I = input channels / groups.
func referenceConvolution(
  input: [Float], batch: Int, height: Int, width: Int, channels: Int, filter: [Float], outputChannels: Int,
  filterHeight: Int, filterWidth: Int, filterChannels: Int, bias: [Float]?, strides: (Int, Int), dilations: (Int, Int),
  same: Bool, lower: Float, upper: Float
) -> (shape: [Int], values: [Expected]) {
  reportingFailure(([], [])) {
    let inputShape = [batch, height, width, channels]
    let filterShape = [outputChannels, filterHeight, filterWidth, filterChannels]
    let (arithmetic, magnitudeArithmetic) = arithmetics(bias: bias, lower: lower, upper: upper)
    let values = try Reference.conv2D(
      input: Reference.Tensor(shape: inputShape, values: input),
      filter: Reference.Tensor(shape: filterShape, values: filter),
      window: window(strides, dilations, same: same), arithmetic: arithmetic)
    let magnitudes = try Reference.conv2D(
      input: Reference.Tensor(shape: inputShape, values: input.map(abs)),
      filter: Reference.Tensor(shape: filterShape, values: filter.map(abs)),
      window: window(strides, dilations, same: same),
      arithmetic: magnitudeArithmetic)
    return (values.shape, expectations(values, magnitudes))
  }
}

/// DEPTHWISE_CONV_2D (`Reference.depthwiseConv2D`): filter `[1, h, w, channels * multiplier]`.
func referenceDepthwise(
  input: [Float], batch: Int, height: Int, width: Int, channels: Int, multiplier: Int, filter: [Float],
  filterHeight: Int, filterWidth: Int, bias: [Float]?, strides: (Int, Int), dilations: (Int, Int), same: Bool,
  lower: Float, upper: Float
) -> (shape: [Int], values: [Expected]) {
  reportingFailure(([], [])) {
    let inputShape = [batch, height, width, channels]
    let filterShape = [1, filterHeight, filterWidth, channels * multiplier]
    let (arithmetic, magnitudeArithmetic) = arithmetics(bias: bias, lower: lower, upper: upper)
    let values = try Reference.depthwiseConv2D(
      input: Reference.Tensor(shape: inputShape, values: input),
      filter: Reference.Tensor(shape: filterShape, values: filter),
      window: window(strides, dilations, same: same), arithmetic: arithmetic)
    let magnitudes = try Reference.depthwiseConv2D(
      input: Reference.Tensor(shape: inputShape, values: input.map(abs)),
      filter: Reference.Tensor(shape: filterShape, values: filter.map(abs)),
      window: window(strides, dilations, same: same),
      arithmetic: magnitudeArithmetic)
    return (values.shape, expectations(values, magnitudes))
  }
}

/// The 2-D pools (`Reference.averagePool2D`, `maxPool2D`, `l2Pool2D`): "average", "max" or "l2",
/// clamped to `lower...upper`; the magnitude is the largest |value| of the window.
func referencePool(
  _ kind: String, input: [Float], batch: Int, height: Int, width: Int, channels: Int, filterHeight: Int,
  filterWidth: Int, strides: (Int, Int), same: Bool, lower: Float, upper: Float
) -> (shape: [Int], values: [Expected]) {
  reportingFailure(([], [])) {
    let shape = [batch, height, width, channels]
    let parameters = Reference.PoolParameters(
      filterHeight: filterHeight, filterWidth: filterWidth, window: window(strides, same: same))
    let tensor = try Reference.Tensor(shape: shape, values: input)
    let values: Reference.Tensor<Float>
    switch kind {
    case "max": values = try Reference.maxPool2D(input: tensor, parameters: parameters, activation: .none)
    case "average": values = try Reference.averagePool2D(input: tensor, parameters: parameters, activation: .none)
    default: values = try Reference.l2Pool2D(input: tensor, parameters: parameters, activation: .none)
    }
    let magnitudes = try Reference.maxPool2D(
      input: Reference.Tensor(shape: shape, values: input.map(abs)), parameters: parameters, activation: .none)
    let clamped = try Reference.Tensor(
      shape: values.shape, values: values.values.map { min(max($0, lower), upper) })
    return (values.shape, expectations(clamped, magnitudes))
  }
}

/// TRANSPOSE_CONV (`Reference.transposeConv2D`): filter OHWI, output size given, padding from the output size.
func referenceTransposeConvolution(
  input: [Float], batch: Int, height: Int, width: Int, channels: Int, filter: [Float], outputChannels: Int,
  filterHeight: Int, filterWidth: Int, bias: [Float]?, strides: (Int, Int), outputHeight: Int, outputWidth: Int,
  same: Bool, lower: Float, upper: Float
) -> [Expected] {
  reportingFailure([]) {
    let inputShape = [batch, height, width, channels]
    let filterShape = [outputChannels, filterHeight, filterWidth, channels]
    let outputShape = Reference.ImageShape(
      batch: batch, height: outputHeight, width: outputWidth, channels: outputChannels)
    let (arithmetic, magnitudeArithmetic) = arithmetics(bias: bias, lower: lower, upper: upper)
    let values = try Reference.transposeConv2D(
      input: Reference.Tensor(shape: inputShape, values: input),
      filter: Reference.Tensor(shape: filterShape, values: filter),
      outputShape: outputShape, window: window(strides, same: same), arithmetic: arithmetic)
    let magnitudes = try Reference.transposeConv2D(
      input: Reference.Tensor(shape: inputShape, values: input.map(abs)),
      filter: Reference.Tensor(shape: filterShape, values: filter.map(abs)), outputShape: outputShape,
      window: window(strides, same: same), arithmetic: magnitudeArithmetic)
    return expectations(values, magnitudes)
  }
}

/// BATCH_MATMUL (`Reference.batchMatMul`) of row-major operands with broadcast batch dimensions
/// (`adjX`: lhs stored K×M, `adjY`: rhs stored N×K), batch by batch in output order.
func referenceBatchMatMul(
  lhs: [Float], lhsBatch: [Int], rhs: [Float], rhsBatch: [Int], rows: Int, depth: Int, columns: Int, adjX: Bool,
  adjY: Bool
) -> [Expected] {
  reportingFailure([]) {
    let lhsShape = lhsBatch + (adjX ? [depth, rows] : [rows, depth])
    let rhsShape = rhsBatch + (adjY ? [columns, depth] : [depth, columns])
    let values = try Reference.batchMatMul(
      lhs: Reference.Tensor(shape: lhsShape, values: lhs), rhs: Reference.Tensor(shape: rhsShape, values: rhs),
      adjX: adjX, adjY: adjY)
    let magnitudes = try Reference.batchMatMul(
      lhs: Reference.Tensor(shape: lhsShape, values: lhs.map(abs)),
      rhs: Reference.Tensor(shape: rhsShape, values: rhs.map(abs)), adjX: adjX, adjY: adjY)
    return expectations(values, magnitudes)
  }
}

/// A random float DEPTHWISE_CONV_2D case for the optimized kernels' tests: strides, dilations
/// and padding drawn from `random`, then random input, filter and bias (or none), the trial's
/// clamp, and the reference's output; nil (before drawing the tensors) when the window does not fit.
struct RandomDepthwiseCase {
  let shape: DepthwiseShape
  let input: [Float]
  let filter: [Float]
  let bias: [Float]?
  let activation: (name: String, range: FloatClampRange)
  let expected: (shape: [Int], values: [Expected])

  init?(
    random: inout SeededGenerator, trial: Int, batch: Int, height: Int, width: Int, channels: Int, multiplier: Int,
    filterHeight: Int, filterWidth: Int
  ) {
    let strides = (random.int(1...2), random.int(1...2))
    let dilations = (random.int(1...2), random.int(1...2))
    let same = random.bool()
    guard
      let (heightAxis, widthAxis) = windowAxes(
        height: height, width: width, filter: (filterHeight, filterWidth), strides: strides, dilations: dilations,
        same: same)
    else { return nil }
    shape = DepthwiseShape(
      batch: batch, inputChannels: channels, multiplier: multiplier, height: heightAxis, width: widthAxis)
    input = random.floats(batch * height * width * channels)
    filter = random.floats(filterHeight * filterWidth * shape.outputChannels)
    bias = random.bool() ? random.floats(shape.outputChannels) : nil
    activation = testActivations[trial % testActivations.count]
    expected = referenceDepthwise(
      input: input, batch: batch, height: height, width: width, channels: channels, multiplier: multiplier,
      filter: filter, filterHeight: filterHeight, filterWidth: filterWidth, bias: bias, strides: strides,
      dilations: dilations, same: same, lower: activation.range.lower, upper: activation.range.upper)
  }
}

/// Both axes of a windowed op by the optimized code's `WindowAxis`, or nil when the window does not fit.
func windowAxes(
  height: Int, width: Int, filter: (Int, Int), strides: (Int, Int), dilations: (Int, Int) = (1, 1), same: Bool
) -> (WindowAxis, WindowAxis)? {
  guard
    let heightAxis = WindowAxis(
      inputSize: height, filterSize: filter.0, stride: strides.0, dilation: dilations.0, samePadding: same),
    let widthAxis = WindowAxis(
      inputSize: width, filterSize: filter.1, stride: strides.1, dilation: dilations.1, samePadding: same)
  else { return nil }
  return (heightAxis, widthAxis)
}

/// `C[M×N] = A[M×K] · B[K×N]` with A and B read through index closures, as the reference
/// FULLY_CONNECTED computes it (rows of A against rows of Bᵀ), plus bias, clamped to `lower...upper`.
func referenceMatrixProduct(
  rows: Int, columns: Int, depth: Int, a: (Int, Int) -> Float, b: (Int, Int) -> Float, bias: [Float]?,
  lower: Float, upper: Float
) -> [Expected] {
  reportingFailure([]) {
    let left = (0..<rows * depth).map { a($0 / max(depth, 1), $0 % max(depth, 1)) }
    let right = (0..<columns * depth).map { b($0 % max(depth, 1), $0 / max(depth, 1)) }
    let (arithmetic, magnitudeArithmetic) = arithmetics(bias: bias, lower: lower, upper: upper)
    let values = try Reference.fullyConnected(
      input: Reference.Tensor(shape: [rows, depth], values: left),
      weights: Reference.Tensor(shape: [columns, depth], values: right), keepNumDims: false, arithmetic: arithmetic)
    let magnitudes = try Reference.fullyConnected(
      input: Reference.Tensor(shape: [rows, depth], values: left.map(abs)),
      weights: Reference.Tensor(shape: [columns, depth], values: right.map(abs)), keepNumDims: false,
      arithmetic: magnitudeArithmetic)
    return expectations(values, magnitudes)
  }
}

/// Asserts `actual` matches `expected` element-wise: |actual − value| ≤ `relative` · magnitude + `absolute`,
/// where magnitude is the sum of absolute terms (float summation order differs from the reference).
func assertMatches(
  _ actual: [Float], _ expected: [Expected], relative: Double = 1e-5, absolute: Double = 1e-6, _ message: String,
  file: StaticString = #filePath, line: UInt = #line
) {
  XCTAssertEqual(actual.count, expected.count, "element count: \(message)", file: file, line: line)
  for (index, (value, reference)) in zip(actual, expected).enumerated() {
    let tolerance = relative * reference.magnitude + absolute
    if !(abs(Double(value) - reference.value) <= tolerance) {
      XCTFail(
        "\(message): element \(index) is \(value), expected \(reference.value) ± \(tolerance)", file: file, line: line)
      return
    }
  }
}

/// Memory for calling the kernels' pointer-based entry points from tests: copies of arrays,
/// output and scratch buffers, all freed when the object goes away.
final class TestMemory {
  private var blocks: [UnsafeMutableRawPointer] = []

  deinit { for block in blocks { block.deallocate() } }

  /// `bytes` of 64-byte aligned memory (at least 64).
  func scratch(bytes: Int) -> UnsafeMutableRawPointer {
    let block = UnsafeMutableRawPointer.allocate(byteCount: max(bytes, 64), alignment: 64)
    blocks.append(block)
    return block
  }

  /// A copy of `values`.
  func copy(_ values: [Float]) -> UnsafeMutablePointer<Float> {
    let pointer = scratch(bytes: values.count * 4).bindMemory(to: Float.self, capacity: max(values.count, 16))
    pointer.update(from: values, count: values.count)
    return pointer
  }

  /// A copy of `values`, or nil.
  func copy(_ values: [Float]?) -> UnsafeMutablePointer<Float>? { values.map { copy($0) } }

  /// `count` floats set to NaN, so unwritten outputs fail the comparison.
  func output(_ count: Int) -> UnsafeMutablePointer<Float> { copy([Float](repeating: .nan, count: count)) }
}

/// C = A · B + bias with the float GEMM on `threads` threads (the Swift tiles when `generated` is
/// nil): A row-major with `depth` values per row, B `packed`'s first matrix, `paddedBias` as
/// `PanelPacking.paddedBias` gives it. Returns C and the plan that cut the work.
func floatGEMMProduct(
  a: [Float], rows: Int, depth: Int, packed: PackedMatrices<Float>, columns: Int, paddedBias: [Float],
  activation: FloatClampRange, threads: Int, generated: GeneratedFloatKernels?
) -> (values: [Float], plan: GEMMPlan) {
  let plan = GEMMPlan(rows: rows, columns: columns, depth: depth, threadCount: threads)
  let memory = TestMemory()
  let output = memory.output(rows * columns)
  FloatGEMM.multiply(
    plan: plan, lhs: RowMajorLeftOperand(base: memory.copy(a), rowStride: depth), rhs: packed.matrix(0),
    output: output, outputStride: columns,
    epilogue: FloatEpilogue(bias: UnsafePointer(memory.copy(paddedBias)), activation: activation), threadCount: threads,
    scratch: memory.scratch(bytes: plan.scratchBytes(leftOperandPacks: false, threadCount: threads)),
    generatedKernels: generated)
  return (floats(output, rows * columns), plan)
}

/// The `count` floats at `pointer`.
func floats(_ pointer: UnsafePointer<Float>, _ count: Int) -> [Float] {
  Array(UnsafeBufferPointer(start: pointer, count: count))
}

/// The activation ranges a fused-activation test cycles through.
let testActivations: [(name: String, range: FloatClampRange)] = [
  ("none", .none), ("relu", .relu), ("relu_n1_to_1", .reluMinusOneToOne), ("relu6", .relu6),
]
