import TFLiteFormat

// RFFT2D: the 2-D discrete Fourier transform of the two innermost axes of a float32 tensor,
// cropped or zero-padded to fft_length = [height, width] (int32, both powers of two, as TFLite
// requires), keeping the width / 2 + 1 non-negative frequencies of the last axis: complex64
// [..., height, width / 2 + 1]. Computed in float64 with radix-2 FFTs (rows, then columns), as
// TFLite computes it in double precision.
// REAL, IMAG, COMPLEX_ABS: the parts and the magnitude of complex64 values, as float32.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// In-place radix-2 complex FFTs over split real / imaginary float64 buffers.
struct RadixTwoTransform {
  /// Transform length (a power of two).
  let length: Int
  /// cos(2πk / length) and −sin(2πk / length) for k < length / 2.
  private let twiddles: [(cosine: Double, sine: Double)]

  /// Plans transforms of `length` points.
  init(length: Int) {
    self.length = length
    twiddles = (0..<(length / 2)).map { k in
      let angle = -2 * Double.pi * Double(k) / Double(length)
      return (cos(angle), sin(angle))
    }
  }

  /// Transforms `length` points spaced `stride` apart, in place (forward, no scaling).
  func run(real: UnsafeMutablePointer<Double>, imaginary: UnsafeMutablePointer<Double>, stride: Int) {
    guard length > 1 else { return }
    // Bit-reversal permutation.
    var reversed = 0
    for index in 1..<length {
      var bit = length >> 1
      while reversed & bit != 0 {
        reversed ^= bit
        bit >>= 1
      }
      reversed |= bit
      if index < reversed {
        swap(&real[index * stride], &real[reversed * stride])
        swap(&imaginary[index * stride], &imaginary[reversed * stride])
      }
    }
    twiddles.withUnsafeBufferPointer { table in
      var span = 2
      while span <= length {
        let half = span / 2
        let step = length / span
        for start in Swift.stride(from: 0, to: length, by: span) {
          for offset in 0..<half {
            let (cosine, sine) = table[offset * step]
            let upper = (start + offset) * stride
            let lower = (start + offset + half) * stride
            let productReal = real[lower] * cosine - imaginary[lower] * sine
            let productImaginary = real[lower] * sine + imaginary[lower] * cosine
            real[lower] = real[upper] - productReal
            imaginary[lower] = imaginary[upper] - productImaginary
            real[upper] += productReal
            imaginary[upper] += productImaginary
          }
        }
        span *= 2
      }
    }
  }
}

/// RFFT2D of float32 input with a constant int32 fft_length.
final class RealFourierTransform2DKernel: Kernel {
  private static let opName = "RFFT2D"
  private let input: RuntimeTensor
  private let fftLength: RuntimeTensor
  private let output: RuntimeTensor
  private var rows = RadixTwoTransform(length: 1)
  private var columns = RadixTwoTransform(length: 1)

  init(node: Node) throws {
    (input, fftLength, output) = try node.twoInputsAndOutput()
    guard input.type == .float32, fftLength.type == .int32, output.type == .complex64 else {
      throw KernelError.unsupported(
        "\(Self.opName) from \(input.type.name) with \(fftLength.type.name) lengths to \(output.type.name)")
    }
  }

  func prepare(_ context: inout PrepareContext) throws {
    guard input.shape.count >= 2, fftLength.shape == [2] else {
      throw KernelError.invalid("\(Self.opName) needs input of rank ≥ 2 and fft_length [2], got \(input.shape), \(fftLength.shape)")
    }
    guard fftLength.hasValuesForPrepare, let lengths = fftLength.data?.assumingMemoryBound(to: Int32.self) else {
      throw KernelError.needsInputValues("\(Self.opName) fft_length is computed at run time")
    }
    let (height, width) = (Int(lengths[0]), Int(lengths[1]))
    guard height > 0, width > 0, height & (height - 1) == 0, width & (width - 1) == 0, height <= 1 << 20, width <= 1 << 20
    else {
      throw KernelError.invalid("\(Self.opName): fft_length \(height) × \(width) must be powers of two")
    }
    let outputShape = Array(input.shape.dropLast(2)) + [height, width / 2 + 1]
    _ = try checkedElementCount(outputShape, op: Self.opName)
    if rows.length != width { rows = RadixTwoTransform(length: width) }
    if columns.length != height { columns = RadixTwoTransform(length: height) }
    output.shape = outputShape
    // A float64 real / imaginary plane of height × width points.
    context.requestScratch(bytes: 2 * height * width * MemoryLayout<Double>.stride)
  }

  func eval(_ context: EvalContext) throws {
    guard let scratch = context.scratch else { throw KernelError.invalid("\(Self.opName) was not prepared") }
    let (source, destination) = try evalPointers(input, output, op: Self.opName)
    let values = source.assumingMemoryBound(to: Float.self)
    let spectrum = destination.assumingMemoryBound(to: Float.self)
    let (height, width) = (columns.length, rows.length)
    let (inputHeight, inputWidth) = (input.shape[input.shape.count - 2], input.shape[input.shape.count - 1])
    let real = scratch.assumingMemoryBound(to: Double.self)
    let imaginary = real + height * width
    let kept = width / 2 + 1
    for slice in 0..<(output.elementCount / max(1, height * kept)) {
      let plane = values + slice * inputHeight * inputWidth
      for y in 0..<height {
        for x in 0..<width {
          real[y * width + x] = y < inputHeight && x < inputWidth ? Double(plane[y * inputWidth + x]) : 0
          imaginary[y * width + x] = 0
        }
        rows.run(real: real + y * width, imaginary: imaginary + y * width, stride: 1)
      }
      for x in 0..<kept {
        columns.run(real: real + x, imaginary: imaginary + x, stride: width)
      }
      let target = spectrum + slice * height * kept * 2
      for y in 0..<height {
        for x in 0..<kept {
          target[(y * kept + x) * 2] = Float(real[y * width + x])
          target[(y * kept + x) * 2 + 1] = Float(imaginary[y * width + x])
        }
      }
    }
  }
}

/// REAL, IMAG or COMPLEX_ABS of complex64 values, as float32.
final class ComplexPartKernel: Kernel {
  private enum Part { case real, imaginary, magnitude }
  private let input: RuntimeTensor
  private let output: RuntimeTensor
  private let part: Part

  init(node: Node) throws {
    (input, output) = try node.singleInputAndOutput()
    guard input.type == .complex64, output.type == .float32 else {
      throw KernelError.unsupported("\(node.opName) from \(input.type.name) to \(output.type.name)")
    }
    part = node.op == .builtin(.real) ? .real : node.op == .builtin(.imag) ? .imaginary : .magnitude
  }

  func prepare(_ context: inout PrepareContext) throws {
    output.shape = input.shape
  }

  func eval(_ context: EvalContext) throws {
    let (source, destination) = try evalPointers(input, output, op: "complex part")
    let pairs = source.assumingMemoryBound(to: Float.self)
    let results = destination.assumingMemoryBound(to: Float.self)
    for index in 0..<output.elementCount {
      let (re, im) = (pairs[2 * index], pairs[2 * index + 1])
      switch part {
      case .real: results[index] = re
      case .imaginary: results[index] = im
      case .magnitude: results[index] = hypotf(re, im)
      }
    }
  }
}
