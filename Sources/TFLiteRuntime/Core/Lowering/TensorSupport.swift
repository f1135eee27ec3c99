// Which schema tensors no kernel of this runtime can read, and why: element types the runtime does
// not hold (INT2, UINT4, the 8-bit floats, values newer than its schema), quantization its kernels
// do not apply (blockwise, multi-axis, custom or unknown `QuantizationDetails`), and external data
// packed in a way it cannot unpack. Lowering reports every node that reads or writes such a tensor
// as an operator it cannot run, naming the operand, the tensor and the reason; `ModelRunner` and
// `tflite check` both get that list from lowering, so they cannot disagree.

import TFLiteFormat

enum TensorSupport {
  /// Why no kernel can use `tensor` when it has element type `type`, or nil when kernels may.
  static func problem(with tensor: TFLiteFormat.Tensor, type: TensorType, model: TFLiteModel) -> String? {
    if ElementType(type) == nil {
      let known = TensorType.allKnown.contains(type)
      return "type \(type.name), \(known ? "which no kernel of this runtime reads or writes" : "unknown to this runtime's schema")"
    }
    if let problem = quantizationProblem(tensor.quantization?.details) { return problem }
    if let external = model.externalBuffer(of: tensor), let packing = external.packing, !packing.isEmpty,
      packing != "unpacked"
    {
      return "external data packed as '\(packing)', which this runtime cannot unpack"
    }
    return nil
  }

  /// Why quantization `details` cannot be applied by any kernel, or nil when there are none.
  private static func quantizationProblem(_ details: QuantizationDetails?) -> String? {
    let scheme: String
    switch details {
    case nil, .none?:
      return nil
    case .blockwiseQuantization(let blockwise)?:
      let shape = blockwise.blockShape.isEmpty ? "" : ", block shape \(blockwise.blockShape)"
      scheme = "blockwise quantization (block size \(blockwise.blockSize)\(shape), scales in tensor \(blockwise.scales), "
        + "zero points \(zeroPointText(blockwise.zeroPoints)))"
    case .multiAxisQuantization(let multiAxis)?:
      scheme = "multi-axis quantization (axes \(multiAxis.quantizedDimensions), block size \(multiAxis.blockSize), "
        + "scales in tensor \(multiAxis.scales), zero points \(zeroPointText(multiAxis.zeroPoints)))"
    case .customQuantization(let custom)?:
      scheme = "custom quantization (\(custom.custom?.count ?? 0) bytes)"
    case .unknown(let type)?:
      scheme = "quantization details of union type \(type)"
    }
    return "\(scheme), which no kernel of this runtime applies"
  }

  /// `in tensor 4`, or `none` for -1.
  private static func zeroPointText(_ index: Int32) -> String {
    index == -1 ? "none" : "in tensor \(index)"
  }
}
