// DEQUANTIZE: float16 → float32, and int8 / uint8 / int16 → float32 as `scale * (q - zeroPoint)`
// per tensor or per channel.

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
