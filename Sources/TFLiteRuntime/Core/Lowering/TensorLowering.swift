// The tensors of a subgraph as the runtime holds them, made once from the schema's: element types
// mapped by a switch, quantization parameters mapped, sparse constants expanded to dense values
// and INT4 constants stored one value a byte packed two a byte. After this no kernel meets a
// sparse or unpacked INT4 constant. Tensors no kernel can use (`TensorSupport`) are reported
// instead, with a stand-in no node is built on.

import TFLiteFormat
import TFLiteLinearAlgebra

enum TensorLowering {
  /// The runtime tensors of `subgraph`, by index, and why no kernel can use some of them (by index,
  /// see ``TensorSupport``). Such a tensor is lowered as a data-less UINT8 stand-in: lowering
  /// refuses every node that touches it, so no kernel ever sees one.
  static func tensors(of subgraph: SubGraph, model: TFLiteModel) throws -> (tensors: [RuntimeTensor], problems: [Int: String]) {
    let adopted = preparedOutputTypes(of: subgraph, model: model)
    var problems: [Int: String] = [:]
    let tensors = try subgraph.tensors.enumerated().map { index, tensor in
      let type = adopted[index] ?? tensor.type
      if let problem = TensorSupport.problem(with: tensor, type: type, model: model) {
        problems[index] = problem
        let shape = tensor.shape.map(Int.init)
        return RuntimeTensor(
          index: index, name: tensor.name ?? "", type: .uint8, shape: shape, shapeSignature: shape, quantization: nil,
          isVariable: false, constantData: nil)
      }
      return try runtimeTensor(tensor, index: index, declaredType: type, model: model)
    }
    return (tensors, problems)
  }

  /// Where LiteRT's kernels set an output's element type while preparing instead of checking the
  /// one the file declares (which is FLOAT32, the schema default, in models written by hand with
  /// `flatc` from JSON that leave `type` out): the output takes the type of one of its inputs
  /// (ADD, SUB, DIV, MAXIMUM, MINIMUM, SQUARED_DIFFERENCE, FLOOR_DIV, FLOOR_MOD, POW, ADD_N, NEG,
  /// ZEROS_LIKE: the first input; SELECT, SELECT_V2: the second), or BOOL (EQUAL, NOT_EQUAL,
  /// LESS, LESS_EQUAL, GREATER, GREATER_EQUAL). Each was checked against LiteRT with
  /// `Scripts/make_adoption_models.py`. Returns the adopted type of every tensor (nil: none), by
  /// tensor index, found in execution order so that an adopted type flows on to later nodes;
  /// constants keep their own type. (An array, not an `Int`-keyed dictionary: the first
  /// `Int: Hashable` use of a process costs a scan of every protocol conformance record.)
  static func preparedOutputTypes(of subgraph: SubGraph, model: TFLiteModel) -> [TensorType?] {
    var adopted = [TensorType?](repeating: nil, count: subgraph.tensors.count)
    for operation in subgraph.operators {
      guard let output = operation.outputs.first, output >= 0, operation.outputs.count == 1,
        Int(output) < subgraph.tensors.count, model.tensorData(subgraph.tensors[Int(output)]).count == 0
      else { continue }
      let code = model.model.operatorCodes[Int(operation.opcodeIndex)].resolvedBuiltinCode
      func inputType(_ position: Int) -> TensorType? {
        guard position < operation.inputs.count, operation.inputs[position] >= 0 else { return nil }
        let index = Int(operation.inputs[position])
        return adopted[index] ?? subgraph.tensors[index].type
      }
      switch code {
      case .add, .sub, .div, .maximum, .minimum, .squaredDifference, .floorDiv, .floorMod, .pow, .addN, .neg,
        .zerosLike:
        adopted[Int(output)] = inputType(0)
      case .select, .selectV2:
        adopted[Int(output)] = inputType(1)
      case .equal, .notEqual, .less, .lessEqual, .greater, .greaterEqual:
        adopted[Int(output)] = .bool
      default:
        continue
      }
    }
    return adopted
  }

  /// Builds the runtime tensor for schema tensor `tensor`, of element type `declaredType` (the
  /// file's, or the one LiteRT's prepare step gives it).
  private static func runtimeTensor(
    _ tensor: TFLiteFormat.Tensor, index: Int, declaredType: TensorType, model: TFLiteModel
  ) throws -> RuntimeTensor {
    let name = tensor.name ?? ""
    let shape = tensor.shape.map(Int.init)
    // `TensorSupport` turned every type without an element type into a problem.
    let type = ElementType(declaredType).unsafelyUnwrapped
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

  /// Replaces the data of the sparse constant `tensor` by its dense expansion, which it owns, and
  /// keeps how to expand it again (``RuntimeTensor/rebuildValues``): the runtime frees the dense
  /// values once their readers copied them. The stored values' file pages are released after each
  /// expansion (only a rebuild reads them again).
  private static func densify(
    _ tensor: RuntimeTensor, stored: UnsafeRawPointer, storedByteCount: Int, sparsity: SparsityParameters,
    model: TFLiteModel
  ) throws {
    let elementSize = tensor.type.byteCount
    guard elementSize > 0 else {
      throw RuntimeError.invalidModel("sparse constant \(tensor.summary) has no fixed element size")
    }
    let (denseShape, summary) = (tensor.shape, tensor.summary)
    // Planned again for a rebuild rather than kept: the plan holds an index per stored value.
    let plan: () throws -> Densifier = {
      do {
        return try Densifier(
          denseShape: denseShape, format: try SparsityFormat(sparsity, model: model),
          valueCount: storedByteCount / elementSize)
      } catch {
        throw RuntimeError.invalidModel("sparse constant \(summary): \(error)")
      }
    }
    let expand = { (densifier: Densifier, dense: UnsafeMutableRawPointer) in
      densifier.run(values: stored, into: dense, elementSize: elementSize)
      model.releaseResidentPages(of: UnsafeRawBufferPointer(start: stored, count: storedByteCount))
    }
    let densifier = try plan()
    tensor.allocateOwnedMemory()
    expand(densifier, tensor.data.unsafelyUnwrapped)
    tensor.rebuildValues = { dense in expand(try plan(), dense) }
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
