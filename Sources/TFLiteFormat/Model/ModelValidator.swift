/// The checks that need the whole decoded model: every index in range, operator codes usable,
/// constant data sized like its tensor, data stored after the FlatBuffer inside the file, external
/// buffers well formed (unique ids, existing groups, usable file names; their ranges are checked
/// against the files by ``ExternalBufferFiles``), quantization details naming existing tensors.
struct ModelValidator {
  /// The decoded model.
  let model: Model
  /// Size of the whole file, for `offset`/`size` ranges stored after the FlatBuffer.
  let fileSize: Int
  /// The index in `Model.external_buffers` of each external buffer id.
  private let externalBufferIndices: [UInt32: Int]

  /// A validator of `model`, read from a file of `fileSize` bytes.
  init(model: Model, fileSize: Int) {
    self.model = model
    self.fileSize = fileSize
    externalBufferIndices = model.externalBufferIndicesByID
  }

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
    try validateExternalBuffers()
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

  /// External buffer ids are unique and not 0 (which marks a tensor without one), each group exists
  /// and names a file inside the model's folder, and no range overflows.
  private func validateExternalBuffers() throws {
    for (index, group) in model.externalBufferGroups.enumerated() {
      if let problem = ExternalBufferFiles.problem(withName: group.name ?? "") {
        throw ModelFormatError(message: "Model.external_buffer_groups[\(index)].name: \(problem)", offset: nil)
      }
    }
    var seen: [UInt32: Int] = [:]
    for (index, buffer) in model.externalBuffers.enumerated() {
      let name = "Model.external_buffers[\(index)]"
      guard buffer.id != 0 else {
        throw ModelFormatError(message: "\(name).id is 0, which marks a tensor without an external buffer", offset: nil)
      }
      if let first = seen.updateValue(index, forKey: buffer.id) {
        throw ModelFormatError(message: "\(name).id \(buffer.id) is also the id of Model.external_buffers[\(first)]", offset: nil)
      }
      try requireIndex(buffer.group, below: model.externalBufferGroups.count, "\(name).group", "external buffer groups")
      let end = buffer.offset.addingReportingOverflow(buffer.length)
      guard !end.overflow, Int(exactly: end.partialValue) != nil else {
        throw ModelFormatError(message: "\(name): offset \(buffer.offset) + length \(buffer.length) overflows", offset: nil)
      }
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
      try validateQuantizationDetails(of: tensor, named: "\(name).tensors[\(index)]", tensorCount: tensorCount)
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

  /// Blockwise and multi-axis quantization name their scale tensor (required) and zero-point
  /// tensor (-1 for none) by index in the same subgraph.
  private func validateQuantizationDetails(
    of tensor: Tensor, named name: @autoclosure () -> String, tensorCount: Int
  ) throws {
    let references: (scales: Int32, zeroPoints: Int32, field: String)
    switch tensor.quantization?.details {
    case .blockwiseQuantization(let details)?:
      references = (details.scales, details.zeroPoints, "BlockwiseQuantization")
    case .multiAxisQuantization(let details)?:
      references = (details.scales, details.zeroPoints, "MultiAxisQuantization")
    default:
      return
    }
    let what = "\(name()).quantization.details (\(references.field))"
    try requireIndex(references.scales, below: tensorCount, "\(what).scales", "tensors in its subgraph")
    if references.zeroPoints != -1 {
      try requireIndex(
        references.zeroPoints, below: tensorCount, "\(what).zero_points", "tensors in its subgraph (-1 marks none)")
    }
  }

  /// The external buffer with id `id`, which must exist.
  private func externalBuffer(withID id: UInt32, for name: String) throws -> ExternalBuffer {
    guard let index = externalBufferIndices[id] else {
      throw ModelFormatError(
        message: "\(name).external_buffer is \(id), but no entry of Model.external_buffers has that id", offset: nil)
    }
    return model.externalBuffers[index]
  }

  private func validate(_ tensor: Tensor, named name: @autoclosure () -> String) throws {
    try requireIndex(tensor.buffer, below: model.buffers.count, "\(name()).buffer", "buffers")
    var external: ExternalBuffer?
    if tensor.externalBuffer != 0 {
      external = try externalBuffer(withID: tensor.externalBuffer, for: name())
      guard model.buffers[Int(tensor.buffer)].dataRange == nil else {
        throw ModelFormatError(
          message: "\(name()) has data both in buffer \(tensor.buffer) and in external buffer \(tensor.externalBuffer)",
          offset: nil)
      }
      guard !tensor.isVariable else {
        throw ModelFormatError(message: "\(name()) is a variable tensor but keeps its data in an external buffer", offset: nil)
      }
    }
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
    guard tensor.sparsity == nil else { return }
    let stored: (byteCount: Int, place: String, offset: Int?)
    if let external {
      stored = (Int(external.length), "external buffer \(external.id)", nil)
    } else if let data = model.buffers[Int(tensor.buffer)].dataRange {
      stored = (data.count, "buffer \(tensor.buffer)", data.offset)
    } else {
      return
    }
    let packedSize = totalBits.partialValue / 8 + (totalBits.partialValue % 8 == 0 ? 0 : 1)
    let acceptedSizes = bits < 8 ? [packedSize, elementCount] : [packedSize]
    guard acceptedSizes.contains(stored.byteCount) else {
      throw ModelFormatError(
        message: "\(name()) (\(tensor.name ?? "unnamed"), \(tensor.type) \(tensor.shape)) needs \(packedSize) bytes of data "
          + "but \(stored.place) holds \(stored.byteCount)",
        offset: stored.offset)
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
