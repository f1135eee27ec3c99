// The notifications `ModelManager.download(_:conditions:)` posts on `NotificationCenter.default`
// when a download ends, and the keys of their `userInfo`.
import Foundation

extension Notification.Name {
  /// Posted when a model download succeeds (also when the model was already the latest);
  /// `userInfo[ModelDownloadUserInfoKey.remoteModel.rawValue]` is the ``RemoteModel``.
  public static let firebaseMLModelDownloadDidSucceed = Notification.Name("FIRModelDownloadDidSucceedNotification")
  /// Posted when a model download fails; `userInfo` holds the ``RemoteModel`` and, under
  /// ``ModelDownloadUserInfoKey/error``, an `NSError` in ``MachineLearningErrorDomain``.
  public static let firebaseMLModelDownloadDidFail = Notification.Name("FIRModelDownloadDidFailNotification")
}

/// Keys of the `userInfo` of the download notifications; read them with `.rawValue`.
public struct ModelDownloadUserInfoKey: Hashable, RawRepresentable, Sendable {
  /// The key's string.
  public let rawValue: String

  /// Wraps a key string.
  public init(rawValue: String) {
    self.rawValue = rawValue
  }

  /// The ``RemoteModel`` the notification is about (the object passed to `download`).
  public static let remoteModel = ModelDownloadUserInfoKey(rawValue: "FIRModelDownloadUserInfoKeyRemoteModel")
  /// The `NSError` of a failed download.
  public static let error = ModelDownloadUserInfoKey(rawValue: "FIRModelDownloadUserInfoKeyError")
}
