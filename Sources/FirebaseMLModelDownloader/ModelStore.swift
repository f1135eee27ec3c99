import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

// The storage folder holds, per model `N` of namespace `S` (stem `fbml_model@@S@@N`):
//   fbml_model@@S@@N@@<token>.tflite   the model file; every installed version gets a new token
//   .fbml_model@@S@@N@@record.json     the record: version, size, SHA-256, fingerprint, file name
//   .fbml_model@@S@@N@@partial(.json)  a download in progress and what it is
//   .fbml_model@@S@@N@@lock            the cross-process lock
// Installing renames the verified download to a new versioned file name (nothing is replaced),
// then replaces the record atomically: the record is the single commit point, so after a crash
// at any instruction the record names either the old file or the new one, each complete.
// Files the record does not name are leftovers of an interrupted install, removed under the lock.
// Names cannot contain `@`, so `@@` separates the parts unambiguously.

/// What the downloader remembers about a stored model (the SDK keeps this in UserDefaults; a JSON
/// file beside the model works on every platform and across processes).
struct StoredModelRecord: Codable, Sendable, Equatable {
  /// The model's name.
  var name: String
  /// The source's version identifier (Firebase ETag, Cloud Storage generation, or SHA-256).
  var hash: String
  /// File size in bytes.
  var size: Int64
  /// Lowercase hex SHA-256 of the file (computed while downloading).
  var sha256: String?
  /// ETag of the static-hosting index the model came from, for conditional requests.
  var indexETag: String?
  /// Name of the model file in the folder; records without one (older layouts) are ignored.
  var file: String?
  /// ``ModelFingerprint`` of the file at install time, checked whenever the model is served.
  var fingerprint: String?
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

/// Names (not paths) of one model's entries in the storage folder. Every name derives from a
/// validated model name, so none can leave the folder.
struct ModelFiles: Sendable {
  /// The model's name.
  var name: String
  /// `fbml_model@@<namespace>@@<name>`.
  var stem: String
  /// The record (hidden).
  var record: String
  /// The download in progress (hidden, renamed to a versioned model file when verified).
  var partial: String
  /// What ``partial`` holds (hidden).
  var partialState: String
  /// Lock file serializing downloads and deletions of this model across threads and processes.
  var lock: String

  /// Whether `entry` is a versioned model file of this model.
  func isModelFile(_ entry: String) -> Bool {
    entry.hasPrefix(stem + ModelStore.separator) && entry.hasSuffix(".tflite")
      && !entry.dropFirst(stem.count + ModelStore.separator.count).contains("@")
  }

  /// A fresh versioned model file name.
  func newModelFileName() -> String {
    stem + ModelStore.separator + String(UInt64.random(in: 0...UInt64.max), radix: 16) + ".tflite"
  }

  /// Entries of the layout before versioned file names, removed once a model is reinstalled.
  var legacyEntries: [String] { ["\(stem).tflite", ".\(stem).json", ".\(stem).tflite.partial", ".\(stem).partial.json"] }
}

/// How a stored model fared when checked.
enum StoredModelCheck: Sendable {
  /// No complete record.
  case missing
  /// Record and file agree.
  case valid(StoredModel)
  /// The record names a file that is missing, of another size, or with other bytes.
  case damaged(reason: String)
}

/// The storage folder: file layout, records, atomic installation, checks, listing and deletion.
struct ModelStore: Sendable {
  /// Prefix of every model file name, as in the Firebase SDK.
  static let filePrefix = "fbml_model"
  /// Separator between prefix, namespace, model name and version token.
  static let separator = "@@"
  /// Longest accepted model or namespace name, in bytes (keeps file names far below 255 bytes).
  static let maximumNameLength = 100
  /// Largest record or partial-state file read back.
  private static let recordSizeLimit = 64 << 10

  /// The folder.
  let directory: String
  /// The app name or namespace separating models of different apps in one folder.
  let namespace: String
  /// Whether serving a stored model re-hashes all of it (else size and fingerprint are checked).
  var verifiesCompletely = false

  /// Whether `name` is a usable model or namespace name: 1…100 ASCII letters, digits, `-`, `_`
  /// and `.`, not starting with `.` (so no path separators, NUL, `@`, `..` or hidden files).
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

  /// The entries of model `name` (which must be valid).
  func files(for name: String) -> ModelFiles {
    let stem = [Self.filePrefix, namespace, name].joined(separator: Self.separator)
    let hidden = "." + stem + Self.separator
    return ModelFiles(
      name: name, stem: stem, record: hidden + "record.json", partial: hidden + "partial",
      partialState: hidden + "partial.json", lock: hidden + "lock")
  }

  /// Creates the folder when missing and opens it.
  func open() throws -> DirectoryHandle {
    do {
      try FileSystem.createDirectory(atPath: directory)
      return try DirectoryHandle(path: directory)
    } catch {
      throw DownloadError.internalError(description: "Could not create directory for model storage.")
    }
  }

  /// The folder if it exists, else nil.
  func openExisting() -> DirectoryHandle? { try? DirectoryHandle(path: directory) }

  /// The stored model `name` if its record and file agree; damaged or missing models give nil.
  func storedModel(named name: String) -> StoredModel? {
    if case .valid(let model) = check(named: name) { return model }
    return nil
  }

  /// Checks stored model `name`: its record, and its file's size and fingerprint (or whole
  /// SHA-256 with ``verifiesCompletely``). A reader racing an install may find the file its
  /// record named already replaced; it reads the record once more.
  func check(named name: String) -> StoredModelCheck {
    guard let folder = openExisting() else { return .missing }
    let files = files(for: name)
    for attempt in 0..<2 {
      guard let record: StoredModelRecord = Self.readJSON(files.record, in: folder), record.name == name,
        let file = record.file, files.isModelFile(file), let fingerprint = record.fingerprint
      else { return .missing }
      let descriptor: Int32
      do {
        descriptor = try folder.openForReading(file)
      } catch let failure as FileSystemFailure where failure.code == ENOENT && attempt == 0 {
        continue
      } catch {
        return .damaged(reason: "its file cannot be opened (\(error))")
      }
      defer { closeDescriptor(descriptor) }
      return Self.verify(descriptor, against: record, fingerprint: fingerprint, completely: verifiesCompletely, path: folder.path(of: file))
    }
    return .missing
  }

  /// Compares the open file with its record.
  private static func verify(
    _ descriptor: Int32, against record: StoredModelRecord, fingerprint: String, completely: Bool, path: String
  ) -> StoredModelCheck {
    var status = stat()
    guard fstat(descriptor, &status) == 0, Int64(status.st_size) == record.size else {
      return .damaged(reason: "its file has \(status.st_size) bytes, the record says \(record.size)")
    }
    do {
      guard try ModelFingerprint.compute(descriptor: descriptor, size: record.size, path: path) == fingerprint else {
        return .damaged(reason: "its file's fingerprint differs from the one recorded at install")
      }
      if completely, let expected = record.sha256 {
        var hasher = SHA256()
        guard lseek(descriptor, 0, SEEK_SET) == 0 else { throw FileSystemFailure("lseek", path: path) }
        try FileSystem.readChunks(descriptor: descriptor, path: path) { hasher.update($0) }
        guard hasher.finalizeHex() == expected else { return .damaged(reason: "its file's SHA-256 differs from the record") }
      }
    } catch {
      return .damaged(reason: "its file cannot be read (\(error))")
    }
    return .valid(StoredModel(record: record, path: path))
  }

  /// Replaces the record of `files` with `record` atomically.
  func saveRecord(_ record: StoredModelRecord, for files: ModelFiles, in folder: DirectoryHandle, pausePoint: String? = nil) throws {
    try folder.writeAtomically(Array(try JSONEncoder().encode(record)), to: files.record, pausePoint: pausePoint)
  }

  /// The state of the partial download of `files`, if any.
  func partialState(of files: ModelFiles, in folder: DirectoryHandle) -> PartialDownloadState? {
    Self.readJSON(files.partialState, in: folder)
  }

  /// Records what the partial download of `files` is.
  func savePartialState(_ state: PartialDownloadState, for files: ModelFiles, in folder: DirectoryHandle) throws {
    try folder.writeAtomically(Array(try JSONEncoder().encode(state)), to: files.partialState)
  }

  /// Removes the partial download of `files` and its state.
  func discardPartial(of files: ModelFiles, in folder: DirectoryHandle) {
    try? folder.remove(files.partial)
    try? folder.remove(files.partialState)
  }

  /// Installs the verified partial file as the model `record` describes: renames it to a new
  /// versioned name, commits the record naming it, then removes the previous version. Each named
  /// point is where a test may stop the process (``TestPausePoints``).
  func install(_ files: ModelFiles, record: StoredModelRecord, in folder: DirectoryHandle) throws -> StoredModel {
    TestPausePoints.pause(at: "verified")
    var record = record
    record.name = files.name
    let file = files.newModelFileName()
    do {
      let descriptor = try folder.openForReading(files.partial)
      defer { closeDescriptor(descriptor) }
      record.fingerprint = try ModelFingerprint.compute(descriptor: descriptor, size: record.size, path: folder.path(of: files.partial))
    }
    try folder.rename(files.partial, to: file)
    folder.synchronize()
    TestPausePoints.pause(at: "file-renamed")
    record.file = file
    try saveRecord(record, for: files, in: folder, pausePoint: "record-temporary-written")
    TestPausePoints.pause(at: "record-committed")
    try? folder.remove(files.partialState)
    excludeFromBackup(path: folder.path(of: file))
    removeLeftovers(of: files, keeping: file, in: folder)
    TestPausePoints.pause(at: "leftovers-removed")
    return StoredModel(record: record, path: folder.path(of: file))
  }

  /// Removes model files of `files` other than `kept` (versions replaced, or renamed by an
  /// install that stopped before its record), and the older layout's entries.
  func removeLeftovers(of files: ModelFiles, keeping kept: String?, in folder: DirectoryHandle) {
    let entries = (try? folder.entries()) ?? []
    for entry in entries where files.isModelFile(entry) && entry != kept { try? folder.remove(entry) }
    for legacy in files.legacyEntries where entries.contains(legacy) { try? folder.remove(legacy) }
  }

  /// Deletes model `name`: the record first (the model is gone from then on), then its files.
  func remove(named name: String) throws {
    guard let folder = openExisting(), case .valid = check(named: name) else { throw DownloadedModelError.notFound }
    let files = files(for: name)
    do {
      try folder.remove(files.record)
    } catch {
      throw DownloadedModelError.internalError(description: "Could not delete old model file: \(error)")
    }
    removeLeftovers(of: files, keeping: nil, in: folder)
    discardPartial(of: files, in: folder)
  }

  /// Every intact model of this namespace in the folder (found through their records).
  func allModels() throws -> [StoredModel] {
    let names: [String]
    do {
      names = try FileSystem.directoryEntries(atPath: directory)
    } catch let failure as FileSystemFailure where failure.code == ENOENT {
      return []
    } catch {
      throw DownloadedModelError.internalError(description: "List models failed: \(error)")
    }
    let prefix = "." + Self.filePrefix + Self.separator + namespace + Self.separator
    let suffix = Self.separator + "record.json"
    return names.sorted().compactMap { entry in
      guard entry.hasPrefix(prefix), entry.hasSuffix(suffix), entry.count > prefix.count + suffix.count else { return nil }
      let modelName = String(entry.dropFirst(prefix.count).dropLast(suffix.count))
      guard Self.isValidName(modelName) else { return nil }
      return storedModel(named: modelName)
    }
  }

  /// Decodes the small JSON file `name`, or nil when it is missing or unreadable.
  private static func readJSON<Value: Decodable>(_ name: String, in folder: DirectoryHandle) -> Value? {
    guard let bytes = try? folder.readFile(name, limit: recordSizeLimit) else { return nil }
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

/// A cheap content fingerprint checked every time a stored model is served: SHA-256 over the
/// size, the first and last 64 KiB and 16 blocks of 4 KiB spread evenly in between (the whole
/// file when it is under 256 KiB). It catches a truncated, replaced or rewritten file at the
/// cost of reading about 200 KB; a single flipped byte elsewhere needs
/// ``ModelDownloaderSettings/verifiesStoredModelsCompletely``.
enum ModelFingerprint {
  /// Bytes hashed at each end.
  private static let edgeBytes = 64 << 10
  /// Blocks sampled between the ends.
  private static let sampleCount = 16
  /// Bytes per sampled block.
  private static let sampleBytes = 4 << 10

  /// The fingerprint of the open file of `size` bytes, as `v1:` and lowercase hex.
  static func compute(descriptor: Int32, size: Int64, path: String) throws -> String {
    var hasher = SHA256()
    withUnsafeBytes(of: size.littleEndian) { hasher.update($0) }
    let read = { (offset: Int64, count: Int) in
      hasher.update(try FileSystem.readBytes(descriptor: descriptor, at: offset, count: count, path: path))
    }
    if size < Int64(4 * edgeBytes) {
      try read(0, Int(size))
    } else {
      try read(0, edgeBytes)
      let middle = size - Int64(2 * edgeBytes) - Int64(sampleBytes)
      for sample in 0..<sampleCount {
        try read(Int64(edgeBytes) + middle * Int64(sample) / Int64(sampleCount - 1), sampleBytes)
      }
      try read(size - Int64(edgeBytes), edgeBytes)
    }
    return "v1:" + hasher.finalizeHex()
  }
}
