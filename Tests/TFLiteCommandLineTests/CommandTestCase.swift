import Foundation
import TFLiteCommandLine
import TFLiteFormat
import TFLiteTestSupport
import XCTest

/// Base of the command tests: a temporary directory, hand-built models in it, and a way to run
/// `tflite` and capture what it prints.
class CommandTestCase: XCTestCase {
  /// A fresh directory for each test, removed afterwards.
  var directory = ""

  override func setUpWithError() throws {
    directory = FileManager.default.temporaryDirectory.appendingPathComponent("tflite-cli-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
  }

  override func tearDownWithError() throws {
    try FileManager.default.removeItem(atPath: directory)
  }

  /// `name` inside the test directory.
  func path(_ name: String) -> String { (directory as NSString).appendingPathComponent(name) }

  /// Runs `tflite arguments...` and returns the exit code and the captured output.
  func run(_ arguments: String...) -> (code: Int32, output: CapturedOutput) {
    let output = CapturedOutput()
    return (CommandLineTool.main(arguments: arguments, output: output), output)
  }

  /// Writes `model` into the test directory as `name` and returns the path.
  func write(_ model: TestModel, as name: String) throws -> String {
    let file = path(name)
    try Data(model.serialized()).write(to: URL(fileURLWithPath: file))
    return file
  }

  /// Writes `values` of `shape` as the `.npy` file `name` and returns the path.
  func writeNumPy<Element: NumPyScalar>(_ values: [Element], shape: [Int], as name: String) throws -> String {
    let file = path(name)
    try NumPyArray(shape: shape, values: values).write(toFile: file)
    return file
  }

  /// A graph without operators whose outputs are its inputs: `input` FLOAT32 [1, 3] (first
  /// dimension resizable) and `quantized` UINT8 [2] (scale 0.5, zero point 3); signature
  /// `serving` names them x and q.
  static let passThrough = TestModel(
    subgraphs: [
      TestModel.Subgraph(
        tensors: [
          .init(name: "input", type: 0, shape: [1, 3], shapeSignature: [-1, 3]),
          .init(name: "quantized", type: 3, shape: [2], scales: [0.5], zeroPoints: [3]),
        ],
        inputs: [0, 1], outputs: [0, 1])
    ],
    signatures: [.init(key: "serving", subgraph: 0, inputs: [("x", 0), ("q", 1)], outputs: [("y", 0), ("r", 1)])])
}
