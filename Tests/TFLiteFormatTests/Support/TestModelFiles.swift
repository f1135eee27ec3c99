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

  /// `TestModels/manifest.json`, parsed.
  static func manifest() throws -> [String: Any] {
    let data = try Data(contentsOf: directory.appendingPathComponent("manifest.json"))
    guard let manifest = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
      throw CocoaError(.fileReadCorruptFile)
    }
    return manifest
  }
}
