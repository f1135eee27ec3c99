// A reference dump: every tensor another runtime computed for one run of a model, as written by
// `Scripts/litert_dump.py` (the format is public, README "Per-layer comparison with LiteRT"):
//
//   DIR/manifest.json                   {"model": {"sha256"}, "resolver", "runtime", "inputs",
//                                        "subgraphs": [{"index", "name", "tensors": [{"index", "name",
//                                        "type", "shape", "quantization", "file"}]}]}
//   DIR/<subgraph>/<tensor index>.npy   one tensor's values ("file" in the manifest; null when the
//                                        writer could not read the tensor, with "absent_reason")
//
// Reading checks that the dump belongs to the model (SHA-256, and for every subgraph it lists the
// tensor count and types) and that every file holds what the manifest says; anything else is a
// `ReferenceDumpError`. Subgraph 0 must be listed; a subgraph the manifest leaves out has no values
// (its tensors are absent). A subgraph that runs several times in one invoke holds its last run.

import FirebaseMLModelDownloader
import Foundation
import TFLiteRuntime

/// A reference dump that cannot be used with the model: the message says why.
struct ReferenceDumpError: Error, CustomStringConvertible {
  /// What is wrong.
  var description: String
  /// Creates an error.
  init(_ description: String) { self.description = description }
}

/// The manifest of a reference dump and where its files are.
struct ReferenceDump {
  /// `manifest.json` as written.
  struct Manifest: Decodable {
    /// The model the dump was made from.
    struct Model: Decodable {
      /// The model file's name.
      var file: String?
      /// Lowercase hexadecimal SHA-256 of the model's bytes.
      var sha256: String
    }
    /// The runtime that wrote the values.
    struct Runtime: Decodable {
      /// Package name (`ai-edge-litert`).
      var package: String?
      /// Package version.
      var version: String?
    }
    /// One subgraph's tensors.
    struct Subgraph: Decodable {
      /// Subgraph index.
      var index: Int
      /// Subgraph name in the model.
      var name: String?
      /// Every tensor of the subgraph, by index.
      var tensors: [Tensor]
    }
    /// One tensor's facts.
    struct Tensor: Decodable {
      /// Tensor index in its subgraph.
      var index: Int
      /// The tensor's name in the model.
      var name: String?
      /// Schema type name (`FLOAT32`, `INT8`).
      var type: String
      /// The shape of the values.
      var shape: [Int]
      /// The `.npy` file relative to the dump, nil when the tensor is absent.
      var file: String?
      /// Why an absent tensor is absent.
      var absentReason: String?

      private enum CodingKeys: String, CodingKey {
        case index, name, type, shape, file
        case absentReason = "absent_reason"
      }
    }
    /// The model.
    var model: Model
    /// The writing runtime.
    var runtime: Runtime?
    /// The op resolver (`BUILTIN_REF`).
    var resolver: String?
    /// The subgraphs.
    var subgraphs: [Subgraph]
  }

  /// The dump's directory.
  let directory: String
  /// The manifest.
  let manifest: Manifest
  /// The manifest's tensors of every subgraph it lists, by subgraph index, each by tensor index.
  let tensors: [Int: [Manifest.Tensor]]

  /// Reads `directory/manifest.json` and checks that it describes `modelPath`, whose subgraph `s`
  /// has the tensors `subgraphTensors[s]` (nil for a subgraph the runtime does not run: unchecked).
  init(directory: String, modelPath: String, subgraphTensors: [[RuntimeTensor]?]) throws {
    self.directory = directory
    let manifestPath = (directory as NSString).appendingPathComponent("manifest.json")
    guard let manifestData = FileManager.default.contents(atPath: manifestPath) else {
      throw ReferenceDumpError("cannot read \(manifestPath)")
    }
    do {
      manifest = try JSONDecoder().decode(Manifest.self, from: manifestData)
    } catch {
      throw ReferenceDumpError("\(manifestPath) is not a reference-dump manifest: \(error)")
    }
    guard let modelData = FileManager.default.contents(atPath: modelPath) else {
      throw ReferenceDumpError("cannot read \(modelPath)")
    }
    let digest = SHA256.hexDigest(of: [UInt8](modelData))
    guard digest == manifest.model.sha256.lowercased() else {
      throw ReferenceDumpError(
        "\(directory) was made from another model (manifest sha256 \(manifest.model.sha256)\(manifest.model.file.map { ", \($0)" } ?? ""); \(modelPath) has sha256 \(digest))"
      )
    }
    guard manifest.subgraphs.contains(where: { $0.index == 0 }) else {
      throw ReferenceDumpError("\(manifestPath) lists no subgraph 0")
    }
    var tensors: [Int: [Manifest.Tensor]] = [:]
    for subgraph in manifest.subgraphs {
      guard subgraphTensors.indices.contains(subgraph.index), tensors[subgraph.index] == nil else {
        throw ReferenceDumpError(
          "\(manifestPath) lists subgraph \(subgraph.index) twice or beyond the model's \(subgraphTensors.count)")
      }
      guard let modelTensors = subgraphTensors[subgraph.index] else { continue }
      guard subgraph.tensors.count == modelTensors.count,
        subgraph.tensors.enumerated().allSatisfy({ $0.offset == $0.element.index })
      else {
        throw ReferenceDumpError(
          "\(manifestPath) lists \(subgraph.tensors.count) tensors of subgraph \(subgraph.index) (indices must be 0, 1, ...); the model has \(modelTensors.count)"
        )
      }
      for (entry, tensor) in zip(subgraph.tensors, modelTensors) where entry.type != tensor.type.name {
        throw ReferenceDumpError(
          "\(manifestPath): tensor \(entry.index) '\(tensor.name)' of subgraph \(subgraph.index) is \(tensor.type.name) in the model, \(entry.type) in the manifest"
        )
      }
      tensors[subgraph.index] = subgraph.tensors
    }
    self.tensors = tensors
  }

  /// `ai-edge-litert 2.3.0, BUILTIN_REF`.
  var producer: String {
    let runtime = [manifest.runtime?.package, manifest.runtime?.version].compactMap { $0 }.joined(separator: " ")
    return [runtime.isEmpty ? nil : runtime, manifest.resolver].compactMap { $0 }.joined(separator: ", ")
  }

  /// Why tensor `index` of `subgraph` has no values in the dump, nil when it has.
  func absence(of index: Int, inSubgraph subgraph: Int = 0) -> String? {
    guard let entry = tensors[subgraph]?[index] else { return "the reference lists no subgraph \(subgraph)" }
    guard entry.file == nil else { return nil }
    return entry.absentReason ?? "absent from the reference"
  }

  /// The values of tensor `index` of `subgraph` (which must be present), checked against the
  /// manifest: same shape, and the element type the manifest names.
  func values(of index: Int, inSubgraph subgraph: Int = 0) throws -> HostArray {
    guard let entry = tensors[subgraph]?[index], let file = entry.file else {
      throw ReferenceDumpError("tensor \(index) of subgraph \(subgraph) is absent from \(directory)")
    }
    guard !file.hasPrefix("/"), !file.split(separator: "/").contains("..") else {
      throw ReferenceDumpError("tensor \(index) of subgraph \(subgraph): file '\(file)' is outside the dump")
    }
    let path = (directory as NSString).appendingPathComponent(file)
    let array: HostArray
    do {
      array = try HostArray(numPyFile: path)
    } catch {
      throw ReferenceDumpError("\(error)")
    }
    // `.npy` has no INT4: such values are stored one per int8.
    let type = array.type == .int8 && entry.type == ElementType.int4.name ? ElementType.int4 : array.type
    guard type.name == entry.type, array.shape == entry.shape else {
      throw ReferenceDumpError(
        "\(path) holds \(array.typeAndShape), but the manifest says \(entry.type) \(formatShape(entry.shape))")
    }
    return HostArray(type: type, shape: array.shape, bytes: array.bytes, origin: path)
  }
}
