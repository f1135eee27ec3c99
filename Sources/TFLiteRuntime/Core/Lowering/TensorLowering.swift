// The tensors of a subgraph as the runtime holds them, made once from the schema's: element types
// mapped by a switch, quantization parameters mapped, sparse constants expanded to dense values
// and INT4 constants stored one value a byte packed two a byte. After this no kernel meets a
// sparse or unpacked INT4 constant.

import TFLiteFormat
import TFLiteLinearAlgebra

enum TensorLowering {
  /// The runtime tensors of `subgraph`, by index.
  static func tensors(of subgraph: SubGraph, model: TFLiteModel) throws -> [RuntimeTensor] {
    try subgraph.tensors.enumerated().map { index, tensor in try runtimeTensor(tensor, index: index, model: model) }
  }

  /// Builds the runtime tensor for schema tensor `tensor`.
  private static func runtimeTensor(_ tensor: TFLiteFormat.Tensor, index: Int, model: TFLiteModel) throws
    -> RuntimeTensor
  {
    let name = tensor.name ?? ""
    let shape = tensor.shape.map(Int.init)
    guard let type = ElementType(tensor.type) else {
      throw RuntimeError.invalidModel(
        "tensor \(index) '\(name)' has type \(tensor.type.name), which the runtime does not know")
    }
    let constant = model.tensorData(tensor)
    let runtimeTensor = RuntimeTensor(
      index: index, name: name, type: type, shape: shape,
      shapeSignature: tensor.shapeSignature.isEmpty ? shape : tensor.shapeSignature.map(Int.init),
      quantization: tensor.quantization.flatMap(quantization), isVariable: tensor.isVariable,
      constantData: constant.count > 0 ? constant.baseAddress : nil)
    if let sparsity = tensor.sparsity, let stored = constant.baseAddress {
      try densify(runtimeTensor, stored: stored, storedByteCount: constant.count, sparsity: sparsity, model: model)
    } else if type == .int4, constant.count > 1, constant.count == runtimeTensor.elementCount {
      packInt4Constant(runtimeTensor, unpacked: constant)
    }
    return runtimeTensor
  }

  /// The runtime's quantization parameters, or nil when the schema gives no scale.
  private static func quantization(_ parameters: QuantizationParameters) -> Quantization? {
    guard !parameters.scale.isEmpty else { return nil }
    return Quantization(
      scales: parameters.scale, zeroPoints: parameters.zeroPoint.map { Int(truncatingIfNeeded: $0) },
      axis: Int(parameters.quantizedDimension))
  }

  /// Replaces the data of the sparse constant `tensor` by its dense expansion, which it owns.
  private static func densify(
    _ tensor: RuntimeTensor, stored: UnsafeRawPointer, storedByteCount: Int, sparsity: SparsityParameters,
    model: TFLiteModel
  ) throws {
    let elementSize = tensor.type.byteCount
    guard elementSize > 0 else {
      throw RuntimeError.invalidModel("sparse constant \(tensor.summary) has no fixed element size")
    }
    do {
      let densifier = try Densifier(
        denseShape: tensor.shape, format: try SparsityFormat(sparsity, model: model),
        valueCount: storedByteCount / elementSize)
      tensor.allocateOwnedMemory()
      densifier.run(values: stored, into: tensor.data.unsafelyUnwrapped, elementSize: elementSize)
    } catch {
      throw RuntimeError.invalidModel("sparse constant \(tensor.summary): \(error)")
    }
  }

  /// Kernels read INT4 constants packed two values a byte (the first in the low nibble), as the
  /// converter stores them; a model that stores one value a byte gets a packed copy, made once.
  private static func packInt4Constant(_ tensor: RuntimeTensor, unpacked: UnsafeRawBufferPointer) {
    tensor.allocateOwnedMemory()
    let packed = tensor.pointer(as: UInt8.self)
    for (index, value) in unpacked.enumerated() {
      let nibble = value & 0x0F
      packed[index / 2] |= index % 2 == 0 ? nibble : nibble << 4
    }
  }
}

/// Value `index` of a packed INT4 constant (two values a byte, the first in the low nibble, as
/// lowering stores every INT4 constant), sign-extended.
@inline(__always)
func int4Value(_ data: UnsafeRawPointer, at index: Int) -> Int8 {
  let byte = data.load(fromByteOffset: index / 2, as: Int8.self)
  return index % 2 == 0 ? (byte << 4) >> 4 : byte >> 4
}
