import Foundation
internal import TFLiteRuntime

/// Why a tensor of the runtime could not be read or written through the public API. The
/// ``Interpreter`` and the ``SignatureRunner`` each turn it into their own error.
enum TensorAccessFailure: Error {
  /// The tensor has no memory yet (before `allocateTensors()` or after a resize).
  case notAllocated
  /// ``Tensor/DataType`` has no case for the tensor's element type.
  case unsupportedType
  /// The data given does not have the tensor's byte count; `message` describes the tensor.
  case wrongByteCount(provided: Int, required: Int, message: String)
  /// Typed access with a Swift type that does not match the element type; the text says why.
  case wrongElementType(String)
}

extension RuntimeTensor {
  /// `'input' (FLOAT32 [1, 3], 12 bytes)`: what an error message says about the tensor.
  var layoutDescription: String {
    "'\(name)' (\(type.name) \(Tensor.Shape(shape)), \(byteCount) bytes)"
  }

  /// The public description of the tensor with a copy of its bytes.
  func publicTensor(isAllocated: Bool) throws -> Tensor {
    guard isAllocated, let data else { throw TensorAccessFailure.notAllocated }
    guard let dataType = Tensor.DataType(type) else { throw TensorAccessFailure.unsupportedType }
    return Tensor(
      name: name, dataType: dataType, shape: Tensor.Shape(shape), data: Data(bytes: data, count: byteCount),
      quantizationParameters: QuantizationParameters(quantization))
  }

  /// Copies `bytes` into the tensor, which must have exactly that many bytes.
  func copy(from bytes: UnsafeRawBufferPointer, isAllocated: Bool) throws {
    guard bytes.count == byteCount else {
      throw TensorAccessFailure.wrongByteCount(
        provided: bytes.count, required: byteCount,
        message: "\(layoutDescription) needs \(byteCount) bytes, the data has \(bytes.count)")
    }
    guard isAllocated, let data else { throw TensorAccessFailure.notAllocated }
    if let source = bytes.baseAddress { data.copyMemory(from: source, byteCount: bytes.count) }
  }

  /// The tensor's memory as `Element`s, after checking that `Element` is its element type.
  func typedBuffer<Element: TensorElement>(
    of elementType: Element.Type, isAllocated: Bool
  ) throws -> UnsafeMutableBufferPointer<Element> {
    guard let dataType = Tensor.DataType(type) else { throw TensorAccessFailure.unsupportedType }
    guard dataType == Element.tensorDataType else {
      throw TensorAccessFailure.wrongElementType("\(layoutDescription) cannot be accessed as \(Element.self)")
    }
    guard isAllocated, let data else { throw TensorAccessFailure.notAllocated }
    return UnsafeMutableBufferPointer(start: data.assumingMemoryBound(to: Element.self), count: elementCount)
  }
}
