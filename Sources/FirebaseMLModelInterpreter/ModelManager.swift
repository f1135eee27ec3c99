// ML Kit's `ModelManager` over this package's `ModelDownloader`: the same sources, storage,
// verification, atomic installation and resumption, so a model downloaded here and one downloaded
// with `ModelDownloader` (or `tflite download`) with the same source and storage are the same file.
import Dispatch
import Foundation

/// Downloads remote models and reports where they are (ML Kit's `FIRModelManager`).
///
/// `ModelManager.modelManager()` uses Firebase ML through the default Firebase app, as the SDK
/// did. Firebase ML shuts down on 15 June 2027; one line points every manager that code obtains
/// this way at static hosting or a folder instead, without changing the rest of the code:
///
/// ```swift
/// ModelManager.configure(source: .staticHosting(baseURL: URL(string: "https://models.example.com/v1/")!))
/// ```
///
/// Download notifications, `deleteDownloadedModel` completions and the updates of the returned
/// `Progress` run on ``callbackQueue``: the main queue on Apple platforms, a private serial queue
/// on Linux (where command-line programs seldom drain the main queue), as `ModelDownloader` does.
public final class ModelManager: NSObject, @unchecked Sendable {  // immutable; the downloader is Sendable
  /// The downloader doing the work.
  public let modelDownloader: ModelDownloader

  /// Managers of Firebase apps, by app name.
  private static let appManagers = Locked<[String: ModelManager]>([:])
  /// The manager ``configure(modelDownloader:)`` set for ``modelManager()``, if any.
  private static let configuredManager = Locked<ModelManager?>(nil)

  /// A manager over `modelDownloader` (any source and settings).
  public init(modelDownloader: ModelDownloader) {
    self.modelDownloader = modelDownloader
  }

  /// Where notifications, completions and progress updates run; the downloader's setting.
  public var callbackQueue: ModelDownloaderCallbackQueue {
    get { modelDownloader.callbackQueue }
    set { modelDownloader.callbackQueue = newValue }
  }

  // MARK: - Obtaining a manager

  /// The manager of the default Firebase app, or the one ``configure(source:settings:)`` set.
  /// Without either, downloads fail with "Default Firebase app not configured." (the SDK raised
  /// an exception instead).
  public static func modelManager() -> ModelManager {
    if let configured = configuredManager.withLock({ $0 }) { return configured }
    guard let app = FirebaseApp.app() else { return ModelManager(modelDownloader: ModelDownloader.modelDownloader()) }
    return modelManager(app: app)
  }

  /// The manager of `app` (the same object for every call with that app), over Firebase ML.
  public static func modelManager(app: FirebaseApp) -> ModelManager {
    appManagers.withLock { managers in
      if let existing = managers[app.name], existing.modelDownloader === ModelDownloader.modelDownloader(app: app) {
        return existing
      }
      let manager = ModelManager(modelDownloader: ModelDownloader.modelDownloader(app: app))
      managers[app.name] = manager
      return manager
    }
  }

  /// Makes ``modelManager()`` (and `ModelInterpreter.modelInterpreter(remoteModel:)`) download
  /// from `source` with `settings` instead of Firebase ML.
  public static func configure(source: ModelSource, settings: ModelDownloaderSettings = ModelDownloaderSettings()) {
    configure(modelDownloader: ModelDownloader(source: source, settings: settings))
  }

  /// Makes ``modelManager()`` use `modelDownloader`; nil restores the default app's Firebase ML.
  public static func configure(modelDownloader: ModelDownloader?) {
    configuredManager.withLock { $0 = modelDownloader.map(ModelManager.init(modelDownloader:)) }
  }

  // MARK: - ML Kit's API

  /// Whether `remoteModel` has been downloaded and is on the device.
  public func isModelDownloaded(_ remoteModel: RemoteModel) -> Bool {
    storedModel(named: remoteModel.name) != nil
  }

  /// Downloads `remoteModel` if it is not on the device or the source has a newer version, and
  /// returns the progress in bytes (finished only once the verified model is in place). When the download ends, ``Foundation/NSNotification/Name/firebaseMLModelDownloadDidSucceed``
  /// (also when the model was already the latest; the progress is then finished) or
  /// ``Foundation/NSNotification/Name/firebaseMLModelDownloadDidFail`` is posted on
  /// `NotificationCenter.default`. A failed download keeps the previously downloaded model.
  @discardableResult
  public func download(_ remoteModel: RemoteModel, conditions: ModelDownloadConditions) -> Progress {
    let progress = Progress(totalUnitCount: -1)
    let queue = callbackQueue
    let shared = SendableBox(value: (progress: progress, model: remoteModel))
    Task.detached { [modelDownloader] in
      do {
        let model = try await modelDownloader.getModel(
          name: shared.value.model.name, downloadType: .latestModel, conditions: conditions
        ) { update in
          queue.deliver {
            // The last byte counts once the verified model is installed, so a download that
            // fails its checks never looks finished.
            shared.value.progress.totalUnitCount = update.totalBytes
            shared.value.progress.completedUnitCount = max(0, min(update.bytesReceived, update.totalBytes - 1))
          }
        }
        queue.deliver {
          shared.value.progress.totalUnitCount = Int64(model.size)
          shared.value.progress.completedUnitCount = Int64(model.size)
          Self.post(.firebaseMLModelDownloadDidSucceed, model: shared.value.model, error: nil)
        }
      } catch {
        let failure = MachineLearningError.download(
          error as? DownloadError ?? .internalError(description: "\(error)"), modelName: shared.value.model.name)
        queue.deliver { Self.post(.firebaseMLModelDownloadDidFail, model: shared.value.model, error: failure) }
      }
    }
    return progress
  }

  /// Deletes the downloaded file of `remoteModel`; `completion` receives nil or the error, on
  /// ``callbackQueue``.
  public func deleteDownloadedModel(_ remoteModel: RemoteModel, completion: @escaping (Error?) -> Void) {
    let name = remoteModel.name
    modelDownloader.deleteDownloadedModel(name: name) { result in
      switch result {
      case .success: completion(nil)
      case .failure(let error): completion(MachineLearningError.deletion(error, modelName: name))
      }
    }
  }

  /// Gives `completion` the absolute path of the downloaded file of `remoteModel`, or nil and an
  /// error when it is not downloaded or is not a ``CustomRemoteModel``. `completion` runs before
  /// this method returns, on the caller's thread, so the path can be read right after the call
  /// (as Firebase's AutoML guide does).
  public func getLatestModelFilePath(_ remoteModel: RemoteModel, completion: @escaping (String?, Error?) -> Void) {
    guard remoteModel is CustomRemoteModel else {
      completion(nil, MachineLearningError.invalidArgument("Only custom remote models have a model file path."))
      return
    }
    guard let model = storedModel(named: remoteModel.name) else {
      completion(nil, Self.notDownloadedError(remoteModel.name))
      return
    }
    completion(model.path, nil)
  }

  // MARK: - Internals

  /// The stored model `name`, if downloaded. (The downloader reports a successful listing on the
  /// caller's thread, before returning.)
  func storedModel(named name: String) -> CustomModel? {
    var found: CustomModel?
    modelDownloader.listDownloadedModels { result in
      if case .success(let models) = result { found = models.first { $0.name == name } }
    }
    return found
  }

  /// The error for a remote model that is not on the device.
  static func notDownloadedError(_ name: String) -> NSError {
    MachineLearningError.make(
      .failedPrecondition, "Remote model '\(name)' has not been downloaded; call ModelManager.download(_:conditions:) first.")
  }

  /// Posts a download notification about `model`.
  private static func post(_ name: Notification.Name, model: RemoteModel, error: NSError?) {
    var userInfo: [String: Any] = [ModelDownloadUserInfoKey.remoteModel.rawValue: model]
    if let error { userInfo[ModelDownloadUserInfoKey.error.rawValue] = error }
    NotificationCenter.default.post(name: name, object: nil, userInfo: userInfo)
  }
}
