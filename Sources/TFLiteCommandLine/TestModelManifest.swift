import Foundation

/// The parts of `TestModels/manifest.json` (written by the model generator) that the demo and the
/// benchmarks read.
public struct TestModelManifest: Sendable {
  /// One model entry.
  public struct Model: Decodable, Sendable {
    /// One input or output entry.
    public struct Endpoint: Decodable, Sendable {
      /// The `.npy` file, relative to the manifest's directory.
      public var file: String
    }
    /// Case name.
    public var name: String
    /// The `.tflite` file, relative to the manifest's directory.
    public var file: String
    /// `op` for single-operator cases, `network` for whole networks.
    public var kind: String?
    /// The reference inputs.
    public var inputs: [Endpoint]
  }

  /// The bundled classifier that `tflite demo` runs, with its labels and sample inputs.
  public struct Demo: Decodable, Sendable {
    /// One sample input with its true label.
    public struct Sample: Decodable, Sendable {
      /// The `.npy` file, relative to the manifest's directory.
      public var file: String
      /// The name of the sample's true class.
      public var labelName: String?

      private enum CodingKeys: String, CodingKey {
        case file
        case labelName = "label_name"
      }
    }
    /// The classifier's `.tflite` file, relative to the manifest's directory.
    public var model: String
    /// A text file with one class label per line.
    public var labels: String
    /// The samples to classify.
    public var inputs: [Sample]
  }

  /// Every model.
  public var models: [Model]
  /// The demo classifier, when the manifest has one.
  public var demo: Demo?
  /// The manifest's path.
  public var path: String
  /// The directory the manifest's paths are relative to.
  public var directory: String

  /// Reads `directory/manifest.json`.
  public init(directory: String) throws {
    self.directory = directory
    path = (directory as NSString).appendingPathComponent("manifest.json")
    guard let data = FileManager.default.contents(atPath: path) else {
      throw CommandFailure("cannot read \(path)")
    }
    struct File: Decodable {
      var models: [Model]
      var demo: Demo?
    }
    do {
      let file = try JSONDecoder().decode(File.self, from: data)
      models = file.models
      demo = file.demo
    } catch {
      throw CommandFailure("\(path) is not a valid manifest: \(error)")
    }
  }

  /// `file` relative to the manifest's directory.
  public func resolve(_ file: String) -> String {
    (directory as NSString).appendingPathComponent(file)
  }
}
