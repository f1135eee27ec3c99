/// The download logic behind ``ModelDownloader``: download types, the update flow under the
/// model's lock, listing and deletion.
struct ModelDownloadEngine: Sendable {
  /// The storage folder, or nil when the platform gave none.
  let storage: ModelStorage?
  /// Where models come from.
  let source: any ModelSourceClient
  /// Moves and verifies bytes (nil without storage).
  let transfer: ModelTransfer?
  /// Diagnostics.
  let log: DownloaderLog

  /// The model `name` as `downloadType` asks.
  func getModel(
    name: String, downloadType: ModelDownloadType, conditions: ModelDownloadConditions,
    progress: (@Sendable (ModelDownloadProgress) -> Void)?
  ) async throws -> CustomModel {
    guard !name.isEmpty else { throw DownloadError.emptyModelName }
    guard ModelStorage.isValidName(name) else {
      log("rejected model name: use 1-\(ModelStorage.maximumNameLength) letters, digits, '-', '_' and '.', not starting with '.'")
      throw DownloadError.invalidArgument
    }
    guard let storage, let transfer else {
      throw DownloadError.internalError(description: "Could not create directory for model storage.")
    }
    switch downloadType {
    case .localModel:
      if let local = storage.storedModel(named: name) { return local.customModel }
    case .localModelUpdateInBackground:
      if let local = storage.storedModel(named: name) {
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

  /// Asks the source and downloads when needed, sharing the work with concurrent requests.
  private func latestModel(
    name: String, storage: ModelStorage, transfer: ModelTransfer, conditions: ModelDownloadConditions,
    progress: (@Sendable (ModelDownloadProgress) -> Void)?
  ) async throws -> StoredModel {
    let files = storage.files(for: name)
    return try await SharedDownloads.shared.run(key: files.model, progress: progress) { report in
      try storage.prepare()
      return try await withModelLock(files) {
        try await update(files: files, storage: storage, transfer: transfer, conditions: conditions, report: report)
      }
    }
  }

  /// The update flow, run while holding the model's lock: ask the source, download, install.
  private func update(
    files: ModelFiles, storage: ModelStorage, transfer: ModelTransfer, conditions: ModelDownloadConditions,
    report: @escaping @Sendable (ModelDownloadProgress) -> Void
  ) async throws -> StoredModel {
    var expiredURLRetries = 1
    while true {
      let local = storage.storedModel(named: files.name)
      switch try await source.latestVersion(of: files.name, local: local) {
      case .unchanged(let indexETag):
        guard var current = storage.storedModel(named: files.name) else {
          throw DownloadError.internalError(description: "Model unavailable due to deleted local model info or model file.")
        }
        if indexETag != current.record.indexETag {
          current.record.indexETag = indexETag
          try? storage.saveRecord(current.record, for: files)
        }
        return current
      case .changed(let remote):
        do {
          try await transfer.fetch(remote, files: files, conditions: conditions, progress: report)
        } catch let error as DownloadError where error == ModelTransfer.expiredURL {
          guard expiredURLRetries > 0 else {
            throw DownloadError.internalError(description: "Unable to update expired model info.")
          }
          expiredURLRetries -= 1
          log("download URL of \(files.name) expired; asking the source again")
          continue
        }
        var record = remote.record
        record.name = files.name
        do {
          return try storage.install(files, record: record)
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
    guard let storage, ModelStorage.isValidName(name), storage.storedModel(named: name) != nil else {
      throw DownloadedModelError.notFound
    }
    let files = storage.files(for: name)
    try await withModelLock(files) { try storage.remove(named: name) }
  }

  /// Runs `body` holding the cross-process lock of one model.
  private func withModelLock<Result>(_ files: ModelFiles, _ body: () async throws -> Result) async throws -> Result {
    do {
      return try await FileLock.withExclusiveLock(path: files.lock, body)
    } catch let failure as FileSystemFailure {
      throw DownloadError.internalError(description: "Could not lock model storage: \(failure)")
    }
  }
}
