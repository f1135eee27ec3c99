import Foundation
import TFLiteTestSupport
import XCTest

@testable import TensorFlowLite

/// LiteRT's interpreter lifecycle as users rely on it: `invoke()` leaves the inputs as they were
/// copied, so one copy can be invoked again and again with the same result; variable tensors start
/// from zero after every (re)allocation and `resetVariableTensors()`; `allocateTensors()` without
/// a resize changes nothing; shrinking shapes give memory back; calls out of order throw the
/// documented errors. Expected values are LiteRT's (TestModels); the LiteRT behaviour each test
/// mirrors was checked with ai-edge-litert 2.3.0.
final class InterpreterLifecycleTests: XCTestCase {
  private func assertThrows<E: Error & Equatable>(
    _ expected: E, line: UInt = #line, _ body: () throws -> Void
  ) {
    XCTAssertThrowsError(try body(), line: line) { XCTAssertEqual($0 as? E, expected, line: line) }
  }

  /// `copy(_:toInputAt:)` once, `invoke()` five times: `input(at:)` keeps the copied bytes and
  /// every invoke gives the same outputs, LiteRT's (float and int8 networks).
  func testCopyOnceInvokeFiveTimesKeepsTheInputAndTheOutputs() throws {
    for name in ["mobilenet_mini_float", "mobilenet_mini_int8"] {
      let entry = try ReferenceModels.entry(name)
      let interpreter = try Interpreter(modelPath: entry.path)
      try interpreter.allocateTensors()
      let input = try ReferenceModels.data(entry.inputs[0].file)
      try interpreter.copy(input, toInputAt: 0)
      let expected = try ReferenceModels.array(entry.outputs[0].file).bytes
      for run in 1...5 {
        try interpreter.invoke()
        XCTAssertEqual(try interpreter.input(at: 0).data, input, "\(name) input after invoke \(run)")
        if name.hasSuffix("float") {
          try ReferenceModels.assertMatchesLiteRT(try interpreter.output(at: 0), entry.outputs[0].file, entry)
        } else {
          XCTAssertEqual([UInt8](try interpreter.output(at: 0).data), expected, "\(name) output after invoke \(run)")
        }
      }
    }
  }

  /// A signature runner on its own subgraph: copy once, then `invoke(with: [:])` five times.
  func testSignatureRunnerCopyOnceInvokeFiveTimes() throws {
    let entry = try ReferenceModels.entry("signatures_f32_add_and_dense_relu")
    let runner = try Interpreter(modelPath: entry.path).signatureRunner(with: "dense_relu")
    let input = try ReferenceModels.data("graphs/signatures_f32_add_and_dense_relu.dense_relu.input_0.npy")
    try runner.copy(input, toInputNamed: "x")
    for _ in 1...5 {
      try runner.invoke(with: [:])
      XCTAssertEqual(try runner.input(named: "x").data, input)
      try ReferenceModels.assertMatchesLiteRT(
        try runner.output(named: "features"), "graphs/signatures_f32_add_and_dense_relu.dense_relu.output_0.npy", entry)
    }
  }

  /// A model whose WHILE loop runs subgraphs: copy once, invoke five times.
  func testWhileModelCopyOnceInvokeFiveTimes() throws {
    let entry = try ReferenceModels.entry("seq_keras_f32_stacked_gru_lstm")
    let interpreter = try Interpreter(modelPath: entry.path)
    try interpreter.allocateTensors()
    let input = try ReferenceModels.data(entry.inputs[0].file)
    try interpreter.copy(input, toInputAt: 0)
    var first: Data?
    for _ in 1...5 {
      try interpreter.invoke()
      XCTAssertEqual(try interpreter.input(at: 0).data, input)
      let output = try interpreter.output(at: 0)
      try ReferenceModels.assertMatchesLiteRT(output, entry.outputs[0].file, entry)
      if let first { XCTAssertEqual(output.data, first) } else { first = output.data }
    }
  }

  /// The state of a sequence LSTM (variable tensors) carries from one invoke to the next; it is
  /// zero again after `resetVariableTensors()` and after a reallocation, and kept by an
  /// `allocateTensors()` that has nothing to do — as in LiteRT.
  func testVariableTensorsResetByResetVariableTensorsAndByReallocation() throws {
    let entry = try ReferenceModels.entry("seq_ulstm_f32_basic")
    let interpreter = try Interpreter(modelPath: entry.path)
    try interpreter.allocateTensors()
    let input = try ReferenceModels.data(entry.inputs[0].file)
    let fromZeroState = try ReferenceModels.array(entry.outputs[0].file).bytes
    /// Copies the input, invokes and returns the output's bytes.
    func run() throws -> [UInt8] {
      try interpreter.copy(input, toInputAt: 0)
      try interpreter.invoke()
      return [UInt8](try interpreter.output(at: 0).data)
    }
    try ReferenceModels.assertMatchesLiteRT(try { _ = try run(); return try interpreter.output(at: 0) }(), entry.outputs[0].file, entry)
    let first = [UInt8](try interpreter.output(at: 0).data)
    let carried = try run()
    XCTAssertNotEqual(carried, first, "the second invoke starts from the first one's state")

    interpreter.resetVariableTensors()
    XCTAssertEqual(try run(), first, "resetVariableTensors() brings the state back to zero")

    try interpreter.allocateTensors()
    XCTAssertEqual(try run(), carried, "allocateTensors() without a resize keeps the state (LiteRT: a no-op)")

    try interpreter.resizeInput(at: 0, to: [2, 3, 4])
    try interpreter.allocateTensors()
    try interpreter.resizeInput(at: 0, to: [2, 5, 4])
    try interpreter.allocateTensors()
    XCTAssertEqual(try run(), first, "a reallocation zeroes the state")
    XCTAssertEqual(first.count, fromZeroState.count)
  }

  /// `allocateTensors()` with nothing to do keeps the inputs already copied (LiteRT: a no-op).
  func testAllocateTensorsWithoutAResizeKeepsTheInputs() throws {
    let entry = try ReferenceModels.entry("mobilenet_mini_float")
    let interpreter = try Interpreter(modelPath: entry.path)
    try interpreter.allocateTensors()
    let input = try ReferenceModels.data(entry.inputs[0].file)
    try interpreter.copy(input, toInputAt: 0)
    try interpreter.allocateTensors()
    try interpreter.resizeInput(at: 0, to: [1, 32, 32, 3])
    try interpreter.allocateTensors()
    XCTAssertEqual(try interpreter.input(at: 0).data, input)
    try interpreter.invoke()
    try ReferenceModels.assertMatchesLiteRT(try interpreter.output(at: 0), entry.outputs[0].file, entry)
  }

  /// Outputs are valid until the next `resizeInput`/`allocateTensors()`/`invoke()`; reading them
  /// after a resize, or using the interpreter before its first or after a failed allocation,
  /// throws TensorFlowLiteSwift's errors, and a valid allocation makes it usable again.
  func testCallsOutOfOrderThrowTheDocumentedErrors() throws {
    let entry = try ReferenceModels.entry("mobilenet_mini_float")
    let interpreter = try Interpreter(modelPath: entry.path)
    let input = try ReferenceModels.data(entry.inputs[0].file)
    assertThrows(InterpreterError.allocateTensorsRequired) { try interpreter.invoke() }
    assertThrows(InterpreterError.allocateTensorsRequired) { try interpreter.copy(input, toInputAt: 0) }
    assertThrows(InterpreterError.invokeInterpreterRequired) { _ = try interpreter.output(at: 0) }
    try interpreter.allocateTensors()
    try interpreter.copy(input, toInputAt: 0)
    try interpreter.invoke()
    try ReferenceModels.assertMatchesLiteRT(try interpreter.output(at: 0), entry.outputs[0].file, entry)

    // Five channels for a three-channel filter: the allocation fails.
    try interpreter.resizeInput(at: 0, to: [1, 32, 32, 5])
    assertThrows(InterpreterError.invokeInterpreterRequired) { _ = try interpreter.output(at: 0) }
    assertThrows(InterpreterError.failedToAllocateTensors) { try interpreter.allocateTensors() }
    assertThrows(InterpreterError.allocateTensorsRequired) { try interpreter.invoke() }
    assertThrows(InterpreterError.allocateTensorsRequired) { _ = try interpreter.input(at: 0) }
    assertThrows(InterpreterError.invokeInterpreterRequired) { _ = try interpreter.output(at: 0) }
    assertThrows(InterpreterError.failedToAllocateTensors) { try interpreter.allocateTensors() }
    for shape: [Int] in [[0, 32, 32, 3], [1, 1 << 20, 1 << 20, 1 << 20]] {
      assertThrows(InterpreterError.failedToResizeInputTensor(index: 0)) {
        try interpreter.resizeInput(at: 0, to: Tensor.Shape(shape))
      }
    }

    try interpreter.resizeInput(at: 0, to: [1, 32, 32, 3])
    try interpreter.allocateTensors()
    try interpreter.copy(input, toInputAt: 0)
    try interpreter.invoke()
    try ReferenceModels.assertMatchesLiteRT(try interpreter.output(at: 0), entry.outputs[0].file, entry)
  }

  /// Resizing to a large batch and back gives the memory back: resident memory returns to within
  /// 2 MB of the small shape's level (the large one needs 12 MB more). A one-operator model keeps
  /// this quick in debug builds; `Scripts/soak.sh` does the same with the networks.
  func testShrinkingResizeReturnsMemory() throws {
    let entry = try ReferenceModels.entry("abs_f32")
    let interpreter = try Interpreter(modelPath: entry.path)
    /// Resizes to `batch` images of 128 × 128 × 3, allocates, fills the input and invokes
    /// (touching the input and the output, the whole arena).
    func run(batch: Int) throws {
      try interpreter.resizeInput(at: 0, to: [batch, 128, 128, 3])
      try interpreter.allocateTensors()
      try interpreter.copy(Data(repeating: 0xBF, count: batch * 128 * 128 * 3 * 4), toInputAt: 0)
      try interpreter.invoke()
    }
    // One round first, so that what stays for the process (thread pools, caches) is there before measuring.
    try run(batch: 32)
    try run(batch: 1)
    let small = try XCTUnwrap(ProcessMemory.residentBytes())
    try run(batch: 32)
    let large = try XCTUnwrap(ProcessMemory.residentBytes())
    XCTAssertGreaterThanOrEqual(interpreter.arenaByteCount, 12 << 20)
    XCTAssertGreaterThan(large - small, 8 << 20, "the large batch should need more memory")
    try run(batch: 1)
    let back = try XCTUnwrap(ProcessMemory.residentBytes())
    XCTAssertLessThan(back - small, 2 << 20, "resident memory: \(small) at batch 1, \(large) at 32, \(back) back at 1")
    XCTAssertLessThan(interpreter.arenaByteCount, 400_000)
    // Every input float is 0xBFBFBFBF (about -1.5); ABS clears the sign bit (little-endian bytes).
    let magnitude = Data((0..<128 * 128 * 3).flatMap { _ in [0xBF, 0xBF, 0xBF, 0x3F] as [UInt8] })
    XCTAssertEqual(try interpreter.output(at: 0).data, magnitude)
  }
}
