import Foundation
import XCTest

@testable import TFLiteFormat
import TFLiteLinearAlgebra
@testable import TFLiteRuntime

/// One test per class of crash the runtime fuzzer found: each builds a model of that class by
/// editing a converted test model and checks that the runtime now refuses it with a descriptive
/// error (and that the unedited model still runs).
final class HostileModelRegressionTests: XCTestCase {
  /// The tree of test model `path` (relative to `TestModels`).
  private func tree(_ path: String) throws -> TreeTable {
    ModelTree.decode(try [UInt8](Data(contentsOf: TestModelManifest.directory.appendingPathComponent(path))))
  }

  /// `tree` with `edit` applied to the tensor or operator table `index` of field `list` of subgraph 0.
  private func editing(
    _ tree: TreeTable, _ list: String, _ index: Int, _ edit: (inout TreeTable) -> Void
  ) -> TreeTable {
    var edited = tree
    edited.update("subgraphs", at: 0) { $0.update(list, at: index, edit) }
    return edited
  }

  /// Builds a runner for `tree`, allocates, fills the inputs and invokes it.
  private func run(_ tree: TreeTable, options: RunnerOptions = RunnerOptions()) throws -> ModelRunner {
    let runner = try ModelRunner(model: try TFLiteModel(bytes: ModelTree.encode(tree)), options: options)
    try runner.primary.allocateTensors()
    var generator = SeededGenerator(seed: 7)
    RuntimeFuzzTests.fill(runner.primary.inputs, extreme: false, using: &generator)
    try runner.primary.invoke()
    return runner
  }

  /// Asserts that running `tree` throws a ``RuntimeError`` whose description contains `text`.
  private func assertRefused(
    _ tree: TreeTable, options: RunnerOptions = RunnerOptions(), mentioning text: String, line: UInt = #line
  ) {
    XCTAssertThrowsError(try run(tree, options: options), line: line) { error in
      XCTAssertTrue(error is RuntimeError, "\(type(of: error)): \(error)", line: line)
      XCTAssertTrue("\(error)".contains(text), "'\(error)' does not mention '\(text)'", line: line)
    }
  }

  func testUneditedModelsRunAfterTheirTreeIsWrittenBack() throws {
    for path in ["extra/matrix_diag_f32.tflite", "graphs/while_f32_iterate_count.tflite", "graphs/conv2d_f32_buffers_after_flatbuffer.tflite"] {
      let bytes = try [UInt8](Data(contentsOf: TestModelManifest.directory.appendingPathComponent(path)))
      let rewritten = ModelTree.encode(ModelTree.decode(bytes))
      let original = try TFLiteModel(bytes: bytes)
      let copy = try TFLiteModel(bytes: rewritten)
      XCTAssertEqual(copy.model.subgraphs.map(\.tensors.count), original.model.subgraphs.map(\.tensors.count), path)
      XCTAssertEqual(copy.model.buffers.indices.map { copy.data(ofBuffer: $0).count }, original.model.buffers.indices.map { original.data(ofBuffer: $0).count }, path)
      XCTAssertNoThrow(try run(ModelTree.decode(bytes)), path)
    }
  }

  /// A node whose output is its own input (or any subgraph input) would resize the tensor it reads.
  func testNodeWritingASubgraphInputIsRefused() throws {
    let model = editing(try tree("extra/matrix_diag_f32.tflite"), "operators", 0) { $0.setInt32s("outputs", [0]) }
    assertRefused(model, mentioning: "node 0 (MATRIX_DIAG) writes the subgraph input x FLOAT32[2,4]")
  }

  /// Kernels must never write into the model's read-only constant data.
  func testNodeWritingAConstantIsRefused() throws {
    let model = editing(try tree("ops/concatenation_f32_with_constant.tflite"), "operators", 0) { $0.setInt32s("outputs", [1]) }
    assertRefused(model, mentioning: "writes the constant tensor")
  }

  /// A node reading its own output, or a later node's, reads a tensor not computed yet whose shape
  /// is not settled.
  func testCyclesAndSecondWritersAreRefused() throws {
    let loop = try tree("graphs/while_f32_iterate_count.tflite")
    var selfLoop = loop
    selfLoop.update("subgraphs", at: 2) { body in body.update("operators", at: 1) { $0.setInt32s("inputs", [6]) } }
    assertRefused(selfLoop, mentioning: "subgraph 2 node 1 (SIN) reads tensor")
    var cycle = loop
    cycle.update("subgraphs", at: 2) { body in body.update("operators", at: 1) { $0.setInt32s("inputs", [7]) } }
    assertRefused(cycle, mentioning: "before node 2 computes it")
    var twoWriters = loop
    twoWriters.update("subgraphs", at: 2) { body in body.update("operators", at: 2) { $0.setInt32s("outputs", [6]) } }
    assertRefused(twoWriters, mentioning: "which node 1 writes too")
  }

  func testConstantSubgraphInputIsRefused() throws {
    var model = try tree("ops/concatenation_f32_with_constant.tflite")
    model.update("subgraphs", at: 0) { $0.setInt32s("inputs", [1]) }
    assertRefused(model, mentioning: "input 0 is the constant tensor")
  }

  /// A variable's memory is allocated once, for its shape in the model.
  func testVariableTensorsKeepTheirShape() throws {
    let variableInput = editing(try tree("extra/matrix_diag_f32.tflite"), "tensors", 0) { $0["is_variable"] = .scalar([1]) }
    let runner = try run(variableInput)
    XCTAssertThrowsError(try runner.primary.resizeInput(at: 0, to: [4, 4])) { error in
      XCTAssertTrue("\(error)".contains("variable tensor"), "\(error)")
    }
    var growing = editing(try tree("extra/matrix_diag_f32.tflite"), "tensors", 1) { $0["is_variable"] = .scalar([1]) }
    growing = editing(growing, "tensors", 1) { $0.setInt32s("shape", [2, 4]) }
    assertRefused(growing, mentioning: "would change the shape of variable tensor")
  }

  /// A sparse constant marked variable starts from its dense copy (which used to be freed before
  /// it was copied: the fuzzer's AddressSanitizer runs catch a regression).
  func testVariableStartsFromTheDenseCopyOfASparseConstant() throws {
    let original = try tree("ops/densify_f32_fully_connected_block_1x4.tflite")
    let variable = editing(original, "tensors", 2) { $0["is_variable"] = .scalar([1]) }
    let (originalRunner, variableRunner) = (try run(original), try run(variable))
    let (expected, result) = (originalRunner.primary.outputs[0], variableRunner.primary.outputs[0])
    XCTAssertEqual(result.shape, [2, 48])
    let count = expected.elementCount
    let want = UnsafeBufferPointer(start: expected.pointer(as: Float.self), count: count)
    let have = UnsafeBufferPointer(start: result.pointer(as: Float.self), count: count)
    for (got, reference) in zip(have, want) { XCTAssertEqual(got, reference, accuracy: 1e-5) }
  }

  /// A model's input shape can ask for more memory than exists; kernels then must not see it.
  func testEnormousModelShapeIsRefusedBeforeAnyKernelPreparesIt() throws {
    let model = editing(try tree("ops/batch_matmul_f32_adj_x_adj_y.tflite"), "tensors", 1) {
      $0.setInt32s("shape", [Int32.max, 5, 4])
    }
    assertRefused(model, mentioning: "tensor x1 FLOAT32[2147483647,5,4] needs 171798691760 bytes, more than the memory limit")
    assertRefused(
      editing(try tree("ops/batch_matmul_f32_adj_x_adj_y.tflite"), "tensors", 1) { $0.setInt32s("shape", [4096, 5, 4]) },
      options: RunnerOptions(memoryLimit: 64 << 10), mentioning: "more than the memory limit of 65536 bytes")
  }

  /// SPACE_TO_BATCH_ND builds a table with one entry per output pixel while it prepares: its size
  /// must be checked before the runtime sees the output shape.
  func testOutputSizedTablesAreCheckedBeforeTheyAreBuilt() throws {
    var model = try tree("extra/space_to_batch_nd_f32_block2x3.tflite")
    let blockBuffer = Int(model.tables("subgraphs")[0].tables("tensors")[1].integer("buffer"))
    model.update("buffers", at: blockBuffer) { $0["data"] = .scalarVector([1, 0, 0, 0] + [1, 0, 0, 0], elementSize: 1) }
    XCTAssertNoThrow(try run(model))
    let paddingsBuffer = Int(model.tables("subgraphs")[0].tables("tensors")[2].integer("buffer"))
    // 2 × 4096 × 4096 output pixels: a 256 MiB table for a 384 MiB output.
    model.update("buffers", at: paddingsBuffer) {
      $0["data"] = .scalarVector([Int32](arrayLiteral: 0, 4092, 0, 4090).flatMap(\.littleEndianBytes), elementSize: 1)
    }
    assertRefused(
      model, options: RunnerOptions(memoryLimit: 64 << 20),
      mentioning: "SPACE_TO_BATCH_ND pixel table needs 268435456 bytes, more than the memory limit of 67108864 bytes")
  }

  /// An empty input image leaves a resize nothing to sample from (it read out of bounds).
  func testResizeOfAnEmptyImageIsRefused() throws {
    for path in ["quant/resize_bilinear_uint8_up2x.tflite", "ops/resize_bilinear_f32_up2x.tflite"] {
      let model = editing(try tree(path), "tensors", 0) { $0.setInt32s("shape", [1, 0, 5, 3]) }
      assertRefused(model, mentioning: "RESIZE_BILINEAR: the input image [1, 0, 5, 3] is empty")
    }
  }

  /// `tree` with the scale of tensor `index` of subgraph 0 replaced by the smallest denormal.
  private func withDenormalScale(_ tree: TreeTable, tensor index: Int) -> TreeTable {
    editing(tree, "tensors", index) { tensor in
      guard case .table(var quantization) = tensor["quantization"] else { return }
      quantization["scale"] = .scalarVector(Float.leastNonzeroMagnitude.bitPattern.littleEndianBytes, elementSize: 4)
      tensor["quantization"] = .table(quantization)
    }
  }

  /// A tiny output scale puts the quantized RELU6 bound beyond every integer (it trapped in the
  /// float-to-integer conversion); the range saturates at the type's limits instead.
  func testTinyOutputScaleSaturatesTheActivationRange() throws {
    let int8 = Int32(Int8.min)...Int32(Int8.max)
    XCTAssertEqual(FixedPoint.activationRange(.relu6, scale: 1e-30, zeroPoint: -128, typeRange: int8), int8)
    XCTAssertEqual(FixedPoint.activationRange(.reluN1To1, scale: .leastNonzeroMagnitude, zeroPoint: 0, typeRange: int8), int8)
    XCTAssertNoThrow(try run(withDenormalScale(try tree("quant/conv2d_int8_saturating_relu6.tflite"), tensor: 3)))
  }

  /// A 16-bit lookup table for a denormal output scale samples 0 × ∞ (it trapped converting NaN).
  func testSixteenBitTableForATinyOutputScaleHasNoNaNEntries() throws {
    let table = QuantizedLookupTable.sixteenBit(
      inputScale: Float(1.0 / 8192), inputZeroPoint: 0, outputScale: .leastNonzeroMagnitude, outputZeroPoint: 0,
      transform: { $0 * 0 })
    XCTAssertEqual(table, [Int16](repeating: 0, count: QuantizedLookupTable.sixteenBitCount))
    XCTAssertNoThrow(try run(withDenormalScale(try tree("quant/exp_int16x8_sweep.tflite"), tensor: 1)))
  }

  /// A loop bound read from an input can ask for billions of iterations.
  func testLoopsStopAtTheIterationLimit() throws {
    let model = try TFLiteModel(bytes: ModelTree.encode(try tree("graphs/while_f32_iterate_count.tflite")))
    let runner = try ModelRunner(model: model, options: RunnerOptions(maximumLoopIterations: 100))
    let executor = runner.primary
    try executor.allocateTensors()
    executor.inputs[0].data?.initializeMemory(as: Float.self, repeating: 0, count: 6)
    executor.inputs[1].data?.storeBytes(of: Int32.max, as: Int32.self)
    XCTAssertThrowsError(try executor.invoke()) { error in
      XCTAssertTrue("\(error)".contains("WHILE did not finish within the 100 iterations allowed"), "\(error)")
    }
    executor.inputs[1].data?.storeBytes(of: 100, as: Int32.self)
    XCTAssertNoThrow(try executor.invoke())
  }
}
