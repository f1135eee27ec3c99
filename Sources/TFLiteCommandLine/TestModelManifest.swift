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
    /// A text file with one class label per line, for classifiers.
    public var labels: String?
    /// `.npy` files to classify in the demo.
    public var demoInputs: [String]?
    /// The reference inputs.
    public var inputs: [Endpoint]

    private enum CodingKeys: String, CodingKey {
      case name, file, kind, labels, inputs
      case demoInputs = "demo_inputs"
    }
  }

  /// Every model.
  public var models: [Model]
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
    struct File: Decodable { var models: [Model] }
    do {
      models = try JSONDecoder().decode(File.self, from: data).models
    } catch {
      throw CommandFailure("\(path) is not a valid manifest: \(error)")
    }
  }

  /// `file` relative to the manifest's directory.
  public func resolve(_ file: String) -> String {
    (directory as NSString).appendingPathComponent(file)
  }
}
