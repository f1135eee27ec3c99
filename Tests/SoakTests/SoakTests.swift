import Dispatch
import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif
import TFLiteTestSupport
import XCTest

import struct TFLiteFormat.NumPyArray

import TensorFlowLite

/// Soak checks of the interpreter's lifecycle: many interpreters created and released, long
/// invoke runs, one input copy invoked again and again, resize cycles, eight interpreters on eight
/// threads sharing one model, tensors and runners that outlive their interpreter, model bytes
/// released early and model files deleted or replaced while in use.
///
/// Every check compares outputs bit for bit (with LiteRT's, for the integer networks, or with the
/// first run) and measures resident memory and the C heap before and after its loop, after one
/// warm-up round. Under `swift test` each loop runs a few times and the suite takes seconds;
/// `Scripts/soak.sh` sets `SOAK_SCALE` to repeat every loop that many times more, in release
/// builds and under AddressSanitizer and ThreadSanitizer.
final class SoakTests: XCTestCase {
  /// How many times longer every loop runs (`SOAK_SCALE`, default 1).
  private static let scale = max(Int(ProcessInfo.processInfo.environment["SOAK_SCALE"] ?? "") ?? 1, 1)
  /// False under a sanitizer (`SOAK_MEMORY_BOUNDS=0`): AddressSanitizer keeps freed memory in
  /// quarantine and replaces the heap, so memory is then reported but not bounded.
  private static let checksMemoryBounds = ProcessInfo.processInfo.environment["SOAK_MEMORY_BOUNDS"] != "0"

  /// The `TestModels` folder of the repository.
  private static let testModels = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("TestModels")

  /// A network of TestModels with its seeded input and LiteRT's output.
  private struct Network {
    var path: String
    var input: Data
    var expected: Data

    /// `TestModels/networks/<name>.tflite` and its `.npy` files.
    init(_ name: String) throws {
      let base = SoakTests.testModels.appendingPathComponent("networks/\(name)")
      path = base.path + ".tflite"
      input = Data(try NumPyArray(parsing: [UInt8](Data(contentsOf: URL(fileURLWithPath: base.path + ".input_0.npy")))).bytes)
      expected = Data(
        try NumPyArray(parsing: [UInt8](Data(contentsOf: URL(fileURLWithPath: base.path + ".output_0.npy")))).bytes)
    }
  }

  /// The legacy uint8 MobileNetV1: quick in debug builds, and its outputs equal LiteRT's bit for bit.
  private let network = try! Network("mobilenet_v1_mini_uint8_legacy")

  /// Resident memory and heap in use at one moment.
  private struct MemorySample {
    var resident: Int
    var heap: Int?

    static func now() -> MemorySample {
      MemorySample(resident: ProcessMemory.residentBytes() ?? 0, heap: ProcessMemory.heapInUseBytes())
    }
  }

  /// Runs `iteration` once to warm up, then `count` times, and asserts that resident memory grew by
  /// at most `residentBound` bytes and the heap in use by at most `heapBound` bytes; prints the figures.
  private func soak(
    _ name: String, count: Int, residentBound: Int = 4 << 20, heapBound: Int = 256 << 10,
    line: UInt = #line, _ iteration: (Int) throws -> Void
  ) throws {
    try iteration(0)
    let before = MemorySample.now()
    let clock = ContinuousClock()
    let start = clock.now
    for index in 1...count { try iteration(index) }
    let elapsed = clock.now - start
    let after = MemorySample.now()
    let residentGrowth = after.resident - before.resident
    let heapGrowth = after.heap.flatMap { heapAfter in before.heap.map { heapAfter - $0 } }
    print(
      "soak \(name): \(count) iterations in \(elapsed), resident \(before.resident >> 10) -> \(after.resident >> 10) KB"
        + (heapGrowth.map { ", heap in use \($0 >= 0 ? "+" : "")\($0 >> 10) KB" } ?? ""))
    guard Self.checksMemoryBounds else { return }
    XCTAssertLessThanOrEqual(residentGrowth, residentBound, "\(name): resident memory grew by \(residentGrowth) bytes", line: line)
    if let heapGrowth {
      XCTAssertLessThanOrEqual(heapGrowth, heapBound, "\(name): heap in use grew by \(heapGrowth) bytes", line: line)
    }
  }

  /// Creates an interpreter for `network`, allocates it and copies its input.
  private func makeInterpreter(_ network: Network, options: Interpreter.Options? = nil) throws -> Interpreter {
    let interpreter = try Interpreter(modelPath: network.path, options: options)
    try interpreter.allocateTensors()
    try interpreter.copy(network.input, toInputAt: 0)
    return interpreter
  }

  /// The probes the checks rely on see 8 MB come and go: resident memory for a fresh mapping whose
  /// pages are touched (a heap block might reuse pages that are resident already), heap in use for
  /// a malloc'd block.
  func testMemoryProbesSeeAnAllocation() throws {
    guard Self.checksMemoryBounds else { return }
    let size = 8 << 20
    let residentBefore = try XCTUnwrap(ProcessMemory.residentBytes())
    let mapping = try XCTUnwrap(mmap(nil, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANON, -1, 0))
    XCTAssertNotEqual(mapping, UnsafeMutableRawPointer(bitPattern: -1))
    mapping.initializeMemory(as: UInt8.self, repeating: 1, count: size)
    let residentDuring = try XCTUnwrap(ProcessMemory.residentBytes())
    munmap(mapping, size)
    let residentAfter = try XCTUnwrap(ProcessMemory.residentBytes())
    XCTAssertGreaterThan(residentDuring - residentBefore, 7 << 20)
    XCTAssertLessThan(residentAfter - residentBefore, 1 << 20)

    let heapBefore = try XCTUnwrap(ProcessMemory.heapInUseBytes())
    let block = try XCTUnwrap(malloc(size))
    let heapDuring = try XCTUnwrap(ProcessMemory.heapInUseBytes())
    free(block)
    let heapAfter = try XCTUnwrap(ProcessMemory.heapInUseBytes())
    XCTAssertGreaterThan(heapDuring - heapBefore, 7 << 20)
    XCTAssertLessThan(abs(heapAfter - heapBefore), 64 << 10)
  }

  func testInterpreterRecreateCycles() throws {
    try soak("create, allocate, invoke, release", count: 8 * Self.scale) { _ in
      let interpreter = try makeInterpreter(network)
      try interpreter.invoke()
      XCTAssertEqual(try interpreter.output(at: 0).data, network.expected)
    }
  }

  func testLongInvokeRun() throws {
    let interpreter = try makeInterpreter(network)
    try soak("copy and invoke", count: 30 * Self.scale) { _ in
      try interpreter.copy(network.input, toInputAt: 0)
      try interpreter.invoke()
      XCTAssertEqual(try interpreter.output(at: 0).data, network.expected)
    }
  }

  func testCopyOnceRepeatedInvokes() throws {
    let interpreter = try makeInterpreter(network)
    try soak("copy once, invoke repeatedly", count: 30 * Self.scale) { _ in
      try interpreter.invoke()
      XCTAssertEqual(try interpreter.input(at: 0).data, network.input)
      XCTAssertEqual(try interpreter.output(at: 0).data, network.expected)
    }
  }

  /// Batch 4 and back to 1, again and again: the batch-1 results stay LiteRT's and the memory of
  /// the larger shape is given back every time.
  func testResizeCycles() throws {
    let network = try Network("mobilenet_mini_int8")
    let interpreter = try makeInterpreter(network)
    try soak("resize to batch 4 and back", count: 2 * Self.scale, residentBound: 2 << 20) { _ in
      try interpreter.resizeInput(at: 0, to: [4, 32, 32, 3])
      try interpreter.allocateTensors()
      try interpreter.copy(network.input + network.input + network.input + network.input, toInputAt: 0)
      try interpreter.invoke()
      XCTAssertEqual(try interpreter.output(at: 0).data, network.expected + network.expected + network.expected + network.expected)
      try interpreter.resizeInput(at: 0, to: [1, 32, 32, 3])
      try interpreter.allocateTensors()
      try interpreter.copy(network.input, toInputAt: 0)
      try interpreter.invoke()
      XCTAssertEqual(try interpreter.output(at: 0).data, network.expected)
    }
  }

  /// Eight threads, each with its own interpreter on one shared model `Data` (one and two kernel
  /// threads), give the serial outputs, LiteRT's.
  func testEightConcurrentInterpretersOnOneModel() throws {
    let modelData = try Data(contentsOf: URL(fileURLWithPath: network.path))
    let network = self.network
    let results = LockedResults()
    try soak("8 concurrent interpreters", count: Self.scale, residentBound: 8 << 20, heapBound: 1 << 20) { round in
      DispatchQueue.concurrentPerform(iterations: 8) { thread in
        do {
          var options = Interpreter.Options()
          options.threadCount = 1 + thread % 2
          let interpreter = try Interpreter(modelData: modelData, options: options)
          try interpreter.allocateTensors()
          try interpreter.copy(network.input, toInputAt: 0)
          for _ in 0..<3 {
            try interpreter.invoke()
            results.append(try interpreter.output(at: 0).data == network.expected ? nil : "thread \(thread): other outputs")
          }
        } catch {
          results.append("thread \(thread): \(error)")
        }
      }
    }
    let outcomes = results.all
    XCTAssertEqual(outcomes.count, 8 * 3 * (Self.scale + 1))
    XCTAssertEqual(outcomes.compactMap { $0 }, [])
  }

  /// Tensors read from an interpreter, and a signature runner, stay usable after the interpreter
  /// is released; an interpreter created on one thread may be released on another.
  func testTensorsAndRunnersOutliveTheirInterpreter() throws {
    let signatureModel = Self.testModels.appendingPathComponent("graphs/signatures_f32_add_and_dense_relu").path
    let signatureInput = Data(
      try NumPyArray(parsing: [UInt8](Data(contentsOf: URL(fileURLWithPath: signatureModel + ".dense_relu.input_0.npy"))))
        .bytes)
    try soak("tensors outliving their interpreter", count: 5 * Self.scale) { _ in
      var interpreter: Interpreter? = try makeInterpreter(network)
      try interpreter?.invoke()
      let output = try XCTUnwrap(interpreter?.output(at: 0))
      interpreter = nil
      XCTAssertEqual(output.data, network.expected)

      var signatureInterpreter: Interpreter? = try Interpreter(modelPath: signatureModel + ".tflite")
      let runner = try XCTUnwrap(signatureInterpreter?.signatureRunner(with: "dense_relu"))
      try runner.invoke(with: ["x": signatureInput])
      let before = try runner.output(named: "features").data
      signatureInterpreter = nil
      try runner.invoke(with: ["x": signatureInput])
      XCTAssertEqual(try runner.output(named: "features").data, before)

      let releasedElsewhere = ReleaseBox(try makeInterpreter(network))
      let done = DispatchSemaphore(value: 0)
      DispatchQueue.global().async {
        releasedElsewhere.release()
        done.signal()
      }
      done.wait()
      XCTAssertTrue(releasedElsewhere.isEmpty)
    }
  }

  /// The interpreter keeps its own copy of model bytes given as `Data`: overwriting and releasing
  /// the caller's buffer right after creation changes nothing.
  func testModelDataReleasedEarly() throws {
    try soak("model data released early", count: 8 * Self.scale) { _ in
      var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: network.path)))
      let interpreter = try Interpreter(modelData: Data(bytes))
      for index in bytes.indices { bytes[index] = 0xA5 }
      bytes = []
      try interpreter.allocateTensors()
      try interpreter.copy(network.input, toInputAt: 0)
      try interpreter.invoke()
      XCTAssertEqual(try interpreter.output(at: 0).data, network.expected)
    }
  }

  /// A model file deleted, or replaced by another file (renamed over it, as downloaders install
  /// models), while an interpreter uses it: the interpreter keeps running the model it loaded.
  func testModelFileDeletedOrReplacedWhileInUse() throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("soak-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let other = try Data(contentsOf: Self.testModels.appendingPathComponent("networks/mobilenet_mini_int8.tflite"))
    try soak("model file deleted or replaced", count: 8 * Self.scale) { round in
      let path = folder.appendingPathComponent("model.tflite")
      try? FileManager.default.removeItem(at: path)
      try FileManager.default.copyItem(at: URL(fileURLWithPath: network.path), to: path)
      let interpreter = try Interpreter(modelPath: path.path)
      try interpreter.allocateTensors()
      if round % 2 == 0 {
        try FileManager.default.removeItem(at: path)
      } else {
        let replacement = folder.appendingPathComponent("replacement.tflite")
        try other.write(to: replacement)
        XCTAssertEqual(rename(replacement.path, path.path), 0)
      }
      try interpreter.copy(network.input, toInputAt: 0)
      try interpreter.invoke()
      XCTAssertEqual(try interpreter.output(at: 0).data, network.expected)
    }
  }
}

/// Results that threads append to under a lock (nil for a run that matched).
private final class LockedResults: @unchecked Sendable {
  private let lock = NSLock()
  private var results: [String?] = []

  func append(_ result: String?) {
    lock.lock()
    results.append(result)
    lock.unlock()
  }

  var all: [String?] {
    lock.lock()
    defer { lock.unlock() }
    return results
  }
}

/// Holds an interpreter so that another thread can drop the last reference to it.
private final class ReleaseBox: @unchecked Sendable {
  private var interpreter: Interpreter?

  init(_ interpreter: Interpreter) { self.interpreter = interpreter }

  /// Drops the interpreter (called on one thread at a time; the caller waits for it).
  func release() { interpreter = nil }

  /// True once released.
  var isEmpty: Bool { interpreter == nil }
}
