import Foundation

/// What the downloader remembers about a stored model (the SDK keeps this in UserDefaults; a JSON
/// file beside the model works on every platform and across processes).
struct StoredModelRecord: Codable, Sendable, Equatable {
  /// The model's name.
  var name: String
  /// The source's version identifier (Firebase ETag, or SHA-256 for other sources).
  var hash: String
  /// File size in bytes.
  var size: Int64
  /// Lowercase hex SHA-256 of the file, when the source stated one.
  var sha256: String?
  /// ETag of the static-hosting index the model came from, for conditional requests.
  var indexETag: String?
}

/// A model found in storage: its record and the file it describes.
struct StoredModel: Sendable {
  /// The stored record.
  var record: StoredModelRecord
  /// Absolute path of the model file.
  var path: String

  /// The public description.
  var customModel: CustomModel {
    CustomModel(name: record.name, size: Int(clamping: record.size), path: path, hash: record.hash)
  }
}

/// Where a download in progress is kept, so that a later attempt can resume it.
struct PartialDownloadState: Codable, Sendable, Equatable {
  /// Version identifier of the model being downloaded.
  var hash: String
  /// Its declared size.
  var size: Int64
  /// Its expected SHA-256, if known.
  var sha256: String?
  /// The file response's strong ETag or Last-Modified, sent as `If-Range` when resuming.
  var validator: String?
}

/// Paths of one model's files inside the storage folder. Every name derives from a validated
/// model name, so none can leave the folder.
struct ModelFiles: Sendable {
  /// The model's name.
  var name: String
  /// The model file: `fbml_model@@<namespace>@@<name>.tflite`.
  var model: String
  /// Its record (hidden).
  var record: String
  /// The download in progress (hidden, renamed onto ``model`` when verified).
  var partial: String
  /// What ``partial`` holds (hidden).
  var partialState: String
  /// Lock file serializing downloads and deletions of this model across threads and processes.
  var lock: String
}

/// The storage folder: file layout, records, atomic installation, listing and deletion.
struct ModelStorage: Sendable {
  /// Prefix of every model file name, as in the Firebase SDK.
  static let filePrefix = "fbml_model"
  /// Separator between prefix, namespace and model name.
  static let separator = "@@"
  /// Longest accepted model or namespace name, in bytes (keeps file names far below 255 bytes).
  static let maximumNameLength = 100
  /// Largest record or partial-state file read back.
  private static let recordSizeLimit = 64 << 10

  /// The folder.
  let directory: String
  /// The app name or namespace separating models of different apps in one folder.
  let namespace: String

  /// Whether `name` is a usable model or namespace name: 1…100 ASCII letters, digits, `-`, `_`
  /// and `.`, not starting with `.` (so no path separators, NUL, `..` or hidden files).
  static func isValidName(_ name: String) -> Bool {
    guard let first = name.utf8.first, first != UInt8(ascii: "."), name.utf8.count <= maximumNameLength else { return false }
    return name.utf8.allSatisfy { byte in
      switch byte {
      case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
        UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."):
        return true
      default:
        return false
      }
    }
  }

  /// The files of model `name` (which must be valid).
  func files(for name: String) -> ModelFiles {
    let stem = [Self.filePrefix, namespace, name].joined(separator: Self.separator)
    return ModelFiles(
      name: name,
      model: "\(directory)/\(stem).tflite",
      record: "\(directory)/.\(stem).json",
      partial: "\(directory)/.\(stem).tflite.partial",
      partialState: "\(directory)/.\(stem).partial.json",
      lock: "\(directory)/.\(stem).lock")
  }

  /// Creates the folder when missing.
  func prepare() throws {
    do {
      try FileSystem.createDirectory(atPath: directory)
    } catch {
      throw DownloadError.internalError(description: "Could not create directory for model storage.")
    }
  }

  /// The stored model `name`, if its record exists and its file is present with the recorded size.
  func storedModel(named name: String) -> StoredModel? {
    let files = files(for: name)
    guard let record: StoredModelRecord = Self.readJSON(atPath: files.record), record.name == name,
      FileSystem.regularFileSize(atPath: files.model) == record.size
    else { return nil }
    return StoredModel(record: record, path: files.model)
  }

  /// Replaces `files.record` with `record` atomically.
  func saveRecord(_ record: StoredModelRecord, for files: ModelFiles) throws {
    try FileSystem.writeAtomically(Array(try JSONEncoder().encode(record)), toPath: files.record)
  }

  /// The state of the partial download of `files`, if any.
  func partialState(of files: ModelFiles) -> PartialDownloadState? { Self.readJSON(atPath: files.partialState) }

  /// Records what the partial download of `files` is.
  func savePartialState(_ state: PartialDownloadState, for files: ModelFiles) throws {
    try FileSystem.writeAtomically(Array(try JSONEncoder().encode(state)), toPath: files.partialState)
  }

  /// Removes the partial download of `files` and its state.
  func discardPartial(of files: ModelFiles) {
    try? FileSystem.removeFile(atPath: files.partial)
    try? FileSystem.removeFile(atPath: files.partialState)
  }

  /// Moves the verified partial file onto the model path, then writes the record: until the
  /// rename the previous model stays in place and usable.
  func install(_ files: ModelFiles, record: StoredModelRecord) throws -> StoredModel {
    try FileSystem.rename(files.partial, to: files.model)
    try? FileSystem.removeFile(atPath: files.partialState)
    excludeFromBackup(path: files.model)
    try saveRecord(record, for: files)
    return StoredModel(record: record, path: files.model)
  }

  /// Deletes model `name`: the file first, then the record and any partial download.
  func remove(named name: String) throws {
    let files = files(for: name)
    guard storedModel(named: name) != nil else { throw DownloadedModelError.notFound }
    do {
      try FileSystem.removeFile(atPath: files.model)
    } catch {
      throw DownloadedModelError.internalError(description: "Could not delete old model file: \(error)")
    }
    try? FileSystem.removeFile(atPath: files.record)
    discardPartial(of: files)
  }

  /// Every complete model of this namespace in the folder (files without a matching record,
  /// such as those of other apps or interrupted installs, are left out).
  func allModels() throws -> [StoredModel] {
    let names: [String]
    do {
      names = try FileSystem.directoryEntries(atPath: directory)
    } catch let failure as FileSystemFailure where failure.code == ENOENT {
      return []
    } catch {
      throw DownloadedModelError.internalError(description: "List models failed: \(error)")
    }
    let prefix = Self.filePrefix + Self.separator + namespace + Self.separator
    let suffix = ".tflite"
    return names.sorted().compactMap { fileName in
      guard fileName.hasPrefix(prefix), fileName.hasSuffix(suffix), fileName.count > prefix.count + suffix.count else { return nil }
      let modelName = String(fileName.dropFirst(prefix.count).dropLast(suffix.count))
      guard Self.isValidName(modelName) else { return nil }
      return storedModel(named: modelName)
    }
  }

  /// Decodes the small JSON file at `path`, or nil when it is missing or unreadable.
  private static func readJSON<Value: Decodable>(atPath path: String) -> Value? {
    guard let bytes = try? FileSystem.readFile(atPath: path, limit: recordSizeLimit) else { return nil }
    return try? JSONDecoder().decode(Value.self, from: Data(bytes))
  }

  /// Keeps the model out of device backups (Apple platforms), as the Firebase SDK does.
  private func excludeFromBackup(path: String) {
    #if canImport(Darwin)
      var url = URL(fileURLWithPath: path)
      var values = URLResourceValues()
      values.isExcludedFromBackup = true
      try? url.setResourceValues(values)
    #endif
  }
}
