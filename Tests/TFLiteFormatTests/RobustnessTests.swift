import Foundation
import XCTest

@testable import TFLiteFormat

/// Truncated and randomly corrupted versions of every test model must each load as a valid model
/// or throw a ``ModelFormatError``: never crash, hang or allocate without bound.
final class RobustnessTests: XCTestCase {
  /// Truncation lengths tried per model (besides the short prefixes).
  private let truncationsPerModel = 40
  /// Seeded random mutations in all, spread over the models (at least 20 each).
  private let totalMutations = 40_000

  func testTruncatedAndMutatedModelsNeverCrash() throws {
    let files = TestModelFiles.models
    XCTAssertFalse(files.isEmpty, "no .tflite files under \(TestModelFiles.directory.path)")
    let memoryBefore = peakResidentBytes()
    var generator = SeededGenerator(seed: 0x7F1E_2024)
    var counts = (inputs: 0, mutations: 0, accepted: 0, rejected: 0)
    var slowest = (seconds: 0.0, what: "")
    let mutationsPerModel = max(20, totalMutations / max(files.count, 1))
    let start = Date()
    for file in files {
      let original = try [UInt8](Data(contentsOf: file))
      let structure = structurePositions(of: original)
      var inputs: [(String, [UInt8])] = []
      let lengths = Set([0, 1, 3, 4, 7, 8, 11, 12, 16, 24, original.count - 1]
        + (0..<truncationsPerModel).map { original.count * $0 / truncationsPerModel })
      for length in lengths.sorted() where length >= 0 && length < original.count {
        inputs.append(("truncated to \(length)", Array(original[0..<length])))
      }
      for index in 0..<mutationsPerModel {
        inputs.append(("mutation \(index)", mutate(original, structure: structure, using: &generator)))
      }
      counts.mutations += mutationsPerModel
      for (what, bytes) in inputs {
        let inputStart = Date()
        do {
          try exercise(TFLiteModel(bytes: bytes))
          counts.accepted += 1
        } catch is ModelFormatError {
          counts.rejected += 1
        } catch {
          XCTFail("\(file.lastPathComponent) \(what): unexpected error type \(error)")
        }
        counts.inputs += 1
        let seconds = Date().timeIntervalSince(inputStart)
        if seconds > slowest.seconds { slowest = (seconds, "\(file.lastPathComponent) \(what)") }
      }
    }
    let growth = peakResidentBytes() - memoryBefore
    print(
      "robustness: \(counts.inputs) inputs from \(files.count) models (\(counts.mutations) mutations), "
        + "\(counts.accepted) loaded, \(counts.rejected) rejected, in \(Int(Date().timeIntervalSince(start))) s; "
        + "slowest \(slowest.what) \(Int(slowest.seconds * 1000)) ms; peak memory grew \(growth >> 20) MiB")
    XCTAssertGreaterThan(counts.rejected, 0)
    XCTAssertLessThan(slowest.seconds, 2, "an input took too long: \(slowest.what)")
    XCTAssertLessThan(growth, 512 << 20, "peak memory grew by \(growth >> 20) MiB")
  }

  /// Reads every part of a model that loaded, as a client would.
  private func exercise(_ model: TFLiteModel) {
    for subgraph in model.model.subgraphs {
      for tensor in subgraph.tensors { _ = model.tensorData(tensor).reduce(0, &+) }
      for op in subgraph.operators {
        _ = model.customOptions(of: op).count
        _ = op.builtinOptions.fields.count
      }
    }
    _ = model.minRuntimeVersion
  }

  /// Positions outside constant data, where a mutation hits offsets, lengths and vtables.
  private func structurePositions(of bytes: [UInt8]) -> [Int] {
    guard let model = try? TFLiteModel(bytes: bytes) else { return Array(bytes.indices) }
    var isData = [Bool](repeating: false, count: bytes.count)
    for index in model.model.buffers.indices {
      guard let range = model.dataRange(ofBuffer: index) else { continue }
      for position in range.offset..<(range.offset + range.count) { isData[position] = true }
    }
    let positions = bytes.indices.filter { !isData[$0] }
    return positions.isEmpty ? Array(bytes.indices) : positions
  }

  /// A copy of `bytes` with one to four corruptions, mostly in its structure.
  private func mutate(_ bytes: [UInt8], structure: [Int], using generator: inout SeededGenerator) -> [UInt8] {
    var result = bytes
    for _ in 0...(Int.random(in: 0..<4, using: &generator)) {
      let anywhere = Int.random(in: 0..<4, using: &generator) == 0
      let position = anywhere ? Int.random(in: bytes.indices, using: &generator) : structure.randomElement(using: &generator) ?? 0
      switch Int.random(in: 0..<4, using: &generator) {
      case 0:
        result[position] = UInt8(truncatingIfNeeded: generator.next())
      case 1:
        result[position] ^= UInt8(1 << Int.random(in: 0..<8, using: &generator))
      default:
        let interesting: [UInt32] = [0, 1, 4, 0x7FFF_FFFF, 0x8000_0000, 0xFFFF_FFFF, 0xFFFF_FFFC, UInt32(bytes.count), UInt32(truncatingIfNeeded: generator.next())]
        let value = interesting.randomElement(using: &generator) ?? 0
        let start = min(position & ~3, bytes.count - 4)
        guard start >= 0 else { continue }
        for byte in 0..<4 { result[start + byte] = UInt8(truncatingIfNeeded: value >> (8 * UInt32(byte))) }
      }
    }
    return result
  }

  /// The process's peak resident memory in bytes.
  private func peakResidentBytes() -> Int {
    var usage = rusage()
    #if canImport(Darwin)
      getrusage(RUSAGE_SELF, &usage)
      return usage.ru_maxrss
    #else
      getrusage(RUSAGE_SELF.rawValue, &usage)
      return usage.ru_maxrss * 1024
    #endif
  }
}
