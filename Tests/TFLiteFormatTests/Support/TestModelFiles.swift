import Foundation

/// The committed `TestModels/` folder and its `.tflite` files.
enum TestModelFiles {
  /// `TestModels/` at the repository root.
  static let directory = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("TestModels")

  /// Every `.tflite` file under `TestModels/`, sorted by path.
  static var models: [URL] {
    let enumerator = FileManager.default.enumerator(at: directory.resolvingSymlinksInPath(), includingPropertiesForKeys: nil)
    let files = (enumerator?.allObjects as? [URL] ?? []).filter { $0.pathExtension == "tflite" }
    return files.sorted { $0.path < $1.path }
  }

  /// The paths of the bad-input fixtures of `TestModels/format3d`, which must not load (its
  /// manifest gives each one the error text it must throw; `Format3DTests` checks them).
  static func badInputModels() throws -> Set<String> {
    let folder = directory.resolvingSymlinksInPath().appendingPathComponent("format3d")
    let data = try Data(contentsOf: folder.appendingPathComponent("manifest.json"))
    let models = (try JSONSerialization.jsonObject(with: data) as? [String: Any])?["models"] as? [[String: Any]] ?? []
    return Set(models.compactMap { entry in
      guard let name = entry["name"] as? String, let expect = entry["expect"] as? String,
        !["loads", "unsupported"].contains(expect)
      else { return nil }
      return folder.appendingPathComponent("\(name).tflite").path
    })
  }

  /// `TestModels/manifest.json`, parsed.
  static func manifest() throws -> [String: Any] {
    let data = try Data(contentsOf: directory.appendingPathComponent("manifest.json"))
    guard let manifest = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
      throw CocoaError(.fileReadCorruptFile)
    }
    return manifest
  }
}
