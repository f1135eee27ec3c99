import Foundation
import TFLiteCommandLine
import TFLiteFormat
import XCTest

final class RunCommandTests: CommandTestCase {
  func testRunWithInputsWritesTheOutputsUnchanged() throws {
    let model = try write(Self.passThrough, as: "model.tflite")
    let input = try writeNumPy([Float(0.5), -1, 2], shape: [1, 3], as: "a.npy")
    let quantized = try writeNumPy([UInt8(4), 200], shape: [2], as: "q.npy")
    let outputs = path("out")
    let result = run("run", model, "--input", input, "--input", quantized, "--output-dir", outputs)
    XCTAssertEqual(result.code, 0, result.output.standardError)
    let text = result.output.standardOutput
    XCTAssertTrue(text.contains("output 0 'input': FLOAT32 [1, 3]"), text)
    XCTAssertTrue(text.contains("min -1  max 2  mean 0.5"), text)
    XCTAssertTrue(text.contains("top-5: #2 2, #0 0.5, #1 -1"), text)
    XCTAssertTrue(text.contains("output 1 'quantized': UINT8 [2] (scale 0.5, zero point 3)"), text)
    // Dequantized: 0.5 * (4 - 3) and 0.5 * (200 - 3).
    XCTAssertTrue(text.contains("min 0.5  max 98.5"), text)
    XCTAssertEqual(
      try NumPyArray(contentsOfFile: (outputs as NSString).appendingPathComponent("output_0.npy")),
      try NumPyArray(contentsOfFile: input))
    let writtenQuantized = try NumPyArray(contentsOfFile: (outputs as NSString).appendingPathComponent("output_1.npy"))
    XCTAssertEqual(writtenQuantized.elementType, .uint8)
    XCTAssertEqual(try writtenQuantized.values(as: UInt8.self), [4, 200])
  }

  func testInputsByName() throws {
    let model = try write(Self.passThrough, as: "model.tflite")
    let quantized = try writeNumPy([UInt8(9), 10], shape: [2], as: "q.npy")
    let result = run("run", model, "--input", "quantized=\(quantized)", "--output-dir", path("out"))
    XCTAssertEqual(result.code, 0, result.output.standardError)
    XCTAssertEqual(try NumPyArray(contentsOfFile: path("out/output_1.npy")).values(as: UInt8.self), [9, 10])
  }

  func testRandomInputsAreSeeded() throws {
    let model = try write(Self.passThrough, as: "model.tflite")
    let first = run("run", model, "--output-dir", path("first"))
    let again = run("run", model, "--output-dir", path("again"))
    // The same report apart from the timing and the output directory.
    let report = { (text: String) in text.split(separator: "\n").filter { !$0.hasPrefix("invoke:") && !$0.hasPrefix("wrote") } }
    XCTAssertEqual(report(again.output.standardOutput), report(first.output.standardOutput))
    let other = run("run", model, "--seed", "7", "--output-dir", path("other"))
    XCTAssertEqual(first.code, 0, first.output.standardError)
    let firstValues = try NumPyArray(contentsOfFile: path("first/output_0.npy")).values(as: Float.self)
    XCTAssertEqual(try NumPyArray(contentsOfFile: path("again/output_0.npy")).values(as: Float.self), firstValues)
    XCTAssertNotEqual(try NumPyArray(contentsOfFile: path("other/output_0.npy")).values(as: Float.self), firstValues)
    XCTAssertTrue(firstValues.allSatisfy { (-1..<1).contains($0) }, "\(firstValues)")
    XCTAssertEqual(other.code, 0)
  }

  func testFlexibleDimensionTakesTheFileShape() throws {
    let model = try write(Self.passThrough, as: "model.tflite")
    let input = try writeNumPy([Float](repeating: 1, count: 6), shape: [2, 3], as: "a.npy")
    let result = run("run", model, "--input", input)
    XCTAssertEqual(result.code, 0, result.output.standardError)
    XCTAssertTrue(result.output.standardOutput.contains("output 0 'input': FLOAT32 [2, 3]"), result.output.standardOutput)
  }

  func testInputOfTheWrongTypeIsAClearError() throws {
    let model = try write(Self.passThrough, as: "model.tflite")
    let input = try writeNumPy([Double(1), 2, 3], shape: [1, 3], as: "a.npy")
    let result = run("run", model, "--input", input)
    XCTAssertEqual(result.code, 1)
    XCTAssertTrue(
      result.output.standardError.contains(
        "input 'input' expects FLOAT32 [1, 3] (shape signature [-1, 3]), got FLOAT64 [1, 3] from \(input)"),
      result.output.standardError)
  }

  func testInputOfTheWrongShapeIsAClearError() throws {
    let model = try write(Self.passThrough, as: "model.tflite")
    let input = try writeNumPy([Float](repeating: 0, count: 4), shape: [1, 4], as: "a.npy")
    let result = run("run", model, "--input", input)
    XCTAssertEqual(result.code, 1)
    XCTAssertTrue(result.output.standardError.contains("got FLOAT32 [1, 4]"), result.output.standardError)
  }

  func testTooManyInputsAndUnreadableFiles() throws {
    let model = try write(Self.passThrough, as: "model.tflite")
    let input = try writeNumPy([Float(1), 2, 3], shape: [1, 3], as: "a.npy")
    let tooMany = run("run", model, "--input", input, "--input", input, "--input", input)
    XCTAssertEqual(tooMany.code, 1)
    XCTAssertTrue(tooMany.output.standardError.contains("3 files given for 2 inputs"), tooMany.output.standardError)
    let missing = run("run", model, "--input", path("missing.npy"))
    XCTAssertEqual(missing.code, 1)
    XCTAssertTrue(missing.output.standardError.contains("cannot read"), missing.output.standardError)
  }

  func testSignatureNames() throws {
    let model = try write(Self.passThrough, as: "model.tflite")
    let quantized = try writeNumPy([UInt8(1), 2], shape: [2], as: "q.npy")
    let result = run("run", model, "--signature", "serving", "--input", "q=\(quantized)")
    XCTAssertEqual(result.code, 0, result.output.standardError)
    XCTAssertTrue(result.output.standardOutput.contains("output 1 'r': UINT8 [2]"), result.output.standardOutput)
    let unknown = run("run", model, "--signature", "nope")
    XCTAssertEqual(unknown.code, 1)
    XCTAssertTrue(unknown.output.standardError.contains("no signature 'nope' (signatures: 'serving')"), unknown.output.standardError)
  }

  func testMissingModelIsAFailureAndMissingArgumentAUsageError() {
    XCTAssertEqual(run("run", path("missing.tflite")).code, 1)
    XCTAssertEqual(run("run").code, 64)
    XCTAssertEqual(run("run", "a", "--threads", "0").code, 64)
  }
}
