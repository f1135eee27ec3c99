// Kernels generated on first request instead of in whole families (issue #12, load + first
// invoke): the lazily made kernel table itself, and networks whose first invoke generates their
// kernels, which must give the same bytes on the first invoke, on later ones, and after their
// tensors are allocated again for another input shape and back.

import Dispatch
import Foundation
import TFLiteFormat
import TFLiteLinearAlgebra
import XCTest

@testable import TFLiteRuntime

/// Counts of `LazyExecutableKernels` generator calls, shared with the generator closure (which
/// may run on any thread, always under the table's mutex).
private final class GenerationCounts: @unchecked Sendable {
  var calls: [Int]
  init(count: Int) { calls = Array(repeating: 0, count: count) }
}

/// The entries the concurrent requests got, one slot per request (each written by one thread).
private struct RequestedEntries: @unchecked Sendable {
  let slots: UnsafeMutablePointer<UnsafeRawPointer?>
}

final class LazyGenerationTests: XCTestCase {
  /// x86-64 `ret`: a kernel that returns at once.
  private static let returnInstruction: [UInt8] = [0xC3]

  /// A kernel is generated on its first request only and keeps its entry; a kernel without code
  /// is asked for once and then answered nil without asking again; nothing else is generated.
  func testKernelsAreGeneratedOnFirstRequestOnly() throws {
    #if arch(x86_64) && !(os(iOS) || os(tvOS) || os(watchOS) || os(visionOS))
      let counts = GenerationCounts(count: 3)
      let kernels = LazyExecutableKernels(count: 3) { index in
        counts.calls[index] += 1
        return index == 2 ? nil : Self.returnInstruction
      }
      XCTAssertEqual(counts.calls, [0, 0, 0], "nothing is generated before it is asked for")
      let first = try XCTUnwrap(kernels.entry(0))
      XCTAssertTrue(kernels.isMade(0))
      XCTAssertFalse(kernels.isMade(1), "asking for one kernel made another")
      XCTAssertEqual(kernels.entry(0), first, "a kernel's entry moved")
      XCTAssertNil(kernels.entry(2))
      XCTAssertNil(kernels.entry(2))
      XCTAssertEqual(counts.calls, [1, 0, 1])
      // The mapped code runs (it returns).
      unsafeBitCast(first, to: (@convention(c) () -> Void).self)()
    #else
      XCTAssertNil(LazyExecutableKernels(count: 1) { _ in Self.returnInstruction }.entry(0), "no generated code here")
    #endif
  }

  /// Many threads asking for the same new kernel at once get one generation and one entry.
  func testConcurrentFirstRequestsGenerateOnce() throws {
    #if arch(x86_64) && !(os(iOS) || os(tvOS) || os(watchOS) || os(visionOS))
      let counts = GenerationCounts(count: 1)
      let kernels = LazyExecutableKernels(count: 1) { _ in
        counts.calls[0] += 1
        return Self.returnInstruction
      }
      let requests = 16
      let entries = RequestedEntries(slots: .allocate(capacity: requests))
      defer { entries.slots.deallocate() }
      entries.slots.initialize(repeating: nil, count: requests)
      DispatchQueue.concurrentPerform(iterations: requests) { entries.slots[$0] = kernels.entry(0) }
      let first = try XCTUnwrap(entries.slots[0])
      XCTAssertTrue((0..<requests).allSatisfy { entries.slots[$0] == first }, "threads got different entries")
      XCTAssertEqual(counts.calls, [1])
    #endif
  }

  /// The float GEMM generates the tile heights a product needs when it first runs: the heights
  /// a GEMM of `rows` rows splits into exist afterwards, and its results match a plain sum.
  func testFloatGEMMGeneratesTheHeightsItRuns() throws {
    guard let isa = GeneratedKernelISA.supported, let kernels = GeneratedFloatKernels.kernels(for: isa) else {
      XCTAssertNil(GeneratedFloatKernels.preferred, "float kernels without an instruction set")
      return
    }
    // 3 tiles: heights rows / 3 and rows / 3 + 1.
    let rows = 3 * kernels.maximumRows - 1
    let depth = 5
    let a = (0..<rows * depth).map { Float($0 % 7) - 3 }
    var b = [Float](repeating: 0, count: depth * GEMMTile.columns)
    for index in b.indices { b[index] = Float(index % 5) - 2 }
    var c = [Float](repeating: .nan, count: rows * GEMMTile.columns)
    a.withUnsafeBufferPointer { a in
      b.withUnsafeBufferPointer { b in
        c.withUnsafeMutableBufferPointer { c in
          XCTAssertTrue(kernels.run(
            a: a.baseAddress!, lda: depth, rowCount: rows, b: b.baseAddress!, depth: depth, c: c.baseAddress!,
            ldc: GEMMTile.columns, start: nil, accumulates: false, clamp: nil))
        }
      }
    }
    XCTAssertTrue(kernels.isGenerated(rows: rows / 3))
    XCTAssertTrue(kernels.isGenerated(rows: rows / 3 + 1))
    // Small integers: every sum is exact in any order.
    for row in 0..<rows {
      for column in 0..<GEMMTile.columns {
        let expected = (0..<depth).reduce(Float(0)) { (sum: Float, k: Int) -> Float in
          sum + a[row * depth + k] * b[k * GEMMTile.columns + column]
        }
        XCTAssertEqual(c[row * GEMMTile.columns + column], expected, "row \(row) column \(column)")
      }
    }
  }

  /// Networks whose kernels are generated on their first invoke (float GEMM heights, float and
  /// int8 depthwise kinds, int8 ADD/MUL, dot-product tiles, column sums) give the same output bytes
  /// on the first invoke, on a second one, after `allocateTensors()` prepares them again, and (where
  /// the graph takes another batch size: unet_mini_int8's TRANSPOSE_CONV has a constant output
  /// shape) after their tensors are allocated for a batch of two, each half of which equals the
  /// single output, and back for a batch of one.
  func testFirstLaterAndReallocatedInvokesGiveTheSameBytes() throws {
    let batchable: Set = [
      "mobilenet_mini_float", "mobilenet_mini_int8", "efficientnet_mini_float", "efficientnet_mini_int8",
      "mediapipe_selfie_segmentation",
    ]
    let names = batchable.union(["unet_mini_int8"])
    let networks = try TestModelManifest.load().models.filter { names.contains($0.name) }
    XCTAssertEqual(networks.count, names.count, "a network of the test is missing from the manifest")
    func outputBytes(_ executor: SubgraphExecutor) throws -> [[UInt8]] {
      try executor.outputs.map { tensor in
        Array(UnsafeRawBufferPointer(start: try XCTUnwrap(tensor.data), count: tensor.byteCount))
      }
    }
    for entry in networks {
      let runner = try Conformance.invoke(entry, options: RunnerOptions())
      let executor = runner.primary
      let input = Array(UnsafeRawBufferPointer(start: try XCTUnwrap(executor.inputs[0].data), count: executor.inputs[0].byteCount))
      let first = try outputBytes(executor)
      try executor.invoke()
      XCTAssertEqual(try outputBytes(executor), first, "\(entry.name): second invoke")

      try executor.allocateTensors()
      try XCTUnwrap(executor.inputs[0].data).copyMemory(from: input, byteCount: input.count)
      try executor.invoke()
      XCTAssertEqual(try outputBytes(executor), first, "\(entry.name): prepared again")
      guard batchable.contains(entry.name) else { continue }

      let single = executor.inputs[0].shape
      try executor.resizeInput(at: 0, to: [2] + single.dropFirst())
      try executor.allocateTensors()
      try XCTUnwrap(executor.inputs[0].data).copyMemory(from: input + input, byteCount: 2 * input.count)
      try executor.invoke()
      for (doubled, once) in zip(try outputBytes(executor), first) {
        XCTAssertEqual(Array(doubled.prefix(once.count)), once, "\(entry.name): batch of two, first half")
        XCTAssertEqual(Array(doubled.suffix(once.count)), once, "\(entry.name): batch of two, second half")
      }

      try executor.resizeInput(at: 0, to: single)
      try executor.allocateTensors()
      try XCTUnwrap(executor.inputs[0].data).copyMemory(from: input, byteCount: input.count)
      try executor.invoke()
      XCTAssertEqual(try outputBytes(executor), first, "\(entry.name): allocated again for one")
    }
  }
}
