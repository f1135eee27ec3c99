/// A verified `.tflite` model and the bytes it was read from.
///
/// A file is memory-mapped, in-memory bytes are copied; either way this object owns them, so
/// ``bytes`` and every buffer handed out stay valid for as long as the model lives. Loading
/// verifies the FlatBuffer once (see ``VerificationOptions``), decodes the schema root into
/// ``model``, and checks the graph: indices in range, operator codes resolvable, constant data
/// sized like its tensor, data stored after the FlatBuffer inside the file, and constant data kept
/// in external files (schema 3d `ExternalBuffer`s) inside those files, which must lie in the
/// model's folder or below it.
public final class TFLiteModel: Sendable {
  /// The decoded schema root.
  public let model: Model
  private let storage: ModelStorage
  /// The folder external buffer files are found in (the model file's folder), nil when unknown.
  public let externalFilesDirectory: String?
  /// The mapped external files, by index in `Model.external_buffer_groups`.
  private let externalFiles: [Int: ModelStorage]
  /// Index in `Model.external_buffers` of each external buffer id.
  private let externalBufferIndices: [UInt32: Int]

  /// Maps, verifies and decodes the model file at `path`; external buffer files are looked for in
  /// the file's folder.
  public convenience init(contentsOfFile path: String, options: VerificationOptions = VerificationOptions()) throws {
    try self.init(
      storage: try ModelStorage(contentsOfFile: path), externalFilesDirectory: Self.directory(of: path), options: options)
  }

  /// Copies, verifies and decodes the model in `bytes`; a model that keeps data in external files
  /// needs `externalFilesDirectory`, the folder they lie in.
  public convenience init(
    bytes: [UInt8], externalFilesDirectory: String? = nil, options: VerificationOptions = VerificationOptions()
  ) throws {
    let storage = bytes.withUnsafeBytes { ModelStorage(copying: $0) }
    try self.init(storage: storage, externalFilesDirectory: externalFilesDirectory, options: options)
  }

  private init(storage: ModelStorage, externalFilesDirectory: String?, options: VerificationOptions) throws {
    self.storage = storage
    self.externalFilesDirectory = externalFilesDirectory
    var verifier = FlatBufferVerifier(bytes: storage.bytes, schema: .tflite, options: options)
    let root = try verifier.verifyRoot()
    model = Model(root)
    try ModelValidator(model: model, fileSize: storage.bytes.count).validate()
    externalBufferIndices = model.externalBufferIndicesByID
    externalFiles = try ExternalBufferFiles.open(for: model, in: externalFilesDirectory)
  }

  /// The folder part of `path` (`.` when it has none).
  private static func directory(of path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return "." }
    return slash == path.startIndex ? "/" : String(path[..<slash])
  }

  /// The whole file, valid while this object lives.
  public var bytes: UnsafeRawBufferPointer { storage.bytes }

  /// The file's size in bytes.
  public var fileSize: Int { storage.bytes.count }

  /// The bytes of `range`, clipped to the file.
  public func bytes(in range: ByteRange) -> UnsafeRawBufferPointer {
    let start = min(max(range.offset, 0), storage.bytes.count)
    let end = start + min(max(range.count, 0), storage.bytes.count - start)
    return UnsafeRawBufferPointer(rebasing: storage.bytes[start..<end])
  }

  /// Where the data of buffer `index` lies: after the FlatBuffer when `offset` is above 1,
  /// otherwise inline; nil when the buffer holds no data or `index` is out of range.
  public func dataRange(ofBuffer index: Int) -> ByteRange? {
    guard model.buffers.indices.contains(index) else { return nil }
    return model.buffers[index].dataRange
  }

  /// The data of buffer `index`, without copying; empty when it holds none or `index` is out of range.
  public func data(ofBuffer index: Int) -> UnsafeRawBufferPointer {
    bytes(in: dataRange(ofBuffer: index) ?? ByteRange(offset: 0, count: 0))
  }

  /// The constant data of `tensor` (its external buffer's bytes when it names one, else its
  /// buffer's data), empty for tensors computed at run time.
  public func tensorData(_ tensor: Tensor) -> UnsafeRawBufferPointer {
    if let external = externalBuffer(of: tensor), let file = externalFiles[Int(external.group)] {
      // The range was checked against the file when the model was loaded.
      let start = Int(external.offset)
      return UnsafeRawBufferPointer(rebasing: file.bytes[start..<start + Int(external.length)])
    }
    return data(ofBuffer: Int(exactly: tensor.buffer) ?? -1)
  }

  /// The external buffer `tensor` keeps its data in (`Tensor.external_buffer` matched against
  /// `ExternalBuffer.id`), nil when it names none.
  public func externalBuffer(of tensor: Tensor) -> ExternalBuffer? {
    guard tensor.externalBuffer != 0, let index = externalBufferIndices[tensor.externalBuffer] else { return nil }
    return model.externalBuffers[index]
  }

  /// The path of the file of external buffer group `group`, nil when the model has no such group
  /// or no folder to look in.
  public func externalFilePath(ofGroup group: Int) -> String? {
    guard model.externalBufferGroups.indices.contains(group), let directory = externalFilesDirectory,
      let name = model.externalBufferGroups[group].name
    else { return nil }
    return ExternalBufferFiles.path(of: name, in: directory)
  }

  /// The size in bytes of the file of external buffer group `group`, nil when it was not opened
  /// (no tensor's data lies in it).
  public func externalFileSize(ofGroup group: Int) -> Int? {
    externalFiles[group]?.bytes.count
  }

  /// Releases the resident pages of constant data that a consumer has copied into a layout of its
  /// own (packed weights) and no longer reads: the whole pages inside `data`, when `data` lies in
  /// a memory-mapped model file or external buffer file. Reading `data` again stays valid: the
  /// pages are loaded from the file again. Data outside the model's files is left alone. Returns
  /// the number of bytes released.
  @discardableResult
  public func releaseResidentPages(of data: UnsafeRawBufferPointer) -> Int {
    externalFiles.values.reduce(storage.releasePages(in: data)) { released, file in released + file.releasePages(in: data) }
  }

  /// The custom options of `operator`, inline or stored after the FlatBuffer; empty when it has none.
  public func customOptions(of operator: Operator) -> UnsafeRawBufferPointer {
    bytes(in: `operator`.customOptionsRange ?? ByteRange(offset: 0, count: 0))
  }

  /// The buffer of the metadata entry called `name` (the first one, if several share the name).
  public func metadata(named name: String) -> UnsafeRawBufferPointer? {
    model.metadata.first { $0.name == name }.map { data(ofBuffer: Int(exactly: $0.buffer) ?? -1) }
  }

  /// The `min_runtime_version` metadata: the oldest TFLite runtime the converter says can run the
  /// model (`"1.14.0"`), read up to the first NUL; nil when the model has none.
  public var minRuntimeVersion: String? {
    metadata(named: "min_runtime_version").map { bytes in
      String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
    }
  }
}

extension Buffer {
  /// Where the data lies in the file: `offset`/`size` when `offset` is above 1 (data stored after
  /// the FlatBuffer, as in models over 2 GB), otherwise the inline `data`; nil when empty.
  public var dataRange: ByteRange? {
    if offset > 1 {
      guard size > 0 else { return nil }
      return ByteRange(offset: Int(truncatingIfNeeded: offset), count: Int(truncatingIfNeeded: size))
    }
    guard let data, data.count > 0 else { return nil }
    return data
  }
}

extension Operator {
  /// Where the custom options lie: `large_custom_options_offset`/`size` when that offset is above
  /// 1, otherwise the inline `custom_options`; nil when there are none.
  public var customOptionsRange: ByteRange? {
    if largeCustomOptionsOffset > 1 {
      guard largeCustomOptionsSize > 0 else { return nil }
      return ByteRange(
        offset: Int(truncatingIfNeeded: largeCustomOptionsOffset), count: Int(truncatingIfNeeded: largeCustomOptionsSize))
    }
    guard let customOptions, customOptions.count > 0 else { return nil }
    return customOptions
  }
}

/// Why a model file was rejected, with the byte offset where the problem lies when one is known.
public struct ModelFormatError: Error, CustomStringConvertible, Sendable {
  /// What is wrong, naming the table and field involved.
  public var message: String
  /// The byte offset in the file where the problem was found.
  public var offset: Int?
  /// Creates an error.
  public init(message: String, offset: Int?) {
    self.message = message
    self.offset = offset
  }
  /// A readable description including the offset.
  public var description: String { offset.map { "\(message) (at byte \($0))" } ?? message }
}
