import Foundation
import TFLiteImage

/// `TestModels/taskvision/` (written by `Scripts/make_taskvision_fixtures.py`) and its `expected.json`,
/// the Task-API results computed with LiteRT and numpy.
enum TaskVisionFixtures {
  /// `TestModels/taskvision/` at the repository root.
  static let directory = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("TestModels/taskvision")

  /// The path of `name` under `TestModels/taskvision/`.
  static func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

  /// The decoded test scene.
  static func scene() throws -> Image {
    try decodeImage([UInt8](try Data(contentsOf: directory.appendingPathComponent("scene.png"))))
  }

  /// One expected detection.
  struct ExpectedDetection: Decodable {
    struct Box: Decodable { var left, top, right, bottom: Double }
    var index: Int
    var label: String
    var display_name: String
    var score: Float
    var box: Box
  }

  /// One expected class.
  struct ExpectedClass: Decodable {
    var index: Int
    var label: String
    var score: Float
  }

  /// The whole file.
  struct Expected: Decodable {
    var metadata_detector: [ExpectedDetection]
    var bundle_detector: [ExpectedDetection]
    var uint8_bundle_detector: [ExpectedDetection]
    var metadata_classifier: [ExpectedClass]
    var int8_classifier: [ExpectedClass]
  }

  static func expected() throws -> Expected {
    try JSONDecoder().decode(Expected.self, from: Data(contentsOf: directory.appendingPathComponent("expected.json")))
  }

  /// A fresh temporary folder.
  static func temporaryFolder() throws -> URL {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("taskvision-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    return folder
  }
}
