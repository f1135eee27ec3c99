import Foundation
import XCTest

import FirebaseMLModelInterpreter

/// `ModelInterpreter` on local TestModels models: outputs equal LiteRT's, every element type, the
/// output casts the guides use, and concurrent runs.
final class ModelInterpreterTests: ModelInterpreterTestCase {
  /// The float network of the demo: [1, 32, 32, 3] FLOAT32 in, [1, 10] FLOAT32 out.
  let floatModel = "networks/mobilenet_mini_float"
  /// LiteRT's tolerance for it (manifest).
  let floatTolerance: Float = 1e-5

  /// An interpreter for the TestModels file `name.tflite`.
  func interpreter(_ name: String) -> ModelInterpreter {
    ModelInterpreter.modelInterpreter(localModel: CustomLocalModel(modelPath: TestModels.path("\(name).tflite")))
  }

  /// Options declaring one input and one output.
  func options(_ type: ModelElementType, _ input: [NSNumber], _ outputType: ModelElementType, _ output: [NSNumber]) throws
    -> ModelInputOutputOptions
  {
    let options = ModelInputOutputOptions()
    try options.setInputFormat(index: 0, type: type, dimensions: input)
    try options.setOutputFormat(index: 0, type: outputType, dimensions: output)
    return options
  }

  /// Inputs holding `values`.
  func inputs(_ values: Any...) throws -> ModelInputs {
    let inputs = ModelInputs()
    for value in values { try inputs.addInput(value) }
    return inputs
  }

  func testFloatModelFromDataMatchesLiteRTAndCastsLikeTheGuide() async throws {
    let result = await run(
      interpreter(floatModel), try inputs(TestModels.data("\(floatModel).input_0.npy")),
      try options(.float32, [1, 32, 32, 3], .float32, [1, 10]))
    let outputs = try XCTUnwrap(result.outputs, "\(result.error as Any)")
    let expected = try TestModels.array("\(floatModel).output_0.npy").floatValues()
    let numbers = try XCTUnwrap(try outputs.output(index: 0) as? [[NSNumber]])
    let floats = try XCTUnwrap(try outputs.output(index: 0) as? [[Float]])
    XCTAssertEqual(numbers.count, 1)
    XCTAssertEqual(floats[0].count, 10)
    for (index, want) in expected.enumerated() {
      XCTAssertEqual(floats[0][index], want, accuracy: floatTolerance)
      XCTAssertEqual(numbers[0][index].floatValue, floats[0][index])
    }
  }

  func testNestedArraysOfFloatsAndNSNumbersGiveTheSameOutputsAsData() async throws {
    let values = try TestModels.array("\(floatModel).input_0.npy").floatValues()
    let options = try options(.float32, [1, 32, 32, 3], .float32, [1, 10])
    let model = interpreter(floatModel)
    let fromData = await run(model, try inputs(TestModels.data("\(floatModel).input_0.npy")), options)
    let fromFloats = await run(model, try inputs(nested(values, [1, 32, 32, 3])), options)
    let fromNumbers = await run(model, try inputs(nested(values.map { NSNumber(value: $0) }, [1, 32, 32, 3])), options)
    let reference = try XCTUnwrap(try fromData.outputs?.output(index: 0) as? [[Float]])
    XCTAssertEqual(try fromFloats.outputs?.output(index: 0) as? [[Float]], reference, "\(fromFloats.error as Any)")
    XCTAssertEqual(try fromNumbers.outputs?.output(index: 0) as? [[Float]], reference, "\(fromNumbers.error as Any)")
  }

  func testUInt8ModelTakesBytesAndNestedIntegersAndCastsToUInt8() async throws {
    let name = "networks/mobilenet_mini_uint8"
    let raw = try TestModels.array("\(name).input_0.npy").values(as: UInt8.self)
    let expected = try TestModels.array("\(name).output_0.npy").values(as: UInt8.self)
    let options = try options(.uInt8, [1, 32, 32, 3], .uInt8, [1, 10])
    let model = interpreter(name)
    for input: Any in [Data(raw), nested(raw, [1, 32, 32, 3]), nested(raw.map(Int.init), [1, 32, 32, 3])] {
      let result = await run(model, try inputs(input), options)
      let outputs = try XCTUnwrap(result.outputs, "\(result.error as Any)")
      XCTAssertEqual(try outputs.output(index: 0) as? [[UInt8]], [expected])
      XCTAssertEqual((try outputs.output(index: 0) as? [[NSNumber]])?[0].map(\.uint8Value), expected)
    }
  }

  func testInt32InputsAndOutputs() async throws {
    let name = "ops/add_f32_int32_bcast"
    let first = try TestModels.array("\(name).input_0.npy").values(as: Int32.self)
    let second = try TestModels.array("\(name).input_1.npy").values(as: Int32.self)
    let expected = try TestModels.array("\(name).output_0.npy").values(as: Int32.self)
    let options = ModelInputOutputOptions()
    try options.setInputFormat(index: 0, type: .int32, dimensions: [3, 2, 4])
    try options.setInputFormat(index: 1, type: .int32, dimensions: [3, 1, 4])
    try options.setOutputFormat(index: 0, type: .int32, dimensions: [3, 2, 4])
    let result = await run(interpreter(name), try inputs(nested(first, [3, 2, 4]), nested(second, [3, 1, 4])), options)
    let output = try XCTUnwrap(try result.outputs?.output(index: 0) as? [[[Int32]]], "\(result.error as Any)")
    XCTAssertEqual(output.flatMap { $0.flatMap { $0 } }, expected)
  }

  func testInt64Outputs() async throws {
    let name = "graphs/where_f32_coordinates"
    let expected = try TestModels.array("\(name).output_0.npy").values(as: Int64.self)
    let result = await run(
      interpreter(name), try inputs(TestModels.data("\(name).input_0.npy")), try options(.float32, [3, 4], .int64, [5, 2]))
    let output = try XCTUnwrap(try result.outputs?.output(index: 0) as? [[Int64]], "\(result.error as Any)")
    XCTAssertEqual(output.flatMap { $0 }, expected)
  }

  func testConcurrentRunsOnOneInterpreterGiveTheSerialOutputs() async throws {
    let model = interpreter(floatModel)
    let options = try options(.float32, [1, 32, 32, 3], .float32, [1, 10])
    let digits = try (0..<10).map { try TestModels.data("networks/demo/digit_\($0).npy") }
    var serial: [[[Float]]] = []
    for digit in digits {
      let result = await run(model, try inputs(digit), options)
      serial.append(try XCTUnwrap(try result.outputs?.output(index: 0) as? [[Float]]))
    }
    let collected = ConcurrentResults()
    await withTaskGroup(of: Void.self) { group in
      for round in 0..<2 {
        for (index, digit) in digits.enumerated() {
          let request = SendableRequest(inputs: try! self.inputs(digit))
          group.addTask {
            let result = await runInterpreter(model, request.inputs, options)
            collected.record(index: index, round: round, output: try? result.outputs?.output(index: 0) as? [[Float]])
          }
        }
      }
    }
    XCTAssertEqual(collected.count, 20)
    for (index, output) in collected.all { XCTAssertEqual(output, serial[index], "digit \(index)") }
  }

  func testInputAndOutputIndexByTensorName() async throws {
    let model = interpreter(floatModel)
    let input = await lookUp { model.inputIndex(opName: "serving_default_image:0", completion: $0) }
    XCTAssertEqual(input.index?.uintValue, 0)
    let output = await lookUp { model.outputIndex(opName: "StatefulPartitionedCall_1:0", completion: $0) }
    XCTAssertEqual(output.index?.uintValue, 0)
    let missing = await lookUp { model.inputIndex(opName: "no such tensor", completion: $0) }
    XCTAssertNil(missing.index)
    XCTAssertEqual(missing.error?.code, MachineLearningErrorDomainCode.invalidArgument.rawValue)
  }

  func testCallbacksRunOnThePlatformDefaultQueue() async throws {
    let model = interpreter(floatModel)
    XCTAssertTrue(model.isStatsCollectionEnabled)
    let onMainThread = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
      model.outputIndex(opName: "StatefulPartitionedCall_1:0") { _, _ in continuation.resume(returning: Thread.isMainThread) }
    }
    #if canImport(Darwin)
      XCTAssertTrue(onMainThread)
    #else
      XCTAssertFalse(onMainThread)
    #endif
  }

  /// Calls an index lookup and waits for its answer.
  func lookUp(_ call: (@escaping ModelInterpreterInputOutputOpIndexCallback) -> Void) async -> (index: NSNumber?, error: NSError?) {
    let box = IndexBox()
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      call { index, error in
        box.index = index
        box.error = error.map { $0 as NSError }
        continuation.resume()
      }
    }
    return (box.index, box.error)
  }
}

/// Carries index lookups out of their completion.
final class IndexBox: @unchecked Sendable {  // written once before the continuation resumes
  var index: NSNumber?
  var error: NSError?
}

/// Hands prepared inputs to a child task.
struct SendableRequest: @unchecked Sendable {  // the inputs are not changed after creation
  let inputs: ModelInputs
}

/// Outputs of concurrent runs.
final class ConcurrentResults: @unchecked Sendable {  // guarded by `lock`
  private let lock = NSLock()
  private var results: [(Int, [[Float]]?)] = []
  func record(index: Int, round: Int, output: [[Float]]?) { lock.withLock { results.append((index, output)) } }
  var count: Int { lock.withLock { results.count } }
  var all: [(Int, [[Float]]?)] { lock.withLock { results } }
}
