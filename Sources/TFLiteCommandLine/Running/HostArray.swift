import TFLiteFormat
import TFLiteRuntime

/// A tensor's values held by the tool: what an `.npy` file holds, what is fed to an input, what an
/// output held after a run.
struct HostArray {
  /// Element type.
  var type: ElementType
  /// Shape.
  var shape: [Int]
  /// The elements' bytes, little-endian, row-major.
  var bytes: [UInt8]
  /// The quantization of the tensor the values came from, if any.
  var quantization: Quantization?
  /// Where the values came from (a file path), for messages.
  var origin: String?

  /// Values of `type` and `shape` with the given bytes.
  init(type: ElementType, shape: [Int], bytes: [UInt8], quantization: Quantization? = nil, origin: String? = nil) {
    self.type = type
    self.shape = shape
    self.bytes = bytes
    self.quantization = quantization
    self.origin = origin
  }

  /// A copy of the current contents of `tensor` (empty when it has no memory).
  init(copying tensor: RuntimeTensor) {
    let bytes = tensor.data.map { [UInt8](UnsafeRawBufferPointer(start: $0, count: tensor.byteCount)) } ?? []
    self.init(type: tensor.type, shape: tensor.shape, bytes: bytes, quantization: tensor.quantization)
  }

  /// `FLOAT32 [1, 3]`.
  var typeAndShape: String { "\(type.name) \(formatShape(shape))" }

  /// The number of elements the bytes hold.
  var elementCount: Int { type.byteCount > 0 ? bytes.count / type.byteCount : 0 }

  /// The stored elements as numbers (integers exactly, booleans as 0 and 1), nil for types without
  /// numeric values (strings, complex numbers, resources).
  func numbers() -> [Double]? {
    switch type {
    case .float32: decode(Float.self) { Double($0) }
    case .float64: decode(Double.self) { $0 }
    case .float16: decode(UInt16.self) { Double(HalfPrecision.float(fromBits: $0)) }
    case .bfloat16: decode(UInt16.self) { Double(Float(bitPattern: UInt32($0) << 16)) }
    case .int4, .int8: decode(Int8.self) { Double($0) }
    case .uint8: decode(UInt8.self) { Double($0) }
    case .bool: decode(UInt8.self) { $0 == 0 ? 0 : 1 }
    case .int16: decode(Int16.self) { Double($0) }
    case .uint16: decode(UInt16.self) { Double($0) }
    case .int32: decode(Int32.self) { Double($0) }
    case .uint32: decode(UInt32.self) { Double($0) }
    case .int64: decode(Int64.self) { Double($0) }
    case .uint64: decode(UInt64.self) { Double($0) }
    case .string, .complex64, .complex128, .resource, .variant: nil
    }
  }

  /// The real values: the dequantized numbers for a quantized array (per tensor or per axis),
  /// the plain numbers otherwise.
  func realValues() -> [Double]? {
    guard let numbers = numbers() else { return nil }
    guard let quantization, !quantization.scales.isEmpty, type != .float32, type != .float64 else { return numbers }
    let channelCount = quantization.scales.count
    // Elements between consecutive channels along the quantized axis.
    let axis = quantization.axis
    let stride = channelCount > 1 && axis >= 0 && axis < shape.count ? shape[(axis + 1)...].reduce(1, *) : 1
    return numbers.enumerated().map { index, value in
      let channel = channelCount > 1 ? (index / max(stride, 1)) % channelCount : 0
      let zeroPoint = channel < quantization.zeroPoints.count ? quantization.zeroPoints[channel] : 0
      return Double(quantization.scales[channel]) * (value - Double(zeroPoint))
    }
  }

  /// Reads every element as `Element` and converts it.
  private func decode<Element>(_ element: Element.Type, _ convert: (Element) -> Double) -> [Double] {
    let size = MemoryLayout<Element>.size
    return bytes.withUnsafeBytes { raw in
      (0..<(raw.count / size)).map { convert(raw.loadUnaligned(fromByteOffset: $0 * size, as: Element.self)) }
    }
  }
}

extension HostArray {
  /// Seeded random values for `tensor`'s current type and shape: uniform in [−1, 1) for floats,
  /// the type's whole range for quantized integers, 0..<16 for plain integers (indices, counts),
  /// and 0/1 for booleans.
  static func random(for tensor: RuntimeTensor, generator: inout SeededGenerator) throws -> HostArray {
    let count = tensor.elementCount
    let isQuantized = tensor.quantization != nil
    func integers<Element: FixedWidthInteger>(_ type: Element.Type) -> [UInt8] {
      let range: ClosedRange<Element> = isQuantized ? Element.min...Element.max : 0...15
      return encode((0..<count).map { _ in Element.random(in: range, using: &generator) })
    }
    func floats() -> [Float] { (0..<count).map { _ in Float.random(in: -1..<1, using: &generator) } }
    let bytes: [UInt8]
    switch tensor.type {
    case .float32: bytes = encode(floats())
    case .float64: bytes = encode(floats().map(Double.init))
    case .float16: bytes = encode(floats().map(HalfPrecision.bits(from:)))
    case .int4: bytes = encode((0..<count).map { _ in Int8.random(in: isQuantized ? -8...7 : 0...7, using: &generator) })
    case .int8: bytes = integers(Int8.self)
    case .uint8: bytes = integers(UInt8.self)
    case .int16: bytes = integers(Int16.self)
    case .uint16: bytes = integers(UInt16.self)
    case .int32: bytes = integers(Int32.self)
    case .uint32: bytes = integers(UInt32.self)
    case .int64: bytes = integers(Int64.self)
    case .uint64: bytes = integers(UInt64.self)
    case .bool: bytes = (0..<count).map { _ in UInt8.random(in: 0...1, using: &generator) }
    case .bfloat16, .string, .complex64, .complex128, .resource, .variant:
      throw CommandFailure("cannot make random values for input '\(tensor.name)' of type \(tensor.type.name); give it with --input")
    }
    return HostArray(type: tensor.type, shape: tensor.shape, bytes: bytes, quantization: tensor.quantization)
  }
}

/// The bytes of `values` in memory order.
func encode<Element>(_ values: [Element]) -> [UInt8] {
  values.withUnsafeBytes { [UInt8]($0) }
}

