import Dispatch
import Foundation
import XCTest

import TFLiteLinearAlgebra
@testable import TFLiteRuntime

/// The per-thread scratch of the 8-bit depthwise windows and the row-corrected GEMM, and the
/// padded bias and packed weights the float GEMM kernels read through plain pointers.
final class ThreadWorkspaceTests: XCTestCase {
  /// A thread's workspace is the same block call after call (no allocation per call), grows to a
  /// larger request with every byte writable, and is 64-byte aligned.
  func testWorkspaceIsReusedAndGrows() {
    let first = ThreadWorkspace.with(byteCount: 4096) { $0 }
    let second = ThreadWorkspace.with(byteCount: 4096) { $0 }
    XCTAssertEqual(first, second, "the same thread's workspace is reused")
    XCTAssertEqual(Int(bitPattern: first) % 64, 0)
    let grown = ThreadWorkspace.with(byteCount: 100_000) { block in
      block.initializeMemory(as: UInt8.self, repeating: 0xA5, count: 100_000)
      XCTAssertEqual(block.load(fromByteOffset: 99_999, as: UInt8.self), 0xA5)
      return block
    }
    XCTAssertEqual(Int(bitPattern: grown) % 64, 0)
    XCTAssertEqual(ThreadWorkspace.with(byteCount: 10) { $0 }, grown, "a smaller request reuses the grown block")
  }

  /// A call made while the workspace is in use gets memory of its own: the outer block keeps its
  /// bytes while the inner one is written.
  func testNestedCallsGetSeparateMemory() {
    ThreadWorkspace.with(byteCount: 3000) { outer in
      outer.initializeMemory(as: UInt8.self, repeating: 1, count: 3000)
      ThreadWorkspace.with(byteCount: 5000) { inner in
        XCTAssertTrue(inner + 5000 <= outer || outer + 3000 <= inner, "nested blocks overlap")
        XCTAssertEqual(Int(bitPattern: inner) % 64, 0)
        inner.initializeMemory(as: UInt8.self, repeating: 2, count: 5000)
      }
      let bytes = UnsafeRawBufferPointer(start: outer, count: 3000)
      XCTAssertTrue(bytes.allSatisfy { $0 == 1 }, "the nested call wrote into the outer block")
    }
  }

  /// Threads running at once each get their own block: each writes its own pattern, waits until
  /// every thread has written, and finds its pattern intact.
  func testEachThreadHasItsOwnWorkspace() {
    let threads = 4
    let byteCount = 8192
    let group = DispatchGroup()
    let written = DispatchSemaphore(value: 0)
    let proceed = DispatchSemaphore(value: 0)
    let intact = ThreadResults(slots: .allocate(capacity: threads))
    intact.slots.initialize(repeating: false)
    defer { intact.slots.deallocate() }
    for thread in 0..<threads {
      group.enter()
      Thread.detachNewThread {
        ThreadWorkspace.with(byteCount: byteCount) { block in
          block.initializeMemory(as: UInt8.self, repeating: UInt8(thread + 1), count: byteCount)
          written.signal()
          proceed.wait()
          intact.slots[thread] = UnsafeRawBufferPointer(start: block, count: byteCount).allSatisfy { $0 == UInt8(thread + 1) }
        }
        group.leave()
      }
    }
    for _ in 0..<threads { written.wait() }
    for _ in 0..<threads { proceed.signal() }
    group.wait()
    XCTAssertEqual(Array(intact.slots), Array(repeating: true, count: threads))
  }

  /// The padded bias a float GEMM kernel reads: each group's values, then zeros to whole 16-lane
  /// panels, group after group (a plain loop gives the expected values); from a constant bias
  /// (packed at prepare) and from a computed one (padded into scratch at every eval).
  func testPaddedBiasPointsAtEveryGroupPaddedToWholePanels() {
    var random = SeededGenerator(seed: 12)
    for (groups, columns) in [(1, 1), (1, 16), (1, 17), (2, 8), (3, 33), (4, 48)] {
      let values = random.floats(groups * columns)
      let padded = (columns + 15) / 16 * 16
      var expected = [Float](repeating: 0, count: groups * padded)
      for group in 0..<groups {
        for column in 0..<columns { expected[group * padded + column] = values[group * columns + column] }
      }
      for isConstant in [true, false] {
        let tensor = makeTensor(0, .float32, [groups * columns], bytes: isConstant ? bytesOf(values) : nil)
        if !isConstant { tensor.pointer(as: Float.self).update(from: values, count: values.count) }
        var scratch = ScratchLayout()
        _ = scratch.reserve(bytes: 64)
        var bias = PaddedBias()
        bias.prepare(tensor, groups: groups, columns: columns, scratch: &scratch)
        let memory = UnsafeMutableRawPointer.allocate(byteCount: max(scratch.byteCount, 64), alignment: 64)
        defer { memory.deallocate() }
        memory.initializeMemory(as: UInt8.self, repeating: 0xFF, count: max(scratch.byteCount, 64))
        guard let pointer = bias.pointer(tensor, scratch: memory) else {
          XCTFail("no padded bias for \(groups) × \(columns)")
          continue
        }
        XCTAssertEqual(
          Array(UnsafeBufferPointer(start: pointer, count: expected.count)), expected,
          "\(groups) groups of \(columns), constant: \(isConstant)")
      }
      var scratch = ScratchLayout()
      var absent = PaddedBias()
      absent.prepare(nil, groups: groups, columns: columns, scratch: &scratch)
      XCTAssertNil(absent.pointer(nil, scratch: nil))
    }
  }
}

/// One result per thread, each slot written by one thread before the test reads them all.
private struct ThreadResults: @unchecked Sendable {
  let slots: UnsafeMutableBufferPointer<Bool>
}
