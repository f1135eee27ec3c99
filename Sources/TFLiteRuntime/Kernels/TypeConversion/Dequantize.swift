// DEQUANTIZE: float16 → float32, and int8 / uint8 / int16 → float32 as `scale * (q - zeroPoint)`
// per tensor or per channel.

import TFLiteFormat

/// Widens `count` half-precision values to float32.
func dequantizeHalf(_ source: UnsafeRawPointer, to destination: UnsafeMutablePointer<Float>, count: Int) {
  for index in 0..<count {
    let bits = source.loadUnaligned(fromByteOffset: index &* 2, as: UInt16.self)
    destination[index] = HalfPrecision.float(fromBits: bits)
  }
}

/// Dequantizes `count` values with one scale and zero point. The product is formed in double
/// precision, as TFLite's reference kernel does, then rounded to float.
func dequantizePerTensor<Quantized: FixedWidthInteger>(
  _ source: UnsafeRawPointer, _ type: Quantized.Type, to destination: UnsafeMutablePointer<Float>, count: Int,
  scale: Float, zeroPoint: Int
) {
  let wideScale = Double(scale)
  let zero = Int32(truncatingIfNeeded: zeroPoint)
  for index in 0..<count {
    let value = Int32(truncatingIfNeeded: loadElement(source, index, as: Quantized.self))
    destination[index] = Float(wideScale * Double(value &- zero))
  }
}

/// Dequantizes a tensor of `shape` whose axis `axis` has its own scale and zero point per index
/// (`zeroPoints` may hold one shared value). The product is formed in float, as TFLite does.
func dequantizePerChannel<Quantized: FixedWidthInteger>(
  _ source: UnsafeRawPointer, _ type: Quantized.Type, to destination: UnsafeMutablePointer<Float>, shape: [Int],
  axis: Int, scales: [Float], zeroPoints: [Int]
) {
  let outer = shape[..<axis].reduce(1, *)
  let channels = shape[axis]
  let inner = shape[(axis + 1)...].reduce(1, *)
  scales.withUnsafeBufferPointer { scales in
    zeroPoints.withUnsafeBufferPointer { zeroPoints in
      var index = 0
      for _ in 0..<outer {
        for channel in 0..<channels {
          let scale = scales[channel]
          let zero = Int32(truncatingIfNeeded: zeroPoints[zeroPoints.count == 1 ? 0 : channel])
          for _ in 0..<inner {
            let value = Int32(truncatingIfNeeded: loadElement(source, index, as: Quantized.self))
            destination[index] = scale * Float(value &- zero)
            index += 1
          }
        }
      }
    }
  }
}

// MARK: - Kernel

/// DEQUANTIZE of float16, int8, uint8 and int16 tensors (per tensor or per channel) to float32.
/// Constant inputs (fp16 or int8 weights) are folded once at prepare time by the runtime.
final class DequantizeKernel: Kernel {
  private static let opName = "DEQUANTIZE"
  private let input: RuntimeTensor
  private let output: RuntimeTensor

  init(node: Node) throws {
    (input, output) = try node.singleInputAndOutput()
    guard output.type == .float32 else { throw KernelError.unsupported("DEQUANTIZE to \(output.type.name)") }
    guard [.float16, .int8, .uint8, .int16].contains(input.type) else {
      throw KernelError.unsupported("DEQUANTIZE from \(input.type.name)")
    }
  }

  func prepare(_ context: inout PrepareContext) throws {
    if input.type != .float16 {
      try QuantizationValidation.validate(input, op: Self.opName)
      if input.type == .int16, let quantization = input.quantization, quantization.zeroPoints.contains(where: { $0 != 0 }) {
        throw KernelError.invalid("DEQUANTIZE: int16 tensor \(QuantizationValidation.describe(input)) must have zero point 0")
      }
    }
    output.shape = input.shape
  }

  func eval(_ context: EvalContext) throws {
    let (source, destination) = try evalPointers(input, output, op: Self.opName)
    let floats = destination.assumingMemoryBound(to: Float.self)
    let count = input.elementCount
    guard let quantization = input.quantization, input.type != .float16 else {
      dequantizeHalf(source, to: floats, count: count)
      return
    }
    switch input.type {
    case .int8: dequantize(source, Int8.self, to: floats, quantization: quantization)
    case .uint8: dequantize(source, UInt8.self, to: floats, quantization: quantization)
    default: dequantize(source, Int16.self, to: floats, quantization: quantization)
    }
  }

  private func dequantize<Quantized: FixedWidthInteger>(
    _ source: UnsafeRawPointer, _ type: Quantized.Type, to destination: UnsafeMutablePointer<Float>,
    quantization: Quantization
  ) {
    if quantization.isPerAxis {
      dequantizePerChannel(
        source, type, to: destination, shape: input.shape, axis: quantization.axis, scales: quantization.scales,
        zeroPoints: quantization.zeroPoints)
    } else {
      dequantizePerTensor(
        source, type, to: destination, count: input.elementCount, scale: quantization.scale,
        zeroPoint: quantization.zeroPoint)
    }
  }
}
