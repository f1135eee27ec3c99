// The models ML Kit code names: a remote model is a name at the model source (Firebase ML, static
// hosting or a folder, see `ModelManager`), a local model is a `.tflite` file on the device.
import Foundation

/// A model hosted remotely and downloaded by ``ModelManager`` (ML Kit's `FIRRemoteModel`).
public class RemoteModel: NSObject, @unchecked Sendable {  // immutable after init
  /// The model's name at its source.
  public let name: String

  /// Creates a remote model called `name` (users create ``CustomRemoteModel``s).
  init(remoteName name: String) {
    self.name = name
  }

  /// Two remote models are equal when they name the same model.
  public override func isEqual(_ object: Any?) -> Bool {
    guard let other = object as? RemoteModel else { return false }
    return type(of: other) == type(of: self) && other.name == name
  }

  /// Hash consistent with ``isEqual(_:)``.
  public override var hash: Int { name.hashValue }

  /// `RemoteModel(name: "…")`.
  public override var description: String { "\(type(of: self))(name: \"\(name)\")" }
}

/// A model stored on the device (ML Kit's `FIRLocalModel`).
public class LocalModel: NSObject, @unchecked Sendable {  // immutable after init
  /// Absolute path of the model file.
  public let path: String

  /// Creates a local model at `path` (users create ``CustomLocalModel``s).
  init(localPath path: String) {
    self.path = path
  }

  /// Two local models are equal when they have the same path.
  public override func isEqual(_ object: Any?) -> Bool {
    guard let other = object as? LocalModel else { return false }
    return type(of: other) == type(of: self) && other.path == path
  }

  /// Hash consistent with ``isEqual(_:)``.
  public override var hash: Int { path.hashValue }

  /// `LocalModel(path: "…")`.
  public override var description: String { "\(type(of: self))(path: \"\(path)\")" }
}

/// A custom TensorFlow Lite model hosted remotely, identified by the name it was published under.
public final class CustomRemoteModel: RemoteModel, @unchecked Sendable {
  /// Creates a remote model called `name`.
  public init(name: String) {
    super.init(remoteName: name)
  }
}

/// A custom TensorFlow Lite model file on the device, such as one in the app bundle.
public final class CustomLocalModel: LocalModel, @unchecked Sendable {
  /// Creates a local model for the `.tflite` file at `modelPath` (an absolute path).
  public init(modelPath: String) {
    super.init(localPath: modelPath)
  }
}
