import TFLiteFormat
import TFLiteLinearAlgebra
import XCTest

@testable import TFLiteRuntime

/// The generated-code cache is bounded (issue #12, requirement 6): every kernel family of every
/// instruction set this machine runs fits far inside `ExecutableCode.budgetBytes`, asking for the
/// families again maps nothing, a mapping past the budget is refused instead of made, and a
/// mapping stays executable while any kernel in it is held.
final class ExecutableCodeBoundTests: XCTestCase {
  /// Asks every generator for every family it can make on this machine (each instruction set,
  /// output type and sign form), so that everything the runtime could ever map is mapped.
  private func requestEveryFamily() {
    for isa in GeneratedKernelISA.allCases {
      _ = GeneratedFloatKernels.kernels(for: isa)
      _ = GeneratedDepthwiseKernels.kernels(for: isa)
      _ = GeneratedRequantizationKernels.kernels(for: isa)
      _ = GeneratedColumnSumKernels.kernels(for: isa)
      _ = GeneratedQuantizedBinaryKernels.kernels(for: isa)
      _ = GeneratedFloatBinaryKernels.kernels(for: isa)
    }
    _ = GeneratedLogisticKernels.preferred
    _ = GeneratedByteTableKernel.runnable
    for isa in DotProductISA.allCases {
      guard let kernels = GeneratedDotProductKernels.kernels(for: isa) else { continue }
      _ = kernels.tiles(nil)
      for output in RequantizedOutput.allCases {
        _ = kernels.tiles(output)
        if kernels.flipsSigns { _ = kernels.tiles(output, flipsSign: true) }
        for flipsSign in kernels.masksStores ? [false, kernels.flipsSigns] : [] {
          _ = kernels.tiles(output, flipsSign: flipsSign, masksStore: true)
        }
      }
      if let pixelLanes = kernels.pixelLanes {
        let shapes = (1...PixelLaneKernelGenerator.maximumOutputs).flatMap { outputs in
          (1...PixelLaneKernelGenerator.maximumDepth).filter { PixelLaneKernelGenerator.supports(outputs: outputs, depth: $0) }
            .flatMap { depth in RequantizationForm.all.map { (outputs, depth, $0) } }
        }
        for (outputs, depth, form) in shapes { pixelLanes.reserve(outputs: outputs, depth: depth, form: form) }
        for (outputs, depth, form) in shapes {
          XCTAssertNotNil(pixelLanes.entry(outputs: outputs, depth: depth, form: form), "\(outputs) from \(depth)")
        }
      }
    }
  }

  /// Everything every generator makes stays below 1/16 of the budget, and asking again (as a
  /// second interpreter would) maps no further byte.
  func testEveryFamilyOfEveryLevelFitsTheBudgetAndIsMadeOnce() {
    requestEveryFamily()
    let everything = ExecutableCode.mappedNow
    #if arch(x86_64) && os(Linux)
      XCTAssertGreaterThan(everything.bytes, 0, "this machine runs generated kernels")
    #endif
    XCTAssertLessThan(everything.bytes, ExecutableCode.budgetBytes / 16, "all families: \(everything)")
    requestEveryFamily()
    XCTAssertEqual(ExecutableCode.mappedNow.bytes, everything.bytes, "families are made once per process")
    XCTAssertEqual(ExecutableCode.mappedNow.mappings, everything.mappings)
  }

  /// Models of many distinct shapes (every TestModels network: float, int8, uint8, hybrid, each on
  /// 1 and 2 threads) map their kernels once: running them all again in new runners maps no
  /// further byte (kernels are made per kind on first use and kept, never per model or per
  /// runner), and everything stays far below the budget. Both passes run both thread counts
  /// because a two-thread split can need a tile kind one thread never does, so the result does
  /// not depend on which tests ran before.
  func testNetworksOfManyShapesMapTheirKernelsOnce() throws {
    let entries = try TestModelManifest.load().models.filter { $0.kind == "network" && !$0.file.hasPrefix("mediapipe/") }
    XCTAssertGreaterThanOrEqual(entries.count, 28)
    func runAll(threadParity: Int) throws -> [ModelRunner] {
      try entries.enumerated().map { index, entry in
        let model = try TFLiteModel(contentsOfFile: TestModelManifest.directory.appendingPathComponent(entry.file).path)
        let runner = try ModelRunner(model: model, options: RunnerOptions(threadCount: 1 + (index + threadParity) % 2))
        try runner.primary.allocateTensors()
        // The committed inputs: a WHILE model's trip count is an input, so unset bytes could loop for long.
        for (slot, input) in entry.inputs.enumerated() {
          let values = try TestModelManifest.array(input.file)
          values.bytes.withUnsafeBytes { runner.primary.inputs[slot].data!.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        }
        try runner.primary.invoke()
        return runner
      }
    }
    let first = try runAll(threadParity: 0) + runAll(threadParity: 1)
    let afterFirst = ExecutableCode.mappedNow
    let second = try runAll(threadParity: 1) + runAll(threadParity: 0)
    XCTAssertEqual(ExecutableCode.mappedNow.bytes, afterFirst.bytes, "\(first.count + second.count) runners alive")
    XCTAssertEqual(ExecutableCode.mappedNow.mappings, afterFirst.mappings)
    XCTAssertLessThan(afterFirst.bytes, ExecutableCode.budgetBytes / 16, "\(afterFirst)")
  }

  /// A mapping that would pass the budget is refused (nil, as when the OS refuses), nothing is
  /// booked for it, and a small one still fits afterwards.
  func testMappingPastTheBudgetIsRefused() throws {
    let before = ExecutableCode.mappedNow
    let room = ExecutableCode.budgetBytes - before.bytes
    XCTAssertNil(ExecutableCode([UInt8](repeating: 0xC3, count: room + 1)), "past the budget must be refused")
    XCTAssertEqual(ExecutableCode.mappedNow.bytes, before.bytes, "a refused mapping books nothing")
    #if arch(x86_64) && os(Linux)
      let small = try XCTUnwrap(ExecutableCode([0xC3]))
      XCTAssertGreaterThan(ExecutableCode.mappedNow.bytes, before.bytes)
      unsafeBitCast(small.entry, to: (@convention(c) () -> Void).self)()
    #endif
  }

  /// A shared mapping stays mapped (and its kernels callable) while any one of its kernels is
  /// held, and is returned to the budget when the last goes: code a kernel holds is never freed.
  func testSharedMappingLivesUntilItsLastKernelIsReleased() throws {
    #if arch(x86_64) && os(Linux)
      let before = ExecutableCode.mappedNow
      var kernels = try XCTUnwrap(ExecutableCode.mapped([[0xC3], [0x90, 0xC3]]))
      XCTAssertEqual(ExecutableCode.mappedNow.mappings, before.mappings + 1)
      var kept: ExecutableCode? = kernels.removeLast()
      kernels.removeAll()
      XCTAssertEqual(ExecutableCode.mappedNow.mappings, before.mappings + 1, "one kernel still holds the mapping")
      if let entry = kept?.entry { unsafeBitCast(entry, to: (@convention(c) () -> Void).self)() }
      kept = nil
      XCTAssertNil(kept)
      XCTAssertEqual(ExecutableCode.mappedNow.bytes, before.bytes, "released with its last kernel")
      XCTAssertEqual(ExecutableCode.mappedNow.mappings, before.mappings)
    #endif
  }
}
