import Dispatch
import Foundation

/// One step of a download observed through ``ModelDownloader/modelDownloadEvents(name:downloadType:conditions:)``.
public enum ModelDownloadEvent: Sendable, Hashable {
  /// Bytes arrived.
  case progress(ModelDownloadProgress)
  /// The model is ready; always the last event.
  case finished(CustomModel)
}

/// Downloads models and keeps them on the device: Firebase's `ModelDownloader` API over
/// Firebase ML, static HTTPS hosting and local folders.
public final class ModelDownloader: Sendable {
  /// Downloaders made by ``modelDownloader(app:)``, by app name.
  private static let instances = Locked<[String: ModelDownloader]>([:])

  /// The logic.
  private let engine: ModelDownloadEngine
  /// Hides secrets in errors.
  private let redactor: SecretRedactor
  /// Set for a Firebase app lacking a project ID or API key: `getModel` reports it at once,
  /// on the caller's thread, as the SDK does.
  private let immediateFailure: DownloadError?
  /// Backing store of ``callbackQueue``.
  private let callbackQueueSetting: Locked<ModelDownloaderCallbackQueue>

  /// Where completion and progress handlers run; see ``ModelDownloaderCallbackQueue``.
  public var callbackQueue: ModelDownloaderCallbackQueue {
    get { callbackQueueSetting.withLock { $0 } }
    set { callbackQueueSetting.withLock { $0 = newValue } }
  }

  /// The downloader of the default Firebase app. Without a configured default app (see
  /// ``FirebaseApp/configure()``) it still lists and deletes stored models, and its `getModel`
  /// fails with "Default Firebase app not configured." (the SDK stops the process instead).
  public static func modelDownloader() -> ModelDownloader {
    guard let app = FirebaseApp.app() else { return ModelDownloader(optionalSource: nil, settings: ModelDownloaderSettings()) }
    return modelDownloader(app: app)
  }

  /// The downloader of `app` (the same object for every call with that app).
  public static func modelDownloader(app: FirebaseApp) -> ModelDownloader {
    instances.withLock { instances in
      if let existing = instances[app.name] { return existing }
      let downloader = ModelDownloader(source: .firebaseML(app: app))
      instances[app.name] = downloader
      return downloader
    }
  }

  /// Drops the cached downloader of a deleted app.
  static func forgetInstance(appName: String) {
    instances.withLock { _ = $0.removeValue(forKey: appName) }
  }

  /// A downloader for `source` with `settings`. Downloaders sharing a storage folder share
  /// downloads in progress and are safe to use from several processes.
  public convenience init(source: ModelSource, settings: ModelDownloaderSettings = ModelDownloaderSettings()) {
    self.init(optionalSource: source, settings: settings)
  }

  /// A downloader for `source`, or one whose `getModel` fails for lack of a default app when nil.
  private init(optionalSource source: ModelSource?, settings: ModelDownloaderSettings) {
    let redactor = SecretRedactor()
    let log = DownloaderLog(handler: settings.logHandler, redactor: redactor)
    let http = HTTPClient(
      policy: URLPolicy(allowsInsecureHTTP: settings.allowsInsecureHTTP), requestTimeout: settings.requestTimeout,
      resourceTimeout: settings.resourceTimeout)
    var namespace = settings.storageNamespace
    if case .firebaseML(let app, _)? = source { namespace = app.name }
    let storage = ModelStore.isValidName(namespace)
      ? (settings.storageDirectory ?? ModelDownloaderSettings.defaultStorageDirectory()).map {
        ModelStore(directory: $0.standardizedFileURL.path, namespace: namespace, verifiesCompletely: settings.verifiesStoredModelsCompletely)
      } : nil
    var immediateFailure: DownloadError?
    let client: any ModelSourceClient
    switch source {
    case nil:
      client = UnavailableSource(error: .internalError(description: "Default Firebase app not configured."))
    case .firebaseML(let app, let endpoints)?:
      let options = app.optionValues
      if let projectID = options.projectID, !projectID.isEmpty, let apiKey = options.apiKey, !apiKey.isEmpty {
        redactor.register(apiKey)
        let installations = InstallationsClient(
          projectID: projectID, apiKey: apiKey, appID: options.googleAppID, bundleIdentifier: options.bundleID,
          baseURL: endpoints.installationsBaseURL, http: http,
          statePath: storage.map { "\($0.directory)/.installation\(ModelStore.separator)\(namespace).json" },
          retryDelay: settings.installationsRetryDelay, redactor: redactor)
        client = FirebaseMLSource(
          projectID: projectID, apiKey: apiKey, bundleIdentifier: options.bundleID, baseURL: endpoints.modelInfoBaseURL,
          http: http, installations: installations, maximumModelSize: settings.maximumModelSize, log: log)
      } else {
        let failure = DownloadError.internalError(description: "Unable to retrieve project ID and/or API key for Firebase app.")
        immediateFailure = failure
        client = UnavailableSource(error: failure)
      }
    case .staticHosting(let baseURL)?:
      client = StaticHostingSource(baseURL: baseURL, http: http, maximumModelSize: settings.maximumModelSize)
    case .localDirectory(let directory)?:
      client = LocalDirectorySource(directory: directory, maximumModelSize: settings.maximumModelSize)
    case .cloudStorage(let bucket, let objectPrefix)?:
      if let authorization = settings.cloudStorageAuthorization {
        redactor.register(authorization)
        if let token = authorization.split(separator: " ").last { redactor.register(String(token)) }
      }
      client = CloudStorageSource(
        bucket: bucket, objectPrefix: objectPrefix, baseURL: settings.cloudStorageBaseURL,
        authorization: settings.cloudStorageAuthorization, http: http, maximumModelSize: settings.maximumModelSize)
    }
    let transfer = storage.map { ModelTransfer(http: http, storage: $0, validator: settings.modelValidator, log: log) }
    let statusHandler = settings.statusHandler
    self.engine = ModelDownloadEngine(
      storage: storage, source: client, transfer: transfer, log: log, status: { statusHandler?($0) })
    self.redactor = redactor
    self.immediateFailure = immediateFailure
    self.callbackQueueSetting = Locked(settings.callbackQueue)
  }

  // MARK: - Completion-handler API (Firebase's)

  /// Gets model `modelName` as `downloadType` asks; `progressHandler` receives the fraction
  /// downloaded and `completion` the result, both on ``callbackQueue``.
  public func getModel(
    name modelName: String, downloadType: ModelDownloadType, conditions: ModelDownloadConditions,
    progressHandler: ((Float) -> Void)? = nil,
    completion: @escaping (Result<CustomModel, DownloadError>) -> Void
  ) {
    if let immediateFailure, !modelName.isEmpty {
      completion(.failure(immediateFailure))
      return
    }
    let queue = callbackQueue.dispatchQueue
    let handler = SendableBox(value: completion)
    let progress = Self.forwarder(for: progressHandler, on: queue)
    Task.detached { [self] in
      let result: Result<CustomModel, DownloadError>
      do {
        result = .success(try await engine.getModel(name: modelName, downloadType: downloadType, conditions: conditions, progress: progress))
      } catch {
        result = .failure(downloadError(error))
      }
      queue.async { handler.value(result) }
    }
  }

  /// A progress function that hands the fraction to `handler` on `queue`, or nil without a handler.
  private static func forwarder(
    for handler: ((Float) -> Void)?, on queue: DispatchQueue
  ) -> (@Sendable (ModelDownloadProgress) -> Void)? {
    guard let handler else { return nil }
    let box = SendableBox(value: handler)
    return { update in queue.async { box.value(update.fraction) } }
  }

  /// Lists every stored model. Success is reported synchronously on the caller's thread (as the
  /// SDK does); failure on ``callbackQueue``.
  public func listDownloadedModels(completion: @escaping (Result<Set<CustomModel>, DownloadedModelError>) -> Void) {
    do {
      completion(.success(try engine.listModels()))
    } catch {
      let failure = downloadedModelError(error)
      let handler = SendableBox(value: completion)
      callbackQueue.dispatchQueue.async { handler.value(.failure(failure)) }
    }
  }

  /// Deletes stored model `modelName`; `completion` runs on ``callbackQueue``.
  public func deleteDownloadedModel(
    name modelName: String, completion: @escaping (Result<Void, DownloadedModelError>) -> Void
  ) {
    let queue = callbackQueue.dispatchQueue
    let handler = SendableBox(value: completion)
    Task.detached { [self] in
      let result: Result<Void, DownloadedModelError>
      do {
        try await engine.deleteModel(name: modelName)
        result = .success(())
      } catch {
        result = .failure(downloadedModelError(error))
      }
      queue.async { handler.value(result) }
    }
  }

  // MARK: - async API

  /// Gets model `modelName` as `downloadType` asks. Throws ``DownloadError``, or
  /// `CancellationError` when the task is cancelled (the partial download is kept for resuming).
  public func getModel(
    name modelName: String, downloadType: ModelDownloadType, conditions: ModelDownloadConditions
  ) async throws -> CustomModel {
    try await getModel(name: modelName, downloadType: downloadType, conditions: conditions, progress: nil)
  }

  /// Gets model `modelName` as `downloadType` asks, reporting each progress step to `progress`.
  public func getModel(
    name modelName: String, downloadType: ModelDownloadType, conditions: ModelDownloadConditions,
    progress: (@Sendable (ModelDownloadProgress) -> Void)?
  ) async throws -> CustomModel {
    if let immediateFailure, !modelName.isEmpty { throw immediateFailure }
    do {
      return try await engine.getModel(name: modelName, downloadType: downloadType, conditions: conditions, progress: progress)
    } catch is CancellationError {
      throw CancellationError()
    } catch {
      throw downloadError(error)
    }
  }

  /// The progress and result of getting model `modelName`, as an asynchronous stream: zero or more
  /// `.progress` events, then one `.finished`; errors as in ``getModel(name:downloadType:conditions:)``.
  /// Ending the iteration early cancels the request.
  public func modelDownloadEvents(
    name modelName: String, downloadType: ModelDownloadType, conditions: ModelDownloadConditions
  ) -> AsyncThrowingStream<ModelDownloadEvent, any Error> {
    AsyncThrowingStream { continuation in
      let task = Task { [self] in
        do {
          let model = try await getModel(name: modelName, downloadType: downloadType, conditions: conditions) {
            continuation.yield(.progress($0))
          }
          continuation.yield(.finished(model))
          continuation.finish()
        } catch {
          continuation.finish(throwing: error)
        }
      }
      continuation.onTermination = { _ in task.cancel() }
    }
  }

  /// Every stored model.
  public func listDownloadedModels() async throws -> Set<CustomModel> {
    do {
      return try engine.listModels()
    } catch {
      throw downloadedModelError(error)
    }
  }

  /// Deletes stored model `modelName`.
  public func deleteDownloadedModel(name modelName: String) async throws {
    do {
      try await engine.deleteModel(name: modelName)
    } catch {
      throw downloadedModelError(error)
    }
  }

  // MARK: - Error mapping

  /// `error` as a ``DownloadError`` without secrets.
  private func downloadError(_ error: any Error) -> DownloadError {
    switch error {
    case let error as DownloadError: return redactor.redact(error)
    case let failure as FileSystemFailure:
      return failure.isOutOfSpace ? .notEnoughSpace : .internalError(description: redactor.redact(failure.description))
    case is CancellationError: return .internalError(description: "The download was cancelled.")
    default: return .internalError(description: redactor.redact(String(describing: error)))
    }
  }

  /// `error` as a ``DownloadedModelError`` without secrets.
  private func downloadedModelError(_ error: any Error) -> DownloadedModelError {
    switch error {
    case let error as DownloadedModelError: return error
    case let failure as FileSystemFailure: return .fileIOError(description: failure.description)
    default: return .internalError(description: redactor.redact(String(describing: error)))
    }
  }
}
