/// Merges concurrent requests for one model in this process onto one download: every caller gets
/// the result and the progress; the download is cancelled only when every caller has gone.
final class SharedDownloads: Sendable {
  /// The process-wide registry (downloaders sharing a storage folder share downloads too).
  static let shared = SharedDownloads()

  /// A caller waiting for a download.
  private struct Waiter {
    /// Resumed with the result.
    var continuation: CheckedContinuation<StoredModel, any Error>
    /// Receives progress, if the caller wants it.
    var progress: (@Sendable (ModelDownloadProgress) -> Void)?
  }

  /// One download under way.
  private struct Entry {
    /// Distinguishes this download from a later one for the same key.
    var generation: Int
    /// The download, once started.
    var task: Task<Void, Never>?
    /// Callers by id.
    var waiters: [Int: Waiter] = [:]
  }

  /// Running downloads by key, plus the next id to hand out.
  private let state = Locked<(entries: [String: Entry], nextID: Int)>(([:], 0))

  /// Waits for the download of `key`, starting `operation` when none runs; `operation` reports
  /// progress through the function it receives.
  func run(
    key: String, progress: (@Sendable (ModelDownloadProgress) -> Void)?,
    operation: @escaping @Sendable (_ report: @escaping @Sendable (ModelDownloadProgress) -> Void) async throws -> StoredModel
  ) async throws -> StoredModel {
    let waiterID = state.withLock { state -> Int in
      state.nextID += 1
      return state.nextID
    }
    return try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { continuation in
        let newGeneration = state.withLock { state -> Int? in
          var created: Int?
          if state.entries[key] == nil {
            state.nextID += 1
            created = state.nextID
            state.entries[key] = Entry(generation: state.nextID)
          }
          state.entries[key]?.waiters[waiterID] = Waiter(continuation: continuation, progress: progress)
          return created
        }
        if let generation = newGeneration { start(key: key, generation: generation, operation: operation) }
        if Task.isCancelled { leave(key: key, waiterID: waiterID) }
      }
    } onCancel: {
      leave(key: key, waiterID: waiterID)
    }
  }

  /// Starts the download of generation `generation` of `key`.
  private func start(
    key: String, generation: Int,
    operation: @escaping @Sendable (_ report: @escaping @Sendable (ModelDownloadProgress) -> Void) async throws -> StoredModel
  ) {
    let task = Task.detached { [self] in
      let result: Result<StoredModel, any Error>
      do {
        result = .success(try await operation { self.broadcast(key: key, generation: generation, progress: $0) })
      } catch {
        result = .failure(error)
      }
      finish(key: key, generation: generation, result: result)
    }
    let abandoned = state.withLock { state -> Bool in
      guard state.entries[key]?.generation == generation else { return true }
      state.entries[key]?.task = task
      return false
    }
    if abandoned { task.cancel() }
  }

  /// Sends `progress` to every waiter of the download.
  private func broadcast(key: String, generation: Int, progress: ModelDownloadProgress) {
    let listeners = state.withLock { state in
      state.entries[key].flatMap { $0.generation == generation ? $0.waiters.values.compactMap(\.progress) : nil } ?? []
    }
    for listener in listeners { listener(progress) }
  }

  /// Removes the finished download and hands its result to every waiter.
  private func finish(key: String, generation: Int, result: Result<StoredModel, any Error>) {
    let waiters = state.withLock { state -> [Waiter] in
      guard let entry = state.entries[key], entry.generation == generation else { return [] }
      state.entries[key] = nil
      return Array(entry.waiters.values)
    }
    for waiter in waiters { waiter.continuation.resume(with: result) }
  }

  /// Lets waiter `waiterID` go with a cancellation error; cancels the download when it was the last.
  private func leave(key: String, waiterID: Int) {
    let (waiter, orphanedTask) = state.withLock { state -> (Waiter?, Task<Void, Never>?) in
      guard var entry = state.entries[key], let waiter = entry.waiters.removeValue(forKey: waiterID) else { return (nil, nil) }
      if entry.waiters.isEmpty {
        state.entries[key] = nil
        return (waiter, entry.task)
      }
      state.entries[key] = entry
      return (waiter, nil)
    }
    waiter?.continuation.resume(throwing: CancellationError())
    orphanedTask?.cancel()
  }
}
