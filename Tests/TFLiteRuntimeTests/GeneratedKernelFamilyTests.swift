import XCTest

import TFLiteLinearAlgebra

/// The selection every generated-kernel family shares (`GeneratedKernelFamily`,
/// `AVX512KernelFamily`): per family, which set each instruction set gives, which set `preferred`
/// and `current` give under the switches, and that `unshared` makes a new set. The expected sets
/// follow from what the CPU probe found (`GeneratedKernelISA.supported`) and the environment switch
/// alone.
final class GeneratedKernelFamilyTests: XCTestCase {
  /// The level `preferred` must have: the newest this machine runs, unless `SWIFTTFLITE_JIT` is off.
  private var expectedPreferredISA: GeneratedKernelISA? {
    GeneratedFloatKernels.isTurnedOffByEnvironment ? nil : GeneratedKernelISA.supported
  }

  /// Every family with a set per instruction set, through `check`.
  func testEveryPerISAFamilyGivesItsSetsUnderTheSwitches() {
    check(GeneratedFloatKernels.self, isa: \.isa)
    check(GeneratedFloatBinaryKernels.self, isa: \.isa)
    check(GeneratedColumnSumKernels.self, isa: \.isa)
    check(GeneratedQuantizedBinaryKernels.self, isa: \.isa)
    check(GeneratedPreluKernel.self, isa: \.isa)
    check(GeneratedHybridKernels.self, isa: \.isa)
    check(GeneratedRequantizationKernels.self, isa: \.isa)
    check(GeneratedDepthwiseKernels.self, isa: \.isa)
  }

  /// The AVX-512 depthwise set carries the byte kinds and four-tap kernels this CPU has, on the
  /// process's set and on one made anew alike; the AVX2 set has neither.
  func testDepthwiseSetsOfALevelAreAlike() throws {
    let avx2 = try XCTUnwrap(GeneratedDepthwiseKernels.kernels(for: .avx2), "no AVX2 on this machine")
    XCTAssertEqual(avx2.byteKernelISA, .avx2)
    XCTAssertNil(avx2.quadTaps)
    guard let avx512 = GeneratedDepthwiseKernels.kernels(for: .avx512) else { return }
    let expectedByteISA: GeneratedKernelISA = DotProductISA.supported.contains(.avx512VNNI) ? .avx512 : .avx2
    for set in [avx512, GeneratedDepthwiseKernels(isa: .avx512)] {
      XCTAssertEqual(set.byteKernelISA, expectedByteISA)
      XCTAssertTrue(set.quadTaps === GeneratedQuadTapDepthwiseKernels.supported)
    }
  }

  /// Every AVX-512-only family, through `check` (the byte table also needs AVX512BW and VBMI).
  func testEveryAVX512FamilyGivesItsSetUnderTheSwitches() {
    let avx512 = GeneratedKernelISA.supported == .avx512
    check(GeneratedLogisticKernels.self, isRunnable: avx512)
    check(GeneratedPairTableKernels.self, isRunnable: avx512)
    check(GeneratedByteTableKernel.self, isRunnable: avx512 && ProcessorFeatures.hasBytePermutes)
  }

  /// `kernels(for:)` gives one set per level this machine runs, of that level, and nil above;
  /// `preferred` is the set of `expectedPreferredISA`; `current` is `preferred` while generated
  /// kernels are allowed and nil while a runner turns them off; `unshared` is a new set of the level.
  private func check<Family: GeneratedKernelFamily>(
    _ family: Family.Type, isa: (Family) -> GeneratedKernelISA, file: StaticString = #filePath, line: UInt = #line
  ) {
    let name = "\(Family.self)"
    for level in GeneratedKernelISA.allCases {
      let runs = GeneratedKernelISA.supported.map { level <= $0 } ?? false
      guard runs else {
        XCTAssertNil(Family.kernels(for: level), "\(name) \(level)", file: file, line: line)
        XCTAssertNil(Family.unshared(level), "\(name) \(level)", file: file, line: line)
        continue
      }
      guard let set = Family.kernels(for: level) else {
        XCTFail("\(name): no \(level) set", file: file, line: line)
        continue
      }
      XCTAssertEqual(isa(set), level, name, file: file, line: line)
      XCTAssertTrue(Family.kernels(for: level) === set, "\(name) \(level): one set per process", file: file, line: line)
      let unshared = Family.unshared(level)
      XCTAssertEqual(unshared.map(isa), level, name, file: file, line: line)
      XCTAssertFalse(unshared === set, "\(name) \(level): unshared is the process's set", file: file, line: line)
    }
    XCTAssertEqual(Family.preferred.map(isa), expectedPreferredISA, name, file: file, line: line)
    GeneratedFloatKernels.$areAllowed.withValue(true) {
      XCTAssertTrue(Family.current === Family.preferred, name, file: file, line: line)
    }
    GeneratedFloatKernels.$areAllowed.withValue(false) {
      XCTAssertNil(Family.current, name, file: file, line: line)
    }
  }

  /// `runnable` exists exactly where this machine runs the family; `preferred` is it unless the
  /// environment turns generated kernels off; `current` follows the runner's switch.
  private func check<Family: AVX512KernelFamily>(
    _ family: Family.Type, isRunnable: Bool, file: StaticString = #filePath, line: UInt = #line
  ) {
    let name = "\(Family.self)"
    XCTAssertEqual(Family.runnable != nil, isRunnable, name, file: file, line: line)
    let expected = GeneratedFloatKernels.isTurnedOffByEnvironment ? nil : Family.runnable
    XCTAssertTrue(Family.preferred === expected, name, file: file, line: line)
    GeneratedFloatKernels.$areAllowed.withValue(true) {
      XCTAssertTrue(Family.current === expected, name, file: file, line: line)
    }
    GeneratedFloatKernels.$areAllowed.withValue(false) {
      XCTAssertNil(Family.current, name, file: file, line: line)
    }
  }
}
