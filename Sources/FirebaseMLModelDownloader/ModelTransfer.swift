import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Progress of one model download.
public struct ModelDownloadProgress: Sendable, Hashable {
  /// Bytes of the model on disk so far (including a resumed part).
  public var bytesReceived: Int64
  /// The model's declared size.
  public var totalBytes: Int64

  /// `bytesReceived / totalBytes`, between 0 and 1.
  public var fraction: Float { totalBytes > 0 ? Float(Double(bytesReceived) / Double(totalBytes)) : 0 }
}

/// Moves a model version's bytes into the partial file beside its destination, resuming an
/// earlier attempt when possible, and verifies size, SHA-256 and format.
struct ModelTransfer: Sendable {
  /// Signal (not shown to users) that a signed download URL expired.
  static let expiredURL = DownloadError.internalError(description: "Expired model download URL.")

  /// The HTTP client.
  let http: HTTPClient
  /// The storage folder.
  let storage: ModelStore
  /// Checks the format of a complete file.
  let validator: @Sendable (String) throws -> Void
  /// Diagnostics.
  let log: DownloaderLog

  /// Fetches `remote` into `files.partial` and verifies it; on return the file is ready to install
  /// and `remote.sha256` is set. A failure leaves no empty partial file behind.
  func fetch(
    _ remote: inout RemoteModel, files: ModelFiles, folder: DirectoryHandle, conditions: ModelDownloadConditions,
    progress: @escaping @Sendable (ModelDownloadProgress) -> Void
  ) async throws {
    defer { if folder.regularFileSize(files.partial) == 0 { storage.discardPartial(of: files, in: folder) } }
    var mayStartOver = true
    while true {
      do {
        let outcome = try await transferBytes(remote, files: files, folder: folder, conditions: conditions, progress: progress)
        do {
          try verify(remote, files: files, folder: folder, checksums: outcome.checksums)
          remote.sha256 = outcome.checksums.sha256
          return
        } catch {
          storage.discardPartial(of: files, in: folder)
          // A resumed file that fails its checks may mix two versions: try once more from zero.
          guard outcome.startOffset > 0, mayStartOver else { throw error }
          log("resumed download of \(files.name) failed verification (\(error)); starting over")
        }
      } catch let rejection as ResumeRejected {
        storage.discardPartial(of: files, in: folder)
        guard mayStartOver else { throw DownloadError.internalError(description: rejection.reason) }
        log("\(rejection.reason); starting \(files.name) over")
      }
      mayStartOver = false
    }
  }

  /// What a transfer produced.
  private struct TransferOutcome {
    /// Bytes already on disk when the transfer began (0 for a fresh start).
    var startOffset: Int64
    /// Checksums of the whole file, computed while writing.
    var checksums: ContentChecksums
  }

  /// Gets the bytes into the partial file, resuming when a matching partial exists.
  private func transferBytes(
    _ remote: RemoteModel, files: ModelFiles, folder: DirectoryHandle, conditions: ModelDownloadConditions,
    progress: @escaping @Sendable (ModelDownloadProgress) -> Void
  ) async throws -> TransferOutcome {
    let state = PartialDownloadState(hash: remote.hash, size: remote.size, sha256: remote.sha256, validator: nil)
    var offset: Int64 = 0
    var validator: String?
    if case .remote = remote.location, let saved = storage.partialState(of: files, in: folder), saved.hash == state.hash,
      saved.size == state.size, saved.sha256 == state.sha256,
      let existing = folder.regularFileSize(files.partial), existing <= remote.size
    {
      offset = existing
      validator = saved.validator
    } else {
      storage.discardPartial(of: files, in: folder)
    }
    if let available = folder.availableBytes(), available < remote.size - offset {
      throw DownloadError.notEnoughSpace
    }
    let writer = try PartialFileWriter(
      files: files, folder: folder, storage: storage, state: state, expectedSize: remote.size, offset: offset,
      emptyDigests: ContentDigests(for: remote), progress: progress)
    defer { writer.close() }
    switch remote.location {
    case .file(let path):
      do {
        try FileSystem.readChunks(atPath: path) { try writer.consume($0) }
      } catch let failure as FileSystemFailure {
        throw DownloadError.internalError(description: "Could not copy model file: \(failure)")
      }
      return TransferOutcome(startOffset: 0, checksums: writer.finishDigests())
    case .remote(let url, let expiry):
      guard offset < remote.size else { return TransferOutcome(startOffset: offset, checksums: writer.finishDigests()) }
      if offset > 0 { log("resuming \(files.name) at byte \(offset) of \(remote.size)") }
      var request = URLRequest(url: url)
      request.allowsCellularAccess = conditions.allowsCellularAccess
      request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
      for (field, value) in remote.requestHeaders { request.setValue(value, forHTTPHeaderField: field) }
      if offset > 0 {
        request.setValue("bytes=\(offset)-", forHTTPHeaderField: "Range")
        if let validator { request.setValue(validator, forHTTPHeaderField: "If-Range") }
      }
      do {
        _ = try await http.stream(request, to: writer)
      } catch let failure as StatusFailure {
        throw Self.downloadStatusError(failure.statusCode, expiry: expiry)
      } catch let failure as HTTPFailure {
        if let reason = failure.permanentReason { throw DownloadError.internalError(description: "Model download failed: \(reason)") }
        log("download of \(files.name) failed: \(failure)")
        throw DownloadError.failedPrecondition
      }
      guard writer.bytesOnDisk == remote.size else {
        log("download of \(files.name) ended after \(writer.bytesOnDisk) of \(remote.size) bytes")
        throw DownloadError.failedPrecondition
      }
      return TransferOutcome(startOffset: writer.startOffset, checksums: writer.finishDigests())
    }
  }

  /// Checks the complete partial file's size, checksums (computed while writing) and format.
  private func verify(_ remote: RemoteModel, files: ModelFiles, folder: DirectoryHandle, checksums: ContentChecksums) throws {
    let actual = checksums.sha256
    let size = folder.regularFileSize(files.partial)
    guard size == remote.size else {
      throw DownloadError.internalError(
        description: "Downloaded model has \(size ?? 0) bytes, but the source declared \(remote.size).")
    }
    if let expected = remote.sha256 {
      guard actual == expected else {
        throw DownloadError.internalError(
          description: "Downloaded model's SHA-256 \(actual) does not match the expected \(expected).")
      }
    }
    if let expected = remote.crc32c, checksums.crc32c != expected {
      throw DownloadError.internalError(
        description: "Downloaded model's CRC-32C \(checksums.crc32c ?? "?") does not match the source's \(expected).")
    }
    if let expected = remote.md5, checksums.md5 != expected {
      throw DownloadError.internalError(description: "Downloaded model's MD5 \(checksums.md5 ?? "?") does not match the source's \(expected).")
    }
    do {
      try validator(folder.path(of: files.partial))
    } catch {
      throw DownloadError.internalError(description: "Downloaded file is not a valid TensorFlow Lite model: \(error)")
    }
  }

  /// The SDK's mapping of a failed file-download status (`expiry` tells an expired URL from a bad request).
  static func downloadStatusError(_ statusCode: Int, expiry: Date?) -> DownloadError {
    switch statusCode {
    case 400:
      if let expiry, expiry < Date() { return expiredURL }
      return .invalidArgument
    case 401, 403: return .permissionDenied
    case 404: return .notFound
    case 429: return .resourceExhausted
    default: return .internalError(description: "Model download failed with HTTP error code: \(statusCode)")
    }
  }
}

/// An HTTP status that ends a file download.
struct StatusFailure: Error {
  /// The status code.
  var statusCode: Int
}

/// The server did not continue a partial download as asked; the transfer starts over.
private struct ResumeRejected: Error {
  /// What the server did.
  var reason: String
}

/// Writes a model's bytes into the partial file: enforces the declared size, reports progress,
/// and records what the partial file holds so an interrupted transfer can resume.
private final class PartialFileWriter: HTTPBodyConsumer, @unchecked Sendable {  // used by one transfer at a time, on URLSession's serial delegate queue
  /// Paths of the model's files.
  let files: ModelFiles
  /// The storage folder.
  let folder: DirectoryHandle
  /// Saves the partial state.
  let storage: ModelStore
  /// Identity of the version being written.
  var state: PartialDownloadState
  /// The declared size: nothing beyond it is written.
  let expectedSize: Int64
  /// Where the current response starts in the file.
  private(set) var startOffset: Int64
  /// Bytes in the file so far.
  private(set) var bytesOnDisk: Int64
  /// Receives progress.
  let progress: @Sendable (ModelDownloadProgress) -> Void
  /// The open partial file.
  private var output: OutputFile
  /// Bytes on disk at the last progress report.
  private var lastReported: Int64 = -1
  /// Hash of the bytes on disk, computed off the receive path.
  private var hasher: BackgroundHasher
  /// The digests of an empty file, with the optional checksums the source states.
  private let emptyDigests: ContentDigests

  /// Opens the partial file, keeping its first `offset` bytes (its whole content), and starts the
  /// SHA-256 of everything written, the kept bytes included.
  init(
    files: ModelFiles, folder: DirectoryHandle, storage: ModelStore, state: PartialDownloadState, expectedSize: Int64,
    offset: Int64, emptyDigests: ContentDigests, progress: @escaping @Sendable (ModelDownloadProgress) -> Void
  ) throws {
    self.files = files
    self.folder = folder
    self.storage = storage
    self.state = state
    self.expectedSize = expectedSize
    self.startOffset = offset
    self.bytesOnDisk = offset
    self.progress = progress
    self.emptyDigests = emptyDigests
    output = try Self.open(files.partial, in: folder, truncate: offset == 0)
    var kept = emptyDigests
    if offset > 0 {
      do {
        let descriptor = try folder.openForReading(files.partial)
        defer { closeDescriptor(descriptor) }
        try FileSystem.readChunks(descriptor: descriptor, path: folder.path(of: files.partial)) { kept.update($0) }
      } catch {
        throw DownloadError.internalError(description: "Could not read the partial download: \(error)")
      }
    }
    hasher = BackgroundHasher(continuing: kept)
  }

  /// The checksums of the file's bytes; call once, after the last byte.
  func finishDigests() -> ContentChecksums { hasher.finalize() }

  /// Opens `name` in `folder`, turning a full disk into ``DownloadError/notEnoughSpace``.
  private static func open(_ name: String, in folder: DirectoryHandle, truncate: Bool) throws -> OutputFile {
    do {
      return try folder.openForWriting(name, truncates: truncate)
    } catch let failure as FileSystemFailure {
      throw failure.isOutOfSpace ? DownloadError.notEnoughSpace : DownloadError.internalError(description: "Could not write model file: \(failure)")
    }
  }

  /// Empties the file to write from byte 0 (the server sent the whole file).
  private func restart() throws {
    output.close()
    output = try Self.open(files.partial, in: folder, truncate: true)
    startOffset = 0
    bytesOnDisk = 0
    hasher.abandon()
    hasher = BackgroundHasher(continuing: emptyDigests)
  }

  /// Checks the status, the range and the announced length; remembers the validator for resuming.
  func begin(_ head: HTTPResponseHead) throws {
    switch head.statusCode {
    case 200:
      if startOffset > 0 { try restart() }
    case 206:
      guard let range = head.header("content-range").flatMap(ContentRange.init), range.first == startOffset,
        range.total == nil || range.total == expectedSize
      else {
        throw ResumeRejected(reason: "the server answered a resumed download with an unexpected Content-Range")
      }
    case 416:
      throw ResumeRejected(reason: "the server refused to resume the download (HTTP 416)")
    default:
      throw StatusFailure(statusCode: head.statusCode)
    }
    if let coding = head.header("content-encoding"), coding.lowercased() != "identity" {
      throw DownloadError.internalError(
        description: "The server sent the model with Content-Encoding: \(coding) although the request asked for identity; "
          + "serve model files without compression.")
    }
    if let contentType = head.header("content-type")?.lowercased(), contentType.hasPrefix("text/html") {
      throw DownloadError.internalError(description: "The server sent an HTML page instead of the model (Content-Type: \(contentType)).")
    }
    if let length = head.header("content-length").flatMap({ Int64($0) }), length != expectedSize - startOffset {
      let announced = startOffset.addingReportingOverflow(length)
      throw DownloadError.internalError(
        description: "The server announced \(announced.overflow ? "more than \(Int64.max)" : String(announced.partialValue)) bytes, "
          + "but the source declared \(expectedSize).")
    }
    if let etag = head.header("etag"), !etag.hasPrefix("W/") {
      state.validator = etag
    } else {
      state.validator = head.header("last-modified")
    }
    try? storage.savePartialState(state, for: files, in: folder)
    report()
  }

  /// Appends `bytes`, refusing anything past the declared size.
  func consume(_ bytes: UnsafeRawBufferPointer) throws {
    guard Int64(bytes.count) <= expectedSize - bytesOnDisk else {
      throw DownloadError.internalError(description: "The server sent more than the declared \(expectedSize) bytes.")
    }
    do {
      try output.write(bytes)
    } catch let failure as FileSystemFailure {
      throw failure.isOutOfSpace ? DownloadError.notEnoughSpace : DownloadError.internalError(description: "Could not write model file: \(failure)")
    }
    hasher.update(bytes)
    bytesOnDisk += Int64(bytes.count)
    report()
  }

  /// Flushes and closes the file, and stops the hashing thread if the digest was not taken.
  func close() {
    hasher.abandon()
    try? output.synchronize()
    output.close()
  }

  /// Reports progress when it moved by at least 0.5 % or the file is complete.
  private func report() {
    let step = max(expectedSize / 200, 1)
    guard bytesOnDisk == expectedSize || bytesOnDisk - lastReported >= step else { return }
    lastReported = bytesOnDisk
    progress(ModelDownloadProgress(bytesReceived: bytesOnDisk, totalBytes: expectedSize))
  }
}

/// A parsed `Content-Range: bytes FIRST-LAST/TOTAL` header (`TOTAL` may be `*`).
private struct ContentRange {
  /// First byte position.
  var first: Int64
  /// Complete length, when known.
  var total: Int64?

  /// Parses `text`, or fails when it is not a byte range.
  init?(_ text: String) {
    let trimmed = text.trimmingCharacters(in: .whitespaces)
    guard trimmed.hasPrefix("bytes ") else { return nil }
    let parts = trimmed.dropFirst(6).split(separator: "/")
    guard parts.count == 2, let dash = parts[0].firstIndex(of: "-"), let first = Int64(parts[0][..<dash]) else { return nil }
    self.first = first
    total = parts[1] == "*" ? nil : Int64(parts[1])
    if parts[1] != "*" && total == nil { return nil }
  }
}
