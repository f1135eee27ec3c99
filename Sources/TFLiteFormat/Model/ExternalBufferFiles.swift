// External buffer files (schema 3d): a tensor whose `external_buffer` is not 0 keeps its constant
// data in the `ExternalBuffer` with that `id`, at `offset` (length `length`) in the file its group
// names (`ExternalBufferGroup.name`, a path relative to the model's folder, as LiteRT's weight
// loader resolves it). This reader refuses names that could leave that folder (absolute paths,
// `..` components), maps each file a tensor needs once, and checks every external buffer range of
// an opened file against the file's length.

/// Resolves and maps the files external buffers live in.
enum ExternalBufferFiles {
  /// Why `name` cannot name the file of an external buffer group, or nil when it can: it must be
  /// a non-empty relative path without `..` components (it may not leave the model's folder).
  static func problem(withName name: String) -> String? {
    guard !name.isEmpty else { return "the name is empty" }
    guard !name.contains("\0") else { return "the name contains a NUL character" }
    let isWindowsDrive = name.count >= 2 && name.dropFirst().first == ":" && (name.first?.isLetter ?? false)
    guard !name.hasPrefix("/"), !name.hasPrefix("\\"), !isWindowsDrive else {
      return "'\(name)' is an absolute path; external files must lie in the model's folder"
    }
    let components = name.split(whereSeparator: { $0 == "/" || $0 == "\\" })
    guard !components.contains("..") else {
      return "'\(name)' climbs out with '..'; external files must lie in the model's folder"
    }
    return nil
  }

  /// The path of external file `name` in `directory`.
  static func path(of name: String, in directory: String) -> String {
    directory.hasSuffix("/") ? directory + name : directory + "/" + name
  }

  /// Maps the file of every group that holds a tensor's data, found in `directory`, and checks that
  /// every external buffer of an opened file lies inside it. Returns the files by group index.
  static func open(for model: Model, in directory: String?) throws -> [Int: ModelStorage] {
    let bufferIndices = model.externalBufferIndicesByID
    var files: [Int: ModelStorage] = [:]
    for (subgraphIndex, subgraph) in model.subgraphs.enumerated() {
      for (tensorIndex, tensor) in subgraph.tensors.enumerated() where tensor.externalBuffer != 0 {
        // `ModelValidator` checked that the id and its group exist and that the group's name is usable.
        guard let bufferIndex = bufferIndices[tensor.externalBuffer] else { continue }
        let group = Int(model.externalBuffers[bufferIndex].group)
        guard files[group] == nil else { continue }
        let name = model.externalBufferGroups[group].name ?? ""
        let user = "tensor \(tensorIndex) '\(tensor.name ?? "")' of subgraph \(subgraphIndex)"
        guard let directory else {
          throw ModelFormatError(
            message: "\(user) keeps its data in the external file '\(name)' (Model.external_buffer_groups[\(group)]), "
              + "but the model was read from memory with no folder to find that file in: "
              + "read it with TFLiteModel(contentsOfFile:) or pass externalFilesDirectory",
            offset: nil)
        }
        do {
          files[group] = try ModelStorage(contentsOfFile: path(of: name, in: directory))
        } catch let error as ModelFormatError {
          throw ModelFormatError(
            message: "the external file of Model.external_buffer_groups[\(group)] '\(name)', which holds the data of "
              + "\(user): \(error.message)",
            offset: nil)
        }
      }
    }
    for (index, buffer) in model.externalBuffers.enumerated() {
      guard let file = files[Int(buffer.group)] else { continue }
      let end = buffer.offset.addingReportingOverflow(buffer.length)
      guard !end.overflow, end.partialValue <= UInt64(file.bytes.count) else {
        let name = model.externalBufferGroups[Int(buffer.group)].name ?? ""
        throw ModelFormatError(
          message: "Model.external_buffers[\(index)] (id \(buffer.id)): offset \(buffer.offset) + length "
            + "\(buffer.length) lies beyond the end of the \(file.bytes.count)-byte external file '\(name)'",
          offset: nil)
      }
    }
    return files
  }
}

extension Model {
  /// The index in `external_buffers` of each external buffer id (the first, should ids repeat).
  var externalBufferIndicesByID: [UInt32: Int] {
    Dictionary(externalBuffers.enumerated().map { ($1.id, $0) }, uniquingKeysWith: { first, _ in first })
  }
}
