import Foundation
import TFLiteTestSupport

/// Hand-built models for the API tests. They have no operators (outputs are the input tensors
/// themselves), so they exercise the interpreter's plumbing without relying on any kernel.
enum Fixtures {
  /// Schema `TensorType` values.
  enum SchemaType {
    static let float32: UInt8 = 0
    static let uint8: UInt8 = 3
    static let string: UInt8 = 5
    static let int8: UInt8 = 9
  }

  /// Subgraph 0 has four inputs that are also its outputs: `input` FLOAT32 [1, 3] (resizable
  /// first dimension), `quantized` UINT8 [2] (scale 0.5, zero point 3), `per_channel` INT8 [2, 1]
  /// (scales 0.5 and 0.25 along dimension 0) and `text` STRING [1]. Subgraph 1 has one FLOAT32 [2]
  /// tensor `second_x`. Signatures: `first` (subgraph 0, x → input, y → input) and `second`
  /// (subgraph 1, x → second_x, y → second_x).
  static let passThrough = TestModel(
    subgraphs: [
      TestModel.Subgraph(
        tensors: [
          .init(name: "input", type: SchemaType.float32, shape: [1, 3], shapeSignature: [-1, 3]),
          .init(name: "quantized", type: SchemaType.uint8, shape: [2], scales: [0.5], zeroPoints: [3]),
          .init(
            name: "per_channel", type: SchemaType.int8, shape: [2, 1], scales: [0.5, 0.25], zeroPoints: [0, 0],
            quantizedDimension: 0),
          .init(name: "text", type: SchemaType.string, shape: [1]),
        ],
        inputs: [0, 1, 2, 3], outputs: [0, 1, 2, 3]),
      TestModel.Subgraph(
        tensors: [.init(name: "second_x", type: SchemaType.float32, shape: [2])], inputs: [0], outputs: [0]),
    ],
    signatures: [
      .init(key: "first", subgraph: 0, inputs: [("x", 0)], outputs: [("y", 0)]),
      .init(key: "second", subgraph: 1, inputs: [("x", 0)], outputs: [("y", 0)]),
    ])

  /// One node running a custom operator no runtime has.
  static let unknownOperator = TestModel(subgraphs: [
    TestModel.Subgraph(
      tensors: [
        .init(name: "a", type: SchemaType.float32, shape: [1]), .init(name: "b", type: SchemaType.float32, shape: [1]),
      ],
      inputs: [0], outputs: [1], nodes: [.init(customCode: "NoSuchOperator", inputs: [0], outputs: [1])])
  ])

  /// Writes `model` to a new temporary file and returns its path.
  static func file(for model: TestModel) throws -> String {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("tflite-api-\(UUID().uuidString).tflite")
    try Data(model.serialized()).write(to: url)
    return url.path
  }
}

extension Data {
  /// The bytes of `values`.
  init<Element>(copyingBufferOf values: [Element]) {
    self = values.withUnsafeBufferPointer { Data(buffer: $0) }
  }
}
