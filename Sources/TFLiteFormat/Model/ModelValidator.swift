/// The checks that need the whole decoded model: every index in range, operator codes usable,
/// constant data sized like its tensor, data stored after the FlatBuffer inside the file.
struct ModelValidator {
  /// The decoded model.
  let model: Model
  /// Size of the whole file, for `offset`/`size` ranges stored after the FlatBuffer.
  let fileSize: Int

  /// The schema version this reader understands (the `3` of `TFL3`).
  static let schemaVersion: UInt32 = 3

  /// Throws the first problem found.
  func validate() throws {
    guard model.version == Self.schemaVersion else {
      throw ModelFormatError(message: "Model.version is \(model.version); only schema version \(Self.schemaVersion) is supported", offset: nil)
    }
    guard !model.subgraphs.isEmpty else { throw ModelFormatError(message: "Model.subgraphs is empty: the model has no graph", offset: nil) }
    for (index, buffer) in model.buffers.enumerated() where buffer.offset > 1 {
      try requireInFile(offset: buffer.offset, size: buffer.size, what: "Model.buffers[\(index)]")
    }
    for (index, code) in model.operatorCodes.enumerated() where code.resolvedBuiltinCode == .custom {
      guard code.customCode != nil else {
        throw ModelFormatError(message: "Model.operator_codes[\(index)] is CUSTOM but has no custom_code", offset: nil)
      }
    }
    for (index, entry) in model.metadata.enumerated() {
      try requireIndex(entry.buffer, below: model.buffers.count, "Model.metadata[\(index)].buffer", "buffers")
    }
    for (index, buffer) in model.metadataBuffer.enumerated() {
      try requireIndex(buffer, below: model.buffers.count, "Model.metadata_buffer[\(index)]", "buffers")
    }
    for (index, signature) in model.signatureDefs.enumerated() {
      try validate(signature, named: "Model.signature_defs[\(index)]")
    }
    for (index, subgraph) in model.subgraphs.enumerated() {
      try validate(subgraph, named: "Model.subgraphs[\(index)]")
    }
  }

  private func validate(_ signature: SignatureDef, named name: String) throws {
    try requireIndex(signature.subgraphIndex, below: model.subgraphs.count, "\(name).subgraph_index", "subgraphs")
    let tensorCount = model.subgraphs[Int(signature.subgraphIndex)].tensors.count
    for (list, maps) in [("inputs", signature.inputs), ("outputs", signature.outputs)] {
      for (index, map) in maps.enumerated() {
        try requireIndex(map.tensorIndex, below: tensorCount, "\(name).\(list)[\(index)].tensor_index", "tensors in its subgraph")
      }
    }
  }

  private func validate(_ subgraph: SubGraph, named name: String) throws {
    let tensorCount = subgraph.tensors.count
    for (list, indices) in [("inputs", subgraph.inputs), ("outputs", subgraph.outputs)] {
      for (position, index) in indices.enumerated() {
        try requireIndex(index, below: tensorCount, "\(name).\(list)[\(position)]", "tensors")
      }
    }
    for (index, tensor) in subgraph.tensors.enumerated() {
      try validate(tensor, named: "\(name).tensors[\(index)]")
    }
    for (index, op) in subgraph.operators.enumerated() {
      // Names are formatted only for an error: a model has thousands of operands.
      func opName() -> String { "\(name).operators[\(index)]" }
      try requireIndex(op.opcodeIndex, below: model.operatorCodes.count, "\(opName()).opcode_index", "operator codes")
      func requireOperands(_ indices: [Int32], _ list: String) throws {
        for (position, tensor) in indices.enumerated() where tensor != -1 {
          try requireIndex(tensor, below: tensorCount, "\(opName()).\(list)[\(position)]", "tensors (-1 marks an absent optional operand)")
        }
      }
      try requireOperands(op.inputs, "inputs")
      try requireOperands(op.outputs, "outputs")
      try requireOperands(op.intermediates, "intermediates")
      if op.largeCustomOptionsOffset > 1 {
        try requireInFile(offset: op.largeCustomOptionsOffset, size: op.largeCustomOptionsSize, what: "\(opName()).large_custom_options")
      }
      for (field, subgraphIndex) in Self.subgraphReferences(of: op.builtinOptions) {
        try requireIndex(subgraphIndex, below: model.subgraphs.count, "\(opName()).builtin_options.\(field)", "subgraphs")
      }
    }
  }

  /// The subgraph indices that control-flow options refer to, by schema field name.
  private static func subgraphReferences(of options: BuiltinOptions) -> [(String, Int64)] {
    switch options {
    case .ifOptions(let value):
      return [("then_subgraph_index", Int64(value.thenSubgraphIndex)), ("else_subgraph_index", Int64(value.elseSubgraphIndex))]
    case .whileOptions(let value):
      return [("cond_subgraph_index", Int64(value.condSubgraphIndex)), ("body_subgraph_index", Int64(value.bodySubgraphIndex))]
    case .callOnceOptions(let value):
      return [("init_subgraph_index", Int64(value.initSubgraphIndex))]
    case .callOptions(let value):
      return [("subgraph", Int64(value.subgraph))]
    default:
      return []
    }
  }

  private func validate(_ tensor: Tensor, named name: @autoclosure () -> String) throws {
    try requireIndex(tensor.buffer, below: model.buffers.count, "\(name()).buffer", "buffers")
    if let dimension = tensor.shape.first(where: { $0 < 0 }) {
      throw ModelFormatError(message: "\(name()).shape \(tensor.shape) has the negative dimension \(dimension)", offset: nil)
    }
    if let dimension = tensor.shapeSignature.first(where: { $0 < -1 }) {
      throw ModelFormatError(
        message: "\(name()).shape_signature \(tensor.shapeSignature) has dimension \(dimension) (only -1 may mark an unknown size)",
        offset: nil)
    }
    var elementCount = 1
    for dimension in tensor.shape {
      let product = elementCount.multipliedReportingOverflow(by: Int(dimension))
      guard !product.overflow else {
        throw ModelFormatError(message: "\(name()).shape \(tensor.shape) has more elements than this platform can count", offset: nil)
      }
      elementCount = product.partialValue
    }
    guard let bits = tensor.type.bitsPerElement else { return }
    let totalBits = elementCount.multipliedReportingOverflow(by: bits)
    guard !totalBits.overflow else {
      throw ModelFormatError(message: "\(name()): \(elementCount) elements of \(tensor.type) do not fit in memory", offset: nil)
    }
    guard tensor.sparsity == nil, let data = model.buffers[Int(tensor.buffer)].dataRange else { return }
    let packedSize = totalBits.partialValue / 8 + (totalBits.partialValue % 8 == 0 ? 0 : 1)
    // Sub-byte types may also be stored one value a byte.
    guard data.count == packedSize || (bits < 8 && data.count == elementCount) else {
      throw ModelFormatError(
        message: "\(name()) (\(tensor.name ?? "unnamed"), \(tensor.type) \(tensor.shape)) needs \(packedSize) bytes of data "
          + "but buffer \(tensor.buffer) holds \(data.count)",
        offset: data.offset)
    }
  }

  /// Throws unless `offset ..< offset + size` lies inside the file.
  private func requireInFile(offset: UInt64, size: UInt64, what: String) throws {
    let end = offset.addingReportingOverflow(size)
    guard !end.overflow, end.partialValue <= UInt64(fileSize) else {
      throw ModelFormatError(
        message: "\(what): offset \(offset) + size \(size) lies beyond the end of the \(fileSize)-byte file",
        offset: Int(exactly: offset))
    }
  }

  /// Throws unless `0 <= index < count`.
  private func requireIndex(
    _ index: some BinaryInteger, below count: Int, _ what: @autoclosure () -> String, _ things: String
  ) throws {
    guard let position = Int(exactly: index), position >= 0, position < count else {
      throw ModelFormatError(message: "\(what()) is \(index), but the model has \(count) \(things)", offset: nil)
    }
  }
}
