/// The download logic behind ``ModelDownloader``: download types, the update flow under the
/// model's lock, listing and deletion.
struct ModelDownloadEngine: Sendable {
  /// The storage folder, or nil when the platform gave none.
  let storage: ModelStore?
  /// Where models come from.
  let source: any ModelSourceClient
  /// Moves and verifies bytes (nil without storage).
  let transfer: ModelTransfer?
  /// Diagnostics.
  let log: DownloaderLog
  /// Receives status changes (waiting for another process).
  let status: @Sendable (ModelDownloaderStatus) -> Void

  /// The model `name` as `downloadType` asks.
  func getModel(
    name: String, downloadType: ModelDownloadType, conditions: ModelDownloadConditions,
    progress: (@Sendable (ModelDownloadProgress) -> Void)?
  ) async throws -> CustomModel {
    guard !name.isEmpty else { throw DownloadError.emptyModelName }
    guard ModelStore.isValidName(name) else {
      log("rejected model name: use 1-\(ModelStore.maximumNameLength) letters, digits, '-', '_' and '.', not starting with '.'")
      throw DownloadError.invalidArgument
    }
    guard let storage, let transfer else {
      throw DownloadError.internalError(description: "Could not create directory for model storage.")
    }
    switch downloadType {
    case .localModel:
      if let local = servable(name, in: storage) { return local.customModel }
    case .localModelUpdateInBackground:
      if let local = servable(name, in: storage) {
        Task.detached(priority: .utility) { [self] in
          do {
            let updated = try await latestModel(name: name, storage: storage, transfer: transfer, conditions: conditions, progress: nil)
            log("background update of \(name) done: version \(updated.record.hash)")
          } catch {
            log("background update of \(name) failed: \(error)")
          }
        }
        return local.customModel
      }
    case .latestModel:
      break
    }
    return try await latestModel(name: name, storage: storage, transfer: transfer, conditions: conditions, progress: progress)
      .customModel
  }

  /// The stored model `name` when it passes its checks; a damaged one is logged (and then
  /// repaired by the download that follows).
  private func servable(_ name: String, in storage: ModelStore) -> StoredModel? {
    switch storage.check(named: name) {
    case .valid(let model): return model
    case .missing: return nil
    case .damaged(let reason):
      log("stored model \(name) is damaged: \(reason); downloading it again")
      return nil
    }
  }

  /// Asks the source and downloads when needed, sharing the work with concurrent requests.
  private func latestModel(
    name: String, storage: ModelStore, transfer: ModelTransfer, conditions: ModelDownloadConditions,
    progress: (@Sendable (ModelDownloadProgress) -> Void)?
  ) async throws -> StoredModel {
    let files = storage.files(for: name)
    return try await SharedDownloads.shared.run(key: storage.directory + "/" + files.record, progress: progress) { report in
      let folder = try storage.open()
      return try await withModelLock(files, in: folder) { locked in
        try await update(files: files, folder: folder, locked: locked, storage: storage, transfer: transfer, conditions: conditions, report: report)
      }
    }
  }

  /// The update flow, run while holding the model's lock (`locked` is false only in a read-only
  /// folder without a lock file, where nothing can be changed): ask the source, download, install.
  private func update(
    files: ModelFiles, folder: DirectoryHandle, locked: Bool, storage: ModelStore, transfer: ModelTransfer,
    conditions: ModelDownloadConditions, report: @escaping @Sendable (ModelDownloadProgress) -> Void
  ) async throws -> StoredModel {
    var expiredURLRetries = 1
    while true {
      let local = servable(files.name, in: storage)
      if locked { storage.removeLeftovers(of: files, keeping: local?.record.file, in: folder) }
      switch try await source.latestVersion(of: files.name, local: local) {
      case .unchanged(let indexETag):
        guard var current = storage.storedModel(named: files.name) else {
          throw DownloadError.internalError(description: "Model unavailable due to deleted local model info or model file.")
        }
        if indexETag != current.record.indexETag {
          current.record.indexETag = indexETag
          try? storage.saveRecord(current.record, for: files, in: folder)
        }
        return current
      case .changed(var remote):
        do {
          try await transfer.fetch(&remote, files: files, folder: folder, conditions: conditions, progress: report)
        } catch let error as DownloadError where error == ModelTransfer.expiredURL {
          guard expiredURLRetries > 0 else {
            throw DownloadError.internalError(description: "Unable to update expired model info.")
          }
          expiredURLRetries -= 1
          log("download URL of \(files.name) expired; asking the source again")
          continue
        }
        do {
          return try storage.install(files, record: remote.record, in: folder)
        } catch let failure as FileSystemFailure {
          throw failure.isOutOfSpace
            ? DownloadError.notEnoughSpace : DownloadError.internalError(description: "Could not save model: \(failure)")
        }
      }
    }
  }

  /// Every stored model.
  func listModels() throws -> Set<CustomModel> {
    guard let storage else {
      throw DownloadedModelError.internalError(description: "Could not locate Application Support directory for model storage.")
    }
    return Set(try storage.allModels().map(\.customModel))
  }

  /// Deletes stored model `name`.
  func deleteModel(name: String) async throws {
    guard let storage, ModelStore.isValidName(name), storage.storedModel(named: name) != nil else {
      throw DownloadedModelError.notFound
    }
    let files = storage.files(for: name)
    let folder = try storage.open()
    try await withModelLock(files, in: folder) { _ in try storage.remove(named: name) }
  }

  /// Runs `body` holding the cross-process lock of one model; `body` learns whether it holds it
  /// (a read-only folder without a lock file cannot be locked, nor changed). While another
  /// process holds the lock, the status handler hears whom this process waits for and how far
  /// that process's download got.
  private func withModelLock<Result>(
    _ files: ModelFiles, in folder: DirectoryHandle, _ body: (_ locked: Bool) async throws -> Result
  ) async throws -> Result {
    let lock: FileLock?
    do {
      lock = try await FileLock.acquire(name: files.lock, in: folder) { holder in
        let partial = folder.regularFileSize(files.partial)
        let expected = storageStateSize(files, in: folder)
        status(.waitingForLock(model: files.name, processID: holder, bytesOnDisk: partial, totalBytes: expected))
      }
    } catch let failure as FileSystemFailure {
      throw DownloadError.internalError(description: "Could not lock model storage: \(failure)")
    }
    defer { lock?.release() }
    return try await body(lock != nil)
  }

  /// The declared size of the download in progress of `files`, if its state says.
  private func storageStateSize(_ files: ModelFiles, in folder: DirectoryHandle) -> Int64? {
    storage?.partialState(of: files, in: folder)?.size
  }
}
