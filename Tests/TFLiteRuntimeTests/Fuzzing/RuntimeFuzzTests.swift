import Foundation
import TFLiteTestSupport
import XCTest

@testable import TFLiteFormat
@testable import TFLiteRuntime

/// Hostile variants of every test model (see ``HostileModels``) must each be refused with a thrown
/// error or run: never crash, hang, or allocate without bound. Each variant that allocates is run
/// on ordinary inputs, on extreme inputs (out-of-range indices, NaN, infinities) and after a
/// hostile resize of its first input.
///
/// The default run is a seeded sample that fits the debug test budget. For a full search, run the
/// test binary with `TFLITE_FUZZ_VARIANTS=<per model>` and `TFLITE_FUZZ_TRACE=1` (every case is
/// announced on standard error before it runs, so a driver can tell which one killed the
/// process) and `TFLITE_FUZZ_START=<case>` to resume after a crash: `Scripts/fuzz_runtime.py`.
/// `TFLITE_FUZZ_COUNT=<n>` stops after n cases, `TFLITE_FUZZ_SEED=<n>` draws other variants; `TFLITE_FUZZ_DUMP=<folder>` also writes each
/// case's model there (`case<N>.tflite`), to replay it with `tflite run`.
final class RuntimeFuzzTests: XCTestCase {
  /// The cases of one run.
  private struct Plan {
    var variantsPerModel = 4
    var modelStride = 1
    /// The case numbers to run.
    var cases = 0..<Int.max
    var trace = false
    /// The fuzz seed: every variant is a function of it, the model and the variant number.
    var seed: UInt64 = 0x5EED_F022
    var dumpDirectory: String?

    init(environment: [String: String]) {
      if let value = environment["TFLITE_FUZZ_VARIANTS"].flatMap(Int.init) { variantsPerModel = max(value, 1) }
      let start = environment["TFLITE_FUZZ_START"].flatMap(Int.init).map { max($0, 0) } ?? 0
      let count = environment["TFLITE_FUZZ_COUNT"].flatMap(Int.init).map { max($0, 0) } ?? Int.max
      cases = start..<(count > Int.max - start ? Int.max : start + count)
      dumpDirectory = environment["TFLITE_FUZZ_DUMP"]
      if let value = environment["TFLITE_FUZZ_SEED"].flatMap(UInt64.init) { seed = value }
      trace = environment["TFLITE_FUZZ_TRACE"] == "1"
    }
  }

  /// What happened to one case.
  private enum Outcome: String, CaseIterable {
    case refusedByLoader, refusedAtInit, refusedAtAllocation, refusedAtInvoke, ran
  }

  /// The runner options of a case: small tensors only (hostile shapes must be refused, and large
  /// legal ones take long in a debug build) and loops that end.
  private func options(threadCount: Int) -> RunnerOptions {
    RunnerOptions(threadCount: threadCount, memoryLimit: 4 << 20, maximumLoopIterations: 10_000)
  }

  func testHostileModelsNeverCrashTheRuntime() throws {
    let plan = Plan(environment: ProcessInfo.processInfo.environment)
    let files = Self.modelFiles()
    XCTAssertGreaterThan(files.count, 800, "the test models are missing")
    let operatorCodes = BuiltinOperator.allKnown.filter { KernelDispatch.hasKernel(for: .builtin($0)) }.map(\.rawValue)
    var counts: [Outcome: Int] = [:]
    var slowest = (seconds: 0.0, what: "")
    let started = Date()
    let memoryBefore = ProcessMemory.peakResidentBytes()
    for (modelIndex, file) in files.enumerated() {
      let firstCase = modelIndex * plan.variantsPerModel
      guard firstCase + plan.variantsPerModel > plan.cases.lowerBound else { continue }
      guard firstCase < plan.cases.upperBound else { break }
      let bytes = try [UInt8](Data(contentsOf: file))
      let tree = ModelTree.decode(bytes)
      let models = HostileModels(original: tree, operatorCodes: operatorCodes)
      for variantIndex in 0..<plan.variantsPerModel where plan.cases.contains(firstCase + variantIndex) {
        let caseIndex = firstCase + variantIndex
        let variant = models.variant(variantIndex, seed: plan.seed ^ Self.stableHash(file.lastPathComponent))
        let name = "\(file.deletingPathExtension().lastPathComponent) #\(variantIndex) \(variant?.description ?? "unedited")"
        if plan.trace { announce("fuzz case \(caseIndex): \(name)") }
        let caseStart = Date()
        let caseBytes = variant.map { ModelTree.encode($0.model) } ?? bytes
        if let folder = plan.dumpDirectory {
          try Data(caseBytes).write(to: URL(fileURLWithPath: folder).appendingPathComponent("case\(caseIndex).tflite"))
        }
        let outcome = run(
          caseBytes, folder: file.deletingLastPathComponent().path, seed: plan.seed &+ UInt64(caseIndex), name: name)
        counts[outcome, default: 0] += 1
        let seconds = Date().timeIntervalSince(caseStart)
        if seconds > slowest.seconds { slowest = (seconds, name) }
      }
    }
    let total = counts.values.reduce(0, +)
    let growth = ProcessMemory.peakResidentBytes() - memoryBefore
    print(
      "runtime fuzz: \(total) cases from \(files.count) models in \(Int(Date().timeIntervalSince(started))) s: "
        + Outcome.allCases.map { "\(counts[$0] ?? 0) \($0)" }.joined(separator: ", ")
        + "; slowest \(Int(slowest.seconds * 1000)) ms (\(slowest.what)); peak memory grew \(growth >> 20) MiB")
    XCTAssertGreaterThan(counts[.ran] ?? 0, 0, "no hostile variant ran at all")
    XCTAssertGreaterThan(counts[.refusedAtAllocation] ?? 0, 0, "no hostile variant was refused by a kernel")
    // A hang would take forever; a debug build on a loaded CI machine may take a few seconds.
    XCTAssertLessThan(slowest.seconds, 60, "a case took too long: \(slowest.what)")
    XCTAssertLessThan(growth, 2 << 30, "peak memory grew by \(growth >> 20) MiB")
  }

  /// FNV-1a of `name`: a model's variants depend on its file name, not on where it sorts among
  /// the others, so adding test models leaves every other model's variants as they were.
  private static func stableHash(_ name: String) -> UInt64 {
    name.utf8.reduce(0xCBF2_9CE4_8422_2325) { ($0 ^ UInt64($1)) &* 0x0000_0100_0000_01B3 }
  }

  /// Every `.tflite` file under `TestModels`, in a fixed order.
  static func modelFiles() -> [URL] {
    let enumerator = FileManager.default.enumerator(at: TestModelManifest.directory, includingPropertiesForKeys: nil)
    return (enumerator?.allObjects as? [URL] ?? []).filter { $0.pathExtension == "tflite" }
      .sorted { $0.path < $1.path }
  }

  /// Loads, builds, allocates and invokes one case (external buffer files found in `folder`, the
  /// model's); every failure must be a thrown runtime error.
  private func run(_ bytes: [UInt8], folder: String, seed: UInt64, name: String) -> Outcome {
    let model: TFLiteModel
    do {
      model = try TFLiteModel(bytes: bytes, externalFilesDirectory: folder)
    } catch {
      return .refusedByLoader
    }
    var generator = SeededGenerator(seed: seed)
    var outcome = Outcome.refusedAtInit
    expectRuntimeErrors(name) {
      let runner = try ModelRunner(
        model: model, options: options(threadCount: 1 + Int(seed % 2)))
      let executor = runner.primary
      outcome = .refusedAtAllocation
      try executor.allocateTensors()
      outcome = .refusedAtInvoke
      Self.fill(executor.inputs, extreme: false, using: &generator)
      try executor.invoke()
      outcome = .ran
    }
    guard outcome == .ran || outcome == .refusedAtInvoke else { return outcome }
    // The same runner survives extreme inputs and a hostile resize; a fresh one keeps each step
    // independent of what the previous one left behind.
    expectRuntimeErrors(name + " (extreme inputs)") {
      let executor = try ModelRunner(model: model, options: options(threadCount: 1)).primary
      try executor.allocateTensors()
      Self.fill(executor.inputs, extreme: true, using: &generator)
      try executor.invoke()
      guard !executor.inputs.isEmpty else { return }
      try executor.resizeInput(at: 0, to: Self.hostileShape(like: executor.inputs[0].shape, using: &generator))
      try executor.allocateTensors()
      Self.fill(executor.inputs, extreme: false, using: &generator)
      try executor.invoke()
    }
    return outcome
  }

  /// Runs `body`; a thrown ``RuntimeError`` is an expected refusal, any other error a failure.
  private func expectRuntimeErrors(_ name: String, _ body: () throws -> Void) {
    do {
      try body()
    } catch let error as RuntimeError {
      XCTAssertFalse("\(error)".isEmpty, "\(name): an error without a description")
    } catch {
      XCTFail("\(name): \(type(of: error)) is not a RuntimeError: \(error)")
    }
  }

  /// A shape a caller might pass to `resizeInput`: larger, emptier or of another rank.
  private static func hostileShape(like shape: [Int], using generator: inout SeededGenerator) -> [Int] {
    switch generator.int(0...4) {
    case 0: return shape.map { $0 * 2 + 1 }
    case 1: return shape.isEmpty ? [3] : Array(shape.dropFirst())
    case 2: return shape + [2]
    case 3: return shape.isEmpty ? [] : [1 << 40] + shape.dropFirst()
    default: return shape.map { _ in generator.int(1...9) }
    }
  }

  /// Fills every input with seeded values: small ordinary ones, or extreme ones (every integer
  /// type's limits, NaN and infinities, booleans other than 0 and 1).
  static func fill(_ inputs: [RuntimeTensor], extreme: Bool, using generator: inout SeededGenerator) {
    for input in inputs {
      guard let data = input.data, input.type != .string else { continue }
      let count = input.elementCount
      func store<T>(_ type: T.Type, _ value: (inout SeededGenerator) -> T) {
        let typed = data.assumingMemoryBound(to: T.self)
        for index in 0..<count { typed[index] = value(&generator) }
      }
      func integer<T: FixedWidthInteger>(_ type: T.Type) {
        store(T.self) { random in
          guard extreme else { return T(truncatingIfNeeded: random.int(0...15)) }
          let limits: [T] = [T.min, T.max, 0, T(truncatingIfNeeded: -1), T(truncatingIfNeeded: 1 << 20)]
          return random.bool() ? limits[random.int(0...(limits.count - 1))] : T(truncatingIfNeeded: random.next())
        }
      }
      switch input.type {
      case .float32:
        store(Float.self) { random in
          guard extreme else { return Float.random(in: -1..<1, using: &random) }
          return [Float.nan, .infinity, -.infinity, 3e38, -3e38, .leastNonzeroMagnitude, 0, 1][random.int(0...7)]
        }
      case .int8: integer(Int8.self)
      case .uint8, .bool: integer(UInt8.self)
      case .int16: integer(Int16.self)
      case .uint16, .float16, .bfloat16: integer(UInt16.self)
      case .int32: integer(Int32.self)
      case .uint32: integer(UInt32.self)
      case .int64, .float64: integer(Int64.self)
      case .uint64: integer(UInt64.self)
      default: data.initializeMemory(as: UInt8.self, repeating: 0, count: input.byteCount)
      }
    }
  }

  /// Writes `message` to standard error at once (a crash right after must not lose it).
  private func announce(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
  }
}
