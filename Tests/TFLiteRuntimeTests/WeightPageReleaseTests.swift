// Releasing the model file's pages once kernels have packed the weights (issue #12, peak memory),
// and the persistent helper threads of `ParallelWork`.

import Dispatch
import Foundation
import TFLiteFormat
import TFLiteLinearAlgebra
import XCTest

@testable import TFLiteRuntime

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

final class WeightPageReleaseTests: XCTestCase {
  /// The largest constant buffer of a TestModels network, and its bytes as a copy.
  private func largestBuffer(of model: TFLiteModel) throws -> (data: UnsafeRawBufferPointer, copy: [UInt8]) {
    let data = try XCTUnwrap(
      (0..<model.model.buffers.count).map { model.data(ofBuffer: $0) }.max { $0.count < $1.count })
    return (data, Array(data))
  }

  /// On a mapped file the whole pages inside a buffer are released and read back unchanged; a
  /// model copied into memory, and memory outside the model, are never touched.
  func testReleasedPagesReadBackFromTheFile() throws {
    let path = TestModelManifest.directory.appendingPathComponent("networks/efficientnet_mini_float.tflite").path
    let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
    let mapped = try TFLiteModel(contentsOfFile: path)
    let (data, copy) = try largestBuffer(of: mapped)
    XCTAssertGreaterThanOrEqual(data.count, 2 * pageSize, "the test needs a buffer of two pages or more")
    let released = mapped.releaseResidentPages(of: data)
    // Only whole pages are released: all of them, wherever the buffer starts within its first page.
    XCTAssertGreaterThanOrEqual(released, (data.count / pageSize - 1) * pageSize)
    XCTAssertGreaterThan(released, 0)
    XCTAssertLessThanOrEqual(released, data.count)
    XCTAssertEqual(released % pageSize, 0)
    XCTAssertEqual(Array(data), copy, "released pages must come back from the file")

    let copied = try TFLiteModel(bytes: Array(try Data(contentsOf: URL(fileURLWithPath: path))))
    let (copiedData, copiedBytes) = try largestBuffer(of: copied)
    XCTAssertEqual(copied.releaseResidentPages(of: copiedData), 0, "a heap copy must never be released")
    XCTAssertEqual(Array(copiedData), copiedBytes)

    let outside = [UInt8](repeating: 7, count: 4 * pageSize)
    outside.withUnsafeBytes { XCTAssertEqual(mapped.releaseResidentPages(of: $0), 0, "memory outside the file") }
    XCTAssertEqual(outside, [UInt8](repeating: 7, count: 4 * pageSize))
  }

  /// The networks give the same output bytes whether their weight pages were released after
  /// packing (mapped file) or not (bytes in memory), and again after a second `allocateTensors()`
  /// packs from the released pages, on one and two threads.
  func testNetworkOutputsDoNotDependOnReleasedPages() throws {
    let names: Set = ["mobilenet_mini_int8", "mobilenet_mini_float", "mobilenet_mini_hybrid", "efficientnet_mini_int8"]
    let networks = try TestModelManifest.load().models.filter { names.contains($0.name) }
    XCTAssertEqual(networks.count, names.count, "a network of the test is missing from the manifest")
    func outputBytes(_ runner: ModelRunner) -> [[UInt8]] {
      runner.primary.outputs.map { tensor in
        tensor.data.map { Array(UnsafeRawBufferPointer(start: $0, count: tensor.byteCount)) } ?? []
      }
    }
    for entry in networks {
      for threadCount in [1, 2] {
        let options = RunnerOptions(threadCount: threadCount)
        let mapped = try Conformance.invoke(entry, options: options)
        let inMemory = try Conformance.invoke(entry, options: options, copiesModelBytes: true)
        let expected = outputBytes(inMemory)
        XCTAssertEqual(outputBytes(mapped), expected, "\(entry.name) threads \(threadCount)")
        try mapped.primary.allocateTensors()
        for (tensor, source) in zip(mapped.primary.inputs, inMemory.primary.inputs) {
          try XCTUnwrap(tensor.data).copyMemory(from: try XCTUnwrap(source.data), byteCount: tensor.byteCount)
        }
        try mapped.primary.invoke()
        XCTAssertEqual(outputBytes(mapped), expected, "\(entry.name) threads \(threadCount), packed again")
      }
    }
  }

  /// Float DEPTHWISE_CONV_2D never reads its constant filter and bias in place after prepare: a
  /// read of the memory-mapped model there would map the file's whole page-cache folio again,
  /// with the neighbouring weights other kernels packed and released. With every depthwise
  /// filter and bias pointed at values of 1000 after `allocateTensors()`, the outputs keep their bytes.
  func testFloatDepthwiseDoesNotReadConstantOperandsInPlace() throws {
    let names: Set = ["mobilenet_mini_float", "mobilenet_mini_fp16"]
    let networks = try TestModelManifest.load().models.filter { names.contains($0.name) }
    XCTAssertEqual(networks.count, names.count, "a network of the test is missing from the manifest")
    for entry in networks {
      let executor = try Conformance.invoke(entry, options: RunnerOptions()).primary
      let expected = executor.outputs.map { Array(UnsafeRawBufferPointer(start: $0.data, count: $0.byteCount)) }
      let operands = executor.nodes.filter { $0.opName == "DEPTHWISE_CONV_2D" }.flatMap { $0.inputs.dropFirst().compactMap { $0 } }
      XCTAssertGreaterThan(operands.count, 0, "\(entry.name) has float depthwise convolutions")
      var poisons: [UnsafeMutableBufferPointer<Float>] = []
      defer { poisons.forEach { $0.deallocate() } }
      let originals = operands.map(\.data)
      defer { for (tensor, data) in zip(operands, originals) { tensor.data = data } }
      for tensor in operands {
        XCTAssertEqual(tensor.type, .float32)
        let poison = UnsafeMutableBufferPointer<Float>.allocate(capacity: tensor.elementCount)
        poison.initialize(repeating: 1000)
        poisons.append(poison)
        tensor.data = UnsafeMutableRawPointer(poison.baseAddress)
      }
      try executor.invoke()
      let outputs = executor.outputs.map { Array(UnsafeRawBufferPointer(start: $0.data, count: $0.byteCount)) }
      XCTAssertEqual(outputs, expected, "\(entry.name): a depthwise node read its constant operands in place")
    }
  }
}

/// Shared state of the concurrent `ParallelWork` test: raw memory, touched only as the test's
/// per-worker locks allow.
private struct ConcurrentCalls: @unchecked Sendable {
  let counts: UnsafeMutablePointer<Int>
  let locks: UnsafeMutablePointer<pthread_mutex_t>
  let violations: UnsafeMutablePointer<Int>
  let violationLock: UnsafeMutablePointer<pthread_mutex_t>
}

final class ParallelWorkConcurrencyTests: XCTestCase {
  /// Several callers at once (the helper threads serve one call, the others go to Dispatch), with
  /// calls nested inside items: every item of every call runs exactly once, and no two threads
  /// ever hold the same worker index of one call at the same time (each worker index guards its
  /// scratch in the kernels).
  func testConcurrentAndNestedCallsKeepItemsAndWorkerIndicesApart() {
    let callers = 4
    let itemCount = 97
    let threadCount = 3
    let rounds = 40
    let state = ConcurrentCalls(
      counts: .allocate(capacity: callers * itemCount), locks: .allocate(capacity: callers * threadCount),
      violations: .allocate(capacity: 1), violationLock: .allocate(capacity: 1))
    defer {
      state.counts.deallocate()
      state.locks.deallocate()
      state.violations.deallocate()
      state.violationLock.deallocate()
    }
    state.counts.initialize(repeating: 0, count: callers * itemCount)
    for lock in 0..<callers * threadCount { pthread_mutex_init(state.locks + lock, nil) }
    state.violations.initialize(to: 0)
    pthread_mutex_init(state.violationLock, nil)
    DispatchQueue.concurrentPerform(iterations: callers) { caller in
      for _ in 0..<rounds {
        ParallelWork.run(itemCount: itemCount, threadCount: threadCount) { item, worker in
          let lock = state.locks + caller * threadCount + worker
          guard worker < threadCount, pthread_mutex_trylock(lock) == 0 else {
            pthread_mutex_lock(state.violationLock)
            state.violations.pointee += 1
            pthread_mutex_unlock(state.violationLock)
            return
          }
          state.counts[caller * itemCount + item] += 1
          if item % 30 == 0 {
            var nested = [Int](repeating: 0, count: 5)
            nested.withUnsafeMutableBufferPointer { buffer in
              let base = buffer.baseAddress!
              ParallelWork.run(itemCount: 5, threadCount: 2) { nestedItem, _ in base[nestedItem] += 1 }
            }
            if nested != [1, 1, 1, 1, 1] { state.counts[caller * itemCount + item] += 1000 }
          }
          pthread_mutex_unlock(lock)
        }
      }
    }
    XCTAssertEqual(state.violations.pointee, 0, "a worker index was used by two threads at once")
    let counts = Array(UnsafeBufferPointer(start: state.counts, count: callers * itemCount))
    XCTAssertEqual(counts, [Int](repeating: rounds, count: callers * itemCount))
  }

  /// Random item counts on one to four threads, each worker claiming its own share first: every
  /// item once, worker indices below the thread count, also when the worker that takes one item
  /// stalls (the others claim the rest of its share).
  func testEveryItemOnceWhenSharesAreClaimedAcross() {
    var random = SeededGenerator(seed: 12)
    for trial in 0..<300 {
      let itemCount = trial < 4 ? trial : random.int(1...200)
      let threads = 1 + trial % 4
      let stalledItem = trial % 5 == 0 && itemCount > 0 ? random.int(0...(itemCount - 1)) : -1
      var counts = [Int](repeating: 0, count: itemCount)
      var workers = [Int](repeating: 0, count: itemCount)
      counts.withUnsafeMutableBufferPointer { countBuffer in
        workers.withUnsafeMutableBufferPointer { workerBuffer in
          let countBase = countBuffer.baseAddress
          let workerBase = workerBuffer.baseAddress
          ParallelWork.run(itemCount: itemCount, threadCount: threads) { item, worker in
            if item == stalledItem { usleep(2_000) }
            countBase?[item] += 1
            workerBase?[item] = worker
          }
        }
      }
      let label = "\(itemCount) items, \(threads) threads"
      XCTAssertEqual(counts, [Int](repeating: 1, count: itemCount), label)
      XCTAssertTrue(workers.allSatisfy { (0..<threads).contains($0) }, label)
    }
  }

  /// Many short calls in a row (as the nodes of an invoke make them): every item once each time,
  /// worker indices below the thread count.
  func testManyShortCallsInARow() {
    var counts = [Int](repeating: 0, count: 8)
    var workersSeen = Set<Int>()
    for _ in 0..<2_000 {
      var workers = [Int](repeating: -1, count: 8)
      counts.withUnsafeMutableBufferPointer { countBuffer in
        workers.withUnsafeMutableBufferPointer { workerBuffer in
          let countBase = countBuffer.baseAddress!
          let workerBase = workerBuffer.baseAddress!
          ParallelWork.run(itemCount: 8, threadCount: 2) { item, worker in
            countBase[item] += 1
            workerBase[item] = worker
          }
        }
      }
      workersSeen.formUnion(workers)
    }
    XCTAssertEqual(counts, [Int](repeating: 2_000, count: 8))
    XCTAssertTrue(workersSeen.isSubset(of: [0, 1]), "worker indices \(workersSeen)")
  }
}
