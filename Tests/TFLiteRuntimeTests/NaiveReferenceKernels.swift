// Straightforward reference implementations the optimized kernels are checked against. They are
// written directly from the ops' definitions (scalar loops, double accumulation), and return, per
// output element, the value and the sum of absolute terms that bounds float rounding error.


/// An expected value and the magnitude that bounds its rounding error.
struct Expected {
  var value: Double
  var magnitude: Double
}

/// Output size and leading padding of one axis, by TFLite's formulas (SAME: ceil(in/stride)).
func referenceAxis(input: Int, filter: Int, stride: Int, dilation: Int, same: Bool) -> (output: Int, padding: Int) {
  let effective = (filter - 1) * dilation + 1
  let output = same ? (input + stride - 1) / stride : (input + stride - effective) / stride
  let total = max(0, (output - 1) * stride + effective - input)
  return (output, total / 2)
}

/// Clamp of a fused activation.
func referenceClamp(_ x: Double, _ lower: Float, _ upper: Float) -> Double {
  min(max(x, Double(lower)), Double(upper))
}

/// CONV_2D with groups: input NHWC, filter OHWI with I = input channels / groups.
func referenceConvolution(
  input: [Float], batch: Int, height: Int, width: Int, channels: Int, filter: [Float], outputChannels: Int,
  filterHeight: Int, filterWidth: Int, filterChannels: Int, bias: [Float]?, strides: (Int, Int), dilations: (Int, Int),
  same: Bool, lower: Float, upper: Float
) -> (shape: [Int], values: [Expected]) {
  let (outH, padTop) = referenceAxis(input: height, filter: filterHeight, stride: strides.0, dilation: dilations.0, same: same)
  let (outW, padLeft) = referenceAxis(input: width, filter: filterWidth, stride: strides.1, dilation: dilations.1, same: same)
  let groups = channels / filterChannels
  let perGroup = outputChannels / groups
  var result: [Expected] = []
  for b in 0..<batch {
    for oy in 0..<outH {
      for ox in 0..<outW {
        for oc in 0..<outputChannels {
          let group = oc / perGroup
          var sum = 0.0
          var magnitude = 0.0
          for ky in 0..<filterHeight {
            for kx in 0..<filterWidth {
              let iy = oy * strides.0 - padTop + ky * dilations.0
              let ix = ox * strides.1 - padLeft + kx * dilations.1
              guard iy >= 0, iy < height, ix >= 0, ix < width else { continue }
              for ic in 0..<filterChannels {
                let a = Double(input[((b * height + iy) * width + ix) * channels + group * filterChannels + ic])
                let w = Double(filter[((oc * filterHeight + ky) * filterWidth + kx) * filterChannels + ic])
                sum += a * w
                magnitude += abs(a * w)
              }
            }
          }
          let biasValue = Double(bias?[oc] ?? 0)
          result.append(Expected(value: referenceClamp(sum + biasValue, lower, upper), magnitude: magnitude + abs(biasValue)))
        }
      }
    }
  }
  return ([batch, outH, outW, outputChannels], result)
}

/// DEPTHWISE_CONV_2D: filter `[1, h, w, channels * multiplier]`, i.e. a convolution with one group
/// per input channel whose OHWI filter is the transposed depthwise filter.
func referenceDepthwise(
  input: [Float], batch: Int, height: Int, width: Int, channels: Int, multiplier: Int, filter: [Float],
  filterHeight: Int, filterWidth: Int, bias: [Float]?, strides: (Int, Int), dilations: (Int, Int), same: Bool,
  lower: Float, upper: Float
) -> (shape: [Int], values: [Expected]) {
  let outputChannels = channels * multiplier
  let taps = filterHeight * filterWidth
  let grouped = (0..<outputChannels * taps).map { index in filter[(index % taps) * outputChannels + index / taps] }
  return referenceConvolution(
    input: input, batch: batch, height: height, width: width, channels: channels, filter: grouped,
    outputChannels: outputChannels, filterHeight: filterHeight, filterWidth: filterWidth, filterChannels: 1,
    bias: bias, strides: strides, dilations: dilations, same: same, lower: lower, upper: upper)
}

/// The 2-D pools: "average", "max" or "l2"; padding elements are not counted.
func referencePool(
  _ kind: String, input: [Float], batch: Int, height: Int, width: Int, channels: Int, filterHeight: Int,
  filterWidth: Int, strides: (Int, Int), same: Bool, lower: Float, upper: Float
) -> (shape: [Int], values: [Expected]) {
  let (outH, padTop) = referenceAxis(input: height, filter: filterHeight, stride: strides.0, dilation: 1, same: same)
  let (outW, padLeft) = referenceAxis(input: width, filter: filterWidth, stride: strides.1, dilation: 1, same: same)
  var result: [Expected] = []
  for b in 0..<batch {
    for oy in 0..<outH {
      for ox in 0..<outW {
        for c in 0..<channels {
          var values: [Double] = []
          for ky in 0..<filterHeight {
            for kx in 0..<filterWidth {
              let iy = oy * strides.0 - padTop + ky
              let ix = ox * strides.1 - padLeft + kx
              guard iy >= 0, iy < height, ix >= 0, ix < width else { continue }
              values.append(Double(input[((b * height + iy) * width + ix) * channels + c]))
            }
          }
          let value: Double
          switch kind {
          case "max": value = values.max() ?? -Double(Float.greatestFiniteMagnitude)
          case "average": value = values.reduce(0, +) / Double(values.count)
          default: value = (values.map { $0 * $0 }.reduce(0, +) / Double(values.count)).squareRoot()
          }
          let magnitude = values.map { abs($0) }.max() ?? 0
          result.append(Expected(value: referenceClamp(value, lower, upper), magnitude: magnitude))
        }
      }
    }
  }
  return ([batch, outH, outW, channels], result)
}

/// TRANSPOSE_CONV (scatter form): filter OHWI, output size given, padding from the output size.
func referenceTransposeConvolution(
  input: [Float], batch: Int, height: Int, width: Int, channels: Int, filter: [Float], outputChannels: Int,
  filterHeight: Int, filterWidth: Int, bias: [Float]?, strides: (Int, Int), outputHeight: Int, outputWidth: Int,
  same: Bool, lower: Float, upper: Float
) -> [Expected] {
  let padTop = referenceAxis(input: outputHeight, filter: filterHeight, stride: strides.0, dilation: 1, same: same).padding
  let padLeft = referenceAxis(input: outputWidth, filter: filterWidth, stride: strides.1, dilation: 1, same: same).padding
  var sums = [Double](repeating: 0, count: batch * outputHeight * outputWidth * outputChannels)
  var magnitudes = sums
  for b in 0..<batch {
    for iy in 0..<height {
      for ix in 0..<width {
        for ic in 0..<channels {
          for ky in 0..<filterHeight {
            for kx in 0..<filterWidth {
              let oy = iy * strides.0 - padTop + ky
              let ox = ix * strides.1 - padLeft + kx
              guard oy >= 0, oy < outputHeight, ox >= 0, ox < outputWidth else { continue }
              for oc in 0..<outputChannels {
                let a = Double(input[((b * height + iy) * width + ix) * channels + ic])
                let w = Double(filter[((oc * filterHeight + ky) * filterWidth + kx) * channels + ic])
                let index = ((b * outputHeight + oy) * outputWidth + ox) * outputChannels + oc
                sums[index] += a * w
                magnitudes[index] += abs(a * w)
              }
            }
          }
        }
      }
    }
  }
  return sums.indices.map { index in
    let biasValue = Double(bias?[index % outputChannels] ?? 0)
    return Expected(value: referenceClamp(sums[index] + biasValue, lower, upper), magnitude: magnitudes[index] + abs(biasValue))
  }
}

/// BATCH_MATMUL of row-major operands with broadcast batch dimensions (`adjX`: lhs stored K×M,
/// `adjY`: rhs stored N×K), batch by batch in output order.
func referenceBatchMatMul(
  lhs: [Float], lhsBatch: [Int], rhs: [Float], rhsBatch: [Int], rows: Int, depth: Int, columns: Int, adjX: Bool,
  adjY: Bool
) -> [Expected] {
  let rank = max(lhsBatch.count, rhsBatch.count)
  let lhsDims = [Int](repeating: 1, count: rank - lhsBatch.count) + lhsBatch
  let rhsDims = [Int](repeating: 1, count: rank - rhsBatch.count) + rhsBatch
  let outputDims = zip(lhsDims, rhsDims).map { max($0, $1) }
  var expected: [Expected] = []
  for batch in 0..<outputDims.reduce(1, *) {
    // Decompose the output batch index and map each coordinate to the operands (size-1 axes repeat).
    var remainder = batch
    var l = 0
    var r = 0
    var lhsScale = 1
    var rhsScale = 1
    for axis in (0..<rank).reversed() {
      let coordinate = remainder % outputDims[axis]
      remainder /= outputDims[axis]
      if lhsDims[axis] > 1 { l += coordinate * lhsScale }
      if rhsDims[axis] > 1 { r += coordinate * rhsScale }
      lhsScale *= lhsDims[axis]
      rhsScale *= rhsDims[axis]
    }
    let (lhsBase, rhsBase) = (l * rows * depth, r * depth * columns)
    expected += referenceMatrixProduct(
      rows: rows, columns: columns, depth: depth,
      a: { i, k in adjX ? lhs[lhsBase + k * rows + i] : lhs[lhsBase + i * depth + k] },
      b: { k, j in adjY ? rhs[rhsBase + j * depth + k] : rhs[rhsBase + k * columns + j] }, bias: nil,
      lower: -.infinity, upper: .infinity)
  }
  return expected
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

/// `C[M×N] = A[M×K] · B[K×N]` with A and B read through index closures.
func referenceMatrixProduct(
  rows: Int, columns: Int, depth: Int, a: (Int, Int) -> Float, b: (Int, Int) -> Float, bias: [Float]?,
  lower: Float, upper: Float
) -> [Expected] {
  var result: [Expected] = []
  for i in 0..<rows {
    for j in 0..<columns {
      var sum = 0.0
      var magnitude = 0.0
      for k in 0..<depth {
        let product = Double(a(i, k)) * Double(b(k, j))
        sum += product
        magnitude += abs(product)
      }
      let biasValue = Double(bias?[j] ?? 0)
      result.append(Expected(value: referenceClamp(sum + biasValue, lower, upper), magnitude: magnitude + abs(biasValue)))
    }
  }
  return result
}

import XCTest

@testable import TFLiteRuntime

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
      XCTFail("\(message): element \(index) is \(value), expected \(reference.value) ± \(tolerance)", file: file, line: line)
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

/// The `count` floats at `pointer`.
func floats(_ pointer: UnsafePointer<Float>, _ count: Int) -> [Float] { Array(UnsafeBufferPointer(start: pointer, count: count)) }

/// The activation ranges a fused-activation test cycles through.
let testActivations: [(name: String, range: FloatClampRange)] = [
  ("none", .none), ("relu", .relu), ("relu_n1_to_1", .reluMinusOneToOne), ("relu6", .relu6),
]
