import Foundation
import TFLiteFormat
import XCTest

@testable import TFLiteRuntime

/// The committed reference models and LiteRT's outputs for them (`TestModels/manifest.json`).
struct TestModelManifest: Decodable {
  /// One model with its seeded inputs and LiteRT's outputs.
  struct Entry: Decodable {
    var name: String
    var file: String
    var kind: String
    var quantization: String
    var ops: [Operator]
    var inputs: [TensorFile]
    var outputs: [TensorFile]
    var tolerance: Tolerance?

    /// The distinct operator names of the model.
    var opNames: Set<String> { Set(ops.map(\.op)) }
  }
  /// An operator of a model's primary subgraph.
  struct Operator: Decodable {
    var op: String
    var version: Int
  }
  /// An input or output with the `.npy` file holding its values.
  struct TensorFile: Decodable {
    var name: String
    var file: String
    var type: String
    var shape: [Int]
  }
  /// Allowed deviation for float outputs: |actual − expected| ≤ atol + rtol·|expected|.
  struct Tolerance: Decodable {
    var atol: Double
    var rtol: Double
  }

  var models: [Entry]

  /// The `TestModels` folder of the repository.
  static let directory = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("TestModels")

  /// Reads `TestModels/manifest.json`.
  static func load() throws -> TestModelManifest {
    let data = try Data(contentsOf: directory.appendingPathComponent("manifest.json"))
    return try JSONDecoder().decode(TestModelManifest.self, from: data)
  }

  /// Reads the `.npy` file at `path` relative to `TestModels`.
  static func array(_ path: String) throws -> NumPyArray {
    try NumPyArray(parsing: [UInt8](Data(contentsOf: directory.appendingPathComponent(path))))
  }
}

/// The outcome of running one reference model through the runtime.
struct ConformanceOutcome {
  var entry: TestModelManifest.Entry
  /// Largest |actual − expected| over every float output element (0 for exact types).
  var maxAbsoluteError = 0.0
  /// Elements compared.
  var elementCount = 0
  /// Elements outside the tolerance (float) or different (integer, bool).
  var mismatchCount = 0
  /// Why the model could not run, if it could not.
  var failure: String?
  /// The first mismatch, described.
  var firstMismatch: String?

  var passed: Bool { failure == nil && mismatchCount == 0 }
}

enum Conformance {
  /// The names of the operators the runtime has kernels for.
  static let supportedOperators = Set(OperatorSupport.supportedOperatorNames)

  /// Runs `entry`'s model on its inputs and compares every output with LiteRT's.
  static func run(
    _ entry: TestModelManifest.Entry, threadCount: Int = 1, roundingPolicy: RoundingPolicy = .doubleRounding,
    kernels: KernelSet = .optimized, usesGeneratedKernels: Bool = true
  ) -> ConformanceOutcome {
    var outcome = ConformanceOutcome(entry: entry)
    do {
      let runner = try invoke(
        entry,
        options: RunnerOptions(
          threadCount: threadCount, roundingPolicy: roundingPolicy, usesGeneratedKernels: usesGeneratedKernels,
          kernels: kernels))
      let executor = runner.primary
      for (index, file) in entry.outputs.enumerated() {
        let expected = try TestModelManifest.array(file.file)
        try compare(executor.outputs[index], expected, tolerance: entry.tolerance, outcome: &outcome, label: "output \(index)")
      }
    } catch {
      outcome.failure = "\(error)"
    }
    return outcome
  }

  /// Loads `entry`'s model with `options` (memory-mapped, or copied into memory with
  /// `copiesModelBytes`), copies its inputs in and invokes it once; the outputs are those of the
  /// returned runner's primary subgraph.
  static func invoke(
    _ entry: TestModelManifest.Entry, options: RunnerOptions, copiesModelBytes: Bool = false
  ) throws -> ModelRunner {
    let path = TestModelManifest.directory.appendingPathComponent(entry.file).path
    let model =
      copiesModelBytes
      ? try TFLiteModel(bytes: Array(try Data(contentsOf: URL(fileURLWithPath: path))))
      : try TFLiteModel(contentsOfFile: path)
    let runner = try ModelRunner(model: model, options: options)
    let executor = runner.primary
    let inputs = try entry.inputs.map { try TestModelManifest.array($0.file) }
    guard inputs.count == executor.inputs.count else {
      throw RuntimeError.invalidModel("manifest lists \(inputs.count) inputs, the model has \(executor.inputs.count)")
    }
    for (index, array) in inputs.enumerated() where executor.inputs[index].shape != array.shape {
      try executor.resizeInput(at: index, to: array.shape)
    }
    try executor.allocateTensors()
    for (index, array) in inputs.enumerated() {
      let tensor = executor.inputs[index]
      guard tensor.byteCount == array.bytes.count, let data = tensor.data else {
        throw RuntimeError.invalidShape("input \(index) needs \(tensor.byteCount) bytes, the .npy has \(array.bytes.count)")
      }
      array.bytes.withUnsafeBytes { data.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
    }
    try executor.invoke()
    return runner
  }

  /// Adds the comparison of `actual` with `expected` to `outcome`.
  static func compare(
    _ actual: RuntimeTensor, _ expected: NumPyArray, tolerance: TestModelManifest.Tolerance?,
    outcome: inout ConformanceOutcome, label: String
  ) throws {
    guard actual.shape == expected.shape || actual.elementCount == expected.elementCount && (expected.shape.isEmpty || actual.shape.isEmpty) else {
      throw RuntimeError.invalidShape("\(label) has shape \(actual.shape), LiteRT gave \(expected.shape)")
    }
    guard let data = actual.data else { throw RuntimeError.allocationRequired }
    let count = actual.elementCount
    outcome.elementCount += count
    if actual.type == .float32 {
      let values = try expected.floatValues()
      let got = UnsafeBufferPointer(start: data.assumingMemoryBound(to: Float.self), count: count)
      let atol = tolerance?.atol ?? 0
      let rtol = tolerance?.rtol ?? 0
      for index in 0..<count {
        let want = Double(values[index])
        let have = Double(got[index])
        let error = abs(have - want)
        let same = have == want || (have.isNaN && want.isNaN)
        if !same { outcome.maxAbsoluteError = max(outcome.maxAbsoluteError, error.isNaN ? .infinity : error) }
        if !same && !(error <= atol + rtol * abs(want)) {
          if outcome.firstMismatch == nil { outcome.firstMismatch = "\(label)[\(index)]: got \(have), LiteRT \(want)" }
          outcome.mismatchCount += 1
        }
      }
    } else {
      guard expected.bytes.count == actual.byteCount else {
        throw RuntimeError.invalidShape("\(label) is \(actual.type.name) with \(actual.byteCount) bytes, LiteRT gave \(expected.bytes.count) bytes")
      }
      let size = actual.type.byteCount
      let got = UnsafeRawBufferPointer(start: data, count: actual.byteCount)
      for index in 0..<count where !got[index * size..<(index + 1) * size].elementsEqual(expected.bytes[index * size..<(index + 1) * size]) {
        if outcome.firstMismatch == nil { outcome.firstMismatch = "\(label)[\(index)] differs (\(actual.type.name))" }
        outcome.mismatchCount += 1
      }
    }
  }

  /// Runs every manifest model accepted by `filter`, prints a per-model table and fails the test
  /// for every model that does not run or does not match LiteRT.
  @discardableResult
  static func check(
    _ filter: (TestModelManifest.Entry) -> Bool, threadCount: Int = 1, roundingPolicy: RoundingPolicy = .doubleRounding,
    kernels: KernelSet = .optimized, usesGeneratedKernels: Bool = true, file: StaticString = #filePath,
    line: UInt = #line
  ) throws -> [ConformanceOutcome] {
    let entries = try TestModelManifest.load().models.filter(filter)
    XCTAssertFalse(entries.isEmpty, "no TestModels entry matches", file: file, line: line)
    let outcomes = entries.map {
      run(
        $0, threadCount: threadCount, roundingPolicy: roundingPolicy, kernels: kernels,
        usesGeneratedKernels: usesGeneratedKernels)
    }
    for outcome in outcomes {
      let status = outcome.passed ? "ok  " : "FAIL"
      print("\(status) \(outcome.entry.name): \(outcome.elementCount) elements, max abs error \(outcome.maxAbsoluteError)")
      if let failure = outcome.failure {
        XCTFail("\(outcome.entry.name): \(failure)", file: file, line: line)
      } else if outcome.mismatchCount > 0 {
        XCTFail(
          "\(outcome.entry.name): \(outcome.mismatchCount) of \(outcome.elementCount) elements out of tolerance; first \(outcome.firstMismatch ?? "")",
          file: file, line: line)
      }
    }
    return outcomes
  }
}
