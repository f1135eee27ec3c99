import Foundation
import XCTest

import FirebaseMLModelInterpreter

/// Formats, inputs and model files that do not fit: each gives the documented `NSError` through
/// the throwing call or the run's completion, and the interpreter keeps working afterwards.
final class BadInputTests: ModelInterpreterTestCase {
  let floatModelPath = TestModels.path("networks/mobilenet_mini_float.tflite")
  let uint8ModelPath = TestModels.path("networks/mobilenet_mini_uint8.tflite")

  /// Asserts that `body` throws an invalid-argument error of this module.
  func assertInvalidArgument(_ body: @autoclosure () throws -> Void, line: UInt = #line) {
    XCTAssertThrowsError(try body(), line: line) { error in
      let error = error as NSError
      XCTAssertEqual(error.domain, MachineLearningErrorDomain, line: line)
      XCTAssertEqual(error.code, MachineLearningErrorDomainCode.invalidArgument.rawValue, line: line)
    }
  }

  func testInvalidFormatsAndInputsThrowAtOnce() throws {
    let options = ModelInputOutputOptions()
    assertInvalidArgument(try options.setInputFormat(index: 0, type: .unknown, dimensions: [1, 10]))
    assertInvalidArgument(try options.setInputFormat(index: 0, type: .float32, dimensions: []))
    assertInvalidArgument(try options.setOutputFormat(index: 0, type: .float32, dimensions: [1, 0]))
    assertInvalidArgument(try options.setOutputFormat(index: 0, type: .float32, dimensions: [1, -3]))
    assertInvalidArgument(try options.setOutputFormat(index: 0, type: .float32, dimensions: [NSNumber(value: 2.5)]))
    assertInvalidArgument(try options.setOutputFormat(index: 0, type: .float32, dimensions: [NSNumber(value: 1 << 30), NSNumber(value: 1 << 30), NSNumber(value: 1 << 30)]))
    let inputs = ModelInputs()
    assertInvalidArgument(try inputs.addInput("pixels"))
    assertInvalidArgument(try inputs.addInput(42))
    assertInvalidArgument(try inputs.addInput(Optional<Data>.none as Any))
    XCTAssertNoThrow(try inputs.addInput(Optional(Data([1])) as Any))
    let outputs = ModelInputOutputOptions()
    XCTAssertNoThrow(try outputs.setOutputFormat(index: 0, type: .float32, dimensions: [1, 10]))
  }

  func testRunRejectsFormatsAndInputsThatDoNotFitTheModel() async throws {
    let interpreter = ModelInterpreter.modelInterpreter(localModel: CustomLocalModel(modelPath: floatModelPath))
    let image = try TestModels.data("networks/mobilenet_mini_float.input_0.npy")
    let floats = try TestModels.array("networks/mobilenet_mini_float.input_0.npy").floatValues()

    /// Options for the float model with an input and an output format.
    func options(
      _ inputType: ModelElementType = .float32, _ input: [NSNumber] = [1, 32, 32, 3],
      outputType: ModelElementType = .float32, output: [NSNumber] = [1, 10], outputIndex: UInt = 0
    ) throws -> ModelInputOutputOptions {
      let options = ModelInputOutputOptions()
      try options.setInputFormat(index: 0, type: inputType, dimensions: input)
      try options.setOutputFormat(index: outputIndex, type: outputType, dimensions: output)
      return options
    }
    func inputs(_ values: Any...) throws -> ModelInputs {
      let inputs = ModelInputs()
      for value in values { try inputs.addInput(value) }
      return inputs
    }

    await runExpectingError(interpreter, try inputs(image), ModelInputOutputOptions(), .invalidArgument)
    let inputOnly = ModelInputOutputOptions()
    try inputOnly.setInputFormat(index: 0, type: .float32, dimensions: [1, 32, 32, 3])
    await runExpectingError(interpreter, try inputs(image), inputOnly, .invalidArgument)
    await runExpectingError(interpreter, ModelInputs(), try options(), .invalidArgument)
    await runExpectingError(interpreter, try inputs(image, image), try options(), .invalidArgument)
    let byteCount = await runExpectingError(interpreter, try inputs(image.dropLast()), try options(), .invalidArgument)
    XCTAssertTrue(byteCount.contains("12287 bytes"), byteCount)
    await runExpectingError(interpreter, try inputs(image), try options(.uInt8), .invalidArgument)  // byte count
    let type = await runExpectingError(interpreter, try inputs(Data(count: 3072)), try options(.uInt8), .invalidArgument)
    XCTAssertTrue(type.contains("UINT8") && type.contains("FLOAT32"), type)
    await runExpectingError(interpreter, try inputs(image), try options(.float32, [32, 32, 12]), .invalidArgument)  // rank
    await runExpectingError(interpreter, try inputs(image), try options(output: [1, 5]), .invalidArgument)
    await runExpectingError(interpreter, try inputs(image), try options(outputType: .int32), .invalidArgument)
    await runExpectingError(interpreter, try inputs(image), try options(outputIndex: 1), .invalidArgument)

    var ragged = try XCTUnwrap(nested(floats, [1, 32, 32, 3]) as? [[[[Float]]]])
    ragged[0][5][7].removeLast()
    let raggedMessage = await runExpectingError(interpreter, try inputs(ragged), try options(), .invalidArgument)
    XCTAssertTrue(raggedMessage.contains("[0][5][7]"), raggedMessage)
    var words = try XCTUnwrap(nested(floats.map { NSNumber(value: $0) as Any }, [1, 32, 32, 3]) as? [[[[Any]]]])
    words[0][1][2][0] = "red"
    await runExpectingError(interpreter, try inputs(words), try options(), .invalidArgument)
    await runExpectingError(interpreter, try inputs([[1, 2, 3]]), try options(), .invalidArgument)  // rank of the array

    // Still usable: a valid run gives LiteRT's output.
    let result = await run(interpreter, try inputs(image), try options())
    let output = try XCTUnwrap(try result.outputs?.output(index: 0) as? [[Float]])
    let expected = try TestModels.array("networks/mobilenet_mini_float.output_0.npy").floatValues()
    for (have, want) in zip(output[0], expected) { XCTAssertEqual(have, want, accuracy: 1e-5) }
    XCTAssertThrowsError(try result.outputs?.output(index: 1))
  }

  func testIntegerInputsRefuseNaNFractionsAndOutOfRangeValues() async throws {
    let interpreter = ModelInterpreter.modelInterpreter(localModel: CustomLocalModel(modelPath: uint8ModelPath))
    let options = ModelInputOutputOptions()
    try options.setInputFormat(index: 0, type: .uInt8, dimensions: [1, 32, 32, 3])
    try options.setOutputFormat(index: 0, type: .uInt8, dimensions: [1, 10])
    let raw = try TestModels.array("networks/mobilenet_mini_uint8.input_0.npy").values(as: UInt8.self)
    for bad in [Double.nan, 2.5, 256, -1, Double.infinity] {
      var values = raw.map(Double.init)
      values[100] = bad
      let inputs = ModelInputs()
      try inputs.addInput(nested(values, [1, 32, 32, 3]))
      let message = await runExpectingError(interpreter, inputs, options, .invalidArgument)
      XCTAssertTrue(message.contains("not a UINT8 value"), message)
    }
    let inputs = ModelInputs()
    try inputs.addInput(nested(raw.map(Double.init), [1, 32, 32, 3]))
    let result = await run(interpreter, inputs, options)
    XCTAssertEqual(
      try result.outputs?.output(index: 0) as? [[UInt8]],
      [try TestModels.array("networks/mobilenet_mini_uint8.output_0.npy").values(as: UInt8.self)])
  }

  func testMissingAndInvalidLocalModelFiles() async throws {
    let options = ModelInputOutputOptions()
    try options.setInputFormat(index: 0, type: .float32, dimensions: [1, 4])
    try options.setOutputFormat(index: 0, type: .float32, dimensions: [1, 4])
    let inputs = ModelInputs()
    try inputs.addInput(Data(count: 16))
    let missing = ModelInterpreter.modelInterpreter(localModel: CustomLocalModel(modelPath: temporaryDirectory.appendingPathComponent("none.tflite").path))
    await runExpectingError(missing, inputs, options, .notFound)
    let garbagePath = temporaryDirectory.appendingPathComponent("garbage.tflite")
    try Data("this is not a model".utf8).write(to: garbagePath)
    let garbage = ModelInterpreter.modelInterpreter(localModel: CustomLocalModel(modelPath: garbagePath.path))
    await runExpectingError(garbage, inputs, options, .invalidArgument)
  }

  func testDeclaredDimensionsResizeInputsAndAFailedResizeLeavesTheInterpreterUsable() async throws {
    let name = "ops/add_f32_relu"  // ADD with RELU of two [2, 8] inputs
    let interpreter = ModelInterpreter.modelInterpreter(localModel: CustomLocalModel(modelPath: TestModels.path("\(name).tflite")))
    func run(_ first: [Float], _ second: [Float], rows: (Int, Int)) async throws -> (outputs: ModelOutputs?, error: NSError?) {
      let options = ModelInputOutputOptions()
      try options.setInputFormat(index: 0, type: .float32, dimensions: [NSNumber(value: rows.0), 8])
      try options.setInputFormat(index: 1, type: .float32, dimensions: [NSNumber(value: rows.1), 8])
      try options.setOutputFormat(index: 0, type: .float32, dimensions: [NSNumber(value: max(rows.0, rows.1)), 8])
      let inputs = ModelInputs()
      try inputs.addInput(nested(first, [rows.0, 8]))
      try inputs.addInput(nested(second, [rows.1, 8]))
      return await self.run(interpreter, inputs, options)
    }
    // Three rows instead of the model's two: relu(a + b), computed here.
    let first = (0..<24).map { Float($0) - 12 }
    let second = (0..<24).map { Float($0 % 5) * 0.5 }
    let resized = try await run(first, second, rows: (3, 3))
    let output = try XCTUnwrap(try resized.outputs?.output(index: 0) as? [[Float]], "\(resized.error as Any)")
    XCTAssertEqual(output.flatMap { $0 }, zip(first, second).map { max($0 + $1, 0) })

    // Rows that cannot be added fail at preparation, with the documented error.
    let mismatch = try await run(first, Array(second.prefix(16)), rows: (3, 2))
    XCTAssertEqual(mismatch.error?.code, MachineLearningErrorDomainCode.invalidArgument.rawValue)
    XCTAssertNil(mismatch.outputs)

    // The model's own shapes still give LiteRT's output.
    let a = try TestModels.array("\(name).input_0.npy").floatValues()
    let b = try TestModels.array("\(name).input_1.npy").floatValues()
    let recovered = try await run(a, b, rows: (2, 2))
    let expected = try TestModels.array("\(name).output_0.npy").floatValues()
    let values = try XCTUnwrap(try recovered.outputs?.output(index: 0) as? [[Float]], "\(recovered.error as Any)")
    for (have, want) in zip(values.flatMap { $0 }, expected) { XCTAssertEqual(have, want, accuracy: 1e-5) }
  }
}
